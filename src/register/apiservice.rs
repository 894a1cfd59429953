//! The APIServices a session registers (one per served group/version) and
//! the Service they point at: typed manifests ([`api_service`],
//! [`service`]), who already serves a group/version ([`occupant`]: another
//! session, live or expired, someone else, or kube-apiserver itself), the
//! refusal that names them ([`Occupant::refusal`]), and the wait for
//! `Available=True` ([`wait_available`]).
//!
//! Priorities: a new APIService gets `groupPriorityMinimum`
//! [`GROUP_PRIORITY_MINIMUM`] and `versionPriority` [`VERSION_PRIORITY`]
//! (Cozystack's own, so discovery orders groups as it does with Cozystack's
//! server); a taken-over one keeps the original's.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::{
    APIService, APIServiceSpec, ServiceReference,
};
use kube::Client;
use kube::api::Api;
use serde_json::Value;

use super::agent::{self, DATA_PORT_NAME};
use super::session::{self, Liveness, SessionRecord};

/// `groupPriorityMinimum` of a new APIService.
pub const GROUP_PRIORITY_MINIMUM: i32 = 1000;
/// `versionPriority` of a new APIService.
pub const VERSION_PRIORITY: i32 = 15;
/// The Service port the aggregator dials for the tunnel route.
pub const SERVICE_PORT: u16 = 443;

/// A served group/version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GroupVersion {
    /// The API group.
    pub group: String,
    /// The version.
    pub version: String,
}

impl GroupVersion {
    /// The APIService's name: `<version>.<group>`.
    pub fn api_service_name(&self) -> String {
        format!("{}.{}", self.version, self.group)
    }
}

impl std::fmt::Display for GroupVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.group, self.version)
    }
}

/// How the Service reaches serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// A ClusterIP Service selecting the session's agent pods.
    Agent,
    /// An ExternalName Service: the aggregator dials `host` at the
    /// APIService's port.
    ExternalName {
        /// The host name or address.
        host: String,
    },
}

/// The domain under which each session's reachability probe has a group
/// of its own ([`probe_group_version`]).
pub const PROBE_GROUP_DOMAIN: &str = "probe.kubectl-cozy.io";
/// The probe APIService's priorities: last in discovery.
pub const PROBE_PRIORITIES: (i32, i32) = (1, 1);

/// The group/version of session `id`'s reachability probe,
/// `<id>.probe.kubectl-cozy.io/v1`: before an external-name session points
/// a served group at its Service, it registers an APIService of this group
/// there and waits until the aggregator has fetched its discovery from this
/// very server — so a host the cluster cannot reach fails the start while
/// the served groups stay with whoever served them. The server answers the
/// probe's discovery with an empty resource list.
pub fn probe_group_version(id: &str) -> GroupVersion {
    GroupVersion {
        group: format!("{id}.{PROBE_GROUP_DOMAIN}"),
        version: "v1".to_owned(),
    }
}

/// The annotation saying who registered an object, where and since when.
pub fn registered_by(holder: &str, started: Timestamp) -> String {
    format!("{holder}, since {started}")
}

/// The Service of session `id` in `namespace`.
pub fn service(id: &str, namespace: &str, backend: &Backend, registered: &str) -> Service {
    let mut metadata = ObjectMeta {
        name: Some(session::object_name(id)),
        namespace: Some(namespace.to_owned()),
        annotations: Some(BTreeMap::from([(
            session::REGISTERED_BY_ANNOTATION.to_owned(),
            registered.to_owned(),
        )])),
        ..ObjectMeta::default()
    };
    session::mark(&mut metadata, id, namespace);
    let spec = match backend {
        Backend::Agent => ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(agent::pod_labels(id)),
            ports: Some(vec![ServicePort {
                name: Some("https".to_owned()),
                port: i32::from(SERVICE_PORT),
                target_port: Some(IntOrString::String(DATA_PORT_NAME.to_owned())),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        },
        Backend::ExternalName { host } => ServiceSpec {
            type_: Some("ExternalName".to_owned()),
            external_name: Some(host.clone()),
            ..ServiceSpec::default()
        },
    };
    Service {
        metadata,
        spec: Some(spec),
        ..Service::default()
    }
}

/// What an APIService of the session says besides its group/version.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The session id.
    pub id: String,
    /// The session namespace (where the Service is).
    pub namespace: String,
    /// The port of the Service the aggregator dials.
    pub port: u16,
    /// The CA of serve's serving certificate, PEM.
    pub ca_pem: String,
    /// [`registered_by`].
    pub registered: String,
}

/// The APIService for `gv`, with `priorities` (`groupPriorityMinimum`,
/// `versionPriority`).
pub fn api_service(r: &Registration, gv: &GroupVersion, priorities: (i32, i32)) -> APIService {
    let mut metadata = ObjectMeta {
        name: Some(gv.api_service_name()),
        annotations: Some(BTreeMap::from([(
            session::REGISTERED_BY_ANNOTATION.to_owned(),
            r.registered.clone(),
        )])),
        ..ObjectMeta::default()
    };
    session::mark(&mut metadata, &r.id, &r.namespace);
    APIService {
        metadata,
        spec: Some(APIServiceSpec {
            group: Some(gv.group.clone()),
            version: Some(gv.version.clone()),
            service: Some(ServiceReference {
                namespace: Some(r.namespace.clone()),
                name: Some(session::object_name(&r.id)),
                port: Some(i32::from(r.port)),
            }),
            ca_bundle: Some(ByteString(r.ca_pem.as_bytes().to_vec())),
            group_priority_minimum: priorities.0,
            version_priority: priorities.1,
            insecure_skip_tls_verify: None,
        }),
        status: None,
    }
}

/// `existing` (JSON, as read) made the session's: its spec replaced by
/// `ours`'s, the session's label and annotations added to its own, its
/// `resourceVersion` kept (so the replace fails if it changed since read).
pub fn take_over(existing: &Value, ours: &APIService) -> Value {
    let mut taken = existing.clone();
    let ours = serde_json::to_value(ours).unwrap_or_default();
    if let Some(object) = taken.as_object_mut() {
        object.insert("spec".into(), ours["spec"].clone());
        object.remove("status");
        let metadata = object
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        for key in ["labels", "annotations"] {
            if let Some(add) = ours["metadata"][key].as_object() {
                let map = metadata.as_object_mut().map(|m| {
                    m.entry(key)
                        .or_insert_with(|| Value::Object(Default::default()))
                });
                if let Some(Value::Object(map)) = map {
                    for (k, v) in add {
                        map.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    taken
}

/// The priorities of an APIService as read (JSON), or the defaults.
pub fn priorities_of(existing: Option<&Value>) -> (i32, i32) {
    let read = |key: &str, default: i32| {
        existing
            .and_then(|e| e["spec"][key].as_i64())
            .and_then(|n| i32::try_from(n).ok())
            .unwrap_or(default)
    };
    (
        read("groupPriorityMinimum", GROUP_PRIORITY_MINIMUM),
        read("versionPriority", VERSION_PRIORITY),
    )
}

/// Who serves a group/version now.
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "a few per serve start, never stored in bulk"
)]
pub enum Occupant {
    /// Nobody: no APIService of that name.
    Free,
    /// Another `serve` session.
    Session {
        /// Its id.
        id: String,
        /// Its namespace.
        namespace: String,
        /// Its Lease's holder (`user@host, pid N`).
        holder: Option<String>,
        /// When it started (its Lease's annotation, else `acquireTime`).
        since: Option<Timestamp>,
        /// Whether its Lease is alive (and its process, when it ran on this
        /// machine, too).
        alive: bool,
        /// The pid of its process, when that ran on this machine and is
        /// gone ([`super::local_process::gone`]): then it is not alive.
        gone: Option<u32>,
        /// What its Lease records.
        record: SessionRecord,
        /// The APIService as read.
        object: Value,
    },
    /// Someone else's APIService (another extension server).
    Foreign {
        /// `namespace/name` of its Service.
        service: Option<String>,
        /// The APIService as read.
        object: Value,
    },
    /// kube-apiserver serves it itself (built-in or CRDs): no `spec.service`.
    Local,
}

impl Occupant {
    /// The APIService as read, when there is one to save.
    pub fn object(&self) -> Option<&Value> {
        match self {
            Occupant::Session { object, .. } | Occupant::Foreign { object, .. } => Some(object),
            Occupant::Free | Occupant::Local => None,
        }
    }

    /// Who holds it, for "took over … from …": `serve session 3f2a
    /// (bob@box, pid 7)` or `service cozy-system/cozystack-api`.
    pub fn describe(&self) -> Option<String> {
        match self {
            Occupant::Session { id, holder, .. } => Some(format!(
                "serve session {id} ({})",
                holder.as_deref().unwrap_or("holder unknown")
            )),
            Occupant::Foreign { service, .. } => Some(format!(
                "service {}",
                service.as_deref().unwrap_or("(none)")
            )),
            Occupant::Free | Occupant::Local => None,
        }
    }

    /// Why `gv` cannot be served without `--takeover` (or at all), or `None`
    /// when it can.
    pub fn refusal(&self, gv: &GroupVersion, takeover: bool) -> Option<String> {
        let name = gv.api_service_name();
        match self {
            Occupant::Free => None,
            Occupant::Session { alive: false, .. } => None,
            Occupant::Local => Some(format!(
                "{gv} is served by kube-apiserver itself (APIService {name} has no service: built-in or CRDs); serve cannot take it over"
            )),
            _ if takeover => None,
            Occupant::Session {
                id,
                namespace,
                holder,
                since,
                ..
            } => Some(format!(
                "{gv} is already served by kubectl cozy serve session {id} ({who}, since {since}; Lease {namespace}/{lease}); \
                 stop it, or pass --takeover to take it over for this session (it is given back when this session ends)",
                who = holder.as_deref().unwrap_or("holder unknown"),
                since = since
                    .map(|t| {
                        let age = Timestamp::now().as_second() - t.as_second();
                        format!(
                            "{}, {}",
                            t.round(k8s_openapi::jiff::Unit::Second).unwrap_or(t),
                            crate::output::ago(age)
                        )
                    })
                    .unwrap_or_else(|| "an unknown time".into()),
                lease = session::lease_name(id),
            )),
            Occupant::Foreign { service, .. } => Some(format!(
                "{gv} is already served: APIService {name} points at service {}; pass --takeover to replace it for this session \
                 (it is restored byte for byte when this session ends)",
                service.as_deref().unwrap_or("(none)")
            )),
        }
    }
}

/// Reads APIService `name` and says who occupies it.
pub async fn occupant(client: &Client, name: &str) -> Result<Occupant, kube::Error> {
    let api: Api<APIService> = Api::all(client.clone());
    let Some(existing) = api.get_opt(name).await? else {
        return Ok(Occupant::Free);
    };
    let object = serde_json::to_value(&existing).unwrap_or_default();
    let service = existing.spec.as_ref().and_then(|s| s.service.as_ref());
    let Some(service) = service else {
        return Ok(Occupant::Local);
    };
    let labels = existing.metadata.labels.as_ref();
    let annotations = existing.metadata.annotations.as_ref();
    if let Some((id, namespace)) = session::session_of(labels, annotations, None) {
        let lease = Api::<Lease>::namespaced(client.clone(), &namespace)
            .get_opt(&session::lease_name(&id))
            .await?;
        let record = lease
            .as_ref()
            .and_then(|l| SessionRecord::from_annotations(l.metadata.annotations.as_ref()).ok())
            .unwrap_or_default();
        let gone = session::process_gone(lease.as_ref());
        let alive = gone.is_none()
            && matches!(
                session::judge(lease.as_ref(), Timestamp::now()),
                Liveness::Alive { .. }
            );
        let spec = lease.as_ref().and_then(|l| l.spec.as_ref());
        let since = record
            .started
            .or_else(|| spec.and_then(|s| s.acquire_time.as_ref()).map(|t| t.0));
        return Ok(Occupant::Session {
            id,
            namespace,
            holder: spec.and_then(|s| s.holder_identity.clone()),
            since,
            alive,
            gone,
            record,
            object,
        });
    }
    Ok(Occupant::Foreign {
        service: Some(format!(
            "{}/{}",
            service.namespace.as_deref().unwrap_or_default(),
            service.name.as_deref().unwrap_or_default()
        )),
        object,
    })
}

/// The `Available` condition of an APIService: status, reason, message.
pub fn available(api_service: &APIService) -> Option<(String, String, String)> {
    api_service
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Available")
        .map(|c| {
            (
                c.status.clone(),
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        })
}

/// Why waiting for `Available=True` ended without it.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// The limit passed.
    #[error("APIService {name} is not Available after {waited:?} (last: {reason}: {message})")]
    Timeout {
        /// The APIService.
        name: String,
        /// How long was waited.
        waited: Duration,
        /// Its last reason.
        reason: String,
        /// Its last message.
        message: String,
    },
    /// The aggregator kept failing to connect to the server: the cluster
    /// does not reach it by this route.
    #[error(
        "APIService {name}: kube-apiserver cannot connect to this server (for {}s): {message}",
        .waited.as_secs()
    )]
    Unreachable {
        /// The APIService.
        name: String,
        /// How long it kept failing.
        waited: Duration,
        /// The aggregator's message.
        message: String,
    },
    /// The APIService went while waited for (a reaper, or someone, deleted
    /// it).
    #[error("APIService {name} was deleted while serve waited for it to become Available")]
    Gone {
        /// The APIService.
        name: String,
    },
    /// Reading the APIService failed.
    #[error("read APIService {name}")]
    Read {
        /// The APIService.
        name: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

/// Whether an `Available` condition says the aggregator could not connect
/// to the server at all (its discovery check failed to dial: refused, no
/// such host, no route, timed out connecting), as opposed to a server that
/// answered wrongly or is still starting.
pub fn cannot_connect(reason: &str, message: &str) -> bool {
    const DIAL_FAILURES: [&str; 6] = [
        "connection refused",
        "no such host",
        "no route to host",
        "network is unreachable",
        "i/o timeout",
        "dial tcp",
    ];
    reason == "FailedDiscoveryCheck" && DIAL_FAILURES.iter().any(|m| message.contains(m))
}

/// Polls the APIServices `names` (which must exist) until all are
/// `Available=True`, calling `progress` with the first one not yet
/// available and its condition's reason; gives up after `timeout`, or,
/// with `unreachable_after`, once the aggregator has failed to connect to
/// the server ([`cannot_connect`]) for that long, or when one is deleted.
pub async fn wait_available(
    client: &Client,
    names: &[String],
    timeout: Duration,
    unreachable_after: Option<Duration>,
    mut progress: impl FnMut(&str, &str),
) -> Result<(), WaitError> {
    let api: Api<APIService> = Api::all(client.clone());
    let started = Instant::now();
    let mut pending: Vec<String> = names.to_vec();
    let mut last: (String, String);
    // Since when the aggregator has failed to connect, without a change.
    let mut unreachable_since: Option<Instant> = None;
    while let Some(name) = pending.first().cloned() {
        let read = api.get_opt(&name).await.map_err(|source| WaitError::Read {
            name: name.clone(),
            source,
        })?;
        match read.as_ref().and_then(available) {
            Some((status, _, _)) if status == "True" => {
                pending.remove(0);
                continue;
            }
            Some((_, reason, message)) => {
                progress(&name, &reason);
                if cannot_connect(&reason, &message) {
                    let since = *unreachable_since.get_or_insert_with(Instant::now);
                    if let Some(limit) = unreachable_after
                        && since.elapsed() >= limit
                    {
                        return Err(WaitError::Unreachable {
                            name,
                            waited: since.elapsed(),
                            message,
                        });
                    }
                } else {
                    unreachable_since = None;
                }
                last = (reason, message);
            }
            None if read.is_none() => return Err(WaitError::Gone { name }),
            None => {
                progress(&name, "no condition yet");
                last = (
                    "NoCondition".into(),
                    "the aggregator has not checked it yet".into(),
                );
            }
        }
        if started.elapsed() >= timeout {
            return Err(WaitError::Timeout {
                name,
                waited: timeout,
                reason: last.0,
                message: last.1,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn registration() -> Registration {
        Registration {
            id: "3f2a".into(),
            namespace: "kubectl-cozy-system".into(),
            port: 443,
            ca_pem: "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n".into(),
            registered: registered_by(
                "alice@laptop, pid 1",
                "2026-09-01T12:00:00Z".parse().unwrap(),
            ),
        }
    }

    fn gv() -> GroupVersion {
        GroupVersion {
            group: "apps.example.com".into(),
            version: "v1alpha1".into(),
        }
    }

    #[test]
    fn only_a_failed_dial_is_a_server_the_cluster_cannot_reach() {
        let refused = "failing or missing response from https://127.0.0.2:44425/apis/a.example.com/v1: Get \
                       \"https://127.0.0.2:44425/apis/a.example.com/v1\": dial tcp 127.0.0.2:44425: connect: connection refused";
        assert!(cannot_connect("FailedDiscoveryCheck", refused));
        assert!(cannot_connect(
            "FailedDiscoveryCheck",
            "… dial tcp: lookup host.example on 10.96.0.10:53: no such host"
        ));
        // It answered, wrongly: not a route problem.
        assert!(!cannot_connect(
            "FailedDiscoveryCheck",
            "failing or missing response from https://10.0.0.1:443/apis/a.example.com/v1: bad status from https://10.0.0.1:443/apis/a.example.com/v1: 503"
        ));
        assert!(!cannot_connect(
            "MissingEndpoints",
            "endpoints for service/x in \"ns\" have no addresses"
        ));
        assert!(!cannot_connect(
            "ServiceNotFound",
            "service/x in \"ns\" is not present"
        ));
    }

    #[test]
    fn api_services_point_at_the_session_service_with_the_ca() {
        let a = serde_json::to_value(api_service(&registration(), &gv(), (1000, 15))).unwrap();
        assert_eq!(a["apiVersion"], "apiregistration.k8s.io/v1");
        assert_eq!(a["metadata"]["name"], "v1alpha1.apps.example.com");
        assert_eq!(a["metadata"]["labels"][session::SESSION_LABEL], "3f2a");
        assert_eq!(
            a["metadata"]["annotations"][session::REGISTERED_BY_ANNOTATION],
            "alice@laptop, pid 1, since 2026-09-01T12:00:00Z"
        );
        assert_eq!(
            a["spec"]["service"],
            json!({"namespace": "kubectl-cozy-system", "name": "kubectl-cozy-3f2a", "port": 443})
        );
        assert_eq!(a["spec"]["groupPriorityMinimum"], 1000);
        assert!(a["spec"]["caBundle"].as_str().unwrap().starts_with("LS0t"));
        assert!(a["spec"].get("insecureSkipTLSVerify").is_none());
    }

    #[test]
    fn services_select_the_agent_or_name_a_host() {
        let s = serde_json::to_value(service("3f2a", "ns", &Backend::Agent, "x")).unwrap();
        assert_eq!(s["spec"]["type"], "ClusterIP");
        assert_eq!(s["spec"]["selector"]["kubectl-cozy.io/session"], "3f2a");
        assert_eq!(s["spec"]["ports"][0]["targetPort"], "data");
        let e = serde_json::to_value(service(
            "3f2a",
            "ns",
            &Backend::ExternalName {
                host: "host.docker.internal".into(),
            },
            "x",
        ))
        .unwrap();
        assert_eq!(
            e["spec"],
            json!({"type": "ExternalName", "externalName": "host.docker.internal"})
        );
    }

    #[test]
    fn a_takeover_keeps_the_originals_metadata_and_adds_the_sessions() {
        let existing = json!({
            "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": "v1alpha1.apps.example.com", "resourceVersion": "7", "uid": "u",
                         "labels": {"team": "platform"}},
            "spec": {"group": "apps.example.com", "version": "v1alpha1", "groupPriorityMinimum": 500,
                     "versionPriority": 9, "service": {"namespace": "cozy", "name": "api"}},
            "status": {"conditions": []}
        });
        let priorities = priorities_of(Some(&existing));
        assert_eq!(priorities, (500, 9));
        assert_eq!(
            priorities_of(None),
            (GROUP_PRIORITY_MINIMUM, VERSION_PRIORITY)
        );
        let ours = api_service(&registration(), &gv(), priorities);
        let taken = take_over(&existing, &ours);
        assert_eq!(taken["metadata"]["resourceVersion"], "7");
        assert_eq!(taken["metadata"]["labels"]["team"], "platform");
        assert_eq!(taken["metadata"]["labels"][session::SESSION_LABEL], "3f2a");
        assert_eq!(taken["spec"]["service"]["name"], "kubectl-cozy-3f2a");
        assert_eq!(taken["spec"]["groupPriorityMinimum"], 500);
        assert!(taken.get("status").is_none());
        // And the saved original restores it exactly.
        let saved = session::SavedApiService::from_object(&existing).unwrap();
        let mut back = taken.clone();
        saved.restore_into(&mut back);
        assert!(saved.matches(&back));
    }

    #[test]
    fn refusals_name_the_occupant() {
        let gv = gv();
        let live = Occupant::Session {
            id: "9x".into(),
            namespace: "kubectl-cozy-system".into(),
            holder: Some("bob@box, pid 7".into()),
            since: Some("2026-09-01T11:00:00Z".parse().unwrap()),
            alive: true,
            gone: None,
            record: SessionRecord::default(),
            object: json!({}),
        };
        let text = live.refusal(&gv, false).unwrap();
        assert!(
            text.contains("session 9x (bob@box, pid 7, since 2026-09-01T11:00:00Z, ")
                && text.contains(" ago; Lease kubectl-cozy-system/"),
            "{text}"
        );
        assert!(text.contains("--takeover"), "{text}");
        assert!(live.refusal(&gv, true).is_none());
        let foreign = Occupant::Foreign {
            service: Some("cozy-system/cozystack-api".into()),
            object: json!({}),
        };
        assert!(
            foreign
                .refusal(&gv, false)
                .unwrap()
                .contains("cozy-system/cozystack-api")
        );
        assert!(
            Occupant::Local
                .refusal(&gv, true)
                .unwrap()
                .contains("kube-apiserver itself")
        );
        assert!(Occupant::Free.refusal(&gv, false).is_none());
    }
}
