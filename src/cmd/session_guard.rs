//! `kubectl-cozy session-guard` (hidden): the local guard of a `serve`
//! session — the only reaper of an external-name session, which has no agent
//! in the cluster; beside a tunnel session's agent, the one that sees serve's
//! process go. Serve starts it detached (see `cmd/serve/guard.rs`), with
//! serve's pid, once the session's Lease exists. It watches the Lease as the
//! tunnel agent does ([`crate::register::sentinel`]), with the user's
//! credentials (on the tunnel route with a grace a Lease's duration longer
//! than the agent's, so that an agent that runs reaps an expired Lease first):
//!
//! - after serve's own teardown the Lease is gone: it exits within two
//!   reads, reaping nothing (the teardown is serve's);
//! - if serve stops renewing the Lease without its teardown (SIGKILL, a
//!   crash, the process frozen past the Lease), it reaps the session —
//!   APIServices first, restoring taken-over ones — prints
//!   `session-guard reaped session ID: …` and exits; when serve's process
//!   is gone with its Lease still there, it does not wait for the Lease to
//!   expire (the APIServices of a dead server stall every namespace
//!   deletion meanwhile): it reaps within about a second;
//! - if the Lease cannot be read for [`GIVE_UP_AFTER`] once serve is gone
//!   (the cluster gone, the credentials expired; while serve runs it waits
//!   on, as serve does), or a reap stays incomplete that long (an
//!   APIService that cannot be restored) — unless the Lease went meanwhile,
//!   serve's own teardown having run late — it exits, leaving the session
//!   to the next `serve` or `doctor --fix`.
//!
//! It runs the agent's pieces ([`sentinel::watch`], [`sentinel::reap`])
//! in a loop of its own: unlike the agent, which the garbage collector
//! removes with the session, nothing ends the guard but itself.

use std::time::{Duration, Instant};

use clap::Args;
use clap::builder::NonEmptyStringValueParser;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;

use crate::cli::{CliError, Ctx, ExitStatus, parse_request_timeout};
use crate::register::sentinel::{self, Attempt, SentinelConfig};
use crate::register::session;

/// How long the Lease may be unreadable before the guard gives up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(300);

/// Arguments of `kubectl-cozy session-guard`.
#[derive(Debug, Args)]
pub struct SessionGuardArgs {
    /// The serve session to guard
    #[arg(long, value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub session: String,

    /// The session namespace, where its Lease is
    #[arg(long, value_name = "NAMESPACE", value_parser = NonEmptyStringValueParser::new())]
    pub session_namespace: String,

    /// Added to the Lease's duration before the session counts as dead
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_request_timeout)]
    pub lease_grace: Duration,

    /// How long the Lease may be unreadable (with serve gone) before the guard exits
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_request_timeout)]
    pub give_up_after: Duration,

    /// The serve process: while it runs, an unreadable Lease is waited out;
    /// once it is gone with its Lease still there, the session is reaped
    #[arg(long, value_name = "PID")]
    pub serve_pid: Option<u32>,
}

/// Guards the session until its Lease is gone, it is reaped, or the Lease
/// stays unreadable.
pub async fn run(args: SessionGuardArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    session::validate_id(&args.session).map_err(|e| CliError::Usage(e.to_string()))?;
    let client = ctx.client().await?;
    let mut config = SentinelConfig::new(&args.session, &args.session_namespace);
    config.grace = args.lease_grace;
    config.give_up_after = Some(args.give_up_after);
    tracing::info!(session = %args.session, namespace = %args.session_namespace, "guarding the serve session");
    let gave_up = |why: String| {
        CliError::other(
            "guard the serve session",
            format!(
                "{why}; the tunnel's agent (once the Lease expires), the next serve or `kubectl cozy doctor \
                 --fix` reaps the session if it is dead"
            ),
        )
    };
    let lease = session::lease_name(&args.session);
    let leases: Api<Lease> = Api::namespaced(client.clone(), &args.session_namespace);
    // Serve's process gone is news once: a Lease renewed after it (a pid
    // that was not serve's) sends the guard back to the Lease alone.
    let mut serve_pid = args.serve_pid;
    loop {
        let watched = tokio::select! {
            expired = sentinel::watch(&client, &config) => expired,
            Some(left) = serve_gone(serve_pid, &leases, &lease, config.limit) => {
                tracing::info!(session = %args.session, "serve's process is gone");
                serve_pid = None;
                Some(left)
            }
        };
        let Some(expired) = watched else {
            // A network gone for a while: serve, still running, renews
            // again once it is back, and needs its guard then.
            if args.serve_pid.is_some_and(serve_alive) {
                tracing::warn!(session = %args.session, "serve still runs: watching its Lease on");
                continue;
            }
            return Err(gave_up(format!(
                "its Lease {}/{lease} could not be read for {:?}, and serve is gone",
                args.session_namespace, args.give_up_after
            )));
        };
        // Gone rather than expired: serve's teardown removed it (and, with
        // `--takeover`, restored the originals and dropped their copies).
        if expired.resource_version.is_none() {
            tracing::info!(session = %args.session, "the session Lease is gone: the session ended");
            return Ok(ExitStatus::Success);
        }
        tracing::info!(session = %args.session, "the session Lease is no longer renewed; reaping the session");
        let mut retrying_since: Option<Instant> = None;
        loop {
            match sentinel::reap(&client, &config, &expired).await {
                Attempt::Reaped(report) => {
                    super::tunnel_agent::reaped(ctx, "session-guard", &args.session, &report)?;
                    return Ok(ExitStatus::Success);
                }
                Attempt::Renewed => {
                    tracing::info!(session = %args.session, "the session Lease was renewed; serve is back");
                    break;
                }
                Attempt::Retry(why) => {
                    // Serve's own teardown, running late, may have gone on
                    // meanwhile (with `--takeover`, restoring the originals
                    // and dropping their copies, which this reap misses).
                    let read = tokio::time::timeout(config.limit, leases.get_opt(&lease)).await;
                    if matches!(read, Ok(Ok(None))) {
                        tracing::info!(session = %args.session, "the session Lease is gone: the session ended");
                        return Ok(ExitStatus::Success);
                    }
                    let since = *retrying_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= args.give_up_after {
                        return Err(gave_up(format!(
                            "its reap stayed incomplete for {:?}: {why}",
                            args.give_up_after
                        )));
                    }
                    tracing::warn!(session = %args.session, %why, retry_in = ?config.retry, "reap incomplete");
                    tokio::time::sleep(config.retry).await;
                }
            }
        }
    }
}

/// Waits until process `pid` (serve) is gone, then reads its session's
/// Lease: what it left, as an expiry the reap judges by (the Lease gone:
/// its teardown ran). Never, without a pid.
async fn serve_gone(
    pid: Option<u32>,
    leases: &Api<Lease>,
    lease: &str,
    limit: Duration,
) -> Option<sentinel::Expired> {
    // Where a process cannot be looked at, only the Lease tells.
    let Some(pid) = pid.filter(|_| CAN_TELL_PROCESSES) else {
        return std::future::pending().await;
    };
    while serve_alive(pid) {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Unreadable: the Lease's own watch goes on.
    let read = tokio::time::timeout(limit, leases.get_opt(lease)).await;
    let Ok(Ok(found)) = read else {
        return std::future::pending().await;
    };
    Some(sentinel::Expired {
        resource_version: found
            .as_ref()
            .and_then(|l| l.metadata.resource_version.clone()),
        record: found
            .as_ref()
            .and_then(|l| {
                session::SessionRecord::from_annotations(l.metadata.annotations.as_ref()).ok()
            })
            .unwrap_or_default(),
    })
}

/// Whether [`serve_alive`] looks at the process (else it says no).
pub(crate) const CAN_TELL_PROCESSES: bool = cfg!(all(target_os = "linux", target_env = "gnu"));

/// Whether process `pid` (serve) still exists.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn serve_alive(pid: u32) -> bool {
    let Some(process) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(process) {
        // A zombie answers too: exited, waiting for its parent.
        Ok(()) => !crate::register::local_process::exited(pid),
        // Someone else's process of that id: not serve's, which is ours.
        Err(e) => e != rustix::io::Errno::SRCH && e != rustix::io::Errno::PERM,
    }
}

/// Whether process `pid` (serve) still exists: unknown here, so no.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn serve_alive(_pid: u32) -> bool {
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// A killed serve that its parent has not waited for yet (a zombie)
    /// still answers signals, but is gone.
    #[test]
    fn a_zombie_is_not_alive() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(serve_alive(pid));
        child.kill().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while serve_alive(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!serve_alive(pid), "a zombie was judged alive");
        child.wait().unwrap();
        assert!(!serve_alive(pid));
    }
}
