//! Why each namespace in scope is stuck: the attribution of every blocker —
//! discovery failures to the APIService(s) behind them, remaining objects to
//! their finalizers and the finalizers to their owners, webhooks named in the
//! conditions — as findings. [`conclude`] is pure (no I/O) and unit-tested;
//! each numbered rule of a Terminating namespace is one function
//! (`discovery_failure`, `group_version_parsing_failure`, `content_remaining`,
//! `namespace_finalizers`, `attribute_webhooks`, `no_blocker_found`), and
//! `stuck_objects` covers namespaces that are not Terminating. What is read
//! from the cluster comes from [`super::discovery`] and [`super::content`].

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::jiff::Timestamp;

use super::content::{Content, is_terminating};
use super::discovery::Discovered;
use super::findings::{
    ApiServiceReport, Code, Condition, Evidence, Finding, NamespaceReport, ObjectRef,
    RemainingObject, Remedy, SessionState, Severity, WebhookReport,
};
use super::render::condition_text;
use super::sessions::{self, Session};
use crate::output::ago;

/// Who is expected to remove a finalizer, when that is knowable.
pub fn finalizer_owner(
    finalizer: &str,
    crds: &BTreeMap<String, Vec<String>>,
    groups: &BTreeMap<String, BTreeSet<String>>,
    api_services: &[ApiServiceReport],
) -> String {
    match finalizer {
        "kubernetes" => return "the namespace controller (kube-controller-manager)".into(),
        "foregroundDeletion" | "orphan" => {
            return "the garbage collector (kube-controller-manager)".into();
        }
        "kubernetes.io/pvc-protection" | "kubernetes.io/pv-protection" => {
            return "kube-controller-manager (volume protection controller)".into();
        }
        "customresourcecleanup.apiextensions.k8s.io" => {
            return "kube-apiserver (CustomResourceDefinition cleanup)".into();
        }
        "batch.kubernetes.io/job-tracking" => {
            return "the job controller (kube-controller-manager)".into();
        }
        f if f.starts_with("service.kubernetes.io/") => {
            return "the cloud-controller-manager's service controller".into();
        }
        // Flux's own, on every object of its toolkit (not domain-qualified).
        "finalizers.fluxcd.io" => {
            return "Flux: the controller of the object's kind (helm-controller for HelmReleases, \
                    kustomize-controller for Kustomizations, source-controller for sources)"
                .into();
        }
        _ => {}
    }
    let Some((domain, _)) = finalizer.split_once('/') else {
        return format!(
            "unknown: {finalizer:?} is not domain-qualified, so nothing names its owner"
        );
    };
    // How well a group matches the finalizer's domain: the same name names
    // the owner; a group the domain sits inside (`finalizer.acme.cert-manager.io`
    // and `acme.cert-manager.io`) probably does, the most specific one; groups
    // inside the domain (`example.com` and `doctor-test.example.com`) only
    // suggest it, and only when there is one.
    let closeness = |group: &str| -> Option<u8> {
        if group.is_empty() {
            None
        } else if group == domain {
            Some(0)
        } else if domain.ends_with(&format!(".{group}")) {
            Some(1)
        } else if group.ends_with(&format!(".{domain}")) {
            Some(2)
        } else {
            None
        }
    };
    // Candidates in order of preference for one group: its CRDs, its
    // extension API server, the API group.
    let mut candidates: Vec<(u8, &str, String)> = Vec::new();
    for (group, names) in crds {
        if let Some(score) = closeness(group) {
            candidates.push((
                score,
                group,
                format!(
                    "the controller of CRD group {group} ({}); it removes the finalizer once its cleanup is done",
                    names.join(", ")
                ),
            ));
        }
    }
    for a in api_services.iter().filter(|a| !a.local) {
        if let Some(score) = closeness(&a.group) {
            candidates.push((
                score,
                &a.group,
                format!(
                    "the extension API server behind APIService {} (group {})",
                    a.name, a.group
                ),
            ));
        }
    }
    for (group, kinds) in groups {
        if let Some(score) = closeness(group) {
            let kinds: Vec<&str> = kinds.iter().map(String::as_str).take(5).collect();
            candidates.push((
                score,
                group,
                format!("the controller of API group {group} ({})", kinds.join(", ")),
            ));
        }
    }
    let Some(best) = candidates.iter().map(|c| c.0).min() else {
        return format!(
            "unknown: no CRD, APIService or API group in the cluster matches {domain}; whatever added it may be gone"
        );
    };
    let of_best = candidates.iter().filter(|c| c.0 == best);
    match best {
        0 => of_best.map(|c| c.2.clone()).next().unwrap_or_default(),
        // The most specific group the domain sits inside.
        1 => of_best
            .max_by_key(|c| c.1.len())
            .map(|c| format!("probably {}", c.2))
            .unwrap_or_default(),
        _ => {
            let under: BTreeSet<&str> = of_best.clone().map(|c| c.1).collect();
            match under.len() {
                1 => of_best
                    .map(|c| format!("possibly {}", c.2))
                    .next()
                    .unwrap_or_default(),
                _ => format!(
                    "unknown: no API group is named {domain}; the groups under it are {}: one of their \
                     controllers, possibly",
                    under.into_iter().collect::<Vec<_>>().join(", ")
                ),
            }
        }
    }
}

/// Everything the namespace conclusions need.
pub struct Inputs<'a> {
    /// The namespaces in scope.
    pub namespaces: &'a [Namespace],
    /// Their content.
    pub content: &'a Content,
    /// APIService reports.
    pub api_services: &'a [ApiServiceReport],
    /// APIService/session findings (for attribution ids).
    pub api_findings: &'a [Finding],
    /// Discovery.
    pub discovered: &'a Discovered,
    /// CRDs by group.
    pub crds: &'a BTreeMap<String, Vec<String>>,
    /// Webhooks (for attribution of content failures).
    pub webhooks: &'a [WebhookReport],
    /// `kubectl cozy serve` sessions (who reaps a live one's APIServices).
    pub sessions: &'a [Session],
    /// Now.
    pub now: Timestamp,
    /// After how long deletion counts as stuck rather than in progress.
    pub stuck_after_seconds: i64,
}

/// Namespace reports and findings; also the namespaces each APIService
/// finding blocks (finding id → namespaces).
pub fn conclude(
    inputs: &Inputs<'_>,
) -> (
    Vec<NamespaceReport>,
    Vec<Finding>,
    BTreeMap<String, Vec<String>>,
) {
    let mut reports = Vec::new();
    let mut findings = Vec::new();
    let mut blocks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let failing = failing_api_services(inputs);
    for ns in inputs.namespaces {
        let (report, mut found) = conclude_one(inputs, ns, &failing, &mut blocks);
        reports.push(report);
        findings.append(&mut found);
    }
    (reports, findings, blocks)
}

/// Aggregated APIServices whose group-version fails discovery now, with the
/// id of the finding that explains each.
fn failing_api_services(inputs: &Inputs<'_>) -> Vec<(ApiServiceReport, String)> {
    let mut out = Vec::new();
    for a in inputs.api_services {
        let gv = format!("{}/{}", a.group, a.version);
        let available = a.available.as_ref().is_some_and(|c| c.status == "True");
        let probe_failed = a.probe.as_ref().is_some_and(|p| !p.ok);
        if available && !probe_failed && !inputs.discovered.failed.contains_key(&gv) {
            continue;
        }
        // The session finding explains the APIService when the session expired.
        let id = inputs
            .api_findings
            .iter()
            .find(|f| {
                f.subject == ObjectRef::api_service(&a.name)
                    && matches!(
                        f.code,
                        Code::ApiServiceUnavailable | Code::ApiServiceProbeFailed
                    )
            })
            .map(|f| f.id.clone())
            .unwrap_or_else(|| format!("{}:apiservice/{}", Code::ApiServiceUnavailable, a.name));
        out.push((a.clone(), id));
    }
    out
}

fn namespace_ref(name: &str) -> ObjectRef {
    ObjectRef::cluster("v1", "Namespace", "namespaces", name)
}

/// One namespace under examination: what every rule reads.
struct Examined<'a> {
    inputs: &'a Inputs<'a>,
    ns: &'a Namespace,
    name: String,
    subject: ObjectRef,
    terminating: bool,
    conditions: Vec<Condition>,
    remaining: Vec<RemainingObject>,
    terminating_seconds: Option<i64>,
    /// Deletion older than `--stuck-after`.
    stuck: bool,
    /// Aggregated APIServices failing discovery, with their finding ids.
    failing: &'a [(ApiServiceReport, String)],
}

impl<'a> Examined<'a> {
    fn new(
        inputs: &'a Inputs<'a>,
        ns: &'a Namespace,
        failing: &'a [(ApiServiceReport, String)],
    ) -> Self {
        let name = ns.metadata.name.clone().unwrap_or_default();
        let conditions: Vec<Condition> = ns
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|c| Condition {
                type_: c.type_,
                status: c.status,
                reason: c.reason,
                message: c.message,
                last_transition_time: c.last_transition_time.map(|t| t.0.to_string()),
            })
            .collect();
        let terminating_seconds = ns
            .metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| inputs.now.as_second() - t.0.as_second());
        Examined {
            inputs,
            ns,
            subject: namespace_ref(&name),
            remaining: inputs
                .content
                .objects
                .get(&name)
                .cloned()
                .unwrap_or_default(),
            name,
            terminating: is_terminating(ns),
            conditions,
            stuck: terminating_seconds.unwrap_or(0) >= inputs.stuck_after_seconds,
            terminating_seconds,
            failing,
        }
    }

    /// The report row, before `blocked` is known.
    fn report(&self) -> NamespaceReport {
        let ns = self.ns;
        NamespaceReport {
            name: self.name.clone(),
            phase: ns
                .status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_else(|| "Active".into()),
            deletion_timestamp: self.deletion_timestamp(),
            terminating_seconds: self.terminating_seconds,
            resource_version: ns.metadata.resource_version.clone(),
            uid: ns.metadata.uid.clone(),
            spec_finalizers: self.spec_finalizers(),
            finalizers: ns.metadata.finalizers.clone().unwrap_or_default(),
            conditions: self.conditions.clone(),
            remaining: self.remaining.clone(),
            blocked: false,
            finalize_rejected_by: Vec::new(),
        }
    }

    fn deletion_timestamp(&self) -> Option<String> {
        self.ns
            .metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0.to_string())
    }

    fn spec_finalizers(&self) -> Vec<String> {
        self.ns
            .spec
            .as_ref()
            .and_then(|s| s.finalizers.clone())
            .unwrap_or_default()
    }

    /// A condition of this type with status True.
    fn cond_true(&self, type_: &str) -> Option<&Condition> {
        self.conditions
            .iter()
            .find(|c| c.type_ == type_)
            .filter(|c| c.status == "True")
    }

    fn cond_evidence(&self, c: &Condition) -> Evidence {
        Evidence {
            source: format!("Namespace {} status.conditions[{}]", self.name, c.type_),
            observed: condition_text(c, self.inputs.now),
        }
    }

    /// Whether some aggregated APIService fails discovery (so the garbage
    /// collector cannot sync either).
    fn discovery_blocked(&self) -> bool {
        self.failing.iter().any(|(a, _)| !a.local)
    }

    /// Whether every namespaced type was listed: none failed, and none was
    /// left out because its group's discovery fails (its types are not
    /// known, so not counted as failed).
    fn every_type_listed(&self) -> bool {
        self.inputs.content.types_failed == 0
            && self.inputs.discovered.failed.is_empty()
            && !self.discovery_blocked()
    }
}

fn conclude_one(
    inputs: &Inputs<'_>,
    ns: &Namespace,
    failing: &[(ApiServiceReport, String)],
    blocks: &mut BTreeMap<String, Vec<String>>,
) -> (NamespaceReport, Vec<Finding>) {
    let e = Examined::new(inputs, ns, failing);
    let mut report = e.report();
    let mut found = Vec::new();
    let mut held_by_webhook = false;
    if e.terminating {
        found.extend(discovery_failure(&e, blocks));
        found.extend(group_version_parsing_failure(&e));
        found.extend(content_failure(&e, blocks));
        found.extend(content_remaining(&e));
        found.extend(namespace_finalizers(&e));
        found.extend(finalized_not_deleted(&e));
        let unlisted = finalizers_remaining(&e, &mut found);
        found.extend(unlisted);
        held_by_webhook = attribute_webhooks(&e, &mut found, blocks);
        report.finalize_rejected_by = finalize_rejected_by(&e);
        no_blocker_found(&e, &mut found);
    } else {
        // Not Terminating (-A or -n): objects stuck in deletion.
        found.extend(stuck_objects(&e));
        report
            .remaining
            .retain(|o| o.deletion_timestamp.is_some() && !o.finalizers.is_empty());
    }
    // Blocked by a finding of its own, or by a failing webhook (whose
    // finding's `blocks` names it, from the same `blocks`).
    report.blocked =
        e.terminating && (held_by_webhook || found.iter().any(|f| f.severity != Severity::Info));
    (report, found)
}

/// Rule 1: API discovery fails, attributed to the APIService(s) the
/// condition names (or, when it names none, every failing aggregated one).
fn discovery_failure(
    e: &Examined<'_>,
    blocks: &mut BTreeMap<String, Vec<String>>,
) -> Option<Finding> {
    let name = &e.name;
    let now = e.inputs.now;
    let discovery_cond = e.cond_true("NamespaceDeletionDiscoveryFailure");
    let named = discovery_cond
        .and_then(|c| c.message.as_deref())
        .map(group_versions_in)
        .unwrap_or_default();
    let mut attributed: Vec<&(ApiServiceReport, String)> = e
        .failing
        .iter()
        .filter(|(a, _)| named.contains(&format!("{}/{}", a.group, a.version)))
        .collect();
    if attributed.is_empty() {
        attributed = e.failing.iter().filter(|(a, _)| !a.local).collect();
    }
    if discovery_cond.is_none() && attributed.is_empty() {
        return None;
    }
    let gvs: Vec<String> = if attributed.is_empty() {
        named.iter().cloned().collect()
    } else {
        attributed
            .iter()
            .map(|(a, _)| format!("{}/{}", a.group, a.version))
            .collect()
    };
    // Discovery succeeded on the controller's last pass (aggregated
    // discovery keeps an unavailable APIService's resources listed) and its
    // deletes failed: the unavailable APIService fails the content, not
    // the discovery.
    let content = (discovery_cond.is_none() && !attributed.is_empty())
        .then(|| e.cond_true("NamespaceDeletionContentFailure"))
        .flatten();
    let what = match (content.is_some(), gvs.is_empty()) {
        (true, _) => format!(
            "namespace {name} cannot finish deleting: its objects of {} cannot be deleted while their APIService \
             is unavailable",
            gvs.join(", ")
        ),
        (false, true) => format!("namespace {name} cannot finish deleting: API discovery fails"),
        (false, false) => format!(
            "namespace {name} cannot finish deleting: API discovery fails for {}",
            gvs.join(", ")
        ),
    };
    let (code, why) = if content.is_some() {
        (
            Code::NamespaceContentFailure,
            "the namespace controller must delete every namespaced object before it removes the `kubernetes` \
             finalizer; while an APIService is unavailable its deletes fail, and this holds for EVERY Terminating \
             namespace in the cluster, not only this one",
        )
    } else {
        (
            Code::NamespaceDiscoveryFailure,
            "the namespace controller must discover every namespaced resource type before it removes the `kubernetes` \
             finalizer; while any group's discovery fails it keeps retrying, and this holds for EVERY Terminating \
             namespace in the cluster, not only this one",
        )
    };
    let mut f = Finding::new(
        code,
        if attributed.is_empty() {
            Severity::Warning
        } else {
            Severity::Error
        },
        e.subject.clone(),
        what,
        why,
    );
    let source = format!("Namespace {name} status.conditions[NamespaceDeletionDiscoveryFailure]");
    match (
        discovery_cond.or(content),
        e.conditions
            .iter()
            .find(|c| c.type_ == "NamespaceDeletionDiscoveryFailure"),
    ) {
        (Some(c), _) => f.evidence.push(e.cond_evidence(c)),
        // The controller's last attempt discovered everything: the failure
        // is newer than it, or its next attempt will meet it.
        (None, Some(c)) => f.evidence.push(Evidence {
            source,
            observed: format!(
                "{}; the namespace controller's next attempt will fail on the APIService(s) below",
                condition_text(c, now)
            ),
        }),
        (None, None) => f.evidence.push(Evidence {
            source,
            observed: "not set yet; the namespace controller's next attempt will fail on the APIService(s) below".into(),
        }),
    }
    for (a, id) in &attributed {
        let available = a
            .available
            .as_ref()
            .map(|c| condition_text(c, now))
            .unwrap_or_else(|| "no Available condition".into());
        f.evidence.push(Evidence {
            source: format!("APIService {} status.conditions[Available]", a.name),
            observed: available,
        });
        if let Some(reason) = e
            .inputs
            .discovered
            .failed
            .get(&format!("{}/{}", a.group, a.version))
        {
            f.evidence.push(Evidence {
                source: format!("discovery of {}/{}", a.group, a.version),
                observed: reason.clone(),
            });
        }
        f.caused_by.push(id.clone());
        blocks.entry(id.clone()).or_default().push(name.clone());
    }
    if attributed.is_empty() {
        let failing: Vec<String> = e
            .inputs
            .discovered
            .failed
            .iter()
            .map(|(gv, why)| format!("{gv} ({why})"))
            .collect();
        if e.inputs.api_services.is_empty() || !failing.is_empty() {
            // Not a controller that merely has yet to retry.
            f.severity = Severity::Error;
        }
        f.evidence.push(match (e.inputs.api_services.is_empty(), failing.is_empty()) {
            // Every cluster has APIServices: none means none could be read.
            (true, true) => Evidence {
                source: "APIServices now".into(),
                observed: "unknown: they could not be listed (see NOT CHECKED), so which one fails cannot be told"
                    .into(),
            },
            (_, false) => Evidence {
                source: "kube-apiserver's discovery now".into(),
                observed: format!("failing: {}", failing.join(", ")),
            },
            (false, true) => Evidence {
                source: "APIServices now".into(),
                observed: "none is unavailable now; the namespace controller's next retry should get past discovery"
                    .into(),
            },
        });
    }
    f.blocks = vec![name.clone()];
    f.remedy = discovery_remedy(e, &attributed);
    Some(f)
}

/// How a namespace's discovery failure goes away: through the fix of each
/// APIService behind it, so that it says what `--fix` does for them —
/// planned only when every cause's fix is (an APIService nobody owns is
/// deleted, an expired session's is reaped); an APIService of a live
/// session is waited for, never deleted.
fn discovery_remedy(
    e: &Examined<'_>,
    attributed: &[&(ApiServiceReport, String)],
) -> Option<Remedy> {
    let mut deletes: Vec<&str> = Vec::new();
    let mut parts: Vec<String> = Vec::new();
    let mut commands: Vec<String> = Vec::new();
    let mut automatic = true;
    let mut live_sessions = false;
    for (a, id) in attributed.iter().filter(|(a, _)| !a.local) {
        let cause = e.inputs.api_findings.iter().find(|f| &f.id == id);
        let remedy = cause.and_then(|c| c.remedy.as_ref());
        let live = a
            .session
            .as_ref()
            .filter(|s| s.state == SessionState::Alive);
        let (part, command) = match (live, remedy) {
            (Some(check), _) => {
                let agent = e
                    .inputs
                    .sessions
                    .iter()
                    .find(|s| s.check.id == check.id)
                    .is_some_and(Session::has_agent);
                automatic = false;
                live_sessions = true;
                (
                    sessions::live_session_wait(&a.name, check, agent, e.inputs.now),
                    sessions::lease_command(check),
                )
            }
            (None, Some(r))
                if r.automatic
                    && a.session.is_none()
                    && cause.is_some_and(|c| c.code == Code::ApiServiceUnavailable) =>
            {
                deletes.push(&a.name);
                continue;
            }
            (None, Some(r)) => {
                automatic &= r.automatic;
                (
                    format!("APIService {}: {}", a.name, r.description),
                    r.command.clone(),
                )
            }
            (None, None) => {
                automatic = false;
                (
                    format!(
                        "APIService {} fails discovery although it looked healthy when checked; see its status",
                        a.name
                    ),
                    format!("kubectl get apiservice {} -o yaml", a.name),
                )
            }
        };
        parts.push(part);
        if !commands.contains(&command) {
            commands.push(command);
        }
    }
    if !deletes.is_empty() {
        parts.insert(
            0,
            "make the APIService(s) available again, or delete them if their API is gone for good"
                .to_owned(),
        );
        commands.insert(
            0,
            format!("kubectl delete apiservice {}", deletes.join(" ")),
        );
    }
    if parts.is_empty() {
        return None;
    }
    Some(Remedy {
        description: format!(
            "{}; the namespace controller then finishes on its own{}",
            parts.join("; "),
            if live_sessions {
                format!(". {}", sessions::NEVER_BY_HAND)
            } else {
                String::new()
            }
        ),
        command: commands.join(" && "),
        automatic,
    })
}

/// Rule 2: a group-version in discovery does not parse (the condition,
/// verbatim).
fn group_version_parsing_failure(e: &Examined<'_>) -> Option<Finding> {
    let c = e.cond_true("NamespaceDeletionGroupVersionParsingFailure")?;
    let mut f = Finding::new(
        Code::NamespaceGroupVersionParsingFailure,
        Severity::Error,
        e.subject.clone(),
        format!(
            "namespace {} cannot finish deleting: a group-version in discovery does not parse",
            e.name
        ),
        "the namespace controller cannot build the list of resource types to delete",
    );
    f.evidence.push(e.cond_evidence(c));
    f.blocks = vec![e.name.clone()];
    Some(f)
}

/// Rule 3: the content left: one finding per object held by finalizers, one
/// for all objects without.
fn content_remaining(e: &Examined<'_>) -> Vec<Finding> {
    let name = &e.name;
    let mut found = Vec::new();
    let mut plain = Vec::new();
    for object in &e.remaining {
        if object.finalizers.is_empty() {
            plain.push(object);
            continue;
        }
        let mut f = finalizer_finding(
            e.inputs,
            object,
            name,
            e.failing,
            e.discovery_blocked(),
            true,
        );
        behind_failing_webhooks(e, object, &mut f);
        found.push(f);
    }
    if plain.is_empty() {
        return found;
    }
    let severity = if e.stuck {
        Severity::Warning
    } else {
        Severity::Info
    };
    let listed: Vec<String> = plain
        .iter()
        .take(20)
        .map(|o| o.object.kubectl_name())
        .collect();
    let mut f = Finding::new(
        Code::ContentRemaining,
        severity,
        e.subject.clone(),
        format!("{} object(s) without finalizers remain in namespace {name}", plain.len()),
        if e.spec_finalizers().is_empty() {
            "the namespace carries no `kubernetes` finalizer any more, so the namespace controller does not delete \
             them: delete them by hand"
        } else {
            "the namespace controller deletes these itself; if they stay, its deletes fail (see \
             NamespaceDeletionContentFailure) or it is not running"
        },
    )
    .evidence(
        format!("list of namespaced resource types in {name}"),
        if plain.len() > listed.len() {
            format!("{} and {} more", listed.join(", "), plain.len() - listed.len())
        } else {
            listed.join(", ")
        },
    );
    if let Some(c) = e.cond_true("NamespaceDeletionContentFailure") {
        f.evidence.push(e.cond_evidence(c));
    }
    f.blocks = vec![name.clone()];
    let description = if e.spec_finalizers().is_empty() {
        "delete them by hand (the namespace controller no longer acts on this namespace); once it is empty, \
         doctor --fix deletes the namespace again"
    } else if e.conditions.is_empty() {
        "status.conditions is empty: the namespace controller has not processed this namespace — is \
         kube-controller-manager running? Deleting them by hand works meanwhile"
    } else {
        "find out why the namespace controller's deletes fail (condition above, kube-controller-manager log); \
         deleting by hand shows the error"
    };
    f.remedy = Some(Remedy {
        description: description.into(),
        command: format!("kubectl delete -n {name} {}", listed.join(" ")),
        automatic: false,
    });
    found.push(f);
    found
}

/// Rule 4: finalizers on the namespace itself: foreign `spec.finalizers`
/// (only `/finalize` clears them) and `metadata.finalizers`.
fn namespace_finalizers(e: &Examined<'_>) -> Vec<Finding> {
    let name = &e.name;
    let inputs = e.inputs;
    let mut found = Vec::new();
    let spec_finalizers = e.spec_finalizers();
    let custom: Vec<&String> = spec_finalizers
        .iter()
        .filter(|f| f.as_str() != "kubernetes")
        .collect();
    if !custom.is_empty() {
        let owners: Vec<String> = custom
            .iter()
            .map(|f| {
                finalizer_owner(
                    f,
                    inputs.crds,
                    &inputs.discovered.groups,
                    inputs.api_services,
                )
            })
            .collect();
        let mut f = Finding::new(
            Code::NamespaceFinalizerRemaining,
            Severity::Error,
            e.subject.clone(),
            format!(
                "namespace {name} carries spec.finalizers {} that the namespace controller does not remove",
                custom.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ),
            "only whatever added these finalizers removes them; the namespace stays Terminating until it does",
        )
        .evidence(
            format!("Namespace {name} spec.finalizers"),
            format!("{spec_finalizers:?}"),
        );
        f.owner = Some(owners.join("; "));
        f.blocks = vec![name.clone()];
        f.remedy = Some(finalize_remedy(name));
        // Apart from the finding about its metadata.finalizers (below),
        // which --fix can remove.
        f.id.push_str(":spec.finalizers");
        found.push(f);
    }
    let finalizers = e.ns.metadata.finalizers.clone().unwrap_or_default();
    if !finalizers.is_empty() {
        let ns_object = RemainingObject {
            object: e.subject.clone(),
            finalizers,
            deletion_timestamp: e.deletion_timestamp(),
            resource_version: e.ns.metadata.resource_version.clone(),
            labels: e.ns.metadata.labels.clone().unwrap_or_default(),
        };
        let mut f = finalizer_finding(
            inputs,
            &ns_object,
            name,
            e.failing,
            e.discovery_blocked(),
            true,
        );
        behind_failing_webhooks(e, &ns_object, &mut f);
        f.code = Code::NamespaceFinalizerRemaining;
        f.id = format!(
            "{}:{}",
            Code::NamespaceFinalizerRemaining,
            super::findings::subject_key(&e.subject)
        );
        found.push(f);
    }
    found
}

/// Rule 4b: Terminating with no finalizer left at all. The namespace
/// controller acts only on namespaces that carry its `kubernetes` finalizer,
/// and kube-apiserver marks a namespace Terminating on the first delete
/// whatever its finalizers, removing it on a later delete once they are
/// empty: a namespace whose `spec.finalizers` were cleared (through
/// `/finalize`) before it was deleted stays until it is deleted again.
/// Planned automatically only when nothing is left in it: a delete with
/// objects inside leaves them in etcd, unreachable.
fn finalized_not_deleted(e: &Examined<'_>) -> Option<Finding> {
    let metadata_finalizers = e.ns.metadata.finalizers.clone().unwrap_or_default();
    if !e.spec_finalizers().is_empty() || !metadata_finalizers.is_empty() {
        return None;
    }
    let name = &e.name;
    let since = crate::output::age(e.terminating_seconds.unwrap_or(0));
    let content = e.inputs.content;
    let empty = e.remaining.is_empty() && content.types_failed == 0;
    let mut f = Finding::new(
        Code::NamespaceFinalizedNotDeleted,
        if e.stuck {
            Severity::Error
        } else {
            Severity::Warning
        },
        e.subject.clone(),
        format!(
            "namespace {name} has been Terminating for {since} with no finalizer left; only deleting it again removes it"
        ),
        "its spec.finalizers were cleared before it was deleted: kube-apiserver marks a namespace Terminating on the \
         first delete and removes it on a later one once no finalizer is left, and the namespace controller, which \
         would, acts only on namespaces that still carry its `kubernetes` finalizer",
    )
    .evidence(
        format!("Namespace {name} spec.finalizers, metadata.finalizers"),
        "[], []".to_owned(),
    );
    f.evidence.push(Evidence {
        source: format!("list of namespaced resource types in {name}"),
        observed: if content.types_failed > 0 {
            format!(
                "{} object(s) found in {} resource type(s); {} could not be listed",
                e.remaining.len(),
                content.types_listed,
                content.types_failed
            )
        } else {
            format!(
                "{} object(s) found in {} resource type(s)",
                e.remaining.len(),
                content.types_listed
            )
        },
    });
    f.blocks = vec![name.clone()];
    f.remedy = Some(Remedy {
        description: if empty {
            "delete it again (nothing is left in it)".into()
        } else {
            "delete what is left in it, then the namespace again: deleted now, those objects stay in etcd, \
             unreachable, and come back if a namespace of that name is created again"
                .into()
        },
        command: format!("kubectl delete namespace {name}"),
        automatic: empty,
    });
    Some(f)
}

/// The finalizers a `NamespaceFinalizersRemaining` message names, with the
/// number of objects holding each: `example.com/block in 2 resource
/// instances, …`.
pub fn finalizers_in(message: &str) -> BTreeMap<String, usize> {
    let re = regex::Regex::new(r"([^\s,:]+) in ([0-9]+) resource instances").expect("static regex");
    re.captures_iter(message)
        .filter_map(|c| Some((c[1].to_owned(), c[2].parse().ok()?)))
        .collect()
}

/// Rule 3b: the namespace controller's `NamespaceFinalizersRemaining`
/// (True: objects with finalizers remain). Each object found holding a
/// finalizer it names has its finding; the condition becomes evidence of
/// those findings, and the objects it counts that doctor did not find
/// (their types could not be listed) are a finding of their own, naming
/// each finalizer, its owner and how to find them.
fn finalizers_remaining(e: &Examined<'_>, found: &mut [Finding]) -> Option<Finding> {
    let c = e.cond_true("NamespaceFinalizersRemaining")?;
    let named = finalizers_in(c.message.as_deref().unwrap_or_default());
    let evidence = e.cond_evidence(c);
    for f in found.iter_mut().filter(|f| {
        f.code == Code::FinalizerBlocking && f.subject.namespace.as_deref() == Some(e.name.as_str())
    }) {
        f.evidence.push(evidence.clone());
    }
    let held = |finalizer: &str| {
        e.remaining
            .iter()
            .filter(|o| o.finalizers.iter().any(|f| f == finalizer))
            .count()
    };
    let missing: Vec<(String, usize, usize)> = named
        .into_iter()
        .map(|(finalizer, reported)| {
            let seen = held(&finalizer);
            (finalizer, reported, seen)
        })
        .filter(|(_, reported, seen)| seen < reported)
        .collect();
    // Every type was listed: the condition is from a pass before those
    // objects went (said by `no_blocker_found` when nothing else is left).
    if missing.is_empty() || e.every_type_listed() {
        return None;
    }
    let name = &e.name;
    let inputs = e.inputs;
    let described: Vec<String> = missing
        .iter()
        .map(|(finalizer, reported, seen)| {
            format!("{finalizer} on {reported} object(s), {seen} of them found")
        })
        .collect();
    let mut f = Finding::new(
        Code::FinalizersRemainingUnlisted,
        if e.stuck {
            Severity::Error
        } else {
            Severity::Warning
        },
        e.subject.clone(),
        format!(
            "the namespace controller reports objects with finalizers in namespace {name} that doctor did not find: {}",
            described.join("; ")
        ),
        "an object is only removed once every finalizer on it is removed by its owner; these are in types doctor \
         could not list (see NOT CHECKED), so it cannot name them or plan their removal",
    );
    f.evidence.push(evidence);
    f.evidence.push(Evidence {
        source: format!("list of namespaced resource types in {name}"),
        observed: format!(
            "{} object(s) found with finalizers; {} resource type(s) could not be listed",
            e.remaining
                .iter()
                .filter(|o| !o.finalizers.is_empty())
                .count(),
            inputs.content.types_failed
        ),
    });
    f.owner = Some(
        missing
            .iter()
            .map(|(finalizer, _, _)| {
                format!(
                    "{finalizer}: {}",
                    finalizer_owner(
                        finalizer,
                        inputs.crds,
                        &inputs.discovered.groups,
                        inputs.api_services
                    )
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    );
    f.blocks = vec![name.clone()];
    f.remedy = Some(Remedy {
        description: "find the objects (the command lists every type kubectl can list there; those that fail are \
                      the ones doctor could not list) and have their owner remove the finalizers, or remove them \
                      by hand with kubectl patch once the owner is gone"
            .into(),
        command: format!(
            "kubectl api-resources --verbs=list --namespaced -o name | xargs -n 1 kubectl get --show-kind \
             --ignore-not-found -n {name} -o custom-columns=KIND:.kind,NAME:.metadata.name,FINALIZERS:.metadata.finalizers"
        ),
        automatic: false,
    });
    Some(f)
}

/// A finding whose fix removes `object`'s finalizers, when failing webhooks
/// intercept that update (a merge patch is an UPDATE to admission): they
/// reject it, so the removal waits for them — not planned, caused by their
/// findings, and its fix says to mend them first. Failing webhooks that
/// intercept the DELETE of an object not deleted yet reject the namespace
/// controller's delete: it never goes while they fail (an error, not a
/// wait), and they are its causes too.
fn behind_failing_webhooks(e: &Examined<'_>, object: &RemainingObject, f: &mut Finding) {
    let namespace_labels = e.ns.metadata.labels.clone().unwrap_or_default();
    let rejecting = |operation| -> Vec<&WebhookReport> {
        e.inputs
            .webhooks
            .iter()
            .filter(|w| super::webhooks::failing(w))
            .filter(|w| {
                super::webhooks::intercepts(
                    w,
                    &super::webhooks::Request {
                        operation,
                        object: &object.object,
                        subresource: None,
                        namespace_labels: &namespace_labels,
                        object_labels: &object.labels,
                    },
                )
            })
            .collect()
    };
    // Each webhook a cause, and what it rejects the evidence.
    let cite = |f: &mut Finding, w: &WebhookReport, operation: &str, rejects: &str| {
        let id = super::webhooks::finding_id(w);
        if !f.caused_by.contains(&id) {
            f.caused_by.push(id);
        }
        f.evidence.push(Evidence {
            source: format!("{} {} webhook {}", w.kind, w.configuration, w.webhook),
            observed: format!(
                "{} {} with failurePolicy Fail, and its Service {}/{} does not answer: it rejects {rejects}",
                intercepts(operation),
                object.object.kubectl_name(),
                w.service.namespace,
                w.service.name
            ),
        });
    };
    let mut delete_rejected = false;
    if object.deletion_timestamp.is_none() {
        let deletes = rejecting("DELETE");
        if !deletes.is_empty() {
            delete_rejected = true;
            for w in &deletes {
                cite(f, w, "DELETE", "the namespace controller's delete");
            }
            let names: Vec<&str> = deletes.iter().map(|w| w.webhook.as_str()).collect();
            f.remedy = Some(Remedy {
                description: format!(
                    "first make webhook {} answer again, or delete it (see its finding): it rejects the namespace \
                     controller's delete of this object until then (deleting it by hand shows the rejection)",
                    names.join(", ")
                ),
                command: format!("kubectl delete {}", object.object.kubectl_args()),
                automatic: false,
            });
            f.severity = Severity::Error;
            f.what = format!(
                "{} {} cannot be deleted: failing webhook {} rejects its DELETE (namespace {} is Terminating)",
                object.object.kind.to_lowercase(),
                object.object.name,
                deletes
                    .iter()
                    .map(|w| w.webhook.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                e.name
            );
        }
    }
    let rejecting = rejecting("UPDATE");
    if rejecting.is_empty() {
        return;
    }
    let mut names = Vec::new();
    for w in rejecting {
        cite(f, w, "UPDATE", "the removal of the finalizers");
        names.push(w.webhook.clone());
    }
    // A rejected DELETE's fix (the webhook first) already covers this.
    if let Some(r) = f.remedy.as_mut().filter(|_| !delete_rejected) {
        r.automatic = false;
        r.description = format!(
            "first make webhook {} answer again, or delete it (see its finding): removing the finalizers is an \
             update it rejects until then; then: {}",
            names.join(", "),
            r.description
        );
    }
}

/// How a finding's evidence begins where a failing webhook rejects its
/// object's `operation` ([`behind_failing_webhooks`]).
fn intercepts(operation: &str) -> String {
    format!("intercepts {operation}")
}

/// Whether a failing webhook rejects `operation` (`DELETE`, `UPDATE`) of
/// the object of finding `f`, as its evidence says.
pub fn webhook_rejects(f: &Finding, operation: &str) -> bool {
    let begins = format!("{} ", intercepts(operation));
    f.evidence.iter().any(|e| e.observed.starts_with(&begins))
}

/// Rule 5: failing webhooks that hold the namespace
/// ([`super::webhooks::holds`]: quoted in its conditions, or rejecting a
/// delete or finalizer removal it needs) are a cause of every finding so
/// far about the namespace itself, and block it. Returns whether one does.
fn attribute_webhooks(
    e: &Examined<'_>,
    found: &mut [Finding],
    blocks: &mut BTreeMap<String, Vec<String>>,
) -> bool {
    let labels = e.ns.metadata.labels.clone().unwrap_or_default();
    let namespace_finalizers =
        e.ns.metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| !f.is_empty());
    let mut held = false;
    let object_of_the_namespace =
        |f: &Finding| f.subject.namespace.as_deref() == Some(e.name.as_str());
    for w in e.inputs.webhooks {
        let rejected = super::webhooks::holds(
            w,
            &e.name,
            &labels,
            namespace_finalizers,
            &e.remaining,
            &e.conditions,
        );
        if rejected.is_empty() {
            continue;
        }
        held = true;
        let id = super::webhooks::finding_id(w);
        // An object's finding has the webhooks that reject its own delete
        // or finalizer removal as causes ([`behind_failing_webhooks`]),
        // not every one that holds the namespace.
        for f in found.iter_mut().filter(|f| !object_of_the_namespace(f)) {
            if !f.caused_by.contains(&id) {
                f.caused_by.push(id.clone());
            }
        }
        blocks.entry(id).or_default().push(e.name.clone());
    }
    held
}

/// The failing webhooks (their findings' ids) that intercept the
/// namespace's `finalize`: what `--finalize-namespaces` would send.
fn finalize_rejected_by(e: &Examined<'_>) -> Vec<String> {
    let labels = e.ns.metadata.labels.clone().unwrap_or_default();
    e.inputs
        .webhooks
        .iter()
        .filter(|w| {
            super::webhooks::failing(w) && super::webhooks::intercepts_finalize(w, &e.name, &labels)
        })
        .map(super::webhooks::finding_id)
        .collect()
}

/// Rule 1b: lists of an aggregated group's resources do not answer
/// (`APIServiceUnresponsive`): the namespace controller cannot list, so
/// cannot delete, what the namespace holds of that group.
fn content_failure(
    e: &Examined<'_>,
    blocks: &mut BTreeMap<String, Vec<String>>,
) -> Option<Finding> {
    let causes: Vec<&Finding> = e
        .inputs
        .api_findings
        .iter()
        .filter(|f| f.code == Code::ApiServiceUnresponsive)
        .collect();
    if causes.is_empty() {
        return None;
    }
    let name = &e.name;
    let names: Vec<&str> = causes.iter().map(|f| f.subject.name.as_str()).collect();
    let mut f = Finding::new(
        Code::NamespaceContentFailure,
        Severity::Error,
        e.subject.clone(),
        format!(
            "namespace {name} cannot finish deleting: lists of the resources APIService {} serves do not answer",
            names.join(", ")
        ),
        "the namespace controller must list (and delete) every namespaced type before the namespace goes; a type \
         whose lists time out stops it, in every Terminating namespace",
    );
    if let Some(c) = e.cond_true("NamespaceDeletionContentFailure") {
        f.evidence.push(e.cond_evidence(c));
    }
    for cause in &causes {
        f.caused_by.push(cause.id.clone());
        blocks
            .entry(cause.id.clone())
            .or_default()
            .push(name.clone());
    }
    f.blocks = vec![name.clone()];
    f.remedy = Some(Remedy {
        description: format!(
            "fix the server behind APIService {}, or delete the APIService if its API is no longer needed",
            names.join(", ")
        ),
        command: names
            .iter()
            .map(|n| format!("kubectl delete apiservice {n}"))
            .collect::<Vec<_>>()
            .join(" && "),
        automatic: false,
    });
    Some(f)
}

/// Rule 6: Terminating with no blocker found (info while recent); otherwise
/// keeps a content failure visible next to the blockers that were found.
fn no_blocker_found(e: &Examined<'_>, found: &mut Vec<Finding>) {
    let name = &e.name;
    if !found.is_empty() {
        if let Some(c) = e.cond_true("NamespaceDeletionContentFailure")
            && !found.iter().any(|f| {
                matches!(
                    f.code,
                    Code::ContentRemaining | Code::NamespaceContentFailure
                )
            })
            && let Some(f) = found.first_mut()
        {
            f.evidence.push(e.cond_evidence(c));
        }
        return;
    }
    let reported = e
        .cond_true("NamespaceFinalizersRemaining")
        .or_else(|| e.cond_true("NamespaceContentRemaining"));
    let content = e.inputs.content;
    let unlisted = content.types_failed;
    // The controller's conditions name content, but every type was listed
    // and none is left: they are from its last pass, before that content
    // went, and its next pass (it retries with back-off) deletes the
    // namespace.
    let stale = reported.is_some() && e.every_type_listed();
    // A stale condition is a note however old the deletion: the controller's
    // next pass settles it (its nudge is the fix, not /finalize).
    let severity = if !stale && (e.stuck || reported.is_some()) {
        Severity::Warning
    } else {
        Severity::Info
    };
    let since = crate::output::age(e.terminating_seconds.unwrap_or(0));
    let what = match reported {
        Some(_) if stale => format!(
            "namespace {name} has been Terminating for {since}; the namespace controller's conditions name content \
             that is gone now (every resource type was listed): they are from its last pass, before that content \
             went"
        ),
        Some(_) => format!(
            "namespace {name} has been Terminating for {since}; the namespace controller reports content left that \
             doctor could not find{}",
            if unlisted > 0 {
                format!(" ({unlisted} resource type(s) could not be listed: see NOT CHECKED)")
            } else {
                String::new()
            }
        ),
        None => {
            format!("namespace {name} has been Terminating for {since} and no blocker was found")
        }
    };
    let mut f = Finding::new(
        Code::NamespaceTerminating,
        severity,
        e.subject.clone(),
        what,
        if e.conditions.is_empty() {
            "status.conditions is empty: the namespace controller has not processed this namespace — is \
             kube-controller-manager running?"
        } else if stale {
            "the namespace controller retries a namespace with back-off, minutes apart after several failures; its \
             next pass deletes this one, and any update of the namespace brings that pass within seconds"
        } else if reported.is_some() {
            "the conditions below (verbatim from the namespace controller) say what is left"
        } else {
            "no remaining object, failing discovery or foreign finalizer was found; the namespace controller may \
             still be working (it retries with back-off)"
        },
    );
    f.evidence
        .extend(e.conditions.iter().map(|c| e.cond_evidence(c)));
    f.evidence.push(Evidence {
        source: format!("list of namespaced resource types in {name}"),
        observed: if unlisted > 0 {
            format!(
                "no objects found in {} resource type(s); {unlisted} could not be listed",
                content.types_listed
            )
        } else {
            format!(
                "no objects found in {} resource type(s)",
                content.types_listed
            )
        },
    });
    f.blocks = vec![name.clone()];
    f.remedy = Some(if stale {
        Remedy {
            description: "nudge the namespace controller: an annotation (any update) queues the namespace's next \
                          pass within seconds"
                .into(),
            command: format!(
                "kubectl annotate namespace {name} kubectl-cozy.io/nudged-at=\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" --overwrite"
            ),
            automatic: false,
        }
    } else {
        finalize_remedy(name)
    });
    found.push(f);
}

/// Outside Terminating namespaces (`-A`, `-n`): objects deleting for longer
/// than `--stuck-after`, held by finalizers.
fn stuck_objects(e: &Examined<'_>) -> Vec<Finding> {
    let now = e.inputs.now;
    let mut found = Vec::new();
    for object in &e.remaining {
        let since = object
            .deletion_timestamp
            .as_deref()
            .and_then(|t| t.parse::<Timestamp>().ok())
            .map(|t| now.as_second() - t.as_second())
            .unwrap_or(0);
        if object.finalizers.is_empty() || since < e.inputs.stuck_after_seconds {
            continue;
        }
        let mut f = finalizer_finding(e.inputs, object, &e.name, e.failing, false, false);
        behind_failing_webhooks(e, object, &mut f);
        f.code = Code::ObjectDeletionStuck;
        f.severity = Severity::Warning;
        f.id = format!(
            "{}:{}",
            Code::ObjectDeletionStuck,
            super::findings::subject_key(&object.object)
        );
        f.blocks.clear();
        found.push(f);
    }
    found
}

/// One object held by finalizers.
fn finalizer_finding(
    inputs: &Inputs<'_>,
    object: &RemainingObject,
    namespace: &str,
    failing: &[(ApiServiceReport, String)],
    discovery_blocked: bool,
    blocks_namespace: bool,
) -> Finding {
    let now = inputs.now;
    let owners: Vec<String> = object
        .finalizers
        .iter()
        .map(|f| {
            format!(
                "{f}: {}",
                finalizer_owner(
                    f,
                    inputs.crds,
                    &inputs.discovered.groups,
                    inputs.api_services
                )
            )
        })
        .collect();
    let finalizers = object.finalizers.join(", ");
    // Its finalizers' owner gets `--stuck-after` from the object's deletion
    // to remove them; an object not deleted yet is the namespace
    // controller's to delete first (removing its finalizers would not
    // remove it).
    let deleting_for = object
        .deletion_timestamp
        .as_deref()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map(|t| now.as_second() - t.as_second());
    let overdue = deleting_for.is_some_and(|s| s >= inputs.stuck_after_seconds);
    // Holds the namespace, but its owner's time is not up: a note.
    let in_progress = blocks_namespace && !overdue;
    let kind = object.object.kind.to_lowercase();
    let what = if in_progress {
        match deleting_for {
            None => format!(
                "{kind} {} has finalizer(s) {finalizers} and waits for the namespace controller to delete it \
                 (namespace {namespace} is Terminating)",
                object.object.name
            ),
            Some(s) => format!(
                "{kind} {} has been deleting for {}, held by finalizer(s) {finalizers}: under --stuck-after ({}), \
                 its finalizers' owner may still be at work (namespace {namespace} is Terminating)",
                object.object.name,
                crate::output::age(s),
                crate::output::age(inputs.stuck_after_seconds)
            ),
        }
    } else if blocks_namespace {
        format!(
            "{kind} {} has finalizer(s) {finalizers} and keeps namespace {namespace} Terminating",
            object.object.name
        )
    } else {
        format!(
            "{} {} in namespace {namespace} has been deleting since {} held by finalizer(s) {finalizers}",
            object.object.kind.to_lowercase(),
            object.object.name,
            object.deletion_timestamp.clone().unwrap_or_default()
        )
    };
    let why = if blocks_namespace {
        "an object is only removed once every finalizer on it is removed by its owner; until then the namespace \
         controller cannot finish"
    } else {
        "an object is only removed once every finalizer on it is removed by its owner; until then it stays, \
         deleting"
    };
    let mut f = Finding::new(
        Code::FinalizerBlocking,
        if in_progress {
            Severity::Info
        } else {
            Severity::Error
        },
        object.object.clone(),
        what,
        why,
    )
    .evidence(
        format!("{} metadata.finalizers", object.object),
        format!("{:?}", object.finalizers),
    )
    .evidence(
        format!("{} metadata.deletionTimestamp", object.object),
        match &object.deletion_timestamp {
            Some(t) => match t.parse::<Timestamp>() {
                Ok(ts) => format!("{t} ({})", ago(now.as_second() - ts.as_second())),
                Err(_) => t.clone(),
            },
            None => "not set: the namespace controller has not deleted it yet".into(),
        },
    );
    f.owner = Some(owners.join("; "));
    let gc = object
        .finalizers
        .iter()
        .any(|x| x == "foregroundDeletion" || x == "orphan");
    if gc && discovery_blocked {
        for (_, id) in failing.iter().filter(|(a, _)| !a.local) {
            f.caused_by.push(id.clone());
        }
        f.evidence.push(Evidence {
            source: "garbage collector".into(),
            observed: "cannot sync while API discovery fails, so its finalizers stay".into(),
        });
    }
    if blocks_namespace {
        f.blocks = vec![namespace.to_owned()];
    }
    let keep: Vec<&String> = Vec::new();
    let patch = serde_json::json!({"metadata": {
        "finalizers": keep,
        "resourceVersion": object.resource_version.clone().unwrap_or_default(),
    }});
    let description = "remove the finalizer(s): whatever they guard (external resources, cleanup) is skipped; the \
                       resourceVersion makes the patch fail if the object changed since it was read";
    f.remedy = Some(Remedy {
        description: match (in_progress, deleting_for) {
            (false, _) => description.to_owned(),
            (true, None) => "none needed yet: the namespace controller deletes it first, then its finalizers' owner \
                             removes them (removing them now would not remove it); watch it"
                .to_owned(),
            (true, Some(_)) => format!("if it is still there after --stuck-after: {description}"),
        },
        command: match (in_progress, deleting_for) {
            (true, None) => format!("kubectl get {} -w", object.object.kubectl_args()),
            _ => format!(
                "kubectl patch {} --type=merge -p '{}'",
                object.object.kubectl_args(),
                patch
            ),
        },
        automatic: blocks_namespace && overdue,
    });
    f
}

fn finalize_remedy(name: &str) -> Remedy {
    Remedy {
        description: "last resort: clear spec.finalizers through /finalize. Objects still in the namespace stay in etcd, \
                      unreachable; run with --fix --finalize-namespaces to have doctor do it after everything else"
            .into(),
        command: format!(
            "kubectl get namespace {name} -o json | jq '.spec.finalizers = []' | kubectl replace --raw /api/v1/namespaces/{name}/finalize -f -"
        ),
        automatic: false,
    }
}

/// The `group/version` strings a discovery-failure message names.
pub fn group_versions_in(message: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(
        r"([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)/(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)\b",
    )
    .expect("static regex");
    re.captures_iter(message)
        .map(|c| format!("{}/{}", &c[1], &c[2]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::findings::{Probe, ServiceCheck, WebhookReport};

    fn now() -> Timestamp {
        "2026-09-01T12:00:00Z".parse().unwrap()
    }

    fn terminating_ns(name: &str, conditions: serde_json::Value) -> Namespace {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "deletionTimestamp": "2026-09-01T11:50:00Z", "resourceVersion": "10"},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Terminating", "conditions": conditions}
        }))
        .unwrap()
    }

    fn dead_api_service() -> ApiServiceReport {
        ApiServiceReport {
            name: "v1alpha1.doctor-test.example.com".into(),
            uid: None,
            group: "doctor-test.example.com".into(),
            version: "v1alpha1".into(),
            local: false,
            available: Some(Condition {
                type_: "Available".into(),
                status: "False".into(),
                reason: Some("FailedDiscoveryCheck".into()),
                message: Some("failing or missing response".into()),
                last_transition_time: Some("2026-09-01T11:49:00Z".into()),
            }),
            service: Some(ServiceCheck::default()),
            insecure_skip_tls_verify: true,
            ca_bundle: None,
            probe: Some(Probe {
                path: "/apis/doctor-test.example.com/v1alpha1".into(),
                status: Some(503),
                latency_ms: 2,
                ok: false,
                error: Some("service unavailable".into()),
            }),
            session: None,
            healthy: false,
        }
    }

    fn run(
        namespaces: &[Namespace],
        content: &Content,
        api_services: &[ApiServiceReport],
    ) -> (
        Vec<NamespaceReport>,
        Vec<Finding>,
        BTreeMap<String, Vec<String>>,
    ) {
        let discovered = Discovered::default();
        let crds = BTreeMap::from([(
            "example.com".to_owned(),
            vec!["widgets.example.com".to_owned()],
        )]);
        let api_findings = crate::doctor::apiservices::findings(api_services, &[], 30, now());
        conclude(&Inputs {
            namespaces,
            content,
            api_services,
            api_findings: &api_findings,
            discovered: &discovered,
            crds: &crds,
            webhooks: &[],
            sessions: &[],
            now: now(),
            stuck_after_seconds: 300,
        })
    }

    fn run_with_webhooks(
        namespaces: &[Namespace],
        content: &Content,
        webhooks: &[WebhookReport],
    ) -> (
        Vec<NamespaceReport>,
        Vec<Finding>,
        BTreeMap<String, Vec<String>>,
    ) {
        let discovered = Discovered::default();
        let crds = BTreeMap::new();
        conclude(&Inputs {
            namespaces,
            content,
            api_services: &[],
            api_findings: &[],
            discovered: &discovered,
            crds: &crds,
            webhooks,
            sessions: &[],
            now: now(),
            stuck_after_seconds: 300,
        })
    }

    /// A failurePolicy Fail webhook whose Service is gone, intercepting
    /// `operations` on ConfigMaps, with these selectors.
    fn dead_webhook(
        name: &str,
        operations: &[&str],
        namespace_selector: Option<serde_json::Value>,
        object_selector: Option<serde_json::Value>,
    ) -> WebhookReport {
        WebhookReport {
            kind: "ValidatingWebhookConfiguration".into(),
            configuration: name.into(),
            webhook: format!("{name}.example.com"),
            failure_policy: "Fail".into(),
            rules: vec![format!("{} configmaps", operations.join(","))],
            namespace_selector: namespace_selector.map(|s| serde_json::from_value(s).unwrap()),
            object_selector: object_selector.map(|s| serde_json::from_value(s).unwrap()),
            intercepts: vec![
                serde_json::from_value(serde_json::json!({
                    "operations": operations, "apiGroups": [""], "apiVersions": ["v1"],
                    "resources": ["configmaps"], "scope": "Namespaced"
                }))
                .unwrap(),
            ],
            service: ServiceCheck {
                namespace: "policy".into(),
                name: name.into(),
                port: 443,
                exists: Some(false),
                ..ServiceCheck::default()
            },
            healthy: false,
        }
    }

    fn configmap_in(
        ns: &str,
        name: &str,
        finalizers: &[&str],
        deleted: Option<&str>,
    ) -> RemainingObject {
        RemainingObject {
            object: ObjectRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                resource: "configmaps".into(),
                namespace: Some(ns.into()),
                name: name.into(),
            },
            finalizers: finalizers.iter().map(|f| (*f).to_owned()).collect(),
            deletion_timestamp: deleted.map(str::to_owned),
            resource_version: Some("42".into()),
            labels: BTreeMap::from([("app".to_owned(), name.to_owned())]),
        }
    }

    /// Every namespace a webhook's finding says it blocks is BLOCKED, and
    /// every namespace a failing webhook holds is in its finding's `blocks`.
    fn assert_webhooks_and_namespaces_agree(
        reports: &[NamespaceReport],
        blocks: &BTreeMap<String, Vec<String>>,
        webhooks: &[WebhookReport],
    ) {
        for w in webhooks {
            let blocked = blocks
                .get(&crate::doctor::webhooks::finding_id(w))
                .cloned()
                .unwrap_or_default();
            for name in &blocked {
                let report = reports.iter().find(|r| &r.name == name).unwrap();
                assert!(
                    report.blocked,
                    "{} blocks {name}, which is not BLOCKED",
                    w.webhook
                );
            }
        }
    }

    /// Regression: the webhook's finding said it blocked a namespace the
    /// table called not blocked (its own findings were notes), and said
    /// nothing of a namespace whose finalizer removal it rejects. Both now
    /// come from one computation.
    #[test]
    fn a_webhooks_blocks_and_the_namespaces_blocked_agree() {
        let mut recent = terminating_ns(
            "recent",
            serde_json::json!([{
                "type": "NamespaceDeletionContentFailure", "status": "True", "reason": "ContentDeletionFailed",
                "message": "Failed to delete all resource types, 1 remaining: Internal error occurred: failed calling \
                            webhook \"deny.example.com\": failed to call webhook: service \"deny\" not found",
                "lastTransitionTime": "2026-09-01T11:59:02Z"
            }]),
        );
        recent.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-09-01T11:59:00Z".parse().unwrap(),
            ));
        let held = terminating_ns("held", serde_json::json!([]));
        let mut content = Content::default();
        content.objects.insert(
            "recent".into(),
            vec![configmap_in("recent", "guarded", &[], None)],
        );
        content.objects.insert(
            "held".into(),
            vec![configmap_in(
                "held",
                "blocked",
                &["example.com/block"],
                Some("2026-09-01T11:50:02Z"),
            )],
        );
        let webhooks = [
            dead_webhook("deny", &["DELETE"], None, None),
            dead_webhook("guard", &["UPDATE"], None, None),
        ];
        let (reports, findings, blocks) = run_with_webhooks(&[held, recent], &content, &webhooks);
        assert_webhooks_and_namespaces_agree(&reports, &blocks, &webhooks);
        let deny = crate::doctor::webhooks::finding_id(&webhooks[0]);
        let guard = crate::doctor::webhooks::finding_id(&webhooks[1]);
        // The namespace controller's deletes in "recent" are rejected: its
        // content stays however recent its deletion.
        assert_eq!(blocks[&deny], vec!["recent"]);
        assert!(reports.iter().find(|r| r.name == "recent").unwrap().blocked);
        // The UPDATE that removes the finalizer in "held" is rejected.
        assert_eq!(blocks[&guard], vec!["held"]);
        let finalizer = findings
            .iter()
            .find(|f| f.code == Code::FinalizerBlocking)
            .unwrap();
        assert!(finalizer.caused_by.contains(&guard), "{finalizer:?}");
    }

    /// Regression: a failing webhook holding a namespace was made a cause of
    /// every object's finding there, also of objects it does not intercept;
    /// and an object whose DELETE it rejects was a note that it waits for
    /// the namespace controller, which it would do for ever.
    #[test]
    fn a_webhook_is_the_cause_only_of_the_objects_it_intercepts() {
        let ns = terminating_ns("team-w", serde_json::json!([]));
        let mut content = Content::default();
        content.objects.insert(
            "team-w".into(),
            vec![
                configmap_in(
                    "team-w",
                    "cm-fin",
                    &["example.com/block"],
                    Some("2026-09-01T11:50:02Z"),
                ),
                configmap_in("team-w", "w4", &["example.com/block"], None),
            ],
        );
        let webhooks = [dead_webhook(
            "widgets",
            &["UPDATE", "DELETE"],
            None,
            Some(serde_json::json!({"matchLabels": {"app": "w4"}})),
        )];
        let (reports, findings, blocks) = run_with_webhooks(&[ns], &content, &webhooks);
        assert_webhooks_and_namespaces_agree(&reports, &blocks, &webhooks);
        let id = crate::doctor::webhooks::finding_id(&webhooks[0]);
        let of = |name: &str| {
            findings
                .iter()
                .find(|f| f.subject.name == name)
                .unwrap_or_else(|| panic!("{name}: {findings:#?}"))
        };
        assert!(!of("cm-fin").caused_by.contains(&id), "{:?}", of("cm-fin"));
        let w4 = of("w4");
        assert!(w4.caused_by.contains(&id), "{w4:?}");
        assert_eq!(w4.severity, Severity::Error, "{w4:?}");
        assert!(
            w4.what.starts_with(
                "configmap w4 cannot be deleted: failing webhook widgets.example.com rejects its DELETE"
            ),
            "{}",
            w4.what
        );
        assert!(reports[0].blocked);
        // Its fix says the webhook comes first, once.
        let fix = &w4.remedy.as_ref().unwrap().description;
        assert_eq!(fix.matches("first make webhook").count(), 1, "{fix}");
        // A webhook on DELETE only: the fix is the webhook, not a finalizer
        // removal or a wait.
        let ns = terminating_ns("team-w", serde_json::json!([]));
        let mut content = Content::default();
        content.objects.insert(
            "team-w".into(),
            vec![configmap_in("team-w", "w4", &["example.com/block"], None)],
        );
        let webhooks = [dead_webhook(
            "widgets",
            &["DELETE"],
            None,
            Some(serde_json::json!({"matchLabels": {"app": "w4"}})),
        )];
        let (_, findings, _) = run_with_webhooks(&[ns], &content, &webhooks);
        let w4 = findings.iter().find(|f| f.subject.name == "w4").unwrap();
        let remedy = w4.remedy.as_ref().unwrap();
        assert!(
            !remedy.automatic
                && remedy
                    .description
                    .starts_with("first make webhook widgets.example.com answer again")
                && remedy.command == "kubectl delete configmaps/w4 -n team-w",
            "{remedy:?}"
        );
    }

    /// Regression: a failing webhook with a namespaceSelector was said to
    /// fail requests cluster-wide and held namespaces it does not select.
    #[test]
    fn a_webhooks_selectors_decide_which_namespaces_it_blocks() {
        let labelled = |name: &str, labels: serde_json::Value| {
            let mut ns = terminating_ns(name, serde_json::json!([]));
            ns.metadata.labels = Some(serde_json::from_value(labels).unwrap());
            ns
        };
        let namespaces = [
            labelled(
                "selected",
                serde_json::json!({"tier": "gated", "env": "prod", "gated": ""}),
            ),
            labelled(
                "wrong-env",
                serde_json::json!({"tier": "gated", "env": "dev", "gated": ""}),
            ),
            labelled(
                "ops",
                serde_json::json!({"tier": "gated", "env": "prod", "gated": "", "team": "ops"}),
            ),
            labelled(
                "ungated",
                serde_json::json!({"tier": "gated", "env": "prod"}),
            ),
            labelled(
                "legacy",
                serde_json::json!({"tier": "gated", "env": "prod", "gated": "", "legacy": "1"}),
            ),
            labelled(
                "other-tier",
                serde_json::json!({"tier": "open", "env": "prod", "gated": ""}),
            ),
        ];
        let mut content = Content::default();
        for ns in &namespaces {
            let name = ns.metadata.name.clone().unwrap();
            content.objects.insert(
                name.clone(),
                vec![configmap_in(&name, "guarded", &[], None)],
            );
        }
        let selector = serde_json::json!({
            "matchLabels": {"tier": "gated"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod"]},
                {"key": "team", "operator": "NotIn", "values": ["ops"]},
                {"key": "gated", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"}
            ]
        });
        let webhooks = [dead_webhook("gate", &["DELETE"], Some(selector), None)];
        let (reports, _, blocks) = run_with_webhooks(&namespaces, &content, &webhooks);
        assert_webhooks_and_namespaces_agree(&reports, &blocks, &webhooks);
        let id = crate::doctor::webhooks::finding_id(&webhooks[0]);
        assert_eq!(blocks[&id], vec!["selected"]);
        let found = crate::doctor::webhooks::findings(&webhooks);
        assert!(!found[0].why.contains("cluster-wide"), "{}", found[0].why);
        assert!(
            found[0].why.ends_with(
                "fail in the namespaces its namespaceSelector (tier=gated,env in (prod),team notin (ops),gated,\
                 !legacy) selects"
            ),
            "{}",
            found[0].why
        );

        // An objectSelector: only the objects it selects.
        let webhooks = [dead_webhook(
            "objects",
            &["DELETE"],
            None,
            Some(serde_json::json!({"matchLabels": {"app": "other"}})),
        )];
        let (reports, _, blocks) = run_with_webhooks(&namespaces, &content, &webhooks);
        assert_webhooks_and_namespaces_agree(&reports, &blocks, &webhooks);
        assert!(blocks.is_empty(), "{blocks:?}");
        let found = crate::doctor::webhooks::findings(&webhooks);
        assert!(
            found[0]
                .why
                .ends_with("fail for the objects its objectSelector (app=other) selects"),
            "{}",
            found[0].why
        );
    }

    #[test]
    fn discovery_failure_is_attributed_to_the_named_apiservice() {
        let ns = terminating_ns(
            "team-a",
            serde_json::json!([{
                "type": "NamespaceDeletionDiscoveryFailure", "status": "True", "reason": "DiscoveryFailed",
                "message": "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: doctor-test.example.com/v1alpha1: stale GroupVersion discovery: doctor-test.example.com/v1alpha1",
                "lastTransitionTime": "2026-09-01T11:50:01Z"
            }]),
        );
        let (reports, findings, blocks) = run(&[ns], &Content::default(), &[dead_api_service()]);
        assert!(reports[0].blocked);
        assert_eq!(
            reports[0].conditions[0].reason.as_deref(),
            Some("DiscoveryFailed")
        );
        let f = &findings[0];
        assert_eq!(f.code, Code::NamespaceDiscoveryFailure);
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.caused_by,
            vec!["APIServiceUnavailable:apiservice/v1alpha1.doctor-test.example.com"]
        );
        assert!(
            f.evidence[0]
                .observed
                .contains("stale GroupVersion discovery"),
            "{:?}",
            f.evidence
        );
        assert_eq!(
            f.remedy.as_ref().unwrap().command,
            "kubectl delete apiservice v1alpha1.doctor-test.example.com"
        );
        assert_eq!(
            blocks["APIServiceUnavailable:apiservice/v1alpha1.doctor-test.example.com"],
            vec!["team-a"]
        );
    }

    /// Discovery succeeded on the controller's last pass (aggregated
    /// discovery keeps an unavailable APIService's resources) and its
    /// deletes failed with the APIService's 503: the finding says the
    /// content fails, with that condition as evidence (it said discovery).
    #[test]
    fn an_unavailable_apiservice_failing_the_deletes_is_a_content_failure() {
        let ns = terminating_ns(
            "team-c",
            serde_json::json!([{
                "type": "NamespaceDeletionDiscoveryFailure", "status": "False", "reason": "ResourcesDiscovered",
                "message": "All resources successfully discovered",
                "lastTransitionTime": "2026-09-01T11:50:01Z"
            }, {
                "type": "NamespaceDeletionContentFailure", "status": "True", "reason": "ContentDeletionFailed",
                "message": "Failed to delete all resource types, 1 remaining: the server is currently unable to handle the request",
                "lastTransitionTime": "2026-09-01T11:50:01Z"
            }]),
        );
        let (_, findings, blocks) = run(&[ns], &Content::default(), &[dead_api_service()]);
        let f = &findings[0];
        assert_eq!(f.code, Code::NamespaceContentFailure, "{findings:#?}");
        assert_eq!(
            f.what,
            "namespace team-c cannot finish deleting: its objects of doctor-test.example.com/v1alpha1 cannot be \
             deleted while their APIService is unavailable"
        );
        assert!(
            f.evidence[0]
                .observed
                .contains("unable to handle the request"),
            "{:?}",
            f.evidence
        );
        assert_eq!(
            f.caused_by,
            vec!["APIServiceUnavailable:apiservice/v1alpha1.doctor-test.example.com"]
        );
        assert_eq!(
            blocks["APIServiceUnavailable:apiservice/v1alpha1.doctor-test.example.com"],
            vec!["team-c"]
        );
    }

    /// Regression: right after a `serve` was killed, its Lease is still
    /// valid while its APIService fails. The namespace's fix said `kubectl
    /// delete apiservice …` "[planned by --fix]", which --fix then refused
    /// to plan; it must wait for the Lease instead, and say until when.
    #[test]
    fn a_live_sessions_apiservice_is_waited_for_not_deleted() {
        let ns = terminating_ns(
            "team-e",
            serde_json::json!([{
                "type": "NamespaceDeletionDiscoveryFailure", "status": "True", "reason": "DiscoveryFailed",
                "message": "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: doctor-test.example.com/v1alpha1: stale GroupVersion discovery: doctor-test.example.com/v1alpha1",
                "lastTransitionTime": "2026-09-01T11:50:01Z"
            }]),
        );
        let mut a = dead_api_service();
        let lease: k8s_openapi::api::coordination::v1::Lease =
            serde_json::from_value(serde_json::json!({
                "spec": {"holderIdentity": "alice@laptop, pid 4242", "leaseDurationSeconds": 15,
                         "renewTime": "2026-09-01T11:59:58.000000Z"}
            }))
            .unwrap();
        a.session = Some(sessions::judge_lease(
            "51mt0qm3",
            "kubectl-cozy-system",
            Some(&lease),
            now(),
        ));
        let (_, findings, _) = run(&[ns], &Content::default(), &[a]);
        let f = findings
            .iter()
            .find(|f| f.code == Code::NamespaceDiscoveryFailure)
            .unwrap();
        assert_eq!(
            f.caused_by,
            vec!["APIServiceUnavailable:apiservice/v1alpha1.doctor-test.example.com"]
        );
        let remedy = f.remedy.as_ref().unwrap();
        assert!(!remedy.automatic, "{remedy:?}");
        assert_eq!(
            remedy.command,
            "kubectl get lease -n kubectl-cozy-system kubectl-cozy-51mt0qm3"
        );
        assert!(
            !remedy.description.contains("delete apiservice"),
            "{remedy:?}"
        );
        assert!(
            remedy.description.contains(
                "APIService v1alpha1.doctor-test.example.com belongs to the live serve session 51mt0qm3, and its \
                 Lease expires at 2026-09-01T12:00:13Z (in 13s) unless renewed: stop that `kubectl cozy serve`, or \
                 wait until the Lease expires"
            ),
            "{remedy:?}"
        );
        assert!(
            remedy
                .description
                .ends_with("on its own. Never delete a live session's APIService by hand."),
            "{remedy:?}"
        );
    }

    #[test]
    fn objects_with_finalizers_are_named_with_their_owner() {
        let ns = terminating_ns(
            "team-b",
            serde_json::json!([{
                "type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizersRemain",
                "message": "Some content in the namespace has finalizers remaining: example.com/block in 1 resource instances"
            }]),
        );
        let mut content = Content::default();
        content.objects.insert(
            "team-b".into(),
            vec![RemainingObject {
                object: ObjectRef {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    resource: "configmaps".into(),
                    namespace: Some("team-b".into()),
                    name: "blocked".into(),
                },
                finalizers: vec!["example.com/block".into()],
                deletion_timestamp: Some("2026-09-01T11:50:02Z".into()),
                resource_version: Some("42".into()),
                labels: Default::default(),
            }],
        );
        let (reports, findings, _) = run(&[ns], &content, &[]);
        assert!(reports[0].blocked);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(f.code, Code::FinalizerBlocking);
        assert_eq!(f.id, "FinalizerBlocking:configmap/team-b/blocked");
        assert!(f.what.contains("example.com/block"));
        assert!(
            f.owner.as_ref().unwrap().contains("CRD group example.com"),
            "{:?}",
            f.owner
        );
        assert_eq!(
            f.remedy.as_ref().unwrap().command,
            r#"kubectl patch configmaps/blocked -n team-b --type=merge -p '{"metadata":{"finalizers":[],"resourceVersion":"42"}}'"#
        );
    }

    /// Finalizers are removed only once their owner has had `--stuck-after`
    /// since the object's deletion: one deleted a minute ago is a note, and
    /// one the namespace controller has not deleted yet (removing its
    /// finalizers would not remove it) is one too; neither is planned.
    #[test]
    fn finalizers_are_only_planned_for_removal_past_stuck_after() {
        let ns = terminating_ns("team-b", serde_json::json!([]));
        let object = |name: &str, deleted: Option<&str>| RemainingObject {
            object: ObjectRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                resource: "configmaps".into(),
                namespace: Some("team-b".into()),
                name: name.into(),
            },
            finalizers: vec!["backup.example.org/snapshot".into()],
            deletion_timestamp: deleted.map(str::to_owned),
            resource_version: Some("42".into()),
            labels: Default::default(),
        };
        let mut content = Content::default();
        content.objects.insert(
            "team-b".into(),
            vec![
                object("old", Some("2026-09-01T11:50:02Z")),
                object("recent", Some("2026-09-01T11:59:00Z")),
                object("undeleted", None),
            ],
        );
        let (_, findings, _) = run(&[ns], &content, &[]);
        let of = |name: &str| {
            findings
                .iter()
                .find(|f| f.subject.name == name)
                .unwrap_or_else(|| panic!("{name}: {findings:?}"))
        };
        let old = of("old");
        assert_eq!(old.severity, Severity::Error);
        assert!(old.remedy.as_ref().unwrap().automatic);
        let recent = of("recent");
        assert_eq!(recent.severity, Severity::Info);
        assert!(!recent.remedy.as_ref().unwrap().automatic);
        assert!(
            recent.what.contains("deleting for 60s")
                && recent.what.contains("under --stuck-after (5m)"),
            "{}",
            recent.what
        );
        let undeleted = of("undeleted");
        assert_eq!(undeleted.severity, Severity::Info);
        let remedy = undeleted.remedy.as_ref().unwrap();
        assert!(!remedy.automatic);
        assert_eq!(
            remedy.command,
            "kubectl get configmaps/undeleted -n team-b -w"
        );
        assert!(
            undeleted
                .what
                .contains("waits for the namespace controller to delete it"),
            "{}",
            undeleted.what
        );
    }

    /// An object deleting for longer than `--stuck-after` in a namespace
    /// that is not being deleted: a warning that blocks nothing, and whose
    /// why does not speak of the namespace controller.
    #[test]
    fn an_object_stuck_deleting_in_an_active_namespace_blocks_nothing() {
        let active: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "team-c", "resourceVersion": "7"},
            "status": {"phase": "Active"}
        }))
        .unwrap();
        let mut content = Content::default();
        content.objects.insert(
            "team-c".into(),
            vec![RemainingObject {
                object: ObjectRef {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    resource: "configmaps".into(),
                    namespace: Some("team-c".into()),
                    name: "held".into(),
                },
                finalizers: vec!["example.com/block".into()],
                deletion_timestamp: Some("2026-09-01T11:00:00Z".into()),
                resource_version: Some("43".into()),
                labels: Default::default(),
            }],
        );
        let (_, findings, _) = run(&[active], &content, &[]);
        let f = findings
            .iter()
            .find(|f| f.code == Code::ObjectDeletionStuck)
            .unwrap_or_else(|| panic!("{findings:?}"));
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.blocks.is_empty(), "{:?}", f.blocks);
        assert!(f.what.contains("has been deleting since"), "{}", f.what);
        assert!(!f.why.contains("namespace controller"), "{}", f.why);
    }

    #[test]
    fn terminating_with_no_finalizer_left_is_deleted_again_only_when_empty() {
        let finalized = |name: &str| {
            let mut ns = terminating_ns(name, serde_json::json!([]));
            ns.spec.as_mut().unwrap().finalizers = Some(Vec::new());
            ns.metadata.uid = Some(format!("uid-{name}"));
            ns
        };
        let (reports, findings, _) = run(&[finalized("empty")], &Content::default(), &[]);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(f.code, Code::NamespaceFinalizedNotDeleted);
        assert_eq!(f.severity, Severity::Error);
        let remedy = f.remedy.as_ref().unwrap();
        assert!(remedy.automatic);
        assert_eq!(remedy.command, "kubectl delete namespace empty");
        assert!(reports[0].blocked);
        assert_eq!(reports[0].uid.as_deref(), Some("uid-empty"));

        // Something left in it: named, deleting it again is the user's call,
        // and the objects' finding says the controller will not delete them.
        let mut content = Content::default();
        content.objects.insert(
            "left".into(),
            vec![RemainingObject {
                object: ObjectRef {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    resource: "configmaps".into(),
                    namespace: Some("left".into()),
                    name: "cm".into(),
                },
                finalizers: Vec::new(),
                deletion_timestamp: None,
                resource_version: Some("7".into()),
                labels: Default::default(),
            }],
        );
        let (_, findings, _) = run(&[finalized("left")], &content, &[]);
        let f = findings
            .iter()
            .find(|f| f.code == Code::NamespaceFinalizedNotDeleted)
            .unwrap_or_else(|| panic!("{findings:?}"));
        assert!(!f.remedy.as_ref().unwrap().automatic);
        let content_finding = findings
            .iter()
            .find(|f| f.code == Code::ContentRemaining)
            .unwrap_or_else(|| panic!("{findings:?}"));
        assert!(content_finding.why.contains("does not delete them"));
        // Its fix agrees: by hand, not "why do the controller's deletes fail".
        let fix = &content_finding.remedy.as_ref().unwrap().description;
        assert!(fix.starts_with("delete them by hand"), "{fix}");

        // A finalizer still on it: not this case.
        let mut held = finalized("held");
        held.metadata.finalizers = Some(vec!["example.com/keep".into()]);
        let (_, findings, _) = run(&[held], &Content::default(), &[]);
        assert!(
            findings
                .iter()
                .all(|f| f.code != Code::NamespaceFinalizedNotDeleted),
            "{findings:?}"
        );
    }

    /// A namespace held by a foreign finalizer in `spec.finalizers` and
    /// another in `metadata.finalizers`: two findings with ids of their own
    /// (the plan covers the second; only /finalize clears the first).
    #[test]
    fn spec_and_metadata_finalizers_of_a_namespace_are_findings_apart() {
        let mut ns = terminating_ns("team-n", serde_json::json!([]));
        ns.spec.as_mut().unwrap().finalizers =
            Some(vec!["kubernetes".into(), "example.com/spec-hold".into()]);
        ns.metadata.finalizers = Some(vec!["example.com/meta-hold".into()]);
        let (_, findings, _) = run(&[ns], &Content::default(), &[]);
        let ids: Vec<&str> = findings
            .iter()
            .filter(|f| f.code == Code::NamespaceFinalizerRemaining)
            .map(|f| f.id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "NamespaceFinalizerRemaining:namespace/team-n:spec.finalizers",
                "NamespaceFinalizerRemaining:namespace/team-n"
            ],
            "{findings:?}"
        );
    }

    #[test]
    fn terminating_without_blockers_is_info_until_it_is_old() {
        let mut ns = terminating_ns("fresh", serde_json::json!([]));
        ns.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-09-01T11:59:58Z".parse().unwrap(),
            ));
        let (_, findings, _) = run(&[ns], &Content::default(), &[]);
        assert_eq!(findings[0].code, Code::NamespaceTerminating);
        assert_eq!(findings[0].severity, Severity::Info);
        let old = terminating_ns("old", serde_json::json!([]));
        let (reports, findings, _) = run(&[old], &Content::default(), &[]);
        assert_eq!(findings[0].severity, Severity::Warning);
        assert!(findings[0].why.contains("kube-controller-manager running"));
        assert!(reports[0].blocked);
    }

    /// The controller's condition names finalizers on objects that are gone
    /// (every type listed): a note that its next pass deletes the namespace
    /// and how to bring that pass on, not a claim of unlisted objects.
    #[test]
    fn a_condition_from_before_the_content_went_is_a_note_with_a_nudge() {
        let mut ns = terminating_ns(
            "team-s",
            serde_json::json!([
                {"type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizersRemain",
                 "message": "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"}
            ]),
        );
        ns.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-09-01T11:59:00Z".parse().unwrap(),
            ));
        let listed = Content {
            types_listed: 40,
            ..Content::default()
        };
        let (reports, findings, _) = run(&[ns.clone()], &listed, &[]);
        assert_eq!(findings.len(), 1, "{findings:#?}");
        let f = &findings[0];
        assert_eq!(
            (f.code, f.severity),
            (Code::NamespaceTerminating, Severity::Info)
        );
        assert!(f.what.contains("content that is gone now"), "{}", f.what);
        assert!(
            f.remedy
                .as_ref()
                .unwrap()
                .command
                .starts_with("kubectl annotate namespace team-s kubectl-cozy.io/nudged-at="),
            "{:?}",
            f.remedy
        );
        assert!(!reports[0].blocked);
        // Past --stuck-after (the controller's back-off is minutes apart):
        // still a note, the namespace not BLOCKED (no /finalize for it).
        let mut old = ns.clone();
        old.metadata.deletion_timestamp = None;
        let old = Namespace {
            metadata: terminating_ns("team-s", serde_json::json!([])).metadata,
            ..old
        };
        let (reports, findings, _) = run(&[old], &listed, &[]);
        assert_eq!(findings[0].severity, Severity::Info, "{findings:#?}");
        assert!(
            findings[0].what.contains("gone now"),
            "{}",
            findings[0].what
        );
        assert!(!reports[0].blocked);
        // A type that could not be listed may hold them: unlisted, as before;
        // so may the types of a group whose discovery fails (never listed).
        let partly = Content {
            types_failed: 1,
            types_listed: 40,
            ..Content::default()
        };
        let (_, findings, _) = run(&[ns.clone()], &partly, &[]);
        assert!(
            findings
                .iter()
                .any(|f| f.code == Code::FinalizersRemainingUnlisted),
            "{findings:#?}"
        );
        let (_, findings, _) = run(&[ns], &listed, &[dead_api_service()]);
        assert!(
            findings
                .iter()
                .any(|f| f.code == Code::FinalizersRemainingUnlisted),
            "{findings:#?}"
        );
    }

    #[test]
    fn finalizer_owners_are_named_when_knowable() {
        let crds = BTreeMap::from([(
            "postgresql.cnpg.io".to_owned(),
            vec!["clusters.postgresql.cnpg.io".to_owned()],
        )]);
        let groups = BTreeMap::new();
        assert!(
            finalizer_owner("kubernetes", &crds, &groups, &[]).contains("namespace controller")
        );
        assert!(
            finalizer_owner("foregroundDeletion", &crds, &groups, &[])
                .contains("garbage collector")
        );
        assert!(finalizer_owner("orphan", &crds, &groups, &[]).contains("garbage collector"));
        assert!(
            finalizer_owner("finalizers.fluxcd.io", &crds, &groups, &[])
                .starts_with("Flux: the controller of the object's kind (helm-controller")
        );
        assert!(
            finalizer_owner("postgresql.cnpg.io/cleanup", &crds, &groups, &[])
                .contains("CRD group postgresql.cnpg.io")
        );
        assert!(
            finalizer_owner("nothing.example.org/x", &crds, &groups, &[]).starts_with("unknown")
        );
        assert!(finalizer_owner("bare", &crds, &groups, &[]).starts_with("unknown"));
        assert!(
            finalizer_owner(
                "doctor-test.example.com/x",
                &crds,
                &groups,
                &[dead_api_service()]
            )
            .contains("APIService v1alpha1.doctor-test.example.com")
        );
    }

    /// Regression: the owner was the shortest matching group, named without
    /// a hedge: `cert-manager.io` for a finalizer of
    /// `finalizer.acme.cert-manager.io`, and one group picked out of several
    /// under a finalizer's domain. Exact where it can be, hedged otherwise.
    #[test]
    fn a_finalizers_owner_is_exact_or_hedged() {
        let crds = BTreeMap::from([
            (
                "cert-manager.io".to_owned(),
                vec!["certificates.cert-manager.io".to_owned()],
            ),
            (
                "acme.cert-manager.io".to_owned(),
                vec!["orders.acme.cert-manager.io".to_owned()],
            ),
            (
                "helm.toolkit.fluxcd.io".to_owned(),
                vec!["helmreleases.helm.toolkit.fluxcd.io".to_owned()],
            ),
            (
                "kustomize.toolkit.fluxcd.io".to_owned(),
                vec!["kustomizations.kustomize.toolkit.fluxcd.io".to_owned()],
            ),
        ]);
        let groups = BTreeMap::new();
        let owner = |f: &str| finalizer_owner(f, &crds, &groups, &[]);
        assert!(
            owner("helm.toolkit.fluxcd.io/finalizer")
                .starts_with("the controller of CRD group helm.toolkit.fluxcd.io (helmreleases"),
            "{}",
            owner("helm.toolkit.fluxcd.io/finalizer")
        );
        assert!(
            owner("finalizer.acme.cert-manager.io/x")
                .starts_with("probably the controller of CRD group acme.cert-manager.io ("),
            "{}",
            owner("finalizer.acme.cert-manager.io/x")
        );
        assert_eq!(
            owner("fluxcd.io/x"),
            "unknown: no API group is named fluxcd.io; the groups under it are helm.toolkit.fluxcd.io, \
             kustomize.toolkit.fluxcd.io: one of their controllers, possibly"
        );
        assert!(
            owner("toolkit.fluxcd.io/x")
                .starts_with("unknown: no API group is named toolkit.fluxcd.io"),
            "{}",
            owner("toolkit.fluxcd.io/x")
        );
        assert!(
            owner("acme.cert-manager.io/x")
                .starts_with("the controller of CRD group acme.cert-manager.io"),
        );
    }

    /// Regression: `NamespaceFinalizersRemaining=True` was never used
    /// beside other findings: objects with finalizers in types doctor
    /// could not list went unsaid, and the objects it did find did not cite
    /// the controller's condition.
    #[test]
    fn finalizers_the_namespace_controller_reports_are_accounted_for() {
        let ns = terminating_ns(
            "team-f",
            serde_json::json!([
                {"type": "NamespaceDeletionDiscoveryFailure", "status": "True", "reason": "DiscoveryFailed",
                 "message": "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: doctor-test.example.com/v1alpha1: stale GroupVersion discovery: doctor-test.example.com/v1alpha1"},
                {"type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizersRemain",
                 "message": "Some content in the namespace has finalizers remaining: example.com/block in 2 resource instances, doctor-test.example.com/cleanup in 1 resource instances"}
            ]),
        );
        let mut content = Content {
            types_failed: 1,
            ..Content::default()
        };
        content.objects.insert(
            "team-f".into(),
            vec![configmap_in(
                "team-f",
                "blocked",
                &["example.com/block"],
                Some("2026-09-01T11:50:02Z"),
            )],
        );
        let (reports, findings, _) = run(&[ns], &content, &[dead_api_service()]);
        assert!(reports[0].blocked);
        let blocking = findings
            .iter()
            .find(|f| f.code == Code::FinalizerBlocking)
            .unwrap();
        assert!(
            blocking
                .evidence
                .iter()
                .any(|e| e.source
                    == "Namespace team-f status.conditions[NamespaceFinalizersRemaining]"),
            "{blocking:?}"
        );
        let unlisted = findings
            .iter()
            .find(|f| f.code == Code::FinalizersRemainingUnlisted)
            .unwrap_or_else(|| panic!("{findings:#?}"));
        assert_eq!(unlisted.severity, Severity::Error);
        assert_eq!(unlisted.blocks, vec!["team-f"]);
        assert!(
            unlisted.what.ends_with(
                "doctor did not find: doctor-test.example.com/cleanup on 1 object(s), 0 of them found; \
                 example.com/block on 2 object(s), 1 of them found"
            ),
            "{}",
            unlisted.what
        );
        let owner = unlisted.owner.as_ref().unwrap();
        assert!(
            owner.contains(
                "doctor-test.example.com/cleanup: the extension API server behind APIService \
                 v1alpha1.doctor-test.example.com"
            ),
            "{owner}"
        );
        assert!(!unlisted.remedy.as_ref().unwrap().automatic);
        assert_eq!(
            finalizers_in(
                "Some content in the namespace has finalizers remaining: a.io/x in 3 resource instances"
            ),
            BTreeMap::from([("a.io/x".to_owned(), 3)])
        );
    }

    #[test]
    fn group_versions_are_read_from_condition_messages() {
        let gvs = group_versions_in(
            "Discovery failed for some groups, 2 failing: unable to retrieve the complete list of server APIs: \
             a.example.com/v1alpha1: stale GroupVersion discovery: a.example.com/v1alpha1, metrics.k8s.io/v1beta1: the server is currently unable",
        );
        assert_eq!(
            gvs.into_iter().collect::<Vec<_>>(),
            vec!["a.example.com/v1alpha1", "metrics.k8s.io/v1beta1"]
        );
    }
}
