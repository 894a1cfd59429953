//! The production transport: kube-apiserver's `pods/portforward` subresource
//! (a WebSocket per connection, through the kubelet into the agent pod's
//! network namespace, where the kubelet dials `localhost:<control port>`).
//!
//! Each [`Transport::connect`] lists the agent's pods by label and picks one
//! anew ([`pick_pod`]), so a reconnect follows a rescheduled or restarted
//! agent. Needs `list` on `pods` and `create` on `pods/portforward` in the
//! agent's namespace.
//!
//! The port-forward protocol has no half-close and its error channel is
//! separate from the data: an error the kubelet reports (e.g. nothing listens
//! on the port) fails the stream's next read or write here, and EOF is never
//! relied on (the tunnel's keepalive detects a dead forward).

use std::cmp::Reverse;
use std::io;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Portforwarder;
use kube::api::{Api, ListParams};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};

use super::transport::{Connected, Transport, TransportError};

/// Port-forwards to a running pod of the agent, chosen by label selector.
pub struct PortForwardTransport {
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
            pods: Api::namespaced(client, namespace),
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
        let mut forwarder = match self.pods.portforward(&pod, &[self.port]).await {
            Ok(f) => f,
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
        // Both are present: the forwarder was opened for exactly this port.
        let (Some(stream), Some(error)) = (
            forwarder.take_stream(self.port),
            forwarder.take_error(self.port),
        ) else {
            forwarder.abort();
            return Err(TransportError::Other(format!(
                "port-forward to pod {}/{pod} returned no stream for port {}",
                self.namespace, self.port
            )));
        };
        let endpoint = format!("pod/{pod}");
        tracing::debug!(namespace = %self.namespace, %pod, port = self.port, "port-forward open");
        Ok(Connected {
            io: Box::new(PortForwardIo {
                stream,
                error: Some(error.boxed()),
                failed: None,
                forwarder,
                what: format!(
                    "port-forward to pod {}/{pod} port {}",
                    self.namespace, self.port
                ),
            }),
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

/// The port-forwarded stream, failing with the kubelet's error message once
/// one arrives; aborts the forwarder when dropped.
struct PortForwardIo {
    stream: DuplexStream,
    error: Option<BoxFuture<'static, Option<String>>>,
    failed: Option<String>,
    forwarder: Portforwarder,
    what: String,
}

impl PortForwardIo {
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if let Some(error) = &mut self.error
            && let Poll::Ready(message) = error.poll_unpin(cx)
        {
            self.error = None;
            self.failed = message;
        }
        match &self.failed {
            Some(message) => Err(io::Error::other(format!("{}: {message}", self.what))),
            None => Ok(()),
        }
    }
}

impl AsyncRead for PortForwardIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for PortForwardIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

impl Drop for PortForwardIo {
    fn drop(&mut self) {
        self.forwarder.abort();
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
}
