//! `kubectl-cozy session-guard` (hidden): the local guard of an
//! external-name `serve` session, which has no agent in the cluster to reap
//! it. Serve starts it detached (a session of its own, no terminal, its
//! output in a log file) once the session's Lease exists
//! ([`crate::cmd::serve`]'s `guard`). It watches the Lease as the tunnel
//! agent does ([`crate::register::sentinel`]), with the user's credentials:
//!
//! - after serve's own teardown the Lease is gone: it exits within two
//!   reads, nothing left to reap;
//! - if serve stops renewing the Lease without its teardown (SIGKILL, a
//!   crash, the process frozen past the Lease), it reaps the session —
//!   APIServices first, restoring taken-over ones — prints
//!   `session-guard reaped session ID: …` and exits;
//! - if the Lease cannot be read for [`GIVE_UP_AFTER`] (the cluster gone,
//!   the credentials expired), it exits, leaving the session to the next
//!   `serve` or `doctor --fix`.

use std::time::Duration;

use clap::Args;
use clap::builder::NonEmptyStringValueParser;

use crate::cli::{CliError, Ctx, ExitStatus, parse_request_timeout};
use crate::register::sentinel::{self, SentinelConfig};
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

    /// How long the Lease may be unreadable before the guard exits
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_request_timeout)]
    pub give_up_after: Duration,
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
    // Gone rather than expired: serve's teardown removed it (what the reap
    // then finds is gone already, or finishes a teardown cut short).
    let mut lease_gone = false;
    let report = sentinel::run(&client, &config, |expired| {
        lease_gone = expired.resource_version.is_none();
    })
    .await;
    match report {
        Some(_) if lease_gone => {
            tracing::info!(session = %args.session, "the session Lease is gone: the session ended");
            Ok(ExitStatus::Success)
        }
        Some(report) => {
            super::tunnel_agent::reaped(ctx, "session-guard", &args.session, &report)?;
            Ok(ExitStatus::Success)
        }
        None => Err(CliError::other(
            "guard the serve session",
            format!(
                "its Lease {}/{} could not be read for {:?}; the next serve or `kubectl cozy doctor --fix` reaps \
                 the session if it is dead",
                args.session_namespace,
                session::lease_name(&args.session),
                args.give_up_after
            ),
        )),
    }
}
