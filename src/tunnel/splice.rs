//! Splicing one local byte stream (the aggregator's TCP connection at the
//! agent, the connection to the local API server at serve) onto one HTTP/2
//! stream of the tunnel, in both directions at once.
//!
//! Ends are explicit and per direction: local EOF becomes `END_STREAM`, and
//! `END_STREAM` becomes a write shutdown (FIN) of the local stream. Any error,
//! or an `RST_STREAM` from the other side, aborts both: the HTTP/2 stream is
//! reset and the local stream closed abortively (TCP RST), so the peer sees a
//! failed connection, never a clean end of a truncated one.
//!
//! Backpressure: at most one read buffer ([`CHUNK`]) is held per direction;
//! received data is released to HTTP/2 flow control only once written to the
//! local stream, so a slow local reader stalls only its own stream.

use std::future::{Future, poll_fn};
use std::io;

use bytes::{Bytes, BytesMut};
use h2::{Reason, RecvStream, SendStream};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};

/// The largest read from a local stream, in bytes.
pub const CHUNK: usize = 64 * 1024;

/// A local byte stream the tunnel splices: readable, writable, and able to
/// close abortively.
pub trait Conn: AsyncRead + AsyncWrite + Send + Unpin + 'static {
    /// Makes the coming drop an abortive close (a TCP RST) instead of a FIN.
    fn set_abortive(&mut self);
}

impl Conn for tokio::net::TcpStream {
    fn set_abortive(&mut self) {
        // SO_LINGER 0: close() sends RST and discards unsent data.
        if let Err(err) = self.set_zero_linger() {
            tracing::debug!(%err, "set SO_LINGER 0");
        }
    }
}

impl Conn for tokio::io::DuplexStream {
    fn set_abortive(&mut self) {}
}

impl Conn for Box<dyn Conn> {
    fn set_abortive(&mut self) {
        (**self).set_abortive()
    }
}

/// How a splice ended.
#[derive(Debug)]
pub enum Outcome {
    /// Both directions ended with an explicit end of stream.
    Finished {
        /// Bytes from the local stream into the tunnel.
        sent: u64,
        /// Bytes from the tunnel into the local stream.
        received: u64,
    },
    /// The stream was aborted; the local stream was closed with a reset.
    Aborted(Abort),
}

/// Why a splice was aborted.
#[derive(Debug, thiserror::Error)]
pub enum Abort {
    /// The other side reset the stream.
    #[error("the other side reset the stream ({0})")]
    Reset(Reason),
    /// The tunnel connection failed under the stream.
    #[error("tunnel stream failed")]
    Tunnel(#[source] h2::Error),
    /// Reading or writing the local stream failed.
    #[error("local stream failed")]
    Local(#[source] io::Error),
    /// The other side refused to open the stream (serve's upstream failed).
    #[error("the stream was refused: {0}")]
    Refused(String),
}

/// Splices `local` onto the HTTP/2 stream (`send`, and the receive half
/// `recv` once it resolves: at the agent that is serve's response, so bytes
/// flow towards serve before it answers). Returns when both directions have
/// ended or the stream is aborted.
pub async fn splice<C, R>(local: C, send: SendStream<Bytes>, recv: R) -> Outcome
where
    C: Conn,
    R: Future<Output = Result<RecvStream, Abort>>,
{
    let (mut rh, mut wh) = tokio::io::split(local);
    let result = drive(&mut rh, &mut wh, send, recv).await;
    let mut local = rh.unsplit(wh);
    match result {
        Ok((sent, received)) => Outcome::Finished { sent, received },
        Err(abort) => {
            local.set_abortive();
            drop(local);
            Outcome::Aborted(abort)
        }
    }
}

enum First {
    Up(SendStream<Bytes>, Result<u64, Abort>),
    Down(Result<u64, Abort>),
}

async fn drive<C, R>(
    rh: &mut ReadHalf<C>,
    wh: &mut WriteHalf<C>,
    send: SendStream<Bytes>,
    recv: R,
) -> Result<(u64, u64), Abort>
where
    C: Conn,
    R: Future<Output = Result<RecvStream, Abort>>,
{
    let down = down(recv, wh);
    tokio::pin!(down);
    let up = up(rh, send);
    tokio::pin!(up);
    // Phase 1: both directions run. `up` owns the send half and watches it for
    // resets while it waits on the local stream.
    let first = tokio::select! {
        (send, r) = &mut up => First::Up(send, r),
        r = &mut down => First::Down(r),
    };
    match first {
        First::Up(mut send, Ok(sent)) => {
            // Phase 2: local EOF was forwarded; `down` may block writing to a
            // slow local reader, so watch for a reset beside it.
            let received = tokio::select! {
                r = &mut down => r,
                reason = poll_fn(|cx| send.poll_reset(cx)) => match reason {
                    Ok(Reason::NO_ERROR) => down.await,
                    Ok(reason) => Err(Abort::Reset(reason)),
                    Err(err) => Err(Abort::Tunnel(err)),
                },
            };
            match received {
                Ok(received) => Ok((sent, received)),
                Err(abort) => {
                    send.send_reset(Reason::CANCEL);
                    Err(abort)
                }
            }
        }
        First::Up(mut send, Err(abort)) => {
            send.send_reset(reset_reason(&abort));
            Err(abort)
        }
        First::Down(Ok(received)) => {
            let (mut send, r) = up.await;
            match r {
                Ok(sent) => Ok((sent, received)),
                Err(abort) => {
                    send.send_reset(reset_reason(&abort));
                    Err(abort)
                }
            }
        }
        // Dropping `up` drops the send half; with the receive half gone too
        // HTTP/2 resets the stream (CANCEL).
        First::Down(Err(abort)) => Err(abort),
    }
}

fn reset_reason(abort: &Abort) -> Reason {
    match abort {
        Abort::Local(_) => Reason::INTERNAL_ERROR,
        _ => Reason::CANCEL,
    }
}

/// Local → tunnel. Returns the send half (for reset handling) and how many
/// bytes were forwarded before the local EOF became `END_STREAM`.
async fn up<C: Conn>(
    rh: &mut ReadHalf<C>,
    mut send: SendStream<Bytes>,
) -> (SendStream<Bytes>, Result<u64, Abort>) {
    let result = up_inner(rh, &mut send).await;
    (send, result)
}

async fn up_inner<C: Conn>(
    rh: &mut ReadHalf<C>,
    send: &mut SendStream<Bytes>,
) -> Result<u64, Abort> {
    let mut total = 0u64;
    let mut buf = BytesMut::with_capacity(CHUNK);
    loop {
        buf.reserve(CHUNK);
        let n = tokio::select! {
            n = rh.read_buf(&mut buf) => n.map_err(Abort::Local)?,
            reason = poll_fn(|cx| send.poll_reset(cx)) => match reason {
                // The other side has sent its whole answer and wants no more
                // (RFC 9113 §8.1): not an abort; the answer decides.
                Ok(Reason::NO_ERROR) => return Ok(total),
                Ok(reason) => return Err(Abort::Reset(reason)),
                Err(err) => return Err(Abort::Tunnel(err)),
            },
        };
        if n == 0 {
            send.send_data(Bytes::new(), true).map_err(Abort::Tunnel)?;
            return Ok(total);
        }
        total += n as u64;
        let mut data = buf.split().freeze();
        while !data.is_empty() {
            send.reserve_capacity(data.len());
            let granted = match poll_fn(|cx| send.poll_capacity(cx)).await {
                Some(Ok(granted)) => granted,
                Some(Err(err)) => return Err(tunnel_error(err)),
                None => return Err(Abort::Reset(Reason::STREAM_CLOSED)),
            };
            if granted == 0 {
                continue;
            }
            let chunk = data.split_to(granted.min(data.len()));
            send.send_data(chunk, false).map_err(tunnel_error)?;
        }
    }
}

/// Tunnel → local. Returns how many bytes were written before `END_STREAM`
/// became a write shutdown of the local stream.
async fn down<C, R>(recv: R, wh: &mut WriteHalf<C>) -> Result<u64, Abort>
where
    C: Conn,
    R: Future<Output = Result<RecvStream, Abort>>,
{
    let mut recv = recv.await?;
    let mut total = 0u64;
    while let Some(chunk) = recv.data().await {
        let chunk = chunk.map_err(tunnel_error)?;
        let n = chunk.len();
        wh.write_all(&chunk).await.map_err(Abort::Local)?;
        total += n as u64;
        // Released only once written: the sender's window stays shut while the
        // local reader is slow.
        let _ = recv.flow_control().release_capacity(n);
    }
    wh.shutdown().await.map_err(Abort::Local)?;
    Ok(total)
}

/// A reset from the other side shows as an h2 error with a reason; keep it as
/// a reset so logs say what happened.
fn tunnel_error(err: h2::Error) -> Abort {
    match err.reason() {
        Some(reason) if err.is_reset() && err.is_remote() => Abort::Reset(reason),
        _ => Abort::Tunnel(err),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! A pair of HTTP/2 endpoints over an in-memory pipe, to splice streams
    //! without a tunnel around them.

    use super::*;
    use http::{Request, Response};
    use std::time::Duration;

    /// One HTTP/2 stream between an h2 client and server over a duplex pipe:
    /// the client's (send, response future) and the server's (request body,
    /// respond handle).
    pub(crate) struct Pair {
        pub(crate) client_send: SendStream<Bytes>,
        pub(crate) client_resp: h2::client::ResponseFuture,
        pub(crate) server_recv: RecvStream,
        pub(crate) server_respond: h2::server::SendResponse<Bytes>,
    }

    pub(crate) async fn pair(window: u32) -> Pair {
        let (a, b) = tokio::io::duplex(256 * 1024);
        let mut cb = h2::client::Builder::new();
        cb.initial_window_size(window);
        let mut sb = h2::server::Builder::new();
        sb.initial_window_size(window);
        let server = tokio::spawn(async move {
            let mut conn = sb.handshake::<_, Bytes>(b).await.unwrap();
            let (req, respond) = conn.accept().await.unwrap().unwrap();
            tokio::spawn(async move { while conn.accept().await.is_some() {} });
            (req.into_body(), respond)
        });
        let (client, conn) = cb.handshake::<_, Bytes>(a).await.unwrap();
        tokio::spawn(conn);
        let mut client = client.ready().await.unwrap();
        let (client_resp, client_send) = client
            .send_request(Request::post(STREAM).body(()).unwrap(), false)
            .unwrap();
        let (server_recv, server_respond) = server.await.unwrap();
        Pair {
            client_send,
            client_resp,
            server_recv,
            server_respond,
        }
    }

    const STREAM: &str = "http://tunnel/v1/stream";

    async fn response_body(resp: h2::client::ResponseFuture) -> Result<RecvStream, Abort> {
        let resp = resp.await.map_err(tunnel_error)?;
        Ok(resp.into_body())
    }

    /// Both ends spliced onto duplex pipes; returns the outer ends and the
    /// splice tasks.
    type Spliced = (
        tokio::io::DuplexStream,
        tokio::io::DuplexStream,
        tokio::task::JoinHandle<Outcome>,
        tokio::task::JoinHandle<Outcome>,
    );

    async fn spliced(window: u32, pipe: usize) -> Spliced {
        let p = pair(window).await;
        let (left_outer, left_inner) = tokio::io::duplex(pipe);
        let (right_outer, right_inner) = tokio::io::duplex(pipe);
        let mut respond = p.server_respond;
        let server_send = respond.send_response(Response::new(()), false).unwrap();
        let recv = p.server_recv;
        let right = tokio::spawn(splice(right_inner, server_send, async move { Ok(recv) }));
        let left = tokio::spawn(splice(
            left_inner,
            p.client_send,
            response_body(p.client_resp),
        ));
        (left_outer, right_outer, left, right)
    }

    #[tokio::test]
    async fn bytes_arrive_exact_both_ways_and_half_close_is_carried() {
        let (mut left, mut right, l, r) = spliced(65_535, 4096).await;
        let payload: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let p2 = payload.clone();
        let writer = tokio::spawn(async move {
            left.write_all(&p2).await.unwrap();
            // Half-close left → right; left can still read.
            left.shutdown().await.unwrap();
            let mut back = Vec::new();
            left.read_to_end(&mut back).await.unwrap();
            back
        });
        let mut got = Vec::new();
        right.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, payload, "left → right bytes differ");
        // The right side still writes after it saw EOF.
        right.write_all(b"after half-close").await.unwrap();
        right.shutdown().await.unwrap();
        assert_eq!(writer.await.unwrap(), b"after half-close");
        for outcome in [l.await.unwrap(), r.await.unwrap()] {
            assert!(matches!(outcome, Outcome::Finished { .. }), "{outcome:?}");
        }
    }

    #[tokio::test]
    async fn half_close_the_other_way() {
        let (mut left, mut right, l, r) = spliced(65_535, 4096).await;
        right.write_all(b"server speaks first").await.unwrap();
        right.shutdown().await.unwrap();
        let mut got = Vec::new();
        left.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"server speaks first");
        left.write_all(b"reply after EOF").await.unwrap();
        left.shutdown().await.unwrap();
        let mut got = Vec::new();
        right.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"reply after EOF");
        assert!(matches!(
            l.await.unwrap(),
            Outcome::Finished {
                sent: 15,
                received: 19
            }
        ));
        assert!(matches!(
            r.await.unwrap(),
            Outcome::Finished {
                sent: 19,
                received: 15
            }
        ));
    }

    #[tokio::test]
    async fn a_reset_aborts_the_other_side() {
        let p = pair(65_535).await;
        let (mut outer, inner) = tokio::io::duplex(4096);
        let task = tokio::spawn(splice(inner, p.client_send, response_body(p.client_resp)));
        // The server resets without answering.
        let mut respond = p.server_respond;
        respond.send_reset(Reason::CANCEL);
        let outcome = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("splice ended")
            .unwrap();
        assert!(
            matches!(outcome, Outcome::Aborted(Abort::Reset(Reason::CANCEL))),
            "{outcome:?}"
        );
        // The local stream was dropped: reads end.
        let mut rest = Vec::new();
        outer.read_to_end(&mut rest).await.unwrap();
    }

    #[tokio::test]
    async fn a_reset_is_seen_while_writing_to_a_stuck_local_reader() {
        let p = pair(65_535).await;
        // A 16-byte pipe nobody reads: `down` blocks writing.
        let (_outer, inner) = tokio::io::duplex(16);
        let mut respond = p.server_respond;
        let mut server_send = respond.send_response(Response::new(()), false).unwrap();
        let task = tokio::spawn(splice(inner, p.client_send, response_body(p.client_resp)));
        server_send
            .send_data(Bytes::from(vec![7u8; 1000]), false)
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        server_send.send_reset(Reason::CANCEL);
        let outcome = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("splice ended")
            .unwrap();
        assert!(matches!(outcome, Outcome::Aborted(_)), "{outcome:?}");
    }

    #[tokio::test]
    async fn a_local_error_resets_the_stream() {
        let p = pair(65_535).await;
        let (outer, inner) = tokio::io::duplex(4096);
        // Closing the outer end makes writes into `inner` fail (broken pipe).
        drop(outer);
        let mut respond = p.server_respond;
        let mut server_send = respond.send_response(Response::new(()), false).unwrap();
        let mut server_recv = p.server_recv;
        let task = tokio::spawn(splice(inner, p.client_send, response_body(p.client_resp)));
        server_send
            .send_data(Bytes::from_static(b"x"), false)
            .unwrap();
        let outcome = task.await.unwrap();
        assert!(matches!(outcome, Outcome::Aborted(_)), "{outcome:?}");
        // The server's view: its receive half fails with a reset or ends early.
        let mut saw_reset = false;
        while let Some(r) = server_recv.data().await {
            if r.is_err() {
                saw_reset = true;
                break;
            }
        }
        let reset = poll_fn(|cx| server_send.poll_reset(cx)).await;
        assert!(saw_reset || reset.is_ok(), "server never saw the reset");
    }
}
