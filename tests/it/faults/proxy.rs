//! An HTTPS proxy in front of kube-apiserver that injects faults into the
//! requests the server under test makes: APF-style throttling (429
//! `TooManyRequests` with `Retry-After`, as kube-apiserver's priority and
//! fairness answers) and delays. It terminates TLS with a certificate of its
//! own CA and forwards with the plane's admin client; watches pass through
//! untouched (the server's cache keeps its upstream watch).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use kubectl_cozy::pki::{Ca, LeafSpec};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The `Retry-After` the proxy's 429s carry.
pub const RETRY_AFTER: u64 = 3;
/// The message of the proxy's 429s (what kube-apiserver's APF says).
pub const THROTTLE_MESSAGE: &str = "too many requests, please try again later";

type ProxyBody = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// What the proxy does to the next requests.
#[derive(Debug, Default)]
pub struct Rules {
    /// Writes (not GET) to answer with 429.
    pub throttle_writes: u32,
    /// Non-watch GETs to answer with 429.
    pub throttle_reads: u32,
    /// Delay before forwarding a write.
    pub delay_writes: Duration,
    /// Delay before forwarding a non-watch GET.
    pub delay_reads: Duration,
}

/// A running proxy.
pub struct FaultProxy {
    /// `https://127.0.0.1:<port>`.
    pub url: String,
    /// What it does; change it at any time.
    pub rules: Arc<Mutex<Rules>>,
    ca_der: Vec<u8>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FaultProxy {
    /// Starts a proxy that forwards to the cluster with `upstream`.
    pub async fn start(upstream: kube::Client) -> FaultProxy {
        let ca = Ca::new("fault-proxy-ca").expect("CA");
        let serving = ca
            .issue(&LeafSpec::server(
                "fault-proxy",
                &["localhost"],
                &["127.0.0.1".parse().expect("ip")],
            ))
            .expect("serving certificate");
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(serving.cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .expect("certificate PEM");
        let key = PrivateKeyDer::from_pem_slice(serving.key_pem.as_bytes()).expect("key PEM");
        let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("TLS config");
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr: SocketAddr = listener.local_addr().expect("addr");
        let rules = Arc::new(Mutex::new(Rules::default()));
        let shared = rules.clone();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let upstream = upstream.clone();
                let rules = shared.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |req| {
                        let upstream = upstream.clone();
                        let rules = rules.clone();
                        async move { Ok::<_, Infallible>(forward(req, &upstream, &rules).await) }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        let ca_der = CertificateDer::from_pem_slice(ca.cert_pem().as_bytes())
            .expect("CA PEM")
            .to_vec();
        FaultProxy {
            url: format!("https://{addr}"),
            rules,
            ca_der,
            task,
        }
    }

    /// The config of a client of the cluster through the proxy (which adds
    /// the credentials).
    pub fn config(&self) -> kube::Config {
        let mut config = kube::Config::new(self.url.parse().expect("proxy URL"));
        config.root_cert = Some(vec![self.ca_der.clone()]);
        config
    }

    /// Changes the rules.
    pub fn set(&self, change: impl FnOnce(&mut Rules)) {
        change(&mut self.rules.lock().unwrap());
    }
}

/// What to do with one request.
enum Action {
    Throttle,
    Forward(Duration),
}

fn decide(req: &http::Request<Incoming>, rules: &Mutex<Rules>) -> Action {
    let is_watch = req
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    let mut rules = rules.lock().unwrap();
    if is_watch {
        return Action::Forward(Duration::ZERO);
    }
    if req.method() == http::Method::GET {
        if rules.throttle_reads > 0 {
            rules.throttle_reads -= 1;
            return Action::Throttle;
        }
        Action::Forward(rules.delay_reads)
    } else {
        if rules.throttle_writes > 0 {
            rules.throttle_writes -= 1;
            return Action::Throttle;
        }
        Action::Forward(rules.delay_writes)
    }
}

fn full(bytes: impl Into<Bytes>) -> ProxyBody {
    Full::new(bytes.into())
        .map_err(|e| match e {})
        .boxed_unsync()
}

async fn forward(
    req: http::Request<Incoming>,
    upstream: &kube::Client,
    rules: &Mutex<Rules>,
) -> http::Response<ProxyBody> {
    match decide(&req, rules) {
        Action::Throttle => {
            // What kube-apiserver's APF sends when a request is rejected.
            let status = serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": THROTTLE_MESSAGE, "reason": "TooManyRequests",
                "details": {"retryAfterSeconds": RETRY_AFTER}, "code": 429,
            });
            return http::Response::builder()
                .status(429)
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::RETRY_AFTER, RETRY_AFTER.to_string())
                .body(full(status.to_string()))
                .expect("response");
        }
        Action::Forward(delay) => tokio::time::sleep(delay).await,
    }
    let (mut parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => return bad_gateway(&e),
    };
    parts.headers.remove(http::header::HOST);
    parts.headers.remove(http::header::AUTHORIZATION);
    let request = http::Request::from_parts(parts, kube::client::Body::from(body.to_vec()));
    match upstream.send(request).await {
        Ok(response) => response.map(|b| b.map_err(|e| Box::new(e) as _).boxed_unsync()),
        Err(e) => bad_gateway(&e),
    }
}

fn bad_gateway(e: &dyn std::fmt::Display) -> http::Response<ProxyBody> {
    http::Response::builder()
        .status(502)
        .body(full(format!("fault proxy: {e}")))
        .expect("response")
}
