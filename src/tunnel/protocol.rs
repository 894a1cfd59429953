//! The tunnel's wire protocol: the hello handshake that opens every transport
//! connection, and the HTTP/2 conventions used after it.
//!
//! A transport connection (serve → agent control port) carries, in order:
//!
//! 1. serve → agent: the 8-byte magic [`MAGIC`], then one hello message;
//! 2. agent → serve: one reply message (accepted, or refused with a reason);
//! 3. HTTP/2 (RFC 9113) with **the agent as the HTTP/2 client** and serve as
//!    the HTTP/2 server, although serve dialed the connection: only HTTP/2
//!    clients open streams, and streams start where the aggregator's
//!    connections arrive, at the agent.
//!
//! A message is a big-endian `u32` length followed by that many bytes of JSON
//! (at most [`MAX_MESSAGE`]). Each aggregator connection is one HTTP/2 stream:
//! the agent sends `POST` [`STREAM_PATH`] and starts sending the connection's
//! bytes at once; serve answers `200` once its local upstream is connected,
//! or [`STATUS_UPSTREAM_FAILED`] (body: why) and ends the stream. The bytes
//! are opaque (TLS stays end to end). Stream ends are explicit HTTP/2 frames,
//! never inferred from the transport: `END_STREAM` is a half-close of one
//! direction (TCP FIN), `RST_STREAM` an abort (TCP RST), `GOAWAY` serve's
//! goodbye, `PING` the keepalive. Flow control is HTTP/2's, per stream and
//! per connection ([`Tuning`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The first bytes serve sends on a transport connection.
pub const MAGIC: &[u8; 8] = b"CZTUNNEL";

/// The protocol version this build speaks. It changes only when the wire
/// format does; agent and serve must speak the same one.
pub const VERSION: u32 = 1;

/// The largest hello or reply message accepted, in bytes.
pub const MAX_MESSAGE: usize = 16 * 1024;

/// The path of the request that opens a tunnelled stream.
pub const STREAM_PATH: &str = "/v1/stream";

/// Request header: the address of the aggregator connection the stream
/// carries (for serve's logs).
pub const PEER_HEADER: &str = "x-cozy-tunnel-peer";

/// Response status when serve could not connect to its local upstream.
pub const STATUS_UPSTREAM_FAILED: u16 = 502;

/// How long either side waits for the other's hello or reply.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// What serve says first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// The protocol version serve speaks.
    pub version: u32,
    /// The serve session this connection belongs to; the agent refuses any
    /// other.
    pub session: String,
    /// Who is speaking, e.g. `kubectl-cozy 0.1.0` (for logs).
    pub software: String,
}

impl Hello {
    /// A hello for `session` from this build.
    pub fn new(session: impl Into<String>) -> Self {
        Hello {
            version: VERSION,
            session: session.into(),
            software: software(),
        }
    }
}

/// What the agent answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "camelCase")]
pub enum Reply {
    /// The agent accepts the session; HTTP/2 follows.
    #[serde(rename_all = "camelCase")]
    Accepted {
        /// The protocol version the agent speaks.
        version: u32,
        /// The agent's software, e.g. `kubectl-cozy 0.1.0`.
        software: String,
    },
    /// The agent refuses; it closes the connection after this message.
    #[serde(rename_all = "camelCase")]
    Refused {
        /// The protocol version the agent speaks.
        version: u32,
        /// Why, as a machine-readable reason.
        reason: Refusal,
        /// Why, for people.
        message: String,
    },
}

/// Why an agent refused a hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Refusal {
    /// The hello named another serve session than the agent's.
    WrongSession,
    /// The hello's protocol version is not the agent's.
    UnsupportedVersion,
    /// The hello could not be read.
    BadHello,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::WrongSession => "wrong session",
            Refusal::UnsupportedVersion => "unsupported protocol version",
            Refusal::BadHello => "bad hello",
        })
    }
}

/// Errors of the hello handshake.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// Reading or writing the transport failed.
    #[error("exchange hello messages")]
    Io(#[source] std::io::Error),
    /// The peer did not answer in time.
    #[error("no hello from the peer within {0:?}")]
    Timeout(Duration),
    /// The connection does not start with [`MAGIC`]: not a tunnel client.
    #[error("the peer does not speak the kubectl-cozy tunnel protocol")]
    BadMagic,
    /// A message's length is over [`MAX_MESSAGE`].
    #[error("hello message of {0} bytes is over the {MAX_MESSAGE}-byte limit")]
    TooLarge(usize),
    /// A message is not the JSON expected.
    #[error("decode hello message")]
    Json(#[source] serde_json::Error),
    /// The agent refused the session.
    #[error(
        "the tunnel agent refused the connection ({reason}): {message} (agent protocol version {agent_version}, ours {VERSION})"
    )]
    Refused {
        /// Why.
        reason: Refusal,
        /// The agent's explanation.
        message: String,
        /// The protocol version the agent speaks.
        agent_version: u32,
    },
}

impl HandshakeError {
    /// Whether retrying cannot help: the agent belongs to another session or
    /// speaks another protocol version.
    pub fn is_permanent(&self) -> bool {
        matches!(
            self,
            HandshakeError::Refused {
                reason: Refusal::WrongSession | Refusal::UnsupportedVersion,
                ..
            }
        )
    }
}

/// HTTP/2 settings of a tunnel connection, the same on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Per-stream receive window, in bytes: how much one stream may have in
    /// flight before its reader catches up. A slow reader holds at most this
    /// much memory and stalls only its own stream.
    pub stream_window: u32,
    /// Per-connection receive window, in bytes: the bound on memory held by
    /// all streams of a connection together.
    pub connection_window: u32,
    /// The most streams open at once on one connection.
    pub max_streams: u32,
    /// The largest HTTP/2 DATA frame, in bytes.
    pub max_frame_size: u32,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            stream_window: 1024 * 1024,
            connection_window: 32 * 1024 * 1024,
            max_streams: 1024,
            max_frame_size: 64 * 1024,
        }
    }
}

impl Tuning {
    /// An HTTP/2 server builder (serve's side) with these settings.
    pub(crate) fn server(&self) -> h2::server::Builder {
        let mut b = h2::server::Builder::new();
        b.initial_window_size(self.stream_window)
            .initial_connection_window_size(self.connection_window)
            .max_concurrent_streams(self.max_streams)
            .max_frame_size(self.max_frame_size)
            .max_send_buffer_size(self.stream_window as usize);
        b
    }

    /// An HTTP/2 client builder (the agent's side) with these settings.
    pub(crate) fn client(&self) -> h2::client::Builder {
        let mut b = h2::client::Builder::new();
        b.initial_window_size(self.stream_window)
            .initial_connection_window_size(self.connection_window)
            .max_concurrent_streams(self.max_streams)
            .max_frame_size(self.max_frame_size)
            .max_send_buffer_size(self.stream_window as usize)
            .enable_push(false);
        b
    }
}

/// `kubectl-cozy <version>`, what hellos and replies name as their software.
pub fn software() -> String {
    format!("kubectl-cozy {}", env!("CARGO_PKG_VERSION"))
}

/// Serve's half of the handshake: sends the magic and `hello`, reads the
/// agent's reply. Returns the agent's software on acceptance.
pub async fn offer<T>(io: &mut T, hello: &Hello) -> Result<String, HandshakeError>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let exchange = async {
        let mut out = MAGIC.to_vec();
        encode(&mut out, hello)?;
        io.write_all(&out).await.map_err(HandshakeError::Io)?;
        io.flush().await.map_err(HandshakeError::Io)?;
        match read_message::<_, Reply>(io).await? {
            Reply::Accepted { software, .. } => Ok(software),
            Reply::Refused {
                version,
                reason,
                message,
            } => Err(HandshakeError::Refused {
                reason,
                message,
                agent_version: version,
            }),
        }
    };
    tokio::time::timeout(HANDSHAKE_TIMEOUT, exchange)
        .await
        .map_err(|_| HandshakeError::Timeout(HANDSHAKE_TIMEOUT))?
}

/// The agent's half: reads the magic and a hello, checks it against
/// `session` and [`VERSION`], and answers. On refusal the reply has been
/// sent and the error says why.
pub async fn accept<T>(io: &mut T, session: &str) -> Result<Hello, HandshakeError>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let exchange = async {
        let mut magic = [0u8; MAGIC.len()];
        io.read_exact(&mut magic)
            .await
            .map_err(HandshakeError::Io)?;
        if &magic != MAGIC {
            return Err(HandshakeError::BadMagic);
        }
        let hello = match read_message::<_, Hello>(io).await {
            Ok(hello) => hello,
            Err(err @ (HandshakeError::Json(_) | HandshakeError::TooLarge(_))) => {
                refuse(io, Refusal::BadHello, err.to_string()).await?;
                return Err(err);
            }
            Err(err) => return Err(err),
        };
        let refusal = if hello.version != VERSION {
            Some((
                Refusal::UnsupportedVersion,
                format!(
                    "{} speaks tunnel protocol version {}, this agent ({}) speaks {VERSION}; use the same kubectl-cozy version for serve and the agent image",
                    hello.software,
                    hello.version,
                    software()
                ),
            ))
        } else if hello.session != session {
            Some((
                Refusal::WrongSession,
                format!(
                    "this agent serves session {session:?}, not {:?}",
                    hello.session
                ),
            ))
        } else {
            None
        };
        match refusal {
            Some((reason, message)) => {
                refuse(io, reason, message.clone()).await?;
                Err(HandshakeError::Refused {
                    reason,
                    message,
                    agent_version: VERSION,
                })
            }
            None => {
                let mut out = Vec::new();
                encode(
                    &mut out,
                    &Reply::Accepted {
                        version: VERSION,
                        software: software(),
                    },
                )?;
                io.write_all(&out).await.map_err(HandshakeError::Io)?;
                io.flush().await.map_err(HandshakeError::Io)?;
                Ok(hello)
            }
        }
    };
    tokio::time::timeout(HANDSHAKE_TIMEOUT, exchange)
        .await
        .map_err(|_| HandshakeError::Timeout(HANDSHAKE_TIMEOUT))?
}

async fn refuse<T>(io: &mut T, reason: Refusal, message: String) -> Result<(), HandshakeError>
where
    T: AsyncWrite + Unpin,
{
    let mut out = Vec::new();
    encode(
        &mut out,
        &Reply::Refused {
            version: VERSION,
            reason,
            message,
        },
    )?;
    io.write_all(&out).await.map_err(HandshakeError::Io)?;
    io.flush().await.map_err(HandshakeError::Io)
}

fn encode<M: Serialize>(out: &mut Vec<u8>, message: &M) -> Result<(), HandshakeError> {
    let body = serde_json::to_vec(message).map_err(HandshakeError::Json)?;
    if body.len() > MAX_MESSAGE {
        return Err(HandshakeError::TooLarge(body.len()));
    }
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    Ok(())
}

async fn read_message<T, M>(io: &mut T) -> Result<M, HandshakeError>
where
    T: AsyncRead + Unpin,
    M: for<'de> Deserialize<'de>,
{
    let len = io.read_u32().await.map_err(HandshakeError::Io)? as usize;
    if len > MAX_MESSAGE {
        return Err(HandshakeError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    io.read_exact(&mut body).await.map_err(HandshakeError::Io)?;
    serde_json::from_slice(&body).map_err(HandshakeError::Json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn matching_session_is_accepted() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        let agent = tokio::spawn(async move { accept(&mut b, "s-1").await });
        let software = offer(&mut a, &Hello::new("s-1")).await.unwrap();
        assert_eq!(software, super::software());
        let hello = agent.await.unwrap().unwrap();
        assert_eq!(hello.session, "s-1");
        assert_eq!(hello.version, VERSION);
    }

    #[tokio::test]
    async fn another_session_is_refused_permanently() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        let agent = tokio::spawn(async move { accept(&mut b, "s-1").await });
        let err = offer(&mut a, &Hello::new("s-2")).await.unwrap_err();
        assert!(
            matches!(
                err,
                HandshakeError::Refused {
                    reason: Refusal::WrongSession,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.is_permanent());
        assert!(err.to_string().contains("\"s-1\""), "{err}");
        let agent_err = agent.await.unwrap().unwrap_err();
        assert!(matches!(
            agent_err,
            HandshakeError::Refused {
                reason: Refusal::WrongSession,
                ..
            }
        ));
    }

    #[tokio::test]
    async fn another_version_is_refused_permanently() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        let agent = tokio::spawn(async move { accept(&mut b, "s-1").await });
        let hello = Hello {
            version: VERSION + 1,
            ..Hello::new("s-1")
        };
        let err = offer(&mut a, &hello).await.unwrap_err();
        assert!(
            matches!(
                err,
                HandshakeError::Refused {
                    reason: Refusal::UnsupportedVersion,
                    agent_version: VERSION,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.is_permanent());
        assert!(agent.await.unwrap().is_err());
    }

    #[tokio::test]
    async fn not_a_tunnel_client_is_rejected() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        a.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        let err = accept(&mut b, "s-1").await.unwrap_err();
        assert!(matches!(err, HandshakeError::BadMagic), "{err}");
    }

    #[tokio::test]
    async fn oversized_and_garbled_hellos_are_refused() {
        let (mut a, mut b) = tokio::io::duplex(64 * 1024);
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(MAX_MESSAGE as u32 + 1).to_be_bytes());
        a.write_all(&out).await.unwrap();
        let err = accept(&mut b, "s-1").await.unwrap_err();
        assert!(matches!(err, HandshakeError::TooLarge(_)), "{err}");
        let reply: Reply = read_message(&mut a).await.unwrap();
        assert!(matches!(
            reply,
            Reply::Refused {
                reason: Refusal::BadHello,
                ..
            }
        ));

        let (mut a, mut b) = tokio::io::duplex(64 * 1024);
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&3u32.to_be_bytes());
        out.extend_from_slice(b"{x}");
        a.write_all(&out).await.unwrap();
        let err = accept(&mut b, "s-1").await.unwrap_err();
        assert!(matches!(err, HandshakeError::Json(_)), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_peer_times_out() {
        let (_a, mut b) = tokio::io::duplex(1024);
        let err = accept(&mut b, "s-1").await.unwrap_err();
        assert!(matches!(err, HandshakeError::Timeout(_)), "{err}");
    }

    #[test]
    fn reply_wire_format_is_stable() {
        let json = serde_json::to_string(&Reply::Refused {
            version: 1,
            reason: Refusal::WrongSession,
            message: "m".into(),
        })
        .unwrap();
        assert_eq!(
            json,
            r#"{"result":"refused","version":1,"reason":"wrongSession","message":"m"}"#
        );
    }
}
