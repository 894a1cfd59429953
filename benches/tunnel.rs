//! Benchmark: the reverse tunnel's design choice, measured over loopback TCP.
//!
//! Three ways from an "aggregator" connection to a local echo server:
//!
//! - `direct`: straight to the echo server (the floor);
//! - `multiplex`: the real tunnel: agent [`Agent`] and [`TunnelClient`] over
//!   one TCP transport connection, one HTTP/2 stream per connection;
//! - `pool`: the alternative, prototyped here: one reverse transport
//!   connection per aggregator connection, serve keeping a pool of idle ones
//!   open (each with the same hello handshake), bytes copied raw (so it
//!   relies on TCP half-close, which port-forward does not carry).
//!
//! Measured, each printed with p50/p99 where it is a latency:
//! 1. set-up: a new aggregator connection until its first byte is echoed;
//! 2. set-up of one transport connection (TCP + hello; + HTTP/2 for
//!    multiplex): what a pool pays per aggregator connection and the
//!    multiplexed tunnel once; and a loopback TLS handshake, the floor of
//!    what port-forward adds to each (two TLS hops, an HTTP upgrade, a
//!    kubelet dial);
//! 3. a 64-byte request/response on an open connection;
//! 4. 8 MiB echoed through one connection (MiB/s each way);
//! 5. 50 connections at once, 200 round trips each: wall time and p99.
//!
//! Run: `cargo bench --bench tunnel`

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kubectl_cozy::pki::{Ca, LeafSpec};
use kubectl_cozy::tunnel::protocol::{self, Hello};
use kubectl_cozy::tunnel::{
    Agent, AgentConfig, ClientConfig, TcpTransport, TcpUpstream, Transport, TunnelClient,
    TunnelState,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, mpsc};

const SESSION: &str = "bench";
const SETUPS: usize = 500;
const TRANSPORTS: usize = 200;
const ROUND_TRIPS: usize = 5_000;
const BULK: usize = 8 * 1024 * 1024;
const CONCURRENT: usize = 50;
const CONCURRENT_TRIPS: usize = 200;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let echo = start_echo().await;
        let multiplex = start_multiplex(echo).await;
        let pool = start_pool(echo, 8).await;
        let variants = [("direct", echo), ("multiplex", multiplex), ("pool", pool)];

        println!("1. set-up: connect until the first byte is echoed ({SETUPS} sequential)");
        for (name, addr) in variants {
            let mut samples = Vec::with_capacity(SETUPS);
            for _ in 0..SETUPS {
                let started = Instant::now();
                let mut c = TcpStream::connect(addr).await.expect("connect");
                c.set_nodelay(true).expect("nodelay");
                c.write_all(b"x").await.expect("write");
                let mut one = [0u8; 1];
                c.read_exact(&mut one).await.expect("echo");
                samples.push(started.elapsed());
            }
            report(name, &mut samples);
        }

        println!("2. set-up of one transport connection ({TRANSPORTS} sequential)");
        transport_setup(multiplex_control().await).await;

        println!("3. 64-byte request/response on an open connection ({ROUND_TRIPS})");
        for (name, addr) in variants {
            let mut c = TcpStream::connect(addr).await.expect("connect");
            c.set_nodelay(true).expect("nodelay");
            let mut samples = Vec::with_capacity(ROUND_TRIPS);
            let req = [0x5Au8; 64];
            let mut resp = [0u8; 64];
            for _ in 0..ROUND_TRIPS {
                let started = Instant::now();
                c.write_all(&req).await.expect("write");
                c.read_exact(&mut resp).await.expect("read");
                samples.push(started.elapsed());
            }
            report(name, &mut samples);
        }

        println!(
            "4. {} MiB echoed through one connection",
            BULK / (1024 * 1024)
        );
        for (name, addr) in variants {
            let c = TcpStream::connect(addr).await.expect("connect");
            let (mut r, mut w) = c.into_split();
            let started = Instant::now();
            let writer = tokio::spawn(async move {
                let chunk = vec![0xA5u8; 64 * 1024];
                for _ in 0..BULK / chunk.len() {
                    w.write_all(&chunk).await.expect("write");
                }
                w.shutdown().await.expect("shutdown");
            });
            let mut got = 0usize;
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = r.read(&mut buf).await.expect("read");
                if n == 0 {
                    break;
                }
                got += n;
            }
            writer.await.expect("writer");
            assert_eq!(got, BULK, "{name}: short echo");
            let secs = started.elapsed().as_secs_f64();
            println!(
                "   {name:<10} {:>8.1} MiB/s each way ({:.1} ms)",
                BULK as f64 / (1024.0 * 1024.0) / secs,
                secs * 1000.0
            );
        }

        println!(
            "5. {CONCURRENT} connections at once, {CONCURRENT_TRIPS} 64-byte round trips each"
        );
        for (name, addr) in variants {
            let started = Instant::now();
            let mut tasks = Vec::new();
            for _ in 0..CONCURRENT {
                tasks.push(tokio::spawn(async move {
                    let mut c = TcpStream::connect(addr).await.expect("connect");
                    c.set_nodelay(true).expect("nodelay");
                    let req = [0x33u8; 64];
                    let mut resp = [0u8; 64];
                    let mut samples = Vec::with_capacity(CONCURRENT_TRIPS);
                    for _ in 0..CONCURRENT_TRIPS {
                        let t = Instant::now();
                        c.write_all(&req).await.expect("write");
                        c.read_exact(&mut resp).await.expect("read");
                        samples.push(t.elapsed());
                    }
                    samples
                }));
            }
            let mut samples = Vec::new();
            for t in tasks {
                samples.extend(t.await.expect("task"));
            }
            let wall = started.elapsed();
            samples.sort();
            println!(
                "   {name:<10} wall {:>7.1} ms   round trip p50 {:>7.1} µs  p99 {:>7.1} µs",
                wall.as_secs_f64() * 1000.0,
                micros(samples[samples.len() / 2]),
                micros(samples[samples.len() * 99 / 100]),
            );
        }
    });
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn report(name: &str, samples: &mut [Duration]) {
    samples.sort();
    println!(
        "   {name:<10} p50 {:>8.1} µs   p99 {:>8.1} µs",
        micros(samples[samples.len() / 2]),
        micros(samples[samples.len() * 99 / 100]),
    );
}

async fn start_echo() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let _ = sock.set_nodelay(true);
            tokio::spawn(async move {
                let (mut r, mut w) = sock.into_split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
                let _ = w.shutdown().await;
            });
        }
    });
    addr
}

/// The agent's control address of the multiplexed tunnel started last, for
/// the transport set-up measurement (a second agent, so the measured
/// connections do not replace the benchmark's session).
async fn multiplex_control() -> SocketAddr {
    let mut config = AgentConfig::new(SESSION);
    config.data_listen = "127.0.0.1:0".parse().expect("addr");
    config.control_listen = "127.0.0.1:0".parse().expect("addr");
    config.health_listen = None;
    let agent = Agent::bind(config).await.expect("bind agent");
    let control = agent.control_addr();
    tokio::spawn(agent.run(std::future::pending()));
    control
}

async fn start_multiplex(echo: SocketAddr) -> SocketAddr {
    let mut config = AgentConfig::new(SESSION);
    config.data_listen = "127.0.0.1:0".parse().expect("addr");
    config.control_listen = "127.0.0.1:0".parse().expect("addr");
    config.health_listen = None;
    let agent = Agent::bind(config).await.expect("bind agent");
    let data = agent.data_addr();
    let control = agent.control_addr();
    let hub = agent.hub();
    tokio::spawn(agent.run(std::future::pending()));
    let client = TunnelClient::new(
        Arc::new(TcpTransport::new(control)),
        Arc::new(TcpUpstream::new(echo)),
        ClientConfig::new(SESSION),
    );
    let mut status = client.status();
    tokio::spawn(client.run(std::future::pending()));
    status
        .wait_for(|s| matches!(s.state, TunnelState::Connected { .. }))
        .await
        .expect("tunnel connected");
    hub.wait_connected(true).await;
    data
}

/// Transport set-up: TCP connect + hello (what each pool member costs), and
/// TCP + hello + HTTP/2 handshake (what the multiplexed tunnel pays once).
async fn transport_setup(control: SocketAddr) {
    let transport = TcpTransport::new(control);
    let mut hello_only = Vec::with_capacity(TRANSPORTS);
    let mut with_h2 = Vec::with_capacity(TRANSPORTS);
    for i in 0..TRANSPORTS * 2 {
        let started = Instant::now();
        let mut connected = transport.connect().await.expect("connect");
        protocol::offer(&mut connected.io, &Hello::new(SESSION))
            .await
            .expect("hello");
        if i % 2 == 0 {
            hello_only.push(started.elapsed());
            continue;
        }
        // Resolves once the agent's HTTP/2 preface and SETTINGS arrived.
        let _conn = h2::server::handshake(connected.io)
            .await
            .expect("h2 handshake");
        with_h2.push(started.elapsed());
    }
    report("tcp+hello", &mut hello_only);
    report("+http/2", &mut with_h2);
    let mut tls = tls_setup().await;
    report("tcp+tls", &mut tls);
}

/// TCP connect plus a TLS 1.3 handshake (ECDSA P-256) on loopback: the floor
/// of one hop of a new port-forward (serve → kube-apiserver; kube-apiserver →
/// kubelet is another), before the HTTP upgrade and the kubelet's dial.
async fn tls_setup() -> Vec<Duration> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    let ca = Ca::new("bench-ca").expect("CA");
    let leaf = ca
        .issue(&LeafSpec::server("localhost", &["localhost"], &[]))
        .expect("cert");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(leaf.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("cert PEM");
    let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).expect("key PEM");
    let server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let Ok(mut tls) = acceptor.accept(sock).await {
                    let _ = tls.write_all(b"x").await;
                    let _ = tls.flush().await;
                }
            });
        }
    });
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca.cert_pem().as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("add CA");
    }
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    let mut samples = Vec::with_capacity(TRANSPORTS);
    for _ in 0..TRANSPORTS {
        let started = Instant::now();
        let sock = TcpStream::connect(addr).await.expect("connect");
        let name = ServerName::try_from("localhost").expect("name");
        let mut tls = connector.connect(name, sock).await.expect("handshake");
        let mut one = [0u8; 1];
        tls.read_exact(&mut one).await.expect("first byte");
        samples.push(started.elapsed());
    }
    samples
}

/// The pool alternative: the agent pairs each aggregator connection with an
/// idle reverse connection; serve keeps `idle` of them open.
async fn start_pool(echo: SocketAddr, idle: usize) -> SocketAddr {
    let data = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let control = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let data_addr = data.local_addr().expect("addr");
    let control_addr = control.local_addr().expect("addr");
    let (idle_tx, idle_rx) = mpsc::channel::<TcpStream>(1024);
    let idle_rx = Arc::new(Mutex::new(idle_rx));
    // Agent: handshake reverse connections into the idle queue.
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = control.accept().await {
            let _ = sock.set_nodelay(true);
            let idle_tx = idle_tx.clone();
            tokio::spawn(async move {
                if protocol::accept(&mut sock, SESSION).await.is_ok() {
                    let _ = idle_tx.send(sock).await;
                }
            });
        }
    });
    // Agent: pair aggregator connections with idle reverse connections.
    tokio::spawn(async move {
        while let Ok((mut agg, _)) = data.accept().await {
            let _ = agg.set_nodelay(true);
            let idle_rx = idle_rx.clone();
            tokio::spawn(async move {
                let Some(mut reverse) = idle_rx.lock().await.recv().await else {
                    return;
                };
                if reverse.write_all(b"G").await.is_err() {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut agg, &mut reverse).await;
            });
        }
    });
    // Serve: keep `idle` reverse connections open, replacing each as soon as
    // it is taken.
    for _ in 0..idle {
        tokio::spawn(async move {
            loop {
                let Ok(mut reverse) = TcpStream::connect(control_addr).await else {
                    return;
                };
                let _ = reverse.set_nodelay(true);
                if protocol::offer(&mut reverse, &Hello::new(SESSION))
                    .await
                    .is_err()
                {
                    return;
                }
                let mut go = [0u8; 1];
                if reverse.read_exact(&mut go).await.is_err() {
                    return;
                }
                tokio::spawn(async move {
                    let Ok(mut local) = TcpStream::connect(echo).await else {
                        return;
                    };
                    let _ = local.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut reverse, &mut local).await;
                });
            }
        });
    }
    // Let the pool fill.
    tokio::time::sleep(Duration::from_millis(200)).await;
    data_addr
}
