//! The reverse tunnel that lets a cluster's aggregator reach `kubectl cozy
//! serve` on a developer's machine.
//!
//! ```text
//!  cluster                                              developer machine
//!  ───────                                              ─────────────────
//!  kube-apiserver aggregator                            kubectl cozy serve
//!    │ TLS (front-proxy client cert)                      ├─ TunnelClient ─────────► local HTTPS listener
//!    ▼                                                    │   (h2 server; one          127.0.0.1:<port>
//!  Service ──► agent pod: tunnel-agent                    │    stream per aggregator   (TLS ends here)
//!              data port :8443 ◄─ aggregator conns        │    connection)
//!              control port 127.0.0.1:7001 ◄──────────────┘
//!                ▲      one transport connection: hello, then HTTP/2 with
//!                │      the agent as h2 client (it opens the streams)
//!                └── kube-apiserver pods/portforward (WebSocket) ◄── serve dials
//! ```
//!
//! The agent moves opaque bytes: TLS runs end to end between the aggregator
//! and serve's listener. Every aggregator connection becomes one HTTP/2
//! stream of a single multiplexed transport connection ([`protocol`]); ends
//! are explicit per direction (END_STREAM, RST_STREAM), never inferred from
//! the transport, which over port-forward carries no half-close. Flow control
//! is per stream ([`protocol::Tuning`]); keepalive PINGs detect a half-dead
//! transport ([`keepalive`]); serve reconnects with backoff and jitter
//! ([`backoff`]) and shows its state through a watch channel
//! ([`TunnelClient::status`]).
//!
//! | file | owns |
//! |---|---|
//! | [`protocol`] | hello handshake, versions, HTTP/2 conventions and settings |
//! | [`splice`] | one local byte stream ⇄ one HTTP/2 stream, FIN/RST per direction |
//! | [`keepalive`] | PING interval and deadline |
//! | [`backoff`] | reconnect delays |
//! | [`transport`] | the [`Transport`] trait, TCP and closure transports |
//! | [`portforward`] | the pods/portforward transport and agent pod choice |
//! | [`client`] | serve's side: [`TunnelClient`] |
//! | [`agent`] | the in-pod agent: [`Agent`], [`Hub`] |
//! | [`health`] | the agent's `/livez` and `/readyz` |

pub mod agent;
pub mod backoff;
pub mod client;
pub mod health;
pub mod keepalive;
pub mod portforward;
pub mod protocol;
pub mod splice;
pub mod transport;

#[cfg(test)]
mod tests;

pub use agent::{Agent, AgentConfig, AgentError, Hub};
pub use backoff::Backoff;
pub use client::{
    ClientConfig, ClientError, SessionError, TcpUpstream, TunnelClient, TunnelState, TunnelStatus,
    Upstream, upstream_fn,
};
pub use keepalive::Keepalive;
pub use portforward::PortForwardTransport;
pub use protocol::Tuning;
pub use splice::Conn;
pub use transport::{Connected, TcpTransport, Transport, TransportError};
