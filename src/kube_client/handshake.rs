//! A deadline on the TLS handshake, as client-go's transport has
//! (`TLSHandshakeTimeout`, 10 s): a server that accepts the TCP connection
//! but never answers the handshake (a port-forward or tunnel whose far end
//! is gone, a proxy that holds the connection) fails in 10 s, as kubectl
//! does, instead of at the 30 s connect timeout that covers dialing.
//!
//! [`HandshakeDeadline`] wraps the TCP connector: on an `https` connection
//! the first read must complete within the deadline. In TLS the client
//! speaks first, so that read is the server's first handshake message; once
//! a read completes, the connection has no deadline any more (watches stay
//! open for as long as they like).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};
use tokio::time::Sleep;
use tower::BoxError;

/// client-go's `TLSHandshakeTimeout`.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A connector whose `https` connections fail a first read that takes
/// longer than `timeout`.
#[derive(Clone, Debug)]
pub struct HandshakeDeadline<C> {
    inner: C,
    timeout: Duration,
}

impl<C> HandshakeDeadline<C> {
    /// Wraps `inner`.
    pub fn new(inner: C, timeout: Duration) -> Self {
        HandshakeDeadline { inner, timeout }
    }
}

type Connecting<S> = Pin<Box<dyn Future<Output = Result<FirstRead<S>, BoxError>> + Send>>;

impl<C> tower::Service<Uri> for HandshakeDeadline<C>
where
    C: tower::Service<Uri>,
    C::Future: Send + 'static,
    C::Error: Into<BoxError>,
    C::Response: Send + 'static,
{
    type Response = FirstRead<C::Response>;
    type Error = BoxError;
    type Future = Connecting<C::Response>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        let timeout = self.timeout;
        let connecting = self.inner.call(uri);
        Box::pin(async move {
            let stream = connecting.await.map_err(Into::into)?;
            Ok(FirstRead {
                inner: stream,
                deadline: tls.then(|| Box::pin(tokio::time::sleep(timeout))),
            })
        })
    }
}

/// A connection whose first read has a deadline (none once a read has
/// completed, or on a plain `http` connection).
#[derive(Debug)]
pub struct FirstRead<S> {
    inner: S,
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<S: Read + Unpin> Read for FirstRead<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(read) => {
                this.deadline = None;
                Poll::Ready(read)
            }
            Poll::Pending => match this.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "TLS handshake timeout",
                ))),
                _ => Poll::Pending,
            },
        }
    }
}

impl<S: Write + Unpin> Write for FirstRead<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }
}

impl<S: Connection> Connection for FirstRead<S> {
    fn connected(&self) -> Connected {
        self.inner.connected()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that accepts connections and never says a word.
    async fn silent() -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        addr
    }

    #[tokio::test]
    async fn a_handshake_that_is_never_answered_times_out() {
        let addr = silent().await;
        let mut config = kube::Config::new(format!("https://{addr}").parse().unwrap());
        config.accept_invalid_certs = true;
        let err = super::super::stack_with(&config, Duration::from_millis(300))
            .map(|s| {
                use tower::ServiceExt as _;
                s.oneshot(
                    http::Request::get("/version")
                        .body(kube::client::Body::empty())
                        .unwrap(),
                )
            })
            .unwrap()
            .await
            .expect_err("no answer");
        let chain = crate::error_chain::error_chain(err.as_ref());
        assert!(chain.contains("TLS handshake timeout"), "{chain}");
    }
}
