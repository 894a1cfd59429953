//! `doctor --fix`: a plan built from the report's findings, shown before
//! anything changes, confirmed through a [`Confirmer`] (the terminal, in
//! `cmd/doctor.rs`) or by `--yes`, then applied one action at a time, each
//! re-reading its target before acting and after, and finally a fresh
//! diagnosis of what is still stuck.
//!
//! Actions, in the order they run:
//! 1. reap expired `serve` sessions ([`crate::register::reap`]: restore the
//!    APIServices they took over, delete their other APIServices, then
//!    everything else they labelled in reap order: the Lease after what it
//!    owns, then the session namespace, the cluster-wide RBAC last);
//! 2. delete unavailable APIServices (uid-preconditioned; at the prompt the
//!    user must type the APIService's name);
//! 3. remove named finalizers with a resourceVersion-guarded merge patch;
//! 4. with `--finalize-namespaces` only, and only for namespaces still
//!    Terminating after the others and a wait: clear `spec.finalizers`
//!    through `/finalize`.
//!
//! Webhook configurations, certificates and live sessions are never touched:
//! their findings say what to run instead (for a live session: stop it, or
//! wait until its Lease expires).
//!
//! While applying, it says what it does on the requester's bar, or one line
//! at a time on stderr when the bar is not drawn (stderr is not a terminal);
//! waiting for namespaces, the bar counts the namespaces gone.
//!
//! Its parts, one job each: `plan` builds the plan and says why a finding
//! has no action, `confirm` asks which actions to apply, `actions` applies
//! one action; this module runs the approved ones in order, waits for the
//! namespaces they unblock and diagnoses again.

mod actions;
mod confirm;
mod plan;
#[cfg(test)]
mod test_support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;

use super::findings::{
    Action, ActionOutcome, ActionResult, AfterFix, Code, Finding, FixMode, FixReport,
    NamespaceAfter, PlannedAction, Report, Severity,
};
use super::render::action_title;
use super::requester::Requester;
use super::{Options, diagnose};
use crate::error_chain::error_chain;

use actions::{apply_one, finalize_namespace, result};
pub use confirm::{Confirmer, confirm};
pub use plan::{fixes_by_finding, plan};

/// How `--fix` behaves.
#[derive(Debug, Clone)]
pub struct FixOptions {
    /// Plan `/finalize` for namespaces still stuck after everything else.
    pub finalize_namespaces: bool,
    /// How long to wait for namespaces to finish deleting after the actions.
    pub wait: Duration,
}

/// Applies the approved actions, waits for the namespaces they unblock, runs
/// `/finalize` where approved and still needed, and records a fresh diagnosis.
pub async fn apply(
    req: &Requester,
    report: &Report,
    fix: &mut FixReport,
    approved: &BTreeSet<usize>,
    opts: &FixOptions,
    diagnosis: &Options,
) {
    if approved.is_empty() {
        fix.mode = FixMode::Declined;
        return;
    }
    fix.mode = FixMode::Applied;
    // While acting, the bar counts actions (its requests would mean nothing
    // to the user); the fresh diagnosis at the end counts requests again.
    let bar = req.progress().clone();
    let quiet = req.with_progress(indicatif::ProgressBar::hidden());
    let (finalizing, acting): (Vec<&PlannedAction>, Vec<&PlannedAction>) = fix
        .actions
        .iter()
        .filter(|a| approved.contains(&a.id))
        .partition(|a| matches!(a.action, Action::FinalizeNamespace { .. }));
    let mut results = Vec::new();
    count_on(&bar, acting.len());
    for a in acting {
        step(req, format!("{}. {}…", a.id, action_title(&a.action)));
        let result = apply_one(&quiet, a).await;
        bar.inc(1);
        say(req, &outcome_line(a, &result));
        results.push(result);
    }
    let succeeded: BTreeSet<usize> = results
        .iter()
        .filter(|r| matches!(r.outcome, ActionOutcome::Done | ActionOutcome::AlreadyDone))
        .map(|r| r.action)
        .collect();
    let fixed: BTreeSet<&str> = fix
        .actions
        .iter()
        .filter(|a| succeeded.contains(&a.id))
        .flat_map(|a| a.fixes.iter().map(String::as_str))
        .collect();
    let terminating: Vec<&str> = report
        .namespaces
        .iter()
        .filter(|n| n.deletion_timestamp.is_some())
        .map(|n| n.name.as_str())
        .collect();
    let finalize: BTreeSet<&str> = fix
        .actions
        .iter()
        .filter(|a| approved.contains(&a.id))
        .filter_map(|a| match &a.action {
            Action::FinalizeNamespace { name } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let wait_for = namespaces_to_wait_for(report, &terminating, &fixed, &finalize);
    if !wait_for.is_empty() {
        wait_gone(req, &wait_for, opts.wait).await;
    }
    let mut finalized = Vec::new();
    count_on(&bar, finalizing.len());
    for a in finalizing {
        if let Action::FinalizeNamespace { name } = &a.action {
            step(req, format!("{}. {}…", a.id, action_title(&a.action)));
            let result = finalize_namespace(&quiet, a.id, name).await;
            bar.inc(1);
            say(req, &outcome_line(a, &result));
            if result.outcome == ActionOutcome::Done {
                finalized.push(name.clone());
            }
            results.push(result);
        }
    }
    if !finalized.is_empty() {
        wait_gone(req, &finalized, opts.wait.min(Duration::from_secs(30))).await;
    }
    for a in fix.actions.iter().filter(|a| !approved.contains(&a.id)) {
        results.push(result(
            a.id,
            ActionOutcome::Skipped,
            format!("not confirmed: {}", a.command),
            None,
        ));
    }
    results.sort_by_key(|r| r.action);
    fix.results = results;

    count_on(&bar, 0);
    step(req, "re-verifying: a fresh diagnosis…");
    let mut again = diagnosis.clone();
    again.require_namespace = false;
    let after = match diagnose(req, &report.cluster, &again).await {
        Ok(after) => after,
        Err(err) => {
            fix.after = Some(AfterFix {
                namespaces: Vec::new(),
                findings: Vec::new(),
                unchecked: vec![super::findings::Unchecked {
                    what: super::findings::DIAGNOSIS_AFTER.into(),
                    reason: error_chain(&err),
                    status: None,
                }],
            });
            return;
        }
    };
    let namespaces = terminating
        .iter()
        .map(|ns| match after.namespaces.iter().find(|n| n.name == *ns) {
            None => NamespaceAfter {
                name: (*ns).to_owned(),
                state: "gone".into(),
                blocked_by: Vec::new(),
            },
            Some(n) => NamespaceAfter {
                name: n.name.clone(),
                state: if n.deletion_timestamp.is_some() {
                    "terminating".into()
                } else {
                    "active".into()
                },
                // Notes too (a finalizer held for less than --stuck-after):
                // a namespace still Terminating is held by something, and
                // "-" beside it read as nothing.
                blocked_by: after
                    .findings
                    .iter()
                    .filter(|f| blocks_namespace(f, ns))
                    .map(|f| f.id.clone())
                    .collect(),
            },
        })
        .collect();
    fix.after = Some(AfterFix {
        namespaces,
        findings: after.findings,
        unchecked: after.unchecked,
    });
}

/// The `terminating` namespaces to wait for after the actions: those whose
/// every blocker was just `fixed` (or that may need their `finalize` after
/// the others had their chance), unless finalizers that are not stuck yet
/// hold them too: their controllers, not the fix, decide when those go.
fn namespaces_to_wait_for(
    report: &Report,
    terminating: &[&str],
    fixed: &BTreeSet<&str>,
    finalize: &BTreeSet<&str>,
) -> Vec<String> {
    terminating
        .iter()
        .filter(|ns| {
            // Finalizers of objects being deleted, not stuck yet; an object
            // not deleted yet is the namespace controller's to delete,
            // which the fix may have just unblocked.
            let deleting = |f: &Finding| {
                f.code == Code::NamespaceFinalizerRemaining
                    || report
                        .remaining_of(&f.subject)
                        .is_some_and(|o| o.deletion_timestamp.is_some())
            };
            let held_by_finalizers_in_progress = report.findings.iter().any(|f| {
                f.severity == Severity::Info
                    && matches!(
                        f.code,
                        Code::FinalizerBlocking | Code::NamespaceFinalizerRemaining
                    )
                    && blocks_namespace(f, ns)
                    && deleting(f)
            });
            let blockers: Vec<&str> = report
                .findings
                .iter()
                .filter(|f| f.severity != Severity::Info && blocks_namespace(f, ns))
                .map(|f| f.id.as_str())
                .collect();
            let touched = blockers.iter().any(|b| fixed.contains(b));
            touched
                && (finalize.contains(*ns)
                    || (blockers.iter().all(|b| fixed.contains(b))
                        && !held_by_finalizers_in_progress))
        })
        .map(|ns| (*ns).to_owned())
        .collect()
}

fn blocks_namespace(f: &Finding, ns: &str) -> bool {
    f.blocks.iter().any(|b| b == ns)
        || f.subject.namespace.as_deref() == Some(ns)
        || (f.subject.kind == "Namespace" && f.subject.name == ns)
}

/// Says what `--fix` is doing now: the message of the requester's bar when
/// it is drawn (stderr is a terminal), else a line on stderr.
fn step(req: &Requester, message: impl Into<String>) {
    tell(req.progress(), message);
}

fn tell(bar: &indicatif::ProgressBar, message: impl Into<String>) {
    let message = message.into();
    if bar.is_hidden() {
        eprintln!("{message}");
    }
    bar.set_message(message);
}

/// Says what `--fix` just did: a line on stderr when no bar is drawn (a
/// terminal sees the results on stdout at the end).
fn say(req: &Requester, line: &str) {
    say_on(req.progress(), line);
}

fn say_on(bar: &indicatif::ProgressBar, line: &str) {
    if bar.is_hidden() {
        eprintln!("{line}");
    }
}

/// `1. delete APIService x: done`, for the progress lines.
fn outcome_line(a: &PlannedAction, r: &ActionResult) -> String {
    let outcome = match r.outcome {
        ActionOutcome::Done => "done",
        ActionOutcome::AlreadyDone => "already done",
        ActionOutcome::Skipped => "skipped",
        ActionOutcome::NotVerified => "NOT VERIFIED",
        ActionOutcome::Failed => "FAILED",
    };
    format!("{}. {}: {outcome}", a.id, action_title(&a.action))
}

/// Restarts `bar`'s counter at 0 of `total` (0: it counts requests again).
fn count_on(bar: &indicatif::ProgressBar, total: usize) {
    bar.set_length(total as u64);
    bar.set_position(0);
}

/// Polls until every namespace is gone or the time is up, counting them on
/// the requester's bar; returns those left.
async fn wait_gone(req: &Requester, names: &[String], limit: Duration) -> Vec<String> {
    let quiet = req.with_progress(indicatif::ProgressBar::hidden());
    wait_namespaces_gone(&quiet, req.progress(), names, limit).await
}

/// Polls through `req` until every namespace is gone or the time is up;
/// returns those left. Says what it waits for and when each namespace is
/// gone, as kubectl says `namespace "x" deleted`: on stderr when `bar` is
/// not drawn (stderr is not a terminal), else on `bar`, whose counter counts
/// the namespaces gone out of those waited for (`req`'s requests should not
/// move it: give `req` another bar).
pub async fn wait_namespaces_gone(
    req: &Requester,
    bar: &indicatif::ProgressBar,
    names: &[String],
    limit: Duration,
) -> Vec<String> {
    let api: Api<Namespace> = Api::all(req.client().clone());
    let started = Instant::now();
    let deadline = started + limit;
    count_on(bar, names.len());
    tell(
        bar,
        format!(
            "waiting for {} namespace(s) to be deleted (up to {})…",
            names.len(),
            crate::output::age(limit.as_secs() as i64)
        ),
    );
    let mut left: Vec<String> = names.to_vec();
    loop {
        let mut still = Vec::new();
        for name in &left {
            match req.call(api.get_metadata_opt(name)).await {
                Ok(None) => {
                    bar.inc(1);
                    say_on(
                        bar,
                        &format!(
                            "namespace \"{name}\" deleted (after {})",
                            crate::output::age(started.elapsed().as_secs() as i64)
                        ),
                    );
                }
                _ => still.push(name.clone()),
            }
        }
        left = still;
        if left.is_empty() || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    if !left.is_empty() {
        say_on(
            bar,
            &format!(
                "still Terminating after {}: namespace(s) {}",
                crate::output::age(limit.as_secs() as i64),
                left.join(", ")
            ),
        );
    }
    left
}

#[cfg(test)]
mod tests {
    use super::test_support::{finalizer_finding, ns_report, report};
    use super::*;
    use crate::doctor::findings::ObjectRef;

    #[test]
    fn only_namespaces_the_fix_unblocked_are_waited_for() {
        // team-b: one blocker (a stuck finalizer), fixed by the plan.
        let blocker = finalizer_finding();
        let fixed: BTreeSet<&str> = [blocker.id.as_str()].into();
        let none = BTreeSet::new();
        let r = report(vec![blocker.clone()], vec![ns_report("team-b")]);
        assert_eq!(
            namespaces_to_wait_for(&r, &["team-b"], &fixed, &none),
            ["team-b"]
        );
        // Another finalizer in it that is not stuck yet (its controller
        // may be working): the fix does not decide when it goes.
        let mut recent = Finding::new(
            Code::FinalizerBlocking,
            Severity::Info,
            ObjectRef {
                name: "recent".into(),
                ..blocker.subject.clone()
            },
            "w",
            "y",
        );
        recent.blocks = vec!["team-b".into()];
        let mut namespace = ns_report("team-b");
        let mut deleting = namespace.remaining[0].clone();
        deleting.object = recent.subject.clone();
        namespace.remaining.push(deleting);
        let held = report(vec![blocker.clone(), recent.clone()], vec![namespace]);
        assert!(namespaces_to_wait_for(&held, &["team-b"], &fixed, &none).is_empty());
        // One not deleted yet is the namespace controller's to delete (the
        // fix may have unblocked it): waited for.
        let undeleted = report(vec![blocker.clone(), recent], vec![ns_report("team-b")]);
        assert_eq!(
            namespaces_to_wait_for(&undeleted, &["team-b"], &fixed, &none),
            ["team-b"]
        );
        // ... unless its /finalize is planned after the wait.
        let finalize: BTreeSet<&str> = ["team-b"].into();
        assert_eq!(
            namespaces_to_wait_for(&held, &["team-b"], &fixed, &finalize),
            ["team-b"]
        );
        // Nothing fixed for it: nothing to wait for.
        assert!(namespaces_to_wait_for(&r, &["team-b"], &none, &none).is_empty());
    }
}
