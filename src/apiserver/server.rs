//! The HTTPS server: rustls (TLS 1.2+; client certificates requested, not
//! required), HTTP/2 where ALPN chose it and HTTP/1.1 otherwise, a 3 MiB
//! request body limit (413, as kube-apiserver, closing the connection),
//! header-read and request timeouts (the body, too, must arrive within the
//! latter), connections closed gracefully after [`IDLE_TIMEOUT`] with
//! nothing in flight, and graceful shutdown with a drain timeout (the
//! listener is closed at once, so new connections are refused; watch
//! streams are ended first).
//!
//! What each path answers is [`super::routes`]'s. Every request goes
//! through [`crate::auth::Auth`] before routing:
//! delegated authentication (front proxy, x509, TokenReview) and
//! authorization (SubjectAccessReview); health paths are anonymous. The
//! handshake only requests a client certificate; chains are verified per
//! request by `auth` (see [`crate::auth::tls`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::Instrument;

use super::handlers::ApiState;
use super::response::{self, Body};
use super::routes::{Request, Router};
use super::{metrics, request_body};
use crate::apimachinery::query::{self, Query};
use crate::apimachinery::request_info::{self, Route, Verb};
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::UserInfo;
use crate::auth::{Auth, PeerCertificates};

/// kube-apiserver's request body limit.
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;
/// Time allowed for a client to send its request headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request header block accepted over HTTP/2: room for a user
/// of thousands of groups through the aggregator's `X-Remote-Group`
/// headers, a quarter of Go's 1 MiB default, since a stream may hold a
/// block this large unfinished, from a client that need not authenticate
/// until it ends.
pub const MAX_HEADER_BYTES: u32 = 256 * 1024;
/// Connections whose client is not known yet ("unproven": no certificate a
/// trusted CA signed, no authenticated request yet) held at once: beyond
/// it a new one is closed after its handshake, so that clients with no
/// credentials cannot hold the memory of unbounded connections. The
/// aggregator and x509 users prove themselves at the handshake (and are
/// never turned away), bearer-token users with their first request.
pub const MAX_UNPROVEN_CONNECTIONS: usize = 1024;
/// How long a connection may stay unproven: a health probe's is done long
/// before; one that never authenticates is then closed, so that nobody
/// keeps [`MAX_UNPROVEN_CONNECTIONS`] full with idle connections.
pub const UNPROVEN_LIFETIME: Duration = Duration::from_secs(30);
/// How long a connection may stay open with no request in flight (and no
/// watch streaming) before it is closed gracefully (HTTP/2: `GOAWAY`), as
/// kube-apiserver's `IdleTimeout`: HTTP/2 clients answer the server's
/// keep-alive pings, which would otherwise keep an unused connection for
/// ever. (HTTP/1.1 connections are closed sooner: hyper's header read
/// timeout runs while one waits for its next request.)
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// Limit on non-watch requests.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// What the server needs to run.
pub struct ServerConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Serving certificate chain, PEM.
    pub cert_pem: String,
    /// Serving key, PEM.
    pub key_pem: String,
    /// Authentication and authorization of every request.
    pub auth: Arc<Auth>,
    /// Handlers' state.
    pub state: ApiState,
    /// What connections may hold, and for how long.
    pub connections: ConnectionLimits,
}

/// How many connections of clients not yet known are held, and how long;
/// how long any connection may stay idle ([`MAX_UNPROVEN_CONNECTIONS`],
/// [`UNPROVEN_LIFETIME`], [`IDLE_TIMEOUT`]; smaller in tests).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections of clients not yet known, at once.
    pub unproven: usize,
    /// How long each of those may stay unproven before it is closed.
    pub unproven_lifetime: Duration,
    /// How long a connection may stay idle before it is closed gracefully.
    pub idle: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            unproven: MAX_UNPROVEN_CONNECTIONS,
            unproven_lifetime: UNPROVEN_LIFETIME,
            idle: IDLE_TIMEOUT,
        }
    }
}

/// Server start-up failures.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The TLS material is unusable.
    #[error("TLS configuration: {0}")]
    Tls(String),
    /// The address is taken or not ours.
    #[error("listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A running server.
pub struct RunningServer {
    /// The bound address (the real port when 0 was asked for).
    pub local_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningServer {
    /// Stops accepting, ends watches, and waits up to `drain` for requests in flight.
    pub async fn shutdown(self, drain: Duration) {
        let _ = self.shutdown.send(true);
        if tokio::time::timeout(drain + Duration::from_secs(1), self.task)
            .await
            .is_err()
        {
            tracing::warn!("server did not drain within {drain:?}");
        }
    }
}

struct Shared {
    router: Router,
    auth: Arc<Auth>,
}

/// Binds and starts serving.
pub async fn start(config: ServerConfig) -> Result<RunningServer, ServerError> {
    let tls = tls_config(&config)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServerError::Bind {
            addr: config.listen,
            source,
        })?;
    let local_addr = listener.local_addr().map_err(|source| ServerError::Bind {
        addr: config.listen,
        source,
    })?;
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let shared = Arc::new(Shared {
        router: Router::new(config.state, shutdown_rx.clone()),
        auth: config.auth,
    });
    let task = tokio::spawn(accept_loop(
        listener,
        acceptor,
        shared,
        config.connections,
        shutdown_rx,
    ));
    Ok(RunningServer {
        local_addr,
        shutdown: shutdown_tx,
        task,
    })
}

fn tls_config(config: &ServerConfig) -> Result<rustls::ServerConfig, ServerError> {
    let tls_err = |e: &dyn std::fmt::Display| ServerError::Tls(e.to_string());
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(config.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| tls_err(&e))?;
    let key = PrivateKeyDer::from_pem_slice(config.key_pem.as_bytes()).map_err(|e| tls_err(&e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Auth::client_cert_verifier();
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| tls_err(&e))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .map_err(|e| tls_err(&e))?;
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tls)
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    shared: Arc<Shared>,
    limits: ConnectionLimits,
    mut shutdown: watch::Receiver<bool>,
) {
    let unproven_places = Arc::new(tokio::sync::Semaphore::new(limits.unproven));
    // Every connection's task holds a clone; when all are dropped, the
    // receiver's `recv` ends: the drain is over.
    let (open_connections, mut all_closed) = tokio::sync::mpsc::channel::<()>(1);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.changed() => break,
        };
        // Without it, a small write that follows another (a watch event
        // after the response headers, two events in a row) waits for the
        // client's delayed ACK: ~40 ms (Nagle). Go servers set it by default.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(%peer, "TCP_NODELAY: {e}");
        }
        let unproven_places = unproven_places.clone();
        let acceptor = acceptor.clone();
        let shared = shared.clone();
        let ending = Ending {
            shutdown: shutdown.clone(),
            _open: open_connections.clone(),
        };
        tokio::spawn(async move {
            let tls = match tokio::time::timeout(HEADER_READ_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, "TLS handshake failed: {e}");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
            };
            let certs = Arc::new(PeerCertificates::from_chain(
                tls.get_ref().1.peer_certificates(),
            ));
            // A client not known by its certificate takes a place among
            // the unproven until a request of its authenticates.
            let unproven = match shared.auth.trusts_certificate(&certs) {
                true => Unproven::default(),
                false => match unproven_places.try_acquire_owned() {
                    Ok(permit) => Unproven::new(permit),
                    Err(_) => {
                        tracing::debug!(%peer, "too many connections of unknown clients are open; closing");
                        return;
                    }
                },
            };
            let alpn_h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            let connection = Arc::new(Connection::new(unproven));
            let service = {
                let connection = connection.clone();
                hyper::service::service_fn(move |req| {
                    let open = connection.begin();
                    let shared = shared.clone();
                    let certs = certs.clone();
                    // Boxed: hyper's HTTP/1 connection keeps a slot the size
                    // of its service's future for the connection's lifetime,
                    // in flight or not, and a request's future (routing and
                    // every handler) is kilobytes. A watch answers at once
                    // and streams for minutes, so its connection would carry
                    // that slot unused; boxed, the slot is a pointer and the
                    // future is freed when the response head is out.
                    Box::pin(async move {
                        Ok::<_, std::convert::Infallible>(serve(&shared, &certs, open, req).await)
                    })
                })
            };
            // HTTP/2 only where ALPN chose it (RFC 9113 §3.2: over TLS, h2
            // is negotiated, never guessed). Each protocol's connection runs
            // in a task of its own, sized for that protocol alone: one task
            // for both (or hyper-util's auto-detecting connection) would
            // carry the larger HTTP/2 state, and the handshake's, for the
            // life of every HTTP/1.1 watch.
            let io = TokioIo::new(tls);
            if alpn_h2 {
                let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .timer(TokioTimer::new())
                    .keep_alive_interval(Duration::from_secs(30))
                    .keep_alive_timeout(Duration::from_secs(20))
                    .max_header_list_size(MAX_HEADER_BYTES)
                    .serve_connection(io, service);
                tokio::spawn(drive(conn, connection, peer, limits, ending));
            } else {
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_READ_TIMEOUT)
                    .serve_connection(io, service);
                tokio::spawn(drive(conn, connection, peer, limits, ending));
            }
        });
    }
    // Closed before draining: a new client is refused at once rather than
    // left in the kernel's accept queue until the drain ends.
    drop(listener);
    drop(open_connections);
    if tokio::time::timeout(Duration::from_secs(10), all_closed.recv())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the drain timeout; closing them");
    }
}

/// What ends a connection from outside: the server's shutdown (a graceful
/// close), and the drain's count of open connections (held while open).
struct Ending {
    shutdown: watch::Receiver<bool>,
    _open: tokio::sync::mpsc::Sender<()>,
}

/// Serves one connection to its end, closing it:
/// - at once, when its first request is not complete within
///   [`HEADER_READ_TIMEOUT`] (HTTP/1's header read timeout does not cover
///   HTTP/2, where a client can announce a large HEADERS frame and trickle
///   its bytes for ever), or when it is still unproven after
///   `limits.unproven_lifetime`;
/// - gracefully (HTTP/2 `GOAWAY`; HTTP/1.1 after the response in flight),
///   when the server shuts down or the connection has been idle for
///   `limits.idle`.
async fn drive<C>(
    conn: C,
    connection: Arc<Connection>,
    peer: SocketAddr,
    limits: ConnectionLimits,
    mut ending: Ending,
) where
    C: hyper_util::server::graceful::GracefulConnection,
    C::Error: std::fmt::Display,
{
    tokio::pin!(conn);
    let opened = tokio::time::Instant::now();
    let mut requested = false;
    let mut closing = false;
    loop {
        tokio::select! {
            result = &mut conn => {
                if let Err(e) = result {
                    tracing::debug!(%peer, "connection ended: {e}");
                }
                return;
            }
            () = connection.first_request.notified(), if !requested => requested = true,
            () = tokio::time::sleep_until(opened + HEADER_READ_TIMEOUT), if !requested => {
                tracing::debug!(%peer, "no complete request within {HEADER_READ_TIMEOUT:?}; closing");
                return;
            }
            () = tokio::time::sleep_until(opened + limits.unproven_lifetime),
                if requested && connection.unproven.held() =>
            {
                if connection.unproven.held() {
                    tracing::debug!(%peer, "no authenticated request within {:?}; closing", limits.unproven_lifetime);
                    return;
                }
            }
            () = connection.idle_for(limits.idle), if requested && !closing => {
                tracing::debug!(%peer, "idle for {:?}; closing", limits.idle);
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
            _ = ending.shutdown.changed(), if !closing => {
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// One connection's bookkeeping: whether its client is proven, its first
/// request, and its requests in flight (for the idle timeout; a watch's
/// lasts as long as its stream). Touched twice per request with no lock and
/// no wake-up: the connection's task reads it when its idle timer fires.
struct Connection {
    unproven: Unproven,
    first_request: tokio::sync::Notify,
    in_flight: std::sync::atomic::AtomicUsize,
    /// When the last request ended, in microseconds since `opened`.
    last_ended_us: std::sync::atomic::AtomicU64,
    opened: tokio::time::Instant,
}

impl Connection {
    fn new(unproven: Unproven) -> Self {
        Connection {
            unproven,
            first_request: tokio::sync::Notify::new(),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            last_ended_us: std::sync::atomic::AtomicU64::new(0),
            opened: tokio::time::Instant::now(),
        }
    }

    /// A request begins; it is in flight until the guard is dropped.
    fn begin(self: &Arc<Self>) -> InFlight {
        self.first_request.notify_one();
        self.in_flight
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// Completes once no request has been in flight for `idle`.
    async fn idle_for(&self, idle: Duration) {
        use std::sync::atomic::Ordering;
        loop {
            let wake = if self.in_flight.load(Ordering::Acquire) > 0 {
                tokio::time::Instant::now() + idle
            } else {
                let ended =
                    self.opened + Duration::from_micros(self.last_ended_us.load(Ordering::Acquire));
                let wake = ended + idle;
                if wake <= tokio::time::Instant::now() {
                    return;
                }
                wake
            };
            tokio::time::sleep_until(wake).await;
        }
    }
}

/// A request in flight on its [`Connection`], until dropped.
struct InFlight(Arc<Connection>);

impl Drop for InFlight {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering;
        let connection = &self.0;
        let us = connection.opened.elapsed().as_micros() as u64;
        connection.last_ended_us.fetch_max(us, Ordering::AcqRel);
        connection.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A connection's place among [`MAX_UNPROVEN_CONNECTIONS`], held until its
/// client proves who it is (an authenticated request) or the connection
/// ends; none (`default`) for a client its certificate proved. It is on
/// every request's path: nothing to do for the latter, one flag to read
/// for any other once proved.
#[derive(Clone, Default)]
struct Unproven(Option<Arc<Place>>);

struct Place {
    proven: std::sync::atomic::AtomicBool,
    permit: std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>,
}

impl Unproven {
    fn new(permit: tokio::sync::OwnedSemaphorePermit) -> Self {
        Unproven(Some(Arc::new(Place {
            proven: std::sync::atomic::AtomicBool::new(false),
            permit: std::sync::Mutex::new(Some(permit)),
        })))
    }

    /// The client is known: the place is given back.
    fn prove(&self) {
        if let Some(place) = &self.0
            && !place.proven.swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            drop(
                place
                    .permit
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take(),
            );
        }
    }

    fn held(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|place| !place.proven.load(std::sync::atomic::Ordering::Acquire))
    }
}

/// One answered request, as an access log sees it (the status is that of
/// the response head; a watch's latency is its time to first byte).
#[derive(Debug)]
pub struct Access<'a> {
    /// The method.
    pub method: &'a Method,
    /// The path (no query).
    pub path: &'a str,
    /// The response status.
    pub status: StatusCode,
    /// From the request's arrival to its response head.
    pub latency: Duration,
    /// The authenticated user, when authentication succeeded.
    pub user: Option<&'a str>,
    /// Whether it is a watch (`watch=true`, or under `/watch/`): its
    /// latency is its time to the response head, the stream goes on.
    pub watch: bool,
}

/// Receives every answered request.
pub type AccessLog = Box<dyn Fn(&Access<'_>) + Send + Sync>;

static ACCESS_LOG: std::sync::OnceLock<AccessLog> = std::sync::OnceLock::new();

/// Installs the process's access log (`serve` without `-q`); only the first
/// call takes effect. Returns whether this one did.
pub fn set_access_log(log: AccessLog) -> bool {
    ACCESS_LOG.set(log).is_ok()
}

/// Serves one request; an authenticated one proves its connection's client
/// (an anonymous health probe does not).
async fn serve(
    shared: &Shared,
    peer: &PeerCertificates,
    in_flight: InFlight,
    req: http::Request<Incoming>,
) -> Response<Body> {
    let log = ACCESS_LOG.get();
    let started = std::time::Instant::now();
    let logged = log.map(|_| (req.method().clone(), req.uri().path().to_owned()));
    let Served {
        response,
        user,
        watch,
        kind,
    } = serve_request(shared, peer, req).await;
    let open_watch = kind
        .and_then(|kind| metrics::requests().answered(kind, response.status().as_u16(), started));
    if user
        .as_ref()
        .is_some_and(|u| u.name != crate::apimachinery::user::ANONYMOUS_USER)
    {
        in_flight.0.unproven.prove();
    }
    // A watch is in flight while it streams; any other answer is written
    // at once (a graceful close lets it finish anyway).
    let response = match watch {
        true => response.map(|body| {
            http_body_util::BodyExt::boxed(Streaming {
                body,
                _in_flight: in_flight,
                _open: open_watch,
            })
        }),
        false => response,
    };
    let (Some(log), Some((method, path))) = (log, logged) else {
        return response;
    };
    log(&Access {
        method: &method,
        path: &path,
        status: response.status(),
        latency: started.elapsed(),
        user: user.as_deref().map(|u| u.name.as_str()),
        watch,
    });
    response
}

/// A watch's body: its request stays in flight, and counted open in the
/// metrics, until the stream ends.
struct Streaming {
    body: Body,
    /// Held, never read: dropped with the body.
    _in_flight: InFlight,
    /// Likewise (none for a watch refused at once).
    _open: Option<metrics::OpenWatch>,
}

impl hyper::body::Body for Streaming {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// A request answered: the response, who asked (when authenticated),
/// whether it was a watch and, for an authorized request for a served
/// resource, what the metrics count it as; for the connection's
/// bookkeeping, the access log and the metrics.
struct Served {
    response: Response<Body>,
    user: Option<Arc<UserInfo>>,
    watch: bool,
    kind: Option<metrics::RequestKind>,
}

/// One request, from its head to its response (a `debug` span per request
/// and per stage: `auth`, `body`; the handlers add theirs).
async fn serve_request(
    shared: &Shared,
    peer: &PeerCertificates,
    req: http::Request<Incoming>,
) -> Served {
    let span = tracing::debug_span!("request", method = %req.method());
    serve_request_in(shared, peer, req).instrument(span).await
}

async fn serve_request_in(
    shared: &Shared,
    peer: &PeerCertificates,
    req: http::Request<Incoming>,
) -> Served {
    let (mut parts, body) = req.into_parts();
    let query = query::parse_query(parts.uri.query());
    let route = request_info::route(&parts.method, parts.uri.path(), &query);
    let watch = matches!(&route, Route::Resource(r) if r.verb == Verb::Watch);
    let user = match shared
        .auth
        .check(
            peer,
            &parts.method,
            parts.uri.path(),
            &parts.headers,
            &query,
            &route,
        )
        .instrument(tracing::debug_span!("auth"))
        .await
    {
        Ok(user) => user,
        Err(e) => {
            return Served {
                response: response::error(&e),
                user: None,
                watch,
                kind: None,
            };
        }
    };
    shared.auth.strip_credentials(&mut parts.headers);
    tracing::debug!(user = %user.name, method = %parts.method, path = parts.uri.path(), "request");
    let kind = match &route {
        Route::Resource(request) if shared.router.serves(request) => Some(
            metrics::RequestKind::of(&parts.method, request, &query, &parts.headers),
        ),
        _ => None,
    };
    let response = serve_authorized(shared, &user, parts, body, route, query).await;
    Served {
        response,
        user: Some(user),
        watch,
        kind,
    }
}

async fn serve_authorized(
    shared: &Shared,
    user: &UserInfo,
    parts: http::request::Parts,
    body: Incoming,
    route: Route,
    query: Query,
) -> Response<Body> {
    // The body is read within the request timeout; watches send none worth
    // waiting for either.
    let body = match request_body::read(body, MAX_BODY_BYTES, REQUEST_TIMEOUT)
        .instrument(tracing::debug_span!("body"))
        .await
    {
        Ok(body) => body,
        Err(e) => return request_body::refusal(&e, parts.version),
    };
    let is_watch = matches!(&route, Route::Resource(r) if r.verb == Verb::Watch);
    let work = shared.router.route(
        route,
        Request {
            method: &parts.method,
            headers: &parts.headers,
            query: &query,
            body,
            user,
        },
    );
    let mut response = if is_watch {
        work.await
    } else {
        match tokio::time::timeout(REQUEST_TIMEOUT, work).await {
            Ok(r) => r,
            Err(_) => response::error(&ApiError::timeout("request did not complete within 60s")),
        }
    };
    if parts.method == Method::HEAD {
        *response.body_mut() = response::full(Bytes::new());
    }
    response
}
