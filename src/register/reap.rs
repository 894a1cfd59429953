//! Reaping a session whose Lease is missing or expired, shared by
//! `doctor --fix`, `serve` (its own teardown, and sessions that died in its
//! way) and the tunnel agent (a serve that stopped renewing).
//!
//! [`reap`] re-reads the Lease right before acting (a session that renewed it
//! meanwhile is left alone: judged by the clock for `doctor` and `serve`, by
//! an unchanged `resourceVersion` for the agent, which watched the Lease go
//! unrenewed on its own clock — see [`Judge`]), then handles the session's APIServices **first**
//! — restoring the ones it took over from their saved originals
//! ([`SavedApiService`]), byte for byte, and deleting the others (uid
//! precondition), and an original that was itself a serve session's whose
//! Lease is gone or expired since (its Service went with it; the tunnel
//! agent may read that Lease: its ClusterRole names the Leases of the
//! sessions it took over from) — because an APIService whose server is gone stalls
//! discovery and namespace deletion cluster-wide. Then it deletes the other
//! objects in [`SESSION_KINDS`] order, the saved originals and the Lease
//! last of the namespaced ones: if an APIService could not be restored, those
//! two and the session namespace are kept so a later reap can finish (the
//! agent, with [`ReapOptions::stop_on_unrestored`], touches nothing else then
//! and retries). The session namespace goes only when the session created it
//! (it carries the session's label) and no other session's Lease lives in it;
//! if one does, the namespace is handed over to that session (relabelled).
//! That is judged before the Lease is deleted: the agent's right to list the
//! namespace's Leases comes from a Role the Lease owns.
//! Objects that no longer carry the session's label belong to someone else now
//! and are not touched. Every object is re-read afterwards.
//!
//! Doctor finds a session's objects by label ([`Target::objects`]); the
//! agent, whose rights are scoped by `resourceNames` and so cannot list, by
//! name ([`super::session::named_objects`]). Both go through [`reap_with`].
//!
//! [`SESSION_KINDS`]: super::session::SESSION_KINDS

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
    Preconditions,
};

use super::session::{
    API_SERVICE, CONFIG_MAP, JOINED_ANNOTATION, LEASE, Liveness, NAMESPACE,
    ORIGINAL_DIGEST_ANNOTATION, SAVED_API_SERVICES_ANNOTATION, SESSION_LABEL, SavedApiService,
    SessionObject, judge, lease_name, reap_rank, saved_api_services_name,
};
use crate::error_chain::error_chain;

/// How a reaper decides, on its last re-read of the Lease, that the session
/// is still dead.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Judge {
    /// `renewTime + leaseDurationSeconds` is in the past by this machine's
    /// clock (`doctor`, `serve`: the same clock that renewed it, or near),
    /// or the Lease records a process of this machine that is gone
    /// ([`crate::register::session::process_gone`]).
    #[default]
    Clock,
    /// The Lease is gone or still at this `resourceVersion`: the caller saw
    /// it unrenewed for longer than its duration on its own monotonic clock
    /// (the agent, whose clock need not agree with serve's).
    Unchanged {
        /// The `resourceVersion` the caller watched expire.
        resource_version: Option<String>,
    },
    /// The caller holds the Lease and is ending its own session (`serve`'s
    /// teardown): no liveness check.
    Holder,
}

/// How to reap.
#[derive(Debug, Clone, Default)]
pub struct ReapOptions {
    /// How the session is judged dead on the last re-read.
    pub judge: Judge,
    /// When an APIService could not be restored, touch nothing after the
    /// APIService step (the agent retries; deleting its own Deployment or
    /// rights would leave nobody to).
    pub stop_on_unrestored: bool,
}

/// A session to reap: its id, its namespace (where its Lease is) and the
/// labelled objects found for it.
#[derive(Debug, Clone)]
pub struct Target {
    /// The session id.
    pub id: String,
    /// The session namespace.
    pub namespace: String,
    /// Objects carrying its label (the Lease and saved originals are added
    /// when they exist but are missing here).
    pub objects: Vec<SessionObject>,
}

/// Why one API call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No answer within the limit.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The server answered with an error status.
    #[error("HTTP {code} {reason}: {message}")]
    Status {
        /// HTTP status code.
        code: u16,
        /// `Status.reason`.
        reason: String,
        /// `Status.message`.
        message: String,
    },
    /// No HTTP answer (connection, TLS, decoding), as the client said it.
    #[error("{0}")]
    Transport(String),
}

impl CallError {
    fn status(&self) -> Option<u16> {
        match self {
            CallError::Status { code, .. } => Some(*code),
            _ => None,
        }
    }

    fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    fn is_conflict(&self) -> bool {
        self.status() == Some(409)
    }
}

impl From<kube::Error> for CallError {
    fn from(err: kube::Error) -> Self {
        match err {
            kube::Error::Api(status) => CallError::Status {
                code: status.code,
                reason: status.reason.clone(),
                message: status.message.clone(),
            },
            other => CallError::Transport(error_chain(&other)),
        }
    }
}

/// Why a reap did not start (nothing was changed).
#[derive(Debug, thiserror::Error)]
pub enum ReapError {
    /// The Lease could not be re-read, so liveness is unknown.
    #[error("re-read the Lease {namespace}/{name}")]
    ReadLease {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        #[source]
        source: CallError,
    },
    /// The saved originals could not be read, so restoring is impossible and
    /// deleting would lose them.
    #[error("read the saved APIServices in ConfigMap {namespace}/{name}")]
    ReadSaved {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        #[source]
        source: CallError,
    },
}

impl ReapError {
    /// Whether kube-apiserver gave no answer (no connection, a timeout, or
    /// a 5xx/429 of its own), so trying again later may work.
    pub fn is_unanswered(&self) -> bool {
        let (ReapError::ReadLease { source, .. } | ReapError::ReadSaved { source, .. }) = self;
        match source {
            CallError::Timeout(_) | CallError::Transport(_) => true,
            CallError::Status { code, .. } => *code == 429 || *code >= 500,
        }
    }
}

/// What a reap did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reaped {
    /// The Lease was renewed since the session was found: nothing touched.
    Alive {
        /// `spec.holderIdentity` of the Lease.
        holder: Option<String>,
    },
    /// The session was reaped (see the report for each object).
    Reaped(ReapReport),
}

/// Per-object results of a reap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReapReport {
    /// APIServices restored from their saved originals.
    pub restored: Vec<String>,
    /// Objects deleted.
    pub deleted: Vec<SessionObject>,
    /// Objects already gone when the reap came to them (never made, or
    /// removed by someone else): nothing to do, nothing to re-read.
    pub gone: Vec<SessionObject>,
    /// Objects not touched, and why (someone else's now, or kept for a retry).
    pub left: Vec<(SessionObject, String)>,
    /// Objects whose restore or delete failed, and the error.
    pub failed: Vec<(SessionObject, String)>,
    /// Objects the re-read shows are not as intended, and what it shows.
    pub unverified: Vec<(SessionObject, String)>,
    /// Deleted objects the re-read shows still being deleted (a namespace
    /// Terminating while its content goes).
    pub deleting: Vec<SessionObject>,
    /// APIServices deleted instead of restored, and why: their original
    /// belonged to a serve session that has ended since.
    pub not_restored: Vec<(String, String)>,
}

async fn call<T>(
    limit: Duration,
    request: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, CallError> {
    match tokio::time::timeout(limit, request).await {
        Err(_) => Err(CallError::Timeout(limit)),
        Ok(result) => result.map_err(CallError::from),
    }
}

fn dynamic(client: &Client, o: &SessionObject) -> Api<DynamicObject> {
    let (group, version) = o
        .api_version
        .split_once('/')
        .unwrap_or(("", &o.api_version));
    let ar = ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: o.api_version.clone(),
        kind: o.kind.clone(),
        plural: o.plural.clone(),
    };
    match &o.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

fn object(
    kind: &super::session::SessionKind,
    namespace: Option<&str>,
    name: &str,
) -> SessionObject {
    SessionObject::of(kind, namespace, name)
}

/// The saved originals of a session: APIService name → what to restore, or
/// why it cannot be (then the APIService is neither restored nor deleted).
pub type Saved = BTreeMap<String, Result<SavedApiService, String>>;

/// Reaps `target`, judged by the clock, each request limited to `limit`.
pub async fn reap(client: &Client, target: &Target, limit: Duration) -> Result<Reaped, ReapError> {
    reap_with(client, target, &ReapOptions::default(), limit).await
}

/// Reaps `target` as `options` say, each request limited to `limit`.
pub async fn reap_with(
    client: &Client,
    target: &Target,
    options: &ReapOptions,
    limit: Duration,
) -> Result<Reaped, ReapError> {
    let mut reaping = match Reaping::begin(client, target, options, limit).await? {
        Begun::Alive { holder } => return Ok(Reaped::Alive { holder }),
        Begun::Reaping(reaping) => reaping,
    };
    reaping.api_services(client, limit).await;
    reaping.rest(client, limit).await;
    Ok(Reaped::Reaped(reaping.verify(client, limit).await))
}

/// How [`Reaping::begin`] went.
#[derive(Debug)]
pub enum Begun {
    /// The session renewed its Lease: nothing to do.
    Alive {
        /// `spec.holderIdentity` of the Lease.
        holder: Option<String>,
    },
    /// The session is dead (or its holder is tearing it down): reap it.
    Reaping(Box<Reaping>),
}

/// A reap in phases: [`Reaping::api_services`] first, then
/// [`Reaping::rest`], then [`Reaping::verify`]. `serve`'s teardown runs them
/// one by one (a second Ctrl-C stops after the APIServices); [`reap_with`]
/// runs all three.
#[derive(Debug)]
pub struct Reaping {
    id: String,
    objects: Vec<SessionObject>,
    saved_ref: Option<SessionObject>,
    saved: Saved,
    originals_lost: bool,
    lease_object: SessionObject,
    keep_record: bool,
    stop_on_unrestored: bool,
    report: ReapReport,
}

impl Reaping {
    /// Re-reads the Lease (and the saved originals) and decides.
    pub async fn begin(
        client: &Client,
        target: &Target,
        options: &ReapOptions,
        limit: Duration,
    ) -> Result<Begun, ReapError> {
        let id = &target.id;
        let namespace = &target.namespace;
        let lease_name = lease_name(id);
        let leases: Api<Lease> = Api::namespaced(client.clone(), namespace);
        let lease = call(limit, leases.get_opt(&lease_name))
            .await
            .map_err(|source| ReapError::ReadLease {
                namespace: namespace.clone(),
                name: lease_name.clone(),
                source,
            })?;
        let alive = match &options.judge {
            Judge::Clock => {
                matches!(
                    judge(lease.as_ref(), Timestamp::now()),
                    Liveness::Alive { .. }
                ) && crate::register::session::process_gone(lease.as_ref()).is_none()
            }
            Judge::Unchanged { resource_version } => lease
                .as_ref()
                .is_some_and(|l| l.metadata.resource_version != *resource_version),
            Judge::Holder => false,
        };
        if alive {
            return Ok(Begun::Alive {
                holder: lease.and_then(|l| l.spec).and_then(|s| s.holder_identity),
            });
        }

        let mut objects = target.objects.clone();
        // Where the originals are: the Lease says so; without a Lease, a
        // labelled ConfigMap of the conventional name.
        let referenced = lease
            .as_ref()
            .and_then(|l| l.metadata.annotations.as_ref())
            .and_then(|a| a.get(SAVED_API_SERVICES_ANNOTATION))
            .filter(|n| !n.is_empty())
            .cloned();
        let conventional = object(&CONFIG_MAP, Some(namespace), &saved_api_services_name(id));
        let saved_ref = match referenced {
            Some(name) => Some(object(&CONFIG_MAP, Some(namespace), &name)),
            None => objects.contains(&conventional).then_some(conventional),
        };
        let saved = match &saved_ref {
            Some(r) => Some(read_saved(client, r, limit).await?),
            None => None,
        };
        if let Some(r) = &saved_ref
            && saved.as_ref().is_some_and(|s| s.is_some())
            && !objects.contains(r)
        {
            objects.push(r.clone());
        }
        let lease_object = object(&LEASE, Some(namespace), &lease_name);
        if lease.is_some() && !objects.contains(&lease_object) {
            objects.push(lease_object.clone());
        }
        objects.sort_by_key(|o| reap_rank(&o.api_version, &o.kind));
        // The saved originals were referenced but are gone: which APIServices
        // were taken over is unknown, so none is deleted.
        let originals_lost = saved_ref.is_some() && matches!(saved, Some(None));
        Ok(Begun::Reaping(Box::new(Reaping {
            id: id.clone(),
            objects,
            saved_ref,
            saved: saved.flatten().unwrap_or_default(),
            originals_lost,
            lease_object,
            keep_record: false,
            stop_on_unrestored: options.stop_on_unrestored,
            report: ReapReport::default(),
        })))
    }

    /// Whether an APIService could not be restored (the record is kept).
    pub fn unrestored(&self) -> bool {
        self.keep_record
    }

    /// Restores or deletes the session's APIServices.
    pub async fn api_services(&mut self, client: &Client, limit: Duration) {
        let id = self.id.clone();
        let report = &mut self.report;
        for o in self.objects.iter().filter(|o| o.kind == API_SERVICE.kind) {
            // Still the session's, and what its takeover recorded of the
            // original (read first: the saved original is trusted only if
            // it still has that digest, whatever is decided from it).
            let current = match read_owned(&dynamic(client, o), &o.name, &id, limit).await {
                Ok(current) => current,
                Err(Step::Gone | Step::Done) => {
                    report.gone.push(o.clone());
                    continue;
                }
                Err(Step::Left(why)) => {
                    report.left.push((o.clone(), why));
                    continue;
                }
                Err(Step::Failed(why)) => {
                    self.keep_record |= self.saved.contains_key(&o.name) || self.originals_lost;
                    report.failed.push((o.clone(), why));
                    continue;
                }
            };
            // Still the session's, but which of its APIServices were taken
            // over is unknown: none is deleted. (One gone, or another's
            // now — restored by a reaper before this one — needs nothing.)
            if self.originals_lost {
                self.keep_record = true;
                report.left.push((
                    o.clone(),
                    format!(
                        "its session took over APIServices but their saved originals ({}) are gone; not deleted",
                        self.saved_ref
                            .as_ref()
                            .map(SessionObject::describe)
                            .unwrap_or_default()
                    ),
                ));
                continue;
            }
            let recorded = current
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(ORIGINAL_DIGEST_ANNOTATION));
            let saved = self.saved.get(&o.name);
            if let Some(why) = tampered(recorded.map(String::as_str), saved) {
                self.keep_record = true;
                report.failed.push((o.clone(), why));
                continue;
            }
            match saved {
                Some(Ok(original)) => match ended_session_of(client, original, limit).await {
                    Some(ended) => match delete_api_service(client, o, &id, limit).await {
                        Step::Gone => report.gone.push(o.clone()),
                        Step::Done => {
                            report.deleted.push(o.clone());
                            report.not_restored.push((
                                o.name.clone(),
                                format!(
                                    "its original belonged to serve session {ended}, which has ended; deleted instead of restored"
                                ),
                            ));
                        }
                        Step::Left(why) => report.left.push((o.clone(), why)),
                        Step::Failed(why) => report.failed.push((o.clone(), why)),
                    },
                    None => match restore(client, o, &id, original, limit).await {
                        Step::Done => report.restored.push(o.name.clone()),
                        Step::Gone => report.gone.push(o.clone()),
                        Step::Left(why) => report.left.push((o.clone(), why)),
                        Step::Failed(why) => {
                            self.keep_record = true;
                            report.failed.push((o.clone(), why));
                        }
                    },
                },
                Some(Err(why)) => {
                    self.keep_record = true;
                    report.left.push((
                        o.clone(),
                        format!("its saved original does not parse ({why}); not deleted"),
                    ));
                }
                None => match delete_api_service(client, o, &id, limit).await {
                    Step::Done => report.deleted.push(o.clone()),
                    Step::Gone => report.gone.push(o.clone()),
                    Step::Left(why) => report.left.push((o.clone(), why)),
                    Step::Failed(why) => {
                        // The Lease stays, so that the next serve, the agent
                        // or doctor finds the session and tries again.
                        self.keep_record = true;
                        report.failed.push((o.clone(), why));
                    }
                },
            }
        }
    }

    /// Deletes everything else, in reap order.
    ///
    /// What becomes of the session namespace is decided first, while the
    /// Lease still exists: the agent's right to list the namespace's Leases
    /// comes from a Role the Lease owns, which the garbage collector removes
    /// soon after the Lease goes.
    pub async fn rest(&mut self, client: &Client, limit: Duration) {
        let is_namespace =
            |o: &SessionObject| o.kind == NAMESPACE.kind && o.api_version == NAMESPACE.api_version;
        let mut fates = BTreeMap::new();
        if !self.keep_record {
            for o in self.objects.iter().filter(|o| is_namespace(o)) {
                fates.insert(
                    o.name.clone(),
                    namespace_fate(client, &o.name, &self.id, limit).await,
                );
            }
        }
        let report = &mut self.report;
        for o in self.objects.iter().filter(|o| o.kind != API_SERVICE.kind) {
            let is_namespace = is_namespace(o);
            let is_record =
                *o == self.lease_object || self.saved_ref.as_ref() == Some(o) || is_namespace;
            if self.keep_record && (is_record || self.stop_on_unrestored) {
                report.left.push((
                    o.clone(),
                    "kept until every taken-over APIService is restored".to_owned(),
                ));
                continue;
            }
            if is_namespace {
                let fate = fates
                    .remove(&o.name)
                    .unwrap_or_else(|| Fate::Settled(Step::Failed("not judged".to_owned())));
                match settle_namespace(client, &o.name, &self.id, fate, limit).await {
                    Step::Done => report.deleted.push(o.clone()),
                    Step::Gone => report.gone.push(o.clone()),
                    Step::Left(why) => report.left.push((o.clone(), why)),
                    Step::Failed(why) => report.failed.push((o.clone(), why)),
                }
                continue;
            }
            match call(
                limit,
                dynamic(client, o).delete(&o.name, &DeleteParams::background()),
            )
            .await
            {
                Ok(_) => report.deleted.push(o.clone()),
                Err(err) if err.is_not_found() => report.gone.push(o.clone()),
                Err(err) => report.failed.push((o.clone(), err.to_string())),
            }
        }
    }

    /// Re-reads everything acted on and returns the report.
    pub async fn verify(mut self, client: &Client, limit: Duration) -> ReapReport {
        let report = &mut self.report;
        for name in &report.restored {
            let o = object(&API_SERVICE, None, name);
            let Some(Ok(original)) = self.saved.get(name) else {
                continue;
            };
            match call(limit, dynamic(client, &o).get_opt(name)).await {
                Ok(Some(now)) => {
                    let value = serde_json::to_value(&now).unwrap_or_default();
                    if !original.matches(&value) {
                        report
                            .unverified
                            .push((o, "it differs from its saved original".to_owned()));
                    }
                }
                Ok(None) => report
                    .unverified
                    .push((o, "it is gone after the restore".to_owned())),
                Err(err) => report
                    .unverified
                    .push((o, format!("re-read failed: {err}"))),
            }
        }
        for o in &report.deleted {
            match call(limit, dynamic(client, o).get_metadata_opt(&o.name)).await {
                Ok(None) => {}
                Ok(Some(m)) if m.metadata.deletion_timestamp.is_some() => {
                    report.deleting.push(o.clone());
                }
                Ok(Some(_)) => report
                    .unverified
                    .push((o.clone(), "it still exists".to_owned())),
                Err(err) => report
                    .unverified
                    .push((o.clone(), format!("re-read failed: {err}"))),
            }
        }
        self.report
    }

    /// The report so far (without verification).
    pub fn report(&self) -> &ReapReport {
        &self.report
    }

    /// The report, without re-reading: for the agent, whose rights end with
    /// its ClusterRole, the last object it deletes.
    pub fn finish(self) -> ReapReport {
        self.report
    }
}

/// Reads the saved originals: `None` when the ConfigMap is gone.
async fn read_saved(
    client: &Client,
    r: &SessionObject,
    limit: Duration,
) -> Result<Option<Saved>, ReapError> {
    let namespace = r.namespace.clone().unwrap_or_default();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let cm = call(limit, api.get_opt(&r.name))
        .await
        .map_err(|source| ReapError::ReadSaved {
            namespace: namespace.clone(),
            name: r.name.clone(),
            source,
        })?;
    Ok(cm.map(saved_in))
}

/// The originals a session's ConfigMap keeps, each parsed (or why not).
pub fn saved_in(cm: ConfigMap) -> Saved {
    cm.data
        .unwrap_or_default()
        .into_iter()
        .map(|(key, text)| {
            let parsed = SavedApiService::from_json(&text)
                .map_err(|e| error_chain(&e))
                .and_then(|s| {
                    if s.name == key {
                        Ok(s)
                    } else {
                        Err(format!("it is saved under {key:?} but names {:?}", s.name))
                    }
                });
            (key, parsed)
        })
        .collect()
}

#[derive(Debug)]
enum Step {
    Done,
    Gone,
    Left(String),
    Failed(String),
}

/// Why a taken-over APIService whose takeover `recorded` its original's
/// digest ([`ORIGINAL_DIGEST_ANNOTATION`]) must be neither restored nor
/// deleted: its `saved` original no longer has that digest, or is missing,
/// so its ConfigMap was edited after the takeover. `None` when it matches,
/// or where nothing was recorded (not taken over, or by an earlier version,
/// which did not record it).
pub fn tampered(
    recorded: Option<&str>,
    saved: Option<&Result<SavedApiService, String>>,
) -> Option<String> {
    let recorded = recorded?;
    let what = match saved {
        Some(Ok(original)) if original.digest() == recorded => return None,
        Some(Ok(_)) => "was changed after the takeover",
        // Does not parse: the caller says so already.
        Some(Err(_)) => return None,
        None => "was removed after the takeover",
    };
    Some(format!(
        "its saved original {what} (the APIService carries its digest in {ORIGINAL_DIGEST_ANNOTATION}): \
         neither restored nor deleted; restore the original from a copy you trust, or delete the APIService"
    ))
}

/// Reads an APIService and says whether it is still the session's.
async fn read_owned(
    api: &Api<DynamicObject>,
    name: &str,
    id: &str,
    limit: Duration,
) -> Result<DynamicObject, Step> {
    let current = match call(limit, api.get_opt(name)).await {
        Ok(Some(current)) => current,
        Ok(None) => return Err(Step::Gone),
        Err(err) => return Err(Step::Failed(format!("re-read failed: {err}"))),
    };
    let owner = current
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(SESSION_LABEL))
        .cloned();
    match owner {
        Some(owner) if owner == id => Ok(current),
        Some(other) => Err(Step::Left(format!(
            "it now belongs to serve session {other}; not touched"
        ))),
        None => Err(Step::Left(
            "it no longer carries the session label; not touched".to_owned(),
        )),
    }
}

/// The serve session `original` belonged to, when that session has ended
/// (its Lease gone or expired): restoring it would bring back an APIService
/// whose Service went with its session, stalling discovery and every
/// namespace deletion. `None` when it was not a session's, the session is
/// alive, or its Lease cannot be read (then the original is restored, as
/// saved).
async fn ended_session_of(
    client: &Client,
    original: &SavedApiService,
    limit: Duration,
) -> Option<String> {
    let strings =
        |map: &Option<serde_json::Map<String, serde_json::Value>>| -> BTreeMap<String, String> {
            map.iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        };
    let labels = strings(&original.labels);
    let annotations = strings(&original.annotations);
    let (id, namespace) = super::session::session_of(Some(&labels), Some(&annotations), None)?;
    let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);
    let lease = call(limit, leases.get_opt(&lease_name(&id))).await.ok()?;
    match judge(lease.as_ref(), Timestamp::now()) {
        Liveness::Alive { .. } => None,
        Liveness::Expired { .. } | Liveness::Missing => Some(id),
    }
}

async fn restore(
    client: &Client,
    o: &SessionObject,
    id: &str,
    original: &SavedApiService,
    limit: Duration,
) -> Step {
    let api = dynamic(client, o);
    for attempt in 1..=3 {
        let current = match read_owned(&api, &o.name, id, limit).await {
            Ok(current) => current,
            Err(step) => return step,
        };
        let mut value = match serde_json::to_value(&current) {
            Ok(value) => value,
            Err(err) => return Step::Failed(format!("encode the APIService: {err}")),
        };
        original.restore_into(&mut value);
        let restored: DynamicObject = match serde_json::from_value(value) {
            Ok(restored) => restored,
            Err(err) => return Step::Failed(format!("decode the restored APIService: {err}")),
        };
        // The body carries the resourceVersion just read: 409 if it changed.
        match call(
            limit,
            api.replace(&o.name, &PostParams::default(), &restored),
        )
        .await
        {
            Ok(_) => return Step::Done,
            Err(err) if err.is_not_found() => return Step::Gone,
            Err(err) if err.is_conflict() && attempt < 3 => continue,
            Err(err) => return Step::Failed(format!("restore: {err}")),
        }
    }
    Step::Failed("restore: the APIService kept changing".to_owned())
}

async fn delete_api_service(client: &Client, o: &SessionObject, id: &str, limit: Duration) -> Step {
    let api = dynamic(client, o);
    let current = match read_owned(&api, &o.name, id, limit).await {
        Ok(current) => current,
        Err(step) => return step,
    };
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: current.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::background()
    };
    match call(limit, api.delete(&o.name, &params)).await {
        Ok(_) => Step::Done,
        Err(err) if err.is_not_found() => Step::Gone,
        Err(err) => Step::Failed(err.to_string()),
    }
}

/// What becomes of a session namespace, decided before the session's Lease
/// (and with it the agent's Role) goes.
#[derive(Debug)]
enum Fate {
    /// Nothing to do, or it cannot be decided: the step's result as is.
    Settled(Step),
    /// The session created it and no other session lives in it: delete it
    /// (if it is still at this uid and resourceVersion: a session moving in
    /// meanwhile changes the latter, [`super::session::JOINED_ANNOTATION`]).
    Delete {
        /// Its uid when judged.
        uid: Option<String>,
        /// Its resourceVersion when judged.
        resource_version: Option<String>,
    },
    /// Another session's Lease lives in it: relabel it for that session (if
    /// it is still at this resourceVersion), so the last one out removes it.
    HandOver {
        /// The session that inherits it.
        heir: String,
        /// Its resourceVersion when judged.
        resource_version: Option<String>,
    },
}

/// Judges the session namespace `name`: delete it if session `id` created it
/// (it carries the label) and no other session's Lease lives in it; hand it
/// over to such a session otherwise.
async fn namespace_fate(client: &Client, name: &str, id: &str, limit: Duration) -> Fate {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let current = match call(limit, namespaces.get_opt(name)).await {
        Ok(Some(ns)) => ns,
        Ok(None) => return Fate::Settled(Step::Gone),
        Err(err) => return Fate::Settled(Step::Failed(format!("re-read failed: {err}"))),
    };
    if current.metadata.deletion_timestamp.is_some() {
        return Fate::Settled(Step::Gone);
    }
    let owner = current
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(SESSION_LABEL))
        .cloned();
    match owner {
        Some(owner) if owner == *id => {}
        Some(other) => {
            return Fate::Settled(Step::Left(format!(
                "it now belongs to serve session {other}; not touched"
            )));
        }
        None => {
            return Fate::Settled(Step::Left(
                "the session did not create it (no session label); not deleted".to_owned(),
            ));
        }
    }
    let leases: Api<Lease> = Api::namespaced(client.clone(), name);
    let others = match call(
        limit,
        leases.list_metadata(&ListParams::default().labels(SESSION_LABEL)),
    )
    .await
    {
        Ok(list) => list
            .items
            .into_iter()
            .filter(|l| l.metadata.deletion_timestamp.is_none())
            .filter_map(|l| l.metadata.labels?.get(SESSION_LABEL).cloned())
            .filter(|other| other != id)
            .collect::<Vec<_>>(),
        Err(err) => {
            return Fate::Settled(Step::Failed(format!(
                "list the session Leases in it (to spare other sessions): {err}"
            )));
        }
    };
    match others.into_iter().min() {
        Some(heir) => Fate::HandOver {
            heir,
            resource_version: current.metadata.resource_version,
        },
        None => Fate::Delete {
            uid: current.metadata.uid,
            resource_version: current.metadata.resource_version,
        },
    }
}

/// Judges the session namespace `name` again after its delete met a change
/// (409): the session that moved in meanwhile, as it said on the namespace,
/// inherits it — its Lease was there before it said so, and the judge needs
/// only `get` (a reaping agent's `list` of Leases may have gone with the
/// session's Lease); anything else is judged afresh.
async fn namespace_fate_after_change(
    client: &Client,
    name: &str,
    id: &str,
    limit: Duration,
) -> Fate {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let current = match call(limit, namespaces.get_opt(name)).await {
        Ok(Some(ns)) => ns,
        Ok(None) => return Fate::Settled(Step::Gone),
        Err(err) => return Fate::Settled(Step::Failed(format!("re-read failed: {err}"))),
    };
    let ours = current
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(SESSION_LABEL))
        .is_some_and(|owner| owner == id);
    let joined = current
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(JOINED_ANNOTATION))
        .filter(|joined| *joined != id)
        .cloned();
    let Some(heir) = joined.filter(|_| ours && current.metadata.deletion_timestamp.is_none())
    else {
        return namespace_fate(client, name, id, limit).await;
    };
    // The annotation stays after its session left: only a Lease that is
    // there makes it an heir (else, or unreadable, judged afresh).
    let leases: Api<Lease> = Api::namespaced(client.clone(), name);
    match call(limit, leases.get_opt(&lease_name(&heir))).await {
        Ok(Some(_)) => Fate::HandOver {
            heir,
            resource_version: current.metadata.resource_version,
        },
        _ => namespace_fate(client, name, id, limit).await,
    }
}

/// Carries out `fate` for session `id`'s namespace `name`, judged again
/// when a delete meets a change (up to three times).
async fn settle_namespace(
    client: &Client,
    name: &str,
    id: &str,
    mut fate: Fate,
    limit: Duration,
) -> Step {
    for _ in 0..3 {
        match carry_out(client, name, fate, limit).await {
            Ok(step) => return step,
            Err(Changed) => fate = namespace_fate_after_change(client, name, id, limit).await,
        }
    }
    Step::Failed("it kept changing while it was judged".to_owned())
}

/// A namespace delete's precondition failed: it changed since judged.
struct Changed;

/// Carries out `fate` for the session namespace `name`.
async fn carry_out(
    client: &Client,
    name: &str,
    fate: Fate,
    limit: Duration,
) -> Result<Step, Changed> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    Ok(match fate {
        Fate::Settled(step) => step,
        Fate::HandOver {
            heir,
            resource_version,
        } => {
            let patch = serde_json::json!({
                "metadata": {
                    "resourceVersion": resource_version,
                    "labels": {SESSION_LABEL: heir},
                }
            });
            match call(
                limit,
                namespaces.patch(name, &PatchParams::default(), &Patch::Merge(&patch)),
            )
            .await
            {
                Ok(_) => Step::Left(format!(
                    "serve session {heir} also lives in it; handed over to that session"
                )),
                Err(err) if err.is_not_found() => Step::Gone,
                Err(err) if err.is_conflict() => return Err(Changed),
                Err(err) => Step::Failed(format!("hand it over to serve session {heir}: {err}")),
            }
        }
        Fate::Delete {
            uid,
            resource_version,
        } => {
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid,
                    resource_version,
                }),
                ..DeleteParams::background()
            };
            match call(limit, namespaces.delete(name, &params)).await {
                Ok(_) => Step::Done,
                Err(err) if err.is_not_found() => Step::Gone,
                Err(err) if err.is_conflict() => return Err(Changed),
                Err(err) => Step::Failed(err.to_string()),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A cluster holding one session namespace `team` (created by session
    /// `a1`, no Lease of another session in it) where session `b2` moves in
    /// right after `a1`'s reaper lists the Leases: its check-in changes the
    /// namespace's resourceVersion and names it. Deletes honour their
    /// preconditions as kube-apiserver does.
    fn cluster_where_a_session_moves_in(
        ns: Arc<Mutex<serde_json::Value>>,
        joiner_stays: bool,
    ) -> Client {
        let moved_in = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
            let ns = ns.clone();
            let moved_in = moved_in.clone();
            async move {
                let method = req.method().clone();
                let path = req.uri().path().to_owned();
                let body = http_body_util::BodyExt::collect(req.into_body())
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                let status = |code: u16, reason: &str| {
                    (
                        code,
                        serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                           "code": code, "reason": reason, "message": reason}),
                    )
                };
                let mut current = ns.lock().unwrap();
                let rv = || current["metadata"]["resourceVersion"].clone();
                let (code, answer) = match (method.as_str(), path.as_str()) {
                    ("GET", "/api/v1/namespaces/team") if current.is_null() => {
                        status(404, "NotFound")
                    }
                    ("GET", "/api/v1/namespaces/team") => (200, current.clone()),
                    (
                        "GET",
                        "/apis/coordination.k8s.io/v1/namespaces/team/leases/kubectl-cozy-b2",
                    ) if joiner_stays && moved_in.load(std::sync::atomic::Ordering::SeqCst) => (
                        200,
                        serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                "metadata": {"name": "kubectl-cozy-b2", "namespace": "team",
                                             "labels": {SESSION_LABEL: "b2"}}}),
                    ),
                    ("GET", "/apis/coordination.k8s.io/v1/namespaces/team/leases")
                        if moved_in.swap(true, std::sync::atomic::Ordering::SeqCst) =>
                    {
                        // After b2 moved in: its Lease, if it stayed.
                        let items = if joiner_stays {
                            serde_json::json!([{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                "metadata": {"name": "kubectl-cozy-b2", "namespace": "team",
                                             "labels": {SESSION_LABEL: "b2"}}}])
                        } else {
                            serde_json::json!([])
                        };
                        (
                            200,
                            serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}),
                        )
                    }
                    ("GET", "/apis/coordination.k8s.io/v1/namespaces/team/leases") => {
                        // b2 moves in: its Lease is created just after this
                        // list, then it checks in.
                        let next = (rv().as_str().unwrap().parse::<u32>().unwrap() + 1).to_string();
                        current["metadata"]["resourceVersion"] = next.into();
                        current["metadata"]["annotations"] =
                            serde_json::json!({JOINED_ANNOTATION: "b2"});
                        (
                            200,
                            serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": []}),
                        )
                    }
                    ("DELETE", "/api/v1/namespaces/team") => {
                        let wanted = &body["preconditions"]["resourceVersion"];
                        if !wanted.is_null() && *wanted != rv() {
                            status(409, "Conflict")
                        } else {
                            *current = serde_json::Value::Null;
                            (
                                200,
                                serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}),
                            )
                        }
                    }
                    ("PATCH", "/api/v1/namespaces/team") => {
                        let wanted = &body["metadata"]["resourceVersion"];
                        if !wanted.is_null() && *wanted != rv() {
                            status(409, "Conflict")
                        } else {
                            for (k, v) in
                                body["metadata"]["labels"].as_object().into_iter().flatten()
                            {
                                current["metadata"]["labels"][k] = v.clone();
                            }
                            (200, current.clone())
                        }
                    }
                    _ => status(404, "NotFound"),
                };
                Ok::<_, std::convert::Infallible>(json_answer(code, &answer))
            }
        });
        Client::new(service, "default")
    }

    /// The last session out judges its namespace empty; another moves in
    /// before the delete: the delete fails on the changed resourceVersion and
    /// the namespace is handed over to the session that moved in, instead of
    /// being deleted with that session's Lease in it.
    #[tokio::test]
    async fn a_session_moving_in_as_the_last_one_leaves_inherits_the_namespace() {
        let ns = Arc::new(Mutex::new(serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "team", "uid": "u-team", "resourceVersion": "10",
                         "labels": {SESSION_LABEL: "a1"}}
        })));
        let client = cluster_where_a_session_moves_in(ns.clone(), true);
        let limit = Duration::from_secs(5);
        let fate = namespace_fate(&client, "team", "a1", limit).await;
        assert!(matches!(fate, Fate::Delete { .. }), "{fate:?}");
        let step = settle_namespace(&client, "team", "a1", fate, limit).await;
        assert!(
            matches!(&step, Step::Left(why) if why.contains("serve session b2 also lives in it")),
            "{step:?}"
        );
        let now = ns.lock().unwrap().clone();
        assert_eq!(now["metadata"]["labels"][SESSION_LABEL], "b2", "{now}");
    }

    /// The annotation outlives its session: a session that moved in and
    /// left again (its Lease gone) inherits nothing; the namespace is judged
    /// afresh and deleted.
    #[tokio::test]
    async fn a_session_that_moved_in_and_left_inherits_nothing() {
        let ns = Arc::new(Mutex::new(serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "team", "uid": "u-team", "resourceVersion": "10",
                         "labels": {SESSION_LABEL: "a1"}}
        })));
        let client = cluster_where_a_session_moves_in(ns.clone(), false);
        let limit = Duration::from_secs(5);
        let fate = namespace_fate(&client, "team", "a1", limit).await;
        let step = settle_namespace(&client, "team", "a1", fate, limit).await;
        assert!(matches!(step, Step::Done), "{step:?}");
        assert!(ns.lock().unwrap().is_null(), "deleted");
    }

    /// A fake kube-apiserver's answer: `answer` as JSON with status `code`.
    fn json_answer(code: u16, answer: &serde_json::Value) -> http::Response<kube::client::Body> {
        http::Response::builder()
            .status(code)
            .header("content-type", "application/json")
            .body(kube::client::Body::from(answer.to_string().into_bytes()))
            .unwrap()
    }

    /// A cluster where session `a1`'s Lease and saved originals are gone and
    /// its APIService `v1alpha1.x.example.com` is `owner`'s (`None`: no
    /// session label, as an original restored by another reaper is).
    fn cluster_after_another_reap(owner: Option<&'static str>) -> Client {
        let service = tower::service_fn(move |req: http::Request<kube::client::Body>| async move {
            let path = req.uri().path().to_owned();
            let (code, answer) = if req.method() == http::Method::GET
                && path == "/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.x.example.com"
            {
                let labels = owner.map(|o| serde_json::json!({SESSION_LABEL: o}));
                (
                    200,
                    serde_json::json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                        "metadata": {"name": "v1alpha1.x.example.com", "labels": labels},
                        "spec": {"group": "x.example.com", "version": "v1alpha1"}}),
                )
            } else {
                (
                    404,
                    serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                       "code": 404, "reason": "NotFound", "message": "not found"}),
                )
            };
            Ok::<_, std::convert::Infallible>(json_answer(code, &answer))
        });
        Client::new(service, "default")
    }

    /// With the saved originals gone, an APIService still the session's is
    /// neither deleted nor restored and the record is kept; one another
    /// reaper already restored (no longer the session's) needs nothing, and
    /// the reap completes instead of retrying for it.
    #[tokio::test]
    async fn lost_originals_hold_only_apiservices_still_the_sessions() {
        let target = Target {
            id: "a1".into(),
            namespace: "team".into(),
            objects: vec![
                object(&API_SERVICE, None, "v1alpha1.x.example.com"),
                object(&CONFIG_MAP, Some("team"), &saved_api_services_name("a1")),
            ],
        };
        let options = ReapOptions {
            judge: Judge::Unchanged {
                resource_version: None,
            },
            stop_on_unrestored: true,
        };
        let limit = Duration::from_secs(5);
        for (owner, held) in [(Some("a1"), true), (None, false), (Some("b2"), false)] {
            let client = cluster_after_another_reap(owner);
            let Ok(Begun::Reaping(mut reaping)) =
                Reaping::begin(&client, &target, &options, limit).await
            else {
                panic!("no reap")
            };
            reaping.api_services(&client, limit).await;
            assert_eq!(
                reaping.unrestored(),
                held,
                "{owner:?}: {:?}",
                reaping.report()
            );
            assert!(
                reaping.report().deleted.is_empty(),
                "{:?}",
                reaping.report()
            );
        }
    }

    /// An original is trusted only with the digest its takeover recorded:
    /// edited or removed it is neither restored nor deleted; where nothing
    /// was recorded (an earlier version's session, or no takeover) it is
    /// handled as before.
    #[test]
    fn a_saved_original_must_have_the_recorded_digest() {
        let original = SavedApiService::from_object(&serde_json::json!({
            "metadata": {"name": "v1alpha1.x.example.com"},
            "spec": {"group": "x.example.com", "version": "v1alpha1"}
        }))
        .unwrap();
        let digest = original.digest();
        let saved = Ok(original.clone());
        assert_eq!(tampered(Some(&digest), Some(&saved)), None);
        assert_eq!(tampered(None, Some(&saved)), None);
        assert_eq!(tampered(None, None), None);
        let mut edited = original;
        edited
            .spec
            .insert("insecureSkipTLSVerify".into(), serde_json::json!(true));
        let why = tampered(Some(&digest), Some(&Ok(edited))).unwrap();
        assert!(
            why.starts_with("its saved original was changed after the takeover"),
            "{why}"
        );
        let why = tampered(Some(&digest), None).unwrap();
        assert!(
            why.starts_with("its saved original was removed after the takeover"),
            "{why}"
        );
        assert_eq!(tampered(Some(&digest), Some(&Err("bad".into()))), None);
    }

    #[test]
    fn call_errors_read_like_the_server_said_them() {
        let e = CallError::Status {
            code: 403,
            reason: "Forbidden".into(),
            message: "leases is forbidden".into(),
        };
        assert_eq!(e.to_string(), "HTTP 403 Forbidden: leases is forbidden");
        assert!(!e.is_not_found());
        assert_eq!(
            CallError::Timeout(Duration::from_secs(2)).to_string(),
            "no answer within 2s"
        );
        let err = ReapError::ReadLease {
            namespace: "kubectl-cozy-system".into(),
            name: "kubectl-cozy-3f2a".into(),
            source: e,
        };
        assert_eq!(
            err.to_string(),
            "re-read the Lease kubectl-cozy-system/kubectl-cozy-3f2a"
        );
        assert!(std::error::Error::source(&err).is_some());
    }
}
