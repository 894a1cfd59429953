//! The tunnel agent's side of the session contract: it watches its session's
//! Lease and, once serve stops renewing it, reaps the session with the rights
//! it holds for exactly that ([`super::agent`]), then exits.
//!
//! **Expiry on the agent's own clock.** Serve's clock (a laptop) and the
//! cluster's need not agree, so the agent does not compare `renewTime` with
//! its clock. Like client-go's leader election (`observedTime`), it reads the
//! Lease every [`SentinelConfig::poll`] and notes, on its monotonic clock,
//! when the Lease last changed (`resourceVersion`); the session is dead once
//! the Lease went unchanged for `leaseDurationSeconds` plus
//! [`SentinelConfig::grace`], or is gone (two reads in a row: serve's own
//! teardown deletes it). Polling rather than a watch: expiry is the absence
//! of events, which a watch does not report, and one GET a second is cheap.
//! The reap then re-reads the Lease and goes ahead only if it is still at the
//! `resourceVersion` seen expiring ([`Judge::Unchanged`]).
//!
//! **Reap.** By name, not by label (`list` cannot be scoped to the session's
//! objects): [`super::session::named_objects`] from the Lease's record —
//! APIServices first (restored or deleted), the Service, the saved originals,
//! the Lease, the namespace if the session created it, the agent's
//! ClusterRole last. The garbage collector removes the rest (owned by the
//! Lease or the ClusterRole), the agent's own Deployment included. If an
//! APIService cannot be restored, nothing else is touched and the reap is
//! retried every [`SentinelConfig::retry`].

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use kube::api::Api;

use super::reap::{Begun, Judge, ReapOptions, ReapReport, Reaping, Target};
use super::session::{self, SessionRecord};

/// What the agent adds to the Lease's duration before the session counts
/// as dead.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// How the sentinel behaves.
#[derive(Debug, Clone)]
pub struct SentinelConfig {
    /// The session id.
    pub id: String,
    /// The session namespace.
    pub namespace: String,
    /// Time between reads of the Lease.
    pub poll: Duration,
    /// Added to the Lease's duration before it counts as expired.
    pub grace: Duration,
    /// Time between reap attempts when an APIService could not be restored.
    pub retry: Duration,
    /// Limit of each request.
    pub limit: Duration,
    /// Give up once the Lease could not be read for this long (`None`:
    /// never, as the agent, which lives in the cluster).
    pub give_up_after: Option<Duration>,
}

impl SentinelConfig {
    /// Defaults for session `id` in `namespace`: poll every second, 2 s
    /// grace, retry every 5 s, 5 s per request.
    pub fn new(id: &str, namespace: &str) -> Self {
        SentinelConfig {
            id: id.to_owned(),
            namespace: namespace.to_owned(),
            poll: Duration::from_secs(1),
            grace: DEFAULT_GRACE,
            retry: Duration::from_secs(5),
            limit: Duration::from_secs(5),
            give_up_after: None,
        }
    }
}

/// A Lease seen dead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    /// The `resourceVersion` that stayed unchanged (`None`: the Lease is gone).
    pub resource_version: Option<String>,
    /// What the Lease recorded (its last reading).
    pub record: SessionRecord,
}

/// What the sentinel knows of the Lease between reads.
#[derive(Debug, Clone)]
pub struct Observer {
    grace: Duration,
    last: Option<Observed>,
    missing: u32,
}

#[derive(Debug, Clone)]
struct Observed {
    resource_version: Option<String>,
    changed_at: Instant,
    duration: Duration,
    record: SessionRecord,
}

impl Observer {
    /// An observer adding `grace` to the Lease's duration.
    pub fn new(grace: Duration) -> Self {
        Observer {
            grace,
            last: None,
            missing: 0,
        }
    }

    /// Reading the Lease works again at `now` after failing: serve's renewals
    /// went to the same kube-apiserver and may have failed all along, so
    /// the Lease's duration starts again from now (else the first good read
    /// after an outage longer than the Lease would reap a session that
    /// renews a second later).
    pub fn reconnected(&mut self, now: Instant) {
        if let Some(o) = &mut self.last {
            o.changed_at = now;
        }
    }

    /// Takes one reading of the Lease at `now`; returns the expiry once seen.
    pub fn observe(&mut self, lease: Option<&Lease>, now: Instant) -> Option<Expired> {
        let Some(lease) = lease else {
            self.missing += 1;
            return (self.missing >= 2).then(|| Expired {
                resource_version: None,
                record: self
                    .last
                    .as_ref()
                    .map(|o| o.record.clone())
                    .unwrap_or_default(),
            });
        };
        self.missing = 0;
        let rv = lease.metadata.resource_version.clone();
        let duration = Duration::from_secs(
            lease
                .spec
                .as_ref()
                .and_then(|s| s.lease_duration_seconds)
                .and_then(|d| u64::try_from(d).ok())
                .unwrap_or(0),
        );
        let record = SessionRecord::from_annotations(lease.metadata.annotations.as_ref())
            .unwrap_or_else(|err| {
                tracing::warn!(%err, "read the session Lease's annotations");
                self.last
                    .as_ref()
                    .map(|o| o.record.clone())
                    .unwrap_or_default()
            });
        match &mut self.last {
            Some(o) if o.resource_version == rv => {
                o.duration = duration;
                o.record = record;
            }
            _ => {
                self.last = Some(Observed {
                    resource_version: rv,
                    changed_at: now,
                    duration,
                    record,
                });
            }
        }
        let o = self.last.as_ref()?;
        (now.duration_since(o.changed_at) > o.duration + self.grace).then(|| Expired {
            resource_version: o.resource_version.clone(),
            record: o.record.clone(),
        })
    }
}

/// Reads the Lease until the session is dead; `None` once it could not be
/// read for [`SentinelConfig::give_up_after`].
pub async fn watch(client: &Client, config: &SentinelConfig) -> Option<Expired> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), &config.namespace);
    let name = session::lease_name(&config.id);
    let mut observer = Observer::new(config.grace);
    let mut failing_since: Option<Instant> = None;
    loop {
        match tokio::time::timeout(config.limit, leases.get_opt(&name)).await {
            Ok(Ok(lease)) => {
                if failing_since.take().is_some() {
                    tracing::info!(lease = %name, "reading the session Lease works again");
                    observer.reconnected(Instant::now());
                }
                if let Some(expired) = observer.observe(lease.as_ref(), Instant::now()) {
                    return Some(expired);
                }
            }
            failed => {
                // Refused after the Lease was read: the agent's rights went
                // with the session's ClusterRole, which another reaper
                // (serve's guard, the next serve, doctor) removes last; the
                // garbage collector removes this agent next.
                let rights_gone = observer.last.is_some()
                    && matches!(&failed, Ok(Err(kube::Error::Api(status))) if status.code == 403);
                let error = match failed {
                    Ok(Err(err)) => err.to_string(),
                    _ => format!("no answer within {:?}", config.limit),
                };
                let since = *failing_since.get_or_insert_with(|| {
                    if rights_gone {
                        tracing::info!(lease = %name, "the session's rights are gone: reaped by another; waiting to be removed");
                    } else {
                        tracing::warn!(lease = %name, %error, "read the session Lease");
                    }
                    Instant::now()
                });
                if config
                    .give_up_after
                    .is_some_and(|limit| since.elapsed() >= limit)
                {
                    tracing::warn!(lease = %name, %error, failing_for = ?since.elapsed(), "giving up on the session Lease");
                    return None;
                }
            }
        }
        tokio::time::sleep(config.poll).await;
    }
}

/// How a reap attempt ended.
#[derive(Debug)]
pub enum Attempt {
    /// The session was reaped.
    Reaped(ReapReport),
    /// The Lease changed since it was seen expiring: serve is back.
    Renewed,
    /// An APIService could not be restored (nothing else touched), or the
    /// Lease could not be re-read; try again.
    Retry(String),
}

/// One reap of the session seen `expired`.
pub async fn reap(client: &Client, config: &SentinelConfig, expired: &Expired) -> Attempt {
    let target = Target {
        id: config.id.clone(),
        namespace: config.namespace.clone(),
        objects: session::named_objects(&config.id, &config.namespace, &expired.record),
    };
    let options = ReapOptions {
        judge: Judge::Unchanged {
            resource_version: expired.resource_version.clone(),
        },
        stop_on_unrestored: true,
    };
    let mut reaping = match Reaping::begin(client, &target, &options, config.limit).await {
        Ok(Begun::Reaping(r)) => r,
        Ok(Begun::Alive { .. }) => return Attempt::Renewed,
        Err(err) => return Attempt::Retry(crate::error_chain::error_chain(&err)),
    };
    reaping.api_services(client, config.limit).await;
    if reaping.unrestored() {
        let why = super::teardown::problems(reaping.report()).join("; ");
        return Attempt::Retry(why);
    }
    reaping.rest(client, config.limit).await;
    // No re-read: the agent's rights went with its ClusterRole, the last
    // object deleted.
    Attempt::Reaped(reaping.finish())
}

/// Watches the Lease, reaps the session once it is dead (retrying as
/// needed), and returns the report; `None` if it gave up reading the Lease
/// ([`SentinelConfig::give_up_after`]). `on_expired` runs once when the
/// Lease is first seen dead (the agent stops serving then).
pub async fn run(
    client: &Client,
    config: &SentinelConfig,
    mut on_expired: impl FnMut(&Expired),
) -> Option<ReapReport> {
    loop {
        let expired = watch(client, config).await?;
        tracing::info!(
            session = %config.id,
            lease_gone = expired.resource_version.is_none(),
            "the session Lease is no longer renewed; reaping the session"
        );
        on_expired(&expired);
        loop {
            match reap(client, config, &expired).await {
                Attempt::Reaped(report) => return Some(report),
                Attempt::Renewed => {
                    tracing::info!(session = %config.id, "the session Lease was renewed; serve is back");
                    break;
                }
                Attempt::Retry(why) => {
                    tracing::warn!(session = %config.id, %why, retry_in = ?config.retry, "reap incomplete");
                    tokio::time::sleep(config.retry).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::register::session::SESSION_LABEL;
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    fn lease(rv: &str, secs: i32) -> Lease {
        Lease {
            metadata: ObjectMeta {
                resource_version: Some(rv.into()),
                annotations: Some(
                    SessionRecord {
                        api_services: vec!["v1.a.example.com".into()],
                        ..SessionRecord::default()
                    }
                    .to_annotations(),
                ),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                lease_duration_seconds: Some(secs),
                ..LeaseSpec::default()
            }),
        }
    }

    /// An outage of kube-apiserver longer than the Lease: serve could not
    /// renew either. The first good read does not reap; serve gets the
    /// Lease's duration again from there.
    #[test]
    fn after_an_outage_the_lease_gets_its_duration_again() {
        let t0 = Instant::now();
        let mut o = Observer::new(Duration::from_secs(2));
        assert!(o.observe(Some(&lease("7", 15)), t0).is_none());
        // 27 s without a read, then reading works again.
        let back = t0 + Duration::from_secs(27);
        o.reconnected(back);
        assert!(o.observe(Some(&lease("7", 15)), back).is_none());
        assert!(
            o.observe(Some(&lease("7", 15)), back + Duration::from_secs(16))
                .is_none()
        );
        // Still unchanged past the duration and the grace: expired.
        assert!(
            o.observe(Some(&lease("7", 15)), back + Duration::from_secs(18))
                .is_some()
        );
    }

    #[test]
    fn a_lease_expires_after_its_duration_unchanged_on_the_observers_clock() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut o = Observer::new(Duration::from_secs(2));
        assert_eq!(o.observe(Some(&lease("1", 15)), at(0)), None);
        assert_eq!(o.observe(Some(&lease("1", 15)), at(10)), None);
        // Renewed at 12: the clock starts again.
        assert_eq!(o.observe(Some(&lease("2", 15)), at(12)), None);
        assert_eq!(o.observe(Some(&lease("2", 15)), at(29)), None);
        let expired = o.observe(Some(&lease("2", 15)), at(30)).unwrap();
        assert_eq!(expired.resource_version.as_deref(), Some("2"));
        assert_eq!(expired.record.api_services, ["v1.a.example.com"]);
    }

    /// A fake kube-apiserver holding one session (Lease, Service, its own
    /// namespace, the agent's ClusterRole) that behaves like the garbage
    /// collector at its fastest: once the Lease is deleted, the agent's Role
    /// (owned by the Lease) is gone, and listing Leases is forbidden.
    fn fake_cluster(calls: Arc<Mutex<Vec<String>>>) -> Client {
        let lease_deleted = Arc::new(AtomicBool::new(false));
        let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
            let calls = calls.clone();
            let lease_deleted = lease_deleted.clone();
            async move {
                let method = req.method().clone();
                let path = req.uri().path().to_owned();
                let query = req.uri().query().unwrap_or_default().to_owned();
                calls.lock().unwrap().push(format!("{method} {path}"));
                let leases = "/apis/coordination.k8s.io/v1/namespaces/ns/leases";
                let ok = |body: serde_json::Value| (200, body);
                let (code, body) = match (method.as_str(), path.as_str()) {
                    ("GET", p) if p == format!("{leases}/kubectl-cozy-3f2a") => {
                        if lease_deleted.load(Ordering::SeqCst) {
                            (
                                404,
                                serde_json::json!({"kind": "Status", "code": 404, "reason": "NotFound"}),
                            )
                        } else {
                            ok(serde_json::to_value(lease("7", 15)).unwrap())
                        }
                    }
                    ("GET", p) if p == leases => {
                        assert!(query.contains("labelSelector"), "{query}");
                        if lease_deleted.load(Ordering::SeqCst) {
                            (
                                403,
                                serde_json::json!({"kind": "Status", "code": 403, "reason": "Forbidden",
                                "message": "leases.coordination.k8s.io is forbidden: RBAC: role.rbac.authorization.k8s.io \"kubectl-cozy-3f2a\" not found"}),
                            )
                        } else {
                            ok(
                                serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {},
                                "items": [{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": "kubectl-cozy-3f2a", "namespace": "ns",
                                        "labels": {SESSION_LABEL: "3f2a"}}}]}),
                            )
                        }
                    }
                    ("GET", "/api/v1/namespaces/ns") => ok(serde_json::json!({
                        "apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": "ns", "uid": "u-ns", "resourceVersion": "3",
                            "labels": {SESSION_LABEL: "3f2a"}}})),
                    ("DELETE", p) => {
                        if p == format!("{leases}/kubectl-cozy-3f2a") {
                            lease_deleted.store(true, Ordering::SeqCst);
                        }
                        ok(
                            serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}),
                        )
                    }
                    _ => (
                        404,
                        serde_json::json!({"kind": "Status", "code": 404, "reason": "NotFound"}),
                    ),
                };
                let response = http::Response::builder()
                    .status(code)
                    .header("content-type", "application/json")
                    .body(kube::client::Body::from(serde_json::to_vec(&body).unwrap()))
                    .unwrap();
                Ok::<_, std::convert::Infallible>(response)
            }
        });
        Client::new(service, "default")
    }

    #[tokio::test]
    async fn the_namespace_is_judged_before_the_lease_and_its_role_go() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let client = fake_cluster(calls.clone());
        let mut record = lease("7", 15);
        record.metadata.annotations = Some(
            SessionRecord {
                in_session_namespace: true,
                ..SessionRecord::default()
            }
            .to_annotations(),
        );
        let expired = Expired {
            resource_version: Some("7".into()),
            record: SessionRecord::from_annotations(record.metadata.annotations.as_ref()).unwrap(),
        };
        let config = SentinelConfig::new("3f2a", "ns");
        let Attempt::Reaped(report) = reap(&client, &config, &expired).await else {
            panic!("not reaped: {:?}", calls.lock().unwrap());
        };
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        assert!(report.left.is_empty(), "{:?}", report.left);
        let calls = calls.lock().unwrap().clone();
        let position = |call: &str| calls.iter().position(|c| c == call);
        let listed = position("GET /apis/coordination.k8s.io/v1/namespaces/ns/leases").unwrap();
        let lease_deleted =
            position("DELETE /apis/coordination.k8s.io/v1/namespaces/ns/leases/kubectl-cozy-3f2a")
                .unwrap();
        let namespace_deleted = position("DELETE /api/v1/namespaces/ns").unwrap();
        assert!(listed < lease_deleted, "{calls:#?}");
        assert!(lease_deleted < namespace_deleted, "{calls:#?}");
    }

    #[test]
    fn a_missing_lease_counts_after_two_reads_and_keeps_the_last_record() {
        let t0 = Instant::now();
        let mut o = Observer::new(Duration::from_secs(2));
        assert_eq!(o.observe(Some(&lease("1", 15)), t0), None);
        assert_eq!(o.observe(None, t0), None);
        // It came back (a read glitch): the count restarts.
        assert_eq!(o.observe(Some(&lease("1", 15)), t0), None);
        assert_eq!(o.observe(None, t0), None);
        let gone = o.observe(None, t0).unwrap();
        assert_eq!(gone.resource_version, None);
        assert_eq!(gone.record.api_services, ["v1.a.example.com"]);
    }

    /// Once the Lease was read, a refusal means the session's ClusterRole
    /// was reaped by another: a word at info, not a warning (the agent
    /// waits for the garbage collector); a refusal from the start is one.
    #[tokio::test]
    async fn refused_after_the_lease_was_read_is_the_rights_gone_not_a_warning() {
        for (reads_first, want, not) in [
            (true, " INFO ", " WARN "),
            (false, " WARN ", "rights are gone"),
        ] {
            let read = Arc::new(AtomicBool::new(!reads_first));
            let service = tower::service_fn(move |_req: http::Request<kube::client::Body>| {
                let denied = read.swap(true, Ordering::SeqCst);
                async move {
                    let body = if denied {
                        serde_json::json!({"kind": "Status", "code": 403, "reason": "Forbidden",
                            "message": "leases.coordination.k8s.io \"kubectl-cozy-3f2a\" is forbidden"})
                    } else {
                        serde_json::to_value(lease("7", 15)).unwrap()
                    };
                    let response = http::Response::builder()
                        .status(if denied { 403 } else { 200 })
                        .header("content-type", "application/json")
                        .body(kube::client::Body::from(serde_json::to_vec(&body).unwrap()))
                        .unwrap();
                    Ok::<_, std::convert::Infallible>(response)
                }
            });
            let client = Client::new(service, "default");
            let mut config = SentinelConfig::new("3f2a", "ns");
            config.poll = Duration::from_millis(5);
            let (subscriber, logs) = crate::test_log::subscriber(None);
            let _logging = tracing::subscriber::set_default(subscriber);
            let watching =
                tokio::time::timeout(Duration::from_millis(100), watch(&client, &config));
            assert!(watching.await.is_err(), "the agent keeps reading");
            let text = logs.text();
            assert!(text.contains(want) && !text.contains(not), "{text}");
            assert_eq!(text.lines().count(), 1, "{text}");
        }
    }
}
