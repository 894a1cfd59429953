//! The reverse tunnel on loopback TCP, with the real `kubectl-cozy
//! tunnel-agent` binary as a child process: a local TLS server that requires
//! a client certificate stands in for serve's API server, the in-process
//! `TunnelClient` connects to the agent's control port over TCP, and a TLS
//! client stands in for the aggregator on the agent's data port. No cluster
//! is needed (the port-forward transport is tested over the plane's kwok
//! node in `node.rs` and `serve.rs`).

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use kubectl_cozy::pki::{Ca, CertPair, LeafSpec};
use kubectl_cozy::tunnel::{
    ClientConfig, ClientError, TcpTransport, TcpUpstream, TunnelClient, TunnelState, TunnelStatus,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::sync::{oneshot, watch};

use crate::support::bins;

/// Every wait in these tests is bounded by this.
const LIMIT: Duration = Duration::from_secs(20);

/// The real agent binary, and the addresses it printed.
struct AgentProcess {
    child: Child,
    data: SocketAddr,
    control: SocketAddr,
    health: SocketAddr,
}

/// Starts `kubectl-cozy tunnel-agent` on the given (or free) loopback ports.
async fn start_agent(session: &str, ports: Option<(u16, u16, u16)>, hold: &str) -> AgentProcess {
    let (d, c, h) = ports.unwrap_or((0, 0, 0));
    let mut child = Command::new(bins::kubectl_cozy())
        .args([
            "tunnel-agent",
            "--data-listen",
            &format!("127.0.0.1:{d}"),
            "--control-listen",
            &format!("127.0.0.1:{c}"),
            "--health-listen",
            &format!("127.0.0.1:{h}"),
            "--hold",
            hold,
            "--keepalive-interval",
            "500ms",
            "--keepalive-timeout",
            "1s",
        ])
        .env("COZY_TUNNEL_SESSION", session)
        .env("RUST_LOG", "kubectl_cozy=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start kubectl-cozy tunnel-agent");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(LIMIT, lines.next_line())
        .await
        .expect("agent printed its addresses in time")
        .expect("read agent stdout")
        .expect("agent printed a line");
    let addr = |key: &str| -> SocketAddr {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{key}= in {line:?}"))
            .parse()
            .unwrap_or_else(|e| panic!("{key} address in {line:?}: {e}"))
    };
    assert!(line.starts_with("tunnel-agent listening "), "{line}");
    AgentProcess {
        data: addr("data"),
        control: addr("control"),
        health: addr("health"),
        child,
    }
}

/// Certificates: a CA, the local server's serving certificate, and the
/// "aggregator's" client certificate (front-proxy style).
struct Pki {
    ca: String,
    server: CertPair,
    client: CertPair,
}

fn pki() -> Pki {
    let ca = Ca::new("tunnel-test-ca").expect("CA");
    let server = ca
        .issue(&LeafSpec::server(
            "api.cozy-system.svc",
            &["api.cozy-system.svc"],
            &[],
        ))
        .expect("server cert");
    let client = ca
        .issue(&LeafSpec::client("front-proxy-client", &[]))
        .expect("client cert");
    Pki {
        ca: ca.cert_pem().to_owned(),
        server,
        client,
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(ca_pem: &str) -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("add CA");
    }
    roots
}

/// The stand-in for serve's API server: TLS with a required client
/// certificate; greets with the client certificate's subject CN, then echoes
/// until EOF and closes with close_notify.
async fn start_tls_server(pki: &Pki) -> SocketAddr {
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots(&pki.ca)),
        provider(),
    )
    .build()
    .expect("client verifier");
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pki.server.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("server cert PEM");
    let key = PrivateKeyDer::from_pem_slice(pki.server.key_pem.as_bytes()).expect("key PEM");
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .expect("server TLS config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(sock).await else {
                    return;
                };
                let cn = tls
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|certs| certs.first())
                    .and_then(|der| {
                        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
                        let cn = cert.subject().iter_common_name().next()?;
                        cn.as_str().ok().map(str::to_owned)
                    })
                    .unwrap_or_default();
                if tls
                    .write_all(format!("cn={cn}\n").as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
                let mut buf = vec![0u8; 32 * 1024];
                loop {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if tls.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    }
                }
                let _ = tls.shutdown().await;
            });
        }
    });
    addr
}

/// The stand-in for the aggregator: TLS to the agent's data port, verifying
/// the local server's certificate (so the agent cannot have terminated TLS)
/// and presenting the client certificate.
async fn aggregator_connect(
    pki: &Pki,
    data: SocketAddr,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pki.client.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("client cert PEM");
    let key = PrivateKeyDer::from_pem_slice(pki.client.key_pem.as_bytes()).expect("key PEM");
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots(&pki.ca))
        .with_client_auth_cert(certs, key)
        .expect("client TLS config");
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let sock = TcpStream::connect(data).await?;
    let name = ServerName::try_from("api.cozy-system.svc").expect("server name");
    connector.connect(name, sock).await
}

/// One request through the tunnel: the greeting, then `payload` echoed.
async fn exchange(
    pki: &Pki,
    data: SocketAddr,
    payload: &[u8],
) -> std::io::Result<(String, Vec<u8>)> {
    let tls = aggregator_connect(pki, data).await?;
    let (r, mut w) = tokio::io::split(tls);
    let mut r = BufReader::new(r);
    let mut greeting = String::new();
    r.read_line(&mut greeting).await?;
    let write = async {
        w.write_all(payload).await?;
        // TLS close_notify, then TCP half-close: the tunnel carries both.
        w.shutdown().await
    };
    let mut back = Vec::new();
    let (wrote, read) = tokio::join!(write, r.read_to_end(&mut back));
    wrote?;
    read?;
    Ok((greeting.trim_end().to_owned(), back))
}

struct Client {
    status: watch::Receiver<TunnelStatus>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), ClientError>>,
}

fn start_client(session: &str, control: SocketAddr, upstream: SocketAddr) -> Client {
    let mut config = ClientConfig::new(session);
    config.keepalive.interval = Duration::from_millis(500);
    config.keepalive.timeout = Duration::from_secs(1);
    config.backoff.initial = Duration::from_millis(100);
    config.backoff.max = Duration::from_secs(1);
    let tunnel = TunnelClient::new(
        Arc::new(TcpTransport::new(control)),
        Arc::new(TcpUpstream::new(upstream)),
        config,
    );
    let status = tunnel.status();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(tunnel.run(async move {
        let _ = stopped.await;
    }));
    Client {
        status,
        stop: Some(stop),
        task,
    }
}

impl Client {
    async fn connected(&mut self, connections: u64) {
        let reached = tokio::time::timeout(
            LIMIT,
            self.status.wait_for(|s| {
                matches!(s.state, TunnelState::Connected { .. }) && s.connections >= connections
            }),
        )
        .await
        .map(|r| r.is_ok());
        assert!(
            matches!(reached, Ok(true)),
            "tunnel connection {connections} in time: {:?}",
            *self.status.borrow()
        );
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(LIMIT, self.task)
            .await
            .expect("client stopped in time")
            .expect("client task")
            .expect("client stopped cleanly");
    }
}

/// `GET path` on the agent's health port: the status code.
async fn probe(health: SocketAddr, path: &str) -> u16 {
    let mut sock = TcpStream::connect(health)
        .await
        .expect("connect health port");
    sock.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: agent\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .expect("send probe");
    let mut answer = String::new();
    tokio::time::timeout(LIMIT, sock.read_to_string(&mut answer))
        .await
        .expect("probe answered in time")
        .expect("read probe answer");
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("status line in {answer:?}"))
}

fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 253) as u8).collect()
}

#[tokio::test]
async fn tls_with_a_client_certificate_passes_through_untouched() {
    let pki = pki();
    let upstream = start_tls_server(&pki).await;
    let agent = start_agent("it-session", None, "3s").await;
    assert_eq!(probe(agent.health, "/livez").await, 200);
    assert_eq!(
        probe(agent.health, "/readyz").await,
        503,
        "not ready before serve connects"
    );

    let mut client = start_client("it-session", agent.control, upstream);
    client.connected(1).await;
    // Readiness follows the session (the agent learns it as the client does).
    let ready = tokio::time::timeout(LIMIT, async {
        while probe(agent.health, "/readyz").await != 200 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(ready.is_ok(), "agent became ready");

    let data = payload(2 * 1024 * 1024 + 3);
    let (greeting, back) = tokio::time::timeout(LIMIT, exchange(&pki, agent.data, &data))
        .await
        .expect("exchange in time")
        .expect("exchange through the tunnel");
    assert_eq!(
        greeting, "cn=front-proxy-client",
        "the client certificate reached the server"
    );
    assert_eq!(back.len(), data.len());
    assert!(back == data, "echoed bytes differ");

    // Several aggregator connections at once.
    let mut tasks = Vec::new();
    for i in 0..20 {
        let data = payload(10_000 + i);
        let pki = Pki {
            ca: pki.ca.clone(),
            server: pki.server.clone(),
            client: pki.client.clone(),
        };
        let addr = agent.data;
        tasks.push(tokio::spawn(async move {
            let (_, back) = exchange(&pki, addr, &data).await.expect("exchange");
            assert!(back == data, "stream {i} differs");
        }));
    }
    for t in tasks {
        tokio::time::timeout(LIMIT, t)
            .await
            .expect("in time")
            .expect("stream");
    }

    client.stop().await;
    // The goodbye makes the agent unready at once.
    let unready = tokio::time::timeout(Duration::from_secs(5), async {
        while probe(agent.health, "/readyz").await != 503 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(unready.is_ok(), "agent unready after goodbye");
}

#[tokio::test]
async fn killing_the_agent_fails_requests_in_flight_and_the_client_reconnects() {
    let pki = pki();
    let upstream = start_tls_server(&pki).await;
    let mut agent = start_agent("it-session", None, "3s").await;
    let ports = (agent.data.port(), agent.control.port(), agent.health.port());
    let mut client = start_client("it-session", agent.control, upstream);
    client.connected(1).await;

    // A request in flight: greeting read, one echo done, connection open.
    let tls = aggregator_connect(&pki, agent.data).await.expect("connect");
    let (r, mut w) = tokio::io::split(tls);
    let mut r = BufReader::new(r);
    let mut greeting = String::new();
    r.read_line(&mut greeting).await.expect("greeting");
    w.write_all(b"ping").await.expect("write");
    let mut four = [0u8; 4];
    r.read_exact(&mut four).await.expect("echo");

    agent.child.kill().await.expect("kill the agent");
    // The request in flight fails: an error or an EOF without close_notify
    // (rustls reports that as an error too), never a hang or a clean end.
    let mut rest = Vec::new();
    let outcome = tokio::time::timeout(LIMIT, r.read_to_end(&mut rest))
        .await
        .expect("the request in flight ended in time");
    assert!(
        outcome.is_err(),
        "in-flight request ended cleanly: {outcome:?} {rest:?}"
    );

    // The client notices and retries.
    tokio::time::timeout(
        LIMIT,
        client
            .status
            .wait_for(|s| matches!(s.state, TunnelState::Reconnecting { .. })),
    )
    .await
    .expect("client noticed the agent died")
    .expect("status");

    // The agent comes back on the same ports; the client reconnects.
    let agent = start_agent("it-session", Some(ports), "3s").await;
    client.connected(2).await;
    let (greeting, back) =
        tokio::time::timeout(LIMIT, exchange(&pki, agent.data, b"after the restart"))
            .await
            .expect("exchange in time")
            .expect("exchange after reconnect");
    assert_eq!(greeting, "cn=front-proxy-client");
    assert_eq!(back, b"after the restart");
    client.stop().await;
}

#[tokio::test]
async fn an_agent_of_another_session_refuses_the_client() {
    let agent = start_agent("their-session", None, "3s").await;
    let upstream: SocketAddr = "127.0.0.1:9".parse().expect("addr");
    let client = start_client("my-session", agent.control, upstream);
    let result = tokio::time::timeout(LIMIT, client.task)
        .await
        .expect("client stopped in time")
        .expect("client task");
    let err = result.expect_err("refused");
    assert!(matches!(err, ClientError::Refused(_)), "{err:?}");
    let mut text = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    assert!(text.contains("their-session"), "{text}");
}

#[tokio::test]
async fn with_no_serve_connected_the_aggregator_is_turned_away_after_the_hold() {
    let pki = pki();
    let agent = start_agent("it-session", None, "300ms").await;
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(LIMIT, aggregator_connect(&pki, agent.data))
        .await
        .expect("the connection was turned away in time, not held");
    assert!(
        result.is_err(),
        "TLS handshake cannot succeed without serve"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "held for {waited:?}"
    );
}

#[tokio::test]
async fn the_agent_refuses_bad_flags() {
    let out = Command::new(bins::kubectl_cozy())
        .args(["tunnel-agent", "--data-listen", "127.0.0.1:0"])
        .env_remove("COZY_TUNNEL_SESSION")
        .output()
        .await
        .expect("run tunnel-agent");
    assert_eq!(
        out.status.code(),
        Some(2),
        "missing --session is a usage error"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--session"), "{stderr}");

    // The subcommand is hidden from help.
    let out = Command::new(bins::kubectl_cozy())
        .arg("--help")
        .output()
        .await
        .expect("run --help");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("tunnel-agent"));
}
