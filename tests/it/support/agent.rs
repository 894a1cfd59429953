//! The container runtime of `serve`'s tunnel agent, for tests: kwok runs no
//! containers, so this harness plays that part for the agent pods of one
//! session namespace.
//!
//! - [`AgentRuntime::prepare`], **before** serve creates the pod: picks two
//!   free local ports (data, control) and creates a kwok `ClusterPortForward`
//!   so that a port-forward to the agent's control port (7001) of any pod in
//!   the namespace reaches `127.0.0.1:<control>` (kwok rules select by
//!   namespace only and must exist before the pod). The rule does not depend
//!   on the namespace existing: serve may create it.
//! - [`AgentRuntime::start`]: watches the namespace's agent pods; for each
//!   running one it reads the pod's container args and starts the real
//!   `kubectl-cozy tunnel-agent` binary with them, overriding only the listen
//!   addresses (data → `127.0.0.1:<data>`, control → `127.0.0.1:<control>`,
//!   health → any free port), with the credentials of the pod's
//!   ServiceAccount (a kubeconfig holding a TokenRequest token), so the
//!   agent's RBAC is the real one. When the pod is deleted (or starts
//!   terminating) the process gets SIGTERM, and SIGKILL 30 s later (the pod's
//!   grace period).
//! - The seam serve is started with: `--agent-service-external-name
//!   localhost:<data>` ([`AgentRuntime::seam`]): the aggregator dials the
//!   agent's data port directly, the tunnel's own leg is the real
//!   port-forward (serve → kube-apiserver pods/portforward → kwok's kubelet
//!   API → the agent's control port).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::bins;
use super::plane::{self, Plane};

/// The agent's control port in the pod (what serve port-forwards to).
pub const POD_CONTROL_PORT: u16 = 7001;
/// How long a deleted pod's process may take to stop before SIGKILL.
const GRACE: Duration = Duration::from_secs(30);

/// What happened to the agents, for assertions and failure messages.
#[derive(Debug, Clone, Default)]
pub struct Journal {
    /// Pods an agent process was started for, in order.
    pub started: Vec<String>,
    /// Lines the agents printed on stdout.
    pub stdout: Vec<String>,
    /// Exit statuses of agent processes, `pod: status`.
    pub exits: Vec<String>,
}

/// The agent runtime of one session namespace.
pub struct AgentRuntime {
    /// The session namespace.
    pub namespace: String,
    /// The agent's data port on 127.0.0.1 (the APIService's port).
    pub data_port: u16,
    /// The agent's control port on 127.0.0.1 (the forward target).
    pub control_port: u16,
    rule: String,
    dir: PathBuf,
    journal: Arc<Mutex<Journal>>,
    current: Arc<tokio::sync::Mutex<Option<(String, Child)>>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

fn cluster_port_forward() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("kwok.x-k8s.io", "v1alpha1", "ClusterPortForward"),
        "clusterportforwards",
    )
}

impl AgentRuntime {
    /// Picks the ports and creates the forward rule for `namespace` (which
    /// need not exist yet). Starts the simulated node if needed.
    pub async fn prepare(plane: &Plane, client: &kube::Client, namespace: &str) -> Self {
        let _ = plane.node();
        let data_port = plane::free_port().expect("free data port");
        let control_port = plane::free_port().expect("free control port");
        let rule = format!("serve-{namespace}");
        let object: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "ClusterPortForward",
            "metadata": {"name": rule},
            "spec": {
                "selector": {"matchNamespaces": [namespace]},
                "forwards": [{
                    "ports": [POD_CONTROL_PORT],
                    "target": {"address": "127.0.0.1", "port": control_port},
                }],
            },
        }))
        .expect("ClusterPortForward");
        Api::<DynamicObject>::all_with(client.clone(), &cluster_port_forward())
            .create(&PostParams::default(), &object)
            .await
            .expect("create ClusterPortForward");
        let dir = plane.dir.join(format!("agents-{namespace}"));
        std::fs::create_dir_all(&dir).expect("agent runtime dir");
        AgentRuntime {
            namespace: namespace.to_owned(),
            data_port,
            control_port,
            rule,
            dir,
            journal: Arc::new(Mutex::new(Journal::default())),
            current: Arc::new(tokio::sync::Mutex::new(None)),
            task: None,
        }
    }

    /// The `--agent-service-external-name` value for serve.
    pub fn seam(&self) -> String {
        format!("localhost:{}", self.data_port)
    }

    /// What happened so far.
    pub fn journal(&self) -> Journal {
        self.journal.lock().map(|j| j.clone()).unwrap_or_default()
    }

    /// The agents' stderr logs, for failure messages.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            let mut paths: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "log"))
                .collect();
            paths.sort();
            for p in paths {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(25).collect();
                out.push_str(&format!("--- {} ---\n", p.display()));
                for l in tail.into_iter().rev() {
                    out.push_str(l);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// Starts following the namespace's agent pods.
    pub fn start(&mut self, plane: &'static Plane, client: kube::Client) {
        let namespace = self.namespace.clone();
        let data = self.data_port;
        let control = self.control_port;
        let dir = self.dir.clone();
        let journal = self.journal.clone();
        let current = self.current.clone();
        self.task = Some(tokio::spawn(async move {
            let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
            let selector = "app.kubernetes.io/name=kubectl-cozy-tunnel-agent";
            loop {
                let listed = pods.list(&ListParams::default().labels(selector)).await;
                let running: BTreeMap<String, Pod> = match listed {
                    Ok(list) => list
                        .items
                        .into_iter()
                        .filter(|p| p.metadata.deletion_timestamp.is_none())
                        .filter(|p| {
                            p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                        })
                        .filter_map(|p| Some((p.metadata.name.clone()?, p)))
                        .collect(),
                    Err(_) => BTreeMap::new(),
                };
                let mut slot = current.lock().await;
                // The process exited by itself (after a reap, or a crash):
                // like a kubelet, start it again a moment later.
                if let Some((pod, child)) = slot.as_mut()
                    && let Ok(Some(status)) = child.try_wait()
                {
                    if let Ok(mut j) = journal.lock() {
                        j.exits.push(format!("{pod}: {status}"));
                    }
                    *slot = None;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                // The pod of the running process went: stop the process.
                let gone = slot
                    .as_ref()
                    .is_some_and(|(pod, _)| !running.contains_key(pod));
                if gone && let Some((pod, child)) = slot.take() {
                    stop(child, &pod, &journal).await;
                }
                // A running pod without a process: start one.
                if slot.is_none()
                    && let Some((name, pod)) = running.iter().next()
                {
                    match spawn(plane, &client, pod, data, control, &dir, &journal).await {
                        Ok(child) => *slot = Some((name.clone(), child)),
                        Err(e) => eprintln!("[agent runtime] start the agent of {name}: {e}"),
                    }
                }
                drop(slot);
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
        }));
    }

    /// Stops following pods, stops the process (if any), deletes the rule.
    pub async fn shutdown(mut self, client: &kube::Client) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        if let Some((pod, child)) = self.current.lock().await.take() {
            stop(child, &pod, &self.journal).await;
        }
        let _ = Api::<DynamicObject>::all_with(client.clone(), &cluster_port_forward())
            .delete(&self.rule, &DeleteParams::default())
            .await;
    }

    /// Waits (up to `limit`) until an agent process printed a line starting
    /// with `prefix`; returns it.
    pub async fn wait_line(&self, prefix: &str, limit: Duration) -> Option<String> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(line) = self.journal().stdout.iter().find(|l| l.starts_with(prefix)) {
                return Some(line.clone());
            }
            if tokio::time::Instant::now() > deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Kills the current agent process outright (a crash), leaving its pod.
    pub async fn crash(&self) -> Option<String> {
        let mut slot = self.current.lock().await;
        let (pod, mut child) = slot.take()?;
        let _ = child.kill().await;
        if let Ok(mut j) = self.journal.lock() {
            j.exits.push(format!("{pod}: killed by the test"));
        }
        Some(pod)
    }
}

/// SIGTERM, then SIGKILL after [`GRACE`]; records the exit.
async fn stop(mut child: Child, pod: &str, journal: &Arc<Mutex<Journal>>) {
    if let Some(pid) = child.id() {
        // SAFETY-free: signal through the kill command, as a runtime would.
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
    }
    let status = match tokio::time::timeout(GRACE, child.wait()).await {
        Ok(status) => status
            .map(|s| s.to_string())
            .unwrap_or_else(|e| e.to_string()),
        Err(_) => {
            let _ = child.kill().await;
            "killed after the grace period".to_owned()
        }
    };
    if let Ok(mut j) = journal.lock() {
        j.exits.push(format!("{pod}: {status}"));
    }
}

/// Starts the agent for `pod` with its own args and its ServiceAccount's
/// credentials.
async fn spawn(
    plane: &Plane,
    client: &kube::Client,
    pod: &Pod,
    data: u16,
    control: u16,
    dir: &std::path::Path,
    journal: &Arc<Mutex<Journal>>,
) -> Result<Child, String> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let spec = pod.spec.as_ref().ok_or("pod without spec")?;
    let container = spec.containers.first().ok_or("pod without containers")?;
    let args = override_listen(
        container.args.clone().unwrap_or_default(),
        &[
            ("--data-listen", format!("127.0.0.1:{data}")),
            ("--control-listen", format!("127.0.0.1:{control}")),
            ("--health-listen", "127.0.0.1:0".to_owned()),
        ],
    );
    let account = spec
        .service_account_name
        .clone()
        .ok_or("pod without serviceAccountName")?;
    let kubeconfig = service_account_kubeconfig(plane, client, &namespace, &account, dir).await?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(format!("{name}.log")))
        .map_err(|e| format!("agent log: {e}"))?;
    // A previous process may still hold the ports for a moment.
    let mut child = None;
    for _ in 0..50 {
        if std::net::TcpListener::bind(("127.0.0.1", data)).is_ok()
            && std::net::TcpListener::bind(("127.0.0.1", control)).is_ok()
        {
            child = Some(
                Command::new(bins::kubectl_cozy())
                    .args(&args)
                    .env("KUBECONFIG", &kubeconfig)
                    .env_remove("KUBERNETES_SERVICE_HOST")
                    .env("RUST_LOG", "kubectl_cozy=info")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(log.try_clone().map_err(|e| e.to_string())?)
                    .kill_on_drop(true)
                    .spawn()
                    .map_err(|e| format!("start kubectl-cozy tunnel-agent: {e}"))?,
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut child = child.ok_or("the agent's ports stayed busy")?;
    if let Ok(mut j) = journal.lock() {
        j.started.push(name.clone());
    }
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let journal = journal.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(mut j) = journal.lock() {
                j.stdout.push(line);
            }
        }
    });
    Ok(child)
}

/// `args` with the values of the named flags replaced (both `--flag value`
/// and `--flag=value`).
pub fn override_listen(args: Vec<String>, overrides: &[(&str, String)]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        if let Some((flag, value)) = overrides.iter().find(|(f, _)| *f == arg) {
            let _ = iter.next();
            out.push((*flag).to_owned());
            out.push(value.clone());
        } else if let Some((flag, value)) = overrides
            .iter()
            .find(|(f, _)| arg.starts_with(&format!("{f}=")))
        {
            out.push(format!("{flag}={value}"));
        } else {
            out.push(arg);
        }
    }
    out
}

/// A kubeconfig with a fresh token of ServiceAccount `namespace/name`.
pub async fn service_account_kubeconfig(
    plane: &Plane,
    client: &kube::Client,
    namespace: &str,
    name: &str,
    dir: &std::path::Path,
) -> Result<PathBuf, String> {
    use base64::Engine as _;
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(3600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let token = Api::<ServiceAccount>::namespaced(client.clone(), namespace)
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .map_err(|e| format!("TokenRequest for {namespace}/{name}: {e}"))?
        .status
        .and_then(|s| s.token)
        .ok_or("TokenRequest without a token")?;
    let ca = base64::engine::general_purpose::STANDARD.encode(&plane.serving_ca_pem);
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: agent\nclusters:\n- name: plane\n  cluster:\n    server: {}\n    \
         certificate-authority-data: {ca}\ncontexts:\n- name: agent\n  context:\n    cluster: plane\n    user: agent\n    \
         namespace: {namespace}\nusers:\n- name: agent\n  user:\n    token: {token}\n",
        plane.server
    );
    let path = dir.join(format!("{name}.kubeconfig"));
    std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::override_listen;

    #[test]
    fn only_the_listen_addresses_change() {
        let args: Vec<String> = [
            "tunnel-agent",
            "--session",
            "x",
            "--data-listen",
            "0.0.0.0:8443",
            "--control-listen=127.0.0.1:7001",
        ]
        .map(String::from)
        .to_vec();
        let out = override_listen(
            args,
            &[
                ("--data-listen", "127.0.0.1:1".to_owned()),
                ("--control-listen", "127.0.0.1:2".to_owned()),
            ],
        );
        assert_eq!(
            out,
            [
                "tunnel-agent",
                "--session",
                "x",
                "--data-listen",
                "127.0.0.1:1",
                "--control-listen=127.0.0.1:2"
            ]
        );
    }
}
