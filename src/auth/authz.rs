//! Whether the caller may: a SubjectAccessReview per request with the
//! attributes kube-apiserver would compute (`AS/pkg/endpoints/request/requestinfo.go`,
//! `AS/plugin/pkg/authorizer/webhook/webhook.go`; contract §2):
//!
//! - resource requests: namespace, verb (get/list/watch by name and
//!   `watch=true|1` or `/watch/`, create, update, patch, delete or
//!   deletecollection), group, version, resource, subresource and name — a
//!   list or watch with `fieldSelector=metadata.name=<x>` is authorized as
//!   `name=<x>`, so `resourceNames` rules work for single-object watches —
//!   plus the field and label selector requirements of list, watch and
//!   deletecollection (`AuthorizeWithSelectors`);
//! - anything else: `nonResourceAttributes` with the lower-cased method and
//!   the path.
//!
//! `/healthz`, `/livez`, `/readyz` (and their checks) are always allowed, as
//! is `system:masters`; both skip the review. Answers — allowed, denied or
//! no opinion — are cached for 10 s keyed by the whole review spec. A review
//! that cannot be made is a 500, never an allow. A refusal is the 403
//! `Status` kube-apiserver writes (`responsewriters.Forbidden`), e.g.
//! `postgreses.apps.cozystack.io is forbidden: User "alice" cannot list
//! resource "postgreses" in API group "apps.cozystack.io" in the namespace "ns1"`.

use std::sync::Arc;
use std::time::Duration;

use http::Method;
use serde_json::{Map, Value, json};

use super::review::{ReviewKind, Reviewer};
use super::ttl_cache::TtlCache;
use crate::apimachinery::fields::{FieldSelector, Op};
use crate::apimachinery::labels::{LabelSelector, Operator};
use crate::apimachinery::query::Query;
use crate::apimachinery::request_info::{Route, Verb};
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::UserInfo;
use crate::golang::quote as go_quote;

/// How long review answers are cached (allowed and denied alike).
pub(crate) const DECISION_CACHE_TTL: Duration = Duration::from_secs(10);
/// At most this many cached answers.
const DECISION_CACHE_MAX: usize = 8192;

/// Whether `path` is a health endpoint, open to everyone.
pub(crate) fn is_always_allowed_path(path: &str) -> bool {
    ["/healthz", "/livez", "/readyz"].iter().any(|p| {
        path.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// What a request asks to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// An API resource.
    Resource {
        /// Namespace ("" for cluster scope).
        namespace: String,
        /// The verb.
        verb: String,
        /// API group.
        group: String,
        /// API version.
        version: String,
        /// Plural resource.
        resource: String,
        /// Subresource.
        subresource: String,
        /// Object name (from the path or an exact `metadata.name` field selector).
        name: String,
        /// `resourceAttributes.fieldSelector.requirements`.
        field_selector: Vec<Value>,
        /// `resourceAttributes.labelSelector.requirements`.
        label_selector: Vec<Value>,
    },
    /// Anything else.
    NonResource {
        /// The URL path.
        path: String,
        /// The lower-cased method.
        verb: String,
    },
}

/// The authorization attributes of one request.
#[derive(Debug, Clone)]
pub struct Attributes {
    /// Who.
    pub user: Arc<UserInfo>,
    /// What.
    pub action: Action,
}

impl Attributes {
    /// Whether this creates a review of the caller by the caller
    /// (`kubectl auth can-i`, `kubectl auth whoami`).
    pub fn is_self_review(&self) -> bool {
        matches!(&self.action, Action::Resource { verb, group, resource, subresource, .. }
        if verb == "create" && subresource.is_empty() && matches!(
            (group.as_str(), resource.as_str()),
            ("authorization.k8s.io", "selfsubjectaccessreviews" | "selfsubjectrulesreviews")
                | ("authentication.k8s.io", "selfsubjectreviews")
        ))
    }

    /// Computes the attributes as kube-apiserver's RequestInfo would.
    pub fn of(
        user: &Arc<UserInfo>,
        method: &Method,
        path: &str,
        query: &Query,
        route: &Route,
    ) -> Attributes {
        let action = match route {
            Route::Resource(req) => {
                let mut name = req.name.clone().unwrap_or_default();
                let field = query
                    .get("fieldSelector")
                    .filter(|s| !s.is_empty())
                    .and_then(|s| FieldSelector::parse(s).ok());
                let label = query
                    .get("labelSelector")
                    .filter(|s| !s.is_empty())
                    .and_then(|s| LabelSelector::parse(s).ok());
                let listing = matches!(req.verb, Verb::List | Verb::Watch);
                if listing
                    && name.is_empty()
                    && let Some(exact) = field.as_ref().and_then(FieldSelector::exact_name)
                    && is_valid_path_segment_name(exact)
                {
                    name = exact.to_owned();
                }
                let selectors = listing || req.verb == Verb::DeleteCollection;
                Action::Resource {
                    namespace: req.namespace.clone().unwrap_or_default(),
                    verb: req.verb.as_str().to_owned(),
                    group: req.group.clone(),
                    version: req.version.clone(),
                    resource: req.resource.clone(),
                    subresource: req.subresource.clone().unwrap_or_default(),
                    name,
                    field_selector: if selectors {
                        field.as_ref().map(field_requirements).unwrap_or_default()
                    } else {
                        Vec::new()
                    },
                    label_selector: if selectors {
                        label.as_ref().map(label_requirements).unwrap_or_default()
                    } else {
                        Vec::new()
                    },
                }
            }
            _ => Action::NonResource {
                path: path.to_owned(),
                verb: method.as_str().to_ascii_lowercase(),
            },
        };
        Attributes {
            user: user.clone(),
            action,
        }
    }

    /// The SubjectAccessReview `spec`.
    pub fn review_spec(&self) -> Value {
        let mut spec = Map::new();
        spec.insert("user".into(), self.user.name.clone().into());
        if !self.user.uid.is_empty() {
            spec.insert("uid".into(), self.user.uid.clone().into());
        }
        if !self.user.groups.is_empty() {
            spec.insert("groups".into(), json!(self.user.groups));
        }
        if !self.user.extra.is_empty() {
            spec.insert("extra".into(), json!(self.user.extra));
        }
        match &self.action {
            Action::Resource {
                namespace,
                verb,
                group,
                version,
                resource,
                subresource,
                name,
                field_selector,
                label_selector,
            } => {
                let mut attrs = Map::new();
                for (key, value) in [
                    ("namespace", namespace),
                    ("verb", verb),
                    ("group", group),
                    ("version", version),
                    ("resource", resource),
                    ("subresource", subresource),
                    ("name", name),
                ] {
                    if !value.is_empty() {
                        attrs.insert(key.into(), value.clone().into());
                    }
                }
                if !field_selector.is_empty() {
                    attrs.insert(
                        "fieldSelector".into(),
                        json!({ "requirements": field_selector }),
                    );
                }
                if !label_selector.is_empty() {
                    attrs.insert(
                        "labelSelector".into(),
                        json!({ "requirements": label_selector }),
                    );
                }
                spec.insert("resourceAttributes".into(), Value::Object(attrs));
            }
            Action::NonResource { path, verb } => {
                spec.insert(
                    "nonResourceAttributes".into(),
                    json!({ "path": path, "verb": verb }),
                );
            }
        }
        Value::Object(spec)
    }

    /// The 403 kube-apiserver answers (`responsewriters.Forbidden` and
    /// `errors.NewForbidden`); `reason` is the review's `status.reason`.
    pub fn forbidden(&self, reason: &str) -> ApiError {
        let user = go_quote(&self.user.name);
        let (msg, group, resource, name) = match &self.action {
            Action::NonResource { path, verb } => (
                format!("User {user} cannot {verb} path {}", go_quote(path)),
                "",
                "",
                "",
            ),
            Action::Resource {
                namespace,
                verb,
                group,
                resource,
                subresource,
                name,
                ..
            } => {
                let full = if subresource.is_empty() {
                    resource.clone()
                } else {
                    format!("{resource}/{subresource}")
                };
                let scope = if namespace.is_empty() {
                    "at the cluster scope".to_owned()
                } else {
                    format!("in the namespace {}", go_quote(namespace))
                };
                (
                    format!(
                        "User {user} cannot {verb} resource {} in API group {} {scope}",
                        go_quote(&full),
                        go_quote(group)
                    ),
                    group.as_str(),
                    resource.as_str(),
                    name.as_str(),
                )
            }
        };
        let msg = if reason.is_empty() {
            msg
        } else {
            format!("{msg}: {reason}")
        };
        let qualified = match (resource, group) {
            ("", _) => String::new(),
            (r, "") => r.to_owned(),
            (r, g) => format!("{r}.{g}"),
        };
        let message = if qualified.is_empty() {
            format!("forbidden: {msg}")
        } else if name.is_empty() {
            format!("{qualified} is forbidden: {msg}")
        } else {
            format!("{qualified} {} is forbidden: {msg}", go_quote(name))
        };
        let mut details = Map::new();
        for (key, value) in [("name", name), ("group", group), ("kind", resource)] {
            if !value.is_empty() {
                details.insert(key.into(), value.into());
            }
        }
        ApiError {
            details: Some(Value::Object(details)),
            ..ApiError::new(403, "Forbidden", message)
        }
    }
}

/// `path.IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`.
fn is_valid_path_segment_name(name: &str) -> bool {
    name != "." && name != ".." && !name.contains(['/', '%'])
}

fn field_requirements(selector: &FieldSelector) -> Vec<Value> {
    selector
        .requirements()
        .iter()
        .map(|r| {
            let operator = match r.op {
                Op::Eq => "In",
                Op::NotEq => "NotIn",
            };
            json!({"key": r.field.label(), "operator": operator, "values": [r.value]})
        })
        .collect()
}

fn label_requirements(selector: &LabelSelector) -> Vec<Value> {
    selector
        .requirements()
        .iter()
        .filter_map(|r| {
            let operator = match r.operator {
                Operator::In | Operator::Equals | Operator::DoubleEquals => "In",
                Operator::NotIn | Operator::NotEquals => "NotIn",
                Operator::Exists => "Exists",
                Operator::DoesNotExist => "DoesNotExist",
                // Not expressible in a review; upstream drops them too.
                Operator::GreaterThan | Operator::LessThan => return None,
            };
            let mut req = json!({"key": r.key, "operator": operator});
            if !r.values.is_empty() {
                req["values"] = json!(r.values);
            }
            Some(req)
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Decision {
    Allow,
    Deny(String),
}

/// The delegating authorizer.
pub struct Authorizer {
    reviewer: Option<Arc<dyn Reviewer>>,
    cache: TtlCache<String, Decision>,
}

impl Authorizer {
    /// Authorizes through SubjectAccessReviews made by `reviewer`.
    pub fn new(reviewer: Arc<dyn Reviewer>) -> Authorizer {
        Authorizer {
            reviewer: Some(reviewer),
            cache: TtlCache::new(DECISION_CACHE_TTL, DECISION_CACHE_MAX),
        }
    }

    /// No cluster to ask (standalone): `system:masters` only.
    pub fn masters_only() -> Authorizer {
        Authorizer {
            reviewer: None,
            cache: TtlCache::new(DECISION_CACHE_TTL, DECISION_CACHE_MAX),
        }
    }

    /// Whether it allows `system:masters` only (a standalone server's).
    pub fn is_masters_only(&self) -> bool {
        self.reviewer.is_none()
    }

    /// `Ok(())` to proceed, or the Status to answer (403, or 500 when the
    /// review could not be made).
    pub async fn authorize(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if attributes.user.is_master() {
            return Ok(());
        }
        let Some(reviewer) = &self.reviewer else {
            // As RBAC's `system:basic-user`: anyone authenticated may ask
            // what they may do and who they are.
            if attributes.is_self_review() {
                return Ok(());
            }
            return Err(attributes.forbidden(""));
        };
        let spec = attributes.review_spec();
        let key = spec.to_string();
        let decision = match self.cache.get(&key) {
            Some(d) => d,
            None => {
                let review = reviewer
                    .create(ReviewKind::SubjectAccessReview, spec)
                    .await
                    .map_err(|e| {
                        tracing::warn!(user = %attributes.user.name, "authorization failed: {e}");
                        ApiError::internal("the authorization check (SubjectAccessReview) failed")
                    })?;
                let status = &review["status"];
                let reason = status["reason"].as_str().unwrap_or_default().to_owned();
                let decision = if status["allowed"] == Value::Bool(true) {
                    Decision::Allow
                } else {
                    // `denied`, or no opinion: both refuse.
                    Decision::Deny(reason)
                };
                self.cache.insert(key, decision.clone());
                decision
            }
        };
        match decision {
            Decision::Allow => Ok(()),
            Decision::Deny(reason) => Err(attributes.forbidden(&reason)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::query::parse_query;
    use crate::apimachinery::request_info::route;
    use crate::auth::review::ReviewError;
    use futures::future::BoxFuture;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn alice() -> Arc<UserInfo> {
        Arc::new(UserInfo {
            name: "alice".into(),
            uid: "u1".into(),
            groups: vec!["dev".into(), "system:authenticated".into()],
            extra: [("scopes".to_owned(), vec!["a".to_owned()])].into(),
        })
    }

    fn attrs(method: Method, target: &str) -> Attributes {
        let (path, q) = target.split_once('?').unwrap_or((target, ""));
        let query = parse_query(Some(q));
        let r = route(&method, path, &query);
        Attributes::of(&alice(), &method, path, &query, &r)
    }

    const G: &str = "/apis/apps.cozystack.io/v1alpha1";

    #[test]
    fn resource_attributes_match_request_info() {
        let spec = attrs(Method::GET, &format!("{G}/namespaces/ns1/postgreses")).review_spec();
        assert_eq!(
            spec,
            json!({"user": "alice", "uid": "u1", "groups": ["dev", "system:authenticated"],
                "extra": {"scopes": ["a"]},
                "resourceAttributes": {"namespace": "ns1", "verb": "list",
                    "group": "apps.cozystack.io", "version": "v1alpha1", "resource": "postgreses"}})
        );
        let cases = [
            (
                Method::GET,
                format!("{G}/namespaces/a/postgreses/db"),
                "get",
                "db",
                "",
            ),
            (
                Method::HEAD,
                format!("{G}/namespaces/a/postgreses/db"),
                "get",
                "db",
                "",
            ),
            (
                Method::GET,
                format!("{G}/postgreses?watch=true"),
                "watch",
                "",
                "",
            ),
            (
                Method::GET,
                format!("{G}/postgreses?watch=1"),
                "watch",
                "",
                "",
            ),
            (
                Method::GET,
                format!("{G}/postgreses?watch=false"),
                "list",
                "",
                "",
            ),
            (
                Method::GET,
                format!("{G}/watch/namespaces/a/postgreses"),
                "watch",
                "",
                "",
            ),
            (
                Method::POST,
                format!("{G}/namespaces/a/postgreses"),
                "create",
                "",
                "",
            ),
            (
                Method::PUT,
                format!("{G}/namespaces/a/postgreses/db"),
                "update",
                "db",
                "",
            ),
            (
                Method::PATCH,
                format!("{G}/namespaces/a/postgreses/db/status"),
                "patch",
                "db",
                "status",
            ),
            (
                Method::DELETE,
                format!("{G}/namespaces/a/postgreses/db"),
                "delete",
                "db",
                "",
            ),
            (
                Method::DELETE,
                format!("{G}/namespaces/a/postgreses"),
                "deletecollection",
                "",
                "",
            ),
            (
                Method::GET,
                format!("{G}/namespaces/a/postgreses?fieldSelector=metadata.name%3Ddb"),
                "list",
                "db",
                "",
            ),
            (
                Method::GET,
                format!("{G}/namespaces/a/postgreses?watch=1&fieldSelector=metadata.name%3D%3Ddb"),
                "watch",
                "db",
                "",
            ),
            (
                Method::GET,
                format!("{G}/namespaces/a/postgreses?fieldSelector=metadata.name%21%3Ddb"),
                "list",
                "",
                "",
            ),
            (
                Method::GET,
                format!("{G}/namespaces/a/postgreses?fieldSelector=metadata.name%3D.."),
                "list",
                "",
                "",
            ),
            (
                Method::DELETE,
                format!("{G}/namespaces/a/postgreses?fieldSelector=metadata.name%3Ddb"),
                "deletecollection",
                "",
                "",
            ),
        ];
        for (method, target, verb, name, sub) in cases {
            let a = attrs(method.clone(), &target);
            let Action::Resource {
                verb: v,
                name: n,
                subresource: s,
                ..
            } = &a.action
            else {
                panic!("{method} {target}: {:?}", a.action)
            };
            assert_eq!(
                (v.as_str(), n.as_str(), s.as_str()),
                (verb, name, sub),
                "{method} {target}"
            );
        }
    }

    #[test]
    fn selectors_are_part_of_list_attributes() {
        let spec = attrs(
            Method::GET,
            &format!("{G}/namespaces/a/postgreses?fieldSelector=metadata.name%3Ddb&labelSelector=team%3Da%2Ctier%20notin%20(x)%2C!gone%2Cn%3E1"),
        )
        .review_spec();
        assert_eq!(
            spec["resourceAttributes"]["fieldSelector"],
            json!({"requirements": [{"key": "metadata.name", "operator": "In", "values": ["db"]}]})
        );
        assert_eq!(
            spec["resourceAttributes"]["labelSelector"],
            json!({"requirements": [
                {"key": "gone", "operator": "DoesNotExist"},
                {"key": "team", "operator": "In", "values": ["a"]},
                {"key": "tier", "operator": "NotIn", "values": ["x"]}]})
        );
        // Not on a get.
        let spec = attrs(
            Method::GET,
            &format!("{G}/namespaces/a/postgreses/db?labelSelector=a%3Db"),
        )
        .review_spec();
        assert!(spec["resourceAttributes"].get("labelSelector").is_none());
    }

    #[test]
    fn non_resource_attributes() {
        for (method, path, verb) in [
            (Method::GET, "/apis", "get"),
            (Method::GET, G, "get"),
            (Method::GET, "/openapi/v3", "get"),
            (Method::POST, "/version", "post"),
        ] {
            assert_eq!(
                attrs(method, path).review_spec()["nonResourceAttributes"],
                json!({"path": path, "verb": verb})
            );
        }
        assert!(is_always_allowed_path("/readyz"));
        assert!(is_always_allowed_path("/livez/ping"));
        assert!(!is_always_allowed_path("/readyzz"));
        assert!(!is_always_allowed_path("/apis"));
    }

    #[test]
    fn forbidden_messages_are_kube_apiservers() {
        let e = attrs(Method::GET, &format!("{G}/namespaces/ns1/postgreses")).forbidden("");
        assert_eq!(e.code, 403);
        assert_eq!(e.reason, "Forbidden");
        assert_eq!(
            e.message,
            r#"postgreses.apps.cozystack.io is forbidden: User "alice" cannot list resource "postgreses" in API group "apps.cozystack.io" in the namespace "ns1""#
        );
        assert_eq!(
            e.details,
            Some(json!({"group": "apps.cozystack.io", "kind": "postgreses"}))
        );
        let e = attrs(
            Method::GET,
            &format!("{G}/namespaces/ns1/postgreses/db/status"),
        )
        .forbidden("RBAC: nope");
        assert_eq!(
            e.message,
            r#"postgreses.apps.cozystack.io "db" is forbidden: User "alice" cannot get resource "postgreses/status" in API group "apps.cozystack.io" in the namespace "ns1": RBAC: nope"#
        );
        let e = attrs(Method::GET, &format!("{G}/postgreses")).forbidden("");
        assert!(e.message.ends_with("at the cluster scope"), "{}", e.message);
        let e = attrs(Method::GET, "/apis").forbidden("");
        assert_eq!(
            e.message,
            r#"forbidden: User "alice" cannot get path "/apis""#
        );
        assert_eq!(e.details, Some(json!({})));
    }

    struct FakeSar {
        calls: AtomicUsize,
        fail: bool,
    }

    impl Reviewer for FakeSar {
        fn create(
            &self,
            kind: ReviewKind,
            spec: Value,
        ) -> BoxFuture<'static, Result<Value, ReviewError>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let fail = self.fail;
            Box::pin(async move {
                if fail {
                    return Err(ReviewError {
                        kind,
                        message: "connection refused".into(),
                    });
                }
                let allowed = spec["resourceAttributes"]["resource"] == "postgreses";
                Ok(json!({"status": {"allowed": allowed}}))
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn decisions_are_cached_and_failures_are_500() {
        let sar = Arc::new(FakeSar {
            calls: AtomicUsize::new(0),
            fail: false,
        });
        let authz = Authorizer::new(sar.clone());
        let pg = attrs(Method::GET, &format!("{G}/namespaces/a/postgreses"));
        let redis = attrs(Method::GET, &format!("{G}/namespaces/a/redises"));
        for _ in 0..3 {
            assert!(authz.authorize(&pg).await.is_ok());
            assert_eq!(authz.authorize(&redis).await.unwrap_err().code, 403);
        }
        assert_eq!(sar.calls.load(Ordering::SeqCst), 2);
        tokio::time::advance(DECISION_CACHE_TTL).await;
        assert!(authz.authorize(&pg).await.is_ok());
        assert_eq!(sar.calls.load(Ordering::SeqCst), 3);

        let master = Attributes {
            user: Arc::new(UserInfo {
                name: "root".into(),
                groups: vec!["system:masters".into()],
                ..UserInfo::default()
            }),
            action: redis.action.clone(),
        };
        assert!(authz.authorize(&master).await.is_ok());
        assert_eq!(
            sar.calls.load(Ordering::SeqCst),
            3,
            "masters skip the review"
        );

        let broken = Authorizer::new(Arc::new(FakeSar {
            calls: AtomicUsize::new(0),
            fail: true,
        }));
        let e = broken.authorize(&pg).await.unwrap_err();
        assert_eq!((e.code, e.reason), (500, "InternalError"));
        assert!(Authorizer::masters_only().authorize(&pg).await.is_err());
        // Anyone may review themselves on a standalone server, as RBAC's
        // system:basic-user lets them.
        let Action::Resource { .. } = &pg.action else {
            unreachable!()
        };
        for (group, resource, verb, allowed) in [
            (
                "authorization.k8s.io",
                "selfsubjectaccessreviews",
                "create",
                true,
            ),
            (
                "authorization.k8s.io",
                "selfsubjectrulesreviews",
                "create",
                true,
            ),
            (
                "authentication.k8s.io",
                "selfsubjectreviews",
                "create",
                true,
            ),
            (
                "authorization.k8s.io",
                "subjectaccessreviews",
                "create",
                false,
            ),
            (
                "authorization.k8s.io",
                "selfsubjectaccessreviews",
                "list",
                false,
            ),
        ] {
            let mut review = pg.clone();
            if let Action::Resource {
                group: g,
                resource: r,
                verb: v,
                namespace,
                ..
            } = &mut review.action
            {
                (*g, *r, *v) = (group.into(), resource.into(), verb.into());
                namespace.clear();
            }
            assert_eq!(
                Authorizer::masters_only().authorize(&review).await.is_ok(),
                allowed,
                "{group} {resource} {verb}"
            );
        }
    }
}
