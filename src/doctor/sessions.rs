//! `kubectl cozy serve` sessions as doctor sees them, through the session
//! contract ([`crate::register::session`]) and nothing else: Leases carrying
//! the session label in any namespace plus labelled APIServices (whose
//! annotation names the session namespace when their Lease is not listed),
//! each judged by its Lease, with every object carrying its label; the
//! `ServeSessionExpired` finding and the remedy that reaps a session.
//!
//! Collection talks to the cluster ([`list_leases`], [`collect`]);
//! [`session_finding`] and the texts are pure.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::join_all;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};

use super::findings::{
    Code, Finding, ObjectRef, Remedy, SessionCheck, SessionReport, SessionState, Severity,
    Unchecked,
};
use super::requester::{CallError, Requester};
use crate::output::ago;
use crate::register::session::{
    self as contract, API_SERVICE, CONFIG_MAP, LEASE, Liveness, SESSION_KINDS, SESSION_LABEL,
    SessionKind, SessionObject, SessionRecord,
};

/// An APIService that carries a session label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labelled {
    /// The APIService.
    pub api_service: String,
    /// The session id (label value).
    pub id: String,
    /// The session namespace its annotation names (or the default).
    pub namespace: String,
    /// The Service it uses, when that carries the same label.
    pub service: Option<ObjectRef>,
    /// The digest of its original its takeover recorded
    /// ([`contract::ORIGINAL_DIGEST_ANNOTATION`]), when taken over.
    pub original_digest: Option<String>,
}

/// A `kubectl cozy serve` session and what it left in the cluster.
#[derive(Debug, Clone)]
pub struct Session {
    /// Its Lease, as read.
    pub check: SessionCheck,
    /// What its Lease's annotations say.
    pub record: SessionRecord,
    /// APIServices carrying its label.
    pub api_services: Vec<String>,
    /// Its other labelled objects (not APIServices, not its Lease), in reap
    /// order.
    pub objects: Vec<ObjectRef>,
    /// Whether the Lease object exists (and so must be deleted on reap).
    pub lease_exists: bool,
    /// Taken-over APIServices whose saved original no longer has the
    /// digest their takeover recorded, and why: a reap neither restores
    /// nor deletes them.
    pub tampered: Vec<(String, String)>,
}

impl Session {
    /// Whether its Lease is missing or expired.
    pub fn is_reapable(&self) -> bool {
        matches!(
            self.check.state,
            SessionState::Expired | SessionState::Missing
        )
    }

    /// The ConfigMap keeping the originals of APIServices it took over: what
    /// its Lease names, or a labelled one of the conventional name.
    pub fn saved_api_services(&self) -> Option<ObjectRef> {
        let namespace = self.check.namespace.as_str();
        let named = |name: &str| object_ref(&SessionObject::of(&CONFIG_MAP, Some(namespace), name));
        match &self.record.saved_api_services {
            Some(name) => Some(named(name)),
            None => {
                let conventional = named(&contract::saved_api_services_name(&self.check.id));
                self.objects.contains(&conventional).then_some(conventional)
            }
        }
    }

    /// Everything a reap acts on, in its order ([`contract::reap_rank`], as
    /// [`crate::register::reap`] sorts them): APIServices, what serves them,
    /// the saved originals, the Lease, the session namespace, the
    /// cluster-wide RBAC last.
    pub fn all_objects(&self) -> Vec<ObjectRef> {
        let mut all: Vec<ObjectRef> = self
            .api_services
            .iter()
            .map(|n| ObjectRef::api_service(n))
            .collect();
        all.extend(self.objects.iter().cloned());
        if self.lease_exists {
            all.push(lease_ref(&self.check.namespace, &self.check.id));
        }
        // Stable: APIServices keep their order, the rest theirs within a kind.
        all.sort_by_key(|o| contract::reap_rank(&o.api_version, &o.kind));
        all
    }

    /// Whether its tunnel agent reaps it when its Lease expires.
    pub fn has_agent(&self) -> bool {
        route_has_agent(self.record.route.as_deref())
    }

    /// The session as the report lists it.
    pub fn report(&self) -> SessionReport {
        SessionReport {
            check: self.check.clone(),
            objects: self.all_objects(),
            served: self.record.served.clone(),
            route: self.record.route.clone(),
            started: self.record.started.map(|t| t.to_string()),
            saved_api_services: self.saved_api_services(),
        }
    }
}

/// The report's reference for a session object.
pub fn object_ref(o: &SessionObject) -> ObjectRef {
    ObjectRef {
        api_version: o.api_version.clone(),
        kind: o.kind.clone(),
        resource: o.plural.clone(),
        namespace: o.namespace.clone(),
        name: o.name.clone(),
    }
}

/// The session object a report reference names.
pub fn session_object(o: &ObjectRef) -> SessionObject {
    SessionObject {
        api_version: o.api_version.clone(),
        kind: o.kind.clone(),
        plural: o.resource.clone(),
        namespace: o.namespace.clone(),
        name: o.name.clone(),
    }
}

/// The Lease of session `id` in `namespace`.
pub fn lease_ref(namespace: &str, id: &str) -> ObjectRef {
    object_ref(&SessionObject::of(
        &LEASE,
        Some(namespace),
        &contract::lease_name(id),
    ))
}

/// Lists every Lease carrying the session label, in all namespaces.
pub async fn list_leases(req: &Requester) -> Result<Vec<Lease>, CallError> {
    let api: Api<Lease> = Api::all(req.client().clone());
    let params = ListParams::default().labels(&contract::any_session_selector());
    req.call(api.list(&params)).await.map(|l| l.items)
}

/// Sessions and what could not be read about them.
#[derive(Debug, Default)]
pub struct Found {
    /// Every session, by id.
    pub sessions: Vec<Session>,
    /// What could not be read.
    pub unchecked: Vec<Unchecked>,
}

#[derive(Default)]
struct Builder {
    namespace: Option<String>,
    lease: Option<Lease>,
    api_services: Vec<String>,
    objects: Vec<ObjectRef>,
    /// APIService → the digest its takeover recorded of the original.
    digests: BTreeMap<String, String>,
}

/// Gathers the sessions behind the labelled Leases (`leases`, as listed) and
/// APIServices (`labelled`), judges each at `now` and finds every object
/// carrying a session's label.
pub async fn collect(
    req: &Requester,
    leases: Result<Vec<Lease>, CallError>,
    labelled: &[Labelled],
    now: Timestamp,
) -> Found {
    let mut found = Found::default();
    let mut by_id: BTreeMap<String, Builder> = BTreeMap::new();
    let listed = match leases {
        Ok(leases) => {
            for lease in leases {
                let Some((id, namespace)) = contract::session_of(
                    lease.metadata.labels.as_ref(),
                    None,
                    lease.metadata.namespace.as_deref(),
                ) else {
                    continue;
                };
                let entry = by_id.entry(id).or_default();
                if entry.lease.is_none() {
                    entry.namespace = Some(namespace);
                    entry.lease = Some(lease);
                }
            }
            true
        }
        Err(err) => {
            found.unchecked.push(err.unchecked(format!(
                "list leases.coordination.k8s.io -A -l {SESSION_LABEL} (serve sessions)"
            )));
            false
        }
    };
    for l in labelled {
        let entry = by_id.entry(l.id.clone()).or_default();
        entry.namespace.get_or_insert_with(|| l.namespace.clone());
        entry.api_services.push(l.api_service.clone());
        entry.objects.extend(
            l.service
                .iter()
                .filter(|s| s.namespace.as_deref() == entry.namespace.as_deref())
                .cloned(),
        );
        if let Some(digest) = &l.original_digest {
            entry.digests.insert(l.api_service.clone(), digest.clone());
        }
    }
    if by_id.is_empty() {
        return found;
    }

    // Every other kind a session creates, one labelled list each.
    let kinds: Vec<&SessionKind> = SESSION_KINDS
        .iter()
        .filter(|k| **k != API_SERVICE && **k != LEASE)
        .collect();
    let lists = join_all(kinds.iter().map(|k| list_labelled(req, k))).await;
    for (kind, result) in kinds.iter().zip(lists) {
        match result {
            Ok(items) => {
                for (id, object) in items {
                    if let Some(entry) = by_id.get_mut(&id)
                        && contract::may_be_sessions(
                            kind,
                            &id,
                            entry
                                .namespace
                                .as_deref()
                                .unwrap_or(contract::DEFAULT_NAMESPACE),
                            object.namespace.as_deref(),
                            &object.name,
                        )
                        && !entry.objects.contains(&object)
                    {
                        entry.objects.push(object);
                    }
                }
            }
            Err(err) => found.unchecked.push(err.unchecked(format!(
                "list {} -A -l {SESSION_LABEL} (objects of serve sessions)",
                label_of(kind)
            ))),
        }
    }

    // Leases not listed: missing when the list worked, else read one by one.
    let unread: Vec<(String, String)> = by_id
        .iter()
        .filter(|(_, b)| b.lease.is_none() && !listed)
        .map(|(id, b)| (id.clone(), b.namespace.clone().unwrap_or_default()))
        .collect();
    let reads = join_all(unread.iter().map(|(id, ns)| read_lease(req, ns, id))).await;
    let mut unknown: BTreeSet<String> = BTreeSet::new();
    for ((id, _), read) in unread.into_iter().zip(reads) {
        match read {
            Ok(lease) => {
                if let Some(b) = by_id.get_mut(&id) {
                    b.lease = lease;
                }
            }
            Err(unchecked) => {
                found.unchecked.push(unchecked);
                unknown.insert(id);
            }
        }
    }

    for (id, mut b) in by_id {
        let namespace = b
            .namespace
            .clone()
            .unwrap_or_else(|| contract::DEFAULT_NAMESPACE.to_owned());
        let mut check = judge_lease(&id, &namespace, b.lease.as_ref(), now);
        if unknown.contains(&id) {
            check.state = SessionState::Unknown;
        }
        let record = match b
            .lease
            .as_ref()
            .map(|l| SessionRecord::from_annotations(l.metadata.annotations.as_ref()))
        {
            Some(Ok(record)) => record,
            Some(Err(err)) => {
                found.unchecked.push(Unchecked {
                    what: format!("read the annotations of lease {}", check.lease),
                    reason: err.to_string(),
                    status: None,
                });
                SessionRecord::default()
            }
            None => SessionRecord::default(),
        };
        b.api_services.sort();
        b.api_services.dedup();
        b.objects.sort_by(|x, y| {
            let rank = |o: &ObjectRef| contract::reap_rank(&o.api_version, &o.kind);
            (rank(x), &x.namespace, &x.name).cmp(&(rank(y), &y.namespace, &y.name))
        });
        let mut session = Session {
            check,
            record,
            api_services: b.api_services,
            objects: b.objects,
            lease_exists: b.lease.is_some(),
            tampered: Vec::new(),
        };
        if session.is_reapable() && !b.digests.is_empty() {
            match check_originals(req, &session, &b.digests).await {
                Ok(tampered) => session.tampered = tampered,
                Err(unchecked) => found.unchecked.push(unchecked),
            }
        }
        found.sessions.push(session);
    }
    found
}

/// The taken-over APIServices of a session to be reaped whose saved
/// original no longer has the digest its takeover recorded (`digests`),
/// as the reap itself will judge them: their ConfigMap was edited, or
/// removed, since.
async fn check_originals(
    req: &Requester,
    session: &Session,
    digests: &BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, Unchecked> {
    let Some(cm) = session.saved_api_services() else {
        return Ok(Vec::new());
    };
    let namespace = cm.namespace.clone().unwrap_or_default();
    let api: Api<ConfigMap> = Api::namespaced(req.client().clone(), &namespace);
    let saved = req
        .call(api.get_opt(&cm.name))
        .await
        .map_err(|err| {
            err.unchecked(format!(
                "get {} (the originals of APIServices serve session {} took over)",
                cm.kubectl_args(),
                session.check.id
            ))
        })?
        .map(crate::register::reap::saved_in)
        .unwrap_or_default();
    Ok(digests
        .iter()
        .filter_map(|(name, digest)| {
            crate::register::reap::tampered(Some(digest), saved.get(name))
                .map(|why| (name.clone(), why))
        })
        .collect())
}

/// `plural` or `plural.group`, as kubectl names a kind.
fn label_of(kind: &SessionKind) -> String {
    match kind.group() {
        "" => kind.plural.to_owned(),
        group => format!("{}.{group}", kind.plural),
    }
}

/// Every object of `kind` carrying a session label: (session id, object).
async fn list_labelled(
    req: &Requester,
    kind: &SessionKind,
) -> Result<Vec<(String, ObjectRef)>, CallError> {
    let ar = ApiResource {
        group: kind.group().to_owned(),
        version: kind.version().to_owned(),
        api_version: kind.api_version.to_owned(),
        kind: kind.kind.to_owned(),
        plural: kind.plural.to_owned(),
    };
    let api: Api<DynamicObject> = Api::all_with(req.client().clone(), &ar);
    let params = ListParams::default().labels(&contract::any_session_selector());
    let list = req.call(api.list_metadata(&params)).await?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|item| {
            let m = item.metadata;
            let id = m.labels.as_ref()?.get(SESSION_LABEL)?.clone();
            let object = SessionObject::of(
                kind,
                m.namespace.as_deref(),
                m.name.as_deref().unwrap_or_default(),
            );
            Some((id, object_ref(&object)))
        })
        .collect())
}

/// Reads one session's Lease by name.
async fn read_lease(
    req: &Requester,
    namespace: &str,
    id: &str,
) -> Result<Option<Lease>, Unchecked> {
    let name = contract::lease_name(id);
    let api: Api<Lease> = Api::namespaced(req.client().clone(), namespace);
    req.call(api.get_opt(&name))
        .await
        .map_err(|err| err.unchecked(format!("get lease {namespace}/{name} (serve session {id})")))
}

/// What doctor reports about a session's Lease at `now` (liveness judged by
/// [`contract::judge`]).
pub fn judge_lease(
    id: &str,
    namespace: &str,
    lease: Option<&Lease>,
    now: Timestamp,
) -> SessionCheck {
    let mut check = SessionCheck {
        id: id.to_owned(),
        lease: format!("{namespace}/{}", contract::lease_name(id)),
        namespace: namespace.to_owned(),
        state: SessionState::Missing,
        holder: None,
        renew_time: None,
        lease_duration_seconds: None,
        expired_for_seconds: None,
        expires_in_seconds: None,
        process_gone: None,
        process_stopped: None,
    };
    if let Some(spec) = lease.and_then(|l| l.spec.as_ref()) {
        check.holder = spec.holder_identity.clone();
        check.renew_time = spec.renew_time.as_ref().map(|t| t.0.to_string());
        check.lease_duration_seconds = spec.lease_duration_seconds;
    }
    match contract::judge(lease, now) {
        Liveness::Alive { expires } => {
            check.state = SessionState::Alive;
            check.expires_in_seconds = Some(expires.as_second() - now.as_second());
        }
        Liveness::Expired { since } => {
            check.state = SessionState::Expired;
            check.expired_for_seconds = since.map(|t| now.as_second() - t.as_second());
        }
        Liveness::Missing => check.state = SessionState::Missing,
    }
    if check.state == SessionState::Alive
        && let Some(pid) = crate::register::session::process_gone(lease)
    {
        check.state = SessionState::Expired;
        check.expires_in_seconds = None;
        check.process_gone = Some(pid);
    }
    check.process_stopped = crate::register::session::process_stopped(lease);
    check
}

/// Whether a session of this route (its Lease's route annotation) has a
/// tunnel agent, which reaps it when its Lease expires.
pub fn route_has_agent(route: Option<&str>) -> bool {
    route.is_some_and(|r| r.contains("→ tunnel"))
}

/// When an alive session's Lease runs out unless renewed:
/// `spec.renewTime + spec.leaseDurationSeconds` (whole seconds, as
/// [`contract::judge`] counts).
pub fn expires_at(s: &SessionCheck) -> Option<Timestamp> {
    let renewed: Timestamp = s.renew_time.as_deref()?.parse().ok()?;
    let at = renewed
        .as_second()
        .saturating_add(i64::from(s.lease_duration_seconds.unwrap_or(0)));
    Timestamp::from_second(at).ok()
}

/// `its Lease expires at 2026-09-01T12:00:13Z (in 13s) unless renewed`, for
/// an alive session, counted from `now`.
pub fn expiry_text(s: &SessionCheck, now: Timestamp) -> String {
    match expires_at(s) {
        Some(at) => format!(
            "its Lease expires at {at} (in {}) unless renewed",
            crate::output::age(at.as_second() - now.as_second())
        ),
        None => "its Lease is still valid".to_owned(),
    }
}

/// Who reaps a session once its Lease expires: its tunnel agent (`agent`)
/// or `doctor --fix`.
fn reaper_text(agent: bool) -> &'static str {
    if agent {
        "its tunnel agent then reaps the session within seconds (or `kubectl cozy doctor --fix` does)"
    } else {
        "`kubectl cozy doctor --fix` then reaps the session"
    }
}

/// What to do about an APIService of a session whose Lease is still valid
/// (`check`, alive at `now`): stop that serve or wait for the Lease to
/// expire; never delete its APIService by hand. `--fix` plans nothing for it.
pub fn live_session_remedy(check: &SessionCheck, agent: bool, now: Timestamp) -> Remedy {
    Remedy {
        description: format!(
            "registered by the serve session {}{}, and {}: do not delete its APIService by hand. Stop that \
             `kubectl cozy serve` (it deregisters on exit), or wait until the Lease expires: {}",
            check.id,
            check
                .holder
                .as_deref()
                .map(|h| format!(" ({h})"))
                .unwrap_or_default(),
            expiry_text(check, now),
            reaper_text(agent)
        ),
        command: lease_command(check),
        automatic: false,
    }
}

/// The part of a namespace's fix that waits for the live session `check`
/// behind APIService `name` (followed by [`NEVER_BY_HAND`]).
pub fn live_session_wait(name: &str, check: &SessionCheck, agent: bool, now: Timestamp) -> String {
    format!(
        "APIService {name} belongs to the live serve session {}, and {}: stop that `kubectl cozy serve`, or wait \
         until the Lease expires: {}",
        check.id,
        expiry_text(check, now),
        reaper_text(agent)
    )
}

/// What doctor never suggests for a live session's APIService.
pub const NEVER_BY_HAND: &str = "Never delete a live session's APIService by hand.";

/// For an APIService that fails although its session's Lease is valid: the
/// serve process may be gone, and when the Lease will say so.
pub fn live_session_hint(check: &SessionCheck, agent: bool, now: Timestamp) -> String {
    format!(
        "the Lease of serve session {} is still valid but its APIService fails: that `kubectl cozy serve` may have \
         died (killed, crashed, or cut off from the cluster). If so, nothing renews the Lease: {}, and {}",
        check.id,
        expiry_text(check, now).replacen("its Lease ", "it ", 1),
        reaper_text(agent)
    )
}

/// `kubectl get lease -n NS kubectl-cozy-ID`: who holds a session (holder
/// `user@host, pid N`) and when it was renewed.
pub fn lease_command(check: &SessionCheck) -> String {
    format!(
        "kubectl get lease -n {} {}",
        check.namespace,
        contract::lease_name(&check.id)
    )
}

/// A Lease's state in words.
pub fn state_text(s: &SessionCheck) -> String {
    match s.state {
        SessionState::Alive => {
            format!(
                "alive (renewed {}, duration {}s{})",
                s.renew_time.clone().unwrap_or_default(),
                s.lease_duration_seconds.unwrap_or(0),
                s.expires_in_seconds
                    .map(|secs| format!(", expires in {}", crate::output::age(secs)))
                    .unwrap_or_default()
            ) + &stopped_text(s)
        }
        SessionState::Expired => {
            (match (s.process_gone, s.expired_for_seconds) {
                (Some(pid), _) => format!(
                    "dead: its process (pid {pid}) on this machine is gone (renewed {}, duration {}s)",
                    s.renew_time.clone().unwrap_or_default(),
                    s.lease_duration_seconds.unwrap_or(0)
                ),
                (None, Some(secs)) => format!(
                    "expired {} (renewed {}, duration {}s)",
                    ago(secs),
                    s.renew_time.clone().unwrap_or_default(),
                    s.lease_duration_seconds.unwrap_or(0)
                ),
                (None, None) => "expired (no renewTime)".to_owned(),
            }) + &stopped_text(s)
        }
        SessionState::Missing => "not found".to_owned(),
        SessionState::Unknown => "could not be read".to_owned(),
    }
}

/// `; its process (pid N) on this machine is stopped …` when it is.
fn stopped_text(s: &SessionCheck) -> String {
    s.process_stopped
        .map(|pid| {
            format!(
                "; its process (pid {pid}) on this machine is stopped (SIGSTOP, Ctrl-Z or a debugger), not gone: \
                 `kill -CONT {pid}` resumes it"
            )
        })
        .unwrap_or_default()
}

fn record_text(session: &Session) -> Option<String> {
    let r = &session.record;
    let mut parts = Vec::new();
    if !r.served.is_empty() {
        parts.push(format!("serves {}", r.served.join(", ")));
    }
    if let Some(route) = &r.route {
        parts.push(format!("route {route}"));
    }
    if let Some(started) = &r.started {
        parts.push(format!("started {started}"));
    }
    if let Some(saved) = session.saved_api_services() {
        parts.push(format!(
            "originals of taken-over APIServices saved in {}",
            saved.kubectl_args()
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// How to reap a session: the by-hand commands, or — when it took over
/// APIServices, which only a restore gives back — `doctor --fix`.
pub fn reap_remedy(session: &Session) -> Remedy {
    let id = &session.check.id;
    let untouched = match session.tampered.as_slice() {
        [] => String::new(),
        tampered => format!(
            " (except APIService {}, whose saved original was changed: restore it from a copy you trust, or delete it)",
            tampered
                .iter()
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    match session.saved_api_services() {
        Some(saved) => Remedy {
            description: format!(
                "reap the session: restore the APIServices it took over from {}{untouched}, delete its other \
                 APIServices, then everything else labeled {SESSION_LABEL}={id} in reap order",
                saved.kubectl_args()
            ),
            command: "kubectl cozy doctor --fix".to_owned(),
            automatic: true,
        },
        None => Remedy {
            description: format!(
                "reap the session: delete everything labeled {SESSION_LABEL}={id} (its APIServices first)"
            ),
            command: contract::reap_command(id, &session.check.namespace),
            automatic: true,
        },
    }
}

/// The finding for a session whose Lease is missing or expired.
pub fn session_finding(session: &Session) -> Finding {
    let id = &session.check.id;
    let left: Vec<String> = session
        .all_objects()
        .iter()
        .map(|o| match &o.namespace {
            Some(ns) => format!("{}/{} -n {ns}", o.kind.to_lowercase(), o.name),
            None => format!("{}/{}", o.kind.to_lowercase(), o.name),
        })
        .collect();
    let (what, why) = match session.check.process_stopped {
        Some(pid) => (
            format!(
                "the `kubectl cozy serve` session {id} renews nothing (its process, pid {pid}, is stopped) and left {} \
                 object(s) registered",
                left.len()
            ),
            "its Lease expired while its process is stopped, so its extension server does not answer; its \
             APIService stays registered and unavailable, which stalls namespace deletion cluster-wide",
        ),
        None => (
            format!(
                "the `kubectl cozy serve` session {id} is gone but left {} object(s) registered",
                left.len()
            ),
            "nothing renews its Lease any more, so its extension server is gone; its APIService stays registered \
             and unavailable, which stalls namespace deletion cluster-wide",
        ),
    };
    let mut f = Finding::new(
        Code::ServeSessionExpired,
        Severity::Error,
        lease_ref(&session.check.namespace, id),
        what,
        why,
    )
    .evidence(
        format!("Lease {}", session.check.lease),
        state_text(&session.check),
    );
    if let Some(text) = record_text(session) {
        f = f.evidence(format!("Lease {} annotations", session.check.lease), text);
    }
    f = f.evidence(
        format!("objects labeled {SESSION_LABEL}={id}"),
        left.join(", "),
    );
    for (name, why) in &session.tampered {
        f = f.evidence(format!("APIService {name}"), why.clone());
    }
    f.remedy(reap_remedy(session))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    fn now() -> Timestamp {
        "2026-09-01T12:00:00Z".parse().unwrap()
    }

    fn session(state: SessionState, record: SessionRecord, objects: Vec<ObjectRef>) -> Session {
        let mut check = judge_lease("abc", contract::DEFAULT_NAMESPACE, None, now());
        check.state = state;
        Session {
            check,
            record,
            api_services: vec!["v1alpha1.apps.cozystack.io".into()],
            objects,
            lease_exists: state != SessionState::Missing,
            tampered: Vec::new(),
        }
    }

    #[test]
    fn leases_are_judged_in_the_session_namespace() {
        let lease = |renew: &str, secs: i32| Lease {
            spec: Some(LeaseSpec {
                renew_time: Some(MicroTime(renew.parse().unwrap())),
                lease_duration_seconds: Some(secs),
                holder_identity: Some("alice@laptop, pid 1".into()),
                ..LeaseSpec::default()
            }),
            ..Lease::default()
        };
        let ns = contract::DEFAULT_NAMESPACE;
        let alive = judge_lease("abc", ns, Some(&lease("2026-09-01T11:59:55Z", 15)), now());
        assert_eq!(alive.state, SessionState::Alive);
        assert_eq!(alive.lease, "kubectl-cozy-system/kubectl-cozy-abc");
        assert_eq!(alive.holder.as_deref(), Some("alice@laptop, pid 1"));
        let expired = judge_lease("abc", ns, Some(&lease("2026-09-01T11:58:00Z", 15)), now());
        assert_eq!(expired.state, SessionState::Expired);
        assert_eq!(expired.expired_for_seconds, Some(105));
        assert_eq!(
            state_text(&expired),
            "expired 105s ago (renewed 2026-09-01T11:58:00Z, duration 15s)"
        );
        // Alive by its Lease, but its process ran here and is gone (this
        // process recorded under another start time: the pid was reused).
        #[cfg(target_os = "linux")]
        {
            let mut here = crate::register::local_process::this_process()
                .unwrap()
                .split(' ')
                .map(str::to_owned)
                .collect::<Vec<_>>();
            here[3] = "1".into();
            let mut dead = lease("2026-09-01T11:59:55Z", 15);
            dead.metadata.annotations = Some(
                [(
                    crate::register::session::PROCESS_ANNOTATION.to_owned(),
                    here.join(" "),
                )]
                .into(),
            );
            let dead = judge_lease("abc", ns, Some(&dead), now());
            assert_eq!(dead.state, SessionState::Expired);
            assert_eq!(dead.process_gone, Some(std::process::id()));
            assert_eq!(
                state_text(&dead),
                format!(
                    "dead: its process (pid {}) on this machine is gone (renewed \
                     2026-09-01T11:59:55Z, duration 15s)",
                    std::process::id()
                )
            );
        }
        // Expired, its process here stopped (SIGSTOP): said so, with the
        // way to resume it.
        #[cfg(target_os = "linux")]
        {
            let mut sleeper = std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap();
            let pid = sleeper.id();
            let record = crate::register::local_process::recorded(pid).unwrap();
            std::process::Command::new("kill")
                .args(["-STOP", &pid.to_string()])
                .status()
                .unwrap();
            let mut frozen = lease("2026-09-01T11:58:00Z", 15);
            frozen.metadata.annotations = Some(
                [(
                    crate::register::session::PROCESS_ANNOTATION.to_owned(),
                    record,
                )]
                .into(),
            );
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            let check = loop {
                let check = judge_lease("abc", ns, Some(&frozen), now());
                if check.process_stopped.is_some() || std::time::Instant::now() > deadline {
                    break check;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            };
            let _ = sleeper.kill();
            let _ = sleeper.wait();
            assert_eq!(check.state, SessionState::Expired);
            assert_eq!(check.process_stopped, Some(pid));
            assert!(
                state_text(&check).ends_with(&format!(
                    "; its process (pid {pid}) on this machine is stopped (SIGSTOP, Ctrl-Z or a debugger), not \
                     gone: `kill -CONT {pid}` resumes it"
                )),
                "{}",
                state_text(&check)
            );
        }
        assert_eq!(
            judge_lease("abc", ns, None, now()).state,
            SessionState::Missing
        );
        let bare = judge_lease("abc", ns, Some(&Lease::default()), now());
        assert_eq!(bare.state, SessionState::Expired);
        assert_eq!(bare.expired_for_seconds, None);
    }

    #[test]
    fn an_expired_session_is_reaped_by_label() {
        let service = object_ref(&SessionObject::of(
            contract::session_kind("v1", "Service").unwrap(),
            Some("kubectl-cozy-system"),
            "kubectl-cozy-abc",
        ));
        let s = session(
            SessionState::Expired,
            SessionRecord::default(),
            vec![service],
        );
        let f = session_finding(&s);
        assert_eq!(
            f.id,
            "ServeSessionExpired:lease/kubectl-cozy-system/kubectl-cozy-abc"
        );
        assert!(f.what.contains("left 3 object(s)"), "{}", f.what);
        assert_eq!(
            f.evidence.last().unwrap().observed,
            "apiservice/v1alpha1.apps.cozystack.io, service/kubectl-cozy-abc -n kubectl-cozy-system, \
             lease/kubectl-cozy-abc -n kubectl-cozy-system"
        );
        let remedy = f.remedy.unwrap();
        assert!(remedy.automatic);
        assert!(
            remedy
                .command
                .starts_with("kubectl delete apiservices -l kubectl-cozy.io/session=abc"),
            "{}",
            remedy.command
        );
        assert_eq!(s.saved_api_services(), None);
        assert_eq!(s.report().objects.len(), 3);
    }

    /// Regression: `serveSessions[].objects`, documented "in reap order",
    /// listed the namespace and the cluster-wide RBAC before the Lease,
    /// which `register::reap` deletes before them.
    #[test]
    fn objects_are_listed_in_the_order_the_reaper_acts_on_them() {
        let ns = Some("kubectl-cozy-system");
        let of = |api_version: &str, kind: &str, namespace: Option<&str>, name: &str| {
            object_ref(&SessionObject::of(
                contract::session_kind(api_version, kind).unwrap(),
                namespace,
                name,
            ))
        };
        // As `collect` sorts them (the Lease is not among them).
        let mut objects = vec![
            of(
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                None,
                "kubectl-cozy-abc",
            ),
            of("v1", "Namespace", None, "kubectl-cozy-system"),
            of(
                "rbac.authorization.k8s.io/v1",
                "ClusterRoleBinding",
                None,
                "kubectl-cozy-abc",
            ),
            of("v1", "ConfigMap", ns, "kubectl-cozy-abc-originals"),
            of("v1", "Service", ns, "kubectl-cozy-abc"),
            of("apps/v1", "Deployment", ns, "kubectl-cozy-abc"),
        ];
        objects.sort_by_key(|o| contract::reap_rank(&o.api_version, &o.kind));
        let s = session(SessionState::Expired, SessionRecord::default(), objects);
        let kinds: Vec<String> = s.report().objects.iter().map(|o| o.kind.clone()).collect();
        assert_eq!(
            kinds,
            [
                "APIService",
                "Service",
                "Deployment",
                "ConfigMap",
                "Lease",
                "Namespace",
                "ClusterRoleBinding",
                "ClusterRole"
            ]
        );
        // The order `register::reap` acts in.
        let mut reaped: Vec<SessionObject> =
            s.all_objects().iter().rev().map(session_object).collect();
        reaped.sort_by_key(|o| contract::reap_rank(&o.api_version, &o.kind));
        let reaped: Vec<String> = reaped.into_iter().map(|o| o.kind).collect();
        assert_eq!(reaped, kinds);
    }

    #[test]
    fn a_takeover_session_is_restored_by_doctor_fix() {
        let record = SessionRecord {
            served: vec!["apps.cozystack.io/v1alpha1".into()],
            saved_api_services: Some("kubectl-cozy-abc-originals".into()),
            ..SessionRecord::default()
        };
        let s = session(SessionState::Expired, record, Vec::new());
        let saved = s.saved_api_services().unwrap();
        assert_eq!(
            saved.kubectl_args(),
            "configmaps/kubectl-cozy-abc-originals -n kubectl-cozy-system"
        );
        let f = session_finding(&s);
        let annotations = &f.evidence[1];
        assert_eq!(
            annotations.observed,
            "serves apps.cozystack.io/v1alpha1; originals of taken-over APIServices saved in \
             configmaps/kubectl-cozy-abc-originals -n kubectl-cozy-system"
        );
        let remedy = f.remedy.unwrap();
        assert_eq!(remedy.command, "kubectl cozy doctor --fix");
        assert!(
            remedy
                .description
                .contains("restore the APIServices it took over")
        );
        // Without the Lease, a labelled ConfigMap of the conventional name says the same.
        let cm = object_ref(&SessionObject::of(
            &CONFIG_MAP,
            Some("kubectl-cozy-system"),
            "kubectl-cozy-abc-originals",
        ));
        let s = session(
            SessionState::Missing,
            SessionRecord::default(),
            vec![cm.clone()],
        );
        assert_eq!(s.saved_api_services(), Some(cm));
    }
}
