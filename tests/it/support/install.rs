//! The container runtime of `kubectl cozy install`'s server pods, for tests,
//! and the stand-in for their Service.
//!
//! kwok runs no containers, so [`Replicas::start`] plays the kubelet for the
//! Deployment's pods: for each running pod it writes what the pod mounts
//! (the kinds ConfigMap, the serving Secret) to a directory, then starts the
//! real `kubectl-cozy` with the pod's own container args, overriding only
//! what points into the pod's filesystem or network (`--kinds`,
//! `--tls-cert-file`, `--tls-key-file`, `--listen` → a free local port) and
//! with the credentials of the pod's ServiceAccount (a TokenRequest token,
//! as the tunnel agent's harness: [`super::agent`]), so the server's RBAC is
//! the install's.
//!
//! kwok pod IPs are not dialable and the plane has no kube-proxy, so
//! [`Balancer`] stands in for the Service's data path: a TCP proxy on
//! localhost spreading connections over the replicas round-robin and
//! skipping one that refuses (as endpoints drop a dead pod). The test points
//! the Service at it (an ExternalName to `localhost` and the APIService's
//! port: the seam `docs/install.md` describes).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::Api;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

use super::agent::{override_listen, service_account_kubeconfig};
use super::bins;
use super::plane::{self, Plane};

/// One replica process.
pub struct Replica {
    /// Its pod.
    pub pod: String,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The process.
    pub child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Replica {
    /// Everything it printed on stderr.
    pub fn output(&self) -> String {
        self.lines.lock().map(|l| l.join("\n")).unwrap_or_default()
    }

    /// How many lines contain `text`.
    pub fn count(&self, text: &str) -> usize {
        self.lines
            .lock()
            .map(|l| l.iter().filter(|l| l.contains(text)).count())
            .unwrap_or_default()
    }

    /// Waits (up to `limit`) for a line containing `text`.
    pub async fn wait_line(&mut self, text: &str, limit: Duration) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if self.count(text) > 0 {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "replica of {} exited with {status}:\n{}",
                    self.pod,
                    self.output()
                ));
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!(
                    "replica of {} printed no {text:?} within {limit:?}:\n{}",
                    self.pod,
                    self.output()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGTERM (a pod being deleted), then waits (up to `limit`) for the exit.
    pub async fn terminate(&mut self, limit: Duration) -> Result<std::process::ExitStatus, String> {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(status) => status.map_err(|e| e.to_string()),
            Err(_) => Err(format!("still running {limit:?} after SIGTERM")),
        }
    }

    /// SIGKILL (a crashed pod).
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }
}

/// Writes what pod `pod` of `namespace` mounts (the kinds ConfigMap and the
/// serving Secret named in its volumes) under `dir`, and returns the
/// directories: (kinds, serving).
async fn mounts(
    client: &kube::Client,
    namespace: &str,
    pod: &Pod,
    dir: &std::path::Path,
) -> Result<(PathBuf, PathBuf), String> {
    let spec = pod.spec.as_ref().ok_or("pod without spec")?;
    let volumes = spec.volumes.clone().unwrap_or_default();
    let kinds_dir = dir.join("kinds");
    let serving_dir = dir.join("serving");
    for d in [&kinds_dir, &serving_dir] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let write = |path: PathBuf, bytes: &[u8]| {
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    };
    for volume in volumes {
        if let Some(cm) = volume.config_map {
            let map = Api::<ConfigMap>::namespaced(client.clone(), namespace)
                .get(&cm.name)
                .await
                .map_err(|e| format!("ConfigMap {}: {e}", cm.name))?;
            for (key, text) in map.data.unwrap_or_default() {
                write(kinds_dir.join(key), text.as_bytes())?;
            }
        }
        if let Some(secret) = volume.secret {
            let name = secret.secret_name.unwrap_or_default();
            let found = Api::<Secret>::namespaced(client.clone(), namespace)
                .get(&name)
                .await
                .map_err(|e| format!("Secret {name}: {e}"))?;
            for (key, bytes) in found.data.unwrap_or_default() {
                write(serving_dir.join(key), &bytes.0)?;
            }
        }
    }
    Ok((kinds_dir, serving_dir))
}

/// Starts the server of running pod `pod` as a local process, on `port`
/// (a restart keeps its container's port) or a free one.
pub async fn start(
    plane: &Plane,
    client: &kube::Client,
    pod: &Pod,
    dir: &std::path::Path,
    port: Option<u16>,
) -> Result<Replica, String> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let dir = dir.join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (kinds, serving) = mounts(client, &namespace, pod, &dir).await?;
    let spec = pod.spec.as_ref().ok_or("pod without spec")?;
    let container = spec.containers.first().ok_or("pod without containers")?;
    let port = match port {
        Some(p) => p,
        None => plane::free_port()?,
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let args = override_listen(
        container.args.clone().unwrap_or_default(),
        &[
            ("--kinds", kinds.display().to_string()),
            (
                "--tls-cert-file",
                serving.join("tls.crt").display().to_string(),
            ),
            (
                "--tls-key-file",
                serving.join("tls.key").display().to_string(),
            ),
            ("--listen", addr.to_string()),
        ],
    );
    let account = spec
        .service_account_name
        .clone()
        .ok_or("pod without serviceAccountName")?;
    let kubeconfig = service_account_kubeconfig(plane, client, &namespace, &account, &dir).await?;
    let mut child = Command::new(bins::kubectl_cozy())
        .args(&args)
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", "kubectl_cozy=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("start kubectl-cozy {args:?}: {e}"))?;
    let lines = Arc::new(Mutex::new(Vec::new()));
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let sink = lines.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            if let Ok(mut l) = sink.lock() {
                l.push(line);
            }
        }
    });
    Ok(Replica {
        pod: name,
        addr,
        child,
        lines,
    })
}

/// A TCP round-robin over backends, on `127.0.0.1:<port>`.
pub struct Balancer {
    /// Where it listens.
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Balancer {
    /// Listens and spreads each connection to the next backend that accepts.
    pub async fn start(backends: Vec<SocketAddr>) -> Balancer {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind the balancer");
        let port = listener.local_addr().expect("balancer address").port();
        let next = Arc::new(AtomicUsize::new(0));
        let backends = Arc::new(backends);
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let backends = backends.clone();
                let next = next.clone();
                tokio::spawn(async move {
                    let first = next.fetch_add(1, Ordering::Relaxed);
                    for i in 0..backends.len() {
                        let target = backends[(first + i) % backends.len()];
                        if let Ok(mut outbound) = TcpStream::connect(target).await {
                            // As kube-proxy's kernel path: no Nagle delay added.
                            let _ = inbound.set_nodelay(true);
                            let _ = outbound.set_nodelay(true);
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                            return;
                        }
                    }
                });
            }
        });
        Balancer { port, task }
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
