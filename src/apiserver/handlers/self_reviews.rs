//! The reviews a client makes of itself, for a standalone server (there is
//! no kube-apiserver to answer them): `SelfSubjectAccessReview` and
//! `SelfSubjectRulesReview` (`kubectl auth can-i [--list]`, and tools such
//! as k9s that ask before they offer an action) and `SelfSubjectReview`
//! (`kubectl auth whoami`). The standalone authorizer lets members of
//! `system:masters` do everything and nobody else anything, so that is what
//! the reviews answer; anyone authenticated may ask (the authorizer lets
//! these creates through, as RBAC's `system:basic-user` does), and each is
//! created (201) and stored nowhere, as kube-apiserver's are. In cluster
//! mode the cluster answers them.

use http::{Response, StatusCode};
use serde_json::{Value, json};

use crate::apimachinery::protobuf_meta::{self, ReviewSpec};
use crate::apimachinery::request_info::{ResourceRequest, Verb};
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::UserInfo;
use crate::apiserver::response::{self, Body};
use crate::kinds::schema::{FieldError, FieldErrorKind};

/// The reviews answered here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Review {
    /// `authorization.k8s.io/v1` `selfsubjectaccessreviews`.
    Access,
    /// `authorization.k8s.io/v1` `selfsubjectrulesreviews`.
    Rules,
    /// `authentication.k8s.io/v1` `selfsubjectreviews`.
    Subject,
}

/// The review `req` creates, if it creates one.
pub(crate) fn review_of(req: &ResourceRequest) -> Option<Review> {
    if req.version != "v1" || req.namespace.is_some() || req.name.is_some() {
        return None;
    }
    match (req.group.as_str(), req.resource.as_str()) {
        ("authorization.k8s.io", "selfsubjectaccessreviews") => Some(Review::Access),
        ("authorization.k8s.io", "selfsubjectrulesreviews") => Some(Review::Rules),
        ("authentication.k8s.io", "selfsubjectreviews") => Some(Review::Subject),
        _ => None,
    }
}

/// The answer to a request for `review` by `user` with `body`, JSON or
/// (`protobuf`, as kubectl's typed clients send built-in kinds) Kubernetes'
/// protobuf.
pub(crate) fn handle(
    review: Review,
    req: &ResourceRequest,
    user: &UserInfo,
    body: &[u8],
    protobuf: bool,
) -> Response<Body> {
    answer(review, req, user, body, protobuf).unwrap_or_else(|e| response::error(&e))
}

fn answer(
    review: Review,
    req: &ResourceRequest,
    user: &UserInfo,
    body: &[u8],
    protobuf: bool,
) -> Result<Response<Body>, ApiError> {
    let (group, kind) = match review {
        Review::Access => ("authorization.k8s.io", "SelfSubjectAccessReview"),
        Review::Rules => ("authorization.k8s.io", "SelfSubjectRulesReview"),
        Review::Subject => ("authentication.k8s.io", "SelfSubjectReview"),
    };
    if req.verb != Verb::Create {
        return Err(ApiError::method_not_allowed(format!(
            "{} is not allowed on {}.{group}: only create",
            req.verb.as_str(),
            req.resource
        )));
    }
    let unreadable = |e: String| {
        ApiError::bad_request(format!(
            "{kind} in version \"v1\" cannot be handled as a {kind}: {e}"
        ))
    };
    let mut object: Value = if protobuf {
        let spec = match review {
            Review::Access => protobuf_meta::review_spec(body, ReviewSpec::Access),
            Review::Rules => protobuf_meta::review_spec(body, ReviewSpec::Rules),
            Review::Subject => Ok(Value::Null),
        }
        .map_err(unreadable)?;
        json!({"spec": spec})
    } else if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(body).map_err(|e| unreadable(e.to_string()))?
    };
    if !object.is_object() {
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"v1\" cannot be handled as a {kind}: the body is no object"
        )));
    }
    let allowed = user.is_master();
    let status = match review {
        Review::Access => {
            let spec = object.get("spec").cloned().unwrap_or(Value::Null);
            let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
            let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
            // kube-apiserver's validation (`ValidateSelfSubjectAccessReviewSpec`)
            // of the decoded internal object, whose kind is empty and whose
            // attributes print with Go's field names.
            let refuse = |field: &str, bad_value: Value, detail: &str| {
                ApiError::invalid(
                    "",
                    group,
                    "",
                    &[FieldError {
                        field: field.into(),
                        kind: FieldErrorKind::Invalid,
                        bad_value: Some(bad_value),
                        detail: detail.into(),
                    }],
                )
            };
            match (resource, non_resource) {
                (None, None) => {
                    return Err(refuse(
                        "spec.resourceAttributes",
                        Value::Null,
                        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                    ));
                }
                (Some(_), Some(non_resource)) => {
                    let text =
                        |key: &str| non_resource.get(key).and_then(Value::as_str).unwrap_or("");
                    return Err(refuse(
                        "spec.nonResourceAttributes",
                        json!({"Path": text("path"), "Verb": text("verb")}),
                        "cannot be specified in combination with resourceAttributes",
                    ));
                }
                _ => {}
            }
            if allowed {
                json!({"allowed": true, "reason": "a standalone server lets members of system:masters do everything"})
            } else {
                json!({"allowed": false, "reason": "a standalone server lets only members of system:masters do anything"})
            }
        }
        Review::Rules => {
            let (resource_rules, non_resource_rules) = if allowed {
                (
                    json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]),
                    json!([{"verbs": ["*"], "nonResourceURLs": ["*"]}]),
                )
            } else {
                (json!([]), json!([]))
            };
            json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": false})
        }
        Review::Subject => {
            let mut info = json!({"username": user.name, "groups": user.groups});
            if !user.uid.is_empty() {
                info["uid"] = json!(user.uid);
            }
            if !user.extra.is_empty() {
                info["extra"] = json!(user.extra);
            }
            json!({"userInfo": info})
        }
    };
    object["apiVersion"] = json!(format!("{group}/v1"));
    object["kind"] = json!(kind);
    object["metadata"] = json!({"creationTimestamp": null});
    if review != Review::Subject && object.get("spec").is_none_or(Value::is_null) {
        object["spec"] = json!({});
    }
    object["status"] = status;
    Ok(response::json(StatusCode::CREATED, &object))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(group: &str, resource: &str, verb: Verb) -> ResourceRequest {
        ResourceRequest {
            group: group.into(),
            version: "v1".into(),
            namespace: None,
            resource: resource.into(),
            name: None,
            subresource: None,
            verb,
        }
    }

    fn user(groups: &[&str]) -> UserInfo {
        UserInfo {
            name: "kubectl-cozy".into(),
            uid: String::new(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            extra: Default::default(),
        }
    }

    async fn body_of(r: Response<Body>) -> (StatusCode, Value) {
        use http_body_util::BodyExt as _;
        let status = r.status();
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn access_reviews_answer_what_the_standalone_authorizer_does() {
        let req = request(
            "authorization.k8s.io",
            "selfsubjectaccessreviews",
            Verb::Create,
        );
        let review = review_of(&req).unwrap();
        let body = br#"{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
            "spec":{"resourceAttributes":{"verb":"create","group":"apps.cozystack.io","resource":"postgreses"}}}"#;
        let (status, answer) = body_of(handle(
            review,
            &req,
            &user(&["system:masters"]),
            body,
            false,
        ))
        .await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(answer["status"]["allowed"], true, "{answer}");
        assert_eq!(
            answer["spec"]["resourceAttributes"]["resource"],
            "postgreses"
        );
        let (_, answer) = body_of(handle(review, &req, &user(&["team"]), body, false)).await;
        assert_eq!(answer["status"]["allowed"], false, "{answer}");

        let (status, answer) =
            body_of(handle(review, &req, &user(&[]), b"{\"spec\":{}}", false)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            answer["message"],
            ".authorization.k8s.io \"\" is invalid: spec.resourceAttributes: \
             Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"
        );
        let (status, _) = body_of(handle(review, &req, &user(&[]), b"[1]", false)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }

    #[tokio::test]
    async fn rules_and_subject_reviews() {
        let masters = user(&["system:masters", "system:authenticated"]);
        let req = request(
            "authorization.k8s.io",
            "selfsubjectrulesreviews",
            Verb::Create,
        );
        let (_, answer) = body_of(handle(
            review_of(&req).unwrap(),
            &req,
            &masters,
            br#"{"spec":{"namespace":"default"}}"#,
            false,
        ))
        .await;
        assert_eq!(answer["status"]["resourceRules"][0]["verbs"], json!(["*"]));
        let req = request("authentication.k8s.io", "selfsubjectreviews", Verb::Create);
        let (status, answer) =
            body_of(handle(review_of(&req).unwrap(), &req, &masters, b"", false)).await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(answer["kind"], "SelfSubjectReview");
        assert_eq!(answer["status"]["userInfo"]["username"], "kubectl-cozy");
        assert_eq!(
            answer["status"]["userInfo"]["groups"],
            json!(["system:masters", "system:authenticated"])
        );
        let list = request("authentication.k8s.io", "selfsubjectreviews", Verb::List);
        let (status, _) = body_of(handle(Review::Subject, &list, &masters, b"", false)).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(
            review_of(&request(
                "authorization.k8s.io",
                "subjectaccessreviews",
                Verb::Create
            )),
            None
        );
    }
}
