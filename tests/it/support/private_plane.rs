//! A control plane of one test's own (etcd and kube-apiserver with the
//! HelmRelease CRD, no controller-manager), for fault injection that would
//! break every other test on the shared [`super::plane()`]: restarting
//! kube-apiserver, pausing etcd. Same certificates, arguments and readiness
//! checks as the shared plane (see `plane.rs`), its own ports and work
//! directory; everything is killed and removed when the [`PrivatePlane`] is
//! dropped.
//!
//! Its processes are spawned by a thread of the plane's own that lives as
//! long as the plane (`PR_SET_PDEATHSIG` fires when the spawning thread
//! ends), so they also die with the test binary however it ends.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::plane::{self, Layout, Plane};

/// How long the private plane may take to start (as the shared one).
const START_TIMEOUT: Duration = Duration::from_secs(180);
/// How long kube-apiserver may take to stop on SIGTERM before it is
/// killed (it waits for its watches, the server's among them, much longer).
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// A running private plane.
pub struct PrivatePlane {
    /// The plane, as tests use the shared one.
    pub plane: Plane,
    layout: Layout,
    spawner: Option<mpsc::Sender<SpawnRequest>>,
    etcd: Child,
    /// None while it is stopped.
    apiserver: Option<Child>,
}

impl std::fmt::Debug for PrivatePlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivatePlane")
            .field("dir", &self.plane.dir)
            .field("etcd", &self.etcd.id())
            .field("apiserver", &self.apiserver.as_ref().map(Child::id))
            .finish()
    }
}

impl PrivatePlane {
    /// Starts etcd and kube-apiserver and installs the HelmRelease CRD.
    /// Blocking (call it from `spawn_blocking` or `block_in_place`).
    pub fn start(name: &str) -> Result<PrivatePlane, String> {
        let bin_dir = plane::binaries()?;
        let dir =
            std::env::temp_dir().join(format!("kubectl-cozy-plane-{}-{name}", std::process::id()));
        let (plane, layout) = plane::prepare(dir, bin_dir)?;
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name(format!("private-plane-{name}"))
            .spawn(move || {
                // Lives until the plane drops its sender; its children get
                // SIGKILL when it ends.
                while let Ok((mut cmd, reply)) = rx.recv() {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .map_err(|e| format!("spawn the private plane's thread: {e}"))?;
        let deadline = Instant::now() + START_TIMEOUT;
        let etcd = spawn(&tx, &plane.dir, "etcd", layout.etcd())?;
        // From here on, dropping `private` stops what was started.
        let mut private = PrivatePlane {
            apiserver: None,
            etcd,
            plane,
            layout,
            spawner: Some(tx),
        };
        plane::wait_for(&private.plane.dir, "private etcd", deadline, || {
            private.layout.etcd_healthy()
        })?;
        private.apiserver = Some(private.spawn("kube-apiserver", private.layout.kube_apiserver())?);
        private.wait_apiserver_ready(deadline)?;
        plane::install_crd(&private.plane, deadline)?;
        Ok(private)
    }

    fn spawn(&self, name: &str, cmd: Command) -> Result<Child, String> {
        let spawner = self.spawner.as_ref().ok_or("the plane is stopping")?;
        spawn(spawner, &self.plane.dir, name, cmd)
    }

    fn wait_apiserver_ready(&self, deadline: Instant) -> Result<(), String> {
        plane::wait_for(&self.plane.dir, "private kube-apiserver", deadline, || {
            self.layout.apiserver_ready()
        })
    }

    /// `http://127.0.0.1:<port>` of etcd's client API (its gRPC gateway
    /// serves JSON, e.g. `/v3/watch`).
    pub fn etcd_url(&self) -> String {
        self.layout.etcd_url()
    }

    /// etcd's client port.
    pub fn etcd_port(&self) -> u16 {
        self.layout.etcd_client
    }

    /// Stops kube-apiserver (SIGTERM, as a rolling update would; SIGKILL
    /// after [`STOP_TIMEOUT`]), then starts it again with the same
    /// arguments; returns when it is ready again, with how long it was down
    /// and which signal stopped it. `down` runs while it is stopped.
    /// Blocking.
    pub fn restart_apiserver(
        &mut self,
        down: impl FnOnce(),
    ) -> Result<(Duration, &'static str), String> {
        let stopped = Instant::now();
        let mut how = "SIGTERM";
        if let Some(mut apiserver) = self.apiserver.take() {
            signal(apiserver.id(), libc::SIGTERM);
            let deadline = Instant::now() + STOP_TIMEOUT;
            while apiserver
                .try_wait()
                .map_err(|e| format!("wait for kube-apiserver: {e}"))?
                .is_none()
            {
                if Instant::now() > deadline {
                    how = "SIGKILL after SIGTERM";
                    let _ = apiserver.kill();
                    let _ = apiserver.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        down();
        self.apiserver = Some(self.spawn("kube-apiserver", self.layout.kube_apiserver())?);
        self.wait_apiserver_ready(Instant::now() + START_TIMEOUT)?;
        Ok((stopped.elapsed(), how))
    }

    /// Freezes etcd (SIGSTOP): it keeps its connections but answers nothing.
    pub fn pause_etcd(&self) {
        signal(self.etcd.id(), libc::SIGSTOP);
    }

    /// Thaws etcd (SIGCONT).
    pub fn resume_etcd(&self) {
        signal(self.etcd.id(), libc::SIGCONT);
    }
}

impl Drop for PrivatePlane {
    fn drop(&mut self) {
        // A paused etcd ignores SIGTERM until it is continued; kill both.
        for child in self.apiserver.iter_mut().chain([&mut self.etcd]) {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.spawner = None;
        if std::env::var_os("COZY_TEST_KEEP_PLANE").is_none() {
            let _ = std::fs::remove_dir_all(&self.plane.dir);
        }
    }
}

#[expect(unsafe_code, reason = "kill(2) on a child of this process")]
fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: a plain syscall on our own child.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

/// Starts `cmd` on the spawner thread, its output appended to
/// `<dir>/<name>.log`.
fn spawn(
    spawner: &mpsc::Sender<SpawnRequest>,
    dir: &Path,
    name: &str,
    mut cmd: Command,
) -> Result<Child, String> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(format!("{name}.log")))
        .map_err(|e| format!("create {name}.log: {e}"))?;
    let log2 = log.try_clone().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null()).stdout(log).stderr(log2);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    plane::die_with_parent(&mut cmd);
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner
        .send((cmd, reply_tx))
        .map_err(|_| "the private plane's thread is gone".to_owned())?;
    reply_rx
        .recv()
        .map_err(|_| "the private plane's thread is gone".to_owned())?
        .map_err(|e| format!("start {name}: {e}"))
}
