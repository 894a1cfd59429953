//! The session contract: what a `kubectl cozy serve` session leaves in a
//! cluster, and how `doctor` (and later `serve` and its agent) find, judge and
//! reap it. This file is the one place that says so; it holds constants, small
//! typed helpers and pure functions, and does no I/O.
//!
//! A session has a short random id ([`generate_id`]: DNS-label safe). Every
//! object it creates carries the label [`SESSION_LABEL`]`=<id>`; it creates
//! them in a session namespace ([`DEFAULT_NAMESPACE`] unless told otherwise,
//! shared by sessions), except the cluster-scoped ones (APIServices,
//! ClusterRoles), which carry the annotation [`NAMESPACE_ANNOTATION`] naming
//! it so a reader can go from them to the Lease. A session that had to create
//! its namespace labels it too; every session living in such a namespace of
//! sessions (created, adopted or joined) says so on its Lease
//! ([`IN_SESSION_NAMESPACE_ANNOTATION`]), and a reaper deletes the namespace
//! only while it carries that session's label (its creator's, or handed over
//! to it by the creator on leaving) and no other session's Lease lives in it. Every per-session object is
//! named [`object_name`]`(id)` (`kubectl-cozy-<id>`), so a reaper that may not
//! list (the tunnel agent, whose rights are scoped by `resourceNames`) finds
//! them by name ([`named_objects`]).
//!
//! The Lease [`lease_name`]`(id)` in the session namespace proves the session
//! alive: `spec.holderIdentity` says who and where ([`holder_identity`]),
//! `spec.renewTime + spec.leaseDurationSeconds` decides liveness ([`judge`]).
//! Its annotations ([`SessionRecord`]) carry what a reaper needs: the served
//! group/versions, the APIServices registered, the route, when the session
//! started and — when it took over APIServices that existed before it — the
//! ConfigMap (in the session namespace, labelled too) that keeps each original
//! as a [`SavedApiService`], keyed by APIService name, so it is restored byte
//! for byte instead of deleted.
//!
//! [`SESSION_KINDS`] lists what a session may create, in the order a reaper
//! acts on it: APIServices first (restored or deleted), the Lease after the
//! namespaced objects it owns, the cluster-wide RBAC last.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The label on every object of a session; its value is the session id.
pub const SESSION_LABEL: &str = "kubectl-cozy.io/session";
/// The namespace sessions live in unless told otherwise (shared by sessions).
pub const DEFAULT_NAMESPACE: &str = "kubectl-cozy-system";
/// Prefix of every per-session object name: the Lease is `kubectl-cozy-<id>`.
pub const NAME_PREFIX: &str = "kubectl-cozy-";
/// On cluster-scoped objects of a session (APIServices): the session
/// namespace, where its Lease is.
pub const NAMESPACE_ANNOTATION: &str = "kubectl-cozy.io/session-namespace";
/// Lease annotation: the served group/versions, comma-separated.
pub const SERVED_ANNOTATION: &str = "kubectl-cozy.io/served";
/// Lease annotation: the APIServices the session registered, comma-separated.
pub const API_SERVICES_ANNOTATION: &str = "kubectl-cozy.io/apiservices";
/// Lease annotation: how kube-apiserver reaches the session's server (free
/// text, e.g. `service kubectl-cozy-system/kubectl-cozy-3f2a:443 → tunnel`).
pub const ROUTE_ANNOTATION: &str = "kubectl-cozy.io/route";
/// Lease annotation: when the session started (RFC 3339).
pub const STARTED_ANNOTATION: &str = "kubectl-cozy.io/started";
/// Lease annotation: where the session's process runs, for a `serve` on
/// the same machine to tell that it is gone
/// ([`super::local_process`]).
pub const PROCESS_ANNOTATION: &str = "kubectl-cozy.io/process";
/// On a taken-over APIService: the SHA-256 of its saved original
/// ([`SavedApiService::digest`]). The original waits in a ConfigMap of the
/// session namespace, which whoever may write ConfigMaps there could edit;
/// the APIService is cluster-scoped, and a restore checks the one against
/// the other, so an edited original is never restored.
pub const ORIGINAL_DIGEST_ANNOTATION: &str = "kubectl-cozy.io/original-sha256";
/// Lease annotation: the ConfigMap in the session namespace that keeps the
/// originals of APIServices the session took over (`--takeover`).
pub const SAVED_API_SERVICES_ANNOTATION: &str = "kubectl-cozy.io/saved-apiservices";
/// On a session namespace another session created: the last session that
/// moved in, written after its Lease. The write changes the namespace's
/// `resourceVersion`, which the leaving creator's delete carries as a
/// precondition, so a session moving in as the last one out judges the
/// namespace empty fails that delete instead of losing its objects with it.
pub const JOINED_ANNOTATION: &str = "kubectl-cozy.io/last-joined-by";
/// Lease annotation: `"true"` when the session lives in a namespace of
/// sessions (it created, adopted or joined it), which may fall to it: a
/// reaper deletes it once it carries the session's label and no other
/// session lives there.
pub const IN_SESSION_NAMESPACE_ANNOTATION: &str = "kubectl-cozy.io/in-session-namespace";
/// What earlier builds wrote instead of [`IN_SESSION_NAMESPACE_ANNOTATION`]:
/// `"true"` only on the session that created its namespace (still read).
pub const CREATED_NAMESPACE_ANNOTATION: &str = "kubectl-cozy.io/created-namespace";
/// On a session's APIServices and Service: who registered it, where and when
/// (`alice@laptop, pid 4242, since 2026-09-01T12:00:00Z`).
pub const REGISTERED_BY_ANNOTATION: &str = "kubectl-cozy.io/registered-by";

/// On a session's APIServices: the hash of the kinds serve serves now.
/// Serve updates it when the kinds change, so that kube-apiserver re-reads
/// discovery at once instead of at its next one-minute poll.
pub const KINDS_HASH_ANNOTATION: &str = "kubectl-cozy.io/kinds-hash";

/// Longest session id accepted (ids `serve` makes have [`ID_LENGTH`]).
pub const MAX_ID_LENGTH: usize = 40;
/// Length of the ids [`generate_id`] makes.
pub const ID_LENGTH: usize = 8;

/// Problems with session data read from a cluster or given by a caller.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A session id that is not a short DNS label.
    #[error("invalid session id {id:?}: {reason}")]
    InvalidId {
        /// The id.
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A Lease annotation of the contract holds something unreadable.
    #[error("annotation {key} has an unreadable value {value:?}: {reason}")]
    BadAnnotation {
        /// The annotation key.
        key: &'static str,
        /// Its value.
        value: String,
        /// Why it does not read.
        reason: String,
    },
    /// A saved APIService is not valid JSON of the expected shape.
    #[error("parse a saved APIService")]
    SavedJson(#[source] serde_json::Error),
    /// A saved APIService names another kind of object.
    #[error(
        "a saved APIService is a {api_version} {kind}, not an apiregistration.k8s.io/v1 APIService"
    )]
    NotAnApiService {
        /// Its `apiVersion`.
        api_version: String,
        /// Its `kind`.
        kind: String,
    },
    /// An APIService as read has no `metadata.name` or no `spec` object.
    #[error("the APIService to save has no {0}")]
    Incomplete(&'static str),
}

/// A new random session id: [`ID_LENGTH`] characters of `[a-z0-9]`.
pub fn generate_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut n = uuid::Uuid::new_v4().as_u128();
    let mut id = String::with_capacity(ID_LENGTH);
    for _ in 0..ID_LENGTH {
        id.push(char::from(ALPHABET[(n % 36) as usize]));
        n /= 36;
    }
    id
}

/// Checks that `id` is a session id: 1 to [`MAX_ID_LENGTH`] characters of
/// `[a-z0-9-]`, starting and ending alphanumeric (so `kubectl-cozy-<id>` is a
/// valid object name and `<id>` a valid label value).
pub fn validate_id(id: &str) -> Result<(), SessionError> {
    let invalid = |reason| SessionError::InvalidId {
        id: id.to_owned(),
        reason,
    };
    if id.is_empty() {
        return Err(invalid("it is empty"));
    }
    if id.len() > MAX_ID_LENGTH {
        return Err(invalid("it is longer than 40 characters"));
    }
    if !id
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(invalid("only a-z, 0-9 and '-' are allowed"));
    }
    if id.starts_with('-') || id.ends_with('-') {
        return Err(invalid("it must start and end with a letter or digit"));
    }
    Ok(())
}

/// The name of the Lease that proves session `id` alive.
pub fn lease_name(id: &str) -> String {
    format!("{NAME_PREFIX}{id}")
}

/// The name of every other per-session object (Service, agent Deployment,
/// ServiceAccount, Role, RoleBinding, ClusterRole, ClusterRoleBinding): the
/// same as the Lease's.
pub fn object_name(id: &str) -> String {
    lease_name(id)
}

/// Whether an object of `kind` named `name` (in `namespace`, when
/// namespaced) that carries session `id`'s label may be that session's,
/// whose namespace is `session_namespace`: a session creates its namespaced
/// objects in its own namespace, names its cluster-wide RBAC
/// [`object_name`], and its only Namespace is its own. A label alone,
/// which anyone who may edit an object can set, never makes an object
/// elsewhere a session's to delete; its APIServices are found by label
/// (labelling an APIService takes the rights to delete it).
pub fn may_be_sessions(
    kind: &SessionKind,
    id: &str,
    session_namespace: &str,
    namespace: Option<&str>,
    name: &str,
) -> bool {
    if *kind == API_SERVICE {
        true
    } else if kind.namespaced {
        namespace == Some(session_namespace)
    } else if *kind == NAMESPACE {
        name == session_namespace
    } else {
        name == object_name(id)
    }
}

/// The name of the ConfigMap that keeps the originals of the APIServices
/// session `id` took over.
pub fn saved_api_services_name(id: &str) -> String {
    format!("{NAME_PREFIX}{id}-originals")
}

/// The label selector of session `id`'s objects.
pub fn selector(id: &str) -> String {
    format!("{SESSION_LABEL}={id}")
}

/// The label selector of every session's objects.
pub fn any_session_selector() -> String {
    SESSION_LABEL.to_owned()
}

/// Who holds a Lease: `user@host, pid N`.
pub fn holder_identity(user: &str, host: &str, pid: u32) -> String {
    format!("{user}@{host}, pid {pid}")
}

/// The session an object belongs to, from its labels and annotations: its id
/// and the session namespace (the annotation, else `object_namespace` for a
/// namespaced object, else [`DEFAULT_NAMESPACE`]).
pub fn session_of(
    labels: Option<&BTreeMap<String, String>>,
    annotations: Option<&BTreeMap<String, String>>,
    object_namespace: Option<&str>,
) -> Option<(String, String)> {
    let id = labels?.get(SESSION_LABEL)?.clone();
    let namespace = annotations
        .and_then(|a| a.get(NAMESPACE_ANNOTATION))
        .filter(|n| !n.is_empty())
        .cloned()
        .or_else(|| object_namespace.map(str::to_owned))
        .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
    Some((id, namespace))
}

/// Marks an object as session `id`'s: the label, and for cluster-scoped
/// objects (`metadata.namespace` unset) the session namespace annotation.
pub fn mark(metadata: &mut ObjectMeta, id: &str, session_namespace: &str) {
    metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(SESSION_LABEL.to_owned(), id.to_owned());
    if metadata.namespace.is_none() {
        metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(
                NAMESPACE_ANNOTATION.to_owned(),
                session_namespace.to_owned(),
            );
    }
}

/// What a session's Lease annotations say about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionRecord {
    /// The group/versions it serves (`apps.cozystack.io/v1alpha1`).
    pub served: Vec<String>,
    /// The APIServices it registered.
    pub api_services: Vec<String>,
    /// How kube-apiserver reaches its server.
    pub route: Option<String>,
    /// When it started.
    pub started: Option<Timestamp>,
    /// The ConfigMap (in the session namespace) keeping the originals of the
    /// APIServices it took over.
    pub saved_api_services: Option<String>,
    /// Whether the session lives in a namespace of sessions (created,
    /// adopted or joined), which its reaper judges (and deletes once it
    /// carries the session's label and no other session lives there).
    pub in_session_namespace: bool,
    /// Where its process runs ([`super::local_process::this_process`]).
    pub process: Option<String>,
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

impl SessionRecord {
    /// The annotations that carry the record (empty parts are left out).
    pub fn to_annotations(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        if !self.served.is_empty() {
            out.insert(SERVED_ANNOTATION.to_owned(), self.served.join(","));
        }
        if !self.api_services.is_empty() {
            out.insert(
                API_SERVICES_ANNOTATION.to_owned(),
                self.api_services.join(","),
            );
        }
        if let Some(route) = &self.route {
            out.insert(ROUTE_ANNOTATION.to_owned(), route.clone());
        }
        if let Some(started) = &self.started {
            out.insert(STARTED_ANNOTATION.to_owned(), started.to_string());
        }
        if let Some(saved) = &self.saved_api_services {
            out.insert(SAVED_API_SERVICES_ANNOTATION.to_owned(), saved.clone());
        }
        if self.in_session_namespace {
            out.insert(
                IN_SESSION_NAMESPACE_ANNOTATION.to_owned(),
                "true".to_owned(),
            );
        }
        if let Some(process) = &self.process {
            out.insert(PROCESS_ANNOTATION.to_owned(), process.clone());
        }
        out
    }

    /// Reads the record from a Lease's annotations (missing ones stay empty).
    pub fn from_annotations(
        annotations: Option<&BTreeMap<String, String>>,
    ) -> Result<SessionRecord, SessionError> {
        let mut record = SessionRecord::default();
        let Some(a) = annotations else {
            return Ok(record);
        };
        let get = |key: &str| a.get(key).map(|v| v.trim()).filter(|v| !v.is_empty());
        record.served = get(SERVED_ANNOTATION).map(split_list).unwrap_or_default();
        record.api_services = get(API_SERVICES_ANNOTATION)
            .map(split_list)
            .unwrap_or_default();
        record.route = get(ROUTE_ANNOTATION).map(str::to_owned);
        record.saved_api_services = get(SAVED_API_SERVICES_ANNOTATION).map(str::to_owned);
        record.process = get(PROCESS_ANNOTATION).map(str::to_owned);
        record.in_session_namespace = [
            IN_SESSION_NAMESPACE_ANNOTATION,
            CREATED_NAMESPACE_ANNOTATION,
        ]
        .into_iter()
        .any(|key| get(key) == Some("true"));
        if let Some(text) = get(STARTED_ANNOTATION) {
            record.started =
                Some(
                    text.parse::<Timestamp>()
                        .map_err(|e| SessionError::BadAnnotation {
                            key: STARTED_ANNOTATION,
                            value: text.to_owned(),
                            reason: e.to_string(),
                        })?,
                );
        }
        Ok(record)
    }
}

/// The pid of the session's process when its Lease records one that ran on
/// this machine and is gone ([`super::local_process::gone`]): the session
/// is dead, however long its Lease has to run.
pub fn process_gone(lease: Option<&Lease>) -> Option<u32> {
    lease?
        .metadata
        .annotations
        .as_ref()?
        .get(PROCESS_ANNOTATION)
        .and_then(|recorded| super::local_process::gone(recorded))
}

/// The pid of the session's process when its Lease records one that runs on
/// this machine and is stopped ([`super::local_process::stopped`]).
pub fn process_stopped(lease: Option<&Lease>) -> Option<u32> {
    lease?
        .metadata
        .annotations
        .as_ref()?
        .get(PROCESS_ANNOTATION)
        .and_then(|recorded| super::local_process::stopped(recorded))
}

/// The Lease of a session as `serve` creates it: labelled, in the session
/// namespace, held by `holder`, renewed `now`, carrying `record`.
pub fn lease_object(
    id: &str,
    namespace: &str,
    holder: &str,
    duration_seconds: i32,
    now: Timestamp,
    record: &SessionRecord,
) -> Lease {
    let annotations = record.to_annotations();
    Lease {
        metadata: ObjectMeta {
            name: Some(lease_name(id)),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(SESSION_LABEL.to_owned(), id.to_owned())])),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.to_owned()),
            lease_duration_seconds: Some(duration_seconds),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            ..LeaseSpec::default()
        }),
    }
}

/// Whether a session is alive, judged by its Lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// `renewTime + leaseDurationSeconds` is still ahead.
    Alive {
        /// When it expires unless renewed.
        expires: Timestamp,
    },
    /// Past `renewTime + leaseDurationSeconds` (or no `renewTime` at all).
    Expired {
        /// When it expired (`None` without a `renewTime`).
        since: Option<Timestamp>,
    },
    /// No Lease.
    Missing,
}

impl Liveness {
    /// Whether the session's objects may be reaped.
    pub fn is_reapable(self) -> bool {
        !matches!(self, Liveness::Alive { .. })
    }
}

/// Judges a Lease at `now`, to the second: alive while `renewTime +
/// leaseDurationSeconds` (a missing duration counts as 0) is after `now`.
pub fn judge(lease: Option<&Lease>, now: Timestamp) -> Liveness {
    let Some(lease) = lease else {
        return Liveness::Missing;
    };
    let spec = lease.spec.as_ref();
    let duration = i64::from(spec.and_then(|s| s.lease_duration_seconds).unwrap_or(0));
    let Some(renewed) = spec.and_then(|s| s.renew_time.as_ref()) else {
        return Liveness::Expired { since: None };
    };
    let at = renewed.0.as_second().saturating_add(duration);
    let when = Timestamp::from_second(at).unwrap_or(Timestamp::MAX);
    if at > now.as_second() {
        Liveness::Alive { expires: when }
    } else {
        Liveness::Expired { since: Some(when) }
    }
}

/// A kind of object a session may create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionKind {
    /// `group/version` (`v1` for core).
    pub api_version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Plural resource name.
    pub plural: &'static str,
    /// Namespaced (in the session namespace) or cluster-scoped.
    pub namespaced: bool,
}

impl SessionKind {
    /// The API group (empty for core).
    pub fn group(&self) -> &'static str {
        self.api_version
            .split_once('/')
            .map(|(g, _)| g)
            .unwrap_or("")
    }

    /// The version.
    pub fn version(&self) -> &'static str {
        self.api_version
            .split_once('/')
            .map(|(_, v)| v)
            .unwrap_or(self.api_version)
    }
}

const fn kind(
    api_version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> SessionKind {
    SessionKind {
        api_version,
        kind,
        plural,
        namespaced,
    }
}

/// The APIService kind.
pub const API_SERVICE: SessionKind = kind(
    "apiregistration.k8s.io/v1",
    "APIService",
    "apiservices",
    false,
);
/// The Lease kind.
pub const LEASE: SessionKind = kind("coordination.k8s.io/v1", "Lease", "leases", true);
/// The ConfigMap kind (the saved originals of taken-over APIServices).
pub const CONFIG_MAP: SessionKind = kind("v1", "ConfigMap", "configmaps", true);

/// The Namespace kind (the session namespace, when the session created it).
pub const NAMESPACE: SessionKind = kind("v1", "Namespace", "namespaces", false);
/// The ClusterRole kind (the tunnel agent's cluster-wide rights).
pub const CLUSTER_ROLE: SessionKind = kind(
    "rbac.authorization.k8s.io/v1",
    "ClusterRole",
    "clusterroles",
    false,
);
/// The Service kind (what the APIServices point at).
pub const SERVICE: SessionKind = kind("v1", "Service", "services", true);

/// What a session may create, in reap order: APIServices first (restored or
/// deleted), then what serves them, the saved originals, the Lease (whose
/// dependents the garbage collector removes), the session namespace when the
/// session created it, and the cluster-wide RBAC last — the tunnel agent
/// reaps with those rights, so they must outlive every other step.
pub const SESSION_KINDS: &[SessionKind] = &[
    API_SERVICE,
    SERVICE,
    DEPLOYMENT,
    kind("v1", "Secret", "secrets", true),
    SERVICE_ACCOUNT,
    ROLE_BINDING,
    ROLE,
    CONFIG_MAP,
    LEASE,
    NAMESPACE,
    CLUSTER_ROLE_BINDING,
    CLUSTER_ROLE,
];

/// The Deployment kind (the tunnel agent).
pub const DEPLOYMENT: SessionKind = kind("apps/v1", "Deployment", "deployments", true);
/// The ServiceAccount kind (the tunnel agent's identity).
pub const SERVICE_ACCOUNT: SessionKind = kind("v1", "ServiceAccount", "serviceaccounts", true);
/// The RoleBinding kind.
pub const ROLE_BINDING: SessionKind = kind(
    "rbac.authorization.k8s.io/v1",
    "RoleBinding",
    "rolebindings",
    true,
);
/// The Role kind.
pub const ROLE: SessionKind = kind("rbac.authorization.k8s.io/v1", "Role", "roles", true);
/// The ClusterRoleBinding kind.
pub const CLUSTER_ROLE_BINDING: SessionKind = kind(
    "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding",
    "clusterrolebindings",
    false,
);

/// One object of a session.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SessionObject {
    /// `group/version` (`v1` for core).
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Namespace (`None`: cluster-scoped).
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl SessionObject {
    /// One of session kind `kind`.
    pub fn of(kind: &SessionKind, namespace: Option<&str>, name: &str) -> SessionObject {
        SessionObject {
            api_version: kind.api_version.to_owned(),
            kind: kind.kind.to_owned(),
            plural: kind.plural.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    /// As kubectl names it: `configmaps/x -n ns`, `apiservices.apiregistration.k8s.io/x`.
    pub fn describe(&self) -> String {
        let resource = match self.api_version.split_once('/') {
            Some((group, _)) => format!("{}.{group}", self.plural),
            None => self.plural.clone(),
        };
        match &self.namespace {
            Some(ns) => format!("{resource}/{} -n {ns}", self.name),
            None => format!("{resource}/{}", self.name),
        }
    }
}

/// The session kind of `api_version` + `kind`, if a session creates such objects.
pub fn session_kind(api_version: &str, kind: &str) -> Option<&'static SessionKind> {
    SESSION_KINDS
        .iter()
        .find(|k| k.api_version == api_version && k.kind == kind)
}

/// Where an object sits in the reap order ([`SESSION_KINDS`]); unknown kinds
/// go just before the saved originals.
pub fn reap_rank(api_version: &str, kind: &str) -> usize {
    match SESSION_KINDS
        .iter()
        .position(|k| k.api_version == api_version && k.kind == kind)
    {
        Some(position) => 2 * position,
        None => {
            let saved = SESSION_KINDS
                .iter()
                .position(|k| *k == CONFIG_MAP)
                .unwrap_or(SESSION_KINDS.len());
            (2 * saved).saturating_sub(1)
        }
    }
}

/// The kubectl commands that reap session `id` by hand (everything labelled,
/// the Lease by name even if unlabelled). Taken-over APIServices need
/// `kubectl cozy doctor --fix` instead, which restores them.
pub fn reap_command(id: &str, namespace: &str) -> String {
    let sel = selector(id);
    let namespaced: Vec<&str> = SESSION_KINDS
        .iter()
        .filter(|k| k.namespaced)
        .map(|k| k.plural)
        .collect();
    let cluster: Vec<&str> = SESSION_KINDS
        .iter()
        .filter(|k| !k.namespaced && **k != API_SERVICE && **k != NAMESPACE)
        .map(|k| k.plural)
        .collect();
    // Only what `may_be_sessions`: the label alone is not enough.
    format!(
        "kubectl delete apiservices -l {sel} && kubectl delete {} -n {namespace} -l {sel} && \
         kubectl delete namespace -l {sel} --field-selector metadata.name={namespace} && \
         kubectl delete {} -l {sel} --field-selector metadata.name={} && \
         kubectl delete lease -n {namespace} {} --ignore-not-found",
        namespaced.join(","),
        cluster.join(","),
        object_name(id),
        lease_name(id)
    )
}

/// Session `id`'s objects found by name rather than by label, for a reaper
/// that may not list (the tunnel agent): its APIServices and saved originals
/// as its Lease `record` names them, its Service, the Lease, its namespace if
/// it created it, and its ClusterRole. The other per-session objects are
/// owned by the Lease (the ClusterRoleBinding by the ClusterRole), so the
/// garbage collector removes them. In reap order.
pub fn named_objects(id: &str, namespace: &str, record: &SessionRecord) -> Vec<SessionObject> {
    let name = object_name(id);
    let mut out: Vec<SessionObject> = record
        .api_services
        .iter()
        .map(|n| SessionObject::of(&API_SERVICE, None, n))
        .collect();
    out.push(SessionObject::of(&SERVICE, Some(namespace), &name));
    if let Some(saved) = &record.saved_api_services {
        out.push(SessionObject::of(&CONFIG_MAP, Some(namespace), saved));
    }
    out.push(SessionObject::of(&LEASE, Some(namespace), &lease_name(id)));
    if record.in_session_namespace {
        out.push(SessionObject::of(&NAMESPACE, None, namespace));
    }
    out.push(SessionObject::of(&CLUSTER_ROLE, None, &name));
    out.sort_by_key(|o| reap_rank(&o.api_version, &o.kind));
    out
}

/// An APIService as it was before a session took it over: exactly the JSON
/// of its `spec`, `metadata.labels` and `metadata.annotations`, so restoring
/// it gives back the same bytes. Serialized as an APIService manifest
/// (`apiVersion`, `kind`, `metadata.{name,labels,annotations}`, `spec`).
#[derive(Debug, Clone, PartialEq)]
pub struct SavedApiService {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels` (`None`: it had none).
    pub labels: Option<Map<String, Value>>,
    /// `metadata.annotations` (`None`: it had none).
    pub annotations: Option<Map<String, Value>>,
    /// `spec`, verbatim (fields this build does not know included).
    pub spec: Map<String, Value>,
}

const API_SERVICE_VERSION: &str = "apiregistration.k8s.io/v1";

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedWire {
    api_version: String,
    kind: String,
    metadata: SavedMeta,
    spec: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
struct SavedMeta {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    labels: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    annotations: Option<Map<String, Value>>,
}

fn object_field(value: &Value, key: &str) -> Option<Map<String, Value>> {
    value.get(key).and_then(Value::as_object).cloned()
}

impl SavedApiService {
    /// Keeps an APIService as read from the API (its JSON, not a typed
    /// struct, so no field is lost).
    pub fn from_object(object: &Value) -> Result<SavedApiService, SessionError> {
        let metadata = object.get("metadata");
        let name = metadata
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or(SessionError::Incomplete("metadata.name"))?
            .to_owned();
        let spec = object_field(object, "spec").ok_or(SessionError::Incomplete("spec"))?;
        Ok(SavedApiService {
            name,
            labels: metadata.and_then(|m| object_field(m, "labels")),
            annotations: metadata.and_then(|m| object_field(m, "annotations")),
            spec,
        })
    }

    /// The text kept in the ConfigMap (compact JSON).
    pub fn to_json(&self) -> String {
        let wire = SavedWire {
            api_version: API_SERVICE_VERSION.to_owned(),
            kind: "APIService".to_owned(),
            metadata: SavedMeta {
                name: self.name.clone(),
                labels: self.labels.clone(),
                annotations: self.annotations.clone(),
            },
            spec: self.spec.clone(),
        };
        serde_json::to_string(&wire).expect("a JSON map always serializes")
    }

    /// The hex SHA-256 of [`Self::to_json`]: the same for the original as
    /// saved and as read back, different once any of it changed.
    pub fn digest(&self) -> String {
        use sha2::Digest as _;
        let hash = sha2::Sha256::digest(self.to_json().as_bytes());
        hash.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Reads what [`SavedApiService::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<SavedApiService, SessionError> {
        let wire: SavedWire = serde_json::from_str(text).map_err(SessionError::SavedJson)?;
        if wire.api_version != API_SERVICE_VERSION || wire.kind != "APIService" {
            return Err(SessionError::NotAnApiService {
                api_version: wire.api_version,
                kind: wire.kind,
            });
        }
        Ok(SavedApiService {
            name: wire.metadata.name,
            labels: wire.metadata.labels,
            annotations: wire.metadata.annotations,
            spec: wire.spec,
        })
    }

    /// Puts the saved `spec`, labels and annotations into `current` (the
    /// APIService as read now, JSON), keeping everything else of it
    /// (`resourceVersion`, `uid`, finalizers, status).
    pub fn restore_into(&self, current: &mut Value) {
        let Some(object) = current.as_object_mut() else {
            return;
        };
        object.insert("spec".into(), Value::Object(self.spec.clone()));
        let metadata = object
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(metadata) = metadata.as_object_mut() {
            for (key, saved) in [("labels", &self.labels), ("annotations", &self.annotations)] {
                match saved {
                    Some(map) => {
                        metadata.insert(key.into(), Value::Object(map.clone()));
                    }
                    None => {
                        metadata.remove(key);
                    }
                }
            }
        }
    }

    /// Whether `current` (JSON) has exactly the saved `spec`, labels and
    /// annotations.
    pub fn matches(&self, current: &Value) -> bool {
        let metadata = current.get("metadata");
        let same = |key: &str, saved: &Option<Map<String, Value>>| {
            let now = metadata.and_then(|m| object_field(m, key));
            // An empty map and no map read back alike.
            now.filter(|m| !m.is_empty()) == saved.clone().filter(|m| !m.is_empty())
        };
        object_field(current, "spec").as_ref() == Some(&self.spec)
            && same("labels", &self.labels)
            && same("annotations", &self.annotations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Timestamp {
        "2026-09-01T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn names_and_selectors() {
        assert_eq!(SESSION_LABEL, "kubectl-cozy.io/session");
        assert_eq!(DEFAULT_NAMESPACE, "kubectl-cozy-system");
        assert_eq!(lease_name("3f2a"), "kubectl-cozy-3f2a");
        assert_eq!(
            saved_api_services_name("3f2a"),
            "kubectl-cozy-3f2a-originals"
        );
        assert_eq!(selector("3f2a"), "kubectl-cozy.io/session=3f2a");
        assert_eq!(
            holder_identity("alice", "laptop", 4242),
            "alice@laptop, pid 4242"
        );
    }

    #[test]
    fn generated_ids_are_short_dns_labels_and_differ() {
        let a = generate_id();
        let b = generate_id();
        assert_eq!(a.len(), ID_LENGTH);
        validate_id(&a).unwrap();
        validate_id(&b).unwrap();
        assert_ne!(a, b);
        assert!(validate_id("").is_err());
        assert!(validate_id("Abc").is_err());
        assert!(validate_id("-abc").is_err());
        assert!(validate_id("a_b").is_err());
        assert!(validate_id(&"a".repeat(41)).is_err());
        assert!(validate_id("doctor-4242").is_ok());
        let err = validate_id("a_b").unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid session id \"a_b\": only a-z, 0-9 and '-' are allowed"
        );
    }

    #[test]
    fn objects_lead_to_their_session_namespace() {
        let mut meta = ObjectMeta {
            name: Some("v1alpha1.apps.cozystack.io".into()),
            ..ObjectMeta::default()
        };
        mark(&mut meta, "3f2a", "team-sessions");
        assert_eq!(
            session_of(meta.labels.as_ref(), meta.annotations.as_ref(), None),
            Some(("3f2a".into(), "team-sessions".into()))
        );
        let mut namespaced = ObjectMeta {
            namespace: Some("kubectl-cozy-system".into()),
            ..ObjectMeta::default()
        };
        mark(&mut namespaced, "3f2a", "kubectl-cozy-system");
        assert!(namespaced.annotations.is_none());
        assert_eq!(
            session_of(namespaced.labels.as_ref(), None, Some("elsewhere")),
            Some(("3f2a".into(), "elsewhere".into()))
        );
        // No annotation (hand-made or older): the default namespace.
        let labels = BTreeMap::from([(SESSION_LABEL.to_owned(), "x".to_owned())]);
        assert_eq!(
            session_of(Some(&labels), None, None),
            Some(("x".into(), DEFAULT_NAMESPACE.into()))
        );
        assert_eq!(session_of(None, None, None), None);
    }

    #[test]
    fn a_lease_written_by_an_earlier_build_still_says_its_namespace_may_fall_to_it() {
        let read = |key: &str, value: &str| {
            let annotations = BTreeMap::from([(key.to_owned(), value.to_owned())]);
            SessionRecord::from_annotations(Some(&annotations))
                .unwrap()
                .in_session_namespace
        };
        assert!(read(CREATED_NAMESPACE_ANNOTATION, "true"));
        assert!(read(IN_SESSION_NAMESPACE_ANNOTATION, "true"));
        assert!(!read(CREATED_NAMESPACE_ANNOTATION, "false"));
        assert!(!read("kubectl-cozy.io/other", "true"));
        let written = SessionRecord {
            in_session_namespace: true,
            ..SessionRecord::default()
        }
        .to_annotations();
        assert_eq!(
            written
                .get(IN_SESSION_NAMESPACE_ANNOTATION)
                .map(String::as_str),
            Some("true")
        );
        assert!(!written.contains_key(CREATED_NAMESPACE_ANNOTATION));
    }

    #[test]
    fn records_round_trip_through_lease_annotations() {
        let record = SessionRecord {
            served: vec!["apps.cozystack.io/v1alpha1".into(), "x.io/v1".into()],
            api_services: vec!["v1alpha1.apps.cozystack.io".into()],
            route: Some("service kubectl-cozy-system/kubectl-cozy-3f2a:443".into()),
            started: Some(now()),
            saved_api_services: Some(saved_api_services_name("3f2a")),
            in_session_namespace: true,
            process: Some("b00t pid:[4026531836] 4242 123456".into()),
        };
        let lease = lease_object(
            "3f2a",
            DEFAULT_NAMESPACE,
            "alice@laptop, pid 1",
            15,
            now(),
            &record,
        );
        assert_eq!(lease.metadata.name.as_deref(), Some("kubectl-cozy-3f2a"));
        assert_eq!(
            lease.metadata.namespace.as_deref(),
            Some("kubectl-cozy-system")
        );
        let annotations = lease.metadata.annotations.as_ref().unwrap();
        assert_eq!(
            annotations[SERVED_ANNOTATION],
            "apps.cozystack.io/v1alpha1,x.io/v1"
        );
        assert_eq!(annotations[STARTED_ANNOTATION], "2026-09-01T12:00:00Z");
        assert_eq!(
            SessionRecord::from_annotations(Some(annotations)).unwrap(),
            record
        );
        assert_eq!(
            SessionRecord::from_annotations(None).unwrap(),
            SessionRecord::default()
        );
        let bad = BTreeMap::from([(STARTED_ANNOTATION.to_owned(), "yesterday".to_owned())]);
        let err = SessionRecord::from_annotations(Some(&bad)).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "annotation kubectl-cozy.io/started has an unreadable value \"yesterday\""
            ),
            "{err}"
        );
        assert_eq!(
            judge(Some(&lease), now()),
            Liveness::Alive {
                expires: "2026-09-01T12:00:15Z".parse().unwrap()
            }
        );
    }

    #[test]
    fn leases_expire_after_renew_time_plus_duration() {
        let lease = |renew: &str, secs: i32| Lease {
            spec: Some(LeaseSpec {
                renew_time: Some(MicroTime(renew.parse().unwrap())),
                lease_duration_seconds: Some(secs),
                holder_identity: Some("laptop".into()),
                ..LeaseSpec::default()
            }),
            ..Lease::default()
        };
        assert!(matches!(
            judge(Some(&lease("2026-09-01T11:59:55Z", 15)), now()),
            Liveness::Alive { .. }
        ));
        assert_eq!(
            judge(Some(&lease("2026-09-01T11:58:00Z", 15)), now()),
            Liveness::Expired {
                since: Some("2026-09-01T11:58:15Z".parse().unwrap())
            }
        );
        // Expiring exactly now is expired.
        assert!(judge(Some(&lease("2026-09-01T11:59:45Z", 15)), now()).is_reapable());
        assert_eq!(judge(None, now()), Liveness::Missing);
        assert_eq!(
            judge(Some(&Lease::default()), now()),
            Liveness::Expired { since: None }
        );
    }

    #[test]
    fn kinds_are_in_reap_order() {
        assert_eq!(SESSION_KINDS[0], API_SERVICE);
        assert_eq!(*SESSION_KINDS.last().unwrap(), CLUSTER_ROLE);
        // The Lease after everything it owns, the namespace after the Lease,
        // the agent's cluster rights after both.
        let rank = |k: &SessionKind| reap_rank(k.api_version, k.kind);
        assert!(rank(&CONFIG_MAP) < rank(&LEASE));
        assert!(rank(&LEASE) < rank(&NAMESPACE));
        assert!(rank(&NAMESPACE) < rank(&CLUSTER_ROLE));
        assert!(reap_rank("apiregistration.k8s.io/v1", "APIService") < reap_rank("v1", "Service"));
        assert!(reap_rank("example.com/v1", "Widget") < reap_rank("v1", "ConfigMap"));
        assert!(
            reap_rank("example.com/v1", "Widget")
                > reap_rank("rbac.authorization.k8s.io/v1", "Role")
        );
        assert_eq!(
            session_kind("apps/v1", "Deployment").unwrap().group(),
            "apps"
        );
        assert_eq!(session_kind("v1", "Service").unwrap().version(), "v1");
        let command = reap_command("3f2a", DEFAULT_NAMESPACE);
        assert!(
            command.starts_with("kubectl delete apiservices -l kubectl-cozy.io/session=3f2a && "),
            "{command}"
        );
        assert!(command.contains(
            "services,deployments,secrets,serviceaccounts,rolebindings,roles,configmaps,leases \
             -n kubectl-cozy-system -l kubectl-cozy.io/session=3f2a"
        ));
        assert!(command.contains(
            "kubectl delete namespace -l kubectl-cozy.io/session=3f2a --field-selector metadata.name=kubectl-cozy-system"
        ));
        assert!(command.contains(
            "kubectl delete clusterrolebindings,clusterroles -l kubectl-cozy.io/session=3f2a \
             --field-selector metadata.name=kubectl-cozy-3f2a"
        ));
        assert!(!command.contains(" -A "), "{command}");
        assert!(command.ends_with(
            "kubectl delete lease -n kubectl-cozy-system kubectl-cozy-3f2a --ignore-not-found"
        ));
    }

    /// A label anyone may set on an object they can edit: outside the
    /// session namespace, or under another name, it is not the session's.
    #[test]
    fn only_objects_where_and_as_a_session_makes_them_may_be_its() {
        let may = |kind: &SessionKind, namespace: Option<&str>, name: &str| {
            may_be_sessions(kind, "3f2a", "kubectl-cozy-system", namespace, name)
        };
        assert!(may(
            &SERVICE,
            Some("kubectl-cozy-system"),
            "kubectl-cozy-3f2a"
        ));
        assert!(!may(&SERVICE, Some("prod"), "frontend"));
        assert!(!may(
            session_kind("v1", "Secret").unwrap(),
            Some("prod"),
            "db-password"
        ));
        assert!(may(&NAMESPACE, None, "kubectl-cozy-system"));
        assert!(!may(&NAMESPACE, None, "prod"));
        assert!(may(&CLUSTER_ROLE, None, "kubectl-cozy-3f2a"));
        assert!(!may(&CLUSTER_ROLE, None, "cluster-admin"));
        assert!(!may(&CLUSTER_ROLE_BINDING, None, "cluster-admins"));
        assert!(may(&API_SERVICE, None, "v1alpha1.apps.cozystack.io"));
    }

    #[test]
    fn named_objects_follow_the_record_in_reap_order() {
        let record = SessionRecord {
            api_services: vec!["v1.a.example.com".into(), "v2.a.example.com".into()],
            saved_api_services: Some(saved_api_services_name("3f2a")),
            in_session_namespace: true,
            ..SessionRecord::default()
        };
        let names: Vec<String> = named_objects("3f2a", "team", &record)
            .iter()
            .map(SessionObject::describe)
            .collect();
        assert_eq!(
            names,
            [
                "apiservices.apiregistration.k8s.io/v1.a.example.com",
                "apiservices.apiregistration.k8s.io/v2.a.example.com",
                "services/kubectl-cozy-3f2a -n team",
                "configmaps/kubectl-cozy-3f2a-originals -n team",
                "leases.coordination.k8s.io/kubectl-cozy-3f2a -n team",
                "namespaces/team",
                "clusterroles.rbac.authorization.k8s.io/kubectl-cozy-3f2a",
            ]
        );
        // A namespace the session found is never its to delete; no takeover,
        // no saved originals.
        let plain = named_objects("3f2a", "team", &SessionRecord::default());
        assert!(
            plain
                .iter()
                .all(|o| o.kind != "Namespace" && o.kind != "ConfigMap")
        );
    }

    fn original() -> Value {
        json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {
                "name": "v1alpha1.apps.cozystack.io",
                "uid": "u1",
                "resourceVersion": "7",
                "labels": {"team": "platform"},
                "annotations": {"note": "the real one"}
            },
            "spec": {
                "service": {"namespace": "cozy-system", "name": "cozystack-api", "port": 443},
                "group": "apps.cozystack.io",
                "version": "v1alpha1",
                "caBundle": "Q0E=",
                "groupPriorityMinimum": 1000,
                "versionPriority": 15,
                "futureField": {"kept": true}
            },
            "status": {"conditions": []}
        })
    }

    #[test]
    fn saved_apiservices_round_trip_and_restore_exactly() {
        let saved = SavedApiService::from_object(&original()).unwrap();
        let text = saved.to_json();
        assert!(
            text.starts_with(r#"{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1alpha1.apps.cozystack.io","labels":{"team":"platform"}"#),
            "{text}"
        );
        let back = SavedApiService::from_json(&text).unwrap();
        assert_eq!(back, saved);
        // Its digest survives the ConfigMap, and no edit keeps it.
        assert_eq!(back.digest(), saved.digest());
        assert_eq!(saved.digest().len(), 64);
        let mut edited = back.clone();
        edited
            .spec
            .insert("insecureSkipTLSVerify".into(), json!(true));
        assert_ne!(edited.digest(), saved.digest());
        // Field order is kept, so the restored spec serializes to the same bytes.
        assert_eq!(
            serde_json::to_string(&back.spec).unwrap(),
            serde_json::to_string(&original()["spec"]).unwrap()
        );

        // A session took it over: new spec, its label and annotation.
        let mut current = original();
        current["metadata"]["resourceVersion"] = json!("9");
        current["metadata"]["labels"] = json!({"team": "platform", SESSION_LABEL: "3f2a"});
        current["metadata"]["annotations"] =
            json!({"note": "the real one", NAMESPACE_ANNOTATION: "kubectl-cozy-system"});
        current["spec"]["service"] =
            json!({"namespace": "kubectl-cozy-system", "name": "kubectl-cozy-3f2a", "port": 443});
        assert!(!saved.matches(&current));
        saved.restore_into(&mut current);
        assert!(saved.matches(&current));
        assert_eq!(current["metadata"]["resourceVersion"], "9");
        assert_eq!(current["metadata"]["uid"], "u1");
        assert_eq!(
            serde_json::to_string(&current["spec"]).unwrap(),
            serde_json::to_string(&original()["spec"]).unwrap()
        );

        // No labels before: none after.
        let mut bare = original();
        bare["metadata"].as_object_mut().unwrap().remove("labels");
        let saved = SavedApiService::from_object(&bare).unwrap();
        assert!(!saved.to_json().contains("labels"));
        let mut current = original();
        saved.restore_into(&mut current);
        assert!(current["metadata"].get("labels").is_none());
    }

    #[test]
    fn saved_apiservices_reject_other_input() {
        assert!(matches!(
            SavedApiService::from_json("{"),
            Err(SessionError::SavedJson(_))
        ));
        let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"spec":{}}"#;
        let err = SavedApiService::from_json(cm).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a saved APIService is a v1 ConfigMap, not an apiregistration.k8s.io/v1 APIService"
        );
        assert!(matches!(
            SavedApiService::from_object(&json!({"metadata": {"name": "x"}})),
            Err(SessionError::Incomplete("spec"))
        ));
    }
}
