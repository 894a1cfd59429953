//! The in-pod agent (`kubectl-cozy tunnel-agent`): accepts the aggregator's
//! connections on the data port and serve's reverse connection on the control
//! port, and splices each aggregator connection onto a new stream of serve's
//! connection. It never terminates TLS: bytes pass untouched.
//!
//! Listeners:
//!
//! | port | default | who connects |
//! |---|---|---|
//! | data | `0.0.0.0:8443` | kube-apiserver's aggregator, through the Service |
//! | control | `127.0.0.1:7001` | serve, through pods/portforward (the kubelet dials `localhost` in the pod's network namespace; nothing else can reach it) |
//! | health | `0.0.0.0:8081` | the kubelet's probes: `GET /livez`, `GET /readyz` ([`super::health`]) |
//!
//! **Ready means a serve session is connected** (handshake done, keepalive
//! answered). The Service then has endpoints exactly while requests can pass,
//! so the aggregator never routes to an agent that would drop the
//! connection, and an APIService whose serve is gone shows why
//! (`MissingEndpoints`) instead of failing discovery. Serve therefore picks
//! a *running* agent pod, not a Ready one ([`super::portforward::pick_pod`]).
//!
//! One serve session at a time: a new connection with the same session id
//! (serve reconnecting before the agent noticed the old one die) replaces the
//! old one; another session id is refused. An aggregator connection that
//! arrives while no serve is connected waits up to `hold` for one, then is
//! reset; it never hangs.
//!
//! The agent writes nothing to disk and binds unprivileged ports, so it runs
//! as a non-root user with a read-only root filesystem.
//!
//! Session end: [`Agent::run`]'s `stop` future is the hook for the session
//! Lease watcher ([`crate::register::sentinel`], wired in
//! `cmd/tunnel_agent.rs`): it resolves when the Lease expires, the agent
//! stops serving, and the sentinel reaps the session.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use h2::RecvStream;
use http::{Request, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::keepalive::{self, Keepalive, KeepaliveError};
use super::protocol::{self, HandshakeError, Tuning};
use super::splice::{self, Abort, Conn, Outcome};
use super::transport::Io;
use crate::error_chain::error_chain;

/// Default data port (the Service's target port).
pub const DEFAULT_DATA_PORT: u16 = 8443;
/// Default control port (serve's port-forward target).
pub const DEFAULT_CONTROL_PORT: u16 = 7001;
/// Default health port (probes).
pub const DEFAULT_HEALTH_PORT: u16 = 8081;

/// How the agent behaves.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The serve session this agent belongs to.
    pub session: String,
    /// Where the aggregator connects.
    pub data_listen: SocketAddr,
    /// Where serve connects (through port-forward).
    pub control_listen: SocketAddr,
    /// Where probes connect; `None` serves no health endpoint.
    pub health_listen: Option<SocketAddr>,
    /// How long an aggregator connection waits for a serve session.
    pub hold: Duration,
    /// Keepalive pings on serve's connection.
    pub keepalive: Keepalive,
    /// HTTP/2 windows and limits.
    pub tuning: Tuning,
}

impl AgentConfig {
    /// Defaults for `session`, on the default ports.
    pub fn new(session: impl Into<String>) -> Self {
        AgentConfig {
            session: session.into(),
            data_listen: SocketAddr::from(([0, 0, 0, 0], DEFAULT_DATA_PORT)),
            control_listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_CONTROL_PORT)),
            health_listen: Some(SocketAddr::from(([0, 0, 0, 0], DEFAULT_HEALTH_PORT))),
            hold: Duration::from_secs(3),
            keepalive: Keepalive::default(),
            tuning: Tuning::default(),
        }
    }
}

/// Errors of the agent.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A listener could not be bound.
    #[error("listen on {addr} for the {what}")]
    Bind {
        /// Which listener: `data port`, `control port`, `health port`.
        what: &'static str,
        /// The address.
        addr: SocketAddr,
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
}

/// Why one control connection ended.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The hello handshake failed or was refused.
    #[error("tunnel handshake")]
    Handshake(#[source] HandshakeError),
    /// The HTTP/2 handshake failed.
    #[error("HTTP/2 handshake")]
    Http2Handshake(#[source] h2::Error),
    /// The connection failed.
    #[error("serve connection failed")]
    Connection(#[source] h2::Error),
    /// Keepalive declared the transport dead.
    #[error("serve connection keepalive failed")]
    Keepalive(#[source] KeepaliveError),
}

/// How a control connection ended without error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlEnd {
    /// Serve closed the connection (its goodbye).
    Closed,
    /// A newer connection of the same session replaced this one.
    Replaced,
}

#[derive(Clone)]
struct Active {
    id: u64,
    send: h2::client::SendRequest<Bytes>,
}

/// The agent's core, independent of sockets: the current serve session and
/// the handling of control and data connections. [`Agent`] feeds it from
/// TCP listeners; tests feed it in-memory pipes.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<HubInner>,
}

struct HubInner {
    session: String,
    hold: Duration,
    keepalive: Keepalive,
    tuning: Tuning,
    current: watch::Sender<Option<Active>>,
    next_id: AtomicU64,
}

impl super::health::Readiness for Hub {
    fn connected_session(&self) -> Option<String> {
        self.is_connected().then(|| self.session().to_owned())
    }
}

impl Hub {
    /// A hub for `config`'s session (listen addresses are ignored).
    pub fn new(config: &AgentConfig) -> Self {
        Hub {
            inner: Arc::new(HubInner {
                session: config.session.clone(),
                hold: config.hold,
                keepalive: config.keepalive,
                tuning: config.tuning,
                current: watch::channel(None).0,
                next_id: AtomicU64::new(1),
            }),
        }
    }

    /// Whether a serve session is connected: the agent's readiness.
    pub fn is_connected(&self) -> bool {
        self.inner.current.borrow().is_some()
    }

    /// Waits until [`Hub::is_connected`] equals `connected`.
    pub async fn wait_connected(&self, connected: bool) {
        let mut rx = self.inner.current.subscribe();
        let _ = rx.wait_for(|c| c.is_some() == connected).await;
    }

    /// The session id this agent serves.
    pub fn session(&self) -> &str {
        &self.inner.session
    }

    /// Serves one control connection from serve until it ends.
    pub async fn handle_control<T: Io>(&self, mut io: T) -> Result<ControlEnd, ControlError> {
        let hello = protocol::accept(&mut io, &self.inner.session)
            .await
            .map_err(ControlError::Handshake)?;
        let (send, mut conn) = self
            .inner
            .tuning
            .client()
            .handshake::<_, Bytes>(io)
            .await
            .map_err(ControlError::Http2Handshake)?;
        let Some(pings) = conn.ping_pong() else {
            unreachable!("ping_pong is taken once per connection")
        };
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let replaced = self
            .inner
            .current
            .send_replace(Some(Active { id, send }))
            .is_some();
        tracing::info!(
            connection = id,
            serve = %hello.software,
            replaced,
            "serve connected"
        );
        let mut current = self.inner.current.subscribe();
        let result = tokio::select! {
            // Replacement first: dropping the old sender also lets the old
            // connection close itself.
            biased;
            () = async { let _ = current.wait_for(|c| c.as_ref().map(|a| a.id) != Some(id)).await; } => Ok(ControlEnd::Replaced),
            r = &mut conn => match r {
                Ok(()) => Ok(ControlEnd::Closed),
                Err(err) => Err(ControlError::Connection(err)),
            },
            err = keepalive::run(pings, self.inner.keepalive) => Err(ControlError::Keepalive(err)),
        };
        self.retire(id);
        // Dropping `conn` fails every stream still on it; their splices reset
        // the aggregator's connections.
        drop(conn);
        match &result {
            Ok(end) => tracing::info!(connection = id, ?end, "serve disconnected"),
            Err(err) => {
                tracing::warn!(connection = id, error = %error_chain(err), "serve connection lost")
            }
        }
        result
    }

    /// Splices one aggregator connection onto a new stream to serve, or
    /// resets it when no serve is connected within the hold time.
    pub async fn handle_data<C: Conn>(&self, mut conn: C, peer: &str) -> Outcome {
        let Some(mut send) = self.open(peer).await else {
            tracing::info!(%peer, hold = ?self.inner.hold, "no serve session connected; connection reset");
            conn.set_abortive();
            return Outcome::Aborted(Abort::Refused("no serve session connected".into()));
        };
        let request = Request::post(format!(
            "http://kubectl-cozy-tunnel{}",
            protocol::STREAM_PATH
        ))
        .header(protocol::PEER_HEADER, peer)
        .body(())
        .unwrap_or_default();
        let (response, stream) = match send.send_request(request, false) {
            Ok(r) => r,
            Err(err) => {
                tracing::info!(%peer, %err, "open tunnel stream");
                conn.set_abortive();
                return Outcome::Aborted(Abort::Tunnel(err));
            }
        };
        let recv = async move {
            let response = response.await.map_err(Abort::Tunnel)?;
            let status = response.status();
            let mut body = response.into_body();
            if status == StatusCode::OK {
                return Ok(body);
            }
            Err(Abort::Refused(format!(
                "{status}: {}",
                read_text(&mut body).await
            )))
        };
        let outcome = splice::splice(conn, stream, recv).await;
        match &outcome {
            Outcome::Finished { sent, received } => {
                tracing::debug!(%peer, sent, received, "aggregator connection finished")
            }
            Outcome::Aborted(abort) => {
                tracing::debug!(%peer, error = %error_chain(abort), "aggregator connection aborted")
            }
        }
        outcome
    }

    /// A sender ready for a new stream on the current session, waiting up to
    /// the hold time for a session. A session that no longer takes streams
    /// (serve's goodbye arrived) is retired and the next one awaited.
    async fn open(&self, peer: &str) -> Option<h2::client::SendRequest<Bytes>> {
        let deadline = tokio::time::Instant::now() + self.inner.hold;
        let mut rx = self.inner.current.subscribe();
        loop {
            let active = tokio::time::timeout_at(deadline, rx.wait_for(|c| c.is_some()))
                .await
                .ok()?
                .ok()?
                .clone()?;
            match tokio::time::timeout_at(deadline, active.send.ready()).await {
                Ok(Ok(send)) => return Some(send),
                Ok(Err(err)) => {
                    tracing::debug!(%peer, connection = active.id, %err, "serve connection takes no new streams");
                    self.retire(active.id);
                }
                Err(_) => return None,
            }
        }
    }

    fn retire(&self, id: u64) {
        self.inner.current.send_if_modified(|c| {
            if c.as_ref().map(|a| a.id) == Some(id) {
                *c = None;
                true
            } else {
                false
            }
        });
    }
}

/// At most 1 KiB of a refusal's body, as text.
async fn read_text(body: &mut RecvStream) -> String {
    let mut text = Vec::new();
    while text.len() < 1024 {
        match body.data().await {
            Some(Ok(chunk)) => {
                let _ = body.flow_control().release_capacity(chunk.len());
                text.extend_from_slice(&chunk);
            }
            _ => break,
        }
    }
    text.truncate(1024);
    String::from_utf8_lossy(&text).into_owned()
}

/// The agent on TCP listeners.
pub struct Agent {
    hub: Hub,
    data: TcpListener,
    control: TcpListener,
    health: Option<TcpListener>,
}

impl Agent {
    /// Binds the listeners of `config`.
    pub async fn bind(config: AgentConfig) -> Result<Agent, AgentError> {
        let bind = |what: &'static str, addr: SocketAddr| async move {
            TcpListener::bind(addr)
                .await
                .map_err(|source| AgentError::Bind { what, addr, source })
        };
        let data = bind("data port", config.data_listen).await?;
        let control = bind("control port", config.control_listen).await?;
        let health = match config.health_listen {
            Some(addr) => Some(bind("health port", addr).await?),
            None => None,
        };
        Ok(Agent {
            hub: Hub::new(&config),
            data,
            control,
            health,
        })
    }

    /// The data port's address.
    pub fn data_addr(&self) -> SocketAddr {
        local_addr(&self.data)
    }

    /// The control port's address.
    pub fn control_addr(&self) -> SocketAddr {
        local_addr(&self.control)
    }

    /// The health port's address, if any.
    pub fn health_addr(&self) -> Option<SocketAddr> {
        self.health.as_ref().map(local_addr)
    }

    /// The agent's core.
    pub fn hub(&self) -> Hub {
        self.hub.clone()
    }

    /// Accepts connections until `stop` resolves; then closes every
    /// connection and returns.
    pub async fn run(self, stop: impl Future<Output = ()>) -> Result<(), AgentError> {
        let Agent {
            hub,
            data,
            control,
            health,
        } = self;
        let mut tasks = JoinSet::new();
        if let Some(health) = health {
            tasks.spawn(super::health::serve(health, hub.clone()));
        }
        let mut connections = JoinSet::new();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => break,
                accepted = data.accept() => match accepted {
                    Ok((sock, peer)) => {
                        let _ = sock.set_nodelay(true);
                        let hub = hub.clone();
                        connections.spawn(async move {
                            hub.handle_data(sock, &peer.to_string()).await;
                        });
                    }
                    Err(err) => accept_failed("data", err).await,
                },
                accepted = control.accept() => match accepted {
                    Ok((sock, peer)) => {
                        let _ = sock.set_nodelay(true);
                        let hub = hub.clone();
                        connections.spawn(async move {
                            if let Err(err) = hub.handle_control(sock).await
                                && matches!(err, ControlError::Handshake(_) | ControlError::Http2Handshake(_))
                            {
                                tracing::warn!(%peer, error = %error_chain(&err), "control connection rejected");
                            }
                        });
                    }
                    Err(err) => accept_failed("control", err).await,
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        tracing::info!("tunnel agent stopping");
        Ok(())
    }
}

fn local_addr(l: &TcpListener) -> SocketAddr {
    l.local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
}

/// Accept errors (out of file descriptors, …) are transient: log, pause, go on.
async fn accept_failed(which: &str, err: std::io::Error) {
    tracing::warn!(listener = which, %err, "accept failed");
    tokio::time::sleep(Duration::from_millis(100)).await;
}
