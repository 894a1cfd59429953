//! The plan `doctor --fix` shows before anything changes ([`plan`]): for
//! the report's findings, the actions that fix them, in the order they run,
//! and for every other finding why it has no action ([`NotPlanned`]). A
//! finding's remedy is `automatic` exactly when [`plan`] has an action for
//! it. Nothing here reads or changes the cluster.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;

use crate::doctor::findings::{
    Action, Code, Finding, FixMode, FixReport, NotPlanned, PlannedAction, Report, SessionCheck,
    SessionState, Severity, subject_key,
};
use crate::doctor::sessions::{NEVER_BY_HAND, lease_ref, live_session_wait, route_has_agent};
use crate::register::session as contract;

use super::FixOptions;

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

    // 3. Finalizers. On a standalone server an object stuck outside a
    // Terminating namespace by the garbage collector's finalizers alone (an
    // earlier version added them) is one nothing else will ever release:
    // it has no garbage collector.
    for f in &report.findings {
        let automatic = f.remedy.as_ref().is_some_and(|r| r.automatic);
        let remaining = || report.remaining_of(&f.subject);
        let collector_only = f.code == Code::ObjectDeletionStuck
            && report.standalone.is_some()
            && remaining().is_some_and(|o| {
                !o.finalizers.is_empty()
                    && o.finalizers
                        .iter()
                        .all(|x| x == "foregroundDeletion" || x == "orphan")
            });
        if !(automatic || collector_only) || covered.contains(&f.id) {
            continue;
        }
        let target = match f.code {
            Code::FinalizerBlocking | Code::ObjectDeletionStuck => remaining().map(|o| {
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
            Some(if collector_only {
                "a standalone server has no garbage collector to remove them; dependents are left as they are"
                    .to_owned()
            } else {
                format!(
                    "whatever the finalizer guards is skipped (owner: {})",
                    f.owner.clone().unwrap_or_else(|| "unknown".into())
                )
            }),
            &mut covered,
        );
    }

    // Terminating namespaces with no finalizer left and nothing in them:
    // deleted again, which is what removes them.
    for f in &report.findings {
        if f.code != Code::NamespaceFinalizedNotDeleted
            || covered.contains(&f.id)
            || !f.remedy.as_ref().is_some_and(|r| r.automatic)
        {
            continue;
        }
        let Some(n) = report.namespaces.iter().find(|n| n.name == f.subject.name) else {
            continue;
        };
        push(
            Action::DeleteNamespace {
                name: n.name.clone(),
                uid: n.uid.clone(),
            },
            format!(
                "delete namespace {} again (only if it still has uid {}): it is Terminating with no finalizer and \
                 nothing left in it, and kube-apiserver removes it on this delete",
                n.name,
                n.uid.clone().unwrap_or_else(|| "?".into())
            ),
            format!("kubectl delete namespace {}", n.name),
            vec![f.id.clone()],
            None,
            &mut covered,
        );
    }

    // Namespace discovery (and content) failures are fixed by the actions
    // fixing their causes.
    for f in &report.findings {
        if !fixed_by_its_causes(f) || f.caused_by.is_empty() {
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

    // 4. The last resort. A standalone server serves `finalize` too (a
    // client's `spec.finalizers` hold its namespaces as a cluster's); what
    // it clears there, the namespace goes once its apps do.
    if opts.finalize_namespaces {
        for n in report
            .namespaces
            .iter()
            .filter(|n| n.deletion_timestamp.is_some() && n.blocked)
            // Nothing for /finalize to clear: said under not planned.
            .filter(|n| !n.spec_finalizers.is_empty())
            // A failing webhook rejects its finalize: it could only fail
            // (said under not planned).
            .filter(|n| n.finalize_rejected_by.is_empty())
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
                warning: Some(if report.standalone.is_some() {
                    format!(
                        "a standalone server keeps namespace {} until the apps still in it are gone; none is left \
                         behind",
                        n.name
                    )
                } else {
                    format!(
                        "objects still in {0} are left in etcd, unreachable through the API, and come back if a \
                         namespace named {0} is created again; an unavailable APIService's objects are never deleted",
                        n.name
                    )
                }),
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

/// Whether the Terminating namespace `f` is in or about has no
/// `spec.finalizers` left.
fn spec_finalizers_cleared(f: &Finding, report: &Report) -> bool {
    report.namespaces.iter().any(|n| {
        n.deletion_timestamp.is_some()
            && n.spec_finalizers.is_empty()
            && inside_namespace(f, &n.name)
    })
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
    if !fixed_by_its_causes(f) {
        return None;
    }
    f.caused_by
        .iter()
        .filter_map(|id| report.findings.iter().find(|c| &c.id == id))
        .filter(|c| unhealthy(c))
        .find_map(|c| of_api(&c.subject.name))
}

/// A namespace's finding that its causes' fixes fix (`causedBy`): API
/// discovery failing, or the content of an unavailable APIService's group.
fn fixed_by_its_causes(f: &Finding) -> bool {
    matches!(
        f.code,
        Code::NamespaceDiscoveryFailure | Code::NamespaceContentFailure
    )
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
        return if fixed_by_its_causes(f) {
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
    let webhooks: Vec<&str> = f
        .caused_by
        .iter()
        .filter(|id| id.starts_with(&format!("{}:", Code::WebhookBackendUnavailable)))
        .map(String::as_str)
        .collect();
    let rejects = |operation| crate::doctor::namespaces::webhook_rejects(f, operation);
    if f.code == Code::FinalizerBlocking
        && !webhooks.is_empty()
        && rejects("DELETE")
        && !rejects("UPDATE")
    {
        return format!(
            "a failing webhook rejects the namespace controller's delete of it: fix the webhook first ({}), then \
             the namespace controller deletes it{command}",
            webhooks.join(", ")
        );
    }
    if matches!(
        f.code,
        Code::FinalizerBlocking | Code::NamespaceFinalizerRemaining | Code::ObjectDeletionStuck
    ) && !webhooks.is_empty()
    {
        return format!(
            "removing its finalizers is an update that a failing webhook rejects: fix the webhook first ({}), \
             then run doctor --fix again{command}",
            webhooks.join(", ")
        );
    }
    if f.code == Code::WebhookBackendUnavailable && opts.finalize_namespaces {
        let held: Vec<&str> = report
            .namespaces
            .iter()
            .filter(|n| n.finalize_rejected_by.contains(&f.id))
            .map(|n| n.name.as_str())
            .collect();
        if !held.is_empty() {
            return format!(
                "doctor does not delete webhook configurations, and this one rejects the /finalize of namespace {}: \
                 --finalize-namespaces cannot clear it until the webhook is fixed or deleted{command}",
                held.join(", ")
            );
        }
    }
    if let Some(webhooks) = finalize_rejected(f, report, opts) {
        return format!(
            "its namespace's /finalize is an update that a failing webhook rejects: fix the webhook first \
             ({webhooks}), then run doctor --fix --finalize-namespaces again{command}"
        );
    }
    let why = match f.code {
        Code::WebhookBackendUnavailable => "doctor does not delete webhook configurations",
        Code::ApiServiceCaBundleInvalid
        | Code::ApiServiceCaBundleExpired
        | Code::ApiServiceCaBundleExpiring => "needs a new certificate",
        Code::ApiServiceProbeFailed | Code::ApiServiceUnresponsive => {
            "the APIService says Available; look at its server first"
        }
        Code::ApiServiceUnavailable => {
            "not safe to delete (local, or owned by a live serve session)"
        }
        Code::ObjectDeletionStuck => {
            "outside a Terminating namespace its controller may still be working; remove the finalizer by hand once it is gone"
        }
        Code::NamespaceDiscoveryFailure | Code::NamespaceContentFailure => {
            "its cause is not fixed by the plan"
        }
        Code::FinalizersRemainingUnlisted => {
            "doctor could not list these objects, so it cannot remove their finalizers; find them by hand (or, a \
             last resort, add --finalize-namespaces)"
        }
        // Its own `spec.finalizers` aside (only `/finalize` clears those),
        // a standalone server's namespace goes once its apps do.
        Code::NamespaceTerminating
        | Code::ContentRemaining
        | Code::NamespaceGroupVersionParsingFailure
            if report.standalone.is_some() =>
        {
            "a standalone server removes the namespace once what is in it is gone"
        }
        // Its spec.finalizers already cleared (by an earlier /finalize):
        // the namespace controller no longer deletes what is in it, and
        // /finalize has nothing left to clear.
        Code::NamespaceTerminating
        | Code::ContentRemaining
        | Code::NamespaceFinalizedNotDeleted
            if spec_finalizers_cleared(f, report) =>
        {
            "its namespace's spec.finalizers are already empty (an earlier /finalize cleared them), so the namespace \
             controller no longer deletes what is in it and /finalize cannot help: delete what is left by hand, then \
             run doctor --fix again to delete the namespace once more"
        }
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

/// With `--finalize-namespaces`, the failing webhooks (joined) that reject
/// the `/finalize` of the Terminating namespace `f` is in or about, which
/// the plan therefore leaves out.
fn finalize_rejected(f: &Finding, report: &Report, opts: &FixOptions) -> Option<String> {
    if !opts.finalize_namespaces || report.standalone.is_some() {
        return None;
    }
    report
        .namespaces
        .iter()
        .find(|n| {
            n.deletion_timestamp.is_some()
                && n.blocked
                && !n.finalize_rejected_by.is_empty()
                && inside_namespace(f, &n.name)
        })
        .map(|n| n.finalize_rejected_by.join(", "))
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
    use super::super::test_support::{cm, finalizer_finding, ns_report, opts, report};
    use super::*;
    use crate::doctor::findings::{ObjectRef, Remedy, SessionReport};

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

    /// An object whose delete (not its finalizers' removal) a failing
    /// webhook rejects: NOT PLANNED says the webhook comes first, then the
    /// namespace controller deletes it.
    #[test]
    fn a_delete_a_webhook_rejects_is_said_as_such() {
        let mut held = finalizer_finding().evidence(
            "ValidatingWebhookConfiguration widgets webhook widgets.example.com",
            "intercepts DELETE configmaps/blocked -n team-b with failurePolicy Fail, and its Service policy/widgets \
             does not answer: it rejects the namespace controller's delete",
        );
        held.caused_by = vec![format!("{}:widgets", Code::WebhookBackendUnavailable)];
        if let Some(r) = held.remedy.as_mut() {
            r.automatic = false;
        }
        let fix = plan(&report(vec![held], vec![ns_report("team-b")]), &opts(false));
        assert!(fix.actions.is_empty(), "{:?}", fix.actions);
        assert!(
            fix.not_planned[0]
                .reason
                .starts_with("a failing webhook rejects the namespace controller's delete of it"),
            "{}",
            fix.not_planned[0].reason
        );
    }

    #[test]
    fn finalize_is_not_planned_when_a_failing_webhook_rejects_it() {
        let mut stuck = Finding::new(
            Code::NamespaceContentFailure,
            Severity::Error,
            ObjectRef::cluster("v1", "Namespace", "namespaces", "team-b"),
            "w",
            "y",
        );
        stuck.blocks = vec!["team-b".into()];
        let hook =
            "WebhookBackendUnavailable:validatingwebhookconfiguration/guard#guard.example.com";
        let mut ns = ns_report("team-b");
        ns.remaining.clear();
        ns.finalize_rejected_by = vec![hook.into()];
        let r = report(vec![stuck], vec![ns]);
        let fix = plan(&r, &opts(true));
        assert!(fix.actions.is_empty(), "{:?}", fix.actions);
        assert_eq!(fix.not_planned.len(), 1);
        let reason = &fix.not_planned[0].reason;
        assert!(
            reason.contains("/finalize is an update that a failing webhook rejects")
                && reason.contains(hook)
                && reason.contains("--finalize-namespaces again"),
            "{reason}"
        );
        // Without the flag, the usual advice.
        let fix = plan(&r, &opts(false));
        assert!(
            !fix.not_planned[0].reason.contains("/finalize is an update"),
            "{:?}",
            fix.not_planned
        );
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

        // Its spec.finalizers already cleared: /finalize has nothing to
        // do (the namespace controller no longer deletes its content).
        let mut cleared = r.clone();
        cleared.namespaces[0].spec_finalizers.clear();
        cleared.findings[1].code = Code::ContentRemaining;
        let with = plan(&cleared, &opts(true));
        assert_eq!(with.actions.len(), 1, "{:?}", with.actions);
        assert!(
            with.not_planned[0]
                .reason
                .starts_with("its namespace's spec.finalizers are already empty"),
            "{}",
            with.not_planned[0].reason
        );

        // A standalone server serves /finalize too: planned there behind
        // the same flag, and what it clears orphans nothing.
        let mut standalone = r.clone();
        standalone.standalone = Some(crate::doctor::findings::StandaloneServer {
            ready: true,
            resources: Vec::new(),
        });
        let without = plan(&standalone, &opts(false));
        assert_eq!(without.actions.len(), 1);
        assert!(
            without.not_planned[0]
                .reason
                .contains("add --finalize-namespaces"),
            "{}",
            without.not_planned[0].reason
        );
        let with = plan(&standalone, &opts(true));
        assert_eq!(with.actions.len(), 2);
        let warning = with.actions[1].warning.as_deref().unwrap();
        assert!(
            warning.starts_with("a standalone server keeps namespace team-b until the apps"),
            "{warning}"
        );
        // Its namespaces' other findings are the server's to settle.
        let mut terminating = standalone.clone();
        terminating.findings[1].code = Code::NamespaceTerminating;
        assert!(
            plan(&terminating, &opts(false)).not_planned[0]
                .reason
                .starts_with("a standalone server removes the namespace")
        );
    }

    #[test]
    fn a_standalone_servers_collector_finalizers_are_planned_outside_terminating_namespaces() {
        let mut held = ns_report("team-b");
        held.phase = "Active".into();
        held.deletion_timestamp = None;
        held.blocked = false;
        held.remaining[0].finalizers = vec!["foregroundDeletion".into()];
        let mut stuck = Finding::new(Code::ObjectDeletionStuck, Severity::Warning, cm(), "w", "y")
            .remedy(Remedy {
                description: String::new(),
                command: "kubectl patch configmaps/blocked -n team-b --type=merge -p '…'".into(),
                automatic: false,
            });
        stuck.id = "ObjectDeletionStuck:cm".into();
        let cluster = report(vec![stuck], vec![held]);
        // On a cluster the garbage collector may still be working.
        let fix = plan(&cluster, &opts(false));
        assert!(fix.actions.is_empty());
        assert_eq!(fix.not_planned.len(), 1);
        let mut standalone = cluster.clone();
        standalone.standalone = Some(crate::doctor::findings::StandaloneServer {
            ready: true,
            resources: Vec::new(),
        });
        let fix = plan(&standalone, &opts(false));
        assert_eq!(fix.actions.len(), 1);
        assert!(matches!(
            &fix.actions[0].action,
            Action::RemoveFinalizers { remove, resource_version, .. }
                if remove == &["foregroundDeletion".to_owned()] && resource_version.as_deref() == Some("42")
        ));
        assert!(fix.not_planned.is_empty());
        // Any other finalizer there is still left to its owner.
        let mut other = standalone.clone();
        other.namespaces[0].remaining[0].finalizers =
            vec!["foregroundDeletion".into(), "example.com/block".into()];
        assert!(plan(&other, &opts(false)).actions.is_empty());
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
                process_gone: None,
                process_stopped: None,
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
        // The same when the namespace's deletes, not its discovery, failed.
        let mut content_failure = ns_failure.clone();
        content_failure.code = Code::NamespaceContentFailure;
        content_failure.id = format!("{}:namespace/team-a", Code::NamespaceContentFailure);
        r.findings = vec![
            session.clone(),
            unavailable.clone(),
            content_failure.clone(),
        ];
        let fix = plan(&r, &opts(false));
        assert_eq!(fix.actions.len(), 1, "{:?}", fix.actions);
        assert_eq!(fixes_by_finding(&fix)[&content_failure.id], vec![1]);
    }
}
