//! Kubernetes `Status` errors: [`ApiError`] and its constructors, each
//! shaped like the matching constructor of k8s.io/apimachinery
//! `pkg/api/errors/errors.go` (code, reason, message wording and `details`),
//! so clients such as kubectl and client-go classify them exactly as they
//! classify kube-apiserver's (`IsNotFound`, `IsConflict`, `IsInvalid`, …).
//!
//! Constructors that take a `group_resource` expect it as Kubernetes prints a
//! `schema.GroupResource`: `<plural>.<group>` (`postgreses.apps.cozystack.io`),
//! or just `<plural>` for the core group.
//!
//! Serialize an error with [`ApiError::to_status`]; a successful delete that
//! answers with a `Status` uses [`success_status`].
//!
//! What went wrong inside the server never reaches the client: an
//! [`ApiError::internal_hidden`] answers with a generic 500 and keeps the
//! cause in [`ApiError::hidden_cause`], which the response writer logs
//! (axum's error-handling pattern).

use std::fmt;

use serde_json::{Map, Value, json};

use crate::golang::quote as go_quote;
use crate::kinds::schema::FieldError;

/// The message of every [`ApiError::internal_hidden`]: what a client may
/// know of a failure inside the server.
pub const HIDDEN_INTERNAL_MESSAGE: &str =
    "an error on the server has prevented the request from succeeding";

/// An error answered as a `metav1.Status` with `status: Failure`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code, also the Status `code`.
    pub code: u16,
    /// The Status `reason` (`NotFound`, `Conflict`, …); empty for
    /// `StatusReasonUnknown`.
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// The Status `details` object (`name`, `group`, `kind`, `causes`, …).
    pub details: Option<Value>,
    /// Seconds a client should wait before retrying: sent as
    /// `details.retryAfterSeconds` and, by the response writer, as the
    /// `Retry-After` header.
    pub retry_after: Option<u64>,
    /// What went wrong inside the server, for the log only: never sent
    /// (see [`ApiError::internal_hidden`]).
    pub hidden_cause: Option<String>,
}

/// Splits `postgreses.apps.cozystack.io` into (`postgreses`, `apps.cozystack.io`).
fn split_group_resource(group_resource: &str) -> (&str, &str) {
    group_resource
        .split_once('.')
        .unwrap_or((group_resource, ""))
}

/// `{name, group, kind}` as kube-apiserver fills `StatusDetails` for a
/// resource (`kind` holds the plural resource, as upstream does); empty
/// members are omitted like Go's `omitempty`.
fn resource_details(group_resource: &str, name: &str) -> Value {
    let (resource, group) = split_group_resource(group_resource);
    let mut details = Map::new();
    if !name.is_empty() {
        details.insert("name".into(), name.into());
    }
    if !group.is_empty() {
        details.insert("group".into(), group.into());
    }
    if !resource.is_empty() {
        details.insert("kind".into(), resource.into());
    }
    Value::Object(details)
}

/// Every `Status` reason kube-apiserver knows (`metav1.StatusReason*`).
const KNOWN_REASONS: &[&str] = &[
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Invalid",
    "ServerTimeout",
    "StoreReadError",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "Expired",
    "ServiceUnavailable",
];

/// The `&'static` spelling of a known reason; unknown reasons become
/// `InternalError`, and an empty reason stays empty (`StatusReasonUnknown`).
pub fn known_reason(reason: &str) -> &'static str {
    if reason.is_empty() {
        return "";
    }
    KNOWN_REASONS
        .iter()
        .copied()
        .find(|known| *known == reason)
        .unwrap_or("InternalError")
}

impl ApiError {
    /// An error with no details.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
            hidden_cause: None,
        }
    }

    /// A Status kube-apiserver answered (or one in its words), passed on:
    /// its code, its reason when known ([`known_reason`]), its message and
    /// `retryAfterSeconds`.
    pub fn upstream(
        code: u16,
        reason: &str,
        message: impl Into<String>,
        retry_after: Option<u64>,
    ) -> ApiError {
        let error = ApiError::new(code, known_reason(reason), message);
        match retry_after {
            Some(seconds) => error.with_retry_after(seconds),
            None => error,
        }
    }

    /// Sets `retry_after` (`details.retryAfterSeconds` and `Retry-After`).
    pub fn with_retry_after(mut self, seconds: u64) -> ApiError {
        self.retry_after = Some(seconds);
        self
    }

    /// 404 NotFound: `postgreses.apps.cozystack.io "x" not found`.
    pub fn not_found(group_resource: &str, name: &str) -> ApiError {
        ApiError {
            details: Some(resource_details(group_resource, name)),
            ..ApiError::new(
                404,
                "NotFound",
                format!("{group_resource} {} not found", go_quote(name)),
            )
        }
    }

    /// 409 AlreadyExists: `postgreses.apps.cozystack.io "x" already exists`.
    pub fn already_exists(group_resource: &str, name: &str) -> ApiError {
        ApiError {
            details: Some(resource_details(group_resource, name)),
            ..ApiError::new(
                409,
                "AlreadyExists",
                format!("{group_resource} {} already exists", go_quote(name)),
            )
        }
    }

    /// This error, and when `being_deleted` its message as kube-apiserver's
    /// store says it when the object in the way is being deleted: `object
    /// is being deleted: … already exists` (wait, then create it again).
    pub fn when_being_deleted(self, being_deleted: bool) -> ApiError {
        if !being_deleted {
            return self;
        }
        ApiError {
            message: format!("object is being deleted: {}", self.message),
            ..self
        }
    }

    /// 409 AlreadyExists for a `generateName` collision, with
    /// `retryAfterSeconds` (upstream `NewGenerateNameConflict`).
    pub fn generate_name_conflict(
        group_resource: &str,
        generate_name: &str,
        retry_after: u64,
    ) -> ApiError {
        ApiError {
            details: Some(resource_details(group_resource, generate_name)),
            retry_after: Some(retry_after),
            ..ApiError::new(
                409,
                "AlreadyExists",
                format!(
                    "{group_resource} {} already exists, the server was not able to generate a unique name for the object",
                    go_quote(generate_name)
                ),
            )
        }
    }

    /// 409 Conflict: `Operation cannot be fulfilled on
    /// postgreses.apps.cozystack.io "x": <msg>`.
    pub fn conflict(group_resource: &str, name: &str, msg: impl AsRef<str>) -> ApiError {
        let msg = msg.as_ref();
        ApiError {
            details: Some(resource_details(group_resource, name)),
            ..ApiError::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {group_resource} {}: {msg}",
                    go_quote(name)
                ),
            )
        }
    }

    /// 422 Invalid, as kube-apiserver reports schema validation failures:
    /// message `Postgres.apps.cozystack.io "x" is invalid: <errors>` (one
    /// error plainly, several as `[e1, e2]`, duplicates dropped, like Go's
    /// `utilerrors.Aggregate`), and one cause per error with its
    /// `reason` (cause type), `message` (without the field) and `field`.
    pub fn invalid(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> ApiError {
        let qualified = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| {
                json!({
                    "reason": e.kind.reason(),
                    "message": e.message(),
                    "field": e.field,
                })
            })
            .collect();
        let mut seen = Vec::<String>::new();
        for e in errors {
            let text = e.to_string();
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
        let message = match seen.len() {
            0 => format!("{qualified} {} is invalid", go_quote(name)),
            1 => format!("{qualified} {} is invalid: {}", go_quote(name), seen[0]),
            _ => format!(
                "{qualified} {} is invalid: [{}]",
                go_quote(name),
                seen.join(", ")
            ),
        };
        let mut details = Map::new();
        if !name.is_empty() {
            details.insert("name".into(), name.into());
        }
        if !group.is_empty() {
            details.insert("group".into(), group.into());
        }
        if !kind.is_empty() {
            details.insert("kind".into(), kind.into());
        }
        if !causes.is_empty() {
            details.insert("causes".into(), Value::Array(causes));
        }
        ApiError {
            details: Some(Value::Object(details)),
            ..ApiError::new(422, "Invalid", message)
        }
    }

    /// 404 NotFound for a path the server does not serve (no resource details).
    pub fn not_found_route(msg: impl Into<String>) -> ApiError {
        ApiError::new(404, "NotFound", msg)
    }

    /// 422 Invalid for a bad query parameter (list or patch options), with one
    /// cause naming the parameter.
    pub fn invalid_query(field: &str, detail: &str) -> ApiError {
        let mut err = ApiError::new(422, "Invalid", format!("{field}: {detail}"));
        err.details = Some(serde_json::json!({
            "causes": [{"reason": "FieldValueInvalid", "message": detail, "field": field}]
        }));
        err
    }

    /// 403 Forbidden with kube-apiserver's `NamespaceTerminating` cause.
    pub fn namespace_terminating(namespace: &str, message: impl Into<String>) -> ApiError {
        let mut err = ApiError::new(403, "Forbidden", message);
        err.details = Some(serde_json::json!({
            "causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                        "message": format!("namespace {namespace} is being terminated")}]
        }));
        err
    }

    /// 400 BadRequest.
    pub fn bad_request(msg: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", msg)
    }

    /// 403 Forbidden; `msg` is the whole message (see the contract §2.2 for
    /// kube-apiserver's wording).
    pub fn forbidden(msg: impl Into<String>) -> ApiError {
        ApiError::new(403, "Forbidden", msg)
    }

    /// 401 Unauthorized; an empty message becomes `not authorized`, as upstream.
    pub fn unauthorized(msg: impl Into<String>) -> ApiError {
        let msg = msg.into();
        let msg = if msg.is_empty() {
            "not authorized".to_owned()
        } else {
            msg
        };
        ApiError::new(401, "Unauthorized", msg)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(msg: impl Into<String>) -> ApiError {
        ApiError::new(405, "MethodNotAllowed", msg)
    }

    /// 405 MethodNotAllowed for a verb a resource does not take, as
    /// upstream `NewMethodNotSupported`: `delete is not supported on
    /// resources of kind "postgreses.apps.cozystack.io"`.
    pub fn method_not_supported(group_resource: &str, verb: &str) -> ApiError {
        ApiError {
            details: Some(resource_details(group_resource, "")),
            ..ApiError::method_not_allowed(format!(
                "{verb} is not supported on resources of kind {}",
                go_quote(group_resource)
            ))
        }
    }

    /// 406 NotAcceptable.
    pub fn not_acceptable(msg: impl Into<String>) -> ApiError {
        ApiError::new(406, "NotAcceptable", msg)
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(msg: impl Into<String>) -> ApiError {
        ApiError::new(415, "UnsupportedMediaType", msg)
    }

    /// 410 Expired (a resourceVersion or continue token that is too old);
    /// client-go's reflector relists on it.
    pub fn expired(msg: impl Into<String>) -> ApiError {
        ApiError::new(410, "Expired", msg)
    }

    /// 410 Gone.
    pub fn gone(msg: impl Into<String>) -> ApiError {
        ApiError::new(410, "Gone", msg)
    }

    /// 413 RequestEntityTooLarge; the message is prefixed
    /// `Request entity too large: ` like upstream.
    pub fn too_large(msg: impl Into<String>) -> ApiError {
        ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: {}", msg.into()),
        )
    }

    /// 429 TooManyRequests with a retry delay.
    pub fn too_many_requests(msg: impl Into<String>, retry_after: u64) -> ApiError {
        ApiError::new(429, "TooManyRequests", msg).with_retry_after(retry_after)
    }

    /// 500 InternalError: message `Internal error occurred: <msg>` and one
    /// cause carrying `msg`, like upstream `NewInternalError`. Do not put
    /// internals in `msg`; log them instead.
    pub fn internal(msg: impl Into<String>) -> ApiError {
        let msg = msg.into();
        ApiError {
            details: Some(json!({"causes": [{"message": msg}]})),
            ..ApiError::new(
                500,
                "InternalError",
                format!("Internal error occurred: {msg}"),
            )
        }
    }

    /// 500 InternalError for a failure inside the server (a database, a
    /// transport, a task): the client gets [`HIDDEN_INTERNAL_MESSAGE`] and
    /// `cause` stays in [`ApiError::hidden_cause`] for the response writer
    /// to log.
    pub fn internal_hidden(cause: impl fmt::Display) -> ApiError {
        ApiError {
            hidden_cause: Some(cause.to_string()),
            ..ApiError::internal(HIDDEN_INTERNAL_MESSAGE)
        }
    }

    /// 503 ServiceUnavailable.
    pub fn service_unavailable(msg: impl Into<String>) -> ApiError {
        ApiError::new(503, "ServiceUnavailable", msg)
    }

    /// 504 Timeout; the message is prefixed `Timeout: ` like upstream
    /// `NewTimeoutError`.
    pub fn timeout(msg: impl Into<String>) -> ApiError {
        ApiError::new(504, "Timeout", format!("Timeout: {}", msg.into()))
    }

    /// 504 Timeout for a resourceVersion the server has not reached in time,
    /// as upstream `storage.NewTooLargeResourceVersionError`: cause
    /// `ResourceVersionTooLarge`, `retryAfterSeconds: 1`.
    pub fn too_large_resource_version(wanted: u64, current: u64) -> ApiError {
        ApiError {
            details: Some(serde_json::json!({"causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ]})),
            ..ApiError::timeout(format!(
                "Too large resource version: {wanted}, current: {current}"
            ))
        }
        .with_retry_after(1)
    }

    /// The `Status` object, with members in kube-apiserver's order:
    /// `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    /// "message":…,"reason":…,"details":…,"code":…}`.
    pub fn to_status(&self) -> Value {
        let mut status = Map::new();
        status.insert("kind".into(), "Status".into());
        status.insert("apiVersion".into(), "v1".into());
        status.insert("metadata".into(), Value::Object(Map::new()));
        status.insert("status".into(), "Failure".into());
        if !self.message.is_empty() {
            status.insert("message".into(), self.message.clone().into());
        }
        if !self.reason.is_empty() {
            status.insert("reason".into(), self.reason.into());
        }
        let mut details = match &self.details {
            Some(Value::Object(d)) => Some(d.clone()),
            _ => None,
        };
        if let Some(seconds) = self.retry_after.filter(|s| *s > 0) {
            details
                .get_or_insert_with(Map::new)
                .insert("retryAfterSeconds".into(), seconds.into());
        }
        if let Some(details) = details {
            status.insert("details".into(), Value::Object(details));
        }
        if self.code != 0 {
            status.insert("code".into(), self.code.into());
        }
        Value::Object(status)
    }

    /// [`to_status`](ApiError::to_status), serialized.
    pub fn to_body(&self) -> Vec<u8> {
        serde_json::to_vec(&self.to_status()).unwrap_or_default()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

/// A `Status` with `status: Success`, as a delete answers when it does not
/// return the object: `{"kind":"Status","apiVersion":"v1","metadata":{},
/// "status":"Success","details":{…}}`; a null `details` is left out.
pub fn success_status(details: Value) -> Value {
    let mut status = Map::new();
    status.insert("kind".into(), "Status".into());
    status.insert("apiVersion".into(), "v1".into());
    status.insert("metadata".into(), Value::Object(Map::new()));
    status.insert("status".into(), "Success".into());
    if !details.is_null() {
        status.insert("details".into(), details);
    }
    Value::Object(status)
}

impl From<ApiError> for Value {
    fn from(err: ApiError) -> Value {
        err.to_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::schema::FieldErrorKind;

    const GR: &str = "postgreses.apps.cozystack.io";

    #[test]
    fn not_found_matches_upstream() {
        let e = ApiError::not_found(GR, "x");
        assert_eq!(
            serde_json::to_string(&e.to_status()).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"postgreses.apps.cozystack.io \"x\" not found","reason":"NotFound","details":{"name":"x","group":"apps.cozystack.io","kind":"postgreses"},"code":404}"#
        );
        assert_eq!(
            e.to_string(),
            "postgreses.apps.cozystack.io \"x\" not found"
        );
    }

    #[test]
    fn core_group_resource_has_no_group() {
        let e = ApiError::not_found("namespaces", "ns1");
        assert_eq!(
            e.details,
            Some(json!({"name": "ns1", "kind": "namespaces"}))
        );
        assert_eq!(e.message, "namespaces \"ns1\" not found");
    }

    #[test]
    fn conflict_and_already_exists() {
        let e = ApiError::conflict(
            GR,
            "x",
            "the object has been modified; please apply your changes to the latest version and try again",
        );
        assert_eq!(e.code, 409);
        assert_eq!(e.reason, "Conflict");
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on postgreses.apps.cozystack.io \"x\": the object has been modified; please apply your changes to the latest version and try again"
        );
        let e = ApiError::already_exists(GR, "x");
        assert_eq!((e.code, e.reason), (409, "AlreadyExists"));
        assert_eq!(
            e.message,
            "postgreses.apps.cozystack.io \"x\" already exists"
        );
        assert_eq!(e.clone().when_being_deleted(false).message, e.message);
        let deleted = e.when_being_deleted(true);
        assert_eq!(
            (deleted.code, deleted.reason, deleted.message.as_str()),
            (
                409,
                "AlreadyExists",
                "object is being deleted: postgreses.apps.cozystack.io \"x\" already exists"
            )
        );
        let e = ApiError::generate_name_conflict(GR, "pg-", 1);
        assert_eq!(e.to_status()["details"]["retryAfterSeconds"], 1);
    }

    fn field_error(
        field: &str,
        kind: FieldErrorKind,
        bad: Option<Value>,
        detail: &str,
    ) -> FieldError {
        FieldError {
            field: field.into(),
            kind,
            bad_value: bad,
            detail: detail.into(),
        }
    }

    #[test]
    fn invalid_has_kube_shape() {
        let errors = [field_error(
            "spec.size",
            FieldErrorKind::Invalid,
            Some(json!(-1)),
            "must be >= 0",
        )];
        let status = ApiError::invalid("Flunder", "wardle.example.com", "x", &errors).to_status();
        // The contract's §6.7 example, member for member.
        assert_eq!(
            serde_json::to_string(&status).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Flunder.wardle.example.com \"x\" is invalid: spec.size: Invalid value: -1: must be >= 0","reason":"Invalid","details":{"name":"x","group":"wardle.example.com","kind":"Flunder","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: -1: must be >= 0","field":"spec.size"}]},"code":422}"#
        );
    }

    #[test]
    fn invalid_with_several_errors_is_bracketed_and_deduplicated() {
        let errors = [
            field_error("spec.replicas", FieldErrorKind::Required, None, ""),
            field_error(
                "spec.version",
                FieldErrorKind::NotSupported,
                Some(json!("9")),
                "supported values: \"16\", \"17\"",
            ),
            field_error("spec.replicas", FieldErrorKind::Required, None, ""),
        ];
        let e = ApiError::invalid("Postgres", "apps.cozystack.io", "x", &errors);
        assert_eq!(
            e.message,
            "Postgres.apps.cozystack.io \"x\" is invalid: [spec.replicas: Required value, spec.version: Unsupported value: \"9\": supported values: \"16\", \"17\"]"
        );
        let causes = e.to_status()["details"]["causes"].clone();
        assert_eq!(causes.as_array().map(Vec::len), Some(3));
        assert_eq!(
            causes[0],
            json!({"reason": "FieldValueRequired", "message": "Required value", "field": "spec.replicas"})
        );
        let e = ApiError::invalid("Postgres", "apps.cozystack.io", "x", &[]);
        assert_eq!(e.message, "Postgres.apps.cozystack.io \"x\" is invalid");
    }

    #[test]
    fn simple_constructors() {
        let cases = [
            (ApiError::bad_request("m"), 400, "BadRequest", "m"),
            (ApiError::forbidden("m"), 403, "Forbidden", "m"),
            (
                ApiError::unauthorized(""),
                401,
                "Unauthorized",
                "not authorized",
            ),
            (
                ApiError::method_not_allowed("m"),
                405,
                "MethodNotAllowed",
                "m",
            ),
            (ApiError::not_acceptable("m"), 406, "NotAcceptable", "m"),
            (
                ApiError::unsupported_media_type("m"),
                415,
                "UnsupportedMediaType",
                "m",
            ),
            (ApiError::expired("m"), 410, "Expired", "m"),
            (ApiError::gone("m"), 410, "Gone", "m"),
            (
                ApiError::too_large("m"),
                413,
                "RequestEntityTooLarge",
                "Request entity too large: m",
            ),
            (
                ApiError::internal("m"),
                500,
                "InternalError",
                "Internal error occurred: m",
            ),
            (
                ApiError::service_unavailable("m"),
                503,
                "ServiceUnavailable",
                "m",
            ),
            (ApiError::timeout("m"), 504, "Timeout", "Timeout: m"),
        ];
        for (e, code, reason, message) in cases {
            assert_eq!(
                (e.code, e.reason, e.message.as_str()),
                (code, reason, message)
            );
            let s = e.to_status();
            assert_eq!(s["code"], code);
            assert_eq!(s["reason"], reason);
            assert_eq!(s["status"], "Failure");
        }
        assert_eq!(
            ApiError::internal("boom").to_status()["details"],
            json!({"causes": [{"message": "boom"}]})
        );
        let hidden = ApiError::internal_hidden("open /var/lib/db.sqlite: disk I/O error");
        assert_eq!((hidden.code, hidden.reason), (500, "InternalError"));
        let body = String::from_utf8(hidden.to_body()).unwrap();
        assert!(!body.contains("db.sqlite"), "{body}");
        assert_eq!(
            hidden.hidden_cause.as_deref(),
            Some("open /var/lib/db.sqlite: disk I/O error")
        );
        let s = ApiError::too_many_requests("slow down", 3).to_status();
        assert_eq!(s["details"], json!({"retryAfterSeconds": 3}));
    }

    #[test]
    fn success() {
        let s = success_status(
            json!({"name": "x", "group": "apps.cozystack.io", "kind": "postgreses", "uid": "u"}),
        );
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"x","group":"apps.cozystack.io","kind":"postgreses","uid":"u"}}"#
        );
        assert!(success_status(Value::Null).get("details").is_none());
    }
}
