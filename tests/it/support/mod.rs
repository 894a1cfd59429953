//! Shared helpers of the integration tests: the real control plane and its
//! simulated node, the built `kubectl-cozy` binaries, the lock that
//! serializes tests which change cluster-wide state, the Go test tools, a
//! local echo server that stands in for a pod's container, `serve` as a
//! process, the container runtimes of its tunnel agent and of `install`'s
//! server pods, `serve --standalone` with kubectl pointed at it, and krew's
//! plugin archives served over loopback.

#![allow(dead_code, reason = "helpers for tests of later features")]

pub mod agent;
pub mod aggregated;
pub mod bins;
pub mod echo;
pub mod install;
pub mod krew;
pub mod node;
pub mod plane;
pub mod private_plane;
pub mod serve;
pub mod standalone;
pub mod tools;

pub use plane::plane;

/// The value of the sample of `metric` whose labels are `labels` (as
/// written, in order) in a scrape, if there is one.
pub fn metric_sample(scrape: &str, metric: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{metric}{{{labels}}} ");
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|value| value.parse().ok())
}

/// Held by every test that deletes namespaces or changes what blocks
/// namespace deletion cluster-wide (an unavailable APIService stalls every
/// namespace deletion; doctor's "healthy plane" test needs nothing
/// Terminating), and by tests whose kubectl reads discovery of every group
/// (`kubectl get all`), which another session's unavailable APIService
/// fails. A tokio mutex works from any test's runtime; sync tests use
/// `blocking_lock()`.
pub static CLUSTER_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A directory of built test binaries: `$env_var` when set, else the last
/// line `script` (relative to the crate) prints after building or finding
/// them in its machine-wide cache.
pub fn built_dir(env_var: &str, script: &str) -> Result<std::path::PathBuf, String> {
    use std::process::{Command, Stdio};
    if let Some(dir) = std::env::var_os(env_var) {
        return Ok(dir.into());
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let output = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("run {}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed with {}",
            script.display(),
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let dir = stdout.lines().last().unwrap_or_default().trim();
    if dir.is_empty() {
        return Err(format!("{} printed no directory", script.display()));
    }
    Ok(dir.into())
}

/// A kubeconfig in `dir` whose one context names a cluster at
/// `127.0.0.1:<port>` with a token user (port 9 refuses every connection).
pub fn kubeconfig_for_port(dir: &std::path::Path, port: u16) -> std::path::PathBuf {
    let path = dir.join(format!("port-{port}.kubeconfig"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: dead\nclusters:\n\
             - name: dead\n  cluster: {{server: 'https://127.0.0.1:{port}'}}\n\
             contexts:\n- name: dead\n  context: {{cluster: dead, user: dead}}\n\
             users:\n- name: dead\n  user: {{token: x}}\n"
        ),
    )
    .expect("write the kubeconfig");
    path
}
