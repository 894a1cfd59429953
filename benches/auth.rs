//! Benchmark: what delegated authentication plus authorization adds to a
//! request once its caches are warm (the issue's figure; target ≤ 0.2 ms
//! p50). Two measurements, both printed as p50/p90 with no assertion:
//!
//! 1. `Auth::check` alone, per request: a front-proxy user (chain verdict
//!    remembered by the connection, headers read, SubjectAccessReview answer
//!    from the 10 s cache) and an x509 user.
//! 2. Whole requests over one kept-alive HTTPS connection on loopback
//!    (`GET …/namespaces/bench/postgreses`, embedded store): the server with
//!    delegated auth versus the same server with auth bypassed; the
//!    difference and ratio of the p50s.
//!
//! Reviews are answered in-process (a fake `Reviewer` that always allows and
//! counts its calls), so only cache hits are timed, never kube-apiserver.
//!
//! Run: `cargo bench --bench auth`

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use http::{HeaderMap, Method};
use kubectl_cozy::apimachinery::{query, request_info};
use kubectl_cozy::apiserver::handlers::ApiState;
use kubectl_cozy::apiserver::server::{self, ServerConfig};
use kubectl_cozy::auth::review::{ReviewError, ReviewKind, Reviewer};
use kubectl_cozy::auth::{
    Auth, AuthConfig, Authenticator, Authorizer, DynamicAuthConfig, PeerCertificates,
};
use kubectl_cozy::kinds::Registry;
use kubectl_cozy::pki::{Ca, CertPair, LeafSpec};
use kubectl_cozy::storage::Backend;
use kubectl_cozy::storage::app_store::AppStore;
use kubectl_cozy::storage::cache::WatchCache;
use kubectl_cozy::storage::embedded_store::EmbeddedStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const PATH: &str = "/apis/apps.cozystack.io/v1alpha1/namespaces/bench/postgreses";
const CHECKS: usize = 20_000;
const REQUESTS: usize = 3_000;

struct AllowAll(AtomicUsize);

impl Reviewer for AllowAll {
    fn create(&self, _: ReviewKind, _: Value) -> BoxFuture<'static, Result<Value, ReviewError>> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Box::pin(async { Ok(json!({"status": {"allowed": true, "authenticated": false}})) })
    }
}

struct Pki {
    client_ca: Ca,
    proxy_ca: Ca,
    proxy: CertPair,
}

fn delegated(pki: &Pki, reviewer: Arc<AllowAll>) -> Auth {
    let data: BTreeMap<String, String> = [
        ("client-ca-file", pki.client_ca.cert_pem()),
        ("requestheader-client-ca-file", pki.proxy_ca.cert_pem()),
        ("requestheader-allowed-names", r#"["front-proxy-client"]"#),
        ("requestheader-username-headers", r#"["X-Remote-User"]"#),
        ("requestheader-uid-headers", r#"["X-Remote-Uid"]"#),
        ("requestheader-group-headers", r#"["X-Remote-Group"]"#),
        (
            "requestheader-extra-headers-prefix",
            r#"["X-Remote-Extra-"]"#,
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let trust = DynamicAuthConfig::new(AuthConfig::from_config_map_data(&data).expect("trust"));
    Auth::new(
        trust.clone(),
        Authenticator::new(trust).with_token_review(reviewer.clone()),
        Authorizer::new(reviewer),
    )
}

fn peer(pair: &CertPair) -> PeerCertificates {
    let der = CertificateDer::from_pem_slice(pair.cert_pem.as_bytes()).expect("cert");
    PeerCertificates::from_chain(Some(&[der]))
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() as f64 - 1.0) * p) as usize]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

async fn time_checks(auth: &Auth, peer: &PeerCertificates, headers: &HeaderMap) -> Vec<Duration> {
    let query = query::parse_query(None);
    let route = request_info::route(&Method::GET, PATH, &query);
    let mut samples = Vec::with_capacity(CHECKS);
    for i in 0..CHECKS + 1000 {
        let started = Instant::now();
        let user = auth
            .check(peer, &Method::GET, PATH, headers, &query, &route)
            .await
            .expect("allowed");
        let elapsed = started.elapsed();
        std::hint::black_box(user);
        if i >= 1000 {
            samples.push(elapsed);
        }
    }
    samples
}

async fn start(auth: Auth, pki_dir: &std::path::Path, serving: &CertPair) -> server::RunningServer {
    let registry = Registry::from_path(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds"),
    )
    .expect("kinds");
    let store = EmbeddedStore::open(&pki_dir.join(format!("{}.sqlite", uuid::Uuid::new_v4())))
        .expect("store");
    let backend = Backend::Embedded(store);
    let cache = WatchCache::start(backend.clone());
    let running = server::start(ServerConfig {
        listen: "127.0.0.1:0".parse().expect("addr"),
        cert_pem: serving.cert_pem.clone(),
        key_pem: serving.key_pem.clone(),
        auth: Arc::new(auth),
        state: ApiState {
            registry,
            apps: AppStore::new(cache.clone(), backend),
            reachability_probe: None,
        },
        connections: server::ConnectionLimits::default(),
    })
    .await
    .expect("server");
    cache.wait_ready().await;
    running
}

/// p50-able latencies of `REQUESTS` GETs over one kept-alive connection.
async fn time_requests(
    addr: SocketAddr,
    ca_pem: &str,
    identity: &CertPair,
    headers: &str,
) -> Vec<Duration> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).expect("ca"))
        .expect("root");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_client_auth_cert(
        vec![CertificateDer::from_pem_slice(identity.cert_pem.as_bytes()).expect("cert")],
        PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes()).expect("key"),
    )
    .expect("client auth");
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::IpAddress(addr.ip().into()), tcp)
        .await
        .expect("handshake");
    let mut stream = BufReader::new(tls);
    let text =
        format!("GET {PATH} HTTP/1.1\r\nHost: bench\r\nAccept: application/json\r\n{headers}\r\n");
    let mut samples = Vec::with_capacity(REQUESTS);
    for i in 0..REQUESTS + 300 {
        let started = Instant::now();
        stream
            .get_mut()
            .write_all(text.as_bytes())
            .await
            .expect("write");
        let mut length = 0usize;
        let mut status = String::new();
        loop {
            let mut line = String::new();
            stream.read_line(&mut line).await.expect("read");
            if status.is_empty() {
                status = line.clone();
            }
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().expect("content-length");
            }
        }
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).await.expect("body");
        let elapsed = started.elapsed();
        assert!(
            status.contains(" 200 "),
            "{status}{}",
            String::from_utf8_lossy(&body)
        );
        if i >= 300 {
            samples.push(elapsed);
        }
    }
    samples
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

async fn run() {
    let proxy_ca = Ca::new("bench-front-proxy-ca").expect("ca");
    let pki = Pki {
        client_ca: Ca::new("bench-client-ca").expect("ca"),
        proxy: proxy_ca
            .issue(&LeafSpec::client("front-proxy-client", &[]))
            .expect("cert"),
        proxy_ca,
    };
    let reviewer = Arc::new(AllowAll(AtomicUsize::new(0)));
    let auth = delegated(&pki, reviewer.clone());

    // 1. The check alone.
    let mut headers = HeaderMap::new();
    headers.insert("x-remote-user", "alice".parse().expect("header"));
    headers.append("x-remote-group", "dev".parse().expect("header"));
    headers.append("x-remote-extra-scopes", "a".parse().expect("header"));
    let proxy_peer = peer(&pki.proxy);
    let mut front = time_checks(&auth, &proxy_peer, &headers).await;
    let user = pki
        .client_ca
        .issue(&LeafSpec::client("bob", &["dev"]))
        .expect("cert");
    let user_peer = peer(&user);
    let mut x509 = time_checks(&auth, &user_peer, &HeaderMap::new()).await;
    println!("authn+authz check alone, warm caches ({CHECKS} samples each):");
    for (name, samples) in [("front proxy", &mut front), ("x509 user", &mut x509)] {
        println!(
            "  {name:<12} p50 {:>7.2} µs   p90 {:>7.2} µs",
            micros(percentile(samples, 0.5)),
            micros(percentile(samples, 0.9))
        );
    }
    println!(
        "  reviews made: {} (all others were cache hits)",
        reviewer.0.load(Ordering::Relaxed)
    );

    // 2. Whole requests, auth on versus bypassed.
    let dir = tempfile::tempdir().expect("tempdir");
    let serving_ca = Ca::new("bench-serving-ca").expect("ca");
    let serving = serving_ca
        .issue(&LeafSpec::server(
            "bench",
            &["localhost"],
            &["127.0.0.1".parse().expect("ip")],
        ))
        .expect("cert");
    let with_auth = start(delegated(&pki, reviewer.clone()), dir.path(), &serving).await;
    let bypass = start(Auth::allow_all_for_benchmarks(), dir.path(), &serving).await;
    let proxied = "X-Remote-User: alice\r\nX-Remote-Group: dev\r\n";
    // Interleave rounds so both servers see the same machine load.
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        on.extend(
            time_requests(
                with_auth.local_addr,
                serving_ca.cert_pem(),
                &pki.proxy,
                proxied,
            )
            .await,
        );
        off.extend(
            time_requests(
                bypass.local_addr,
                serving_ca.cert_pem(),
                &pki.proxy,
                proxied,
            )
            .await,
        );
    }
    let (on50, off50) = (percentile(&mut on, 0.5), percentile(&mut off, 0.5));
    println!(
        "whole request GET {PATH} over keep-alive HTTPS ({} samples each):",
        on.len()
    );
    println!(
        "  auth on      p50 {:>7.2} µs   p90 {:>7.2} µs",
        micros(on50),
        micros(percentile(&mut on, 0.9))
    );
    println!(
        "  auth bypassed p50 {:>6.2} µs   p90 {:>7.2} µs",
        micros(off50),
        micros(percentile(&mut off, 0.9))
    );
    println!(
        "  added by auth: {:+.2} µs at p50 (ratio {:.3})",
        micros(on50) - micros(off50),
        on50.as_secs_f64() / off50.as_secs_f64()
    );
    with_auth.shutdown(Duration::from_secs(1)).await;
    bypass.shutdown(Duration::from_secs(1)).await;
}
