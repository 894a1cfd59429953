//! What each path answers, once the caller is authorized: `/healthz`,
//! `/livez`, `/readyz` (named checks, `?verbose`, `?exclude=`), `/version`,
//! `/metrics` ([`super::metrics`]),
//! `/apis`, `/apis/<g>`, `/apis/<g>/<v>` (aggregated discovery v2 with
//! ETag/304), `/openapi/v2` (JSON, or gnostic protobuf when `Accept` asks
//! for it: [`super::gnostic`]), `/openapi/v3`, `/openapi/v3/apis/<g>/<v>`
//! and, standalone, `/openapi/v3/api/v1` (from the documents
//! [`super::published`] keeps per kinds snapshot), and
//! every resource path of the served kinds ([`super::handlers`]; in YAML
//! for a client that prefers it: [`super::yaml_response`]).

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::gnostic::{self, Encoding};
use super::handlers::{self, ApiState};
use super::published::{self, Document, PublishedCache};
use super::response::{self, Body};
use super::{discovery, metrics, openapi, yaml_response};
use crate::apimachinery::query::Query;
use crate::apimachinery::request_info::{Route, Verb};
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::UserInfo;

/// What the OpenAPI documents describe. The handlers honour
/// `fieldValidation`, so the documents declare it (and kubectl validates on
/// the server; it fetches protobuf OpenAPI v2 only for a kind the v3
/// documents do not name). A standalone server (embedded store) serves the
/// core namespaces, so it describes them too.
fn openapi_options(state: &ApiState) -> openapi::OpenApiOptions {
    openapi::OpenApiOptions {
        field_validation: true,
        core_namespaces: state.apps.embedded().is_some(),
    }
}

/// An authorized request, its body read, as the router takes it.
pub(crate) struct Request<'a> {
    /// The HTTP method.
    pub(crate) method: &'a Method,
    /// Request headers (credentials stripped).
    pub(crate) headers: &'a HeaderMap,
    /// Query parameters.
    pub(crate) query: &'a Query,
    /// The request body.
    pub(crate) body: Bytes,
    /// Who is asking.
    pub(crate) user: &'a UserInfo,
}

/// Answers authorized requests by route.
pub(crate) struct Router {
    state: ApiState,
    published: PublishedCache,
    shutdown: watch::Receiver<bool>,
}

impl Router {
    /// A router over the handlers' `state`; `shutdown` turns true when the
    /// server stops (readiness fails, watches end).
    pub(crate) fn new(state: ApiState, shutdown: watch::Receiver<bool>) -> Router {
        Router {
            published: PublishedCache::new(openapi_options(&state)),
            state,
            shutdown,
        }
    }

    /// Whether `req` names a resource this server serves
    /// ([`handlers::serves`]).
    pub(crate) fn serves(&self, req: &crate::apimachinery::request_info::ResourceRequest) -> bool {
        handlers::serves(&self.state, req)
    }

    /// The answer to `request` at `route`.
    pub(crate) async fn route(&self, route: Route, request: Request<'_>) -> Response<Body> {
        let Request {
            method,
            headers,
            query,
            body,
            user,
        } = request;
        let state = &self.state;
        let published = self.published.of(&state.registry.snapshot());
        let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
        let get_only = |r: Response<Body>| {
            if matches!(*method, Method::GET | Method::HEAD) {
                r
            } else {
                response::error(&ApiError::method_not_allowed(format!(
                    "{method} is not allowed here"
                )))
            }
        };
        let json =
            |body: &Bytes| response::encoded_json(StatusCode::OK, body.clone(), "application/json");
        match route {
            Route::Health { endpoint, check } => health(self, &endpoint, check.as_deref(), query),
            Route::Version => get_only(response::json(StatusCode::OK, &version_info())),
            Route::Metrics => {
                let kinds = state.registry.snapshot();
                let text = metrics::render(state.apps.cache(), kinds.kinds());
                let mut r = response::text(StatusCode::OK, text);
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(metrics::CONTENT_TYPE),
                );
                get_only(r)
            }
            // The core group: only a standalone server has one (namespaces).
            Route::CoreApi if state.apps.embedded().is_some() => {
                if discovery::wants_aggregated(accept) {
                    get_only(aggregated_discovery(published::core_aggregated(), headers))
                } else {
                    get_only(handlers::namespaces::api_versions())
                }
            }
            Route::CoreV1 if state.apps.embedded().is_some() => {
                get_only(handlers::namespaces::api_resource_list())
            }
            Route::CoreApi | Route::CoreV1 => response::error(&not_found_path()),
            Route::Apis => {
                if discovery::wants_aggregated(accept) {
                    get_only(aggregated_discovery(&published.aggregated, headers))
                } else {
                    get_only(json(&published.group_list))
                }
            }
            Route::Group(group) => match published.group(&group) {
                Some(doc) => get_only(json(doc)),
                None => response::error(&not_found_path()),
            },
            Route::GroupVersion(group, version) => {
                match published.resource_list(&group, &version) {
                    Some(doc) => get_only(json(doc)),
                    None if state
                        .reachability_probe
                        .as_ref()
                        .is_some_and(|(g, v)| *g == group && *v == version) =>
                    {
                        get_only(response::json(
                            StatusCode::OK,
                            &discovery::empty_resource_list(&group, &version),
                        ))
                    }
                    None => response::error(&not_found_path()),
                }
            }
            Route::OpenApiV2 => {
                let v2 = published.openapi_v2();
                get_only(match gnostic::negotiate(accept) {
                    Encoding::Json => openapi_response(
                        &v2.json.body,
                        "application/json",
                        &v2.json.hash,
                        headers,
                        None,
                    ),
                    Encoding::Protobuf => match &v2.protobuf {
                        Ok(doc) => openapi_response(
                            &doc.body,
                            gnostic::CONTENT_TYPE,
                            &doc.hash,
                            headers,
                            None,
                        ),
                        // kube-openapi answers 503 when it cannot convert.
                        Err(e) => response::error(&ApiError::service_unavailable(format!(
                            "the OpenAPI v2 document cannot be served as protobuf: {e}"
                        ))),
                    },
                })
            }
            Route::OpenApiV3Root => get_only(json(published.openapi_v3_root())),
            Route::OpenApiV3(group, version) => {
                match published.openapi_v3_group_version(&group, &version) {
                    Some(doc) => get_only(openapi_response(
                        &doc.body,
                        "application/json",
                        &doc.hash,
                        headers,
                        query.get("hash").map(String::as_str),
                    )),
                    None => response::error(&not_found_path()),
                }
            }
            Route::Resource(req) => {
                // A watch streams JSON only: one that accepts only YAML is
                // refused by negotiation, in YAML.
                let yaml = yaml_response::wanted(accept);
                let watch = req.verb == Verb::Watch;
                let asking_json;
                let headers = if yaml && !watch {
                    asking_json = yaml_response::asking_json(headers);
                    &asking_json
                } else {
                    headers
                };
                let incoming = handlers::Incoming {
                    req: &req,
                    query,
                    headers,
                    method,
                    body,
                    user,
                };
                let answer = handlers::handle(state, incoming, self.shutdown.clone()).await;
                if yaml && !(watch && answer.status().is_success()) {
                    yaml_response::from_json(answer).await
                } else {
                    answer
                }
            }
            Route::MethodNotAllowed => response::error(&response::method_not_allowed()),
            Route::NotFound => response::error(&not_found_path()),
        }
    }
}

/// kube-apiserver's answer to a method a path does not take.
fn not_found_path() -> ApiError {
    ApiError::not_found_route("the server could not find the requested resource")
}

/// An OpenAPI document `body` of `content_type` whose ETag is `digest`
/// (quoted); a matching `?hash=` is immutable. A mismatching hash gets the
/// current document, never a redirect (the aggregator turns redirects into
/// 502).
fn openapi_response(
    body: &Bytes,
    content_type: &str,
    digest: &str,
    headers: &http::HeaderMap,
    hash: Option<&str>,
) -> Response<Body> {
    let etag = format!("\"{digest}\"");
    if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        == Some(etag.as_str())
    {
        let mut r = response::text(StatusCode::NOT_MODIFIED, String::new());
        r.headers_mut().remove(header::CONTENT_TYPE);
        if let Ok(v) = HeaderValue::from_str(&etag) {
            r.headers_mut().insert(header::ETAG, v);
        }
        return r;
    }
    let mut r = response::encoded_json(StatusCode::OK, body.clone(), content_type);
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    if hash == Some(digest) {
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, immutable"),
        );
        h.insert(
            header::EXPIRES,
            HeaderValue::from_static("Fri, 01 Jan 2100 00:00:00 GMT"),
        );
    }
    r
}

/// An aggregated discovery document (`/api` or `/apis`) as kube-apiserver
/// serves one: its media type, `ETag`, `Vary: Accept`, and a bodiless 304
/// when the client's `If-None-Match` is that `ETag`.
fn aggregated_discovery(doc: &Document, headers: &HeaderMap) -> Response<Body> {
    let etag = doc.etag.as_str();
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        == Some(etag);
    let mut r = if matches {
        let mut r = response::text(StatusCode::NOT_MODIFIED, String::new());
        r.headers_mut().remove(header::CONTENT_TYPE);
        r
    } else {
        response::encoded_json(
            StatusCode::OK,
            doc.body.clone(),
            discovery::AGGREGATED_CONTENT_TYPE,
        )
    };
    if let Ok(v) = HeaderValue::from_str(etag) {
        r.headers_mut().insert(header::ETAG, v);
    }
    r.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    r
}

/// `/healthz`, `/livez`, `/readyz`: `ping`, and for readiness the loaded
/// kinds, the synced cache and not shutting down.
fn health(router: &Router, endpoint: &str, only: Option<&str>, query: &Query) -> Response<Body> {
    let state = &router.state;
    let snapshot = state.registry.snapshot();
    let mut checks: Vec<(&str, Result<(), String>)> = vec![("ping", Ok(()))];
    if endpoint == "readyz" {
        checks.push((
            "kinds-loaded",
            if snapshot.kinds().is_empty() {
                Err("no kinds loaded".to_owned())
            } else {
                Ok(())
            },
        ));
        checks.push((
            "watch-cache-sync",
            if state.apps.ready() {
                Ok(())
            } else {
                Err("the HelmRelease cache has not synced".to_owned())
            },
        ));
        checks.push((
            "shutdown",
            if *router.shutdown.borrow() {
                Err("shutting down".to_owned())
            } else {
                Ok(())
            },
        ));
    }
    let excluded: Vec<&str> = query
        .get("exclude")
        .map(|e| e.split(',').collect())
        .unwrap_or_default();
    checks.retain(|(name, _)| !excluded.contains(name));
    if let Some(only) = only {
        return match checks.iter().find(|(name, _)| *name == only) {
            Some((_, Ok(()))) => response::text(StatusCode::OK, "ok".to_owned()),
            Some((_, Err(_))) => response::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {only} failed"),
            ),
            None => response::error(&not_found_path()),
        };
    }
    let healthy = checks.iter().all(|(_, r)| r.is_ok());
    let verbose = query.contains_key("verbose");
    if healthy && !verbose {
        return response::text(StatusCode::OK, "ok".to_owned());
    }
    let mut text = String::new();
    for (name, result) in &checks {
        match result {
            Ok(()) => text.push_str(&format!("[+]{name} ok\n")),
            Err(_) => text.push_str(&format!("[-]{name} failed: reason withheld\n")),
        }
    }
    if healthy {
        text.push_str(&format!("{endpoint} check passed\n"));
        response::text(StatusCode::OK, text)
    } else {
        text.push_str(&format!("{endpoint} check failed\n"));
        response::text(StatusCode::INTERNAL_SERVER_ERROR, text)
    }
}

/// `/version`: the Kubernetes version whose API the server implements, so
/// kubectl's version-skew check compares like with like; this tool's own
/// version rides in the semver build metadata ([`crate::version`]) and in
/// `gitCommit`.
fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": crate::version::KUBERNETES_MINOR.to_string(),
        "gitVersion": crate::version::server_git_version(),
        "gitCommit": format!("kubectl-cozy v{}", crate::version::VERSION),
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": crate::version::platform(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_reports_the_kubernetes_version_it_implements() {
        let info = super::version_info();
        assert_eq!(info["major"], "1");
        assert_eq!(info["minor"], crate::version::KUBERNETES_MINOR.to_string());
        let git = info["gitVersion"].as_str().unwrap();
        assert!(crate::version::is_kubectl_cozy_server(git), "{git}");
        // Go's names, as the client's `version` says them.
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        assert_eq!(info["platform"], "linux/amd64");
    }
}
