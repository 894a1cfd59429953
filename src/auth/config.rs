//! The trust material of authentication: which CA signs x509 users, which CA
//! signs the aggregator's front-proxy certificate, which CNs it may have and
//! which headers carry the user (contract §1.2).
//!
//! In cluster mode it comes from `kube-system/extension-apiserver-authentication`,
//! which kube-apiserver writes: PEM bundles for the CAs and **JSON arrays**
//! for every other value (`["X-Remote-User"]`). [`watch`] keeps a
//! [`DynamicAuthConfig`] in step with it, so a rotated CA is honoured without
//! a restart; a ConfigMap that fails to parse keeps the last good config.
//! In standalone mode the server's own CA signs its users
//! ([`AuthConfig::standalone`]).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use futures::StreamExt;
use http::HeaderName;
use k8s_openapi::api::core::v1::ConfigMap;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;

/// Where kube-apiserver publishes the trust material.
pub const CONFIG_MAP_NAMESPACE: &str = "kube-system";
/// The ConfigMap's name.
pub const CONFIG_MAP_NAME: &str = "extension-apiserver-authentication";

/// Errors reading the trust material.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A CA bundle holds no usable certificate.
    #[error("parse the CA bundle in {key}: {message}")]
    Ca {
        /// The ConfigMap key (or `ca` in standalone mode).
        key: String,
        /// Why.
        message: String,
    },
    /// A value is not a JSON array of strings.
    #[error("parse {key} as a JSON array of strings")]
    NotJsonArray {
        /// The ConfigMap key.
        key: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A header name is not valid HTTP.
    #[error("{key} names an invalid header {name:?}")]
    Header {
        /// The ConfigMap key.
        key: String,
        /// The bad name.
        name: String,
    },
    /// The ConfigMap could not be read.
    #[error("read {namespace}/{name}")]
    Read {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

/// A pool of trusted CAs able to verify client certificate chains
/// (clientAuth usage, validity, signatures) with rustls' webpki.
#[derive(Clone)]
pub struct CaPool {
    verifier: Arc<dyn ClientCertVerifier>,
    count: usize,
}

impl std::fmt::Debug for CaPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CaPool({} CAs)", self.count)
    }
}

impl CaPool {
    /// Parses a PEM bundle; `key` names it in errors.
    pub fn from_pem(key: &str, pem: &str) -> Result<CaPool, ConfigError> {
        let err = |message: String| ConfigError::Ca {
            key: key.to_owned(),
            message,
        };
        let mut roots = rustls::RootCertStore::empty();
        let mut count = 0;
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            let cert = cert.map_err(|e| err(e.to_string()))?;
            // kube-apiserver filters expired CAs out of the bundle; a CA
            // webpki cannot use is skipped the same way rather than failing
            // the whole bundle.
            if roots.add(cert).is_ok() {
                count += 1;
            }
        }
        if count == 0 {
            return Err(err("no usable certificate".to_owned()));
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(super::tls::provider()),
        )
        .build()
        .map_err(|e| err(e.to_string()))?;
        Ok(CaPool { verifier, count })
    }

    /// How many CAs the pool trusts.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the pool is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Verifies `leaf` (with the peer's `intermediates`) for client
    /// authentication now. The error names the webpki failure only, never
    /// certificate contents.
    pub fn verify(
        &self,
        leaf: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
    ) -> Result<(), String> {
        self.verifier
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// The front proxy's settings (`requestheader-*`).
#[derive(Debug, Clone)]
pub struct RequestHeaderConfig {
    /// `requestheader-client-ca-file`.
    pub ca: CaPool,
    /// `requestheader-allowed-names`; empty means any CN.
    pub allowed_names: Vec<String>,
    /// `requestheader-username-headers`.
    pub username_headers: Vec<HeaderName>,
    /// `requestheader-uid-headers`.
    pub uid_headers: Vec<HeaderName>,
    /// `requestheader-group-headers`.
    pub group_headers: Vec<HeaderName>,
    /// `requestheader-extra-headers-prefix`, lower-cased.
    pub extra_prefixes: Vec<String>,
}

impl RequestHeaderConfig {
    /// Whether `name` is one of the headers this config reads (so it must
    /// never reach handlers or logs).
    pub fn is_auth_header(&self, name: &HeaderName) -> bool {
        self.username_headers.contains(name)
            || self.uid_headers.contains(name)
            || self.group_headers.contains(name)
            || self
                .extra_prefixes
                .iter()
                .any(|p| name.as_str().starts_with(p.as_str()))
    }
}

/// Everything authentication trusts, at one moment.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// `client-ca-file`: x509 users (CN = user, O = groups).
    pub client_ca: Option<CaPool>,
    /// The front proxy, when the cluster has an aggregation layer.
    pub request_header: Option<RequestHeaderConfig>,
    /// Bumped on every reload; connections re-verify their chains when it changes.
    pub generation: u64,
}

impl AuthConfig {
    /// Standalone mode: users are client certificates of the server's own CA.
    pub fn standalone(ca_pem: &str) -> Result<AuthConfig, ConfigError> {
        Ok(AuthConfig {
            client_ca: Some(CaPool::from_pem("ca", ca_pem)?),
            request_header: None,
            generation: 0,
        })
    }

    /// Parses the ConfigMap's data.
    pub fn from_config_map_data(
        data: &BTreeMap<String, String>,
    ) -> Result<AuthConfig, ConfigError> {
        let client_ca = match data.get("client-ca-file").filter(|v| !v.trim().is_empty()) {
            Some(pem) => Some(CaPool::from_pem("client-ca-file", pem)?),
            None => None,
        };
        let strings = |key: &str| -> Result<Vec<String>, ConfigError> {
            match data.get(key).map(|v| v.trim()).filter(|v| !v.is_empty()) {
                None => Ok(Vec::new()),
                Some(text) => {
                    serde_json::from_str(text).map_err(|source| ConfigError::NotJsonArray {
                        key: key.to_owned(),
                        source,
                    })
                }
            }
        };
        let headers = |key: &str| -> Result<Vec<HeaderName>, ConfigError> {
            strings(key)?
                .into_iter()
                .filter(|n| !n.trim().is_empty())
                .map(|name| {
                    HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                        ConfigError::Header {
                            key: key.to_owned(),
                            name,
                        }
                    })
                })
                .collect()
        };
        let request_header = match data
            .get("requestheader-client-ca-file")
            .filter(|v| !v.trim().is_empty())
        {
            None => None,
            Some(pem) => {
                let username_headers = headers("requestheader-username-headers")?;
                // Upstream builds no front-proxy authenticator without
                // username headers; neither do we.
                if username_headers.is_empty() {
                    None
                } else {
                    Some(RequestHeaderConfig {
                        ca: CaPool::from_pem("requestheader-client-ca-file", pem)?,
                        allowed_names: strings("requestheader-allowed-names")?,
                        username_headers,
                        uid_headers: headers("requestheader-uid-headers")?,
                        group_headers: headers("requestheader-group-headers")?,
                        extra_prefixes: strings("requestheader-extra-headers-prefix")?
                            .into_iter()
                            .map(|p| p.trim().to_ascii_lowercase())
                            .filter(|p| !p.is_empty())
                            .collect(),
                    })
                }
            }
        };
        Ok(AuthConfig {
            client_ca,
            request_header,
            generation: 0,
        })
    }

    /// One line for logs: counts and names, never certificate contents.
    pub fn summary(&self) -> String {
        let rh = match &self.request_header {
            None => "no front proxy".to_owned(),
            Some(rh) => format!(
                "front-proxy CAs: {}, allowed names: {:?}",
                rh.ca.len(),
                rh.allowed_names
            ),
        };
        format!(
            "client CAs: {}, {rh}",
            self.client_ca.as_ref().map_or(0, CaPool::len)
        )
    }
}

/// The current [`AuthConfig`], swapped atomically on reload.
#[derive(Debug, Clone, Default)]
pub struct DynamicAuthConfig {
    inner: Arc<RwLock<Arc<AuthConfig>>>,
}

impl DynamicAuthConfig {
    /// Starts with `config`.
    pub fn new(config: AuthConfig) -> DynamicAuthConfig {
        let dynamic = DynamicAuthConfig::default();
        dynamic.set(config);
        dynamic
    }

    /// The config now.
    pub fn current(&self) -> Arc<AuthConfig> {
        self.inner.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replaces the config (with the next generation).
    pub fn set(&self, mut config: AuthConfig) {
        let mut slot = self.inner.write().unwrap_or_else(|p| p.into_inner());
        config.generation = slot.generation + 1;
        *slot = Arc::new(config);
    }
}

/// A ConfigMap to read the trust material from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigMapRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl Default for ConfigMapRef {
    fn default() -> Self {
        ConfigMapRef {
            namespace: CONFIG_MAP_NAMESPACE.to_owned(),
            name: CONFIG_MAP_NAME.to_owned(),
        }
    }
}

/// Reads the ConfigMap once.
pub async fn load(client: &kube::Client, source: &ConfigMapRef) -> Result<AuthConfig, ConfigError> {
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), &source.namespace);
    let cm = api
        .get(&source.name)
        .await
        .map_err(|source_err| ConfigError::Read {
            namespace: source.namespace.clone(),
            name: source.name.clone(),
            source: source_err,
        })?;
    AuthConfig::from_config_map_data(&cm.data.unwrap_or_default())
}

/// Watches the ConfigMap and applies every change to `dynamic` until the
/// returned task is aborted. Watch errors back off and retry; a change that
/// does not parse is logged and the previous config stays.
pub fn watch(
    client: kube::Client,
    source: ConfigMapRef,
    dynamic: DynamicAuthConfig,
) -> tokio::task::JoinHandle<()> {
    use kube::runtime::{WatchStreamExt, watcher};
    tokio::spawn(async move {
        let api: kube::Api<ConfigMap> = kube::Api::namespaced(client, &source.namespace);
        // A name field selector, so the `resourceNames`-scoped reader Role
        // (extension-apiserver-authentication-reader) allows the list and watch.
        let config = watcher::Config::default().fields(&format!("metadata.name={}", source.name));
        let mut stream = watcher(api, config).default_backoff().boxed();
        while let Some(event) = stream.next().await {
            match event {
                Ok(watcher::Event::Apply(cm) | watcher::Event::InitApply(cm)) => {
                    match AuthConfig::from_config_map_data(&cm.data.unwrap_or_default()) {
                        Ok(config) => {
                            let summary = config.summary();
                            dynamic.set(config);
                            tracing::info!(
                                "authentication config reloaded from {}/{} ({summary})",
                                source.namespace,
                                source.name
                            );
                        }
                        Err(e) => tracing::warn!(
                            "keeping the previous authentication config: {}/{}: {e}",
                            source.namespace,
                            source.name
                        ),
                    }
                }
                Ok(watcher::Event::Delete(_)) => tracing::warn!(
                    "{}/{} was deleted; keeping the last authentication config",
                    source.namespace,
                    source.name
                ),
                Ok(watcher::Event::Init | watcher::Event::InitDone) => {}
                Err(e) => tracing::warn!(
                    "watching {}/{}: {e}; retrying",
                    source.namespace,
                    source.name
                ),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pki::Ca;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn parses_the_config_map_json_arrays() {
        let client = Ca::new("client").unwrap();
        let proxy = Ca::new("proxy").unwrap();
        let config = AuthConfig::from_config_map_data(&data(&[
            ("client-ca-file", client.cert_pem()),
            ("requestheader-client-ca-file", proxy.cert_pem()),
            ("requestheader-allowed-names", r#"["front-proxy-client"]"#),
            ("requestheader-username-headers", r#"["X-Remote-User"]"#),
            ("requestheader-uid-headers", r#"["X-Remote-Uid"]"#),
            ("requestheader-group-headers", r#"["X-Remote-Group"]"#),
            (
                "requestheader-extra-headers-prefix",
                r#"["X-Remote-Extra-"]"#,
            ),
        ]))
        .unwrap();
        assert_eq!(config.client_ca.as_ref().map(CaPool::len), Some(1));
        let rh = config.request_header.unwrap();
        assert_eq!(rh.allowed_names, ["front-proxy-client"]);
        assert_eq!(rh.username_headers, ["x-remote-user"]);
        assert_eq!(rh.uid_headers, ["x-remote-uid"]);
        assert_eq!(rh.group_headers, ["x-remote-group"]);
        assert_eq!(rh.extra_prefixes, ["x-remote-extra-"]);
        assert!(rh.is_auth_header(&HeaderName::from_static("x-remote-extra-scopes")));
        assert!(!rh.is_auth_header(&HeaderName::from_static("accept")));
    }

    #[test]
    fn empty_lists_and_missing_keys() {
        let proxy = Ca::new("proxy").unwrap();
        let config = AuthConfig::from_config_map_data(&data(&[
            ("requestheader-client-ca-file", proxy.cert_pem()),
            ("requestheader-allowed-names", "[]"),
            ("requestheader-username-headers", r#"["X-Remote-User"]"#),
        ]))
        .unwrap();
        assert!(config.client_ca.is_none());
        let rh = config.request_header.unwrap();
        assert!(rh.allowed_names.is_empty() && rh.group_headers.is_empty());

        // No username headers: no front proxy at all.
        let config = AuthConfig::from_config_map_data(&data(&[(
            "requestheader-client-ca-file",
            proxy.cert_pem(),
        )]))
        .unwrap();
        assert!(config.request_header.is_none());
    }

    #[test]
    fn bad_values_are_errors() {
        let proxy = Ca::new("proxy").unwrap();
        let err = AuthConfig::from_config_map_data(&data(&[
            ("requestheader-client-ca-file", proxy.cert_pem()),
            ("requestheader-username-headers", "X-Remote-User"),
        ]))
        .unwrap_err();
        assert!(matches!(err, ConfigError::NotJsonArray { .. }), "{err}");
        let err =
            AuthConfig::from_config_map_data(&data(&[("client-ca-file", "garbage")])).unwrap_err();
        assert!(matches!(err, ConfigError::Ca { .. }), "{err}");
        let err = AuthConfig::from_config_map_data(&data(&[
            ("requestheader-client-ca-file", proxy.cert_pem()),
            ("requestheader-username-headers", r#"["bad header"]"#),
        ]))
        .unwrap_err();
        assert!(matches!(err, ConfigError::Header { .. }), "{err}");
    }

    #[test]
    fn generations_increase() {
        let dynamic = DynamicAuthConfig::new(AuthConfig::default());
        let first = dynamic.current().generation;
        dynamic.set(AuthConfig::default());
        assert_eq!(dynamic.current().generation, first + 1);
    }
}
