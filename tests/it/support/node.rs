//! The simulated node of the test plane: kube-scheduler and kwok
//! (`sigs.k8s.io/kwok`, a kubelet simulator built by `tests/tools/build.sh`)
//! managing one Node, started once per test binary on first use of
//! [`Plane::node`](super::plane::Plane::node), and the seam that says where a
//! pod's port leads ([`forward_port`]).
//!
//! What is real: kube-apiserver's `pods/portforward` subresource (WebSocket
//! and SPDY), the kubelet API that answers it (kwok's, the same streaming
//! code a kubelet uses, over TLS verified against the plane's kubelet CA),
//! kube-scheduler, and the deployment, replicaset and endpointslice
//! controllers. What is simulated: the containers. kwok's stages mark pods
//! Running and Ready at once, and a forwarded connection to a pod port is
//! dialled to a local address a `ClusterPortForward` names, so a local
//! process stands in for the pod's container. Its lifetime is the test's
//! business: nothing stops it when the pod goes ([`pod_deleted`] says when).
//!
//! Known differences from a kubelet: kwok does not pass EOF or a half-close
//! through a forwarded stream (it ends a stream only when both directions
//! have ended), and pod IPs come from [`POD_CIDR`].

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kubectl_cozy::pki::LeafSpec;

use super::plane::{self, Plane};

/// The Node kwok manages.
pub const NODE_NAME: &str = "kwok-node";
/// The node's InternalIP; kwok's kubelet API listens there.
pub const NODE_IP: &str = "127.0.0.2";
/// Where kwok takes pod IPs from: away from the service range (10.0.0.0/24)
/// and outside 127.0.0.0/8, which EndpointSlices refuse.
pub const POD_CIDR: &str = "10.244.0.0/16";

/// How long the node may take to start (kwok's first list and its node
/// stage; seconds normally, more on a loaded machine).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A running simulated node.
#[derive(Debug)]
pub struct Node {
    /// The Node's name ([`NODE_NAME`]).
    pub name: String,
    /// Where kwok's kubelet API listens (`NODE_IP:<port>`, HTTPS).
    pub kubelet: SocketAddr,
}

static NODE: OnceLock<Result<Node, String>> = OnceLock::new();

/// The plane's node, started on first use.
pub(super) fn node() -> &'static Node {
    let result = NODE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        // Like the plane's own thread: the children's PR_SET_PDEATHSIG fires
        // when the spawning thread exits, so this one never does.
        std::thread::Builder::new()
            .name("simulated-node".into())
            .spawn(move || {
                let _ = tx.send(start(super::plane()));
                loop {
                    std::thread::park();
                }
            })
            .map_err(|e| format!("spawn simulated-node thread: {e}"))?;
        rx.recv()
            .map_err(|e| format!("simulated-node thread died: {e}"))?
    });
    match result {
        Ok(node) => node,
        Err(e) => panic!("the simulated node did not start: {e}"),
    }
}

fn start(plane: &Plane) -> Result<Node, String> {
    let started = Instant::now();
    let deadline = started + START_TIMEOUT;
    let tools = super::tools::tools_dir()?;
    let dir = plane.dir.join("node");
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| -> Result<String, String> {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
        Ok(path.display().to_string())
    };
    let kubectl = plane.kubectl_path();
    let kubectl_ok = |args: &[&str]| plane::kubectl_ok(&kubectl, &plane.kubeconfig, args);

    // kwok watches ClusterPortForward objects (the forward_port seam).
    let crd = tools.join("kwok-clusterportforwards.crd.yaml");
    let crd = crd.display().to_string();
    plane::wait_for(&plane.dir, "ClusterPortForward CRD", deadline, || {
        kubectl_ok(&["apply", "--server-side", "-f", &crd])
    })?;
    plane::wait_for(
        &plane.dir,
        "ClusterPortForward CRD established",
        deadline,
        || {
            kubectl_ok(&[
                "wait",
                "--for=condition=Established",
                "--timeout=5s",
                "crd/clusterportforwards.kwok.x-k8s.io",
            ])
        },
    )?;

    // The Node object, as a kubelet would register it. kube-apiserver's
    // TaintNodesByCondition admission adds the not-ready taint.
    let node_json = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": NODE_NAME,
            "labels": {
                "kubernetes.io/hostname": NODE_NAME,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            },
            "annotations": {"kwok.x-k8s.io/node": "fake"},
        },
    });
    let node_file = write("node.json", &node_json.to_string())?;
    plane::wait_for(&plane.dir, "Node object", deadline, || {
        kubectl_ok(&["apply", "--server-side", "-f", &node_file])
    })?;

    // kube-scheduler, with the same kind of identity as kube-controller-manager.
    let scheduler = plane
        .client_ca
        .issue(&LeafSpec::client(
            "system:kube-scheduler",
            &["system:masters"],
        ))
        .map_err(|e| format!("scheduler certificate: {e}"))?;
    let scheduler_kubeconfig = dir.join("scheduler.kubeconfig");
    plane::write_kubeconfig(
        &scheduler_kubeconfig,
        &plane.server,
        &plane.serving_ca_pem,
        &scheduler,
    )?;
    let scheduler_port = plane::free_port()?;
    plane::spawn(
        &plane.dir,
        "kube-scheduler",
        Command::new(plane.bin_dir.join("kube-scheduler")).args([
            format!("--kubeconfig={}", scheduler_kubeconfig.display()),
            format!(
                "--authentication-kubeconfig={}",
                scheduler_kubeconfig.display()
            ),
            format!(
                "--authorization-kubeconfig={}",
                scheduler_kubeconfig.display()
            ),
            "--leader-elect=false".to_owned(),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--secure-port={scheduler_port}"),
            format!("--cert-dir={}", dir.join("scheduler-certs").display()),
        ]),
    )?;

    // kwok: its kubelet API on NODE_IP with a certificate kube-apiserver
    // verifies, its stages from the same module, ClusterPortForward as CRD.
    let kubelet_port = plane::free_port_on(NODE_IP)?;
    let serving = plane
        .kubelet_ca
        .issue(&LeafSpec::server(
            NODE_NAME,
            &[NODE_NAME],
            &[NODE_IP.parse().expect("NODE_IP")],
        ))
        .map_err(|e| format!("kubelet serving certificate: {e}"))?;
    let cert_file = write("kubelet.crt", &serving.cert_pem)?;
    let key_file = write("kubelet.key", &serving.key_pem)?;
    let config = kwok_configuration(kubelet_port, &cert_file, &key_file);
    let config_file = write("kwok.json", &config.to_string())?;
    let work_dir = dir.join("kwok-workdir");
    plane::spawn(
        &plane.dir,
        "kwok",
        Command::new(tools.join("kwok"))
            .arg(format!("--kubeconfig={}", plane.kubeconfig.display()))
            .arg(format!(
                "--config={}",
                tools.join("kwok-stages.yaml").display()
            ))
            .arg(format!("--config={config_file}"))
            // kwok would also read ~/.kwok/kwok.yaml; point it elsewhere.
            .env("KWOK_WORKDIR", &work_dir),
    )?;
    plane::wait_for(&plane.dir, "kube-scheduler", deadline, || {
        plane::tls_port_open(scheduler_port)
    })?;
    plane::wait_for(&plane.dir, "kwok's kubelet API", deadline, || {
        std::net::TcpStream::connect((NODE_IP, kubelet_port)).is_ok()
    })?;
    let node_ref = format!("node/{NODE_NAME}");
    plane::wait_for(&plane.dir, "node Ready", deadline, || {
        kubectl_ok(&["wait", "--for=condition=Ready", "--timeout=5s", &node_ref])
    })?;
    // What the node-lifecycle controller would do once the node is Ready.
    plane::wait_for(&plane.dir, "node taints cleared", deadline, || {
        kubectl_ok(&[
            "patch",
            &node_ref,
            "--type=merge",
            "-p",
            r#"{"spec":{"taints":null}}"#,
        ])
    })?;
    eprintln!(
        "[control-plane] simulated node {NODE_NAME} (kube-scheduler, kwok) ready after {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Ok(Node {
        name: NODE_NAME.to_owned(),
        kubelet: SocketAddr::new(NODE_IP.parse().expect("NODE_IP"), kubelet_port),
    })
}

/// kwok's `KwokConfiguration`. kwok applies no defaults to a configuration it
/// reads, so every defaulted option is spelled out (values as kwok's own
/// defaults, except where said).
fn kwok_configuration(port: u16, cert_file: &str, key_file: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokConfiguration",
        "metadata": {"name": "kubectl-cozy-test"},
        "options": {
            "enableCRDs": ["ClusterPortForward"],
            "cidr": POD_CIDR,
            "nodeIP": NODE_IP,
            "nodeName": NODE_NAME,
            "nodePort": port,
            "serverAddress": format!("{NODE_IP}:{port}"),
            "tlsCertFile": cert_file,
            "tlsPrivateKeyFile": key_file,
            "manageSingleNode": NODE_NAME,
            "manageAllNodes": false,
            // Without it every port-forward fails with "Debug endpoints are
            // disabled".
            "enableDebuggingHandlers": true,
            "enableContentionProfiling": false,
            "enableProfilingHandler": false,
            "podPlayStageParallelism": 4,
            "nodePlayStageParallelism": 4,
            "nodeLeaseDurationSeconds": 40,
            "nodeLeaseParallelism": 4,
            "podsOnNodeSyncParallelism": 1,
            "enablePodsOnNodeSyncListPager": true,
            "enablePodsOnNodeSyncStreamWatch": false,
        },
    })
}

/// The kind of kwok's forwarding rules.
fn cluster_port_forward() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("kwok.x-k8s.io", "v1alpha1", "ClusterPortForward"),
        "clusterportforwards",
    )
}

/// Says where port `pod_port` of pods in `namespace` leads: kwok dials
/// `target` for every connection forwarded to that port (through
/// kube-apiserver's `pods/portforward`) of every pod in the namespace, or
/// only of the pods named in `pods` when it is not empty. kwok has no label
/// selector here; tests get a namespace of their own, so "every pod in the
/// namespace" is "the pods of this test's Deployment".
///
/// The rule is a `ClusterPortForward` named `<namespace>-<pod_port>`, owned by
/// the namespace (it goes when the namespace goes). Create it before the pods:
/// kwok reads rules from a watch and looks one up for each new forwarded
/// connection, so a rule made after a connection was opened does not apply to
/// that connection. Returns the rule's name.
pub async fn forward_port(
    client: &kube::Client,
    namespace: &str,
    pods: &[&str],
    pod_port: u16,
    target: SocketAddr,
) -> Result<String, String> {
    let ns = Api::<Namespace>::all(client.clone())
        .get(namespace)
        .await
        .map_err(|e| format!("get namespace {namespace}: {e}"))?;
    let uid = ns.metadata.uid.unwrap_or_default();
    let name = format!("{namespace}-{pod_port}");
    let mut selector = serde_json::json!({"matchNamespaces": [namespace]});
    if !pods.is_empty() {
        selector["matchNames"] = serde_json::json!(pods);
    }
    let resource = cluster_port_forward();
    let rule: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {
            "name": name,
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "Namespace",
                "name": namespace,
                "uid": uid,
            }],
        },
        "spec": {
            "selector": selector,
            "forwards": [{
                "ports": [pod_port],
                "target": {"address": target.ip().to_string(), "port": target.port()},
            }],
        },
    }))
    .map_err(|e| format!("ClusterPortForward {name}: {e}"))?;
    Api::<DynamicObject>::all_with(client.clone(), &resource)
        .create(&PostParams::default(), &rule)
        .await
        .map_err(|e| format!("create ClusterPortForward {name}: {e}"))?;
    Ok(name)
}

/// Waits until pod `name` in `namespace` no longer exists (deleted, with its
/// finalizers done); the moment a test stops the local process that stood
/// for its container.
pub async fn pod_deleted(client: &kube::Client, namespace: &str, name: &str) -> Result<(), String> {
    let pods = Api::<Pod>::namespaced(client.clone(), namespace);
    let uid = pods
        .get_opt(name)
        .await
        .map_err(|e| format!("get pod {namespace}/{name}: {e}"))?
        .and_then(|p| p.metadata.uid);
    let Some(uid) = uid else {
        return Ok(());
    };
    await_condition(pods, name, conditions::is_deleted(&uid))
        .await
        .map(|_| ())
        .map_err(|e| format!("watch pod {namespace}/{name}: {e}"))
}

/// The kwok binary's log, for test failure messages.
pub fn kwok_log(plane: &Plane) -> String {
    log_tail(&plane.dir.join("kwok.log"), 30)
}

fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(lines).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}
