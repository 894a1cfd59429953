//! Resource handlers: every verb of every served kind, in apps: the HTTP
//! side of each request (options from the query and body, negotiation,
//! encoding) over the [`AppStore`], which owns reading and writing them.
//!
//! - [`read`]: get, list (pagination, selectors, resourceVersion semantics)
//! - [`watch`]: watch streams (resumption, bookmarks, initial events)
//! - [`write`]: create, update, patch (JSON, merge, server-side apply)
//! - [`options`]: what a write checks of its options (the query)
//! - [`validate`]: what a write checks of the object it stores
//! - [`delete`]: delete and deletecollection
//! - [`namespaces`]: the `v1` namespaces of a standalone server
//! - [`self_reviews`]: `kubectl auth can-i` and `whoami` on a standalone server

mod delete;
pub(crate) mod namespaces;
mod options;
mod read;
mod self_reviews;
mod validate;
mod watch;
mod write;

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Response, header};
use serde_json::Value;

use super::response::{self, Body};
use crate::apimachinery::query::Query;
use crate::apimachinery::request_info::{ResourceRequest, Verb};
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::UserInfo;
use crate::kinds::Registry;
use crate::kinds::registry::ServedKind;
use crate::storage::app_store::{AppStore, Apps};
use crate::storage::helm_release::AppView;

/// What the handlers share.
#[derive(Clone)]
pub struct ApiState {
    /// Served kinds.
    pub registry: Registry,
    /// The apps of every served kind.
    pub apps: AppStore,
    /// A group/version (`<session>.probe.kubectl-cozy.io`, `v1`) whose
    /// discovery answers an empty resource list: `serve`'s proof that
    /// kube-apiserver reaches this server, through an APIService of its own,
    /// before it points a served group here
    /// ([`crate::register::apiservice::probe_group_version`]).
    pub reachability_probe: Option<(String, String)>,
}

/// One resource request with everything the handlers need.
pub(crate) struct Call<'a> {
    /// Shared state.
    pub state: &'a ApiState,
    /// The served kind.
    pub kind: Arc<ServedKind>,
    /// Route details.
    pub req: &'a ResourceRequest,
    /// Query parameters.
    pub query: &'a Query,
    /// Request headers.
    pub headers: &'a HeaderMap,
    /// The request body (empty for reads).
    pub body: Bytes,
    /// Who is asking; writes are made for them.
    pub user: &'a UserInfo,
    /// Turns true when the server shuts down (ends watches).
    pub shutdown: tokio::sync::watch::Receiver<bool>,
}

impl Call<'_> {
    /// `<plural>.<group>`, as messages name the resource.
    pub(crate) fn group_resource(&self) -> String {
        self.kind.resolved.resource_group()
    }

    /// The apps of the requested kind.
    pub(crate) fn apps(&self) -> Apps<'_> {
        self.state.apps.of(&self.kind)
    }

    /// The namespace of the URL (empty for a request across namespaces).
    fn namespace(&self) -> &str {
        self.req.namespace.as_deref().unwrap_or_default()
    }

    /// The name of the URL (empty for a collection).
    fn name(&self) -> &str {
        self.req.name.as_deref().unwrap_or_default()
    }

    fn accept(&self) -> Option<&str> {
        self.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
    }

    fn content_type(&self) -> Option<&str> {
        self.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
    }

    /// Whether a create, update or patch is a dry run: `dryRun` given,
    /// which [`options::validate`] has checked is `All`.
    fn dry_run(&self) -> bool {
        self.query.contains_key("dryRun")
    }
}

/// A resource request as the server hands it over, the caller authorized.
pub(crate) struct Incoming<'a> {
    /// Route details.
    pub req: &'a ResourceRequest,
    /// Query parameters.
    pub query: &'a Query,
    /// Request headers.
    pub headers: &'a HeaderMap,
    /// The HTTP method.
    pub method: &'a Method,
    /// The request body (empty for reads).
    pub body: Bytes,
    /// Who is asking.
    pub user: &'a UserInfo,
}

/// Whether `req` names a resource this server serves (a served kind, or a
/// standalone server's namespaces and self-reviews) and a subresource one
/// of them has: what the request metrics count, so that their label sets
/// stay those of the served resources.
pub(crate) fn serves(state: &ApiState, req: &ResourceRequest) -> bool {
    let subresource_known = matches!(
        req.subresource.as_deref(),
        None | Some("status" | "finalize")
    );
    let embedded = state.apps.embedded().is_some();
    subresource_known
        && (embedded && (namespaces::is_namespaces(req) || self_reviews::review_of(req).is_some())
            || state
                .registry
                .snapshot()
                .get(&req.group, &req.version, &req.resource)
                .is_some())
}

/// Serves a resource request.
pub(crate) async fn handle(
    state: &ApiState,
    incoming: Incoming<'_>,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> Response<Body> {
    let Incoming {
        req,
        query,
        headers,
        method,
        body,
        user,
    } = incoming;
    if namespaces::is_namespaces(req)
        && let Some(store) = state.apps.embedded()
    {
        return namespaces::handle(store, &state.registry, req, query, headers, &body, shutdown)
            .await
            .unwrap_or_else(|e| response::error(&e));
    }
    if let Some(review) = self_reviews::review_of(req)
        && state.apps.embedded().is_some()
    {
        let protobuf = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with(crate::apimachinery::protobuf_meta::CONTENT_TYPE));
        return self_reviews::handle(review, req, user, &body, protobuf);
    }
    let snapshot = state.registry.snapshot();
    let Some(kind) = snapshot
        .get(&req.group, &req.version, &req.resource)
        .cloned()
    else {
        return response::error(&ApiError::not_found_route(format!(
            "the server could not find the requested resource ({} {}/{} {})",
            method, req.group, req.version, req.resource
        )));
    };
    // A collection takes no update or patch. A create sent to an object's
    // path is a create of the body's object, as kube-apiserver's handler
    // reads it (the name in the path is not read).
    if req.name.is_none() && matches!(req.verb, Verb::Update | Verb::Patch) {
        return response::error(&crate::apiserver::response::method_not_allowed());
    }
    // As kube-apiserver's custom-resource handler: a subresource the kind
    // does not have is the object not found, whatever the verb; `status`
    // is read only here (an app's status is its HelmRelease's).
    if let Some(sub) = &req.subresource {
        let group_resource = format!("{}.{}", req.resource, req.group);
        if sub != "status" {
            let name = req.name.as_deref().unwrap_or_default();
            return response::error(&ApiError::not_found(&group_resource, name));
        }
        if req.verb != Verb::Get {
            return response::error(&ApiError::method_not_supported(
                &group_resource,
                req.verb.as_str(),
            ));
        }
    }
    if matches!(
        req.verb,
        Verb::Create | Verb::Update | Verb::Patch | Verb::Delete | Verb::DeleteCollection
    ) && req.namespace.is_none()
    {
        return response::error(&ApiError::method_not_allowed(format!(
            "{} of {} requires a namespace",
            req.verb.as_str(),
            req.resource
        )));
    }
    if !state.apps.ready() {
        state.apps.wait_ready().await;
    }
    let call = Call {
        state,
        kind,
        req,
        query,
        headers,
        body,
        user,
        shutdown,
    };
    let result = match req.verb {
        Verb::Get => read::get(&call).await,
        Verb::List => read::list(&call).await,
        Verb::Watch => {
            return watch::watch(&call)
                .await
                .unwrap_or_else(|e| response::error(&e));
        }
        Verb::Create => write::create(&call).await,
        Verb::Update => write::update(&call).await,
        Verb::Patch => write::patch(&call).await,
        Verb::Delete => delete::delete(&call).await,
        Verb::DeleteCollection => delete::delete_collection(&call).await,
    };
    result.unwrap_or_else(|e| response::error(&e))
}

/// A response whose body is an app's kept JSON (`view`), as it is.
fn app_json(code: http::StatusCode, view: &AppView, content_type: &str) -> Response<Body> {
    response::encoded_json(
        code,
        Bytes::copy_from_slice(view.json.as_bytes()),
        content_type,
    )
}

/// A request body that is to be a `kind`, as JSON (YAML when the content
/// type says so, read as Go's yaml.v2 reads it: a repeated key's last value
/// wins, `0755` is octal). A body that does not parse, or is no object, is
/// kube-apiserver's [`unrecognized`] 400, its reason in Go's words where
/// they can be had (`unexpected end of JSON input`; a YAML syntax error is
/// `yaml: line N: …` in our parser's words).
pub(crate) fn parse_typed_body(
    body: &[u8],
    content_type: Option<&str>,
    kind: &str,
) -> Result<Value, ApiError> {
    let value = parse_body(body, content_type).map_err(|why| unrecognized(kind, body, &why))?;
    let go_type = match &value {
        Value::Object(_) | Value::Null => return Ok(value),
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
    };
    Err(unrecognized(
        kind,
        body,
        &format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {go_type} into Go value of type \
             struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \
             \"json:\\\"kind,omitempty\\\"\" }}"
        ),
    ))
}

/// kube-apiserver's 400 for a body whose type it cannot read
/// (`transformDecodeError`): `why`, and the body's first 30 bytes as
/// `summarizeData` gives them (as sent when it starts with `{`, else in
/// hex).
pub(crate) fn unrecognized(kind: &str, body: &[u8], why: &str) -> ApiError {
    let head = &body[..body.len().min(30)];
    let more = if body.len() > 30 { " ..." } else { "" };
    let summary = match body.first() {
        None => "<empty>".to_owned(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(head)),
        Some(_) => format!(
            "{}{more}",
            head.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ),
    };
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {why} ({summary})"
    ))
}

/// Parses a request body as JSON, or YAML when the content type says so;
/// why not, when it does not parse.
fn parse_body(body: &[u8], content_type: Option<&str>) -> Result<Value, String> {
    let is_yaml = content_type.is_some_and(|c| c.contains("yaml"));
    if is_yaml {
        let text = std::str::from_utf8(body).map_err(|e| format!("body is not UTF-8: {e}"))?;
        serde_saphyr::from_str_with_options(text, crate::golang::yaml::yaml_v2_options()).map_err(
            |e| {
                let line = e.location().map_or(0, |l| l.line());
                format!(
                    "yaml: line {line}: {}",
                    crate::kinds::yaml_message::yaml_message(&e)
                )
            },
        )
    } else {
        // In Go's words (`unexpected end of JSON input`), as kube-apiserver
        // reads the type of a body that is not JSON; serde_json's where Go
        // would read it (nested deeper than serde_json's 128 levels).
        serde_json::from_slice(body).map_err(|e| {
            let why = crate::golang::json_syntax::check(body).err();
            format!(
                "couldn't get version/kind; json parse error: {}",
                why.unwrap_or_else(|| e.to_string())
            )
        })
    }
}
