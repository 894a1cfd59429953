//! `kubectl cozy doctor`: APIService health and why namespaces are stuck in
//! Terminating, with a previewed, confirmed and re-verified fix.
//!
//! A run is [`diagnose`]: it reads the cluster in parallel (APIServices with a
//! live probe each, discovery, namespaces, webhooks; then every namespaced
//! resource type for the namespaces in scope) under one concurrency limit and
//! per-request timeouts ([`request`]), and concludes without further I/O
//! ([`apiservices::findings`], [`namespaces::conclude`], [`webhooks::findings`])
//! into a [`findings::Report`]. [`fix`] turns a report into a plan and applies
//! it; [`render`] prints reports and plans for people.
//!
//! Sessions of `kubectl cozy serve` label everything they create with
//! [`SESSION_LABEL`] and keep a Lease named [`session_lease_name`] in
//! [`SESSION_LEASE_NAMESPACE`]; doctor reaps the objects of sessions whose
//! Lease is missing or expired.

pub mod apiservices;
pub mod findings;
pub mod fix;
pub mod namespaces;
pub mod render;
pub mod request;
pub mod webhooks;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;

use findings::{
    Finding, Outcome, REPORT_API_VERSION, REPORT_KIND, Report, Scope, ScopeKind, SessionReport,
    Severity, Summary, Unchecked,
};
use request::{CallError, Requester};

/// The label every object a `kubectl cozy serve` session creates carries; its
/// value is the session id.
pub const SESSION_LABEL: &str = "kubectl-cozy.io/session";
/// Prefix of a session's Lease name: `kubectl-cozy-<id>`.
pub const SESSION_LEASE_PREFIX: &str = "kubectl-cozy-";
/// Namespace of session Leases.
pub const SESSION_LEASE_NAMESPACE: &str = "kube-system";

/// The name of the Lease that proves session `id` alive.
pub fn session_lease_name(id: &str) -> String {
    format!("{SESSION_LEASE_PREFIX}{id}")
}

/// How a diagnosis runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Which namespaces to examine.
    pub scope: ScopeKind,
    /// The namespace for [`ScopeKind::Namespace`].
    pub namespace: Option<String>,
    /// Whether a missing `namespace` is an error (false when re-verifying
    /// after a fix, where gone is the goal).
    pub require_namespace: bool,
    /// Limit for each API request.
    pub request_timeout: Duration,
    /// Limit for each APIService probe.
    pub probe_timeout: Duration,
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Warn about CA certificates that expire within this many days.
    pub ca_warn_days: i64,
    /// Deletion older than this counts as stuck rather than in progress.
    pub stuck_after: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scope: ScopeKind::Terminating,
            namespace: None,
            require_namespace: true,
            request_timeout: Duration::from_secs(10),
            probe_timeout: Duration::from_secs(2),
            concurrency: 32,
            ca_warn_days: 30,
            stuck_after: Duration::from_secs(300),
        }
    }
}

/// Why a diagnosis could not produce a report at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server did not answer `/version`.
    #[error("reach the API server")]
    Unreachable(#[source] CallError),
    /// `-n NAME` names a namespace that does not exist.
    #[error("namespace {0:?} not found")]
    NamespaceNotFound(String),
    /// A fix could not be confirmed at the terminal.
    #[error("read the confirmation from the terminal")]
    Prompt(#[source] dialoguer::Error),
}

/// Runs every check and returns the report.
pub async fn diagnose(req: &Requester, cluster: &str, opts: &Options) -> Result<Report, Error> {
    let started = Instant::now();
    let requests_before = req.requests();
    let now = Timestamp::now();
    let mut unchecked: Vec<Unchecked> = Vec::new();
    req.progress().set_message("API server");
    let server_version = match req.call(req.client().apiserver_version()).await {
        Ok(info) => Some(info.git_version),
        Err(err @ (CallError::Transport(_) | CallError::Timeout(_))) => {
            return Err(Error::Unreachable(err));
        }
        Err(err) => {
            unchecked.push(err.unchecked("GET /version"));
            None
        }
    };

    req.progress()
        .set_message("APIServices, namespaces, webhooks");
    let (api, loaded, (discovered, discovery_unchecked), (webhooks, webhook_unchecked)) = tokio::join!(
        apiservices::collect(req, opts.probe_timeout, now),
        namespaces::load(req, opts.scope, opts.namespace.as_deref()),
        namespaces::discover(req),
        webhooks::collect(req),
    );
    if let Some(missing) = &loaded.missing
        && opts.require_namespace
    {
        return Err(Error::NamespaceNotFound(missing.clone()));
    }
    unchecked.extend(api.unchecked.iter().cloned());
    unchecked.extend(loaded.unchecked.iter().cloned());
    unchecked.extend(discovery_unchecked);
    unchecked.extend(webhook_unchecked);

    let api_findings = apiservices::findings(&api.reports, &api.sessions, opts.ca_warn_days, now);

    // Content of the namespaces in scope. Types served by an APIService that
    // is failing are not listed: that costs nothing and is already explained.
    let targets: BTreeSet<String> = loaded
        .namespaces
        .iter()
        .filter_map(|ns| ns.metadata.name.clone())
        .collect();
    let terminating: BTreeSet<String> = loaded
        .namespaces
        .iter()
        .filter(|ns| namespaces::is_terminating(ns))
        .filter_map(|ns| ns.metadata.name.clone())
        .collect();
    let mut skip: BTreeMap<String, String> = BTreeMap::new();
    for a in api.reports.iter().filter(|a| !a.local && !a.healthy) {
        skip.insert(
            a.group.clone(),
            format!(
                "not listed: APIService {} is not healthy (see its finding)",
                a.name
            ),
        );
    }
    let content = if targets.is_empty() {
        namespaces::Content::default()
    } else {
        req.progress()
            .set_message(format!("content of {} namespace(s)", targets.len()));
        namespaces::scan(req, &targets, &terminating, &discovered.resources, &skip).await
    };
    unchecked.extend(content.unchecked.iter().cloned());

    let needs_owners = content
        .objects
        .values()
        .flatten()
        .flat_map(|o| o.finalizers.iter())
        .chain(
            loaded
                .namespaces
                .iter()
                .flat_map(|ns| ns.spec.iter().flat_map(|s| s.finalizers.iter().flatten())),
        )
        .any(|f| f.contains('/'));
    let crds = if needs_owners {
        let (crds, more) = namespaces::crd_groups(req).await;
        unchecked.extend(more);
        crds
    } else {
        BTreeMap::new()
    };

    let (namespace_reports, namespace_findings, blocks) =
        namespaces::conclude(&namespaces::Inputs {
            namespaces: &loaded.namespaces,
            content: &content,
            api_services: &api.reports,
            api_findings: &api_findings,
            discovered: &discovered,
            crds: &crds,
            webhooks: &webhooks,
            now,
            stuck_after_seconds: opts.stuck_after.as_secs() as i64,
        });
    let webhook_findings = webhooks::findings(&webhooks);

    let mut findings: Vec<Finding> = Vec::new();
    findings.extend(api_findings);
    findings.extend(webhook_findings);
    findings.extend(namespace_findings);
    attach_blocks(&mut findings, &blocks, &api.sessions);
    dedup_unchecked(&mut unchecked);

    let sessions: Vec<SessionReport> = api
        .sessions
        .iter()
        .map(|s| {
            let mut objects: Vec<findings::ObjectRef> = s
                .api_services
                .iter()
                .map(|n| apiservices::api_service_ref(n))
                .collect();
            objects.extend(s.services.iter().cloned());
            if s.lease_exists {
                objects.push(apiservices::lease_ref(&s.check.id));
            }
            SessionReport {
                check: s.check.clone(),
                objects,
            }
        })
        .collect();

    let mut report = Report {
        api_version: REPORT_API_VERSION.to_owned(),
        kind: REPORT_KIND.to_owned(),
        cluster: cluster.to_owned(),
        server_version,
        generated_at: now.to_string(),
        duration_ms: 0,
        scope: Scope {
            namespaces: opts.scope,
            namespace: opts.namespace.clone(),
        },
        result: Outcome::of(&findings, &unchecked),
        summary: Summary::default(),
        api_services: api.reports,
        serve_sessions: sessions,
        namespaces: namespace_reports,
        webhooks,
        findings,
        unchecked,
        fix: None,
    };
    report.summary = summarize(&report, content.objects.values().map(Vec::len).sum());
    report.summary.requests = req.requests() - requests_before;
    report.summary.resource_types_listed = content.types_listed;
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Records on each APIService (and session) finding which namespaces it keeps
/// Terminating.
fn attach_blocks(
    findings: &mut [Finding],
    blocks: &BTreeMap<String, Vec<String>>,
    sessions: &[apiservices::Session],
) {
    let mut by_id: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (id, namespaces) in blocks {
        by_id
            .entry(id.clone())
            .or_default()
            .extend(namespaces.iter().cloned());
    }
    // A session's finding blocks what its APIServices block.
    for s in sessions {
        let session_id = format!(
            "{}:{}",
            findings::Code::ServeSessionExpired,
            findings::subject_key(&apiservices::lease_ref(&s.check.id))
        );
        let mut blocked = BTreeSet::new();
        for name in &s.api_services {
            let id = format!(
                "{}:{}",
                findings::Code::ApiServiceUnavailable,
                findings::subject_key(&apiservices::api_service_ref(name))
            );
            if let Some(ns) = by_id.get(&id) {
                blocked.extend(ns.iter().cloned());
            }
        }
        if !blocked.is_empty() {
            by_id.entry(session_id).or_default().extend(blocked);
        }
    }
    for f in findings.iter_mut() {
        if let Some(ns) = by_id.get(&f.id) {
            let mut all: BTreeSet<String> = f.blocks.iter().cloned().collect();
            all.extend(ns.iter().cloned());
            f.blocks = all.into_iter().collect();
        }
    }
}

fn dedup_unchecked(unchecked: &mut Vec<Unchecked>) {
    let mut seen = BTreeSet::new();
    unchecked.retain(|u| seen.insert((u.what.clone(), u.reason.clone())));
}

fn summarize(report: &Report, remaining_objects: usize) -> Summary {
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    Summary {
        api_services: report.api_services.len(),
        local_api_services: report.api_services.iter().filter(|a| a.local).count(),
        unhealthy_api_services: report.api_services.iter().filter(|a| !a.healthy).count(),
        namespaces: report.namespaces.len(),
        terminating_namespaces: report
            .namespaces
            .iter()
            .filter(|n| n.deletion_timestamp.is_some())
            .count(),
        blocked_namespaces: report.namespaces.iter().filter(|n| n.blocked).count(),
        resource_types_listed: 0,
        remaining_objects,
        webhooks: report.webhooks.len(),
        failing_webhooks: report
            .webhooks
            .iter()
            .filter(|w| w.failure_policy == "Fail" && !w.healthy)
            .count(),
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        infos: count(Severity::Info),
        unchecked: report.unchecked.len(),
        requests: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_are_shared_with_serve() {
        assert_eq!(SESSION_LABEL, "kubectl-cozy.io/session");
        assert_eq!(session_lease_name("3f2a"), "kubectl-cozy-3f2a");
        assert_eq!(SESSION_LEASE_NAMESPACE, "kube-system");
    }
}
