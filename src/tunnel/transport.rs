//! Transports: how serve opens a new bidirectional byte stream to the agent's
//! control port. The client calls [`Transport::connect`] once per (re)connect.
//! Implementations: plain TCP ([`TcpTransport`], tests and direct routes),
//! kube-apiserver's pods/portforward ([`super::portforward`]), and any closure
//! ([`from_fn`]).

use std::future::Future;
use std::net::SocketAddr;

use futures::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncWrite};

/// A byte stream a transport opened.
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// A boxed [`Io`].
pub type BoxIo = Box<dyn Io>;

/// An open transport connection.
pub struct Connected {
    /// The byte stream to the agent's control port.
    pub io: BoxIo,
    /// What it reaches, for status and logs: `pod/<name>`, an address.
    pub endpoint: String,
}

impl std::fmt::Debug for Connected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connected")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// Why a transport could not connect.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// A TCP connect failed.
    #[error("connect to {addr}")]
    Tcp {
        /// The address dialed.
        addr: SocketAddr,
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
    /// No pod of the agent is running.
    #[error("no running tunnel agent pod in namespace {namespace} matches {selector:?}")]
    NoPod {
        /// The namespace searched.
        namespace: String,
        /// The label selector.
        selector: String,
    },
    /// Listing the agent's pods failed.
    #[error("list tunnel agent pods in namespace {namespace}")]
    ListPods {
        /// The namespace searched.
        namespace: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Opening pods/portforward failed.
    #[error("port-forward to pod {namespace}/{pod} port {port}")]
    PortForward {
        /// The pod's namespace.
        namespace: String,
        /// The pod.
        pod: String,
        /// The agent's control port.
        port: u16,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Any other failure (closure transports).
    #[error("{0}")]
    Other(String),
}

/// Opens byte streams to the agent's control port.
pub trait Transport: Send + Sync + 'static {
    /// Opens a new stream. Called once per connection attempt, so a transport
    /// can pick a different target each time.
    fn connect(&self) -> BoxFuture<'_, Result<Connected, TransportError>>;

    /// Told when a connection to `endpoint` failed before the handshake
    /// completed, so the next [`Transport::connect`] can prefer another
    /// target. The default ignores it.
    fn failed(&self, endpoint: &str) {
        let _ = endpoint;
    }
}

/// Plain TCP to a fixed address.
#[derive(Debug, Clone)]
pub struct TcpTransport {
    addr: SocketAddr,
}

impl TcpTransport {
    /// A transport that dials `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        TcpTransport { addr }
    }
}

impl Transport for TcpTransport {
    fn connect(&self) -> BoxFuture<'_, Result<Connected, TransportError>> {
        Box::pin(async move {
            let stream = tokio::net::TcpStream::connect(self.addr)
                .await
                .map_err(|source| TransportError::Tcp {
                    addr: self.addr,
                    source,
                })?;
            let _ = stream.set_nodelay(true);
            Ok(Connected {
                io: Box::new(stream),
                endpoint: self.addr.to_string(),
            })
        })
    }
}

/// A transport from a closure returning a future of [`Connected`].
pub fn from_fn<F, Fut>(f: F) -> FnTransport<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Connected, TransportError>> + Send + 'static,
{
    FnTransport(f)
}

/// See [`from_fn`].
pub struct FnTransport<F>(F);

impl<F, Fut> Transport for FnTransport<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Connected, TransportError>> + Send + 'static,
{
    fn connect(&self) -> BoxFuture<'_, Result<Connected, TransportError>> {
        Box::pin((self.0)())
    }
}
