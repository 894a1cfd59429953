//! Keepalive: HTTP/2 PINGs on an interval, each with a deadline, so a
//! half-dead transport (a port-forward that neither carries bytes nor closes)
//! is detected in seconds. Both ends run it.

use std::time::Duration;

use h2::{Ping, PingPong};

/// When to ping and how long to wait for the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keepalive {
    /// Time between the end of one ping and the start of the next.
    pub interval: Duration,
    /// How long a ping may go unanswered before the connection is declared
    /// dead. A dead transport is detected within `interval + timeout`.
    pub timeout: Duration,
}

impl Default for Keepalive {
    fn default() -> Self {
        Keepalive {
            interval: Duration::from_secs(2),
            timeout: Duration::from_secs(4),
        }
    }
}

/// Why the keepalive gave up.
#[derive(Debug, thiserror::Error)]
pub enum KeepaliveError {
    /// A ping went unanswered.
    #[error("no keepalive answer within {0:?}: the transport is dead")]
    Timeout(Duration),
    /// The connection failed while pinging.
    #[error("keepalive ping failed")]
    Ping(#[source] h2::Error),
}

/// Pings until a ping fails or times out; never returns otherwise. The
/// connection must be polled meanwhile (pongs arrive through it).
pub(crate) async fn run(mut pings: PingPong, cfg: Keepalive) -> KeepaliveError {
    loop {
        tokio::time::sleep(cfg.interval).await;
        match tokio::time::timeout(cfg.timeout, pings.ping(Ping::opaque())).await {
            Ok(Ok(_pong)) => {}
            Ok(Err(err)) => return KeepaliveError::Ping(err),
            Err(_) => return KeepaliveError::Timeout(cfg.timeout),
        }
    }
}
