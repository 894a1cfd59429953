//! The end of a session: the renewer stops, the APIServices go (restored or
//! deleted) first, then the tunnel and the server stop while the rest of
//! the objects go — unless a second signal says to leave them to the Lease's
//! expiry (the agent, the next serve or `doctor --fix` reap them) and not to
//! wait for the tunnel and the server either.

use std::time::{Duration, Instant};

use super::signals::Signals;
use crate::apiserver::server::RunningServer;
use crate::register::lease::Renewer;
use crate::register::plan::Plan;
use crate::register::session;
use crate::register::teardown::{self, Teardown};

/// Limit of each request of the teardown (it must finish within ~5 s).
const TEARDOWN_LIMIT: Duration = Duration::from_secs(2);

pub(super) type TunnelTask = (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), crate::tunnel::ClientError>>,
);

/// Tears the session down: the renewer stops, the APIServices go (restored or
/// deleted), then the tunnel and the server stop, then the rest of the
/// objects go unless a second signal arrives.
pub(super) async fn end(
    client: &kube::Client,
    plan: &Plan,
    created: &[session::SessionObject],
    signals: &mut Signals,
    running_parts: Option<(Renewer, Option<TunnelTask>)>,
    running: RunningServer,
    drain: Duration,
) {
    let began = Instant::now();
    let (renewer, tunnel) = match running_parts {
        Some((renewer, tunnel)) => (Some(renewer), tunnel),
        None => (None, None),
    };
    if let Some(renewer) = renewer {
        renewer.stop().await;
    }
    let teardown = Teardown::new(
        client.clone(),
        &plan.id,
        &plan.namespace,
        created,
        TEARDOWN_LIMIT,
    );
    let first = teardown.api_services().await;
    // The aggregator no longer routes here: stop the tunnel and the server
    // while the rest goes.
    let stopping = async {
        if let Some((stop, task)) = tunnel {
            let _ = stop.send(());
            let _ = tokio::time::timeout(Duration::from_secs(3), task).await;
        }
        running.shutdown(drain.min(Duration::from_secs(2))).await;
    };
    let cleaned = std::cell::Cell::new(false);
    let rest = async {
        match first {
            Ok(reaping) => {
                let report = teardown.rest(reaping).await;
                print_removal(plan, created, &report, began);
            }
            Err(err) => eprintln!(
                "Could not remove the session's APIServices: {}\n  the agent, the next serve or `kubectl cozy doctor --fix` removes them once the Lease expires",
                crate::error_chain::error_chain(&err)
            ),
        }
        cleaned.set(true);
    };
    // A second signal skips what is left: the cleanup, and the wait for the
    // tunnel and the server to stop (the process exits right after).
    tokio::select! {
        _ = async { tokio::join!(stopping, rest) } => {}
        () = signals.next() => {
            if !cleaned.get() {
                eprintln!(
                    "Skipped the rest of the cleanup: the Lease {}/{} expires within {}s and the agent or `kubectl cozy doctor --fix` removes what is left",
                    plan.namespace,
                    session::lease_name(&plan.id),
                    plan.lease_duration.as_secs()
                );
            }
        }
    }
}

/// Says what the teardown removed, or what it could not; nothing when the
/// session had created nothing (a start refused before its first object).
fn print_removal(
    plan: &Plan,
    created: &[session::SessionObject],
    report: &crate::register::reap::ReapReport,
    began: Instant,
) {
    if created.is_empty() && report.deleted.is_empty() && report.restored.is_empty() {
        return;
    }
    let problems = teardown::problems(report);
    if problems.is_empty() {
        eprintln!(
            "Removed session {} ({} objects{}) in {:.1}s",
            plan.id,
            report.deleted.len() + report.restored.len(),
            if report.restored.is_empty() {
                String::new()
            } else {
                format!(", {} APIService(s) restored", report.restored.len())
            },
            began.elapsed().as_secs_f64()
        );
    } else {
        eprintln!("Removed session {} except:", plan.id);
        for line in problems {
            eprintln!("  {line}");
        }
    }
    for (name, why) in &report.not_restored {
        eprintln!("  APIService {name}: {why}");
    }
}
