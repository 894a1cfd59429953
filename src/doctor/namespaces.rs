//! Namespace checks: discovery (which resource types exist, which
//! group-versions fail), the namespaces in scope with their conditions, the
//! content still in them (every namespaced resource type listed in parallel,
//! metadata only), and the attribution of each blocker: discovery failures to
//! the APIService(s) behind them, remaining objects to their finalizers and the
//! finalizers to their owners.
//!
//! Collection talks to the cluster; [`conclude`] is pure and unit-tested.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use futures::future::join_all;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::discovery::v2::{ACCEPT_AGGREGATED_DISCOVERY_V2, APIGroupDiscoveryList};

use super::apiservices::api_service_ref;
use super::findings::{
    ApiServiceReport, Code, Condition, Evidence, Finding, NamespaceReport, ObjectRef,
    RemainingObject, Remedy, ScopeKind, Severity, Unchecked, WebhookReport,
};
use super::render::{ago, condition_text};
use super::request::{CallError, Requester};

/// A resource type discovery reported (the preferred version of its group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// API group (empty for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Verbs it supports.
    pub verbs: Vec<String>,
}

impl ResourceType {
    /// `group/version`, or `version` for core.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `plural` or `plural.group`, as kubectl names the type.
    pub fn label(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The kube-rs resource description.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }
}

/// What discovery returned.
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    /// Namespaced, listable resource types of each group's preferred version.
    pub resources: Vec<ResourceType>,
    /// Group-versions whose discovery fails (`group/version` → why).
    pub failed: BTreeMap<String, String>,
    /// Every group served (group → kinds).
    pub groups: BTreeMap<String, BTreeSet<String>>,
    /// Whether aggregated discovery (one request) was used.
    pub aggregated: bool,
}

/// Runs discovery: aggregated (`/api`, `/apis` as `APIGroupDiscoveryList`)
/// when the server offers it, else the legacy per-group documents in parallel.
pub async fn discover(req: &Requester) -> (Discovered, Vec<Unchecked>) {
    let timeout = req.timeout();
    let (core, apis) = tokio::join!(
        req.get_raw("/api", Some(ACCEPT_AGGREGATED_DISCOVERY_V2), timeout),
        req.get_raw("/apis", Some(ACCEPT_AGGREGATED_DISCOVERY_V2), timeout)
    );
    let parse = |r: &Result<(u16, Vec<u8>), CallError>| -> Option<APIGroupDiscoveryList> {
        match r {
            Ok((200, body)) => {
                let value: serde_json::Value = serde_json::from_slice(body).ok()?;
                (value["kind"] == "APIGroupDiscoveryList")
                    .then(|| serde_json::from_value(value).ok())
                    .flatten()
            }
            _ => None,
        }
    };
    if let (Some(core), Some(apis)) = (parse(&core), parse(&apis)) {
        let mut discovered = from_aggregated(core);
        let more = from_aggregated(apis);
        discovered.resources.extend(more.resources);
        discovered.failed.extend(more.failed);
        discovered.groups.extend(more.groups);
        discovered.aggregated = true;
        return (discovered, Vec::new());
    }
    legacy_discover(req).await
}

/// Reads an aggregated discovery document. Versions come in preference order;
/// a `Stale` version is one whose discovery fails (an unavailable APIService).
pub fn from_aggregated(list: APIGroupDiscoveryList) -> Discovered {
    let mut out = Discovered::default();
    for group in list.items {
        let name = group
            .metadata
            .as_ref()
            .and_then(|m| m.name.clone())
            .unwrap_or_default();
        let mut kinds = BTreeSet::new();
        for (index, version) in group.versions.iter().enumerate() {
            let v = version.version.clone().unwrap_or_default();
            let gv = if name.is_empty() {
                v.clone()
            } else {
                format!("{name}/{v}")
            };
            if version.freshness.as_deref() == Some("Stale") {
                out.failed
                    .insert(gv, "stale GroupVersion discovery".to_owned());
                continue;
            }
            for r in &version.resources {
                let kind = r
                    .response_kind
                    .as_ref()
                    .and_then(|k| k.kind.clone())
                    .unwrap_or_default();
                kinds.insert(kind.clone());
                if index != 0 {
                    continue;
                }
                let plural = r.resource.clone().unwrap_or_default();
                let namespaced = r.scope.as_deref() == Some("Namespaced");
                if namespaced && r.verbs.iter().any(|v| v == "list") && !plural.contains('/') {
                    out.resources.push(ResourceType {
                        group: name.clone(),
                        version: v.clone(),
                        kind,
                        plural,
                        namespaced,
                        verbs: r.verbs.clone(),
                    });
                }
            }
        }
        out.groups.insert(name, kinds);
    }
    out
}

async fn legacy_discover(req: &Requester) -> (Discovered, Vec<Unchecked>) {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList};
    let mut out = Discovered::default();
    let mut unchecked = Vec::new();
    let client = req.client().clone();
    let groups = match req.call(client.list_api_groups()).await {
        Ok(list) => list,
        Err(err) => {
            unchecked.push(err.unchecked("discovery (GET /apis)"));
            APIGroupList { groups: Vec::new() }
        }
    };
    let mut wanted: Vec<(String, String)> = vec![(String::new(), "v1".to_owned())];
    for g in groups.groups {
        let preferred = g
            .preferred_version
            .map(|p| p.version)
            .or_else(|| g.versions.first().map(|v| v.version.clone()));
        if let Some(v) = preferred {
            wanted.push((g.name, v));
        }
    }
    let results = join_all(wanted.iter().map(|(g, v)| {
        let client = client.clone();
        let (g, v) = (g.clone(), v.clone());
        async move {
            let r: Result<APIResourceList, CallError> = if g.is_empty() {
                req.call(client.list_core_api_resources(&v)).await
            } else {
                req.call(client.list_api_group_resources(&format!("{g}/{v}")))
                    .await
            };
            (g, v, r)
        }
    }))
    .await;
    for (g, v, r) in results {
        let gv = if g.is_empty() {
            v.clone()
        } else {
            format!("{g}/{v}")
        };
        match r {
            Ok(list) => {
                let kinds = out.groups.entry(g.clone()).or_default();
                for r in list.resources {
                    kinds.insert(r.kind.clone());
                    if r.namespaced && r.verbs.iter().any(|v| v == "list") && !r.name.contains('/')
                    {
                        out.resources.push(ResourceType {
                            group: g.clone(),
                            version: v.clone(),
                            kind: r.kind,
                            plural: r.name,
                            namespaced: true,
                            verbs: r.verbs,
                        });
                    }
                }
            }
            Err(err) => {
                out.groups.entry(g.clone()).or_default();
                out.failed.insert(gv, err.to_string());
            }
        }
    }
    (out, unchecked)
}

/// The namespaces in scope.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Namespaces (all for `-A`, the one for `-n`, else the Terminating ones).
    pub namespaces: Vec<Namespace>,
    /// For `-n`: whether the namespace exists.
    pub missing: Option<String>,
    /// What could not be read.
    pub unchecked: Vec<Unchecked>,
}

/// Reads the namespaces in scope.
pub async fn load(req: &Requester, scope: ScopeKind, namespace: Option<&str>) -> Loaded {
    let api: Api<Namespace> = Api::all(req.client().clone());
    let mut loaded = Loaded::default();
    match (scope, namespace) {
        (ScopeKind::Namespace, Some(name)) => match req.call(api.get_opt(name)).await {
            Ok(Some(ns)) => loaded.namespaces.push(ns),
            Ok(None) => loaded.missing = Some(name.to_owned()),
            Err(err) => loaded
                .unchecked
                .push(err.unchecked(format!("get namespace {name}"))),
        },
        _ => match req.call(api.list(&ListParams::default())).await {
            Ok(list) => {
                loaded.namespaces = list
                    .items
                    .into_iter()
                    .filter(|ns| scope == ScopeKind::All || is_terminating(ns))
                    .collect();
            }
            Err(err) => loaded.unchecked.push(err.unchecked("list namespaces")),
        },
    }
    loaded
        .namespaces
        .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    loaded
}

/// Terminating: deletion requested (the phase follows the timestamp).
pub fn is_terminating(ns: &Namespace) -> bool {
    ns.metadata.deletion_timestamp.is_some()
        || ns.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating")
}

/// Objects found by listing content.
#[derive(Debug, Default)]
pub struct Content {
    /// Namespace → objects (all objects of Terminating namespaces; objects
    /// being deleted that still have finalizers, elsewhere).
    pub objects: BTreeMap<String, Vec<RemainingObject>>,
    /// Resource types listed successfully.
    pub types_listed: usize,
    /// Resource types that could not be listed (or were skipped).
    pub types_failed: usize,
    /// What could not be listed, and why.
    pub unchecked: Vec<Unchecked>,
}

/// Lists every namespaced resource type for the namespaces in `targets`
/// (`terminating` is the subset whose whole content is wanted). Groups in
/// `skip` are not listed (their discovery or APIService is known to fail: one
/// unchecked entry each, no request). A group whose list times out is marked
/// dead and its other types are not requested either.
pub async fn scan(
    req: &Requester,
    targets: &BTreeSet<String>,
    terminating: &BTreeSet<String>,
    resources: &[ResourceType],
    skip: &BTreeMap<String, String>,
) -> Content {
    let mut content = Content::default();
    if targets.is_empty() {
        return content;
    }
    let mut skipped: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut todo = Vec::new();
    for r in resources {
        if let Some(reason) = skip.get(&r.group) {
            skipped.entry(reason.as_str()).or_default().push(r.label());
        } else {
            todo.push(r);
        }
    }
    for (reason, labels) in skipped {
        content.types_failed += labels.len();
        content.unchecked.push(Unchecked {
            what: format!("list {}", labels.join(", ")),
            reason: reason.to_owned(),
            status: None,
        });
    }
    let dead: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    // A few namespaces: list in each (works with namespace-scoped RBAC too).
    // Many: one cluster-wide list per type, per-namespace only when forbidden.
    let per_namespace = targets.len() <= 3;
    let results = join_all(
        todo.iter()
            .map(|r| list_type(req, r, targets, per_namespace, dead.clone())),
    )
    .await;
    for result in results {
        match result {
            Ok(items) => {
                content.types_listed += 1;
                for (ns, object) in items {
                    let keep = terminating.contains(&ns)
                        || (object.deletion_timestamp.is_some() && !object.finalizers.is_empty());
                    if keep {
                        content.objects.entry(ns).or_default().push(object);
                    }
                }
            }
            Err(unchecked) => {
                content.types_failed += 1;
                content.unchecked.extend(unchecked);
            }
        }
    }
    collapse_forbidden(&mut content.unchecked);
    for objects in content.objects.values_mut() {
        objects.sort_by(|a, b| {
            (&a.object.api_version, &a.object.kind, &a.object.name).cmp(&(
                &b.object.api_version,
                &b.object.kind,
                &b.object.name,
            ))
        });
    }
    content
}

/// Many types forbidden alike (limited RBAC) read better as one entry that
/// names them all and quotes the first refusal.
fn collapse_forbidden(unchecked: &mut Vec<Unchecked>) {
    let (forbidden, mut rest): (Vec<Unchecked>, Vec<Unchecked>) = std::mem::take(unchecked)
        .into_iter()
        .partition(|u| matches!(u.status, Some(401 | 403)));
    if forbidden.len() <= 3 {
        rest.extend(forbidden);
    } else {
        let names: Vec<&str> = forbidden
            .iter()
            .map(|u| u.what.strip_prefix("list ").unwrap_or(&u.what))
            .collect();
        rest.push(Unchecked {
            what: format!(
                "list {} namespaced resource types: {}",
                forbidden.len(),
                names.join(", ")
            ),
            reason: format!("{} (and alike for the others)", forbidden[0].reason),
            status: forbidden[0].status,
        });
    }
    *unchecked = rest;
}

type Listed = Vec<(String, RemainingObject)>;

async fn list_type(
    req: &Requester,
    r: &ResourceType,
    targets: &BTreeSet<String>,
    per_namespace: bool,
    dead: Arc<Mutex<BTreeMap<String, String>>>,
) -> Result<Listed, Vec<Unchecked>> {
    let ar = r.api_resource();
    if !per_namespace {
        let api: Api<DynamicObject> = Api::all_with(req.client().clone(), &ar);
        match list_all(req, r, &api, &dead).await {
            Ok(items) => {
                return Ok(items
                    .into_iter()
                    .filter(|(ns, _)| targets.contains(ns))
                    .collect());
            }
            Err(err) if err.is_forbidden() => {}
            Err(err) => return Err(vec![err.unchecked(format!("list {}", r.label()))]),
        }
    }
    let lists = join_all(targets.iter().map(|ns| {
        let api: Api<DynamicObject> = Api::namespaced_with(req.client().clone(), ns, &ar);
        let dead = dead.clone();
        async move { (ns, list_all(req, r, &api, &dead).await) }
    }))
    .await;
    let mut items = Vec::new();
    let mut unchecked = Vec::new();
    for (ns, result) in lists {
        match result {
            Ok(found) => items.extend(found),
            Err(err) => {
                unchecked.push(err.unchecked(format!("list {} in namespace {ns}", r.label())))
            }
        }
    }
    if unchecked.is_empty() {
        Ok(items)
    } else {
        Err(unchecked)
    }
}

/// Lists one type (all pages), metadata only.
async fn list_all(
    req: &Requester,
    r: &ResourceType,
    api: &Api<DynamicObject>,
    dead: &Mutex<BTreeMap<String, String>>,
) -> Result<Listed, CallError> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        if let Some(reason) = dead.lock().ok().and_then(|d| d.get(&r.group).cloned()) {
            return Err(CallError::Transport(format!(
                "not requested: an earlier list in group {} got {reason}",
                r.group
            )));
        }
        let mut params = ListParams::default().limit(500);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let page = match req.call(api.list_metadata(&params)).await {
            Ok(page) => page,
            Err(err) => {
                if (matches!(err, CallError::Timeout(_)) || err.status() == Some(503))
                    && let Ok(mut d) = dead.lock()
                {
                    d.entry(r.group.clone()).or_insert_with(|| err.to_string());
                }
                return Err(err);
            }
        };
        for item in page.items {
            let m = item.metadata;
            let ns = m.namespace.clone().unwrap_or_default();
            out.push((
                ns.clone(),
                RemainingObject {
                    object: ObjectRef {
                        api_version: r.api_version(),
                        kind: r.kind.clone(),
                        resource: r.plural.clone(),
                        namespace: Some(ns),
                        name: m.name.unwrap_or_default(),
                    },
                    finalizers: m.finalizers.unwrap_or_default(),
                    deletion_timestamp: m.deletion_timestamp.map(|t| t.0.to_string()),
                    resource_version: m.resource_version,
                },
            ));
        }
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            return Ok(out);
        }
    }
}

/// CRDs by group (for naming the owners of finalizers), read only when some
/// finalizer needs it.
pub async fn crd_groups(req: &Requester) -> (BTreeMap<String, Vec<String>>, Vec<Unchecked>) {
    let api: Api<CustomResourceDefinition> = Api::all(req.client().clone());
    match req.call(api.list_metadata(&ListParams::default())).await {
        Ok(list) => {
            let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for crd in list.items {
                let name = crd.metadata.name.unwrap_or_default();
                if let Some((_, group)) = name.split_once('.') {
                    groups
                        .entry(group.to_owned())
                        .or_default()
                        .push(name.clone());
                }
            }
            (groups, Vec::new())
        }
        Err(err) => (
            BTreeMap::new(),
            vec![err.unchecked("list customresourcedefinitions (to name finalizer owners)")],
        ),
    }
}

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
        _ => {}
    }
    let Some((domain, _)) = finalizer.split_once('/') else {
        return format!(
            "unknown: {finalizer:?} is not domain-qualified, so nothing names its owner"
        );
    };
    // How well a group matches the finalizer's domain: the same name, or the
    // domain inside the group (`finalizer.acme.cert-manager.io` and group
    // `acme.cert-manager.io`) name the owner; a group inside the domain
    // (`example.com` and `doctor-test.example.com`) only suggests it.
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
    let hedge = |score: u8| if score < 2 { "" } else { "possibly " };
    let best_crd = crds
        .iter()
        .filter_map(|(g, names)| closeness(g).map(|s| (s, g, names)))
        .min_by_key(|(s, g, _)| (*s, g.len()));
    let best_api = api_services
        .iter()
        .filter(|a| !a.local)
        .filter_map(|a| closeness(&a.group).map(|s| (s, a)))
        .min_by_key(|(s, a)| (*s, a.group.len()));
    let best_group = groups
        .iter()
        .filter_map(|(g, kinds)| closeness(g).map(|s| (s, g, kinds)))
        .min_by_key(|(s, g, _)| (*s, g.len()));
    let score = |o: Option<u8>| o.unwrap_or(u8::MAX);
    let crd_score = score(best_crd.map(|b| b.0));
    let api_score = score(best_api.map(|b| b.0));
    let group_score = score(best_group.map(|b| b.0));
    if let Some((s, group, names)) = best_crd.filter(|_| crd_score <= api_score.min(group_score)) {
        return format!(
            "{}the controller of CRD group {group} ({}); it removes the finalizer once its cleanup is done",
            hedge(s),
            names.join(", ")
        );
    }
    if let Some((s, a)) = best_api.filter(|_| api_score <= group_score) {
        return format!(
            "{}the extension API server behind APIService {} (group {})",
            hedge(s),
            a.name,
            a.group
        );
    }
    if let Some((s, group, kinds)) = best_group {
        let kinds: Vec<&str> = kinds.iter().map(String::as_str).take(5).collect();
        return format!(
            "{}the controller of API group {group} ({})",
            hedge(s),
            kinds.join(", ")
        );
    }
    format!(
        "unknown: no CRD, APIService or API group in the cluster matches {domain}; whatever added it may be gone"
    )
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
                f.subject == api_service_ref(&a.name)
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

fn conclude_one(
    inputs: &Inputs<'_>,
    ns: &Namespace,
    failing: &[(ApiServiceReport, String)],
    blocks: &mut BTreeMap<String, Vec<String>>,
) -> (NamespaceReport, Vec<Finding>) {
    let name = ns.metadata.name.clone().unwrap_or_default();
    let now = inputs.now;
    let terminating = is_terminating(ns);
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
    let deletion = ns.metadata.deletion_timestamp.as_ref().map(|t| t.0);
    let terminating_seconds = deletion.map(|t| now.as_second() - t.as_second());
    let remaining = inputs
        .content
        .objects
        .get(&name)
        .cloned()
        .unwrap_or_default();
    let mut report = NamespaceReport {
        name: name.clone(),
        phase: ns
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_else(|| "Active".into()),
        deletion_timestamp: deletion.map(|t| t.to_string()),
        terminating_seconds,
        resource_version: ns.metadata.resource_version.clone(),
        spec_finalizers: ns
            .spec
            .as_ref()
            .and_then(|s| s.finalizers.clone())
            .unwrap_or_default(),
        finalizers: ns.metadata.finalizers.clone().unwrap_or_default(),
        conditions: conditions.clone(),
        remaining: remaining.clone(),
        blocked: false,
    };
    let mut found = Vec::new();
    let subject = namespace_ref(&name);
    let cond = |t: &str| conditions.iter().find(|c| c.type_ == t);
    let cond_true = |t: &str| cond(t).filter(|c| c.status == "True");
    let cond_evidence = |c: &Condition| Evidence {
        source: format!("Namespace {name} status.conditions[{}]", c.type_),
        observed: condition_text(c, now),
    };
    let stuck = terminating_seconds.unwrap_or(0) >= inputs.stuck_after_seconds;

    if terminating {
        // 1. Discovery failures, attributed to APIServices.
        let discovery_cond = cond_true("NamespaceDeletionDiscoveryFailure");
        let named = discovery_cond
            .and_then(|c| c.message.as_deref())
            .map(group_versions_in)
            .unwrap_or_default();
        let mut attributed: Vec<&(ApiServiceReport, String)> = failing
            .iter()
            .filter(|(a, _)| named.contains(&format!("{}/{}", a.group, a.version)))
            .collect();
        if attributed.is_empty() {
            attributed = failing.iter().filter(|(a, _)| !a.local).collect();
        }
        if discovery_cond.is_some() || !attributed.is_empty() {
            let gvs: Vec<String> = if attributed.is_empty() {
                named.iter().cloned().collect()
            } else {
                attributed
                    .iter()
                    .map(|(a, _)| format!("{}/{}", a.group, a.version))
                    .collect()
            };
            let what = if gvs.is_empty() {
                format!("namespace {name} cannot finish deleting: API discovery fails")
            } else {
                format!(
                    "namespace {name} cannot finish deleting: API discovery fails for {}",
                    gvs.join(", ")
                )
            };
            let mut f = Finding::new(
                Code::NamespaceDiscoveryFailure,
                if attributed.is_empty() {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                subject.clone(),
                what,
                "the namespace controller must discover every namespaced resource type before it removes the `kubernetes` \
                 finalizer; while any group's discovery fails it keeps retrying, and this holds for EVERY Terminating \
                 namespace in the cluster, not only this one",
            );
            match discovery_cond {
                Some(c) => f.evidence.push(cond_evidence(c)),
                None => f.evidence.push(Evidence {
                    source: format!("Namespace {name} status.conditions[NamespaceDeletionDiscoveryFailure]"),
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
                if let Some(reason) = inputs
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
                f.evidence.push(Evidence {
                    source: "APIServices now".into(),
                    observed: "none is unavailable now; the namespace controller's next retry should get past discovery".into(),
                });
            }
            f.blocks = vec![name.clone()];
            let deletes: Vec<String> = attributed
                .iter()
                .filter(|(a, _)| !a.local)
                .map(|(a, _)| a.name.clone())
                .collect();
            if !deletes.is_empty() {
                f.remedy = Some(Remedy {
                    description: "make the APIService(s) available again, or delete them if their API is gone for good; \
                                  the namespace controller then finishes on its own"
                        .into(),
                    command: format!("kubectl delete apiservice {}", deletes.join(" ")),
                    automatic: true,
                });
            }
            found.push(f);
        }

        // 2. Group-version parsing failures (verbatim).
        if let Some(c) = cond_true("NamespaceDeletionGroupVersionParsingFailure") {
            let mut f = Finding::new(
                Code::NamespaceGroupVersionParsingFailure,
                Severity::Error,
                subject.clone(),
                format!(
                    "namespace {name} cannot finish deleting: a group-version in discovery does not parse"
                ),
                "the namespace controller cannot build the list of resource types to delete",
            );
            f.evidence.push(cond_evidence(c));
            f.blocks = vec![name.clone()];
            found.push(f);
        }

        // 3. Content: objects with finalizers, then objects without.
        let discovery_blocked = failing.iter().any(|(a, _)| !a.local);
        let mut plain = Vec::new();
        for object in &remaining {
            if object.finalizers.is_empty() {
                plain.push(object);
                continue;
            }
            found.push(finalizer_finding(
                inputs,
                object,
                &name,
                failing,
                discovery_blocked,
                true,
            ));
        }
        if !plain.is_empty() {
            let severity = if stuck {
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
                subject.clone(),
                format!("{} object(s) without finalizers remain in namespace {name}", plain.len()),
                "the namespace controller deletes these itself; if they stay, its deletes fail (see NamespaceDeletionContentFailure) \
                 or it is not running",
            )
            .evidence(
                format!("list of namespaced resource types in {name}"),
                if plain.len() > listed.len() {
                    format!("{} and {} more", listed.join(", "), plain.len() - listed.len())
                } else {
                    listed.join(", ")
                },
            );
            if let Some(c) = cond_true("NamespaceDeletionContentFailure") {
                f.evidence.push(cond_evidence(c));
            }
            f.blocks = vec![name.clone()];
            f.remedy = Some(Remedy {
                description: "find out why the namespace controller's deletes fail (condition above, kube-controller-manager log); \
                              deleting by hand shows the error"
                    .into(),
                command: format!(
                    "kubectl delete -n {name} {}",
                    plain.iter().take(20).map(|o| o.object.kubectl_name()).collect::<Vec<_>>().join(" ")
                ),
                automatic: false,
            });
            found.push(f);
        }

        // 4. Finalizers on the namespace itself.
        let custom: Vec<&String> = report
            .spec_finalizers
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
                subject.clone(),
                format!(
                    "namespace {name} carries spec.finalizers {} that the namespace controller does not remove",
                    custom.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                ),
                "only whatever added these finalizers removes them; the namespace stays Terminating until it does",
            )
            .evidence(
                format!("Namespace {name} spec.finalizers"),
                format!("{:?}", report.spec_finalizers),
            );
            f.owner = Some(owners.join("; "));
            f.blocks = vec![name.clone()];
            f.remedy = Some(finalize_remedy(&name));
            found.push(f);
        }
        if !report.finalizers.is_empty() {
            let ns_object = RemainingObject {
                object: subject.clone(),
                finalizers: report.finalizers.clone(),
                deletion_timestamp: report.deletion_timestamp.clone(),
                resource_version: ns.metadata.resource_version.clone(),
            };
            let mut f =
                finalizer_finding(inputs, &ns_object, &name, failing, discovery_blocked, true);
            f.code = Code::NamespaceFinalizerRemaining;
            f.id = format!(
                "{}:{}",
                Code::NamespaceFinalizerRemaining,
                super::findings::subject_key(&subject)
            );
            found.push(f);
        }

        // 5. Webhooks named in conditions.
        for c in conditions.iter().filter(|c| c.status == "True") {
            let Some(message) = &c.message else { continue };
            for w in inputs
                .webhooks
                .iter()
                .filter(|w| message.contains(&format!("\"{}\"", w.webhook)))
            {
                let id = super::webhooks::finding_id(w);
                for f in found.iter_mut() {
                    if !f.caused_by.contains(&id) {
                        f.caused_by.push(id.clone());
                    }
                }
                blocks.entry(id).or_default().push(name.clone());
            }
        }

        // 6. Terminating with no blocker found.
        if found.is_empty() {
            let reported = cond_true("NamespaceFinalizersRemaining")
                .or_else(|| cond_true("NamespaceContentRemaining"));
            let severity = if stuck || reported.is_some() {
                Severity::Warning
            } else {
                Severity::Info
            };
            let unlisted = inputs.content.types_failed;
            let what = match reported {
                Some(_) => format!(
                    "namespace {name} has been Terminating for {}; the namespace controller reports content left that \
                     doctor could not find{}",
                    ago_plain(terminating_seconds.unwrap_or(0)),
                    if unlisted > 0 {
                        format!(
                            " ({unlisted} resource type(s) could not be listed: see NOT CHECKED)"
                        )
                    } else {
                        String::new()
                    }
                ),
                None => format!(
                    "namespace {name} has been Terminating for {} and no blocker was found",
                    ago_plain(terminating_seconds.unwrap_or(0))
                ),
            };
            let mut f = Finding::new(
                Code::NamespaceTerminating,
                severity,
                subject.clone(),
                what,
                if conditions.is_empty() {
                    "status.conditions is empty: the namespace controller has not processed this namespace — is \
                     kube-controller-manager running?"
                } else if reported.is_some() {
                    "the conditions below (verbatim from the namespace controller) say what is left"
                } else {
                    "no remaining object, failing discovery or foreign finalizer was found; the namespace controller may \
                     still be working (it retries with back-off)"
                },
            );
            f.evidence.extend(conditions.iter().map(cond_evidence));
            f.evidence.push(Evidence {
                source: format!("list of namespaced resource types in {name}"),
                observed: if unlisted > 0 {
                    format!(
                        "no objects found in {} resource type(s); {unlisted} could not be listed",
                        inputs.content.types_listed
                    )
                } else {
                    format!(
                        "no objects found in {} resource type(s)",
                        inputs.content.types_listed
                    )
                },
            });
            f.blocks = vec![name.clone()];
            f.remedy = Some(finalize_remedy(&name));
            found.push(f);
        } else if let Some(c) = cond_true("NamespaceDeletionContentFailure")
            && !found.iter().any(|f| f.code == Code::ContentRemaining)
        {
            // Keep the content failure visible next to the other blockers.
            if let Some(f) = found.first_mut() {
                f.evidence.push(cond_evidence(c));
            }
        }
    } else {
        // Not Terminating (-A or -n): objects stuck in deletion.
        for object in &remaining {
            let since = object
                .deletion_timestamp
                .as_deref()
                .and_then(|t| t.parse::<Timestamp>().ok())
                .map(|t| now.as_second() - t.as_second())
                .unwrap_or(0);
            if object.finalizers.is_empty() || since < inputs.stuck_after_seconds {
                continue;
            }
            let mut f = finalizer_finding(inputs, object, &name, failing, false, false);
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
        report
            .remaining
            .retain(|o| o.deletion_timestamp.is_some() && !o.finalizers.is_empty());
    }
    report.blocked = terminating && found.iter().any(|f| f.severity != Severity::Info);
    (report, found)
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
    let what = if blocks_namespace {
        format!(
            "{} {} has finalizer(s) {finalizers} and keeps namespace {namespace} Terminating",
            object.object.kind.to_lowercase(),
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
    let mut f = Finding::new(
        Code::FinalizerBlocking,
        Severity::Error,
        object.object.clone(),
        what,
        "an object is only removed once every finalizer on it is removed by its owner; until then the namespace \
         controller cannot finish",
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
    f.remedy = Some(Remedy {
        description: "remove the finalizer(s): whatever they guard (external resources, cleanup) is skipped; the \
                      resourceVersion makes the patch fail if the object changed since it was read"
            .into(),
        command: format!(
            "kubectl patch {} --type=merge -p '{}'",
            object.object.kubectl_args(),
            patch
        ),
        automatic: blocks_namespace,
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

fn ago_plain(seconds: i64) -> String {
    ago(seconds).trim_end_matches(" ago").to_owned()
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
    use crate::doctor::findings::{Probe, ServiceCheck};

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
        conclude(&Inputs {
            namespaces,
            content,
            api_services,
            api_findings: &[],
            discovered: &discovered,
            crds: &crds,
            webhooks: &[],
            now: now(),
            stuck_after_seconds: 300,
        })
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

    #[test]
    fn aggregated_discovery_marks_stale_versions_failed() {
        let list: APIGroupDiscoveryList = serde_json::from_value(serde_json::json!({
            "kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "items": [
                {"metadata": {"name": "apps"}, "versions": [{"version": "v1", "freshness": "Current", "resources": [
                    {"resource": "deployments", "responseKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                     "scope": "Namespaced", "verbs": ["list", "delete"]},
                    {"resource": "deployments/status", "responseKind": {"kind": "Deployment"}, "scope": "Namespaced", "verbs": ["get"]}
                ]}]},
                {"metadata": {"name": "doctor-test.example.com"}, "versions": [{"version": "v1alpha1", "freshness": "Stale"}]}
            ]
        }))
        .unwrap();
        let d = from_aggregated(list);
        assert_eq!(d.resources.len(), 1);
        assert_eq!(d.resources[0].label(), "deployments.apps");
        assert!(d.failed.contains_key("doctor-test.example.com/v1alpha1"));
    }
}
