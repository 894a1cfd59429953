//! Starting a session's local guard ([`crate::cmd::session_guard`]): this
//! binary again, detached — a session
//! of its own where the platform allows (a process group of its own
//! elsewhere), so Ctrl-C and a closed terminal do not reach it; stdin
//! closed; on Linux no descriptor of serve's but its log; its output in
//! `<state dir>/guards/<id>.log` — with serve's cluster flags, the context
//! serve resolved, and serve's pid. Serve watches it: a guard that exits
//! while the session runs is said, as the session is then unguarded.
//!
//! On the tunnel route the agent in the cluster reaps a session whose Lease
//! expired; the guard adds what the agent cannot see, serve's process gone,
//! and reaps an expired Lease only a Lease's duration after the agent would
//! (its `--lease-grace`), so that the two do not reap at once; where the
//! guard cannot look at processes it would add nothing, and is not started.
//! Its messages name the session's other reapers ([`reapers_without`]).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use tokio::process::Command;

use super::console::Log;
use crate::cli::Ctx;
use crate::register::plan::{Plan, Route};

/// Logs of guards older than this are removed when a guard starts.
const LOG_KEPT_FOR: Duration = Duration::from_secs(7 * 24 * 3600);

/// A started guard.
#[derive(Debug)]
pub(super) struct Guard {
    /// Its process id.
    pub(super) pid: u32,
    /// Its log.
    pub(super) log: PathBuf,
    /// Set when serve's own end begins: the guard's exit is expected then.
    ending: Arc<AtomicBool>,
}

impl Guard {
    /// Serve's end begins: the guard exits once the Lease is gone, which
    /// is no news.
    pub(super) fn ending(&self) {
        self.ending.store(true, Ordering::SeqCst);
    }
}

/// Starts the guard of `plan`'s session, logging under `state_dir`; says
/// on `log` if it exits while the session runs.
pub(super) fn spawn(ctx: &Ctx, plan: &Plan, state_dir: &Path, log: &Log) -> std::io::Result<Guard> {
    let dir = state_dir.join("guards");
    crate::storage::private_files::create_dir(&dir)?;
    prune_logs(&dir);
    let path = dir.join(format!("{}.log", plan.id));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let mut command = Command::new(std::env::current_exe()?);
    command.args(guard_args(ctx, plan));
    command
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .kill_on_drop(false);
    detach(&mut command);
    let mut child = command.spawn()?;
    let pid = child.id().unwrap_or_default();
    let ending = Arc::new(AtomicBool::new(false));
    let watched = ending.clone();
    let log = log.clone();
    let shown = path.clone();
    let reapers = reapers_without(plan);
    tokio::spawn(async move {
        let status = child.wait().await;
        if !watched.load(Ordering::SeqCst) {
            let how = status.map_or_else(|e| e.to_string(), |s| s.to_string());
            log.line(&format!(
                "Warning: guard process {pid} exited ({how}; see {}): if serve dies now, {reapers}",
                shown.display()
            ));
        }
    });
    Ok(Guard {
        pid,
        log: path,
        ending,
    })
}

/// Whether serve starts a guard for `plan`'s session: on the external-name
/// route always (nothing else reaps it); on the tunnel route where the
/// guard can see serve's process go (the agent watches the Lease anyway).
pub(super) fn useful(plan: &Plan) -> bool {
    match plan.route {
        Route::ExternalName { .. } => true,
        Route::Tunnel { .. } => crate::cmd::session_guard::CAN_TELL_PROCESSES,
    }
}

/// Who reaps `plan`'s session if serve dies while no guard runs.
pub(super) fn reapers_without(plan: &Plan) -> &'static str {
    match plan.route {
        Route::Tunnel { .. } => {
            "the agent reaps this session once its Lease expires (or the next serve, or `kubectl cozy doctor --fix`)"
        }
        Route::ExternalName { .. } => {
            "the next serve or `kubectl cozy doctor --fix` reaps this session"
        }
    }
}

/// A session of its own (Linux), or a process group of its own; no
/// descriptor of serve's inherited (Linux with glibc: marked
/// close-on-exec before the exec).
fn detach(command: &mut Command) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: the closure calls only setsid(2), close_range(2),
        // sysconf(3) and fcntl(2), all async-signal-safe, and allocates
        // nothing, as pre_exec requires; marking descriptors close-on-exec
        // (rather than closing them) keeps std's own error pipe working
        // until the exec.
        #[expect(unsafe_code, reason = "pre_exec has no safe form")]
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                if libc::close_range(
                    3,
                    libc::c_uint::MAX,
                    libc::CLOSE_RANGE_CLOEXEC as libc::c_int,
                ) != 0
                {
                    // Kernels before 5.11: one descriptor at a time.
                    let open_max =
                        libc::sysconf(libc::_SC_OPEN_MAX).clamp(3, 65_536) as libc::c_int;
                    for fd in 3..open_max {
                        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                    }
                }
                Ok(())
            });
        }
    }
    #[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
    command.process_group(0);
    #[cfg(not(unix))]
    let _ = command;
}

/// Removes guard logs older than [`LOG_KEPT_FOR`] from `dir`.
fn prune_logs(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > LOG_KEPT_FOR);
        if old && entry.path().extension().is_some_and(|e| e == "log") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// After serve's teardown: a complete one that followed a session serve
/// still held leaves the guard nothing to tell (it exits once it sees the
/// Lease gone), so its log goes; otherwise (something left, or the session
/// reaped meanwhile — perhaps by the guard) the log stays.
pub(super) fn after_teardown(guard: Option<&Guard>, complete: bool, reaped: bool) {
    if let Some(guard) = guard
        && complete
        && !reaped
    {
        let _ = std::fs::remove_file(&guard.log);
    }
}

/// `session-guard`'s arguments for `plan`: the session, serve's pid, and
/// serve's own cluster flags with the context it resolved (the
/// environment, `KUBECONFIG` included, is inherited).
fn guard_args(ctx: &Ctx, plan: &Plan) -> Vec<std::ffi::OsString> {
    let global = ctx.global();
    let mut args: Vec<std::ffi::OsString> = vec![
        "session-guard".into(),
        "--session".into(),
        plan.id.clone().into(),
        "--session-namespace".into(),
        plan.namespace.clone().into(),
        "--serve-pid".into(),
        std::process::id().to_string().into(),
    ];
    if let Some(path) = &global.kubeconfig {
        args.push("--kubeconfig".into());
        args.push(path.clone().into_os_string());
    }
    // The context serve resolved: a `kubectl config use-context` meanwhile
    // must not point the guard at another cluster.
    let context = global
        .context
        .clone()
        .or_else(|| crate::kubeconfig::current_context(&ctx.selection()));
    for (flag, value) in [
        ("--context", &context),
        ("--cluster", &global.cluster),
        ("--user", &global.user),
    ] {
        if let Some(value) = value {
            args.push(flag.into());
            args.push(value.clone().into());
        }
    }
    if let Route::Tunnel { .. } = plan.route {
        // A Lease's duration more than the agent waits: an agent that runs
        // reaps an expired Lease first.
        let grace = plan.lease_duration + crate::register::sentinel::DEFAULT_GRACE;
        args.push("--lease-grace".into());
        args.push(format!("{}ns", grace.as_nanos()).into());
    }
    if let Some(limit) = global.request_timeout {
        args.push("--request-timeout".into());
        args.push(format!("{}ns", limit.as_nanos()).into());
    }
    args
}
