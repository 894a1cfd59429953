//! Starting an external-name session's local guard
//! ([`crate::cmd::session_guard`]): this binary again, detached — a process
//! group of its own (so Ctrl-C and a closed terminal do not reach it), stdin
//! closed, its output in `<state dir>/guards/<id>.log` — with
//! the same cluster flags as serve. Serve does not wait for it: it exits by
//! itself once the Lease is gone.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cli::Ctx;
use crate::register::plan::Plan;

/// A started guard.
#[derive(Debug)]
pub(super) struct Guard {
    /// Its process id.
    pub(super) pid: u32,
    /// Its log.
    pub(super) log: PathBuf,
}

/// Starts the guard of `plan`'s session, logging under `state_dir`.
pub(super) fn spawn(ctx: &Ctx, plan: &Plan, state_dir: &Path) -> std::io::Result<Guard> {
    let dir = state_dir.join("guards");
    crate::storage::private_files::create_dir(&dir)?;
    let log = dir.join(format!("{}.log", plan.id));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)?;
    let mut command = Command::new(std::env::current_exe()?);
    command.args(guard_args(ctx, plan));
    command
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file);
    // A process group of its own: the terminal's Ctrl-C (and the shell's
    // hangup, sent to the jobs it knows) reach serve's group, not this one.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    // Descriptors serve inherited without close-on-exec (a caller's pipes,
    // a jobserver's) would stay open in the guard for its whole life, and a
    // reader waiting for their end would wait as long.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt as _;
        // SAFETY: the closure only calls close_range(2), which is
        // async-signal-safe, and allocates nothing, as pre_exec requires;
        // marking descriptors close-on-exec keeps std's own error pipe
        // working until the exec.
        #[expect(unsafe_code, reason = "pre_exec has no safe form")]
        unsafe {
            command.pre_exec(|| {
                libc::close_range(
                    3,
                    libc::c_uint::MAX,
                    libc::CLOSE_RANGE_CLOEXEC as libc::c_int,
                );
                Ok(())
            });
        }
    }
    let child = command.spawn()?;
    Ok(Guard {
        pid: child.id(),
        log,
    })
}

/// After serve's teardown: a complete one leaves the guard nothing to tell
/// (it exits once it sees the Lease gone), so its log goes; after one that
/// left something, the log stays with what the guard then does.
pub(super) fn after_teardown(guard: Option<&Guard>, complete: bool) {
    if let Some(guard) = guard
        && complete
    {
        let _ = std::fs::remove_file(&guard.log);
    }
}

/// `session-guard`'s arguments for `plan`: the session, and serve's own
/// cluster flags (the environment, `KUBECONFIG` included, is inherited).
fn guard_args(ctx: &Ctx, plan: &Plan) -> Vec<std::ffi::OsString> {
    let global = ctx.global();
    let mut args: Vec<std::ffi::OsString> = vec![
        "session-guard".into(),
        "--session".into(),
        plan.id.clone().into(),
        "--session-namespace".into(),
        plan.namespace.clone().into(),
    ];
    if let Some(path) = &global.kubeconfig {
        args.push("--kubeconfig".into());
        args.push(path.clone().into_os_string());
    }
    for (flag, value) in [
        ("--context", &global.context),
        ("--cluster", &global.cluster),
        ("--user", &global.user),
    ] {
        if let Some(value) = value {
            args.push(flag.into());
            args.push(value.clone().into());
        }
    }
    if let Some(limit) = global.request_timeout {
        args.push("--request-timeout".into());
        args.push(format!("{}ms", limit.as_millis()).into());
    }
    args
}
