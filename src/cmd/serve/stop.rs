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
use crate::register::registration::Registrar;
use crate::register::session;
use crate::register::teardown::{self, Teardown};

/// Limit of each request of the teardown (it must finish within ~5 s).
const TEARDOWN_LIMIT: Duration = Duration::from_secs(2);

pub(super) type TunnelTask = (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), crate::tunnel::ClientError>>,
);

/// Ends a start whose registration failed or was interrupted: the teardown
/// of what `registrar` created, or (nothing written, as when the start was
/// refused before its first object) only the server's stop, and nothing said.
pub(super) async fn end_unregistered(
    client: &kube::Client,
    plan: &Plan,
    registrar: &Registrar,
    signals: &mut Signals,
    running: RunningServer,
    drain: Duration,
) {
    if registrar.may_have_written() {
        // A failed start exits non-zero whatever its cleanup did (which it
        // says).
        let _ = end(
            client,
            plan,
            registrar.created(),
            signals,
            None,
            running,
            drain,
        )
        .await;
    } else {
        tracing::debug!(session = %plan.id, "the start created nothing: nothing to remove");
        running.shutdown(drain.min(Duration::from_secs(2))).await;
    }
}

/// Tears the session down: the renewer stops, the APIServices go (restored or
/// deleted; tried again while kube-apiserver does not answer, until the
/// Lease would expire), then the tunnel and the server stop, then the rest
/// of the objects go unless a second signal arrives. Whether everything
/// went: a stop that left something exits non-zero.
#[must_use = "a teardown that left something must not exit 0"]
pub(super) async fn end(
    client: &kube::Client,
    plan: &Plan,
    created: &[session::SessionObject],
    signals: &mut Signals,
    running_parts: Option<(Renewer, Option<TunnelTask>)>,
    running: RunningServer,
    drain: Duration,
) -> bool {
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
    let cleaned = std::cell::Cell::new(false);
    let complete = std::cell::Cell::new(false);
    let first = async {
        let give_up = began + plan.lease_duration;
        let mut said = false;
        loop {
            match teardown.api_services().await {
                Err(err) if err.is_unanswered() && Instant::now() < give_up => {
                    if !said {
                        crate::stderr_line!(
                            "kube-apiserver does not answer ({}); trying again for up to {}s (Ctrl-C again to give up)",
                            crate::error_chain::error_chain(&err),
                            plan.lease_duration.as_secs()
                        );
                        said = true;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                other => return other,
            }
        }
    };
    let first = tokio::select! {
        first = first => first,
        () = signals.next() => {
            crate::stderr_line!("{}", not_removed(plan, created, "given up on a second signal"));
            running.shutdown(Duration::ZERO).await;
            return false;
        }
    };
    // The aggregator no longer routes here: stop the tunnel and the server
    // while the rest goes.
    let stopping = async {
        if let Some((stop, task)) = tunnel {
            let _ = stop.send(());
            let _ = tokio::time::timeout(Duration::from_secs(3), task).await;
        }
        running.shutdown(drain.min(Duration::from_secs(2))).await;
    };
    let rest = async {
        match first {
            Ok(reaping) => {
                let report = teardown.rest(reaping).await;
                // What it tried and could not do; an object left because it
                // is someone else's now is not the session's to remove.
                complete.set(report.failed.is_empty() && report.unverified.is_empty());
                print_removal(plan, created, &report, began);
            }
            Err(err) => crate::stderr_line!(
                "{}",
                not_removed(plan, created, &crate::error_chain::error_chain(&err))
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
                crate::stderr_line!(
                    "Skipped the rest of the cleanup: {}",
                    left_to(plan, "what is left")
                );
            }
        }
    }
    complete.get()
}

/// Who removes `what` serve leaves behind: the guard process serve started
/// (if it runs) once serve has exited and the cluster answers; without one,
/// on the tunnel route the agent once the Lease expires, else nothing until
/// someone acts (and an unavailable APIService stalls namespace deletions
/// meanwhile).
fn left_to(plan: &Plan, what: &str) -> String {
    let lease = format!(
        "the Lease {}/{} expires (within {}s)",
        plan.namespace,
        session::lease_name(&plan.id),
        plan.lease_duration.as_secs()
    );
    let without = match plan.route {
        crate::register::plan::Route::Tunnel { .. } => {
            format!("the agent once {lease}, or the next serve, or `kubectl cozy doctor --fix`")
        }
        crate::register::plan::Route::ExternalName { .. } => {
            format!("the next serve of a group or `kubectl cozy doctor --fix` once {lease}")
        }
    };
    format!("its guard process removes {what} after serve exits; without one, {without}")
}

/// What to say when the teardown could not even begin (the Lease could not
/// be re-read): what the session created, and who removes it — the Lease's
/// expiry when there is one, else the command that does.
fn not_removed(plan: &Plan, created: &[session::SessionObject], why: &str) -> String {
    let objects: Vec<String> = teardown::order(created)
        .iter()
        .map(session::SessionObject::describe)
        .collect();
    let what = if objects.is_empty() {
        "what the session may have created".to_owned()
    } else {
        objects.join(", ")
    };
    let has_lease = created.iter().any(|o| o.kind == session::LEASE.kind);
    let who = if has_lease {
        left_to(plan, "them")
    } else {
        format!(
            "remove them with: {}",
            session::reap_command(&plan.id, &plan.namespace)
        )
    };
    format!("Could not remove {what}: {why}\n  {who}")
}

/// Says what the teardown removed, or what it could not; nothing when the
/// session had created nothing (a start refused before its first object).
fn print_removal(
    plan: &Plan,
    created: &[session::SessionObject],
    report: &crate::register::reap::ReapReport,
    began: Instant,
) {
    if created.is_empty()
        && report.deleted.is_empty()
        && report.restored.is_empty()
        && report.gone.is_empty()
    {
        return;
    }
    let problems = teardown::problems(report);
    if problems.is_empty() {
        crate::stderr_line!(
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
        crate::stderr_line!("Removed session {} except:", plan.id);
        for line in problems {
            crate::stderr_line!("  {line}");
        }
    }
    for (name, why) in &report.not_restored {
        crate::stderr_line!("  APIService {name}: {why}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::register::plan::Route;
    use crate::register::session::{LEASE, NAMESPACE, SessionObject};

    fn plan() -> Plan {
        Plan {
            id: "3f2a".into(),
            namespace: "team".into(),
            holder: "alice@laptop, pid 1".into(),
            started: "2026-09-01T12:00:00Z".parse().unwrap(),
            lease_duration: Duration::from_secs(15),
            served: Vec::new(),
            route: Route::ExternalName {
                host: "localhost".into(),
                port: 1,
            },
            ca_pem: String::new(),
        }
    }

    #[test]
    fn a_teardown_that_cannot_begin_names_what_was_created_and_who_removes_it() {
        let ns = SessionObject::of(&NAMESPACE, None, "team");
        let lease = SessionObject::of(&LEASE, Some("team"), "kubectl-cozy-3f2a");
        let text = not_removed(&plan(), &[ns.clone(), lease], "HTTP 403");
        assert_eq!(
            text,
            "Could not remove leases.coordination.k8s.io/kubectl-cozy-3f2a -n team, namespaces/team: HTTP 403\n  \
             its guard process removes them after serve exits; without one, the next serve of a group or \
             `kubectl cozy doctor --fix` once the Lease team/kubectl-cozy-3f2a expires (within 15s)"
        );
        // No Lease to expire: the command that removes them.
        let text = not_removed(&plan(), &[ns], "HTTP 403");
        assert!(
            text.starts_with(
                "Could not remove namespaces/team: HTTP 403\n  remove them with: kubectl delete"
            ),
            "{text}"
        );
    }
}
