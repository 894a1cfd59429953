//! `kubectl cozy doctor`: APIService health and why namespaces are stuck in
//! Terminating, with a previewed, confirmed and re-verified fix.
//!
//! A run is [`diagnose`]: it reads the cluster in parallel (APIServices with a
//! live probe each, serve sessions, discovery, namespaces, webhooks; then
//! every namespaced resource type for the namespaces in scope) under one
//! concurrency limit and per-request timeouts ([`requester`]), and concludes
//! without further I/O ([`apiservices::findings`], [`namespaces::conclude`],
//! [`webhooks::findings`]) into a [`findings::Report`]. [`fix`] turns a
//! report into a plan and applies it (asking through a [`fix::Confirmer`]);
//! [`render`] prints reports and plans for people.
//!
//! Files: [`apiservices`], [`sessions`], [`discovery`], [`content`],
//! [`namespaces`] and [`webhooks`] each own one part of the cluster;
//! [`findings`] is the report schema; [`group`] says what many namespaces
//! share once in the human output.
//!
//! Sessions of `kubectl cozy serve` are read through the session contract
//! ([`crate::register::session`]: label, session namespace, Lease) and
//! reaped through [`crate::register::reap`] when their Lease is missing or
//! expired.

pub mod apiservices;
pub mod content;
pub mod discovery;
pub mod findings;
pub mod fix;
pub mod group;
pub mod namespaces;
pub mod render;
pub mod requester;
pub mod sessions;
pub mod standalone;
pub mod webhooks;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;

use k8s_openapi::api::core::v1::Namespace;

use findings::{
    ApiServiceReport, Finding, REPORT_API_VERSION, REPORT_KIND, Report, Scope, ScopeKind, Severity,
    Summary, Unchecked, Verdict, WebhookReport,
};
use requester::{CallError, Requester};

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
            probe_timeout: Duration::from_secs(5),
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
    /// `GET /version`, which every Kubernetes API server serves, answered
    /// 404, or with something that is not its JSON.
    #[error("not a Kubernetes API server (GET /version: {0})")]
    NotKubernetes(CallError),
    /// The API server refused the credentials (401).
    #[error("the API server refused the credentials (GET /version: {0})")]
    Unauthorized(CallError),
    /// `-n NAME` names a namespace that does not exist.
    #[error("namespace {0:?} not found")]
    NamespaceNotFound(String),
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
        Err(err @ CallError::NotJson(_)) => return Err(Error::NotKubernetes(err)),
        Err(err) if err.status() == Some(404) => return Err(Error::NotKubernetes(err)),
        Err(err) if err.status() == Some(401) => return Err(Error::Unauthorized(err)),
        Err(err) => {
            unchecked.push(err.unchecked("GET /version"));
            None
        }
    };

    if server_version
        .as_deref()
        .is_some_and(crate::version::is_kubectl_cozy_server)
    {
        return diagnose_standalone(
            req,
            cluster,
            server_version,
            opts,
            now,
            unchecked,
            started,
            requests_before,
        )
        .await;
    }

    req.progress()
        .set_message("APIServices, sessions, namespaces, webhooks");
    let (mut api, leases, loaded, (discovered, discovery_unchecked), (webhooks, webhook_unchecked)) = tokio::join!(
        apiservices::collect(req, opts.probe_timeout, now),
        sessions::list_leases(req),
        content::load(req, opts.scope, opts.namespace.as_deref()),
        discovery::discover(req),
        webhooks::collect(req),
    );
    if let Some(missing) = &loaded.missing
        && opts.require_namespace
    {
        return Err(Error::NamespaceNotFound(missing.clone()));
    }
    let found = sessions::collect(req, leases, &api.labelled, now).await;
    apiservices::attach_sessions(&mut api.reports, &found.sessions);
    unchecked.extend(api.unchecked.iter().cloned());
    unchecked.extend(found.unchecked.iter().cloned());
    unchecked.extend(loaded.unchecked.iter().cloned());
    unchecked.extend(discovery_unchecked);
    unchecked.extend(webhook_unchecked);

    // Types served by an APIService that is failing are not listed: that
    // costs nothing and is already explained.
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
    let (content, crds) =
        namespace_content(req, &loaded, &discovered, &skip, true, &mut unchecked).await;

    let mut report = conclude(Gathered {
        cluster,
        server_version,
        now,
        opts,
        api_services: api.reports,
        sessions: &found.sessions,
        namespaces: &loaded.namespaces,
        content: &content,
        discovered: &discovered,
        crds: &crds,
        webhooks,
        unchecked,
    });
    report.summary.requests = req.requests() - requests_before;
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// What the namespaces in scope hold (types in `skip` not listed), and,
/// when a finalizer there names a group and the server `has_crds`, the CRDs
/// of each group.
async fn namespace_content(
    req: &Requester,
    loaded: &content::Loaded,
    discovered: &discovery::Discovered,
    skip: &BTreeMap<String, String>,
    has_crds: bool,
    unchecked: &mut Vec<Unchecked>,
) -> (content::Content, BTreeMap<String, Vec<String>>) {
    let targets: BTreeSet<String> = loaded
        .namespaces
        .iter()
        .filter_map(|ns| ns.metadata.name.clone())
        .collect();
    let terminating: BTreeSet<String> = loaded
        .namespaces
        .iter()
        .filter(|ns| content::is_terminating(ns))
        .filter_map(|ns| ns.metadata.name.clone())
        .collect();
    let content = if targets.is_empty() {
        content::Content::default()
    } else {
        req.progress()
            .set_message(format!("content of {} namespace(s)", targets.len()));
        content::scan(req, &targets, &terminating, &discovered.resources, skip).await
    };
    unchecked.extend(content.unchecked.iter().cloned());

    let needs_owners = has_crds
        && content
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
        let (crds, more) = content::crd_groups(req).await;
        unchecked.extend(more);
        crds
    } else {
        BTreeMap::new()
    };
    (content, crds)
}

/// Everything a run read from the cluster.
struct Gathered<'a> {
    cluster: &'a str,
    server_version: Option<String>,
    now: Timestamp,
    opts: &'a Options,
    api_services: Vec<ApiServiceReport>,
    sessions: &'a [sessions::Session],
    namespaces: &'a [Namespace],
    content: &'a content::Content,
    discovered: &'a discovery::Discovered,
    crds: &'a BTreeMap<String, Vec<String>>,
    webhooks: Vec<WebhookReport>,
    unchecked: Vec<Unchecked>,
}

/// Concludes what was read into the report, without I/O (`requests` and
/// `durationMs` are the caller's to fill in).
fn conclude(g: Gathered<'_>) -> Report {
    let Gathered {
        cluster,
        server_version,
        now,
        opts,
        api_services,
        sessions,
        namespaces,
        content,
        discovered,
        crds,
        webhooks,
        mut unchecked,
    } = g;
    let mut api_findings = apiservices::findings(&api_services, sessions, opts.ca_warn_days, now);
    api_findings.extend(apiservices::unresponsive_findings(
        &api_services,
        &content.unresponsive,
    ));
    let (namespace_reports, namespace_findings, blocks) =
        namespaces::conclude(&namespaces::Inputs {
            namespaces,
            content,
            api_services: &api_services,
            api_findings: &api_findings,
            discovered,
            crds,
            webhooks: &webhooks,
            sessions,
            now,
            stuck_after_seconds: opts.stuck_after.as_secs() as i64,
        });
    let webhook_findings = webhooks::findings(&webhooks);

    let mut findings: Vec<Finding> = Vec::new();
    findings.extend(api_findings);
    findings.extend(webhook_findings);
    findings.extend(namespace_findings);
    attach_blocks(&mut findings, &blocks, sessions);
    dedup_unchecked(&mut unchecked);
    // One whose lists hang is not healthy, however Available it says it is
    // (judged after the namespaces, which tell it from a discovery failure).
    let mut api_services = api_services;
    for a in &mut api_services {
        if findings
            .iter()
            .any(|f| f.code == findings::Code::ApiServiceUnresponsive && f.subject.name == a.name)
        {
            a.healthy = false;
        }
    }

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
        result: Verdict::of(&findings, &unchecked),
        summary: Summary::default(),
        api_services,
        serve_sessions: sessions.iter().map(sessions::Session::report).collect(),
        namespaces: namespace_reports,
        webhooks,
        findings,
        unchecked,
        fix: None,
        standalone: None,
    };
    report.summary = summarize(&report, content.objects.values().map(Vec::len).sum());
    report.summary.resource_types_listed = content.types_listed;
    report
}

/// A standalone server ([`standalone`]): readiness, discovery, and the
/// namespaces in scope with what keeps them `Terminating`.
#[allow(clippy::too_many_arguments, reason = "the run's state, passed once")]
async fn diagnose_standalone(
    req: &Requester,
    cluster: &str,
    server_version: Option<String>,
    opts: &Options,
    now: Timestamp,
    mut unchecked: Vec<Unchecked>,
    started: Instant,
    requests_before: usize,
) -> Result<Report, Error> {
    req.progress().set_message("standalone server");
    let ((server, discovered, more), loaded) = tokio::join!(
        standalone::check(req),
        content::load(req, opts.scope, opts.namespace.as_deref()),
    );
    if let Some(missing) = &loaded.missing
        && opts.require_namespace
    {
        return Err(Error::NamespaceNotFound(missing.clone()));
    }
    unchecked.extend(more);
    unchecked.extend(loaded.unchecked.iter().cloned());
    let (content, crds) =
        // A standalone server serves no CRDs to name finalizers' owners by.
        namespace_content(req, &loaded, &discovered, &BTreeMap::new(), false, &mut unchecked).await;
    let mut report = conclude(Gathered {
        cluster,
        server_version,
        now,
        opts,
        api_services: Vec::new(),
        sessions: &[],
        namespaces: &loaded.namespaces,
        content: &content,
        discovered: &discovered,
        crds: &crds,
        webhooks: Vec::new(),
        unchecked,
    });
    report.standalone = Some(server);
    report.summary.requests = req.requests() - requests_before;
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Records on each APIService (and session) finding which namespaces it keeps
/// Terminating.
fn attach_blocks(
    findings: &mut [Finding],
    blocks: &BTreeMap<String, Vec<String>>,
    sessions: &[sessions::Session],
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
            findings::subject_key(&sessions::lease_ref(&s.check.namespace, &s.check.id))
        );
        let mut blocked = BTreeSet::new();
        for name in &s.api_services {
            let id = format!(
                "{}:{}",
                findings::Code::ApiServiceUnavailable,
                findings::subject_key(&findings::ObjectRef::api_service(name))
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
