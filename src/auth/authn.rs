//! Who is calling: kube-apiserver's delegating authenticator chain
//! (`AS/pkg/authentication/authenticatorfactory/delegating.go`, contract §1.3–1.4),
//! in its order:
//!
//! 1. **Front proxy.** Only on a connection that presented a certificate: the
//!    chain must verify against the requestheader CA with the clientAuth
//!    usage and the CN must be an allowed name (else an error). Then the user
//!    is the first non-empty username header, the UID the first uid header,
//!    the groups every value of every line of the group headers (never split
//!    on commas), and the extra attributes every header under an extra prefix
//!    (key = rest of the name, lower-cased, then percent-unescaped). No
//!    username header: this method does not apply.
//! 2. **x509.** A chain verified against the client CA: CN is the user, O
//!    the groups. A chain that does not verify is an error.
//! 3. **Bearer token** (`Authorization: Bearer …`) through a TokenReview;
//!    answers (authenticated or not) are cached for 10 s by the token's
//!    SHA-256, never by the token itself. A rejected token is an error.
//!
//! The first method that succeeds wins; if none does and any failed, the
//! caller gets 401 — there is no anonymous fallback after an error. With no
//! credentials at all the answer is "nobody" ([`Authenticator::authenticate`]
//! returns `Ok(None)`), which the server turns into 401 except on health
//! paths. Every authenticated user gets `system:authenticated`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::config::{DynamicAuthConfig, RequestHeaderConfig};
use super::review::{ReviewKind, Reviewer};
use super::tls::{PeerCertificates, Trust};
use super::ttl_cache::TtlCache;
use crate::apimachinery::user::UserInfo;

/// How long TokenReview answers are cached (upstream's default).
pub(crate) const TOKEN_CACHE_TTL: Duration = Duration::from_secs(10);
/// At most this many cached token answers.
const TOKEN_CACHE_MAX: usize = 4096;

/// Why a request could not be authenticated; never contains credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct AuthnError(pub Vec<String>);

/// The authenticator chain.
pub struct Authenticator {
    config: DynamicAuthConfig,
    tokens: Option<TokenAuthenticator>,
}

impl Authenticator {
    /// Certificates only (standalone mode, or no TokenReview access).
    pub fn new(config: DynamicAuthConfig) -> Authenticator {
        Authenticator {
            config,
            tokens: None,
        }
    }

    /// Also accepts bearer tokens, reviewed by `reviewer`.
    pub fn with_token_review(mut self, reviewer: Arc<dyn Reviewer>) -> Authenticator {
        self.tokens = Some(TokenAuthenticator {
            reviewer,
            audiences: Vec::new(),
            cache: TtlCache::new(TOKEN_CACHE_TTL, TOKEN_CACHE_MAX),
        });
        self
    }

    /// Whether `peer` presented a certificate that a trusted CA (the
    /// front proxy's or the client CA) signed: the aggregator or an x509
    /// user, known at the handshake. The verdicts are kept on `peer`, so
    /// its requests do not verify the chain again.
    pub fn trusts_certificate(&self, peer: &PeerCertificates) -> bool {
        if !peer.present() {
            return false;
        }
        let config = self.config.current();
        let front_proxy = config.request_header.as_ref().is_some_and(|rh| {
            peer.verdict(Trust::RequestHeader, config.generation, |leaf, rest| {
                rh.ca.verify(leaf, rest)
            })
            .is_ok()
        });
        front_proxy
            || config.client_ca.as_ref().is_some_and(|ca| {
                peer.verdict(Trust::ClientCa, config.generation, |leaf, rest| {
                    ca.verify(leaf, rest)
                })
                .is_ok()
            })
    }

    /// Runs the chain: `Ok(Some(user))`, `Ok(None)` when no credentials were
    /// presented, or the error of every method that failed.
    pub async fn authenticate(
        &self,
        peer: &PeerCertificates,
        headers: &HeaderMap,
    ) -> Result<Option<UserInfo>, AuthnError> {
        let config = self.config.current();
        let mut errors = Vec::new();
        if peer.present() {
            if let Some(rh) = &config.request_header {
                match front_proxy(rh, peer, headers, config.generation) {
                    Ok(Some(user)) => return Ok(Some(user.with_authenticated_group())),
                    Ok(None) => {}
                    Err(e) => errors.push(e),
                }
            }
            if let Some(ca) = &config.client_ca {
                let verdict = peer.verdict(Trust::ClientCa, config.generation, |leaf, rest| {
                    ca.verify(leaf, rest)
                });
                match (verdict, peer.subject()) {
                    (Ok(()), Some(subject)) if !subject.common_name.is_empty() => {
                        return Ok(Some(
                            UserInfo {
                                name: subject.common_name.clone(),
                                groups: subject.organizations.clone(),
                                ..UserInfo::default()
                            }
                            .with_authenticated_group(),
                        ));
                    }
                    (Ok(()), _) => {}
                    (Err(e), _) => errors.push(format!("x509: verify certificate: {e}")),
                }
            }
        }
        if let Some(token) = bearer_token(headers) {
            match &self.tokens {
                None => errors.push("bearer tokens are not accepted here".to_owned()),
                Some(tokens) => match tokens.authenticate(token).await {
                    Ok(Some(user)) => return Ok(Some(user.with_authenticated_group())),
                    Ok(None) => errors.push("invalid bearer token".to_owned()),
                    Err(e) => errors.push(e),
                },
            }
        }
        if errors.is_empty() {
            Ok(None)
        } else {
            Err(AuthnError(errors))
        }
    }
}

/// The front-proxy method; `Ok(None)` when no username header is present.
fn front_proxy(
    rh: &RequestHeaderConfig,
    peer: &PeerCertificates,
    headers: &HeaderMap,
    generation: u64,
) -> Result<Option<UserInfo>, String> {
    peer.verdict(Trust::RequestHeader, generation, |leaf, rest| {
        rh.ca.verify(leaf, rest)
    })
    .map_err(|e| format!("front proxy: verify certificate: {e}"))?;
    let cn = peer
        .subject()
        .map(|s| s.common_name.as_str())
        .ok_or_else(|| "front proxy: unparsable certificate subject".to_owned())?;
    if !rh.allowed_names.is_empty() && !rh.allowed_names.iter().any(|n| n == cn) {
        return Err(format!(
            "front proxy: certificate CN {cn:?} is not in the allowed names"
        ));
    }
    let first = |names: &[http::HeaderName]| {
        names
            .iter()
            .filter_map(|n| headers.get(n))
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .find(|v| !v.is_empty())
    };
    let Some(name) = first(&rh.username_headers) else {
        return Ok(None);
    };
    let uid = first(&rh.uid_headers).unwrap_or_default();
    let groups = rh
        .group_headers
        .iter()
        .flat_map(|n| headers.get_all(n))
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .filter(|v| !v.is_empty())
        .collect();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for prefix in &rh.extra_prefixes {
        for header in headers.keys() {
            // HeaderName is lower-case already.
            let Some(rest) = header.as_str().strip_prefix(prefix.as_str()) else {
                continue;
            };
            let key = path_unescape(rest).unwrap_or_else(|| rest.to_owned());
            extra.entry(key).or_default().extend(
                headers
                    .get_all(header)
                    .iter()
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            );
        }
    }
    Ok(Some(UserInfo {
        name,
        uid,
        groups,
        extra,
    }))
}

/// Go's `url.PathUnescape`: `%XX` sequences decoded; a malformed escape or
/// invalid UTF-8 gives `None` (upstream then keeps the key as sent).
fn path_unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The token of `Authorization: Bearer <token>`, as upstream's bearer
/// authenticator reads it.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .trim();
    let mut parts = value.splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// TokenReview answers by the token's SHA-256: who (None: not
/// authenticated).
type TokenCache = TtlCache<[u8; 32], Option<UserInfo>>;

struct TokenAuthenticator {
    reviewer: Arc<dyn Reviewer>,
    audiences: Vec<String>,
    cache: TokenCache,
}

impl TokenAuthenticator {
    async fn authenticate(&self, token: &str) -> Result<Option<UserInfo>, String> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(answer) = self.cache.get(&key) {
            return Ok(answer);
        }
        let mut spec = json!({ "token": token });
        if !self.audiences.is_empty() {
            spec["audiences"] = json!(self.audiences);
        }
        let review = self
            .reviewer
            .create(ReviewKind::TokenReview, spec)
            .await
            .map_err(|e| format!("token review: {e}"))?;
        let status = &review["status"];
        let answer = if status["authenticated"] == Value::Bool(true) {
            Some(user_of(&status["user"]))
        } else {
            if let Some(error) = status["error"].as_str().filter(|e| !e.is_empty()) {
                tracing::debug!("token review: not authenticated: {error}");
            }
            None
        };
        self.cache.insert(key, answer.clone());
        Ok(answer)
    }
}

/// `status.user` of a TokenReview.
fn user_of(user: &Value) -> UserInfo {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    UserInfo {
        name: user["username"].as_str().unwrap_or_default().to_owned(),
        uid: user["uid"].as_str().unwrap_or_default().to_owned(),
        groups: strings(&user["groups"]),
        extra: user["extra"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthConfig;
    use crate::auth::config::CaPool;
    use crate::auth::review::ReviewError;
    use crate::pki::{Ca, CertPair, LeafSpec};
    use futures::future::BoxFuture;
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Fixture {
        client_ca: Ca,
        proxy_ca: Ca,
        config: DynamicAuthConfig,
    }

    fn fixture(allowed: &[&str]) -> Fixture {
        let client_ca = Ca::new("client").unwrap();
        let proxy_ca = Ca::new("proxy").unwrap();
        let h = |n: &str| http::HeaderName::from_bytes(n.as_bytes()).unwrap();
        let config = AuthConfig {
            client_ca: Some(CaPool::from_pem("client", client_ca.cert_pem()).unwrap()),
            request_header: Some(RequestHeaderConfig {
                ca: CaPool::from_pem("proxy", proxy_ca.cert_pem()).unwrap(),
                allowed_names: allowed.iter().map(|s| (*s).to_owned()).collect(),
                username_headers: vec![h("X-Remote-User")],
                uid_headers: vec![h("X-Remote-Uid")],
                group_headers: vec![h("X-Remote-Group")],
                extra_prefixes: vec!["x-remote-extra-".into()],
            }),
            generation: 0,
        };
        Fixture {
            client_ca,
            proxy_ca,
            config: DynamicAuthConfig::new(config),
        }
    }

    fn peer(pair: &CertPair) -> PeerCertificates {
        let der = CertificateDer::from_pem_slice(pair.cert_pem.as_bytes()).unwrap();
        PeerCertificates::from_chain(Some(&[der]))
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[tokio::test]
    async fn front_proxy_reads_every_header() {
        let f = fixture(&["front-proxy-client"]);
        let a = Authenticator::new(f.config.clone());
        let proxy = f
            .proxy_ca
            .issue(&LeafSpec::client("front-proxy-client", &[]))
            .unwrap();
        let h = headers(&[
            ("X-Remote-User", "alice"),
            ("X-Remote-Uid", "u-1"),
            ("X-Remote-Group", "dev,ops"),
            ("X-Remote-Group", "qa"),
            ("X-Remote-Group", ""),
            ("X-Remote-Extra-Scopes", "a"),
            ("X-Remote-Extra-Scopes", "b"),
            ("X-Remote-Extra-Acme.com%2Fproject", "p1"),
            ("X-Remote-Extra-Bad%zz", "x"),
        ]);
        let user = a.authenticate(&peer(&proxy), &h).await.unwrap().unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(user.uid, "u-1");
        assert_eq!(user.groups, ["dev,ops", "qa", "system:authenticated"]);
        assert_eq!(user.extra["scopes"], ["a", "b"]);
        assert_eq!(user.extra["acme.com/project"], ["p1"]);
        assert_eq!(user.extra["bad%zz"], ["x"]);
    }

    #[tokio::test]
    async fn spoofing_is_refused() {
        let f = fixture(&["front-proxy-client"]);
        let a = Authenticator::new(f.config.clone());
        let h = headers(&[
            ("X-Remote-User", "system:admin"),
            ("X-Remote-Group", "system:masters"),
        ]);

        // No certificate: the headers are ignored, nobody is authenticated.
        assert_eq!(
            a.authenticate(&PeerCertificates::none(), &h).await,
            Ok(None)
        );

        // Another CA: 401.
        let other = Ca::new("other").unwrap();
        let cert = other
            .issue(&LeafSpec::client("front-proxy-client", &[]))
            .unwrap();
        assert!(a.authenticate(&peer(&cert), &h).await.is_err());

        // The right CA but a CN that is not allowed: 401.
        let cert = f.proxy_ca.issue(&LeafSpec::client("evil", &[])).unwrap();
        let err = a.authenticate(&peer(&cert), &h).await.unwrap_err();
        assert!(err.to_string().contains("allowed names"), "{err}");

        // A client-CA user never gets the front proxy's powers.
        let cert = f
            .client_ca
            .issue(&LeafSpec::client("bob", &["dev"]))
            .unwrap();
        let user = a.authenticate(&peer(&cert), &h).await.unwrap().unwrap();
        assert_eq!(user.name, "bob");
        assert_eq!(user.groups, ["dev", "system:authenticated"]);

        // A server-only certificate lacks the clientAuth usage.
        let cert = f
            .proxy_ca
            .issue(&LeafSpec::server("front-proxy-client", &["x"], &[]))
            .unwrap();
        assert!(a.authenticate(&peer(&cert), &h).await.is_err());
    }

    #[tokio::test]
    async fn any_cn_when_no_names_are_listed() {
        let f = fixture(&[]);
        let a = Authenticator::new(f.config.clone());
        let cert = f
            .proxy_ca
            .issue(&LeafSpec::client("anything", &[]))
            .unwrap();
        let user = a
            .authenticate(&peer(&cert), &headers(&[("X-Remote-User", "carol")]))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(user.name, "carol");
    }

    #[tokio::test]
    async fn a_rotated_ca_applies_to_open_connections() {
        let f = fixture(&["front-proxy-client"]);
        let a = Authenticator::new(f.config.clone());
        let new_ca = Ca::new("proxy-2").unwrap();
        let cert = new_ca
            .issue(&LeafSpec::client("front-proxy-client", &[]))
            .unwrap();
        let p = peer(&cert);
        let h = headers(&[("X-Remote-User", "alice")]);
        assert!(a.authenticate(&p, &h).await.is_err());
        let mut config = (*f.config.current()).clone();
        if let Some(rh) = config.request_header.as_mut() {
            rh.ca = CaPool::from_pem("proxy", new_ca.cert_pem()).unwrap();
        }
        f.config.set(config);
        assert!(a.authenticate(&p, &h).await.unwrap().is_some());
    }

    struct FakeReviewer {
        calls: AtomicUsize,
    }

    impl Reviewer for FakeReviewer {
        fn create(
            &self,
            kind: ReviewKind,
            spec: Value,
        ) -> BoxFuture<'static, Result<Value, ReviewError>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            assert_eq!(kind, ReviewKind::TokenReview);
            let ok = spec["token"] == "good";
            Box::pin(async move {
                Ok(if ok {
                    json!({"status": {"authenticated": true, "user": {
                        "username": "system:serviceaccount:ns:sa", "uid": "1",
                        "groups": ["system:serviceaccounts"], "extra": {"k": ["v"]}}}})
                } else {
                    json!({"status": {"authenticated": false, "error": "bad"}})
                })
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn token_reviews_are_cached_for_ten_seconds() {
        let f = fixture(&[]);
        let reviewer = Arc::new(FakeReviewer {
            calls: AtomicUsize::new(0),
        });
        let a = Authenticator::new(f.config.clone()).with_token_review(reviewer.clone());
        let none = PeerCertificates::none();
        let good = headers(&[("Authorization", "Bearer good")]);
        for _ in 0..3 {
            let user = a.authenticate(&none, &good).await.unwrap().unwrap();
            assert_eq!(user.name, "system:serviceaccount:ns:sa");
            assert_eq!(
                user.groups,
                ["system:serviceaccounts", "system:authenticated"]
            );
            assert_eq!(user.extra["k"], ["v"]);
        }
        assert_eq!(reviewer.calls.load(Ordering::SeqCst), 1);
        let bad = headers(&[("Authorization", "Bearer nope")]);
        assert!(a.authenticate(&none, &bad).await.is_err());
        assert!(a.authenticate(&none, &bad).await.is_err());
        assert_eq!(
            reviewer.calls.load(Ordering::SeqCst),
            2,
            "denials are cached too"
        );
        tokio::time::advance(TOKEN_CACHE_TTL + Duration::from_millis(1)).await;
        a.authenticate(&none, &good).await.unwrap();
        assert_eq!(reviewer.calls.load(Ordering::SeqCst), 3);
        // Other schemes are not bearer tokens.
        let basic = headers(&[("Authorization", "Basic Zm9vOmJhcg==")]);
        assert_eq!(a.authenticate(&none, &basic).await, Ok(None));
    }

    #[test]
    fn bearer_parsing() {
        let t = |v: &str| {
            let h = headers(&[("Authorization", v)]);
            bearer_token(&h).map(str::to_owned)
        };
        assert_eq!(t("Bearer abc").as_deref(), Some("abc"));
        assert_eq!(t("bearer abc extra").as_deref(), Some("abc"));
        assert_eq!(t("Bearer").as_deref(), None);
        assert_eq!(t("Basic abc").as_deref(), None);
    }
}
