//! A pass-through HTTPS proxy to kube-apiserver, the floor of what any
//! server that stores its objects upstream adds to a write: it takes a
//! request over TLS and HTTP/1.1 on a 2-worker runtime of its own, as the
//! server under test does, sends it on with the same upstream client
//! (`kube_client::clients`: kube-rs's stack, `TCP_NODELAY`, no queue) and
//! answers with upstream's body. No routing, authentication, validation,
//! conversion or cache: only the second hop, with the bodies of the
//! benchmark's own writes.
//!
//! An upstream error is answered 502 with its text (the benchmark's writes
//! succeed; a failure shows as the client's panic, with that text).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

use kubectl_cozy::kube_client::{self, Unbuffered};
use kubectl_cozy::pki::{Ca, LeafSpec};

/// The proxy, running until dropped.
pub struct Passthrough {
    url: String,
    ca: Ca,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Passthrough {
    /// Starts the proxy in front of the cluster of `kubeconfig` (its
    /// credentials are the proxy's upstream identity).
    pub fn start(kubeconfig: &Path) -> Passthrough {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bench-passthrough")
            .enable_all()
            .build()
            .expect("proxy runtime");
        let ca = Ca::new("kubectl-cozy-bench-passthrough-ca").expect("CA");
        let serving = ca
            .issue(&LeafSpec::server(
                "passthrough",
                &["localhost"],
                &["127.0.0.1".parse().expect("ip")],
            ))
            .expect("serving certificate");
        let addr = runtime.block_on(async {
            let config = crate::config_from(kubeconfig).await;
            let (_, upstream) = kube_client::clients(config).expect("upstream client");
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("address");
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls_config(
                &serving.cert_pem,
                &serving.key_pem,
            )));
            tokio::spawn(accept_loop(listener, acceptor, upstream));
            addr
        });
        Passthrough {
            url: format!("https://{addr}"),
            ca,
            runtime: Some(runtime),
        }
    }

    /// A client of the proxy (bound to the caller's runtime), with the
    /// benchmark's client stack.
    pub async fn client(&self) -> kube::Client {
        crate::client_of(&self.url, &self.ca, &[]).await
    }
}

impl Drop for Passthrough {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// TLS 1.3 and 1.2 with ring, HTTP/1.1, no client certificate: the
/// server's own settings but for client certificates, which it only
/// requests and checks per request.
fn tls_config(cert_pem: &str, key_pem: &str) -> rustls::ServerConfig {
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
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    tls
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    upstream: Unbuffered,
) {
    while let Ok((tcp, _)) = listener.accept().await {
        tcp.set_nodelay(true).expect("TCP_NODELAY");
        let acceptor = acceptor.clone();
        let upstream = upstream.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |req| {
                let upstream = upstream.clone();
                async move { Ok::<_, std::convert::Infallible>(forward(&upstream, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

/// Sends `req` on upstream (method, path and query, content type, body)
/// and answers with upstream's body. Records its time less the upstream
/// round trip as `passthrough less send` (with `BENCH_SPANS=1`), the floor
/// of the server's `request … less send`.
async fn forward(upstream: &Unbuffered, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return answer(
                StatusCode::BAD_REQUEST,
                format!("read the body: {e}").into(),
            );
        }
    };
    let mut out = Request::builder()
        .method(parts.method)
        .uri(parts.uri.path_and_query().map_or("/", |p| p.as_str()));
    if let Some(content_type) = parts.headers.get(header::CONTENT_TYPE) {
        out = out.header(header::CONTENT_TYPE, content_type);
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
