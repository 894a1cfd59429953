//! Delegated authentication and authorization, as a Kubernetes extension API
//! server does it (docs/aggregation-contract.md §1–2): who is calling
//! ([`authn`]), whether they may ([`authz`]), from which trust material
//! ([`config`]), with which TLS handshake ([`tls`]), through which review
//! calls ([`review`]). The RBAC that makes it all work is
//! [`crate::register::manifests`].
//!
//! - [`tls`]: the handshake *requests* a client certificate and checks only
//!   that the client holds its key; chains are verified here, per request,
//!   against whichever CA applies now (the trust material can change at run
//!   time and two CAs apply).
//! - [`authn`]: front proxy → x509 (client CA) → bearer token (TokenReview,
//!   cached 10 s); anonymous only for health paths.
//! - [`authz`]: a SubjectAccessReview with kube-apiserver's attributes,
//!   allow and deny cached 10 s; health paths and `system:masters` bypass it.
//! - [`config`]: `kube-system/extension-apiserver-authentication`, watched
//!   and hot-reloaded; standalone mode's own CA.
//!
//! [`Auth`] ties them together for the server: one call per request that
//! answers with the caller's [`UserInfo`] or the `Status` to send back.
//!
//! Credentials are never logged: tokens are cached by SHA-256 digest, and
//! log lines name users and certificate subjects only.

pub(crate) mod authn;
pub(crate) mod authz;
pub mod config;
mod impersonation;
pub mod review;
pub(crate) mod tls;
mod ttl_cache;

use std::sync::Arc;

use http::{HeaderMap, Method};

use crate::apimachinery::query::Query;
use crate::apimachinery::request_info::Route;
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::{ANONYMOUS_USER, MASTERS_GROUP, UserInfo};

pub use authn::Authenticator;
pub use authz::Authorizer;
pub use config::{AuthConfig, DynamicAuthConfig};
pub use tls::PeerCertificates;

/// Authentication plus authorization, as the server runs them per request.
pub struct Auth {
    mode: Mode,
    /// The ConfigMap watch feeding the authenticator, stopped with `Auth`.
    watch: Option<tokio::task::AbortHandle>,
}

impl Drop for Auth {
    fn drop(&mut self) {
        if let Some(watch) = &self.watch {
            watch.abort();
        }
    }
}

#[allow(clippy::large_enum_variant, reason = "one per server, never moved")]
enum Mode {
    Delegated {
        authenticator: Authenticator,
        authorizer: Authorizer,
        config: DynamicAuthConfig,
    },
    AllowAll,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.mode {
            Mode::Delegated { .. } => "Auth::Delegated",
            Mode::AllowAll => "Auth::AllowAll",
        })
    }
}

impl Auth {
    /// Authenticates with `authenticator` (whose trust is `config`) and
    /// authorizes with `authorizer`.
    pub fn new(
        config: DynamicAuthConfig,
        authenticator: Authenticator,
        authorizer: Authorizer,
    ) -> Auth {
        Auth {
            mode: Mode::Delegated {
                authenticator,
                authorizer,
                config,
            },
            watch: None,
        }
    }

    /// Cluster mode: trust from `source` (read now, then watched), bearer
    /// tokens through TokenReview and every request through a
    /// SubjectAccessReview, all made with `client`'s identity.
    pub async fn delegated(
        client: kube::Client,
        source: config::ConfigMapRef,
    ) -> Result<Auth, config::ConfigError> {
        let initial = config::load(&client, &source).await?;
        tracing::info!(
            "authentication config from {}/{}: {}",
            source.namespace,
            source.name,
            initial.summary()
        );
        let dynamic = DynamicAuthConfig::new(initial);
        let watch = config::watch(client.clone(), source, dynamic.clone());
        let reviewer: Arc<dyn review::Reviewer> = Arc::new(review::KubeReviewer::new(client));
        let mut auth = Auth::new(
            dynamic.clone(),
            Authenticator::new(dynamic).with_token_review(reviewer.clone()),
            Authorizer::new(reviewer),
        );
        auth.watch = Some(watch.abort_handle());
        Ok(auth)
    }

    /// Standalone mode: client certificates of the server's own CA; only
    /// `system:masters` (the written kubeconfig's user) is authorized, as
    /// there is no cluster to ask.
    pub fn standalone(ca_pem: &str) -> Result<Auth, config::ConfigError> {
        let dynamic = DynamicAuthConfig::new(AuthConfig::standalone(ca_pem)?);
        Ok(Auth::new(
            dynamic.clone(),
            Authenticator::new(dynamic),
            Authorizer::masters_only(),
        ))
    }

    /// Lets every request through as an anonymous `system:masters` member.
    /// Only for benchmarks that measure what authentication costs and for
    /// tests of unrelated features; `serve` never builds it.
    #[doc(hidden)]
    pub fn allow_all_for_benchmarks() -> Auth {
        Auth {
            mode: Mode::AllowAll,
            watch: None,
        }
    }

    /// Removes the credentials a request carried (`Authorization` and the
    /// front proxy's headers) so nothing after authentication sees them.
    pub fn strip_credentials(&self, headers: &mut HeaderMap) {
        headers.remove(http::header::AUTHORIZATION);
        if let Mode::Delegated { config, .. } = &self.mode
            && let Some(rh) = &config.current().request_header
        {
            let names: Vec<http::HeaderName> = headers
                .keys()
                .filter(|n| rh.is_auth_header(n))
                .cloned()
                .collect();
            for name in names {
                headers.remove(name);
            }
        }
    }

    /// The transport half of the handshake: which client certificates to
    /// accept (all; see [`tls`]).
    pub fn client_cert_verifier() -> Arc<dyn rustls::server::danger::ClientCertVerifier> {
        Arc::new(tls::DeferredClientCertVerifier::new())
    }

    /// Whether `peer`'s certificate is signed by a CA this server trusts
    /// (every connection is, for benchmarks' allow-all).
    pub fn trusts_certificate(&self, peer: &PeerCertificates) -> bool {
        match &self.mode {
            Mode::AllowAll => true,
            Mode::Delegated { authenticator, .. } => authenticator.trusts_certificate(peer),
        }
    }

    /// Authenticates and authorizes one request. `Ok` carries the caller;
    /// `Err` is the Status to answer with (401, 403 or 500).
    pub async fn check(
        &self,
        peer: &PeerCertificates,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        query: &Query,
        route: &Route,
    ) -> Result<Arc<UserInfo>, ApiError> {
        let (authenticator, authorizer) = match &self.mode {
            Mode::AllowAll => {
                return Ok(Arc::new(UserInfo {
                    name: ANONYMOUS_USER.to_owned(),
                    groups: vec![MASTERS_GROUP.to_owned()],
                    ..UserInfo::default()
                }));
            }
            Mode::Delegated {
                authenticator,
                authorizer,
                ..
            } => (authenticator, authorizer),
        };
        // Only what routes as a health endpoint, so no path trick (say
        // `/readyz/../apis`) borrows the exemption.
        if matches!(route, Route::Health { .. }) && authz::is_always_allowed_path(path) {
            // Probes carry no credentials; no review call is spent on them.
            return Ok(Arc::new(UserInfo::anonymous()));
        }
        let user = match authenticator.authenticate(peer, headers).await {
            Ok(Some(user)) => Arc::new(user),
            Ok(None) => return Err(ApiError::unauthorized("Unauthorized")),
            Err(e) => {
                tracing::debug!(path, "authentication failed: {e}");
                return Err(ApiError::unauthorized("Unauthorized"));
            }
        };
        let user = match impersonation::requested(headers).map_err(ApiError::bad_request)? {
            None => user,
            Some(target) if !authorizer.is_masters_only() => {
                return Err(ApiError::new(
                    403,
                    "Forbidden",
                    format!(
                        "users {:?} is forbidden: impersonation is not served here; send the request through kube-apiserver, which applies it",
                        target.name
                    ),
                ));
            }
            Some(target) if user.groups.iter().any(|g| g == MASTERS_GROUP) => Arc::new(target),
            Some(target) => return Err(impersonation::forbidden(&user, &target)),
        };
        let attributes = authz::Attributes::of(&user, method, path, query, route);
        match authorizer.authorize(&attributes).await {
            Ok(()) => Ok(user),
            Err(e) => {
                tracing::debug!(user = %user.name, %method, path, code = e.code, "request refused");
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_stripped_before_routing() {
        let proxy = crate::pki::Ca::new("proxy").unwrap();
        let data = [
            ("requestheader-client-ca-file", proxy.cert_pem()),
            ("requestheader-username-headers", r#"["X-Remote-User"]"#),
            ("requestheader-group-headers", r#"["X-Remote-Group"]"#),
            (
                "requestheader-extra-headers-prefix",
                r#"["X-Remote-Extra-"]"#,
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let trust = DynamicAuthConfig::new(AuthConfig::from_config_map_data(&data).unwrap());
        let auth = Auth::new(
            trust.clone(),
            Authenticator::new(trust),
            Authorizer::masters_only(),
        );
        let mut headers = HeaderMap::new();
        for (k, v) in [
            ("authorization", "Bearer secret"),
            ("x-remote-user", "alice"),
            ("x-remote-group", "dev"),
            ("x-remote-extra-scopes", "a"),
            ("accept", "application/json"),
        ] {
            headers.insert(k, v.parse().unwrap());
        }
        auth.strip_credentials(&mut headers);
        assert_eq!(headers.len(), 1);
        assert!(headers.contains_key("accept"));
    }

    #[tokio::test]
    async fn health_is_open_and_everything_else_needs_credentials() {
        let auth = Auth::standalone(crate::pki::Ca::new("own").unwrap().cert_pem()).unwrap();
        let none = PeerCertificates::none();
        let check = |path: &'static str| {
            let query = Query::new();
            let route = crate::apimachinery::request_info::route(&Method::GET, path, &query);
            let auth = &auth;
            let none = &none;
            async move {
                auth.check(none, &Method::GET, path, &HeaderMap::new(), &query, &route)
                    .await
                    .map(|u| u.name.clone())
                    .map_err(|e| e.code)
            }
        };
        assert_eq!(check("/readyz").await, Ok(ANONYMOUS_USER.to_owned()));
        assert_eq!(check("/livez/ping").await, Ok(ANONYMOUS_USER.to_owned()));
        assert_eq!(check("/apis").await, Err(401));
        assert_eq!(check("/readyz/../apis").await, Err(401));
        assert_eq!(check("/healthz/a/b").await, Err(401));
        assert_eq!(check("/version").await, Err(401));
    }
}
