//! Running `kubectl-cozy serve` as a user would, against the test plane:
//! kinds in a group of the test's own ([`KindsDir`]: the example kinds with
//! the group rewritten, so no test collides with the shared aggregated
//! server's `apps.cozystack.io` or another test), the process with its
//! stderr collected line by line ([`ServeProcess`]), and the list of every
//! object carrying a session's label, cluster-wide ([`session_objects`]).

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kubectl_cozy::register::session::{SESSION_KINDS, selector};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::bins;
use super::plane::Plane;

/// The example kinds, in API group `group`, in a temporary directory.
pub struct KindsDir {
    /// The directory.
    pub dir: tempfile::TempDir,
    /// The group.
    pub group: String,
}

/// A unique group for one test: `<name>-<pid>.serve.example.com`.
pub fn group(name: &str) -> String {
    format!("{name}-{}.serve.example.com", std::process::id())
}

/// Copies `examples/kinds` with `group` instead of `apps.cozystack.io` (and
/// without the `all` category, so `kubectl get all` elsewhere never asks a
/// test's server).
pub fn kinds_dir(group: &str) -> KindsDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
    for entry in std::fs::read_dir(&src).expect("examples/kinds") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read kind");
        let text = text
            .replace("group: apps.cozystack.io", &format!("group: {group}"))
            .replace("\n- all\n", "\n");
        std::fs::write(dir.path().join(path.file_name().expect("name")), text).expect("write kind");
    }
    KindsDir {
        dir,
        group: group.to_owned(),
    }
}

/// A running `kubectl-cozy serve`.
pub struct ServeProcess {
    /// The process.
    pub child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    /// The task reading its stderr.
    reader: tokio::task::JoinHandle<()>,
    /// Its state directory.
    pub state: tempfile::TempDir,
}

/// What serve printed once ready.
#[derive(Debug, Clone)]
pub struct Ready {
    /// The session id.
    pub id: String,
    /// The "Ready in …" line (with the start-up split).
    pub line: String,
}

impl ServeProcess {
    /// Starts `kubectl-cozy serve --kinds <kinds> <args>` as the plane's
    /// admin, with a fresh state directory.
    pub fn start(plane: &Plane, kinds: &KindsDir, args: &[&str]) -> ServeProcess {
        let state = tempfile::tempdir().expect("state dir");
        let mut child = Command::new(bins::kubectl_cozy())
            .arg("serve")
            .arg("--kubeconfig")
            .arg(&plane.kubeconfig)
            .arg("--kinds")
            .arg(kinds.dir.path())
            .arg("--state-dir")
            .arg(state.path())
            .args(args)
            .env("RUST_LOG", "kubectl_cozy=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start kubectl-cozy serve");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let sink = lines.clone();
        let reader = tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if let Ok(mut l) = sink.lock() {
                    l.push(line);
                }
            }
        });
        ServeProcess {
            child,
            lines,
            reader,
            state,
        }
    }

    /// Stops reading its stderr and closes the pipe's end, as a `| tee`
    /// or a terminal that went away does: its next writes fail (EPIPE).
    pub async fn close_stderr(&self) {
        self.reader.abort();
        while !self.reader.is_finished() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Everything printed on stderr so far.
    pub fn output(&self) -> String {
        self.lines.lock().map(|l| l.join("\n")).unwrap_or_default()
    }

    /// Waits (up to `limit`) for a stderr line containing `text`.
    pub async fn wait_line(&self, text: &str, limit: Duration) -> Option<String> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(line) = self
                .lines
                .lock()
                .ok()
                .and_then(|l| l.iter().find(|l| l.contains(text)).cloned())
            {
                return Some(line);
            }
            if tokio::time::Instant::now() > deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for "Ready in" and the session id.
    pub async fn ready(&mut self, limit: Duration) -> Result<Ready, String> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(line) = self
                .wait_line("Ready in ", Duration::from_millis(200))
                .await
            {
                let session = self
                    .wait_line("Session: ", Duration::from_secs(5))
                    .await
                    .ok_or_else(|| format!("no Session line:\n{}", self.output()))?;
                let id = session
                    .split_whitespace()
                    .nth(1)
                    .ok_or_else(|| format!("no id in {session:?}"))?
                    .to_owned();
                return Ok(Ready { id, line });
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("serve exited with {status}:\n{}", self.output()));
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!(
                    "serve not ready within {limit:?}:\n{}",
                    self.output()
                ));
            }
        }
    }

    /// Sends `signal` (`-INT`, `-TERM`, `-KILL`).
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("serve pid");
        let _ = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .status();
    }

    /// Waits (up to `limit`) for the process to exit.
    pub async fn exit(&mut self, limit: Duration) -> Result<std::process::ExitStatus, String> {
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(Ok(status)) => Ok(status),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "serve still running after {limit:?}:\n{}",
                self.output()
            )),
        }
    }

    /// Stops serve with `signal` (`-INT` or `-TERM`) and asserts a clean
    /// stop: exit status 0 within `limit`, then nothing of session `id` left
    /// in the cluster within `limit`. Panics with serve's output otherwise.
    pub async fn stop_cleanly(
        &mut self,
        signal: &str,
        client: &kube::Client,
        id: &str,
        limit: Duration,
    ) {
        self.signal(signal);
        let status = self.exit(limit).await.expect("serve exits");
        assert!(status.success(), "serve {status}:\n{}", self.output());
        if let Err(left) = wait_session_gone(client, id, limit).await {
            panic!("left behind by session {id}: {left:?}\n{}", self.output());
        }
    }
}

/// Every object carrying session `id`'s label, cluster-wide, as
/// `Kind namespace/name` (what must be gone after a teardown or a reap).
pub async fn session_objects(client: &kube::Client, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    for kind in SESSION_KINDS {
        let resource = ApiResource {
            group: kind.group().to_owned(),
            version: kind.version().to_owned(),
            api_version: kind.api_version.to_owned(),
            kind: kind.kind.to_owned(),
            plural: kind.plural.to_owned(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let list = api
            .list_metadata(&ListParams::default().labels(&selector(id)))
            .await
            .unwrap_or_else(|e| panic!("list {} -l {}: {e}", kind.plural, selector(id)));
        for item in list.items {
            // A namespace being deleted is gone as far as the session goes.
            if kind.kind == "Namespace" && item.metadata.deletion_timestamp.is_some() {
                continue;
            }
            out.push(format!(
                "{} {}/{}",
                kind.kind,
                item.metadata.namespace.unwrap_or_default(),
                item.metadata.name.unwrap_or_default()
            ));
        }
    }
    out
}

/// Waits (up to `limit`) until nothing carries session `id`'s label; returns
/// what is left otherwise.
pub async fn wait_session_gone(
    client: &kube::Client,
    id: &str,
    limit: Duration,
) -> Result<Duration, Vec<String>> {
    let started = tokio::time::Instant::now();
    loop {
        let left = session_objects(client, id).await;
        if left.is_empty() {
            return Ok(started.elapsed());
        }
        if started.elapsed() > limit {
            return Err(left);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
