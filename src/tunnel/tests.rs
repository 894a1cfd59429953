//! End-to-end tests of the tunnel over in-memory pipes: a [`TunnelClient`]
//! and an agent [`Hub`] joined by a closure transport whose pipe can be
//! stalled (half-dead) or broken, with in-memory upstreams and aggregator
//! connections.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadBuf};
use tokio::sync::{Mutex, oneshot, watch};
use tokio::task::JoinHandle;

use super::agent::{AgentConfig, ControlEnd, ControlError, Hub};
use super::client::{
    ClientConfig, ClientError, TunnelClient, TunnelState, TunnelStatus, upstream_fn,
};
use super::keepalive::Keepalive;
use super::splice::{Abort, Conn, Outcome};
use super::transport::{self, Connected, TransportError};

const OK: u8 = 0;
const STALL: u8 = 1;
const BREAK: u8 = 2;

/// A switch shared by both ends of one transport pipe.
#[derive(Clone, Default)]
struct Fault(Arc<AtomicU8>);

impl Fault {
    fn set(&self, mode: u8) {
        self.0.store(mode, Ordering::SeqCst);
    }
}

/// A pipe end that works, stalls (reads never complete, writes vanish: a
/// half-dead port-forward), or fails, as its [`Fault`] says.
struct FaultyIo {
    inner: DuplexStream,
    fault: Fault,
}

impl AsyncRead for FaultyIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.fault.0.load(Ordering::SeqCst) {
            OK => Pin::new(&mut this.inner).poll_read(cx, buf),
            STALL => Poll::Pending,
            _ => Poll::Ready(Err(io::ErrorKind::ConnectionReset.into())),
        }
    }
}

impl AsyncWrite for FaultyIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match this.fault.0.load(Ordering::SeqCst) {
            OK => Pin::new(&mut this.inner).poll_write(cx, buf),
            STALL => Poll::Ready(Ok(buf.len())),
            _ => Poll::Ready(Err(io::ErrorKind::ConnectionReset.into())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// What the in-memory upstream does with each stream.
#[derive(Clone)]
enum Behaviour {
    /// Echo until EOF, then close.
    Echo,
    /// Write `total` bytes as fast as the stream takes them, counting them.
    Firehose {
        total: usize,
        written: Arc<AtomicU64>,
    },
    /// Refuse to connect.
    Fail,
}

type Controls = Arc<Mutex<Vec<JoinHandle<Result<ControlEnd, ControlError>>>>>;

struct Rig {
    hub: Hub,
    status: watch::Receiver<TunnelStatus>,
    stop: Option<oneshot::Sender<()>>,
    client: JoinHandle<Result<(), ClientError>>,
    faults: Arc<Mutex<Vec<Fault>>>,
    controls: Controls,
}

fn keepalive() -> Keepalive {
    Keepalive {
        interval: Duration::from_millis(200),
        timeout: Duration::from_millis(400),
    }
}

fn client_config(session: &str) -> ClientConfig {
    let mut c = ClientConfig::new(session);
    c.keepalive = keepalive();
    c.backoff.initial = Duration::from_millis(20);
    c.backoff.max = Duration::from_millis(200);
    c
}

fn agent_config(session: &str) -> AgentConfig {
    let mut c = AgentConfig::new(session);
    c.keepalive = keepalive();
    c.hold = Duration::from_millis(500);
    c
}

fn rig(agent: AgentConfig, client: ClientConfig, behaviour: Behaviour) -> Rig {
    let hub = Hub::new(&agent);
    let faults: Arc<Mutex<Vec<Fault>>> = Arc::default();
    let controls: Controls = Arc::default();
    let transport = {
        let hub = hub.clone();
        let faults = faults.clone();
        let controls = controls.clone();
        transport::from_fn(move || {
            let hub = hub.clone();
            let faults = faults.clone();
            let controls = controls.clone();
            async move {
                let (a, b) = tokio::io::duplex(64 * 1024);
                let fault = Fault::default();
                faults.lock().await.push(fault.clone());
                let agent_end = FaultyIo {
                    inner: b,
                    fault: fault.clone(),
                };
                let task = tokio::spawn(async move { hub.handle_control(agent_end).await });
                controls.lock().await.push(task);
                Ok::<_, TransportError>(Connected {
                    io: Box::new(FaultyIo { inner: a, fault }),
                    endpoint: "memory".into(),
                })
            }
        })
    };
    let upstream = upstream_fn(move || {
        let behaviour = behaviour.clone();
        async move {
            if matches!(behaviour, Behaviour::Fail) {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    "nothing listens",
                ));
            }
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            tokio::spawn(upstream_server(theirs, behaviour));
            Ok(Box::new(ours) as Box<dyn Conn>)
        }
    });
    let tunnel = TunnelClient::new(Arc::new(transport), Arc::new(upstream), client);
    let status = tunnel.status();
    let (stop, stopped) = oneshot::channel::<()>();
    let client = tokio::spawn(tunnel.run(async move {
        let _ = stopped.await;
    }));
    Rig {
        hub,
        status,
        stop: Some(stop),
        client,
        faults,
        controls,
    }
}

async fn upstream_server(mut io: DuplexStream, behaviour: Behaviour) {
    match behaviour {
        Behaviour::Echo => {
            let (mut r, mut w) = tokio::io::split(io);
            let _ = tokio::io::copy(&mut r, &mut w).await;
            let _ = w.shutdown().await;
        }
        Behaviour::Firehose { total, written } => {
            let chunk = vec![0xAB; 16 * 1024];
            let mut left = total;
            while left > 0 {
                let n = left.min(chunk.len());
                if io.write_all(&chunk[..n]).await.is_err() {
                    return;
                }
                written.fetch_add(n as u64, Ordering::SeqCst);
                left -= n;
            }
            let _ = io.shutdown().await;
            let mut sink = Vec::new();
            let _ = io.read_to_end(&mut sink).await;
        }
        Behaviour::Fail => {}
    }
}

impl Rig {
    async fn connected(&mut self, connections: u64) {
        tokio::time::timeout(
            Duration::from_secs(10),
            self.status.wait_for(|s| {
                matches!(s.state, TunnelState::Connected { .. }) && s.connections >= connections
            }),
        )
        .await
        .expect("tunnel connected in time")
        .expect("status channel open");
        tokio::time::timeout(Duration::from_secs(10), self.hub.wait_connected(true))
            .await
            .expect("agent saw the session");
    }

    /// An aggregator connection: our end, and the agent's splice of it.
    fn dial(&self) -> (DuplexStream, JoinHandle<Outcome>) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let hub = self.hub.clone();
        let task = tokio::spawn(async move { hub.handle_data(theirs, "test").await });
        (ours, task)
    }

    async fn fault(&self, mode: u8) {
        for f in self.faults.lock().await.iter() {
            f.set(mode);
        }
    }

    async fn stop(mut self) -> Result<(), ClientError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), self.client)
            .await
            .expect("client stopped in time")
            .expect("client task")
    }
}

async fn echo_round_trip(conn: &mut DuplexStream, payload: &[u8]) -> Vec<u8> {
    let (mut r, mut w) = tokio::io::split(conn);
    let write = async {
        w.write_all(payload).await.unwrap();
        w.shutdown().await.unwrap();
    };
    let mut back = Vec::new();
    let read = r.read_to_end(&mut back);
    let (_, n) = tokio::join!(write, read);
    n.unwrap();
    back
}

fn payload(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(31).wrapping_add(seed) % 251) as u8)
        .collect()
}

#[tokio::test]
async fn bytes_round_trip_through_client_and_agent() {
    let mut rig = rig(agent_config("s"), client_config("s"), Behaviour::Echo);
    rig.connected(1).await;
    let (mut conn, task) = rig.dial();
    let data = payload(3 * 1024 * 1024 + 17, 1);
    let back = echo_round_trip(&mut conn, &data).await;
    assert_eq!(back.len(), data.len());
    assert!(back == data, "echoed bytes differ");
    let outcome = task.await.unwrap();
    assert!(
        matches!(outcome, Outcome::Finished { sent, received } if sent == data.len() as u64 && received == data.len() as u64),
        "{outcome:?}"
    );
    rig.stop().await.unwrap();
}

#[tokio::test]
async fn fifty_streams_at_once() {
    let mut rig = rig(agent_config("s"), client_config("s"), Behaviour::Echo);
    rig.connected(1).await;
    let mut tasks = Vec::new();
    for i in 0..50u32 {
        let (mut conn, splice) = rig.dial();
        tasks.push(tokio::spawn(async move {
            let data = payload(100_000 + i as usize, i);
            let back = echo_round_trip(&mut conn, &data).await;
            assert!(back == data, "stream {i}: echoed bytes differ");
            splice.await.unwrap()
        }));
    }
    for t in tasks {
        let outcome = tokio::time::timeout(Duration::from_secs(20), t)
            .await
            .expect("stream finished in time")
            .unwrap();
        assert!(matches!(outcome, Outcome::Finished { .. }), "{outcome:?}");
    }
    rig.stop().await.unwrap();
}

#[tokio::test]
async fn a_slow_reader_stalls_only_its_own_stream_with_bounded_memory() {
    let written = Arc::new(AtomicU64::new(0));
    let total = 16 * 1024 * 1024;
    let behaviour = Behaviour::Firehose {
        total,
        written: written.clone(),
    };
    let agent = agent_config("s");
    let window = agent.tuning.stream_window as u64;
    let mut rig = rig(agent, client_config("s"), behaviour);
    rig.connected(1).await;

    // Stream A: nobody reads it.
    let (_stuck, _stuck_task) = rig.dial();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stuck_written = written.load(Ordering::SeqCst);
    // What one stream may hold: its HTTP/2 window plus the pipes and one
    // read buffer on each side.
    let bound = window + 4 * 64 * 1024 + 2 * super::splice::CHUNK as u64;
    assert!(
        stuck_written <= bound,
        "the stuck stream buffered {stuck_written} bytes, over {bound}"
    );
    assert!(stuck_written > 0, "the firehose never started");

    // Stream B: read everything while A stays stuck.
    let (mut conn, task) = rig.dial();
    let mut got = 0usize;
    let mut buf = vec![0u8; 64 * 1024];
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let n = conn.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            got += n;
        }
    })
    .await
    .expect("stream B finished while A was stuck");
    assert_eq!(got, total);
    conn.shutdown().await.unwrap();
    assert!(matches!(task.await.unwrap(), Outcome::Finished { .. }));
    // A did not grow meanwhile.
    assert!(written.load(Ordering::SeqCst) - total as u64 <= bound);
    rig.stop().await.unwrap();
}

#[tokio::test]
async fn a_stalled_transport_is_detected_by_keepalive_and_streams_fail() {
    let mut rig = rig(agent_config("s"), client_config("s"), Behaviour::Echo);
    rig.connected(1).await;
    let (mut conn, task) = rig.dial();
    conn.write_all(b"before the stall").await.unwrap();
    let mut buf = [0u8; 16];
    conn.read_exact(&mut buf).await.unwrap();

    let started = tokio::time::Instant::now();
    rig.fault(STALL).await;
    // The agent's splice of the in-flight connection aborts: the aggregator
    // sees its connection fail, not hang.
    let outcome = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("in-flight stream failed in time")
        .unwrap();
    assert!(matches!(outcome, Outcome::Aborted(_)), "{outcome:?}");
    // Both sides noticed within interval + timeout (+ scheduling slack).
    tokio::time::timeout(
        Duration::from_secs(5),
        rig.status
            .wait_for(|s| matches!(s.state, TunnelState::Reconnecting { .. })),
    )
    .await
    .expect("client noticed")
    .unwrap();
    tokio::time::timeout(Duration::from_secs(5), rig.hub.wait_connected(false))
        .await
        .expect("agent noticed");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let last_error = rig.status.borrow().last_error.clone().unwrap_or_default();
    assert!(last_error.contains("keepalive"), "{last_error}");
    let first = rig.controls.lock().await.remove(0);
    let agent_end = first.await.unwrap();
    assert!(
        matches!(agent_end, Err(ControlError::Keepalive(_))),
        "{agent_end:?}"
    );

    // The client reconnects over a fresh pipe, and streams flow again.
    rig.connected(2).await;
    let (mut conn, _task) = rig.dial();
    assert_eq!(echo_round_trip(&mut conn, b"again").await, b"again");
    rig.stop().await.unwrap();
}

#[tokio::test]
async fn a_broken_transport_fails_in_flight_streams_and_reconnects() {
    let mut rig = rig(agent_config("s"), client_config("s"), Behaviour::Echo);
    rig.connected(1).await;
    let (mut conn, task) = rig.dial();
    conn.write_all(b"x").await.unwrap();
    let mut one = [0u8; 1];
    conn.read_exact(&mut one).await.unwrap();
    rig.fault(BREAK).await;
    let outcome = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("in-flight stream failed in time")
        .unwrap();
    assert!(matches!(outcome, Outcome::Aborted(_)), "{outcome:?}");
    rig.connected(2).await;
    let status = rig.status.borrow().clone();
    assert_eq!(status.connections, 2);
    assert!(status.last_error.is_some());
    let (mut conn, _) = rig.dial();
    assert_eq!(echo_round_trip(&mut conn, b"after").await, b"after");
    rig.stop().await.unwrap();
}

#[tokio::test]
async fn another_session_is_refused_and_the_client_stops() {
    let rig = rig(
        agent_config("mine"),
        client_config("theirs"),
        Behaviour::Echo,
    );
    let result = tokio::time::timeout(Duration::from_secs(5), rig.client)
        .await
        .expect("client stopped in time")
        .unwrap();
    let err = result.unwrap_err();
    assert!(matches!(err, ClientError::Refused(_)), "{err:?}");
    assert!(!rig.hub.is_connected());
}

#[tokio::test]
async fn exit_on_disconnect_returns_an_error_instead_of_reconnecting() {
    let mut client = client_config("s");
    client.exit_on_disconnect = true;
    let mut rig = rig(agent_config("s"), client, Behaviour::Echo);
    rig.connected(1).await;
    rig.fault(BREAK).await;
    let result = tokio::time::timeout(Duration::from_secs(5), &mut rig.client)
        .await
        .expect("client stopped in time")
        .unwrap();
    assert!(
        matches!(result, Err(ClientError::Disconnected(_))),
        "{result:?}"
    );
    assert_eq!(rig.status.borrow().state, TunnelState::Stopped);
}

#[tokio::test]
async fn gives_up_after_max_reconnect_attempts() {
    let mut config = client_config("s");
    config.max_reconnect_attempts = Some(3);
    let attempts = Arc::new(AtomicU64::new(0));
    let counted = attempts.clone();
    let transport = transport::from_fn(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Err(TransportError::Other("agent unreachable".into())) }
    });
    let upstream = upstream_fn(|| async { Err::<Box<dyn Conn>, _>(io::Error::other("unused")) });
    let tunnel = TunnelClient::new(Arc::new(transport), Arc::new(upstream), config);
    let status = tunnel.status();
    let result = tokio::time::timeout(Duration::from_secs(5), tunnel.run(std::future::pending()))
        .await
        .expect("gave up in time");
    assert!(
        matches!(result, Err(ClientError::GaveUp { attempts: 3, .. })),
        "{result:?}"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 4, "first try + 3 retries");
    let status = status.borrow().clone();
    assert_eq!(status.state, TunnelState::Stopped);
    assert!(
        status
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("agent unreachable")),
        "{status:?}"
    );
}

#[tokio::test]
async fn goodbye_makes_the_agent_unready_at_once() {
    // A slow keepalive: only the goodbye can make the agent notice in time.
    let slow = Keepalive {
        interval: Duration::from_secs(5),
        timeout: Duration::from_secs(5),
    };
    let mut agent = agent_config("s");
    agent.keepalive = slow;
    let mut client = client_config("s");
    client.keepalive = slow;
    let mut rig = rig(agent, client, Behaviour::Echo);
    rig.connected(1).await;
    let hub = rig.hub.clone();
    let controls = rig.controls.clone();
    let started = tokio::time::Instant::now();
    rig.stop().await.unwrap();
    tokio::time::timeout(Duration::from_secs(2), hub.wait_connected(false))
        .await
        .expect("agent unready after goodbye");
    // Faster than the keepalive would have noticed.
    assert!(started.elapsed() < slow.interval, "{:?}", started.elapsed());
    let end = controls.lock().await.remove(0).await.unwrap();
    assert!(matches!(end, Ok(ControlEnd::Closed)), "{end:?}");
}

#[tokio::test]
async fn a_stream_in_flight_finishes_during_the_goodbye_grace() {
    let mut rig = rig(agent_config("s"), client_config("s"), Behaviour::Echo);
    rig.connected(1).await;
    let (mut conn, task) = rig.dial();
    conn.write_all(b"started").await.unwrap();
    let mut buf = [0u8; 7];
    conn.read_exact(&mut buf).await.unwrap();
    let stop = {
        let stop = rig.stop.take().unwrap();
        let _ = stop.send(());
        rig.client
    };
    conn.write_all(b" and finished").await.unwrap();
    conn.shutdown().await.unwrap();
    let mut rest = Vec::new();
    conn.read_to_end(&mut rest).await.unwrap();
    assert_eq!(rest, b" and finished");
    assert!(matches!(task.await.unwrap(), Outcome::Finished { .. }));
    stop.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn no_serve_connected_resets_the_aggregator_after_the_hold() {
    let config = agent_config("s");
    let hold = config.hold;
    let hub = Hub::new(&config);
    let (mut ours, theirs) = tokio::io::duplex(1024);
    let started = tokio::time::Instant::now();
    let outcome = hub.handle_data(theirs, "test").await;
    assert!(
        matches!(outcome, Outcome::Aborted(Abort::Refused(_))),
        "{outcome:?}"
    );
    assert!(started.elapsed() >= hold && started.elapsed() < hold * 2);
    let mut rest = Vec::new();
    assert_eq!(ours.read_to_end(&mut rest).await.unwrap(), 0);
}

#[tokio::test]
async fn a_connection_arriving_during_a_reconnect_is_held_then_served() {
    let mut agent = agent_config("s");
    agent.hold = Duration::from_secs(5);
    let mut client = client_config("s");
    client.backoff.initial = Duration::from_millis(500);
    client.backoff.jitter = 0.0;
    let mut rig = rig(agent, client, Behaviour::Echo);
    rig.connected(1).await;
    rig.fault(BREAK).await;
    tokio::time::timeout(Duration::from_secs(5), rig.hub.wait_connected(false))
        .await
        .expect("agent noticed the break");
    assert!(!rig.hub.is_connected());
    // Arrives while no serve is connected; held until the reconnect.
    let (mut conn, task) = rig.dial();
    assert_eq!(echo_round_trip(&mut conn, b"held").await, b"held");
    assert!(matches!(task.await.unwrap(), Outcome::Finished { .. }));
    rig.stop().await.unwrap();
}

#[tokio::test]
async fn an_unreachable_upstream_aborts_the_aggregator_connection() {
    let mut rig = rig(agent_config("s"), client_config("s"), Behaviour::Fail);
    rig.connected(1).await;
    let (mut conn, task) = rig.dial();
    let outcome = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("refused in time")
        .unwrap();
    match outcome {
        Outcome::Aborted(Abort::Refused(why)) => {
            assert!(why.starts_with("502"), "{why}");
            assert!(why.contains("nothing listens"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let mut rest = Vec::new();
    assert_eq!(conn.read_to_end(&mut rest).await.unwrap(), 0);
    rig.stop().await.unwrap();
}

#[tokio::test]
async fn a_new_connection_of_the_same_session_replaces_the_old() {
    let hub = Hub::new(&agent_config("s"));
    let connect = |hub: Hub| async move {
        let (a, b) = tokio::io::duplex(64 * 1024);
        let control = tokio::spawn(async move { hub.handle_control(b).await });
        let mut a = a;
        super::protocol::offer(&mut a, &super::protocol::Hello::new("s"))
            .await
            .unwrap();
        let conn = super::protocol::Tuning::default()
            .server()
            .handshake::<_, bytes::Bytes>(a)
            .await
            .unwrap();
        (control, conn)
    };
    let (first, mut first_conn) = connect(hub.clone()).await;
    tokio::spawn(async move { while first_conn.accept().await.is_some() {} });
    hub.wait_connected(true).await;
    let (_second, mut second_conn) = connect(hub.clone()).await;
    tokio::spawn(async move { while second_conn.accept().await.is_some() {} });
    let end = tokio::time::timeout(Duration::from_secs(5), first)
        .await
        .expect("first connection replaced")
        .unwrap();
    assert!(matches!(end, Ok(ControlEnd::Replaced)), "{end:?}");
    assert!(hub.is_connected(), "the second connection serves");
}
