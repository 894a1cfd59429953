//! What a request asks for, computed the way kube-apiserver's RequestInfo
//! does (`k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`): the route
//! (health, version, discovery, OpenAPI or a resource) and, for resources,
//! group, version, namespace, resource, name, subresource and verb.

use http::Method;

use super::query::{Query, flag};

/// A parsed request target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/healthz`, `/livez`, `/readyz` and their `/<check>` sub-paths.
    Health {
        /// `healthz`, `livez` or `readyz`.
        endpoint: String,
        /// A single named check, if asked for.
        check: Option<String>,
    },
    /// `/api` (the core group's versions).
    CoreApi,
    /// `/api/v1` (the core group's resources).
    CoreV1,
    /// `/version`.
    Version,
    /// `/metrics`.
    Metrics,
    /// `/apis`.
    Apis,
    /// `/apis/<group>`.
    Group(String),
    /// `/apis/<group>/<version>`.
    GroupVersion(String, String),
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3`.
    OpenApiV3Root,
    /// `/openapi/v3/apis/<group>/<version>`, or `/openapi/v3/api/<version>`
    /// with an empty group (the core group).
    OpenApiV3(String, String),
    /// A resource request.
    Resource(ResourceRequest),
    /// A resource path with a method no resource takes (OPTIONS, TRACE, …).
    MethodNotAllowed,
    /// Anything else.
    NotFound,
}

/// The verbs of resource requests, as authorization sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// GET with a name (`watch=true` or not).
    Get,
    /// GET without a name.
    List,
    /// GET of a collection with `watch=true`, or any GET under `/watch/`
    /// (of one object where it names one).
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE with a name.
    Delete,
    /// DELETE without a name.
    DeleteCollection,
}

impl Verb {
    /// The verb's name in RBAC and discovery.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// A request for a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace, when namespaced.
    pub namespace: Option<String>,
    /// Plural resource name.
    pub resource: String,
    /// Object name.
    pub name: Option<String>,
    /// Subresource (`status`).
    pub subresource: Option<String>,
    /// The verb.
    pub verb: Verb,
}

/// Routes a request.
pub fn route(method: &Method, path: &str, query: &Query) -> Route {
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    match parts.as_slice() {
        [endpoint @ ("healthz" | "livez" | "readyz")] => Route::Health {
            endpoint: (*endpoint).to_owned(),
            check: None,
        },
        [endpoint @ ("healthz" | "livez" | "readyz"), check] => Route::Health {
            endpoint: (*endpoint).to_owned(),
            check: Some((*check).to_owned()),
        },
        ["version"] => Route::Version,
        ["metrics"] => Route::Metrics,
        ["api"] => Route::CoreApi,
        ["api", "v1"] => Route::CoreV1,
        ["api", "v1", rest @ ..] => match resource_request(method, "", "v1", rest, query) {
            Some(req) => Route::Resource(req),
            None => Route::NotFound,
        },
        ["apis"] => Route::Apis,
        ["apis", group] => Route::Group((*group).to_owned()),
        ["apis", group, version] => Route::GroupVersion((*group).to_owned(), (*version).to_owned()),
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3"] => Route::OpenApiV3Root,
        ["openapi", "v3", "apis", group, version] => {
            Route::OpenApiV3((*group).to_owned(), (*version).to_owned())
        }
        ["openapi", "v3", "api", version] => Route::OpenApiV3(String::new(), (*version).to_owned()),
        ["apis", group, version, rest @ ..] => {
            match resource_request(method, group, version, rest, query) {
                Some(req) => Route::Resource(req),
                None if resource_request(&Method::GET, group, version, rest, query).is_some() => {
                    Route::MethodNotAllowed
                }
                None => Route::NotFound,
            }
        }
        _ => Route::NotFound,
    }
}

/// The subresources of a namespace (kube-apiserver's `namespaceSubresources`).
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

fn resource_request(
    method: &Method,
    group: &str,
    version: &str,
    rest: &[&str],
    query: &Query,
) -> Option<ResourceRequest> {
    let mut rest = rest.to_vec();
    let mut watch_path = false;
    if rest.first() == Some(&"watch") {
        watch_path = true;
        rest.remove(0);
    }
    // As kube-apiserver's RequestInfo: `namespaces/<name>/status` and
    // `…/finalize` are subresources of the namespace itself (in its own
    // namespace), anything else after a namespace is a resource in it.
    let (namespace, rest) = match rest.as_slice() {
        ["namespaces", ns, sub, ..] if NAMESPACE_SUBRESOURCES.contains(sub) => {
            (Some((*ns).to_owned()), rest.clone())
        }
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => {
            (Some((*ns).to_owned()), tail.to_vec())
        }
        _ => (None, rest),
    };
    let (resource, name, subresource) = match rest.as_slice() {
        [resource] => ((*resource).to_owned(), None, None),
        [resource, name] => ((*resource).to_owned(), Some((*name).to_owned()), None),
        [resource, name, sub] => (
            (*resource).to_owned(),
            Some((*name).to_owned()),
            Some((*sub).to_owned()),
        ),
        _ => return None,
    };
    // As kube-apiserver's RequestInfo: `watch=true` makes a watch of a
    // collection only; a named GET stays a get (its handler ignores the
    // parameter), and only the `/watch/` path watches one object.
    let verb = match *method {
        Method::GET | Method::HEAD if watch_path => Verb::Watch,
        Method::GET | Method::HEAD if name.is_some() => Verb::Get,
        Method::GET | Method::HEAD if flag(query, "watch") => Verb::Watch,
        Method::GET | Method::HEAD => Verb::List,
        Method::POST => Verb::Create,
        Method::PUT => Verb::Update,
        Method::PATCH => Verb::Patch,
        Method::DELETE if name.is_some() => Verb::Delete,
        Method::DELETE => Verb::DeleteCollection,
        _ => return None,
    };
    Some(ResourceRequest {
        group: group.to_owned(),
        version: version.to_owned(),
        namespace,
        resource,
        name,
        subresource,
        verb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::apimachinery::query::parse_query;

    fn r(method: Method, path: &str, q: &str) -> Route {
        route(&method, path, &parse_query(Some(q)))
    }

    #[test]
    fn resource_routes_and_verbs() {
        let g = "/apis/apps.cozystack.io/v1alpha1";
        let Route::Resource(req) = r(Method::GET, &format!("{g}/namespaces/a/postgreses/db"), "")
        else {
            panic!()
        };
        assert_eq!(
            (req.verb, req.namespace.as_deref(), req.name.as_deref()),
            (Verb::Get, Some("a"), Some("db"))
        );
        let Route::Resource(req) = r(Method::GET, &format!("{g}/postgreses"), "watch=1") else {
            panic!()
        };
        assert_eq!((req.verb, req.namespace), (Verb::Watch, None));
        let Route::Resource(req) = r(
            Method::GET,
            &format!("{g}/watch/namespaces/a/postgreses"),
            "",
        ) else {
            panic!()
        };
        assert_eq!(req.verb, Verb::Watch);
        // One object: watched only through the `/watch/` path; a named GET
        // with `watch=true` is a get, as kube-apiserver routes it.
        let Route::Resource(req) = r(
            Method::GET,
            &format!("{g}/watch/namespaces/a/postgreses/db"),
            "",
        ) else {
            panic!()
        };
        assert_eq!((req.verb, req.name.as_deref()), (Verb::Watch, Some("db")));
        let Route::Resource(req) = r(
            Method::GET,
            &format!("{g}/namespaces/a/postgreses/db"),
            "watch=true",
        ) else {
            panic!()
        };
        assert_eq!((req.verb, req.name.as_deref()), (Verb::Get, Some("db")));
        let Route::Resource(req) = r(Method::DELETE, &format!("{g}/namespaces/a/postgreses"), "")
        else {
            panic!()
        };
        assert_eq!(req.verb, Verb::DeleteCollection);
        let Route::Resource(req) = r(
            Method::GET,
            &format!("{g}/namespaces/a/postgreses/db/status"),
            "",
        ) else {
            panic!()
        };
        assert_eq!(req.subresource.as_deref(), Some("status"));
        // A namespace's own subresources, as kube-apiserver reads them.
        let Route::Resource(req) = r(Method::PUT, "/api/v1/namespaces/a/finalize", "") else {
            panic!()
        };
        assert_eq!(
            (
                req.namespace.as_deref(),
                req.resource.as_str(),
                req.name.as_deref(),
                req.subresource.as_deref(),
                req.verb
            ),
            (
                Some("a"),
                "namespaces",
                Some("a"),
                Some("finalize"),
                Verb::Update
            )
        );
        let Route::Resource(req) = r(Method::GET, "/api/v1/namespaces/a/configmaps", "") else {
            panic!()
        };
        assert_eq!((req.resource.as_str(), req.name), ("configmaps", None));
        assert_eq!(
            r(Method::GET, g, ""),
            Route::GroupVersion("apps.cozystack.io".into(), "v1alpha1".into())
        );
        assert_eq!(
            r(Method::GET, "/readyz/informer-sync", ""),
            Route::Health {
                endpoint: "readyz".into(),
                check: Some("informer-sync".into())
            }
        );
    }
}
