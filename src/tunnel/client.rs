//! Serve's side of the tunnel: keeps one transport connection to the agent,
//! accepts the streams the agent opens (one per aggregator connection) and
//! splices each onto a new connection to the local upstream (the API server's
//! HTTPS listener), reconnecting with backoff when the transport drops.
//!
//! ```no_run
//! # async fn f(client: kube::Client) -> Result<(), kubectl_cozy::tunnel::ClientError> {
//! use std::sync::Arc;
//! use kubectl_cozy::tunnel::{ClientConfig, PortForwardTransport, TcpUpstream, TunnelClient};
//!
//! let transport = PortForwardTransport::new(client, "cozy-system", "app=cozy-tunnel-agent", 7001);
//! let upstream = TcpUpstream::new("127.0.0.1:6443".parse().unwrap());
//! let tunnel = TunnelClient::new(Arc::new(transport), Arc::new(upstream), ClientConfig::new("session-id"));
//! let mut status = tunnel.status(); // show it: connected / reconnecting, attempt, last error
//! tunnel.run(async { tokio::signal::ctrl_c().await.ok(); }).await // goodbye on Ctrl-C
//! # }
//! ```

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use h2::server::SendResponse;
use h2::{Reason, RecvStream};
use http::{Method, Request, Response};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::backoff::Backoff;
use super::keepalive::{self, Keepalive, KeepaliveError};
use super::protocol::{self, HandshakeError, Hello, Tuning};
use super::splice::{self, Conn, Outcome};
use super::transport::{BoxIo, Connected, Transport, TransportError};
use crate::error_chain::error_chain;

/// How the client behaves.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The serve session; the agent refuses any other.
    pub session: String,
    /// Keepalive pings on the transport.
    pub keepalive: Keepalive,
    /// Delays between reconnect attempts.
    pub backoff: Backoff,
    /// HTTP/2 windows and limits.
    pub tuning: Tuning,
    /// Return an error when the transport drops (or cannot be opened) instead
    /// of reconnecting: for scripts.
    pub exit_on_disconnect: bool,
    /// Give up after this many consecutive failed attempts; `None` retries
    /// forever.
    pub max_reconnect_attempts: Option<u32>,
    /// Limit for opening the transport plus both handshakes.
    pub connect_timeout: Duration,
    /// Limit for connecting to the local upstream for one stream.
    pub upstream_timeout: Duration,
    /// On shutdown, how long streams in flight may finish after the goodbye.
    pub shutdown_grace: Duration,
    /// A session that lasted this long resets the backoff to its first step.
    pub stable_after: Duration,
}

impl ClientConfig {
    /// Defaults for `session`.
    pub fn new(session: impl Into<String>) -> Self {
        ClientConfig {
            session: session.into(),
            keepalive: Keepalive::default(),
            backoff: Backoff::default(),
            tuning: Tuning::default(),
            exit_on_disconnect: false,
            max_reconnect_attempts: None,
            connect_timeout: Duration::from_secs(15),
            upstream_timeout: Duration::from_secs(5),
            shutdown_grace: Duration::from_secs(2),
            stable_after: Duration::from_secs(10),
        }
    }
}

/// Where the tunnel's streams go on serve's side.
pub trait Upstream: Send + Sync + 'static {
    /// Opens a connection for one tunnelled stream.
    fn connect(&self) -> BoxFuture<'static, io::Result<Box<dyn Conn>>>;
}

/// TCP to a local address: the API server's HTTPS listener.
#[derive(Debug, Clone)]
pub struct TcpUpstream {
    addr: SocketAddr,
}

impl TcpUpstream {
    /// An upstream that dials `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        TcpUpstream { addr }
    }
}

impl Upstream for TcpUpstream {
    fn connect(&self) -> BoxFuture<'static, io::Result<Box<dyn Conn>>> {
        let addr = self.addr;
        Box::pin(async move {
            let stream = tokio::net::TcpStream::connect(addr).await?;
            let _ = stream.set_nodelay(true);
            Ok(Box::new(stream) as Box<dyn Conn>)
        })
    }
}

/// An upstream from a closure, e.g. one handing streams to an in-process
/// server over [`tokio::io::duplex`].
pub fn upstream_fn<F, Fut>(f: F) -> FnUpstream<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = io::Result<Box<dyn Conn>>> + Send + 'static,
{
    FnUpstream(f)
}

/// See [`upstream_fn`].
pub struct FnUpstream<F>(F);

impl<F, Fut> Upstream for FnUpstream<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = io::Result<Box<dyn Conn>>> + Send + 'static,
{
    fn connect(&self) -> BoxFuture<'static, io::Result<Box<dyn Conn>>> {
        Box::pin((self.0)())
    }
}

/// What the tunnel is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TunnelState {
    /// Opening the first connection (retrying until it opens, with
    /// [`TunnelStatus::last_error`] saying why it has not yet).
    Connecting,
    /// Connected; streams flow.
    Connected {
        /// What the transport reached (`pod/<name>`, an address).
        endpoint: String,
        /// The agent's software, e.g. `kubectl-cozy 0.1.0`.
        agent: String,
        /// When this connection was established.
        since: Instant,
    },
    /// After a first connection: it dropped, or could not be opened again;
    /// retrying.
    Reconnecting {
        /// Consecutive failed attempts so far (1 for the first retry).
        attempt: u32,
        /// Delay before the next attempt.
        retry_in: Duration,
    },
    /// The client stopped (shutdown, or gave up).
    Stopped,
}

/// The tunnel's state as `serve` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunnelStatus {
    /// What the tunnel is doing.
    pub state: TunnelState,
    /// The last failure, with its causes, if any.
    pub last_error: Option<String>,
    /// How many connections were established so far.
    pub connections: u64,
}

/// Why a session (one transport connection) ended or could not start.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The transport could not be opened.
    #[error("open the tunnel transport")]
    Transport(#[source] TransportError),
    /// The hello handshake failed.
    #[error("tunnel handshake with the agent")]
    Handshake(#[source] HandshakeError),
    /// The HTTP/2 handshake failed.
    #[error("HTTP/2 handshake with the agent")]
    Http2Handshake(#[source] h2::Error),
    /// Opening and handshaking took too long.
    #[error("connecting to the agent took longer than {0:?}")]
    ConnectTimeout(Duration),
    /// The connection failed.
    #[error("tunnel connection failed")]
    Connection(#[source] h2::Error),
    /// Keepalive declared the transport dead.
    #[error("tunnel keepalive failed")]
    Keepalive(#[source] KeepaliveError),
    /// The agent closed the connection.
    #[error("the agent closed the tunnel connection")]
    ClosedByAgent,
}

/// Why the client stopped on its own.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The agent refused this session for good (another session's agent, or
    /// another protocol version).
    #[error("the tunnel agent refused this session")]
    Refused(#[source] HandshakeError),
    /// The tunnel dropped and `exit_on_disconnect` is set.
    #[error("the tunnel is disconnected (exit on disconnect is set)")]
    Disconnected(#[source] SessionError),
    /// `max_reconnect_attempts` attempts failed in a row.
    #[error("the tunnel gave up after {attempts} failed reconnect attempts")]
    GaveUp {
        /// How many attempts failed.
        attempts: u32,
        /// The last failure.
        #[source]
        last: SessionError,
    },
}

/// The serve-side tunnel client. Build it, take [`TunnelClient::status`],
/// then [`TunnelClient::run`] it.
pub struct TunnelClient {
    transport: Arc<dyn Transport>,
    upstream: Arc<dyn Upstream>,
    config: ClientConfig,
    status: watch::Sender<TunnelStatus>,
}

enum Ended {
    /// We were asked to stop; the goodbye was sent.
    Stopped,
    /// The session failed.
    Lost {
        error: SessionError,
        endpoint: Option<String>,
        connected_for: Option<Duration>,
    },
}

impl TunnelClient {
    /// A client over `transport`, handing streams to `upstream`.
    pub fn new(
        transport: Arc<dyn Transport>,
        upstream: Arc<dyn Upstream>,
        config: ClientConfig,
    ) -> Self {
        let (status, _) = watch::channel(TunnelStatus {
            state: TunnelState::Connecting,
            last_error: None,
            connections: 0,
        });
        TunnelClient {
            transport,
            upstream,
            config,
            status,
        }
    }

    /// The tunnel's state, updated on every change.
    pub fn status(&self) -> watch::Receiver<TunnelStatus> {
        self.status.subscribe()
    }

    /// Runs until `stop` resolves (then says goodbye to the agent, lets
    /// streams in flight finish for [`ClientConfig::shutdown_grace`], and
    /// returns `Ok`) or the client gives up (permanent refusal,
    /// `exit_on_disconnect`, `max_reconnect_attempts`).
    pub async fn run(self, stop: impl Future<Output = ()>) -> Result<(), ClientError> {
        let (stop_tx, stop_rx) = watch::channel(false);
        let status = self.status.clone();
        let inner = self.run_inner(stop_rx);
        tokio::pin!(inner);
        let result = tokio::select! {
            r = &mut inner => r,
            () = stop => {
                let _ = stop_tx.send(true);
                inner.await
            }
        };
        status.send_modify(|s| s.state = TunnelState::Stopped);
        result
    }

    async fn run_inner(self, mut stop: watch::Receiver<bool>) -> Result<(), ClientError> {
        let mut rng = fastrand::Rng::new();
        let mut attempt = 0u32;
        loop {
            let (error, endpoint, connected_for) = match self.session(&mut stop).await {
                Ended::Stopped => return Ok(()),
                Ended::Lost {
                    error,
                    endpoint,
                    connected_for,
                } => (error, endpoint, connected_for),
            };
            let message = error_chain(&error);
            let connected_before = self.status.borrow().connections > 0;
            match connected_for {
                Some(d) => tracing::warn!(error = %message, after = ?d, "tunnel connection lost"),
                // Until the first connection, failing is waiting (for the
                // agent pod to run): the caller shows that as progress.
                None if !connected_before => {
                    tracing::debug!(error = %message, "tunnel not connected yet");
                }
                None => tracing::warn!(error = %message, "tunnel connect failed"),
            }
            self.status
                .send_modify(|s| s.last_error = Some(message.clone()));
            if let SessionError::Handshake(h) = &error
                && h.is_permanent()
            {
                let SessionError::Handshake(h) = error else {
                    unreachable!()
                };
                return Err(ClientError::Refused(h));
            }
            if connected_for.is_none()
                && let Some(endpoint) = &endpoint
            {
                self.transport.failed(endpoint);
            }
            if self.config.exit_on_disconnect {
                return Err(ClientError::Disconnected(error));
            }
            if connected_for.is_some_and(|d| d >= self.config.stable_after) {
                attempt = 0;
            }
            attempt = attempt.saturating_add(1);
            if let Some(max) = self.config.max_reconnect_attempts
                && attempt > max
            {
                return Err(ClientError::GaveUp {
                    attempts: attempt - 1,
                    last: error,
                });
            }
            let delay = self.config.backoff.delay(attempt, &mut rng);
            if connected_before {
                self.status.send_modify(|s| {
                    s.state = TunnelState::Reconnecting {
                        attempt,
                        retry_in: delay,
                    }
                });
            }
            tracing::info!(attempt, retry_in = ?delay, "tunnel reconnecting");
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = stopped(&mut stop) => return Ok(()),
            }
        }
    }

    /// Opens the transport, handshakes, and serves streams until the
    /// connection fails or `stop` is set.
    async fn session(&self, stop: &mut watch::Receiver<bool>) -> Ended {
        let mut endpoint = None;
        let connect = self.connect(&mut endpoint);
        let connected = tokio::select! {
            r = tokio::time::timeout(self.config.connect_timeout, connect) => match r {
                Ok(r) => r,
                Err(_) => Err(SessionError::ConnectTimeout(self.config.connect_timeout)),
            },
            () = stopped(stop) => return Ended::Stopped,
        };
        let (mut conn, agent) = match connected {
            Ok(c) => c,
            Err(error) => {
                return Ended::Lost {
                    error,
                    endpoint,
                    connected_for: None,
                };
            }
        };
        let endpoint = endpoint.unwrap_or_default();
        let since = Instant::now();
        tracing::info!(%endpoint, %agent, "tunnel connected");
        self.status.send_modify(|s| {
            s.state = TunnelState::Connected {
                endpoint: endpoint.clone(),
                agent,
                since,
            };
            s.connections += 1;
        });

        let Some(pings) = conn.ping_pong() else {
            unreachable!("ping_pong is taken once per connection")
        };
        let keepalive = keepalive::run(pings, self.config.keepalive);
        tokio::pin!(keepalive);
        let mut streams = JoinSet::new();
        let error = loop {
            tokio::select! {
                accepted = conn.accept() => match accepted {
                    Some(Ok((req, respond))) => {
                        streams.spawn(serve_stream(req, respond, self.upstream.clone(), self.config.upstream_timeout));
                    }
                    Some(Err(err)) => break SessionError::Connection(err),
                    None => break SessionError::ClosedByAgent,
                },
                err = &mut keepalive => break SessionError::Keepalive(err),
                () = stopped(stop) => {
                    self.goodbye(conn, streams).await;
                    return Ended::Stopped;
                }
                Some(_) = streams.join_next(), if !streams.is_empty() => {}
            }
        };
        // Dropping the connection fails every stream on it (their splices
        // reset the local side); reap them in the background.
        drop(conn);
        reap(streams);
        Ended::Lost {
            error,
            endpoint: Some(endpoint),
            connected_for: Some(since.elapsed()),
        }
    }

    async fn connect(
        &self,
        endpoint: &mut Option<String>,
    ) -> Result<(h2::server::Connection<BoxIo, Bytes>, String), SessionError> {
        let Connected {
            mut io,
            endpoint: ep,
        } = self
            .transport
            .connect()
            .await
            .map_err(SessionError::Transport)?;
        *endpoint = Some(ep);
        let agent = protocol::offer(&mut io, &Hello::new(&self.config.session))
            .await
            .map_err(SessionError::Handshake)?;
        let conn = self
            .config
            .tuning
            .server()
            .handshake(io)
            .await
            .map_err(SessionError::Http2Handshake)?;
        Ok((conn, agent))
    }

    /// GOAWAY, then streams in flight get the grace period.
    async fn goodbye(
        &self,
        mut conn: h2::server::Connection<BoxIo, Bytes>,
        mut streams: JoinSet<()>,
    ) {
        tracing::info!("tunnel saying goodbye to the agent");
        conn.graceful_shutdown();
        let upstream = self.upstream.clone();
        let timeout = self.config.upstream_timeout;
        let drain = async {
            while let Some(Ok((req, respond))) = conn.accept().await {
                streams.spawn(serve_stream(req, respond, upstream.clone(), timeout));
            }
            while streams.join_next().await.is_some() {}
        };
        if tokio::time::timeout(self.config.shutdown_grace, drain)
            .await
            .is_err()
        {
            tracing::info!("tunnel streams still open after the grace period are reset");
        }
    }
}

/// Resolves once stop is requested (the watch guard is not held across
/// awaits, keeping futures `Send`).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Lets the streams of a dead connection end on their own (they fail with
/// it), and aborts any still running a few seconds later.
fn reap(mut streams: JoinSet<()>) {
    if streams.is_empty() {
        return;
    }
    tokio::spawn(async move {
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            while streams.join_next().await.is_some() {}
        })
        .await;
    });
}

/// One stream from the agent: connect upstream, answer, splice.
async fn serve_stream(
    req: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
    upstream: Arc<dyn Upstream>,
    timeout: Duration,
) {
    if req.method() != Method::POST || req.uri().path() != protocol::STREAM_PATH {
        tracing::debug!(method = %req.method(), uri = %req.uri(), "unknown tunnel request");
        respond.send_reset(Reason::REFUSED_STREAM);
        return;
    }
    let peer = req
        .headers()
        .get(protocol::PEER_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned();
    let local = match tokio::time::timeout(timeout, upstream.connect()).await {
        Ok(Ok(local)) => local,
        Ok(Err(err)) => {
            return refuse(
                respond,
                &peer,
                format!("connect to the local server: {err}"),
            );
        }
        Err(_) => {
            return refuse(
                respond,
                &peer,
                format!("connect to the local server: no answer within {timeout:?}"),
            );
        }
    };
    let send = match respond.send_response(Response::new(()), false) {
        Ok(send) => send,
        Err(err) => {
            tracing::debug!(%peer, %err, "tunnel stream gone before it was answered");
            return;
        }
    };
    let body = req.into_body();
    match splice::splice(local, send, async move { Ok(body) }).await {
        Outcome::Finished { sent, received } => {
            tracing::debug!(%peer, sent, received, "tunnel stream finished");
        }
        Outcome::Aborted(abort) => {
            tracing::debug!(%peer, error = %error_chain(&abort), "tunnel stream aborted");
        }
    }
}

fn refuse(mut respond: SendResponse<Bytes>, peer: &str, message: String) {
    tracing::warn!(%peer, error = %message, "tunnel stream refused");
    let response = Response::builder()
        .status(protocol::STATUS_UPSTREAM_FAILED)
        .body(())
        .unwrap_or_default();
    if let Ok(mut send) = respond.send_response(response, false) {
        let _ = send.send_data(Bytes::from(message), true);
    }
}
