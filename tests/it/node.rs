//! The simulated node (`support::node`): a Deployment's pod is scheduled onto
//! it and becomes Available with a ready EndpointSlice, and a port-forward
//! through kube-apiserver's `pods/portforward` reaches the local process that
//! stands for the pod's container, byte-exact, with the plane's kubectl
//! (WebSocket and SPDY) and with kube-rs; ending the pod ends the streams.

use std::process::Stdio;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::await_condition;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use crate::support::echo::Echo;
use crate::support::node::{self, NODE_NAME};
use crate::support::plane::{Plane, plane};

/// The pod port the tests forward.
const POD_PORT: u16 = 8080;
/// How long one step may take on a loaded machine (they take well under a
/// second to a few seconds normally).
const STEP: Duration = Duration::from_secs(90);
/// How long a client may take to see that its pod is gone.
const END_WITHIN: Duration = Duration::from_secs(15);

/// A Deployment of one replica (the image is never pulled: kwok runs no
/// containers) and a Service in front of it.
async fn deploy(client: &kube::Client, ns: &str, name: &str) {
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "ports": [{"name": "tunnel", "containerPort": POD_PORT}],
                }]},
            },
        },
    }))
    .expect("Deployment");
    Api::<Deployment>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &deployment)
        .await
        .expect("create Deployment");
    let service: Service = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "spec": {
            "selector": {"app": name},
            "ports": [{"name": "tunnel", "port": 443, "targetPort": "tunnel"}],
        },
    }))
    .expect("Service");
    Api::<Service>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &service)
        .await
        .expect("create Service");
}

/// Waits until the Deployment reports Available with its one replica, and
/// returns its pod.
async fn available_pod(plane: &Plane, client: &kube::Client, ns: &str, name: &str) -> Pod {
    let deployments = Api::<Deployment>::namespaced(client.clone(), ns);
    let available = |d: Option<&Deployment>| {
        let Some(status) = d.and_then(|d| d.status.as_ref()) else {
            return false;
        };
        status.available_replicas == Some(1)
            && status
                .conditions
                .iter()
                .flatten()
                .any(|c| c.type_ == "Available" && c.status == "True")
    };
    tokio::time::timeout(STEP, await_condition(deployments, name, available))
        .await
        .unwrap_or_else(|_| {
            panic!(
                "Deployment {ns}/{name} not Available within {STEP:?}\n--- kwok.log ---\n{}",
                node::kwok_log(plane)
            )
        })
        .expect("watch Deployment");
    let pods = Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&format!("app={name}")))
        .await
        .expect("list pods");
    let mut live: Vec<Pod> = pods
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    assert_eq!(live.len(), 1, "one live pod of {ns}/{name}: {live:#?}");
    live.remove(0)
}

/// `len` reproducible pseudo-random bytes (xorshift64).
fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Writes `data` through `stream` while reading as many bytes back (kwok
/// passes no half-close, so the echo is read by length, not to EOF), and
/// checks they are the same. Returns the stream for further use.
async fn round_trip<S>(stream: S, data: Vec<u8>, what: &str) -> S
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut reader, mut writer) = tokio::io::split(stream);
    let len = data.len();
    let write = tokio::spawn(async move { writer.write_all(&data).await.map(|()| (writer, data)) });
    let mut back = vec![0u8; len];
    tokio::time::timeout(STEP, reader.read_exact(&mut back))
        .await
        .unwrap_or_else(|_| panic!("{what}: echo of {len} bytes not back within {STEP:?}"))
        .unwrap_or_else(|e| panic!("{what}: read the echo: {e}"));
    let (writer, data) = write
        .await
        .expect("writer task")
        .unwrap_or_else(|e| panic!("{what}: write: {e}"));
    if let Some(at) = back.iter().zip(&data).position(|(a, b)| a != b) {
        panic!("{what}: the echo differs from what was sent at byte {at} of {len}");
    }
    reader.unsplit(writer)
}

/// `kubectl port-forward` run by a test: the local port it listens on, and
/// what it printed.
struct KubectlForward {
    child: tokio::process::Child,
    port: u16,
    stderr: tokio::task::JoinHandle<String>,
}

impl KubectlForward {
    /// Runs the plane's kubectl `port-forward <target> :POD_PORT` in `ns`,
    /// over WebSocket (kubectl's default) or SPDY, and waits for its listener.
    async fn start(plane: &Plane, ns: &str, target: &str, websockets: bool) -> KubectlForward {
        let mut child = tokio::process::Command::new(plane.kubectl_path())
            .arg("--kubeconfig")
            .arg(&plane.kubeconfig)
            .args(["-n", ns, "port-forward", "--address=127.0.0.1", target])
            .arg(format!(":{POD_PORT}"))
            .env("HOME", std::env::temp_dir())
            .env(
                "KUBECTL_PORT_FORWARD_WEBSOCKETS",
                if websockets { "true" } else { "false" },
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start kubectl port-forward");
        let mut stderr = child.stderr.take().expect("stderr");
        let stderr = tokio::spawn(async move {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text).await;
            text
        });
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let first = tokio::time::timeout(STEP, lines.next_line())
            .await
            .expect("kubectl port-forward printed nothing")
            .expect("read kubectl output")
            .expect("kubectl port-forward ended before listening");
        // "Forwarding from 127.0.0.1:40123 -> 8080"
        let port = first
            .strip_prefix("Forwarding from 127.0.0.1:")
            .and_then(|rest| rest.split_once(' '))
            .and_then(|(port, _)| port.parse().ok())
            .unwrap_or_else(|| panic!("unexpected kubectl port-forward output: {first}"));
        // Keep draining stdout ("Handling connection for ...").
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        KubectlForward {
            child,
            port,
            stderr,
        }
    }

    async fn connect(&self) -> tokio::net::TcpStream {
        tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .expect("connect to kubectl port-forward")
    }

    /// Gives kubectl `grace` to exit on its own, then stops it; returns how
    /// it ended and its stderr.
    async fn finish(mut self, grace: Duration) -> (String, String) {
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => format!("exited by itself: {status}"),
            Ok(Err(e)) => format!("wait failed: {e}"),
            Err(_) => {
                let _ = self.child.kill().await;
                format!("still running after {grace:?} (killed)")
            }
        };
        let stderr = self.stderr.await.unwrap_or_default();
        (status, stderr)
    }
}

/// A namespace with a forwarding rule to a fresh echo server and a Deployment
/// whose pod is Available on the simulated node.
async fn echo_deployment(
    plane: &Plane,
    client: &kube::Client,
    prefix: &str,
) -> (String, Echo, Pod) {
    plane.node();
    let ns = plane.namespace(prefix).await;
    let echo = Echo::start().await.expect("start echo server");
    node::forward_port(client, &ns, &[], POD_PORT, echo.addr)
        .await
        .expect("forwarding rule");
    deploy(client, &ns, "agent").await;
    let pod = available_pod(plane, client, &ns, "agent").await;
    (ns, echo, pod)
}

#[tokio::test]
async fn deployment_becomes_available_on_the_simulated_node() {
    let plane = plane();
    let node = plane.node();
    let client = plane.client().await;
    let ns = plane.namespace("node-deploy").await;
    deploy(&client, &ns, "web").await;
    let pod = available_pod(plane, &client, &ns, "web").await;
    let spec = pod.spec.as_ref().expect("pod spec");
    assert_eq!(
        spec.node_name.as_deref(),
        Some(node.name.as_str()),
        "scheduled onto the node"
    );
    let status = pod.status.as_ref().expect("pod status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let pod_ip = status.pod_ip.clone().expect("pod IP");
    assert!(
        pod_ip.starts_with("10.244."),
        "pod IP {pod_ip} from the pod CIDR"
    );

    // The Service's EndpointSlice lists the pod as ready.
    let slices = Api::<EndpointSlice>::namespaced(client.clone(), &ns);
    let pod_name = pod.metadata.name.clone().expect("pod name");
    let deadline = Instant::now() + STEP;
    loop {
        let list = slices
            .list(&ListParams::default().labels("kubernetes.io/service-name=web"))
            .await
            .expect("list EndpointSlices");
        let ready = list
            .items
            .iter()
            .flat_map(|s| s.endpoints.iter().flatten())
            .any(|e| {
                e.addresses == [pod_ip.clone()]
                    && e.conditions.as_ref().and_then(|c| c.ready) == Some(true)
                    && e.target_ref.as_ref().and_then(|r| r.name.as_deref())
                        == Some(pod_name.as_str())
                    && e.node_name.as_deref() == Some(NODE_NAME)
            });
        if ready {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no ready endpoint for {pod_name} ({pod_ip}) within {STEP:?}: {:#?}",
            list.items
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn kube_rs_portforward_reaches_the_local_container() {
    let plane = plane();
    let client = plane.client().await;
    let (ns, echo, pod) = echo_deployment(plane, &client, "node-kube-rs").await;
    let pod_name = pod.metadata.name.expect("pod name");
    let pods = Api::<Pod>::namespaced(client.clone(), &ns);

    // Concurrent streams, one WebSocket each, 256 KiB apiece.
    const STREAMS: u64 = 8;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..STREAMS {
        let pods = pods.clone();
        let pod_name = pod_name.clone();
        tasks.spawn(async move {
            let mut forwarder = pods
                .portforward(&pod_name, &[POD_PORT])
                .await
                .expect("portforward");
            let stream = forwarder.take_stream(POD_PORT).expect("stream");
            let stream = round_trip(stream, pattern(i, 256 * 1024), &format!("stream {i}")).await;
            drop(stream);
            forwarder.join().await.expect("forwarder ends cleanly");
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("stream task");
    }

    // One transfer of a few MiB, in several writes on the same stream.
    let started = Instant::now();
    let mut forwarder = pods
        .portforward(&pod_name, &[POD_PORT])
        .await
        .expect("portforward");
    let mut stream = forwarder.take_stream(POD_PORT).expect("stream");
    for round in 0..4 {
        stream = round_trip(stream, pattern(100 + round, 1024 * 1024), "4 MiB transfer").await;
    }
    eprintln!(
        "kube-rs portforward: 4 MiB echoed in {:.2}s",
        started.elapsed().as_secs_f64()
    );
    drop(stream);
    forwarder.join().await.expect("forwarder ends cleanly");
    assert_eq!(
        echo.accepted(),
        STREAMS as usize + 1,
        "every stream reached the local container once"
    );
}

async fn kubectl_port_forward_reaches_the_local_container(websockets: bool) {
    let plane = plane();
    let client = plane.client().await;
    let prefix = if websockets {
        "node-kubectl-ws"
    } else {
        "node-kubectl-spdy"
    };
    let (ns, echo, _pod) = echo_deployment(plane, &client, prefix).await;
    let forward = KubectlForward::start(plane, &ns, "deployment/agent", websockets).await;

    const STREAMS: u64 = 8;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..STREAMS {
        let conn = forward.connect().await;
        tasks.spawn(async move {
            round_trip(conn, pattern(i, 256 * 1024), &format!("connection {i}")).await;
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("connection task");
    }
    let started = Instant::now();
    let mut conn = forward.connect().await;
    for round in 0..4 {
        conn = round_trip(conn, pattern(100 + round, 1024 * 1024), "4 MiB transfer").await;
    }
    eprintln!(
        "kubectl port-forward ({}): 4 MiB echoed in {:.2}s",
        if websockets { "WebSocket" } else { "SPDY" },
        started.elapsed().as_secs_f64()
    );
    drop(conn);
    let (status, stderr) = forward.finish(Duration::ZERO).await;
    assert_eq!(
        echo.accepted(),
        STREAMS as usize + 1,
        "every connection reached the local container once; kubectl {status}: {stderr}"
    );
}

#[tokio::test]
async fn kubectl_port_forward_over_websocket_reaches_the_local_container() {
    kubectl_port_forward_reaches_the_local_container(true).await;
}

#[tokio::test]
async fn kubectl_port_forward_over_spdy_reaches_the_local_container() {
    kubectl_port_forward_reaches_the_local_container(false).await;
}

/// How the pod goes away.
#[derive(Clone, Copy, Debug)]
enum End {
    DeletePod,
    ScaleToZero,
}

/// What a client saw after its pod went away, and when.
#[derive(Debug)]
struct Seen {
    /// From the delete (or scale) request.
    after: Duration,
    what: String,
}

/// Writes a byte every 50 ms and reads it back until the stream fails or
/// ends; returns what ended it. kwok ends a forwarded stream only when both
/// directions have ended, so a client that only reads would not notice.
async fn ping_until_end<S>(stream: S, since: Instant) -> Seen
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (mut reader, mut writer) = tokio::io::split(stream);
    let mut byte = [0u8; 1];
    let deadline = since + END_WITHIN;
    loop {
        if let Err(e) = writer.write_all(b"p").await {
            return Seen {
                after: since.elapsed(),
                what: format!("write failed: {e}"),
            };
        }
        let _ = writer.flush().await;
        match tokio::time::timeout(Duration::from_millis(50), reader.read(&mut byte)).await {
            Ok(Ok(0)) => {
                return Seen {
                    after: since.elapsed(),
                    what: "end of stream".into(),
                };
            }
            Ok(Err(e)) => {
                return Seen {
                    after: since.elapsed(),
                    what: format!("read failed: {e}"),
                };
            }
            Ok(Ok(_)) | Err(_) => {}
        }
        if Instant::now() > deadline {
            return Seen {
                after: since.elapsed(),
                what: "still open".into(),
            };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Open streams to the pod through kube-rs and through kubectl (WebSocket);
/// end the pod; the local container stops when the pod is gone, as a
/// container dies with its pod; both clients must see their stream end.
async fn ending_the_pod_ends_forwarded_streams(end: End) {
    let plane = plane();
    let client = plane.client().await;
    let prefix = match end {
        End::DeletePod => "node-delete",
        End::ScaleToZero => "node-scale",
    };
    let (ns, echo, pod) = echo_deployment(plane, &client, prefix).await;
    let pod_name = pod.metadata.name.expect("pod name");
    let pods = Api::<Pod>::namespaced(client.clone(), &ns);

    let mut forwarder = pods
        .portforward(&pod_name, &[POD_PORT])
        .await
        .expect("portforward");
    let kube_stream = forwarder.take_stream(POD_PORT).expect("stream");
    let kube_error = forwarder.take_error(POD_PORT).expect("error channel");
    let kube_stream = round_trip(kube_stream, pattern(1, 4096), "kube-rs before the end").await;
    let kubectl = KubectlForward::start(plane, &ns, &format!("pod/{pod_name}"), true).await;
    let conn = round_trip(
        kubectl.connect().await,
        pattern(2, 4096),
        "kubectl before the end",
    )
    .await;

    // The simulated container dies with its pod.
    let watcher = {
        let client = client.clone();
        let (ns, pod_name) = (ns.clone(), pod_name.clone());
        tokio::spawn(async move {
            node::pod_deleted(&client, &ns, &pod_name)
                .await
                .expect("watch pod");
            echo.stop();
            Instant::now()
        })
    };
    let since = Instant::now();
    match end {
        End::DeletePod => {
            pods.delete(&pod_name, &DeleteParams::default())
                .await
                .expect("delete pod");
        }
        End::ScaleToZero => {
            Api::<Deployment>::namespaced(client.clone(), &ns)
                .patch(
                    "agent",
                    &PatchParams::default(),
                    &Patch::Merge(serde_json::json!({"spec": {"replicas": 0}})),
                )
                .await
                .expect("scale to 0");
        }
    }
    let (kube_seen, kubectl_seen) = tokio::join!(
        ping_until_end(kube_stream, since),
        ping_until_end(conn, since)
    );
    let gone = tokio::time::timeout(STEP, watcher)
        .await
        .expect("pod not gone")
        .expect("watcher task");
    let kube_error = tokio::time::timeout(Duration::from_secs(5), kube_error).await;
    let joined = tokio::time::timeout(Duration::from_secs(5), forwarder.join()).await;
    let (kubectl_status, kubectl_stderr) = kubectl.finish(Duration::from_secs(5)).await;
    eprintln!(
        "{end:?}: pod gone after {:.2}s; kube-rs: {kube_seen:?}, error channel {kube_error:?}, \
         forwarder {joined:?}; kubectl (WebSocket): {kubectl_seen:?}, {kubectl_status}, stderr: {}",
        gone.duration_since(since).as_secs_f64(),
        kubectl_stderr.trim()
    );
    for (client, seen) in [("kube-rs", &kube_seen), ("kubectl", &kubectl_seen)] {
        assert!(
            seen.what != "still open" && seen.after < END_WITHIN,
            "{client}: the stream outlived its pod by {END_WITHIN:?}: {seen:?}"
        );
    }
    // The kubelet API's error reaches kube-rs' error channel, and kubectl
    // gives up on its own ("error: lost connection to pod").
    assert!(
        matches!(&kube_error, Ok(Some(message)) if message.contains("error forwarding port")),
        "kube-rs error channel: {kube_error:?}"
    );
    assert!(
        kubectl_status.starts_with("exited by itself")
            && kubectl_stderr.contains("lost connection to pod"),
        "kubectl: {kubectl_status}: {kubectl_stderr}"
    );
    // A new forward to the gone pod is refused by kube-apiserver.
    match pods.portforward(&pod_name, &[POD_PORT]).await {
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(e) => panic!("a new forward to the gone pod: {e}"),
        Ok(_) => panic!("a new forward to the gone pod was accepted"),
    }
}

#[tokio::test]
async fn deleting_the_pod_ends_forwarded_streams() {
    ending_the_pod_ends_forwarded_streams(End::DeletePod).await;
}

#[tokio::test]
async fn scaling_to_zero_ends_forwarded_streams() {
    ending_the_pod_ends_forwarded_streams(End::ScaleToZero).await;
}
