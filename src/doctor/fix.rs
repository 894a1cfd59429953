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
//! wait until its Lease expires). A finding's remedy is `automatic` exactly
//! when [`plan`] has an action for it.
//!
//! While applying, it says what it does on the requester's bar, or one line
//! at a time on stderr when the bar is not drawn (stderr is not a terminal);
//! waiting for namespaces, the bar counts the namespaces gone.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, Preconditions,
};

use k8s_openapi::jiff::Timestamp;

use super::findings::{
    Action, ActionOutcome, ActionResult, AfterFix, Code, Finding, FixMode, FixReport,
    NamespaceAfter, NotPlanned, ObjectRef, PlannedAction, Report, SessionCheck, SessionState,
    Severity, subject_key,
};
use super::render::action_title;
use super::requester::Requester;
use super::sessions::{
    NEVER_BY_HAND, lease_ref, live_session_wait, route_has_agent, session_object,
};
use super::{Options, diagnose};
use crate::error_chain::error_chain;
use crate::register::reap::{self, ReapReport, Reaped, Target};
use crate::register::session::{self as contract, SessionObject};

/// How `--fix` behaves.
#[derive(Debug, Clone)]
pub struct FixOptions {
    /// Plan `/finalize` for namespaces still stuck after everything else.
    pub finalize_namespaces: bool,
    /// How long to wait for namespaces to finish deleting after the actions.
    pub wait: Duration,
}

/// Builds the plan for a report (nothing is changed).
pub fn plan(report: &Report, opts: &FixOptions) -> FixReport {
    let mut actions: Vec<PlannedAction> = Vec::new();
    let mut covered: BTreeSet<String> = BTreeSet::new();
    let finding_ids: BTreeSet<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
    let mut push = |action: Action,
                    description: String,
                    command: String,
                    fixes: Vec<String>,
                    warning: Option<String>,
                    covered: &mut BTreeSet<String>| {
        covered.extend(fixes.iter().cloned());
        actions.push(PlannedAction {
            id: actions.len() + 1,
            action,
            description,
            command,
            fixes,
            warning,
        });
    };

    // 1. Expired serve sessions.
    for s in &report.serve_sessions {
        if !matches!(s.check.state, SessionState::Expired | SessionState::Missing) {
            continue;
        }
        let id = &s.check.id;
        let namespace = &s.check.namespace;
        let mut fixes = vec![format!(
            "{}:{}",
            Code::ServeSessionExpired,
            subject_key(&lease_ref(namespace, id))
        )];
        for o in s.objects.iter().filter(|o| o.kind == "APIService") {
            for code in [Code::ApiServiceUnavailable, Code::ApiServiceProbeFailed] {
                let fid = format!("{code}:{}", subject_key(o));
                if finding_ids.contains(fid.as_str()) {
                    fixes.push(fid);
                }
            }
        }
        fixes.retain(|f| finding_ids.contains(f.as_str()));
        let restore = match &s.saved_api_services {
            Some(saved) => format!(
                "restore the APIServices it took over from their originals in {}, then ",
                saved.kubectl_args()
            ),
            None => String::new(),
        };
        push(
            Action::ReapSession {
                session: id.clone(),
                namespace: namespace.clone(),
                objects: s.objects.clone(),
            },
            format!(
                "{restore}delete what the serve session {id} left: {}; its Lease {} is {}, so no serve process owns them",
                s.objects
                    .iter()
                    .map(|o| o.kubectl_args())
                    .collect::<Vec<_>>()
                    .join(", "),
                s.check.lease,
                if s.check.state == SessionState::Missing {
                    "gone"
                } else {
                    "expired"
                }
            ),
            if s.saved_api_services.is_some() {
                "kubectl cozy doctor --fix".to_owned()
            } else {
                contract::reap_command(id, namespace)
            },
            fixes,
            None,
            &mut covered,
        );
    }

    // 2. Unavailable APIServices nobody owns any more.
    for f in &report.findings {
        if f.code != Code::ApiServiceUnavailable
            || covered.contains(&f.id)
            || !f.remedy.as_ref().is_some_and(|r| r.automatic)
        {
            continue;
        }
        let Some(a) = report
            .api_services
            .iter()
            .find(|a| a.name == f.subject.name)
        else {
            continue;
        };
        if a.local {
            continue;
        }
        push(
            Action::DeleteApiService {
                name: a.name.clone(),
                uid: a.uid.clone(),
            },
            format!(
                "delete the unavailable APIService {} (only if it still has uid {} and is still not Available): \
                 kube-apiserver stops advertising {}/{}, so discovery and namespace deletion recover",
                a.name,
                a.uid.clone().unwrap_or_else(|| "?".into()),
                a.group,
                a.version
            ),
            format!("kubectl delete apiservice {}", a.name),
            vec![f.id.clone()],
            Some(format!(
                "clients lose {}/{} until it is registered again; do this only if its server is gone for good",
                a.group, a.version
            )),
            &mut covered,
        );
    }

    // 3. Finalizers.
    for f in &report.findings {
        let automatic = f.remedy.as_ref().is_some_and(|r| r.automatic);
        if !automatic || covered.contains(&f.id) {
            continue;
        }
        let target = match f.code {
            Code::FinalizerBlocking => report
                .namespaces
                .iter()
                .flat_map(|n| n.remaining.iter())
                .find(|o| o.object == f.subject)
                .map(|o| {
                    (
                        o.object.clone(),
                        o.finalizers.clone(),
                        o.resource_version.clone(),
                    )
                }),
            Code::NamespaceFinalizerRemaining => report
                .namespaces
                .iter()
                .find(|n| n.name == f.subject.name && !n.finalizers.is_empty())
                .map(|n| {
                    (
                        f.subject.clone(),
                        n.finalizers.clone(),
                        n.resource_version.clone(),
                    )
                }),
            _ => None,
        };
        let Some((object, remove, resource_version)) = target else {
            continue;
        };
        let command = f
            .remedy
            .as_ref()
            .map(|r| r.command.clone())
            .unwrap_or_default();
        push(
            Action::RemoveFinalizers {
                object: object.clone(),
                remove: remove.clone(),
                resource_version: resource_version.clone(),
            },
            format!(
                "merge-patch metadata.finalizers of {} without {} (guarded by its resourceVersion, {} when planned); \
                 the API server then completes its deletion",
                object.kubectl_args(),
                remove.join(", "),
                resource_version.unwrap_or_else(|| "?".into())
            ),
            command,
            vec![f.id.clone()],
            Some(format!(
                "whatever the finalizer guards is skipped (owner: {})",
                f.owner.clone().unwrap_or_else(|| "unknown".into())
            )),
            &mut covered,
        );
    }

    // Namespace discovery failures are fixed by the actions fixing their causes.
    for f in &report.findings {
        if f.code != Code::NamespaceDiscoveryFailure || f.caused_by.is_empty() {
            continue;
        }
        let all_planned = f.caused_by.iter().all(|c| covered.contains(c));
        if !all_planned {
            continue;
        }
        for a in actions.iter_mut() {
            if a.fixes.iter().any(|x| f.caused_by.contains(x)) && !a.fixes.contains(&f.id) {
                a.fixes.push(f.id.clone());
            }
        }
        covered.insert(f.id.clone());
    }

    // 4. The last resort.
    if opts.finalize_namespaces {
        for n in report
            .namespaces
            .iter()
            .filter(|n| n.deletion_timestamp.is_some() && n.blocked)
        {
            let fixes: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.severity != Severity::Info && inside_namespace(f, &n.name))
                .map(|f| f.id.clone())
                .collect();
            let mut new_covered = covered.clone();
            new_covered.extend(fixes.iter().cloned());
            let id = actions.len() + 1;
            actions.push(PlannedAction {
                id,
                action: Action::FinalizeNamespace {
                    name: n.name.clone(),
                },
                description: format!(
                    "if namespace {} is still Terminating after the actions above (and up to {}s of waiting), clear its \
                     spec.finalizers with PUT /api/v1/namespaces/{}/finalize (guarded by its resourceVersion)",
                    n.name,
                    opts.wait.as_secs(),
                    n.name
                ),
                command: format!(
                    "kubectl get namespace {0} -o json | jq '.spec.finalizers = []' | kubectl replace --raw /api/v1/namespaces/{0}/finalize -f -",
                    n.name
                ),
                fixes,
                warning: Some(format!(
                    "objects still in {0} are left in etcd, unreachable through the API, and come back if a namespace \
                     named {0} is created again; an unavailable APIService's objects are never deleted",
                    n.name
                )),
            });
            covered = new_covered;
        }
    }

    let not_planned = report
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Info && !covered.contains(&f.id))
        .map(|f| NotPlanned {
            finding: f.id.clone(),
            reason: not_planned_reason(f, report, opts),
        })
        .collect();
    FixReport {
        mode: FixMode::DryRun,
        actions,
        not_planned,
        results: Vec::new(),
        after: None,
    }
}

fn blocks_namespace(f: &Finding, ns: &str) -> bool {
    f.blocks.iter().any(|b| b == ns)
        || f.subject.namespace.as_deref() == Some(ns)
        || (f.subject.kind == "Namespace" && f.subject.name == ns)
}

/// About the namespace itself or an object in it (what `/finalize` settles),
/// as opposed to a cluster-wide cause that merely blocks it.
fn inside_namespace(f: &Finding, ns: &str) -> bool {
    f.subject.namespace.as_deref() == Some(ns)
        || (f.subject.kind == "Namespace" && f.subject.name == ns)
}

/// The live serve session behind an unhealthy APIService's finding, or
/// behind a cause of a namespace's discovery failure: (APIService, session).
fn live_session_of<'a>(f: &Finding, report: &'a Report) -> Option<(&'a str, &'a SessionCheck)> {
    let of_api = |name: &str| {
        report
            .api_services
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| {
                a.session
                    .as_ref()
                    .filter(|s| s.state == SessionState::Alive)
                    .map(|s| (a.name.as_str(), s))
            })
    };
    let unhealthy = |f: &Finding| {
        matches!(
            f.code,
            Code::ApiServiceUnavailable | Code::ApiServiceProbeFailed
        )
    };
    if unhealthy(f) {
        return of_api(&f.subject.name);
    }
    if f.code != Code::NamespaceDiscoveryFailure {
        return None;
    }
    f.caused_by
        .iter()
        .filter_map(|id| report.findings.iter().find(|c| &c.id == id))
        .filter(|c| unhealthy(c))
        .find_map(|c| of_api(&c.subject.name))
}

fn not_planned_reason(f: &Finding, report: &Report, opts: &FixOptions) -> String {
    if let Some((name, check)) = live_session_of(f, report) {
        let now = report
            .generated_at
            .parse()
            .unwrap_or_else(|_| Timestamp::now());
        let agent = report
            .serve_sessions
            .iter()
            .find(|s| s.check.id == check.id)
            .is_some_and(|s| route_has_agent(s.route.as_deref()));
        let wait = live_session_wait(name, check, agent, now);
        return if f.code == Code::NamespaceDiscoveryFailure {
            format!("its cause is not fixed by the plan: {wait}. {NEVER_BY_HAND}")
        } else {
            format!("{wait}. {NEVER_BY_HAND}")
        };
    }
    let command = f
        .remedy
        .as_ref()
        .map(|r| format!("; by hand: {}", r.command))
        .unwrap_or_default();
    let why = match f.code {
        Code::WebhookBackendUnavailable => "doctor does not delete webhook configurations",
        Code::ApiServiceCaBundleInvalid
        | Code::ApiServiceCaBundleExpired
        | Code::ApiServiceCaBundleExpiring => "needs a new certificate",
        Code::ApiServiceProbeFailed => "the APIService says Available; look at its server first",
        Code::ApiServiceUnavailable => {
            "not safe to delete (local, or owned by a live serve session)"
        }
        Code::ObjectDeletionStuck => {
            "outside a Terminating namespace its controller may still be working; remove the finalizer by hand once it is gone"
        }
        Code::NamespaceDiscoveryFailure => "its cause is not fixed by the plan",
        Code::NamespaceFinalizerRemaining
        | Code::NamespaceTerminating
        | Code::ContentRemaining
        | Code::NamespaceGroupVersionParsingFailure
            if !opts.finalize_namespaces =>
        {
            "only /finalize clears it, a last resort: add --finalize-namespaces"
        }
        _ => "no automatic fix",
    };
    format!("{why}{command}")
}

/// How the plan's questions are asked: at the terminal in `cmd/doctor.rs`,
/// from a script in tests.
pub trait Confirmer {
    /// Why asking failed.
    type Error;
    /// A yes/no question whose default is no.
    fn yes_no(&mut self, question: &str) -> Result<bool, Self::Error>;
    /// A question answered by typing (an empty answer is allowed).
    fn type_in(&mut self, question: &str) -> Result<String, Self::Error>;
}

/// Asks which actions to apply. `None` means a dry run (no `--yes` and no
/// `confirmer`, i.e. no terminal to ask on). Session reaping and finalizer
/// removal share one question; each APIService deletion needs the name typed
/// back; each `/finalize` gets its own question with its warning.
pub fn confirm<C: Confirmer>(
    fix: &FixReport,
    yes: bool,
    confirmer: Option<&mut C>,
) -> Result<Option<BTreeSet<usize>>, C::Error> {
    if fix.actions.is_empty() {
        return Ok(None);
    }
    if yes {
        return Ok(Some(fix.actions.iter().map(|a| a.id).collect()));
    }
    let Some(confirmer) = confirmer else {
        return Ok(None);
    };
    let mut approved = BTreeSet::new();
    let general: Vec<usize> = fix
        .actions
        .iter()
        .filter(|a| {
            matches!(
                a.action,
                Action::ReapSession { .. } | Action::RemoveFinalizers { .. }
            )
        })
        .map(|a| a.id)
        .collect();
    if !general.is_empty() {
        let list = general
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if confirmer.yes_no(&format!(
            "Apply action(s) {list} (reap sessions, remove finalizers)?"
        ))? {
            approved.extend(general);
        }
    }
    for a in &fix.actions {
        match &a.action {
            Action::DeleteApiService { name, .. } => {
                let typed = confirmer.type_in(&format!(
                    "Action {}: delete APIService {name}? Type its name to confirm (empty skips)",
                    a.id
                ))?;
                if typed.trim() == name {
                    approved.insert(a.id);
                }
            }
            Action::FinalizeNamespace { name } => {
                let question = format!(
                    "Action {}: finalize namespace {name} if it is still stuck? {}",
                    a.id,
                    a.warning.clone().unwrap_or_default()
                );
                let yes = confirmer.yes_no(&question)?;
                if yes {
                    approved.insert(a.id);
                }
            }
            _ => {}
        }
    }
    Ok(Some(approved))
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
    let mut results = Vec::new();
    for a in fix.actions.iter().filter(|a| approved.contains(&a.id)) {
        if matches!(a.action, Action::FinalizeNamespace { .. }) {
            continue;
        }
        step(req, format!("{}. {}…", a.id, action_title(&a.action)));
        let result = apply_one(req, a).await;
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
    // Wait for namespaces whose every blocker was just fixed (or that may need
    // /finalize after the others had their chance).
    let wait_for: Vec<String> = terminating
        .iter()
        .filter(|ns| {
            let blockers: Vec<&str> = report
                .findings
                .iter()
                .filter(|f| f.severity != Severity::Info && blocks_namespace(f, ns))
                .map(|f| f.id.as_str())
                .collect();
            let touched = blockers.iter().any(|b| fixed.contains(b));
            touched && (blockers.iter().all(|b| fixed.contains(b)) || finalize.contains(*ns))
        })
        .map(|ns| (*ns).to_owned())
        .collect();
    if !wait_for.is_empty() {
        wait_gone(req, &wait_for, opts.wait).await;
    }
    let mut finalized = Vec::new();
    for a in fix.actions.iter().filter(|a| approved.contains(&a.id)) {
        if let Action::FinalizeNamespace { name } = &a.action {
            step(req, format!("{}. {}…", a.id, action_title(&a.action)));
            let result = finalize_namespace(req, a.id, name).await;
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
                    what: "the diagnosis after the fix".into(),
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
                blocked_by: after
                    .findings
                    .iter()
                    .filter(|f| f.severity != Severity::Info && blocks_namespace(f, ns))
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

/// Polls until every namespace is gone or the time is up, counting on the
/// requester's bar; returns those left. The bar counts requests again
/// afterwards.
async fn wait_gone(req: &Requester, names: &[String], limit: Duration) -> Vec<String> {
    let bar = req.progress().clone();
    let quiet = req.with_progress(indicatif::ProgressBar::hidden());
    let left = wait_namespaces_gone(&quiet, &bar, names, limit).await;
    bar.set_length(0);
    bar.set_position(0);
    left
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
    bar.set_length(names.len() as u64);
    bar.set_position(0);
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

fn dynamic_api(req: &Requester, o: &ObjectRef) -> Api<DynamicObject> {
    let ar = ApiResource {
        group: o.group().to_owned(),
        version: o.version().to_owned(),
        api_version: o.api_version.clone(),
        kind: o.kind.clone(),
        plural: o.resource.clone(),
    };
    match &o.namespace {
        Some(ns) => Api::namespaced_with(req.client().clone(), ns, &ar),
        None => Api::all_with(req.client().clone(), &ar),
    }
}

fn result(
    action: usize,
    outcome: ActionOutcome,
    detail: String,
    verified: Option<String>,
) -> ActionResult {
    ActionResult {
        action,
        outcome,
        detail,
        verified,
    }
}

async fn apply_one(req: &Requester, a: &PlannedAction) -> ActionResult {
    match &a.action {
        Action::ReapSession {
            session,
            namespace,
            objects,
        } => reap_session(req, a.id, session, namespace, objects).await,
        Action::DeleteApiService { name, uid } => {
            delete_api_service(req, a.id, name, uid.as_deref()).await
        }
        Action::RemoveFinalizers {
            object,
            remove,
            resource_version,
        } => remove_finalizers(req, a.id, object, remove, resource_version.as_deref()).await,
        Action::FinalizeNamespace { name } => finalize_namespace(req, a.id, name).await,
    }
}

async fn reap_session(
    req: &Requester,
    id: usize,
    session: &str,
    namespace: &str,
    objects: &[ObjectRef],
) -> ActionResult {
    let target = Target {
        id: session.to_owned(),
        namespace: if namespace.is_empty() {
            contract::DEFAULT_NAMESPACE.to_owned()
        } else {
            namespace.to_owned()
        },
        objects: objects.iter().map(session_object).collect(),
    };
    match reap::reap(req.client(), &target, req.timeout()).await {
        Ok(Reaped::Alive { .. }) => result(
            id,
            ActionOutcome::Skipped,
            format!(
                "serve session {session} renewed its Lease since the diagnosis; nothing deleted"
            ),
            None,
        ),
        Err(err @ reap::ReapError::ReadLease { .. }) => result(
            id,
            ActionOutcome::Failed,
            format!(
                "could not re-read the Lease of session {session}: {}",
                error_chain(&err)
            ),
            None,
        ),
        Err(err) => result(
            id,
            ActionOutcome::Failed,
            format!(
                "nothing of serve session {session} was touched: {}",
                error_chain(&err)
            ),
            None,
        ),
        Ok(Reaped::Reaped(report)) => reap_result(id, session, &report),
    }
}

/// What a reap did, as an action result.
fn reap_result(id: usize, session: &str, report: &ReapReport) -> ActionResult {
    let describe = |items: &[(SessionObject, String)]| {
        items
            .iter()
            .map(|(o, why)| format!("{}: {why}", o.describe()))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut detail = format!(
        "deleted {} object(s) of serve session {session}",
        report.deleted.len()
    );
    if !report.restored.is_empty() {
        detail.push_str(&format!(
            "; restored APIService(s) {} from their saved originals",
            report.restored.join(", ")
        ));
    }
    if !report.left.is_empty() {
        detail.push_str(&format!("; left alone: {}", describe(&report.left)));
    }
    if !report.failed.is_empty() {
        return result(
            id,
            ActionOutcome::Failed,
            format!("{detail}; failed: {}", describe(&report.failed)),
            None,
        );
    }
    if !report.unverified.is_empty() {
        return result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(format!("still present: {}", describe(&report.unverified))),
        );
    }
    let verified = if report.restored.is_empty() {
        "none of them exists any more".to_owned()
    } else {
        "none of the deleted ones exists any more; the restored APIServices match their saved originals"
            .to_owned()
    };
    let outcome = if report.left.is_empty() {
        ActionOutcome::Done
    } else {
        ActionOutcome::NotVerified
    };
    result(id, outcome, detail, Some(verified))
}

async fn delete_api_service(
    req: &Requester,
    id: usize,
    name: &str,
    uid: Option<&str>,
) -> ActionResult {
    let api: Api<APIService> = Api::all(req.client().clone());
    let current = match req.call(api.get_opt(name)).await {
        Ok(Some(current)) => current,
        Ok(None) => {
            return result(
                id,
                ActionOutcome::AlreadyDone,
                format!("APIService {name} is already gone"),
                None,
            );
        }
        Err(err) => {
            return result(
                id,
                ActionOutcome::Failed,
                format!("could not re-read APIService {name}: {err}"),
                None,
            );
        }
    };
    if uid.is_some() && current.metadata.uid.as_deref() != uid {
        return result(
            id,
            ActionOutcome::Skipped,
            format!("APIService {name} was replaced since the diagnosis (new uid); re-run doctor"),
            None,
        );
    }
    let available = current
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Available"))
        .map(|c| c.status.clone());
    if available.as_deref() == Some("True") {
        return result(
            id,
            ActionOutcome::Skipped,
            format!("APIService {name} became Available since the diagnosis; not deleted"),
            None,
        );
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: current.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    if let Err(err) = req.call(api.delete(name, &params)).await
        && !err.is_not_found()
    {
        return result(
            id,
            ActionOutcome::Failed,
            format!("delete APIService {name}: {err}"),
            None,
        );
    }
    let detail = format!(
        "deleted APIService {name} (uid {}, Available={})",
        current.metadata.uid.clone().unwrap_or_default(),
        available.unwrap_or_else(|| "unset".into())
    );
    match req.call(api.get_opt(name)).await {
        Ok(None) => result(
            id,
            ActionOutcome::Done,
            detail,
            Some(format!("GET apiservice {name}: NotFound")),
        ),
        Ok(Some(_)) => result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some("it still exists".into()),
        ),
        Err(err) => result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(format!("re-read failed: {err}")),
        ),
    }
}

async fn remove_finalizers(
    req: &Requester,
    id: usize,
    object: &ObjectRef,
    remove: &[String],
    planned_rv: Option<&str>,
) -> ActionResult {
    let api = dynamic_api(req, object);
    let target = object.kubectl_args();
    let mut attempts = 0;
    let (removed, rv) = loop {
        attempts += 1;
        let current = match req.call(api.get_metadata_opt(&object.name)).await {
            Ok(Some(current)) => current,
            Ok(None) => {
                return result(
                    id,
                    ActionOutcome::AlreadyDone,
                    format!("{target} is already gone"),
                    None,
                );
            }
            Err(err) => {
                return result(
                    id,
                    ActionOutcome::Failed,
                    format!("could not re-read {target}: {err}"),
                    None,
                );
            }
        };
        let finalizers = current.metadata.finalizers.clone().unwrap_or_default();
        let present: Vec<String> = remove
            .iter()
            .filter(|f| finalizers.contains(f))
            .cloned()
            .collect();
        if present.is_empty() {
            return result(
                id,
                ActionOutcome::AlreadyDone,
                format!("{target} no longer has {}", remove.join(", ")),
                Some(format!("finalizers now {finalizers:?}")),
            );
        }
        let keep: Vec<&String> = finalizers.iter().filter(|f| !remove.contains(f)).collect();
        let rv = current
            .metadata
            .resource_version
            .clone()
            .unwrap_or_default();
        // The resourceVersion in a merge patch is a precondition: 409 if the
        // object changed after it was read.
        let patch = serde_json::json!({"metadata": {"finalizers": keep, "resourceVersion": rv}});
        match req
            .call(api.patch_metadata(&object.name, &PatchParams::default(), &Patch::Merge(&patch)))
            .await
        {
            Ok(_) => break (present, rv),
            Err(err) if err.is_not_found() => {
                return result(
                    id,
                    ActionOutcome::AlreadyDone,
                    format!("{target} is already gone"),
                    None,
                );
            }
            Err(err) if err.is_conflict() && attempts < 3 => continue,
            Err(err) => {
                return result(
                    id,
                    ActionOutcome::Failed,
                    format!("patch {target} (resourceVersion {rv}): {err}"),
                    None,
                );
            }
        }
    };
    let mut detail = format!(
        "removed {} from {target} (merge patch guarded by resourceVersion {rv}",
        removed.join(", ")
    );
    match planned_rv {
        Some(p) if p != rv => detail.push_str(&format!("; it was {p} when planned")),
        _ => {}
    }
    detail.push(')');
    match req.call(api.get_metadata_opt(&object.name)).await {
        Ok(None) => result(
            id,
            ActionOutcome::Done,
            detail,
            Some(format!("{target} is gone: its deletion completed")),
        ),
        Ok(Some(m)) => {
            let now = m.metadata.finalizers.unwrap_or_default();
            if removed.iter().any(|f| now.contains(f)) {
                result(
                    id,
                    ActionOutcome::NotVerified,
                    detail,
                    Some(format!("finalizers still {now:?}")),
                )
            } else {
                result(
                    id,
                    ActionOutcome::Done,
                    detail,
                    Some(format!("finalizers now {now:?}")),
                )
            }
        }
        Err(err) => result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(format!("re-read failed: {err}")),
        ),
    }
}

async fn finalize_namespace(req: &Requester, id: usize, name: &str) -> ActionResult {
    let api: Api<Namespace> = Api::all(req.client().clone());
    let mut ns = match req.call(api.get_opt(name)).await {
        Ok(Some(ns)) => ns,
        Ok(None) => {
            return result(
                id,
                ActionOutcome::AlreadyDone,
                format!("namespace {name} finished deleting without /finalize"),
                None,
            );
        }
        Err(err) => {
            return result(
                id,
                ActionOutcome::Failed,
                format!("could not re-read namespace {name}: {err}"),
                None,
            );
        }
    };
    let before = ns
        .spec
        .as_ref()
        .and_then(|s| s.finalizers.clone())
        .unwrap_or_default();
    if before.is_empty() {
        return result(
            id,
            ActionOutcome::AlreadyDone,
            format!("namespace {name} has no spec.finalizers left"),
            None,
        );
    }
    ns.spec.get_or_insert_with(Default::default).finalizers = Some(Vec::new());
    // The body keeps the resourceVersion just read: a conflict if it changed.
    if let Err(err) = req
        .call(api.replace_subresource("finalize", name, &PostParams::default(), &ns))
        .await
    {
        let outcome = if err.is_not_found() {
            ActionOutcome::AlreadyDone
        } else {
            ActionOutcome::Failed
        };
        return result(
            id,
            outcome,
            format!("PUT /api/v1/namespaces/{name}/finalize: {err}"),
            None,
        );
    }
    let detail =
        format!("cleared spec.finalizers {before:?} of namespace {name} through /finalize");
    match req.call(api.get_opt(name)).await {
        Ok(None) => result(
            id,
            ActionOutcome::Done,
            detail,
            Some("namespace gone".into()),
        ),
        Ok(Some(n)) => {
            let left = n.spec.and_then(|s| s.finalizers).unwrap_or_default();
            if left.is_empty() {
                result(
                    id,
                    ActionOutcome::Done,
                    detail,
                    Some("spec.finalizers now []; the namespace is removed once metadata.finalizers are empty".into()),
                )
            } else {
                result(
                    id,
                    ActionOutcome::NotVerified,
                    detail,
                    Some(format!("spec.finalizers still {left:?}")),
                )
            }
        }
        Err(err) => result(
            id,
            ActionOutcome::NotVerified,
            detail,
            Some(format!("re-read failed: {err}")),
        ),
    }
}

/// Which actions fix which findings, for tests and rendering.
pub fn fixes_by_finding(fix: &FixReport) -> BTreeMap<String, Vec<usize>> {
    let mut map: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for a in &fix.actions {
        for f in &a.fixes {
            map.entry(f.clone()).or_default().push(a.id);
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::findings::{
        NamespaceReport, RemainingObject, Remedy, Scope, ScopeKind, SessionReport, Summary, Verdict,
    };

    fn report(findings: Vec<Finding>, namespaces: Vec<NamespaceReport>) -> Report {
        Report {
            api_version: "kubectl-cozy.io/v1alpha1".into(),
            kind: "DoctorReport".into(),
            cluster: "https://127.0.0.1:6443".into(),
            server_version: None,
            generated_at: "2026-09-01T12:00:00Z".into(),
            duration_ms: 1,
            scope: Scope {
                namespaces: ScopeKind::Terminating,
                namespace: None,
            },
            result: Verdict::ProblemsFound,
            summary: Summary::default(),
            api_services: Vec::new(),
            serve_sessions: Vec::new(),
            namespaces,
            webhooks: Vec::new(),
            findings,
            unchecked: Vec::new(),
            fix: None,
            standalone: None,
        }
    }

    fn cm() -> ObjectRef {
        ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            resource: "configmaps".into(),
            namespace: Some("team-b".into()),
            name: "blocked".into(),
        }
    }

    fn ns_report(name: &str) -> NamespaceReport {
        NamespaceReport {
            name: name.into(),
            phase: "Terminating".into(),
            deletion_timestamp: Some("2026-09-01T11:50:00Z".into()),
            blocked: true,
            remaining: vec![RemainingObject {
                object: cm(),
                finalizers: vec!["example.com/block".into()],
                deletion_timestamp: Some("2026-09-01T11:50:01Z".into()),
                resource_version: Some("42".into()),
            }],
            ..NamespaceReport::default()
        }
    }

    fn finalizer_finding() -> Finding {
        let mut f =
            Finding::new(Code::FinalizerBlocking, Severity::Error, cm(), "w", "y").remedy(Remedy {
                description: String::new(),
                command: "kubectl patch configmaps/blocked -n team-b --type=merge -p '…'".into(),
                automatic: true,
            });
        f.blocks = vec!["team-b".into()];
        f
    }

    fn opts(finalize: bool) -> FixOptions {
        FixOptions {
            finalize_namespaces: finalize,
            wait: Duration::from_secs(60),
        }
    }

    #[test]
    fn finalizers_are_planned_with_their_resource_version() {
        let r = report(vec![finalizer_finding()], vec![ns_report("team-b")]);
        let fix = plan(&r, &opts(false));
        assert_eq!(fix.actions.len(), 1);
        assert_eq!(
            fix.actions[0].action,
            Action::RemoveFinalizers {
                object: cm(),
                remove: vec!["example.com/block".into()],
                resource_version: Some("42".into()),
            }
        );
        assert!(fix.not_planned.is_empty());
        assert_eq!(fix.mode, FixMode::DryRun);
    }

    #[test]
    fn finalize_is_only_planned_behind_its_flag_and_last() {
        let mut stuck = Finding::new(
            Code::NamespaceFinalizerRemaining,
            Severity::Error,
            ObjectRef::cluster("v1", "Namespace", "namespaces", "team-b"),
            "w",
            "y",
        );
        stuck.blocks = vec!["team-b".into()];
        let r = report(
            vec![finalizer_finding(), stuck.clone()],
            vec![ns_report("team-b")],
        );
        let without = plan(&r, &opts(false));
        assert_eq!(without.actions.len(), 1);
        assert_eq!(without.not_planned.len(), 1);
        assert!(
            without.not_planned[0]
                .reason
                .contains("--finalize-namespaces")
        );
        let with = plan(&r, &opts(true));
        assert_eq!(with.actions.len(), 2);
        assert!(matches!(
            with.actions[1].action,
            Action::FinalizeNamespace { .. }
        ));
        assert!(
            with.actions[1]
                .warning
                .as_ref()
                .unwrap()
                .contains("left in etcd")
        );
        assert!(with.not_planned.is_empty());
    }

    #[test]
    fn expired_sessions_are_reaped_and_cover_their_apiservices() {
        let apiservice =
            crate::doctor::findings::ObjectRef::api_service("v1alpha1.apps.cozystack.io");
        let session = Finding::new(
            Code::ServeSessionExpired,
            Severity::Error,
            lease_ref("kubectl-cozy-system", "abc"),
            "w",
            "y",
        );
        let unavailable = Finding::new(
            Code::ApiServiceUnavailable,
            Severity::Error,
            apiservice.clone(),
            "w",
            "y",
        )
        .remedy(Remedy {
            description: String::new(),
            command: contract::reap_command("abc", "kubectl-cozy-system"),
            automatic: true,
        });
        let mut ns_failure = Finding::new(
            Code::NamespaceDiscoveryFailure,
            Severity::Error,
            ObjectRef::cluster("v1", "Namespace", "namespaces", "team-a"),
            "w",
            "y",
        );
        ns_failure.caused_by = vec![unavailable.id.clone()];
        let mut r = report(
            vec![session.clone(), unavailable.clone(), ns_failure.clone()],
            Vec::new(),
        );
        r.serve_sessions = vec![SessionReport {
            check: SessionCheck {
                id: "abc".into(),
                lease: "kubectl-cozy-system/kubectl-cozy-abc".into(),
                namespace: "kubectl-cozy-system".into(),
                state: SessionState::Missing,
                holder: None,
                renew_time: None,
                lease_duration_seconds: None,
                expired_for_seconds: None,
                expires_in_seconds: None,
            },
            objects: vec![apiservice],
            served: Vec::new(),
            route: None,
            started: None,
            saved_api_services: None,
        }];
        let fix = plan(&r, &opts(false));
        assert_eq!(fix.actions.len(), 1, "{:?}", fix.actions);
        assert!(matches!(fix.actions[0].action, Action::ReapSession { .. }));
        let by = fixes_by_finding(&fix);
        assert_eq!(by[&session.id], vec![1]);
        assert_eq!(by[&unavailable.id], vec![1]);
        assert_eq!(by[&ns_failure.id], vec![1]);
    }

    /// Answers from a script, recording the questions.
    #[derive(Default)]
    struct Scripted {
        yes_no: Vec<bool>,
        typed: Vec<&'static str>,
        asked: Vec<String>,
    }

    impl Confirmer for Scripted {
        type Error = std::convert::Infallible;

        fn yes_no(&mut self, question: &str) -> Result<bool, Self::Error> {
            self.asked.push(question.to_owned());
            Ok(self.yes_no.remove(0))
        }

        fn type_in(&mut self, question: &str) -> Result<String, Self::Error> {
            self.asked.push(question.to_owned());
            Ok(self.typed.remove(0).to_owned())
        }
    }

    #[test]
    fn dry_run_without_yes_or_terminal() {
        let r = report(vec![finalizer_finding()], vec![ns_report("team-b")]);
        let fix = plan(&r, &opts(false));
        assert_eq!(confirm::<Scripted>(&fix, false, None).unwrap(), None);
        assert_eq!(
            confirm::<Scripted>(&fix, true, None).unwrap(),
            Some(BTreeSet::from([1]))
        );
    }

    #[test]
    fn apiservice_deletions_need_the_name_typed_back() {
        let mut r = report(Vec::new(), Vec::new());
        let fix_of = |names: &[&str]| FixReport {
            mode: FixMode::DryRun,
            actions: names
                .iter()
                .enumerate()
                .map(|(i, n)| PlannedAction {
                    id: i + 1,
                    action: Action::DeleteApiService {
                        name: (*n).to_owned(),
                        uid: None,
                    },
                    description: String::new(),
                    command: String::new(),
                    fixes: Vec::new(),
                    warning: None,
                })
                .collect(),
            not_planned: Vec::new(),
            results: Vec::new(),
            after: None,
        };
        r.findings.clear();
        let fix = fix_of(&["v1.a.example.com", "v1.b.example.com"]);
        let mut asker = Scripted {
            typed: vec!["v1.a.example.com ", "yes"],
            ..Scripted::default()
        };
        let approved = confirm(&fix, false, Some(&mut asker)).unwrap();
        assert_eq!(approved, Some(BTreeSet::from([1])));
        assert_eq!(
            asker.asked[1],
            "Action 2: delete APIService v1.b.example.com? Type its name to confirm (empty skips)"
        );

        // One question covers finalizer removals; declining leaves nothing.
        let r = report(vec![finalizer_finding()], vec![ns_report("team-b")]);
        let fix = plan(&r, &opts(false));
        let mut asker = Scripted {
            yes_no: vec![false],
            ..Scripted::default()
        };
        assert_eq!(
            confirm(&fix, false, Some(&mut asker)).unwrap(),
            Some(BTreeSet::new())
        );
        assert_eq!(
            asker.asked,
            vec!["Apply action(s) 1 (reap sessions, remove finalizers)?"]
        );
    }

    #[test]
    fn reap_results_say_what_was_restored_and_what_is_left() {
        let cm = SessionObject::of(&contract::CONFIG_MAP, Some("kubectl-cozy-system"), "x");
        let done = reap_result(
            1,
            "abc",
            &ReapReport {
                restored: vec!["v1alpha1.apps.cozystack.io".into()],
                deleted: vec![cm.clone()],
                ..ReapReport::default()
            },
        );
        assert_eq!(done.outcome, ActionOutcome::Done);
        assert_eq!(
            done.detail,
            "deleted 1 object(s) of serve session abc; restored APIService(s) v1alpha1.apps.cozystack.io from their \
             saved originals"
        );
        let failed = reap_result(
            1,
            "abc",
            &ReapReport {
                failed: vec![(cm.clone(), "HTTP 403 Forbidden: no".into())],
                ..ReapReport::default()
            },
        );
        assert_eq!(failed.outcome, ActionOutcome::Failed);
        assert!(
            failed
                .detail
                .ends_with("failed: configmaps/x -n kubectl-cozy-system: HTTP 403 Forbidden: no"),
            "{}",
            failed.detail
        );
        let left = reap_result(
            1,
            "abc",
            &ReapReport {
                left: vec![(cm, "kept".into())],
                ..ReapReport::default()
            },
        );
        assert_eq!(left.outcome, ActionOutcome::NotVerified);
    }
}
