//! `kubectl-cozy serve --standalone` as a process of a test, and the real
//! `kubectl` pointed at it: [`Standalone`] starts the server on its own
//! store, state dir and kubeconfig (all in a temporary directory it owns)
//! and kills it when dropped; [`kubectl`], [`ok`] and [`refused`] run
//! kubectl with a kubeconfig and read its answer.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::{bins, plane};

/// Lossy UTF-8 of a process's output.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The example kinds of the repository.
pub fn example_kinds() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds")
}

/// A `kubectl-cozy serve --standalone` process and its files.
pub struct Standalone {
    child: Child,
    dir: tempfile::TempDir,
    /// `serve --standalone --listen … --kinds|--charts PATH`.
    args: Vec<std::ffi::OsString>,
}

impl Standalone {
    /// The example kinds on a free loopback port; panics if it does not start.
    pub fn start() -> Standalone {
        Standalone::start_on("127.0.0.1:0")
    }

    /// The example kinds on `listen`; panics if it does not start.
    pub fn start_on(listen: &str) -> Standalone {
        Standalone::launch(listen, "--kinds", &example_kinds(), tempdir()).expect("serve")
    }

    /// Serves `source_flag path` (`--kinds DIR` or `--charts DIR`); panics
    /// if it does not start.
    pub fn serving(source_flag: &str, path: &Path) -> Standalone {
        Standalone::launch("127.0.0.1:0", source_flag, path, tempdir()).expect("serve")
    }

    /// Starts the server with its files in `dir` and waits (30 s at most)
    /// for its kubeconfig; an error carries what it printed if it exited.
    pub fn launch(
        listen: &str,
        source_flag: &str,
        path: &Path,
        dir: tempfile::TempDir,
    ) -> Result<Standalone, String> {
        let args = vec![
            "serve".into(),
            "--standalone".into(),
            "--listen".into(),
            listen.into(),
            source_flag.into(),
            path.into(),
        ];
        let child = spawn(&args, dir.path())?;
        let mut server = Standalone { child, dir, args };
        server.wait_ready()?;
        Ok(server)
    }

    /// Kills the server and starts it again on the same store and state.
    pub fn restart(&mut self) -> Result<(), String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::fs::remove_file(self.kubeconfig()).map_err(|e| e.to_string())?;
        self.child = spawn(&self.args, self.dir.path())?;
        self.wait_ready()
    }

    /// Waits until the kubeconfig has the server's context current (a file
    /// that was there before it started may name others).
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let written = |path: &Path| {
            std::fs::read_to_string(path)
                .is_ok_and(|text| text.contains("current-context: kubectl-cozy"))
        };
        while !written(&self.kubeconfig()) {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                let mut err = String::new();
                if let Some(mut stderr) = self.child.stderr.take() {
                    let _ = stderr.read_to_string(&mut err);
                }
                return Err(format!("serve --standalone exited with {status}: {err}"));
            }
            if Instant::now() > deadline {
                return Err("serve --standalone wrote no kubeconfig in 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Stops the server as Ctrl-C does (SIGINT) and answers what it
    /// printed on stderr; panics unless it exits, successfully, within 30 s.
    #[expect(unsafe_code, reason = "kill(2) on a child of this process")]
    pub fn interrupt(&mut self) -> String {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        // SAFETY: a plain syscall on our own child; no memory is touched.
        unsafe {
            libc::kill(pid, libc::SIGINT);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "serve --standalone ran on 30 s after SIGINT"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        assert!(status.success(), "{status}: {stderr}");
        stderr
    }

    /// Kills the server (SIGKILL, as a crash: it cleans nothing up).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on its files as they are (after
    /// [`Standalone::interrupt`] or [`Standalone::kill`]) and waits (30 s at
    /// most) until kubectl reaches it through the kubeconfig it rewrites.
    pub fn start_again(&mut self) -> Result<(), String> {
        self.child = spawn(&self.args, self.dir.path())?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            // Our context: the current one may be another, unreachable.
            // Ready: its cache loaded, whatever kinds it serves.
            let reached = self.kubectl(&["--context", "kubectl-cozy", "get", "--raw", "/readyz"]);
            if reached.status.success() {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Err(format!("serve --standalone exited with {status}"));
            }
            if Instant::now() > deadline {
                return Err("serve --standalone was not reachable in 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The directory holding its store, state and kubeconfig.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The kubeconfig it wrote.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    /// kubectl against this server.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        kubectl(&self.kubeconfig(), args, None)
    }

    /// kubectl against this server, `input` on its stdin.
    pub fn kubectl_stdin(&self, args: &[&str], input: &str) -> Output {
        kubectl(&self.kubeconfig(), args, Some(input))
    }
}

impl Drop for Standalone {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `kubectl-cozy serve --standalone` on a free port of 127.0.0.1 serving
/// `kinds`, its store and state in `dir`, its context written into
/// `kubeconfig`; stdin closed, not started.
pub fn serve_command(kinds: &Path, dir: &Path, kubeconfig: &Path) -> Command {
    let mut cmd = Command::new(bins::kubectl_cozy());
    cmd.args([
        "serve",
        "--standalone",
        "--listen",
        "127.0.0.1:0",
        "--kinds",
    ])
    .arg(kinds);
    with_files(&mut cmd, dir, kubeconfig);
    cmd
}

/// Adds `--data <dir>/store.sqlite --state-dir <dir>/state
/// --write-kubeconfig <kubeconfig>` to a `serve --standalone` command and
/// closes its stdin.
fn with_files(cmd: &mut Command, dir: &Path, kubeconfig: &Path) {
    cmd.arg("--data")
        .arg(dir.join("store.sqlite"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .arg("--write-kubeconfig")
        .arg(kubeconfig)
        .stdin(Stdio::null());
}

/// `kubectl-cozy ARGS` with its store, kubeconfig and state in `dir`.
pub fn spawn(args: &[std::ffi::OsString], dir: &Path) -> Result<Child, String> {
    let mut cmd = Command::new(bins::kubectl_cozy());
    cmd.args(args);
    with_files(&mut cmd, dir, &dir.join("kubeconfig"));
    cmd.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start serve --standalone: {e}"))
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// The test plane's kubectl with `--kubeconfig kubeconfig`, `stdin` fed to it.
pub fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let bin_dir = plane::binaries().expect("binaries");
    let mut child = Command::new(bin_dir.join("kubectl"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env("HOME", std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .spawn()
        .expect("kubectl");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
    }
    child.wait_with_output().expect("kubectl")
}

/// kubectl's stdout; panics with its stderr when it failed.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "kubectl failed: {}\n{}",
        text(&out.stderr),
        text(&out.stdout)
    );
    text(&out.stdout)
}

/// kubectl's stderr for a refused request; panics when it succeeded.
pub fn refused(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "kubectl succeeded: {}",
        text(&out.stdout)
    );
    text(&out.stderr)
}
