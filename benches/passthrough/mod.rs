//! A pass-through HTTPS proxy to kube-apiserver, the floor of what any
//! server that stores its objects upstream adds to a write: it takes a
//! request over TLS and HTTP/1.1 (HTTP/2 too behind the aggregator) on a
//! runtime of its own with as many workers as the server under test
//! ([`runtime_workers`]: 2, as `serve` has), sends it on
//! with the same upstream client (`kube_client::clients`: kube-rs's stack,
//! `TCP_NODELAY`, no queue) and answers with upstream's body. No routing,
//! authentication, validation, conversion or cache: only the second hop,
//! with the bodies of the benchmark's own writes.
//!
//! An upstream error is answered 502 with its text (the benchmark's writes
//! succeed; a failure shows as the client's panic, with that text).
//!
//! Behind kube-apiserver's aggregator ([`Passthrough::behind_aggregator`])
//! it is the floor of the aggregated rows: registered as an APIService for
//! a group of its own, it serves `/apis/<that group>/v2/…` as
//! `/apis/helm.toolkit.fluxcd.io/v2/…` and nothing else (404), so the
//! aggregator's discovery of `/apis` falls back to the group/version, and
//! kube-apiserver's proxying is measured with no work behind it.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

use kubectl_cozy::kube_client::{self, Unbuffered};
use kubectl_cozy::pki::{Ca, LeafSpec};

use crate::support::plane::Plane;

/// The proxy, running until dropped.
pub struct Passthrough {
    url: String,
    port: u16,
    ca: Ca,
    runtime: Option<tokio::runtime::Runtime>,
}

/// The group whose paths the proxy serves as HelmReleases' when behind the
/// aggregator.
#[derive(Clone)]
struct Rewrite {
    /// `/apis/<group>/v2`
    from: Arc<str>,
}

/// Where upstream's HelmReleases are; what [`Rewrite::from`] becomes.
const HELM_RELEASES: &str = "/apis/helm.toolkit.fluxcd.io/v2";

impl Passthrough {
    /// Starts the proxy in front of `plane`'s kube-apiserver (its admin
    /// credentials are the proxy's upstream identity), for clients that
    /// reach it straight at its address.
    #[allow(
        dead_code,
        reason = "the aggregated benchmark starts it behind the aggregator"
    )]
    pub fn start(plane: &Plane) -> Passthrough {
        Passthrough::start_with(plane, &[], None)
    }

    /// Starts the proxy for kube-apiserver's aggregator: its certificate
    /// also names `<service>.<namespace>.svc` (the name the aggregator
    /// checks), and it serves `/apis/<group>/v2/…` as HelmReleases'.
    #[allow(dead_code, reason = "the writes benchmark reaches it straight")]
    pub fn behind_aggregator(
        plane: &Plane,
        service: &str,
        namespace: &str,
        group: &str,
    ) -> Passthrough {
        Passthrough::start_with(
            plane,
            &[format!("{service}.{namespace}.svc")],
            Some(Rewrite {
                from: format!("/apis/{group}/v2").into(),
            }),
        )
    }

    fn start_with(plane: &Plane, dns_names: &[String], rewrite: Option<Rewrite>) -> Passthrough {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(runtime_workers())
            .thread_name("bench-passthrough")
            .enable_all()
            .build()
            .expect("proxy runtime");
        let ca = Ca::new("kubectl-cozy-bench-passthrough-ca").expect("CA");
        let mut names: Vec<&str> = dns_names.iter().map(String::as_str).collect();
        names.push("localhost");
        let serving = ca
            .issue(&LeafSpec::server(
                "passthrough",
                &names,
                &["127.0.0.1".parse().expect("ip")],
            ))
            .expect("serving certificate");
        let addr = runtime.block_on(async {
            let config = plane.config().await;
            let (_, upstream) = kube_client::clients(config).expect("upstream client");
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("address");
            // HTTP/2 as well for the aggregator, which speaks it to the
            // server under test too.
            let alpn: &[&[u8]] = if rewrite.is_some() {
                &[b"h2", b"http/1.1"]
            } else {
                &[b"http/1.1"]
            };
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls_config(
                &serving.cert_pem,
                &serving.key_pem,
                alpn,
            )));
            tokio::spawn(accept_loop(listener, acceptor, upstream, rewrite));
            addr
        });
        Passthrough {
            url: format!("https://{addr}"),
            port: addr.port(),
            ca,
            runtime: Some(runtime),
        }
    }

    /// Where clients reach it.
    #[allow(dead_code, reason = "the aggregator reaches it by port")]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The port it listens on, on 127.0.0.1.
    #[allow(dead_code, reason = "clients straight at it use the URL")]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The CA of its serving certificate.
    pub fn ca(&self) -> &Ca {
        &self.ca
    }
}

impl Drop for Passthrough {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// TLS 1.3 and 1.2 with ring, the `alpn` protocols, no client
/// certificate: the server's own settings but for client certificates,
/// which it only requests and checks per request.
fn tls_config(cert_pem: &str, key_pem: &str, alpn: &[&[u8]]) -> rustls::ServerConfig {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .expect("serving certificate");
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("serving key");
    let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("TLS config");
    tls.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tls
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    upstream: Unbuffered,
    rewrite: Option<Rewrite>,
) {
    while let Ok((tcp, _)) = listener.accept().await {
        tcp.set_nodelay(true).expect("TCP_NODELAY");
        let acceptor = acceptor.clone();
        let upstream = upstream.clone();
        let rewrite = rewrite.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |req| {
                let upstream = upstream.clone();
                let rewrite = rewrite.clone();
                async move {
                    Ok::<_, std::convert::Infallible>(
                        forward(&upstream, rewrite.as_ref(), req).await,
                    )
                }
            });
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            let io = TokioIo::new(tls);
            if h2 {
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(io, service)
                    .await;
            } else {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            }
        });
    }
}

/// Sends `req` on upstream (method, path and query, content type, body)
/// and answers with upstream's body. Records its time less the upstream
/// round trip as `passthrough less send` (with `BENCH_SPANS=1`), the floor
/// of the server's `request … less send`.
///
/// With `rewrite`, a path of its group is sent as the HelmReleases' and
/// any other is answered 404.
async fn forward(
    upstream: &Unbuffered,
    rewrite: Option<&Rewrite>,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let path_and_query = match rewrite {
        None => path_and_query.to_owned(),
        Some(Rewrite { from }) => match path_and_query.strip_prefix(&**from) {
            Some(rest) if rest.is_empty() || rest.starts_with(['/', '?']) => {
                format!("{HELM_RELEASES}{rest}")
            }
            _ => return answer(StatusCode::NOT_FOUND, "not proxied".into()),
        },
    };
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return answer(
                StatusCode::BAD_REQUEST,
                format!("read the body: {e}").into(),
            );
        }
    };
    let mut out = Request::builder().method(parts.method).uri(path_and_query);
    for name in [header::CONTENT_TYPE, header::ACCEPT] {
        if let Some(value) = parts.headers.get(&name) {
            out = out.header(name, value);
        }
    }
    let out = out.body(body.to_vec()).expect("request");
    let sending = Instant::now();
    let sent = upstream.request_bytes(out).await;
    let send_ms = sending.elapsed().as_secs_f64() * 1e3;
    let response = match sent {
        Ok(answer_body) => answer(StatusCode::OK, answer_body),
        Err(e) => answer(StatusCode::BAD_GATEWAY, e.to_string().into()),
    };
    if *crate::stages::ON {
        let ms = started.elapsed().as_secs_f64() * 1e3;
        crate::stages::record("passthrough less send", ms - send_ms);
    }
    response
}

fn answer(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(body))
        .expect("response")
}

/// Worker threads of the server's and this proxy's runtimes: 2, as `serve`
/// runs, or `BENCH_SERVER_WORKERS`.
pub fn runtime_workers() -> usize {
    std::env::var("BENCH_SERVER_WORKERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(2)
}
