//! The production transport: kube-apiserver's `pods/portforward` subresource
//! (a WebSocket per connection, through the kubelet into the agent pod's
//! network namespace, where the kubelet dials `localhost:<control port>`).
//!
//! Each [`Transport::connect`] lists the agent's pods by label and picks one
//! anew ([`pick_pod`]), so a reconnect follows a rescheduled or restarted
//! agent. Needs `list` on `pods` and `create` on `pods/portforward` in the
//! agent's namespace.
//!
//! The WebSocket is spoken here ([`PortForwardIo`]) rather than through
//! kube-rs's `Portforwarder`, which sends every 4 KiB read as its own message
//! and flushes each one through a channel of one: a 4 MiB list answer was
//! ≈ 1,000 messages and took 300+ ms through the tunnel. Here every flush
//! of the tunnel's HTTP/2 connection is one message (up to
//! [`MAX_MESSAGE`]), and received messages are read in place.
//!
//! The port-forward protocol (`v4`/`v5.channel.k8s.io`): each binary message
//! starts with its channel, 0 for the port's data and 1 for its errors; the
//! first message of each channel is the port number (2 bytes, little endian).
//! It has no half-close and its error channel is separate from the data: an
//! error the kubelet reports (e.g. nothing listens on the port) fails the
//! stream's next read here, and EOF is never relied on (the tunnel's keepalive
//! detects a dead forward).

use std::cmp::Reverse;
use std::io;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use futures::future::BoxFuture;
use futures::{Sink, Stream};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::transport::{Connected, Transport, TransportError};

/// Port-forwards to a running pod of the agent, chosen by label selector.
pub struct PortForwardTransport {
    client: kube::Client,
    pods: Api<Pod>,
    namespace: String,
    selector: String,
    port: u16,
    last_failed: Mutex<Option<String>>,
}

impl std::fmt::Debug for PortForwardTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortForwardTransport")
            .field("namespace", &self.namespace)
            .field("selector", &self.selector)
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl PortForwardTransport {
    /// A transport to the agent's control `port` in a pod of `namespace`
    /// matching the label `selector` (e.g. `app.kubernetes.io/name=cozy-tunnel-agent`).
    pub fn new(client: kube::Client, namespace: &str, selector: &str, port: u16) -> Self {
        PortForwardTransport {
            pods: Api::namespaced(client.clone(), namespace),
            client,
            namespace: namespace.to_owned(),
            selector: selector.to_owned(),
            port,
            last_failed: Mutex::new(None),
        }
    }

    async fn open(&self) -> Result<Connected, TransportError> {
        let list = self
            .pods
            .list(&ListParams::default().labels(&self.selector))
            .await
            .map_err(|source| TransportError::ListPods {
                namespace: self.namespace.clone(),
                source,
            })?;
        let avoid = self.last_failed.lock().map(|g| g.clone()).unwrap_or(None);
        let pod = pick_pod(&list.items, avoid.as_deref())
            .ok_or_else(|| TransportError::NoPod {
                namespace: self.namespace.clone(),
                selector: self.selector.clone(),
            })?
            .to_owned();
        let request =
            kube::core::Request::new(format!("/api/v1/namespaces/{}/pods", self.namespace))
                .portforward(&pod, &[self.port])
                .map_err(|e| {
                    TransportError::Other(format!("build the port-forward request: {e}"))
                })?;
        let ws = match self.client.connect(request).await {
            Ok(connection) => connection.into_stream(),
            Err(source) => {
                self.remember_failure(&pod);
                return Err(TransportError::PortForward {
                    namespace: self.namespace.clone(),
                    pod,
                    port: self.port,
                    source,
                });
            }
        };
        let endpoint = format!("pod/{pod}");
        tracing::debug!(namespace = %self.namespace, %pod, port = self.port, "port-forward open");
        Ok(Connected {
            io: Box::new(PortForwardIo::new(
                ws,
                format!(
                    "port-forward to pod {}/{pod} port {}",
                    self.namespace, self.port
                ),
            )),
            endpoint,
        })
    }

    fn remember_failure(&self, pod: &str) {
        if let Ok(mut last) = self.last_failed.lock() {
            *last = Some(pod.to_owned());
        }
    }
}

impl Transport for PortForwardTransport {
    fn connect(&self) -> BoxFuture<'_, Result<Connected, TransportError>> {
        Box::pin(self.open())
    }

    fn failed(&self, endpoint: &str) {
        if let Some(pod) = endpoint.strip_prefix("pod/") {
            self.remember_failure(pod);
        }
    }
}

/// The pod to port-forward to: a running, not terminating pod whose
/// containers have all started; the newest first (a rollout's new pod), the
/// pod that failed last (`avoid`) only when no other is left, then by name.
///
/// Readiness is not required: the agent reports Ready only while a serve
/// session is connected (see [`super::agent`]), so before the first connect
/// no agent pod is Ready.
pub fn pick_pod<'a>(pods: &'a [Pod], avoid: Option<&str>) -> Option<&'a str> {
    let mut candidates: Vec<&Pod> = pods.iter().filter(|p| is_running(p)).collect();
    candidates.sort_by_key(|p| {
        let name = p.metadata.name.as_deref().unwrap_or_default();
        (
            Some(name) == avoid,
            Reverse(p.metadata.creation_timestamp.as_ref().map(|t| t.0)),
            name,
        )
    });
    candidates.first().and_then(|p| p.metadata.name.as_deref())
}

fn is_running(pod: &Pod) -> bool {
    if pod.metadata.deletion_timestamp.is_some() || pod.metadata.name.is_none() {
        return false;
    }
    let Some(status) = &pod.status else {
        return false;
    };
    if status.phase.as_deref() != Some("Running") {
        return false;
    }
    let containers = status.container_statuses.as_deref().unwrap_or_default();
    !containers.is_empty()
        && containers
            .iter()
            .all(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
}

/// The largest message [`PortForwardIo`] sends: writes between two flushes
/// are gathered into one message up to this size.
pub const MAX_MESSAGE: usize = 256 * 1024;

/// The data channel of the (only) forwarded port, and its error channel.
const DATA: u8 = 0;
const ERROR: u8 = 1;

/// One forwarded port over the port-forward WebSocket: bytes read are the
/// data channel's, bytes written are gathered until the next flush and sent
/// as one data message; a message on the error channel fails the next read.
pub struct PortForwardIo<S> {
    ws: WebSocketStream<S>,
    /// Received data not yet read.
    pending: Bytes,
    /// What was written since the last message: the channel byte, then data.
    outgoing: Vec<u8>,
    /// Whether each channel's first message (the port number) was seen.
    data_opened: bool,
    error_opened: bool,
    /// The WebSocket ended (EOF from now on).
    ended: bool,
    what: String,
}

impl<S> PortForwardIo<S> {
    /// The port-forward over `ws` (already upgraded), described as `what`
    /// in errors.
    pub fn new(ws: WebSocketStream<S>, what: String) -> Self {
        PortForwardIo {
            ws,
            pending: Bytes::new(),
            outgoing: vec![DATA],
            data_opened: false,
            error_opened: false,
            ended: false,
            what,
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> io::Error {
        io::Error::other(format!("{}: {message}", self.what))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> PortForwardIo<S> {
    /// Sends what was written since the last message, if anything.
    fn poll_send_outgoing(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.outgoing.len() <= 1 {
            return Poll::Ready(Ok(()));
        }
        std::task::ready!(Pin::new(&mut self.ws).poll_ready(cx)).map_err(|e| self.error(e))?;
        let message = std::mem::replace(&mut self.outgoing, vec![DATA]);
        Pin::new(&mut self.ws)
            .start_send(Message::Binary(message.into()))
            .map_err(|e| self.error(e))?;
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for PortForwardIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if !this.pending.is_empty() {
                let n = this.pending.len().min(buf.remaining());
                buf.put_slice(&this.pending[..n]);
                this.pending.advance(n);
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let message = match std::task::ready!(Pin::new(&mut this.ws).poll_next(cx)) {
                None | Some(Ok(Message::Close(_))) => {
                    this.ended = true;
                    continue;
                }
                Some(Err(e)) => return Poll::Ready(Err(this.error(e))),
                Some(Ok(Message::Binary(message))) => message,
                // Pings are answered by the WebSocket itself.
                Some(Ok(_)) => continue,
            };
            let Some((&channel, body)) = message.split_first() else {
                continue;
            };
            let body = message.slice(message.len() - body.len()..);
            match channel {
                DATA if !this.data_opened => this.data_opened = true,
                DATA => this.pending = body,
                ERROR if !this.error_opened => this.error_opened = true,
                ERROR if !body.is_empty() => {
                    let text = String::from_utf8_lossy(&body).into_owned();
                    this.ended = true;
                    return Poll::Ready(Err(this.error(text)));
                }
                _ => {}
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for PortForwardIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.outgoing.len() > MAX_MESSAGE {
            std::task::ready!(this.poll_send_outgoing(cx))?;
        }
        let n = buf.len().min(MAX_MESSAGE + 1 - this.outgoing.len());
        this.outgoing.extend_from_slice(&buf[..n]);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.poll_send_outgoing(cx))?;
        Pin::new(&mut this.ws)
            .poll_flush(cx)
            .map_err(|e| this.error(e))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.poll_send_outgoing(cx))?;
        Pin::new(&mut this.ws)
            .poll_close(cx)
            .map_err(|e| this.error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateRunning, ContainerStatus, PodStatus,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn pod(name: &str, created_secs: i64, phase: &str, running: bool) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = Some(name.into());
        p.metadata.creation_timestamp = Some(Time(
            k8s_openapi::jiff::Timestamp::from_second(1_700_000_000 + created_secs).unwrap(),
        ));
        p.status = Some(PodStatus {
            phase: Some(phase.into()),
            container_statuses: Some(vec![ContainerStatus {
                name: "agent".into(),
                state: Some(ContainerState {
                    running: running.then(ContainerStateRunning::default),
                    ..Default::default()
                }),
                ..Default::default()
            }]),
            ..Default::default()
        });
        p
    }

    #[test]
    fn newest_running_pod_wins() {
        let pods = vec![
            pod("old", 0, "Running", true),
            pod("new", 100, "Running", true),
            pod("newest-pending", 200, "Pending", false),
            pod("newest-starting", 300, "Running", false),
        ];
        assert_eq!(pick_pod(&pods, None), Some("new"));
    }

    #[test]
    fn terminating_pods_are_skipped() {
        let mut gone = pod("gone", 100, "Running", true);
        gone.metadata.deletion_timestamp = gone.metadata.creation_timestamp.clone();
        let pods = vec![pod("old", 0, "Running", true), gone];
        assert_eq!(pick_pod(&pods, None), Some("old"));
    }

    #[test]
    fn the_pod_that_failed_last_is_tried_only_when_alone() {
        let pods = vec![pod("a", 0, "Running", true), pod("b", 100, "Running", true)];
        assert_eq!(pick_pod(&pods, Some("b")), Some("a"));
        assert_eq!(pick_pod(&pods[1..], Some("b")), Some("b"));
    }

    #[test]
    fn ties_break_by_name_and_nothing_running_is_none() {
        let pods = vec![pod("b", 5, "Running", true), pod("a", 5, "Running", true)];
        assert_eq!(pick_pod(&pods, None), Some("a"));
        let pods = vec![
            pod("x", 0, "Succeeded", false),
            pod("y", 0, "Pending", false),
        ];
        assert_eq!(pick_pod(&pods, None), None);
        assert_eq!(pick_pod(&[], None), None);
        let mut no_status = pod("z", 0, "Running", true);
        no_status.status = None;
        assert_eq!(pick_pod(&[no_status], None), None);
    }

    mod io {
        use futures::{SinkExt, StreamExt};
        use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
        use tokio_tungstenite::tungstenite::protocol::Role;

        use super::super::*;

        /// Our end of a port-forward and the kubelet's (as kube-apiserver
        /// relays it), over an in-memory pipe; the kubelet's end has sent
        /// each channel's opening message for port 7001.
        async fn pair() -> (PortForwardIo<DuplexStream>, WebSocketStream<DuplexStream>) {
            let (ours, theirs) = tokio::io::duplex(1 << 20);
            let ours = WebSocketStream::from_raw_socket(ours, Role::Client, None).await;
            let mut kubelet = WebSocketStream::from_raw_socket(theirs, Role::Server, None).await;
            for channel in [DATA, ERROR] {
                let opening = [channel, 0x59, 0x1b]; // 7001, little endian
                kubelet
                    .send(Message::Binary(opening.to_vec().into()))
                    .await
                    .unwrap();
            }
            (
                PortForwardIo::new(ours, "port-forward to pod ns/agent port 7001".into()),
                kubelet,
            )
        }

        #[tokio::test]
        async fn reads_the_data_channel_after_its_opening_message() {
            let (mut io, mut kubelet) = pair().await;
            kubelet
                .send(Message::Binary(b"\x00hello ".to_vec().into()))
                .await
                .unwrap();
            kubelet
                .send(Message::Ping(Bytes::from_static(b"p")))
                .await
                .unwrap();
            kubelet
                .send(Message::Binary(b"\x00world".to_vec().into()))
                .await
                .unwrap();
            let mut buf = [0u8; 11];
            io.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"hello world");
            kubelet.send(Message::Close(None)).await.unwrap();
            let mut rest = Vec::new();
            assert_eq!(
                io.read_to_end(&mut rest).await.unwrap(),
                0,
                "EOF after close"
            );
        }

        #[tokio::test]
        async fn writes_between_flushes_are_one_data_message() {
            let (mut io, mut kubelet) = pair().await;
            for part in [&b"HEADERS"[..], b"DATA", b"END"] {
                io.write_all(part).await.unwrap();
            }
            io.flush().await.unwrap();
            io.write_all(b"PING").await.unwrap();
            io.flush().await.unwrap();
            let first = kubelet.next().await.unwrap().unwrap().into_data();
            assert_eq!(&first[..], b"\x00HEADERSDATAEND");
            let second = kubelet.next().await.unwrap().unwrap().into_data();
            assert_eq!(&second[..], b"\x00PING");
        }

        #[tokio::test]
        async fn a_large_write_is_split_at_the_message_limit() {
            let (mut io, mut kubelet) = pair().await;
            let data = vec![7u8; MAX_MESSAGE * 2 + 10];
            let writer = tokio::spawn(async move {
                io.write_all(&data).await.unwrap();
                io.flush().await.unwrap();
                io
            });
            let mut sizes = Vec::new();
            while sizes.iter().sum::<usize>() < MAX_MESSAGE * 2 + 10 {
                let message = kubelet.next().await.unwrap().unwrap().into_data();
                assert_eq!(message[0], DATA);
                sizes.push(message.len() - 1);
            }
            writer.await.unwrap();
            assert_eq!(sizes, vec![MAX_MESSAGE, MAX_MESSAGE, 10]);
        }

        #[tokio::test]
        async fn a_message_on_the_error_channel_fails_the_read() {
            let (mut io, mut kubelet) = pair().await;
            let refusal = b"\x01error forwarding port 7001: connection refused";
            kubelet
                .send(Message::Binary(refusal.to_vec().into()))
                .await
                .unwrap();
            let err = io.read(&mut [0u8; 16]).await.unwrap_err();
            assert_eq!(
                err.to_string(),
                "port-forward to pod ns/agent port 7001: error forwarding port 7001: connection refused"
            );
        }
    }
}
