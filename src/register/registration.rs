//! Creating a session's objects ([`Registrar::register`], then
//! [`Registrar::switch`] once the backend answers), in an order that leaves
//! nothing behind if any step fails or the process dies between steps:
//!
//! 1. sessions whose Lease expired over a minute ago are reaped in passing
//!    ([`SWEEP_MARGIN`]); then who serves each group/version now: refuse
//!    (nothing created yet) unless free, held by an expired session (reaped
//!    first) or `--takeover`;
//! 2. the session namespace, if missing (labelled as the session's); one
//!    being deleted — the previous session's, stopped a moment ago or just
//!    reaped — is waited for ([`NAMESPACE_WAIT`]) and created again;
//! 3. the Lease, recording everything that follows, so a reaper knows it all
//!    from the first moment;
//! 4. the saved originals of APIServices about to be taken over;
//! 5. the Service, and for the tunnel route the agent's ServiceAccount, Role,
//!    RoleBinding, Deployment (all owned by the Lease), ClusterRole and
//!    ClusterRoleBinding (owned by the ClusterRole);
//! 6. the APIServices last, in a call of their own ([`Registrar::switch`]),
//!    which the caller makes only once the backend answers (for the tunnel
//!    route, once the tunnel to the agent has connected): created, or
//!    replaced when taken over (with the `resourceVersion` read in step 1,
//!    so a change in between fails the replace). Until then the group stays
//!    with whoever served it, or unregistered: an APIService whose backend
//!    is not up yet is unavailable, and breaks discovery and every namespace
//!    deletion in the cluster while the agent's pod starts.
//!
//! Every created object is remembered ([`Registrar::created`]) for the
//! teardown, which the caller runs on failure too — unless nothing may have
//! been written ([`Registrar::may_have_written`]: no object created, no write
//! left unanswered), as when the start is refused before its first object.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::Client;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::agent;
use super::apiservice::{self, Occupant};
use super::lease;
use super::plan::Plan;
use super::reap::{self, Reaped, Target};
use super::session::{self, Liveness, SavedApiService, SessionObject, SessionRecord};

/// How long `serve` waits for a session namespace being deleted (the
/// previous session's) to be gone before creating it again.
pub const NAMESPACE_WAIT: Duration = Duration::from_secs(60);

/// How long past its expiry a session's Lease must be before `serve` reaps
/// it in passing (clocks of different machines disagree).
pub const SWEEP_MARGIN: Duration = Duration::from_secs(60);

/// What a refusal of serve's requests means: serve's user lacks rights.
pub const RIGHTS_NEEDED: &str = "serve creates cluster-wide objects (APIServices, ClusterRoles) and needs cluster-admin-like rights";

/// Why registration failed.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// RBAC refused a request.
    #[error("{what}: forbidden ({message}); {RIGHTS_NEEDED}")]
    Forbidden {
        /// The request, as `create apiservices.apiregistration.k8s.io`.
        what: String,
        /// The server's message.
        message: String,
    },
    /// Another request failed.
    #[error("{what}")]
    Api {
        /// The request.
        what: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
    /// A group/version is served by someone else (the text names them).
    #[error("{0}")]
    Taken(String),
    /// The session namespace was still being deleted after a wait.
    #[error(
        "namespace {namespace} is still being deleted after {}s; `kubectl cozy doctor -n {namespace}` says what holds it, or choose another with --session-namespace",
        waited.as_secs()
    )]
    NamespaceTerminating {
        /// The namespace.
        namespace: String,
        /// How long serve waited.
        waited: Duration,
    },
    /// The session namespace was deleted each time the session moved in.
    #[error(
        "namespace {namespace} was deleted each time this session moved in (another session keeps removing it); choose another with --session-namespace"
    )]
    NamespaceDeletedUnder {
        /// The namespace.
        namespace: String,
    },
    /// An object did not convert to or from JSON.
    #[error("{what}: encode the object")]
    Encode {
        /// The request.
        what: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// An expired session holding a group/version could not be reaped.
    #[error("reap expired serve session {id} first")]
    Reap {
        /// Its id.
        id: String,
        /// Why.
        #[source]
        source: reap::ReapError,
    },
}

impl RegisterError {
    /// Whether the cluster answered the request that failed (a refusal, a
    /// Status), so a write it refused took no effect.
    fn was_answered(&self) -> bool {
        match self {
            RegisterError::Forbidden { .. } => true,
            RegisterError::Api { source, .. } => matches!(source, kube::Error::Api(_)),
            _ => false,
        }
    }
}

impl RegisterError {
    /// Whether the request failed because its object already exists (409).
    pub fn is_already_exists(&self) -> bool {
        matches!(
            self,
            RegisterError::Api { source: kube::Error::Api(status), .. }
                if status.code == 409 && status.reason == "AlreadyExists"
        )
    }

    /// Whether the cluster answered with HTTP `code`.
    fn is_status(&self, code: u16) -> bool {
        matches!(
            self,
            RegisterError::Api { source: kube::Error::Api(status), .. } if status.code == code
        )
    }
}

/// How a session came by its namespace. In all but [`Residence::Foreign`]
/// it says so on the namespace ([`session::JOINED_ANNOTATION`]) once its
/// Lease is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Residence {
    /// It created it.
    Created,
    /// Another session's whose Lease is gone (killed between creating it and
    /// its Lease, or a reap that could not finish): relabelled as this
    /// session's, which removes it at its end as if it had created it.
    Adopted,
    /// A session's that lives: moved in. Its creator hands it over to this
    /// session on leaving if it is still here then, so this session's
    /// agent may be the one to remove it.
    Joined,
    /// Not a session's: never deleted.
    Foreign,
}

/// Whether `err` is RBAC's refusal: a 403 that is not NamespaceLifecycle's
/// (kube-apiserver answers 403 too for a namespace being deleted: not a
/// matter of rights).
pub fn is_refusal(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if is_refusal_status(status))
}

fn is_refusal_status(status: &kube::core::Status) -> bool {
    status.code == 403 && !status.message.contains("because it is being terminated")
}

fn api_error(what: impl Into<String>, source: kube::Error) -> RegisterError {
    match source {
        kube::Error::Api(status) if is_refusal_status(&status) => RegisterError::Forbidden {
            what: what.into(),
            message: status.message,
        },
        source => RegisterError::Api {
            what: what.into(),
            source,
        },
    }
}

/// What [`Registrar::register`] tells its caller as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registering<'a> {
    /// The step it is on, or what it waits for (a spinner's message).
    Step(&'a str),
    /// An expired session (its id) it has just reaped on the way, and the
    /// pid of its process when that ran on this machine and is gone (the
    /// session reaped before its Lease expired).
    Reaped(&'a str, Option<u32>),
}

/// What registration did.
#[derive(Debug, Clone, Default)]
pub struct Registered {
    /// Whether the session lives in a namespace of sessions (created,
    /// adopted or joined): its record and its agent's rights then let a
    /// reaper judge the namespace, which may be handed over to it.
    pub in_session_namespace: bool,
    /// APIServices taken over (their originals saved), as `NAME from WHO`.
    pub took_over: Vec<String>,
    /// The originals of the APIServices to take over, as read, by name.
    originals: BTreeMap<String, Value>,
}

/// Creates a session's objects and remembers them.
pub struct Registrar {
    client: Client,
    limit: Duration,
    created: Vec<SessionObject>,
    /// Whether a write was sent whose answer never came (a timeout, a lost
    /// connection, a start interrupted meanwhile): it may have taken effect.
    unanswered: bool,
}

impl Registrar {
    /// A registrar over `client`, each request limited to `limit`.
    pub fn new(client: Client, limit: Duration) -> Self {
        Registrar {
            client,
            limit,
            created: Vec::new(),
            unanswered: false,
        }
    }

    /// Everything created so far, in creation order.
    pub fn created(&self) -> &[SessionObject] {
        &self.created
    }

    /// Whether the cluster may hold something of the session: an object
    /// created, or a write whose answer never came. When not, a failed or
    /// interrupted start has nothing to remove.
    pub fn may_have_written(&self) -> bool {
        !self.created.is_empty() || self.unanswered
    }

    /// Sends the write `request` (limited as [`Self::timed`]); until the
    /// cluster answers, whether it took effect is unknown.
    async fn write<T>(
        &mut self,
        what: &str,
        request: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, RegisterError> {
        let before = self.unanswered;
        self.unanswered = true;
        let result = self.timed(what, request).await;
        if result
            .as_ref()
            .map_or_else(RegisterError::was_answered, |_| true)
        {
            self.unanswered = before;
        }
        result
    }

    /// Writes `object` and counts it among what the teardown undoes — from
    /// before the request: a write whose answer never came (a timeout, a
    /// lost connection, Ctrl-C dropping this future) may have taken effect.
    /// Only one the cluster refused is forgotten. The teardown acts only on
    /// an object that exists and carries the session's label.
    async fn write_undone_unless_refused<T>(
        &mut self,
        object: SessionObject,
        what: &str,
        request: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, RegisterError> {
        self.created.push(object);
        let result = self.write(what, request).await;
        if result.as_ref().is_err_and(RegisterError::was_answered) {
            self.created.pop();
        }
        result
    }

    async fn timed<T>(
        &self,
        what: &str,
        request: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, RegisterError> {
        match tokio::time::timeout(self.limit, request).await {
            Ok(result) => result.map_err(|e| api_error(what, e)),
            Err(_) => Err(RegisterError::Api {
                what: what.to_owned(),
                source: kube::Error::Service(format!("no answer within {:?}", self.limit).into()),
            }),
        }
    }

    async fn create<K>(
        &mut self,
        kind: &session::SessionKind,
        namespace: Option<&str>,
        object: &K,
    ) -> Result<K, RegisterError>
    where
        K: kube::Resource + Serialize + DeserializeOwned,
    {
        let name = object.meta().name.clone().unwrap_or_default();
        let resource = ApiResource {
            group: kind.group().to_owned(),
            version: kind.version().to_owned(),
            api_version: kind.api_version.to_owned(),
            kind: kind.kind.to_owned(),
            plural: kind.plural.to_owned(),
        };
        let api: Api<DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &resource),
            None => Api::all_with(self.client.clone(), &resource),
        };
        let what = format!(
            "create {}",
            SessionObject::of(kind, namespace, &name).describe()
        );
        let encode = |source| RegisterError::Encode {
            what: what.clone(),
            source,
        };
        let dynamic: DynamicObject =
            serde_json::from_value(serde_json::to_value(object).map_err(encode)?)
                .map_err(encode)?;
        let created = self
            .write_undone_unless_refused(
                SessionObject::of(kind, namespace, &name),
                &what,
                api.create(&PostParams::default(), &dynamic),
            )
            .await?;
        serde_json::from_value(serde_json::to_value(created).map_err(encode)?).map_err(encode)
    }

    /// Registers `plan` in the cluster but its APIServices, which
    /// [`Self::switch`] writes (see the module doc for the order).
    pub async fn register(
        &mut self,
        plan: &Plan,
        takeover: bool,
        mut tell: impl FnMut(Registering<'_>),
    ) -> Result<Registered, RegisterError> {
        let mut done = Registered::default();
        let ns = plan.namespace.as_str();

        tell(Registering::Step("expired sessions"));
        self.sweep(&plan.id, &mut tell).await;

        tell(Registering::Step("APIServices in place"));
        let mut originals: BTreeMap<String, Value> = BTreeMap::new();
        let mut original_leases: Vec<String> = Vec::new();
        let mut refusals = Vec::new();
        for gv in &plan.served {
            let name = gv.api_service_name();
            let mut occupant = self
                .timed(
                    &format!("get apiservices.apiregistration.k8s.io/{name}"),
                    apiservice::occupant(&self.client, &name),
                )
                .await?;
            if let Occupant::Session {
                id,
                namespace,
                alive: alive @ false,
                gone,
                record,
                ..
            } = &mut occupant
            {
                // A process gone from this machine renews nothing: no wait.
                if gone.is_none() && self.still_renewed(id, namespace, &mut tell).await? {
                    *alive = true;
                } else {
                    self.reap_expired(id, namespace, record, &name).await?;
                    tell(Registering::Reaped(id, *gone));
                    occupant = self
                        .timed(
                            &format!("get apiservices.apiregistration.k8s.io/{name}"),
                            apiservice::occupant(&self.client, &name),
                        )
                        .await?;
                }
            }
            if let Some(refusal) = occupant.refusal(gv, takeover) {
                refusals.push(refusal);
            } else if let Some(object) = occupant.object() {
                if let Some(from) = occupant.describe() {
                    done.took_over.push(format!("{name} from {from}"));
                }
                if let Occupant::Session { id, .. } = &occupant {
                    original_leases.push(session::lease_name(id));
                }
                originals.insert(name, object.clone());
            }
        }
        if !refusals.is_empty() {
            return Err(RegisterError::Taken(refusals.join("\n")));
        }
        let saved = !originals.is_empty();

        // After the reaps: a reaped session may have deleted the namespace
        // it created, which is often this one. A shared namespace whose last
        // session leaves as this one moves in may be deleted under it: then
        // it is waited for and created again.
        let lease_object =
            SessionObject::of(&session::LEASE, Some(ns), &session::lease_name(&plan.id));
        let mut attempt = 0;
        let lease = loop {
            attempt += 1;
            tell(Registering::Step("namespace"));
            let residence = self.ensure_namespace(plan, &mut tell).await?;
            done.in_session_namespace = residence != Residence::Foreign;

            tell(Registering::Step("Lease"));
            let record = plan.record(done.in_session_namespace, saved);
            let client = self.client.clone();
            let creating = async {
                lease::create(
                    &client,
                    ns,
                    &plan.id,
                    &plan.holder,
                    plan.lease_duration,
                    &record,
                )
                .await
                .map_err(|lease::LeaseError::Create { source, .. }| source)
            };
            let created = self
                .write(
                    &format!(
                        "create leases.coordination.k8s.io/{} -n {ns}",
                        session::lease_name(&plan.id)
                    ),
                    creating,
                )
                .await;
            let lease = match created {
                Ok(lease) => lease,
                Err(err) if attempt < 3 && self.namespace_going(ns).await => {
                    tracing::debug!(namespace = ns, error = %err, "the session namespace began deleting; again");
                    continue;
                }
                Err(err) => return Err(err),
            };
            self.created.push(lease_object.clone());
            // Every session a namespace of sessions holds says it is there
            // once its Lease is: a session that adopted the namespace from
            // one between its namespace and its Lease, or the last one out,
            // deletes it only at a resourceVersion from before.
            if residence != Residence::Foreign && !self.check_in(plan).await? {
                // Deleted by the last session out as this one moved in: the
                // Lease goes with it.
                self.created.retain(|o| *o != lease_object);
                if attempt < 3 {
                    continue;
                }
                return Err(RegisterError::NamespaceDeletedUnder {
                    namespace: ns.to_owned(),
                });
            }
            break lease;
        };
        let owner = agent::owner(
            "coordination.k8s.io/v1",
            "Lease",
            &session::lease_name(&plan.id),
            lease.metadata.uid.as_deref().unwrap_or_default(),
        );

        if saved {
            tell(Registering::Step("saved originals"));
            let mut data = BTreeMap::new();
            for (name, object) in &originals {
                let kept = SavedApiService::from_object(object).map_err(|e| {
                    RegisterError::Taken(format!("APIService {name} cannot be saved: {e}"))
                })?;
                data.insert(name.clone(), kept.to_json());
            }
            let mut metadata = owned(&session::saved_api_services_name(&plan.id), ns, &owner);
            session::mark(&mut metadata, &plan.id, ns);
            let cm = ConfigMap {
                metadata,
                data: Some(data),
                ..ConfigMap::default()
            };
            self.create(&session::CONFIG_MAP, Some(ns), &cm).await?;
        }

        tell(Registering::Step("Service"));
        let mut service: Service =
            apiservice::service(&plan.id, ns, &plan.backend(), &plan.registered_by());
        service.metadata.owner_references = Some(vec![owner.clone()]);
        self.create(&session::SERVICE, Some(ns), &service).await?;

        if let Some(mut spec) = plan.agent(done.in_session_namespace, saved) {
            spec.original_leases = original_leases;
            tell(Registering::Step("tunnel agent"));
            let mut sa: ServiceAccount = agent::service_account(&spec);
            sa.metadata.owner_references = Some(vec![owner.clone()]);
            self.create(&session::SERVICE_ACCOUNT, Some(ns), &sa)
                .await?;
            let mut role: Role = agent::role(&spec);
            role.metadata.owner_references = Some(vec![owner.clone()]);
            self.create(&session::ROLE, Some(ns), &role).await?;
            let mut binding: RoleBinding = agent::role_binding(&spec);
            binding.metadata.owner_references = Some(vec![owner.clone()]);
            self.create(&session::ROLE_BINDING, Some(ns), &binding)
                .await?;
            let cluster_role: ClusterRole = self
                .create(&session::CLUSTER_ROLE, None, &agent::cluster_role(&spec))
                .await?;
            let mut cluster_binding: ClusterRoleBinding = agent::cluster_role_binding(&spec);
            cluster_binding.metadata.owner_references = Some(vec![agent::owner(
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                &session::object_name(&plan.id),
                cluster_role.metadata.uid.as_deref().unwrap_or_default(),
            )]);
            self.create(&session::CLUSTER_ROLE_BINDING, None, &cluster_binding)
                .await?;
            let mut deployment = agent::deployment(&spec);
            deployment.metadata.owner_references = Some(vec![owner.clone()]);
            self.create(&session::DEPLOYMENT, Some(ns), &deployment)
                .await?;
        }
        done.originals = originals;
        Ok(done)
    }

    /// Registers the session's reachability probe, an APIService of a group
    /// of its own ([`apiservice::probe_group_version`]) at the session's
    /// Service; its name, or `None` for a route without one. The caller
    /// waits for it to turn Available, then removes it
    /// ([`Self::remove_probe`]) and only then [`Self::switch`]es.
    pub async fn create_probe(&mut self, plan: &Plan) -> Result<Option<String>, RegisterError> {
        let Some(probe) = plan.probe() else {
            return Ok(None);
        };
        let object =
            apiservice::api_service(&plan.registration(), &probe, apiservice::PROBE_PRIORITIES);
        self.create(&session::API_SERVICE, None, &object).await?;
        Ok(Some(probe.api_service_name()))
    }

    /// Deletes the probe's APIService `name` (gone already is fine); the
    /// teardown no longer counts it.
    pub async fn remove_probe(&mut self, name: &str) -> Result<(), RegisterError> {
        let api: Api<APIService> = Api::all(self.client.clone());
        let deleted = self
            .write(
                &format!("delete apiservices.apiregistration.k8s.io/{name}"),
                api.delete(name, &DeleteParams::default()),
            )
            .await;
        match deleted {
            Ok(_) => {}
            Err(err) if err.is_status(404) => {}
            Err(err) => return Err(err),
        }
        self.created
            .retain(|o| !(o.kind == session::API_SERVICE.kind && o.name == name));
        Ok(())
    }

    /// Points the group/versions of `plan` at the session's Service: each
    /// APIService created, or replaced if `registered` took it over. Called
    /// once the backend answers.
    pub async fn switch(
        &mut self,
        plan: &Plan,
        registered: &Registered,
    ) -> Result<(), RegisterError> {
        let registration = plan.registration();
        let api: Api<APIService> = Api::all(self.client.clone());
        for gv in &plan.served {
            let name = gv.api_service_name();
            match registered.originals.get(&name) {
                None => {
                    let object =
                        apiservice::api_service(&registration, gv, apiservice::priorities_of(None));
                    match self.create(&session::API_SERVICE, None, &object).await {
                        Ok(_) => {}
                        // Registered by another since it was read (two
                        // serves started at once): refused as it would
                        // have been, naming who holds it now.
                        Err(err) if err.is_already_exists() => {
                            let occupant = self
                                .timed(
                                    &format!("get apiservices.apiregistration.k8s.io/{name}"),
                                    apiservice::occupant(&self.client, &name),
                                )
                                .await?;
                            return Err(match occupant.refusal(gv, false) {
                                Some(refusal) => RegisterError::Taken(refusal),
                                None => err,
                            });
                        }
                        Err(err) => return Err(err),
                    }
                }
                Some(original) => {
                    // The saved original's digest, which a restore checks.
                    let digest = SavedApiService::from_object(original)
                        .map_err(|e| {
                            RegisterError::Taken(format!("APIService {name} cannot be saved: {e}"))
                        })?
                        .digest();
                    // Read before the agent started: its status (or its
                    // resourceVersion alone) may have changed since. Taken
                    // over at the resourceVersion read last, as long as what
                    // was saved (spec, labels, annotations) is what it is.
                    let mut current = original.clone();
                    for attempt in 1..=3 {
                        let ours = apiservice::api_service(
                            &registration,
                            gv,
                            apiservice::priorities_of(Some(&current)),
                        );
                        let mut taken = apiservice::take_over(&current, &ours);
                        taken["metadata"]["annotations"][session::ORIGINAL_DIGEST_ANNOTATION] =
                            serde_json::Value::String(digest.clone());
                        let taken: APIService = serde_json::from_value(taken).map_err(|e| {
                            RegisterError::Taken(format!("take over APIService {name}: {e}"))
                        })?;
                        let replaced = self
                            .write_undone_unless_refused(
                                SessionObject::of(&session::API_SERVICE, None, &name),
                                &format!("take over apiservices.apiregistration.k8s.io/{name}"),
                                api.replace(&name, &PostParams::default(), &taken),
                            )
                            .await;
                        match replaced {
                            Ok(_) => break,
                            Err(err) if err.is_status(409) && attempt < 3 => {
                                let now = self
                                    .timed(
                                        &format!("get apiservices.apiregistration.k8s.io/{name}"),
                                        api.get_opt(&name),
                                    )
                                    .await?;
                                let now = now.map(|a| serde_json::to_value(a).unwrap_or_default());
                                let same = now.as_ref().is_some_and(|now| {
                                    SavedApiService::from_object(now)
                                        .is_ok_and(|saved| saved.digest() == digest)
                                });
                                match now {
                                    Some(now) if same => current = now,
                                    _ => {
                                        return Err(RegisterError::Taken(format!(
                                            "APIService {name} changed (or went) while the tunnel agent started; \
                                             run serve again to take over what it is now"
                                        )));
                                    }
                                }
                            }
                            Err(err) if err.is_status(404) => {
                                return Err(RegisterError::Taken(format!(
                                    "APIService {name} was deleted while the tunnel agent started (its holder \
                                     stopped?); run serve again"
                                )));
                            }
                            Err(err) => return Err(err),
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Makes sure the session namespace exists, waiting up to
    /// [`NAMESPACE_WAIT`] for one being deleted (the previous session's, just
    /// stopped or reaped) to be gone first; how the session came by it.
    async fn ensure_namespace(
        &mut self,
        plan: &Plan,
        tell: &mut impl FnMut(Registering<'_>),
    ) -> Result<Residence, RegisterError> {
        let ns = plan.namespace.as_str();
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let deadline = tokio::time::Instant::now() + NAMESPACE_WAIT;
        let mut conflicts = 0;
        loop {
            let existing = self
                .timed(&format!("get namespace {ns}"), namespaces.get_opt(ns))
                .await?;
            match existing {
                Some(n) if n.metadata.deletion_timestamp.is_some() => {
                    if tokio::time::Instant::now() >= deadline {
                        return Err(RegisterError::NamespaceTerminating {
                            namespace: ns.to_owned(),
                            waited: NAMESPACE_WAIT,
                        });
                    }
                    tell(Registering::Step(&format!(
                        "waiting for namespace {ns} to finish terminating (up to {}s)",
                        NAMESPACE_WAIT.as_secs()
                    )));
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Some(n) => {
                    let holder = n
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(session::SESSION_LABEL))
                        .cloned();
                    let Some(holder) = holder else {
                        return Ok(Residence::Foreign);
                    };
                    if holder == plan.id {
                        return Ok(Residence::Created);
                    }
                    let leases: Api<Lease> = Api::namespaced(self.client.clone(), ns);
                    let lease_name = session::lease_name(&holder);
                    let lease = self
                        .timed(
                            &format!("get leases.coordination.k8s.io/{lease_name} -n {ns}"),
                            leases.get_opt(&lease_name),
                        )
                        .await?;
                    if lease.is_some() {
                        return Ok(Residence::Joined);
                    }
                    // Its session is gone and left it: this one's now, as
                    // if created (at the resourceVersion read, so that a
                    // session ending meanwhile fails its delete, or this).
                    tell(Registering::Step(&format!(
                        "adopting namespace {ns}, left by serve session {holder}"
                    )));
                    let patch = serde_json::json!({
                        "metadata": {
                            "resourceVersion": n.metadata.resource_version,
                            "labels": {session::SESSION_LABEL: plan.id},
                        }
                    });
                    let adopted = self
                        .write_undone_unless_refused(
                            SessionObject::of(&session::NAMESPACE, None, ns),
                            &format!("label namespace {ns} as this session's"),
                            namespaces.patch(ns, &PatchParams::default(), &Patch::Merge(&patch)),
                        )
                        .await;
                    match adopted {
                        Ok(n) if n.metadata.deletion_timestamp.is_none() => {
                            return Ok(Residence::Adopted);
                        }
                        // Being deleted: waited for above.
                        Ok(_) => {}
                        Err(err) if err.is_status(404) => {}
                        Err(err) if err.is_status(409) && conflicts < 5 => conflicts += 1,
                        Err(err) => return Err(err),
                    }
                }
                None => match self
                    .create(&session::NAMESPACE, None, &plan.namespace_object())
                    .await
                {
                    Ok(_) => return Ok(Residence::Created),
                    // Another session (of this group or any other) created
                    // it since: shared, as it would have been read.
                    Err(err) if err.is_already_exists() => continue,
                    Err(err) => return Err(err),
                },
            }
        }
    }

    /// Says on the shared namespace that this session moved in (its Lease is
    /// there now), changing its `resourceVersion` under a leaving creator's
    /// delete; whether the namespace still stands (not being deleted).
    async fn check_in(&mut self, plan: &Plan) -> Result<bool, RegisterError> {
        let ns = plan.namespace.as_str();
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let patch = serde_json::json!({
            "metadata": {"annotations": {session::JOINED_ANNOTATION: plan.id}}
        });
        let checked_in = self
            .write(
                &format!("annotate namespace {ns}"),
                namespaces.patch(ns, &PatchParams::default(), &Patch::Merge(&patch)),
            )
            .await;
        match checked_in {
            Ok(n) => Ok(n.metadata.deletion_timestamp.is_none()),
            Err(err) if err.is_status(404) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Whether namespace `ns` is gone or being deleted (a failure to read it
    /// counts as not).
    async fn namespace_going(&self, ns: &str) -> bool {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        match self
            .timed(&format!("get namespace {ns}"), namespaces.get_opt(ns))
            .await
        {
            Ok(Some(n)) => n.metadata.deletion_timestamp.is_some(),
            Ok(None) => true,
            Err(_) => false,
        }
    }

    /// Whether session `id`, whose Lease this machine's clock says expired,
    /// still renews it: another machine's clock may run behind this one's.
    /// A Lease expired more than [`SWEEP_MARGIN`] ago is taken as dead at
    /// once; otherwise it is watched for its duration (plus two seconds) on
    /// this machine's monotonic clock, as the tunnel agent judges it: a
    /// change of its `resourceVersion` is a renewal.
    async fn still_renewed(
        &self,
        id: &str,
        namespace: &str,
        tell: &mut impl FnMut(Registering<'_>),
    ) -> Result<bool, RegisterError> {
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), namespace);
        let name = session::lease_name(id);
        let what = format!("get leases.coordination.k8s.io/{name} -n {namespace}");
        let Some(first) = self.timed(&what, leases.get_opt(&name)).await? else {
            return Ok(false);
        };
        let since = match session::judge(Some(&first), Timestamp::now()) {
            Liveness::Expired { since: Some(since) } => since,
            // Alive after all, or never renewed.
            judged => return Ok(matches!(judged, Liveness::Alive { .. })),
        };
        let ago = Timestamp::now().as_second() - since.as_second();
        if ago >= SWEEP_MARGIN.as_secs() as i64 {
            return Ok(false);
        }
        let duration = first
            .spec
            .as_ref()
            .and_then(|s| s.lease_duration_seconds)
            .and_then(|d| u64::try_from(d).ok())
            .unwrap_or(0);
        let watch_for = Duration::from_secs(duration + 2);
        tell(Registering::Step(&format!(
            "waiting for up to {}s to see whether serve session {id} still renews its Lease (expired {ago}s ago \
             by this machine's clock, which may be ahead of its)",
            watch_for.as_secs()
        )));
        let deadline = tokio::time::Instant::now() + watch_for;
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = self.timed(&what, leases.get_opt(&name)).await?;
            match now {
                None => return Ok(false),
                Some(l) if l.metadata.resource_version != first.metadata.resource_version => {
                    return Ok(true);
                }
                Some(_) => {}
            }
        }
        Ok(false)
    }

    /// Reaps every session whose Lease expired more than [`SWEEP_MARGIN`]
    /// ago (by this machine's clock; the margin allows for another machine's
    /// clock running late). Best effort: a failure is logged, not fatal.
    async fn sweep(&self, own: &str, tell: &mut impl FnMut(Registering<'_>)) {
        let leases: Api<Lease> = Api::all(self.client.clone());
        let params = ListParams::default().labels(session::SESSION_LABEL);
        let list = match tokio::time::timeout(self.limit, leases.list(&params)).await {
            Ok(Ok(list)) => list,
            Ok(Err(err)) => {
                tracing::info!(%err, "list session Leases (sweeping expired sessions)");
                return;
            }
            Err(_) => return,
        };
        let now = Timestamp::now();
        for lease in list.items {
            let Some((id, namespace)) = session::session_of(
                lease.metadata.labels.as_ref(),
                None,
                lease.metadata.namespace.as_deref(),
            ) else {
                continue;
            };
            if id == own || lease.metadata.name.as_deref() != Some(&session::lease_name(&id)) {
                continue;
            }
            let Liveness::Expired { since: Some(since) } = session::judge(Some(&lease), now) else {
                continue;
            };
            if now.as_second() - since.as_second() < SWEEP_MARGIN.as_secs() as i64 {
                continue;
            }
            let record = SessionRecord::from_annotations(lease.metadata.annotations.as_ref())
                .unwrap_or_default();
            let target = Target {
                id: id.clone(),
                namespace: namespace.clone(),
                objects: session::named_objects(&id, &namespace, &record),
            };
            match reap::reap(&self.client, &target, self.limit).await {
                Ok(Reaped::Reaped(_)) => tell(Registering::Reaped(&id, None)),
                Ok(Reaped::Alive { .. }) => {}
                Err(err) => {
                    tracing::info!(session = %id, error = %crate::error_chain::error_chain(&err), "reap an expired session")
                }
            }
        }
    }

    /// Reaps the expired session `id` that holds APIService `name`.
    async fn reap_expired(
        &self,
        id: &str,
        namespace: &str,
        record: &session::SessionRecord,
        name: &str,
    ) -> Result<(), RegisterError> {
        let mut objects = session::named_objects(id, namespace, record);
        let held = SessionObject::of(&session::API_SERVICE, None, name);
        if !objects.contains(&held) {
            objects.insert(0, held);
        }
        let target = Target {
            id: id.to_owned(),
            namespace: namespace.to_owned(),
            objects,
        };
        match reap::reap(&self.client, &target, self.limit).await {
            Ok(Reaped::Reaped(report)) => {
                tracing::info!(session = %id, deleted = report.deleted.len(), restored = report.restored.len(), "reaped an expired serve session");
                // The group is free only if its APIService went (or was
                // given back): one left or failed is still the dead
                // session's, and is not taken over without --takeover.
                let stuck = report
                    .failed
                    .iter()
                    .chain(&report.left)
                    .find(|(o, _)| o.kind == session::API_SERVICE.kind && o.name == name);
                match stuck {
                    Some((_, why)) => Err(RegisterError::Taken(format!(
                        "APIService {name} belongs to expired serve session {id}, whose reap left it: {why}; \
                         `kubectl cozy doctor` says what to do"
                    ))),
                    None => Ok(()),
                }
            }
            Ok(Reaped::Alive { holder }) => Err(RegisterError::Taken(format!(
                "APIService {name} belongs to serve session {id} ({}), which renewed its Lease just now",
                holder.as_deref().unwrap_or("holder unknown")
            ))),
            Err(source) => Err(RegisterError::Reap {
                id: id.to_owned(),
                source,
            }),
        }
    }
}

fn owned(name: &str, namespace: &str, owner: &OwnerReference) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(namespace.to_owned()),
        owner_references: Some(vec![owner.clone()]),
        ..ObjectMeta::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cluster whose creates of APIServices answer 403 when their name
    /// starts with `refused`, and never answer otherwise.
    fn unanswering_cluster() -> Client {
        let service = tower::service_fn(|req: http::Request<kube::client::Body>| async move {
            if req.uri().path().ends_with("/apiservices") && req.method() == http::Method::POST {
                let body = http_body_util::BodyExt::collect(req.into_body())
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                if String::from_utf8_lossy(&body).contains("\"refused") {
                    let status = serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                                    "code": 403, "reason": "Forbidden", "message": "no"});
                    return Ok::<_, std::convert::Infallible>(
                        http::Response::builder()
                            .status(403)
                            .header("content-type", "application/json")
                            .body(kube::client::Body::from(status.to_string().into_bytes()))
                            .unwrap(),
                    );
                }
            }
            std::future::pending::<()>().await;
            unreachable!()
        });
        Client::new(service, "default")
    }

    fn api_service_named(name: &str) -> APIService {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "spec": {"group": "example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 15}
        }))
        .unwrap()
    }

    /// A create whose answer never comes (a timeout, Ctrl-C) may have taken
    /// effect: the teardown must try to undo it. One the cluster refused
    /// took none.
    #[tokio::test]
    async fn an_unanswered_create_is_undone_by_the_teardown_a_refused_one_is_not() {
        let mut registrar = Registrar::new(unanswering_cluster(), Duration::from_millis(100));
        let refused = registrar
            .create(
                &session::API_SERVICE,
                None,
                &api_service_named("refused.example.com"),
            )
            .await;
        assert!(refused.is_err());
        assert!(registrar.created().is_empty(), "{:?}", registrar.created());
        assert!(!registrar.may_have_written());

        let lost = registrar
            .create(
                &session::API_SERVICE,
                None,
                &api_service_named("v1.example.com"),
            )
            .await;
        assert!(lost.is_err());
        assert_eq!(
            registrar.created(),
            [SessionObject::of(
                &session::API_SERVICE,
                None,
                "v1.example.com"
            )]
        );

        // Dropped mid-request, as Ctrl-C drops the registration.
        let mut registrar = Registrar::new(unanswering_cluster(), Duration::from_secs(3600));
        let dropped = tokio::time::timeout(
            Duration::from_millis(100),
            registrar.create(
                &session::API_SERVICE,
                None,
                &api_service_named("v2.example.com"),
            ),
        )
        .await;
        assert!(dropped.is_err());
        assert_eq!(
            registrar.created(),
            [SessionObject::of(
                &session::API_SERVICE,
                None,
                "v2.example.com"
            )]
        );
    }

    #[test]
    fn a_write_refused_by_the_cluster_took_no_effect_one_unanswered_may_have() {
        let status = |code: u16, message: &str| {
            kube::Error::Api(Box::new(kube::core::Status {
                code,
                message: message.into(),
                ..Default::default()
            }))
        };
        assert!(api_error("create x", status(403, "no")).was_answered());
        assert!(api_error("create x", status(422, "invalid name")).was_answered());
        let lost = api_error(
            "create x",
            kube::Error::Service("no answer within 10s".into()),
        );
        assert!(!lost.was_answered());
        assert!(!RegisterError::Taken("served".into()).was_answered());
        // Another session made it meanwhile: a 409 AlreadyExists, nothing else.
        let exists = |reason: &str| {
            api_error(
                "create x",
                kube::Error::Api(Box::new(kube::core::Status {
                    code: 409,
                    reason: reason.into(),
                    ..Default::default()
                })),
            )
        };
        assert!(exists("AlreadyExists").is_already_exists());
        assert!(!exists("Conflict").is_already_exists());
        assert!(!api_error("create x", status(403, "no")).is_already_exists());
        assert!(is_refusal(&status(403, "forbidden")));
        assert!(!is_refusal(&status(
            403,
            "unable to create new content in namespace x because it is being terminated"
        )));
        assert!(!is_refusal(&status(404, "not found")));
    }

    #[test]
    fn forbidden_names_the_request_and_the_rights_needed() {
        let status = kube::core::Status {
            code: 403,
            message: "apiservices.apiregistration.k8s.io is forbidden: User \"dev\" cannot create resource".into(),
            reason: "Forbidden".into(),
            ..Default::default()
        };
        let err = api_error(
            "create apiservices.apiregistration.k8s.io/v1.a.example.com",
            kube::Error::Api(Box::new(status)),
        );
        let text = err.to_string();
        assert!(
            text.starts_with(
                "create apiservices.apiregistration.k8s.io/v1.a.example.com: forbidden (apiservices"
            ),
            "{text}"
        );
        assert!(text.ends_with("needs cluster-admin-like rights"), "{text}");

        // NamespaceLifecycle's 403 is about the namespace, not rights.
        let status = kube::core::Status {
            code: 403,
            message: "leases.coordination.k8s.io \"kubectl-cozy-a\" is forbidden: unable to create new content in namespace kubectl-cozy-system because it is being terminated".into(),
            reason: "Forbidden".into(),
            ..Default::default()
        };
        let err = api_error(
            "create leases.coordination.k8s.io/kubectl-cozy-a -n kubectl-cozy-system",
            kube::Error::Api(Box::new(status)),
        );
        assert!(matches!(err, RegisterError::Api { .. }), "{err:?}");
        assert!(!err.to_string().contains("cluster-admin"), "{err}");
    }
}
