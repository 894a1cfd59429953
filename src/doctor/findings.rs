//! The report `kubectl cozy doctor` produces: the stable schema behind
//! `-o json|yaml` (documented in `docs/doctor.md`), the finding codes, and the
//! exit status a report maps to.
//!
//! Compatibility rule: within `apiVersion: kubectl-cozy.io/v1alpha1`, fields are
//! only ever added; a finding `code` never changes meaning. Every finding carries
//! the evidence it was derived from, as read from the cluster.

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::RuleWithOperations;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};

/// `apiVersion` of a [`Report`].
pub const REPORT_API_VERSION: &str = "kubectl-cozy.io/v1alpha1";
/// `kind` of a [`Report`].
pub const REPORT_KIND: &str = "DoctorReport";

/// Everything one doctor run saw, concluded and (with `--fix`) did.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always [`REPORT_API_VERSION`].
    pub api_version: String,
    /// Always [`REPORT_KIND`].
    pub kind: String,
    /// The API server URL that was diagnosed.
    pub cluster: String,
    /// The server's `gitVersion`, when `/version` answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// When the diagnosis started (RFC 3339).
    pub generated_at: String,
    /// Wall time of the diagnosis, in milliseconds.
    pub duration_ms: u64,
    /// Which namespaces were examined.
    pub scope: Scope,
    /// The verdict, which decides the exit code.
    pub result: Verdict,
    /// Counts, for the summary table and for scripts.
    pub summary: Summary,
    /// Every APIService and what was checked about it.
    pub api_services: Vec<ApiServiceReport>,
    /// `kubectl cozy serve` sessions found through their label, and what each
    /// left in the cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub serve_sessions: Vec<SessionReport>,
    /// The namespaces in scope (Terminating ones by default).
    pub namespaces: Vec<NamespaceReport>,
    /// Admission webhooks whose backend is a Service, and its state.
    pub webhooks: Vec<WebhookReport>,
    /// Problems, each with evidence and a fix.
    pub findings: Vec<Finding>,
    /// What could not be checked (permissions, timeouts) and why.
    pub unchecked: Vec<Unchecked>,
    /// With `--fix`: the plan, what was applied, and the state afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixReport>,
    /// Set when the server is a kubectl-cozy standalone server, which has
    /// none of what the other sections check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standalone: Option<StandaloneServer>,
}

/// What doctor saw of a kubectl-cozy standalone server ([`super::standalone`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StandaloneServer {
    /// `/readyz` answered 200.
    pub ready: bool,
    /// Served resources as `plural.group/version`.
    pub resources: Vec<String>,
}

/// The namespaces a run examined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// `terminating` (default), `namespace` (`-n`) or `all` (`-A`).
    pub namespaces: ScopeKind,
    /// The namespace given with `-n`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// See [`Scope::namespaces`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ScopeKind {
    /// Every namespace that is Terminating.
    Terminating,
    /// One namespace, whatever its phase.
    Namespace,
    /// Every namespace (objects stuck in deletion in active namespaces too).
    All,
}

/// The verdict of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Everything in scope was checked and nothing is wrong (exit 0).
    Healthy,
    /// At least one finding of severity `error` or `warning` (exit 3).
    ProblemsFound,
    /// Nothing wrong was found, but some checks could not run (exit 5).
    Incomplete,
}

impl Verdict {
    /// The verdict for a set of findings and unchecked items.
    pub fn of(findings: &[Finding], unchecked: &[Unchecked]) -> Verdict {
        if findings.iter().any(|f| f.severity != Severity::Info) {
            Verdict::ProblemsFound
        } else if !unchecked.is_empty() {
            Verdict::Incomplete
        } else {
            Verdict::Healthy
        }
    }
}

/// Counts over the report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// APIServices listed.
    pub api_services: usize,
    /// Of those, served by kube-apiserver itself (no `spec.service`).
    pub local_api_services: usize,
    /// Of those, not `Available=True` or failing the live probe.
    pub unhealthy_api_services: usize,
    /// Namespaces examined.
    pub namespaces: usize,
    /// Of those, Terminating.
    pub terminating_namespaces: usize,
    /// Of those, with at least one blocker found.
    pub blocked_namespaces: usize,
    /// Namespaced resource types listed for content.
    pub resource_types_listed: usize,
    /// Objects found in Terminating namespaces (or stuck in deletion).
    pub remaining_objects: usize,
    /// Webhooks with a Service backend.
    pub webhooks: usize,
    /// Of those, with `failurePolicy: Fail` and no working backend.
    pub failing_webhooks: usize,
    /// Findings of severity `error`.
    pub errors: usize,
    /// Findings of severity `warning`.
    pub warnings: usize,
    /// Findings of severity `info`.
    pub infos: usize,
    /// Entries in `unchecked`.
    pub unchecked: usize,
    /// API requests the run made.
    pub requests: usize,
}

/// A condition, verbatim from the object's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `type`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `lastTransitionTime` (RFC 3339): since when the condition holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// One APIService and what doctor found out about it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiServiceReport {
    /// `<version>.<group>`.
    pub name: String,
    /// `metadata.uid` (deletions by `--fix` are preconditioned on it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `spec.group`.
    pub group: String,
    /// `spec.version`.
    pub version: String,
    /// Served by kube-apiserver itself (no `spec.service`).
    pub local: bool,
    /// The `Available` condition, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<Condition>,
    /// The backing Service, for aggregated APIServices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceCheck>,
    /// `spec.insecureSkipTLSVerify`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure_skip_tls_verify: bool,
    /// The certificates in `spec.caBundle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<CaBundleCheck>,
    /// The live `GET /apis/<group>/<version>` through kube-apiserver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
    /// The `kubectl cozy serve` session that registered it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionCheck>,
    /// Available, probe answered 2xx, and nothing else wrong.
    pub healthy: bool,
}

/// The Service an APIService or webhook points at.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceCheck {
    /// Service namespace.
    pub namespace: String,
    /// Service name.
    pub name: String,
    /// The port requested (`spec.service.port`; 443 when unset).
    pub port: i32,
    /// Whether the Service exists; absent when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    /// `spec.type` (`ClusterIP` when unset).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `spec.externalName`, for ExternalName Services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_name: Option<String>,
    /// Ready endpoints serving the port (ClusterIP Services only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_endpoints: Option<usize>,
    /// Why the Service or its endpoints could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The parsed `caBundle`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaBundleCheck {
    /// One entry per certificate in the bundle.
    pub certificates: Vec<CertificateInfo>,
    /// Why the bundle does not parse, when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One CA certificate.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateInfo {
    /// Subject DN.
    pub subject: String,
    /// `notAfter` (RFC 3339).
    pub not_after: String,
    /// Whole days until `notAfter` (negative once expired).
    pub days_left: i64,
}

/// A live request through kube-apiserver to the group-version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    /// The path requested.
    pub path: String,
    /// HTTP status, when an answer came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Time to the answer (or to the timeout), in milliseconds.
    pub latency_ms: u64,
    /// Whether the answer was 2xx.
    pub ok: bool,
    /// The error or the start of a non-2xx body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A `kubectl cozy serve` session, seen through its Lease.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCheck {
    /// The value of the session label.
    pub id: String,
    /// `<session namespace>/kubectl-cozy-<id>`.
    pub lease: String,
    /// The session namespace (where its Lease is).
    #[serde(default)]
    pub namespace: String,
    /// What the Lease says.
    pub state: SessionState,
    /// `spec.holderIdentity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    /// `spec.renewTime` (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_time: Option<String>,
    /// `spec.leaseDurationSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration_seconds: Option<i32>,
    /// Seconds since the Lease expired (when expired).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired_for_seconds: Option<i64>,
    /// Seconds until the Lease expires unless renewed (when alive):
    /// `renewTime + leaseDurationSeconds` minus the time of the diagnosis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_seconds: Option<i64>,
    /// The pid of the session's process when the Lease records one that
    /// ran on this machine and is gone: the session is dead (`expired`)
    /// however long its Lease has to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_gone: Option<u32>,
    /// The pid of its `serve` process when the Lease records one that runs
    /// on this machine and is stopped (SIGSTOP, a debugger): alive, but
    /// renewing nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_stopped: Option<u32>,
}

/// A serve session and the objects carrying its label.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReport {
    /// The session and its Lease.
    #[serde(flatten)]
    pub check: SessionCheck,
    /// Objects found carrying its label (what reaping restores or deletes),
    /// in the order a reap acts on them.
    pub objects: Vec<ObjectRef>,
    /// The group/versions it serves (its Lease's annotation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub served: Vec<String>,
    /// How kube-apiserver reached it (its Lease's annotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// When it started (RFC 3339; its Lease's annotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// The ConfigMap keeping the originals of the APIServices it took over;
    /// reaping restores those instead of deleting them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_api_services: Option<ObjectRef>,
}

/// Liveness of a serve session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SessionState {
    /// Renewed within its duration.
    Alive,
    /// `renewTime + leaseDurationSeconds` is in the past (or unset).
    Expired,
    /// No Lease: the session is gone.
    Missing,
    /// The Lease could not be read.
    Unknown,
}

impl Report {
    /// The object `object` as a namespace's content lists it (its
    /// finalizers, deletion, resourceVersion).
    pub fn remaining_of(&self, object: &ObjectRef) -> Option<&RemainingObject> {
        self.namespaces
            .iter()
            .flat_map(|n| n.remaining.iter())
            .find(|o| &o.object == object)
    }
}

/// One namespace in scope.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceReport {
    /// Name.
    pub name: String,
    /// `status.phase`.
    pub phase: String,
    /// `metadata.deletionTimestamp` (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// Seconds since deletion was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating_seconds: Option<i64>,
    /// `metadata.resourceVersion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `metadata.uid` (what a planned delete of the namespace is guarded by).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `spec.finalizers` (`kubernetes` until content is gone).
    pub spec_finalizers: Vec<String>,
    /// `metadata.finalizers`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    /// `status.conditions`, verbatim.
    pub conditions: Vec<Condition>,
    /// Objects still in the namespace (Terminating namespaces), or stuck in
    /// deletion (other namespaces with `-A`).
    pub remaining: Vec<RemainingObject>,
    /// Whether at least one blocker was identified.
    pub blocked: bool,
    /// The failing webhooks (their findings' ids) that reject the
    /// namespace's `finalize` (`PUT /api/v1/namespaces/NAME/finalize`), so
    /// `--finalize-namespaces` cannot clear its `spec.finalizers`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalize_rejected_by: Vec<String>,
}

/// An object found in a namespace.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemainingObject {
    /// The object.
    #[serde(flatten)]
    pub object: ObjectRef,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
    /// `metadata.deletionTimestamp` (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// `metadata.resourceVersion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `metadata.labels` (what a webhook's objectSelector matches).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// One admission webhook that calls a Service.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookReport {
    /// `ValidatingWebhookConfiguration` or `MutatingWebhookConfiguration`.
    pub kind: String,
    /// The configuration's name.
    pub configuration: String,
    /// The webhook's name.
    pub webhook: String,
    /// `failurePolicy` (`Fail` when unset).
    pub failure_policy: String,
    /// Operations it intercepts, as `OPERATION resource.group`.
    pub rules: Vec<String>,
    /// `namespaceSelector`, when it selects less than every namespace: it
    /// intercepts requests only in the namespaces it selects (and for the
    /// namespaces it selects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// `objectSelector`, when it selects less than every object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<LabelSelector>,
    /// The rules as the configuration has them, to match requests against
    /// (`rules` says them in words).
    #[serde(skip)]
    pub intercepts: Vec<RuleWithOperations>,
    /// The backend Service.
    pub service: ServiceCheck,
    /// Whether its backend looks reachable (Service exists, endpoints ready).
    pub healthy: bool,
}

/// An object reference that is enough to act on the object.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// The resource (plural), for URLs and kubectl.
    pub resource: String,
    /// Namespace, for namespaced objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// An APIService, for references and fix actions.
    pub fn api_service(name: &str) -> ObjectRef {
        ObjectRef::cluster(
            "apiregistration.k8s.io/v1",
            "APIService",
            "apiservices",
            name,
        )
    }

    /// A cluster-scoped object.
    pub fn cluster(api_version: &str, kind: &str, resource: &str, name: &str) -> ObjectRef {
        ObjectRef {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            resource: resource.to_owned(),
            namespace: None,
            name: name.to_owned(),
        }
    }

    /// The API group (empty for the core group).
    pub fn group(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map(|(g, _)| g)
            .unwrap_or("")
    }

    /// The API version without the group.
    pub fn version(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map(|(_, v)| v)
            .unwrap_or(&self.api_version)
    }

    /// How kubectl names it unambiguously: `configmaps/x`, `widgets.example.com/x`.
    pub fn kubectl_name(&self) -> String {
        match self.group() {
            "" => format!("{}/{}", self.resource, self.name),
            group => format!("{}.{}/{}", self.resource, group, self.name),
        }
    }

    /// As `kubectl get -o name` prints it: the lower-case kind, `.group`
    /// unless core, `/name` — `configmap/x`,
    /// `apiservice.apiregistration.k8s.io/x` — without the namespace, as
    /// kubectl prints it.
    pub fn kubectl_object_name(&self) -> String {
        let kind = self.kind.to_lowercase();
        match self.group() {
            "" => format!("{kind}/{}", self.name),
            group => format!("{kind}.{group}/{}", self.name),
        }
    }

    /// `kubectl_name` plus ` -n <ns>` for namespaced objects.
    pub fn kubectl_args(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} -n {}", self.kubectl_name(), ns),
            None => self.kubectl_name(),
        }
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{}/{} in namespace {}", self.kind, self.name, ns),
            None => write!(f, "{}/{}", self.kind, self.name),
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Severity {
    /// Breaks something now (exit 3).
    Error,
    /// Will break something, or may be stuck (exit 3).
    Warning,
    /// Worth knowing; does not change the exit code.
    Info,
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// What kind of problem a finding is. Codes are stable; see `docs/doctor.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Code {
    /// An APIService is not `Available=True`; it fails discovery for every
    /// client and stalls every namespace deletion in the cluster.
    #[serde(rename = "APIServiceUnavailable")]
    ApiServiceUnavailable,
    /// An APIService says Available but the live probe failed or timed out.
    #[serde(rename = "APIServiceProbeFailed")]
    ApiServiceProbeFailed,
    /// `spec.caBundle` does not parse as PEM certificates.
    #[serde(rename = "APIServiceCABundleInvalid")]
    ApiServiceCaBundleInvalid,
    /// A certificate in `spec.caBundle` has expired.
    #[serde(rename = "APIServiceCABundleExpired")]
    ApiServiceCaBundleExpired,
    /// A certificate in `spec.caBundle` expires within the warning window.
    #[serde(rename = "APIServiceCABundleExpiring")]
    ApiServiceCaBundleExpiring,
    /// An APIService answers discovery, but lists of its resources time
    /// out or answer 503: the namespace controller cannot finish deleting
    /// any namespace (NamespaceDeletionContentFailure).
    #[serde(rename = "APIServiceUnresponsive")]
    ApiServiceUnresponsive,
    /// A `kubectl cozy serve` session left objects behind and its Lease expired.
    ServeSessionExpired,
    /// A Terminating namespace cannot finish because API discovery fails.
    NamespaceDiscoveryFailure,
    /// A Terminating namespace cannot finish because a group-version does not parse.
    NamespaceGroupVersionParsingFailure,
    /// A Terminating namespace cannot finish because the lists (and so the
    /// deletes) of an aggregated group's resources do not answer.
    NamespaceContentFailure,
    /// An object with finalizers keeps a Terminating namespace alive.
    FinalizerBlocking,
    /// Objects without finalizers remain in a Terminating namespace.
    ContentRemaining,
    /// A Terminating namespace carries a finalizer nothing known removes.
    NamespaceFinalizerRemaining,
    /// The namespace controller reports objects with finalizers in a
    /// Terminating namespace (`NamespaceFinalizersRemaining`) that doctor did
    /// not find (their types could not be listed).
    FinalizersRemainingUnlisted,
    /// A namespace is Terminating and no blocker was found (may still be in progress).
    NamespaceTerminating,
    /// A Terminating namespace with no finalizer left (its `spec.finalizers`
    /// were cleared before its delete): kube-apiserver removes it only when
    /// it is deleted again, and nothing else ever does.
    NamespaceFinalizedNotDeleted,
    /// An object outside a Terminating namespace has been stuck in deletion.
    ObjectDeletionStuck,
    /// A `failurePolicy: Fail` webhook has no working backend: the requests it
    /// intercepts are rejected cluster-wide.
    WebhookBackendUnavailable,
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The serde name is the documented one.
        let text = serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        f.write_str(&text)
    }
}

/// One problem: what, why, the evidence, and the fix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Stable within a report: `<code>:<subject>`.
    pub id: String,
    /// The kind of problem.
    pub code: Code,
    /// How bad it is.
    pub severity: Severity,
    /// The object the finding is about.
    pub subject: ObjectRef,
    /// What is wrong, in one sentence.
    pub what: String,
    /// Why it matters or why it happens.
    pub why: String,
    /// What was read from the cluster to conclude this.
    pub evidence: Vec<Evidence>,
    /// Namespaces this keeps Terminating.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<String>,
    /// Ids of the findings this one is attributed to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caused_by: Vec<String>,
    /// Who is expected to act (e.g. the owner of a finalizer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// What the evidence suggests beyond what was read (e.g. that a serve
    /// session whose Lease is still valid has died).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// How to fix it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remedy: Option<Remedy>,
}

impl Finding {
    /// A finding with its id derived from code and subject.
    pub fn new(
        code: Code,
        severity: Severity,
        subject: ObjectRef,
        what: impl Into<String>,
        why: impl Into<String>,
    ) -> Finding {
        let id = format!("{code}:{}", subject_key(&subject));
        Finding {
            id,
            code,
            severity,
            subject,
            what: what.into(),
            why: why.into(),
            evidence: Vec::new(),
            blocks: Vec::new(),
            caused_by: Vec::new(),
            owner: None,
            hint: None,
            remedy: None,
        }
    }

    /// Adds a piece of evidence.
    pub fn evidence(mut self, source: impl Into<String>, observed: impl Into<String>) -> Self {
        self.evidence.push(Evidence {
            source: source.into(),
            observed: observed.into(),
        });
        self
    }

    /// Sets the remedy.
    pub fn remedy(mut self, remedy: Remedy) -> Self {
        self.remedy = Some(remedy);
        self
    }
}

/// `kind/namespace/name` or `kind/name`, lower-case kind: the subject part of ids.
pub fn subject_key(subject: &ObjectRef) -> String {
    let kind = subject.kind.to_lowercase();
    match &subject.namespace {
        Some(ns) => format!("{kind}/{ns}/{}", subject.name),
        None => format!("{kind}/{}", subject.name),
    }
}

/// One observation from the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// Where it was read, e.g. `APIService v1.x status.conditions[Available]`.
    pub source: String,
    /// What was there.
    pub observed: String,
}

/// How to fix a finding.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remedy {
    /// What the fix does and what it risks.
    pub description: String,
    /// The exact command that would fix it.
    pub command: String,
    /// Whether `kubectl cozy doctor --fix` plans it (some need an extra flag).
    pub automatic: bool,
}

/// What the `unchecked` entry of an [`AfterFix`] says when the diagnosis
/// after the fix failed (its reason is the error).
pub const DIAGNOSIS_AFTER: &str = "the diagnosis after the fix";

/// Something doctor could not check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unchecked {
    /// What was not checked, e.g. `list apiservices.apiregistration.k8s.io`.
    pub what: String,
    /// Why, as the server (or the timeout) said.
    pub reason: String,
    /// HTTP status, when the server answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// The `--fix` part of a report.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixReport {
    /// What happened to the plan.
    pub mode: FixMode,
    /// The plan, in the order it is applied.
    pub actions: Vec<PlannedAction>,
    /// Findings the plan does not address, and why.
    pub not_planned: Vec<NotPlanned>,
    /// One result per applied action.
    pub results: Vec<ActionResult>,
    /// The state after the fix (when applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<AfterFix>,
}

/// What happened to the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FixMode {
    /// Shown, not applied (no `--yes`, no terminal to confirm on).
    DryRun,
    /// The user declined every action at the prompt.
    Declined,
    /// Applied (all or the confirmed part).
    Applied,
}

/// One step of a fix plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedAction {
    /// 1-based position in the plan.
    pub id: usize,
    /// What to do.
    pub action: Action,
    /// One-line description.
    pub description: String,
    /// The equivalent kubectl command(s).
    pub command: String,
    /// Ids of the findings it addresses.
    pub fixes: Vec<String>,
    /// A warning the user must see before confirming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The actions `--fix` knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all_fields = "camelCase")]
pub enum Action {
    /// Reap what an expired `serve` session left (everything carrying its
    /// session label): restore the APIServices it took over, delete the other
    /// APIServices, then the rest in reap order (the Lease after what it owns,
    /// then the session namespace, the cluster-wide RBAC last).
    ReapSession {
        /// The session id.
        session: String,
        /// The session namespace (where its Lease is).
        #[serde(default)]
        namespace: String,
        /// The objects found carrying the label.
        objects: Vec<ObjectRef>,
    },
    /// Delete an unavailable APIService (guarded by its uid).
    #[serde(rename = "DeleteAPIService")]
    DeleteApiService {
        /// `<version>.<group>`.
        name: String,
        /// The uid seen by the diagnosis; deletion is preconditioned on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<String>,
    },
    /// Remove the named finalizers with a resourceVersion-guarded merge patch.
    RemoveFinalizers {
        /// The object.
        object: ObjectRef,
        /// The finalizers to remove.
        remove: Vec<String>,
        /// The resourceVersion the plan was made from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource_version: Option<String>,
    },
    /// Delete a Terminating namespace that has no finalizer left, guarded
    /// by its uid: kube-apiserver removes it then.
    DeleteNamespace {
        /// The namespace.
        name: String,
        /// The uid seen by the diagnosis; deletion is preconditioned on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<String>,
    },
    /// Last resort: clear `spec.finalizers` of a namespace through `/finalize`.
    FinalizeNamespace {
        /// The namespace.
        name: String,
    },
}

/// A finding `--fix` will not address, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotPlanned {
    /// The finding id.
    pub finding: String,
    /// Why there is no action for it.
    pub reason: String,
}

/// What applying one action did.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    /// The action's id.
    pub action: usize,
    /// How it went.
    pub outcome: ActionOutcome,
    /// What was done or why not.
    pub detail: String,
    /// What the re-read of the object showed afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
}

/// How an action went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ActionOutcome {
    /// Applied and verified.
    Done,
    /// Nothing to do any more (already gone or already fixed).
    AlreadyDone,
    /// Not applied: declined, or the object changed since the plan.
    Skipped,
    /// Applied but the re-read shows it did not take.
    NotVerified,
    /// The API call failed.
    Failed,
}

/// The state after `--fix`, from a fresh diagnosis.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterFix {
    /// Namespaces that were Terminating before, and what became of them.
    pub namespaces: Vec<NamespaceAfter>,
    /// Findings of the fresh diagnosis.
    pub findings: Vec<Finding>,
    /// What the fresh diagnosis could not check.
    pub unchecked: Vec<Unchecked>,
}

/// A namespace that was Terminating before the fix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceAfter {
    /// Name.
    pub name: String,
    /// `gone`, `terminating` or `active`.
    pub state: String,
    /// Ids of the findings still blocking it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialize_to_their_documented_names() {
        assert_eq!(
            Code::ApiServiceUnavailable.to_string(),
            "APIServiceUnavailable"
        );
        assert_eq!(
            Code::ApiServiceCaBundleExpiring.to_string(),
            "APIServiceCABundleExpiring"
        );
        assert_eq!(Code::FinalizerBlocking.to_string(), "FinalizerBlocking");
        let back: Code = serde_json::from_str("\"WebhookBackendUnavailable\"").unwrap();
        assert_eq!(back, Code::WebhookBackendUnavailable);
    }

    #[test]
    fn object_refs_name_themselves_for_kubectl() {
        let cm = ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            resource: "configmaps".into(),
            namespace: Some("team-a".into()),
            name: "blocked".into(),
        };
        assert_eq!(cm.group(), "");
        assert_eq!(cm.version(), "v1");
        assert_eq!(cm.kubectl_args(), "configmaps/blocked -n team-a");
        let w = ObjectRef::cluster("example.com/v1", "Widget", "widgets", "w");
        assert_eq!(w.group(), "example.com");
        assert_eq!(w.kubectl_args(), "widgets.example.com/w");
        // -o name: what `kubectl get -o name` prints, which kubectl reads back.
        assert_eq!(cm.kubectl_object_name(), "configmap/blocked");
        assert_eq!(w.kubectl_object_name(), "widget.example.com/w");
        assert_eq!(
            ObjectRef::api_service("v1alpha1.apps.cozystack.io").kubectl_object_name(),
            "apiservice.apiregistration.k8s.io/v1alpha1.apps.cozystack.io"
        );
        assert_eq!(
            ObjectRef {
                api_version: "coordination.k8s.io/v1".into(),
                kind: "Lease".into(),
                resource: "leases".into(),
                namespace: Some("kubectl-cozy-system".into()),
                name: "kubectl-cozy-51mt0qm3".into(),
            }
            .kubectl_object_name(),
            "lease.coordination.k8s.io/kubectl-cozy-51mt0qm3"
        );
        assert_eq!(
            Finding::new(Code::FinalizerBlocking, Severity::Error, cm, "", "").id,
            "FinalizerBlocking:configmap/team-a/blocked"
        );
    }

    #[test]
    fn verdict_follows_severity_then_unchecked() {
        let subject = ObjectRef::cluster("v1", "Namespace", "namespaces", "x");
        let info = Finding::new(
            Code::NamespaceTerminating,
            Severity::Info,
            subject.clone(),
            "",
            "",
        );
        let warn = Finding::new(
            Code::NamespaceTerminating,
            Severity::Warning,
            subject,
            "",
            "",
        );
        let skipped = Unchecked {
            what: "list apiservices".into(),
            reason: "forbidden".into(),
            status: Some(403),
        };
        assert_eq!(Verdict::of(&[], &[]), Verdict::Healthy);
        assert_eq!(
            Verdict::of(std::slice::from_ref(&info), &[]),
            Verdict::Healthy
        );
        assert_eq!(
            Verdict::of(&[info], std::slice::from_ref(&skipped)),
            Verdict::Incomplete
        );
        assert_eq!(Verdict::of(&[warn], &[skipped]), Verdict::ProblemsFound);
    }

    #[test]
    fn actions_are_tagged_by_type() {
        let a = Action::DeleteApiService {
            name: "v1.x.example.com".into(),
            uid: None,
        };
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::json!({"type": "DeleteAPIService", "name": "v1.x.example.com"})
        );
        let a = Action::RemoveFinalizers {
            object: ObjectRef::cluster("v1", "Namespace", "namespaces", "x"),
            remove: vec!["example.com/block".into()],
            resource_version: Some("7".into()),
        };
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["type"], "RemoveFinalizers");
        assert_eq!(v["resourceVersion"], "7");
    }
}
