//! Everything a `serve` session will put in a cluster, decided before
//! anything is created (pure): the session namespace, the Lease and what it
//! records, the Service, the agent's objects for the tunnel route, and one
//! APIService per served group/version. `--dry-run` prints
//! [`Plan::manifests`]; [`super::registration`] creates the same objects.

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use super::agent::{self, AgentSpec};
use super::apiservice::{
    self, Backend, GROUP_PRIORITY_MINIMUM, GroupVersion, Registration, SERVICE_PORT,
    VERSION_PRIORITY,
};
use super::session::{self, SessionRecord};

/// How kube-apiserver's aggregator reaches serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Through the agent pod and a reverse tunnel over pods/portforward.
    Tunnel {
        /// The agent's image.
        image: String,
        /// Test seam (`--agent-service-external-name HOST:PORT`): the
        /// Service is an ExternalName to `HOST` and the APIService's port is
        /// `PORT`, because the test plane cannot route to a pod.
        service_external_name: Option<(String, u16)>,
    },
    /// An ExternalName Service to a host name the cluster resolves to this
    /// machine; the APIService's port is serve's.
    ExternalName {
        /// The host.
        host: String,
        /// Serve's port.
        port: u16,
    },
}

/// A session's objects, decided.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The session id.
    pub id: String,
    /// The session namespace.
    pub namespace: String,
    /// Who holds the Lease.
    pub holder: String,
    /// When the session started.
    pub started: Timestamp,
    /// The Lease's duration.
    pub lease_duration: Duration,
    /// The served group/versions.
    pub served: Vec<GroupVersion>,
    /// The route.
    pub route: Route,
    /// The CA of serve's serving certificate, PEM.
    pub ca_pem: String,
}

impl Plan {
    /// The APIServices' names, one per served group/version.
    pub fn api_service_names(&self) -> Vec<String> {
        self.served
            .iter()
            .map(GroupVersion::api_service_name)
            .collect()
    }

    /// The reachability probe's group/version: external-name route only
    /// (through the tunnel, the agent's connection is the proof).
    pub fn probe(&self) -> Option<GroupVersion> {
        matches!(self.route, Route::ExternalName { .. })
            .then(|| apiservice::probe_group_version(&self.id))
    }

    /// The names of the APIServices the session may create: the served
    /// group/versions' and its reachability probe's (which a reaper deletes
    /// if the session dies while probing).
    fn recorded_api_service_names(&self) -> Vec<String> {
        let mut names = self.api_service_names();
        names.extend(self.probe().map(|gv| gv.api_service_name()));
        names
    }

    /// What the Service points at.
    pub fn backend(&self) -> Backend {
        match &self.route {
            Route::Tunnel {
                service_external_name: Some((host, _)),
                ..
            }
            | Route::ExternalName { host, .. } => Backend::ExternalName { host: host.clone() },
            Route::Tunnel { .. } => Backend::Agent,
        }
    }

    /// The port in the APIServices' service reference.
    pub fn service_port(&self) -> u16 {
        match &self.route {
            Route::Tunnel {
                service_external_name: Some((_, port)),
                ..
            } => *port,
            Route::Tunnel { .. } => SERVICE_PORT,
            Route::ExternalName { port, .. } => *port,
        }
    }

    /// The Lease annotation describing the route.
    pub fn route_text(&self) -> String {
        let service = format!(
            "service {}/{}:{}",
            self.namespace,
            session::object_name(&self.id),
            self.service_port()
        );
        match &self.route {
            Route::Tunnel {
                service_external_name: None,
                ..
            } => format!("{service} → tunnel"),
            Route::Tunnel {
                service_external_name: Some((host, _)),
                ..
            } => format!("{service} → tunnel (test seam: ExternalName {host})"),
            Route::ExternalName { host, .. } => format!("{service} → external-name {host}"),
        }
    }

    /// The annotation saying who registered the objects.
    pub fn registered_by(&self) -> String {
        apiservice::registered_by(&self.holder, self.started)
    }

    /// What the APIServices say besides their group/version.
    pub fn registration(&self) -> Registration {
        Registration {
            id: self.id.clone(),
            namespace: self.namespace.clone(),
            port: self.service_port(),
            ca_pem: self.ca_pem.clone(),
            registered: self.registered_by(),
        }
    }

    /// What the Lease records; `saved` when APIServices are taken over.
    pub fn record(&self, in_session_namespace: bool, saved: bool) -> SessionRecord {
        SessionRecord {
            served: self.served.iter().map(ToString::to_string).collect(),
            api_services: self.recorded_api_service_names(),
            route: Some(self.route_text()),
            started: Some(self.started),
            saved_api_services: saved.then(|| session::saved_api_services_name(&self.id)),
            in_session_namespace,
            process: super::local_process::this_process(),
        }
    }

    /// The agent's manifests' inputs (tunnel route only).
    pub fn agent(&self, in_session_namespace: bool, saved: bool) -> Option<AgentSpec> {
        let Route::Tunnel { image, .. } = &self.route else {
            return None;
        };
        Some(AgentSpec {
            id: self.id.clone(),
            namespace: self.namespace.clone(),
            image: image.clone(),
            api_services: self.api_service_names(),
            saved_api_services: saved.then(|| session::saved_api_services_name(&self.id)),
            in_session_namespace,
            original_leases: Vec::new(),
        })
    }

    /// The session namespace as created when missing: labelled as the
    /// session's.
    pub fn namespace_object(&self) -> Namespace {
        let mut metadata = ObjectMeta {
            name: Some(self.namespace.clone()),
            ..ObjectMeta::default()
        };
        session::mark(&mut metadata, &self.id, &self.namespace);
        Namespace {
            metadata,
            ..Namespace::default()
        }
    }

    /// Every object the session would create when its namespace is missing
    /// and nothing is taken over, in creation order, as JSON manifests
    /// (owner references are set at creation, from the owners' uids).
    pub fn manifests(&self) -> Vec<Value> {
        let json = |v: Result<Value, serde_json::Error>| v.unwrap_or_default();
        let record = self.record(true, false);
        let seconds = i32::try_from(self.lease_duration.as_secs().max(1)).unwrap_or(i32::MAX);
        let mut out = vec![
            json(serde_json::to_value(self.namespace_object())),
            json(serde_json::to_value(session::lease_object(
                &self.id,
                &self.namespace,
                &self.holder,
                seconds,
                self.started,
                &record,
            ))),
            json(serde_json::to_value(apiservice::service(
                &self.id,
                &self.namespace,
                &self.backend(),
                &self.registered_by(),
            ))),
        ];
        if let Some(spec) = self.agent(true, false) {
            out.push(json(serde_json::to_value(agent::service_account(&spec))));
            out.push(json(serde_json::to_value(agent::role(&spec))));
            out.push(json(serde_json::to_value(agent::role_binding(&spec))));
            out.push(json(serde_json::to_value(agent::cluster_role(&spec))));
            out.push(json(serde_json::to_value(agent::cluster_role_binding(
                &spec,
            ))));
            out.push(json(serde_json::to_value(agent::deployment(&spec))));
        }
        let registration = self.registration();
        // Registered, waited for and deleted before the served groups are.
        if let Some(probe) = self.probe() {
            out.push(json(serde_json::to_value(apiservice::api_service(
                &registration,
                &probe,
                apiservice::PROBE_PRIORITIES,
            ))));
        }
        for gv in &self.served {
            out.push(json(serde_json::to_value(apiservice::api_service(
                &registration,
                gv,
                (GROUP_PRIORITY_MINIMUM, VERSION_PRIORITY),
            ))));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(route: Route) -> Plan {
        Plan {
            id: "3f2a".into(),
            namespace: "kubectl-cozy-system".into(),
            holder: "alice@laptop, pid 1".into(),
            started: "2026-09-01T12:00:00Z".parse().unwrap(),
            lease_duration: Duration::from_secs(15),
            served: vec![
                GroupVersion {
                    group: "a.example.com".into(),
                    version: "v1".into(),
                },
                GroupVersion {
                    group: "b.example.com".into(),
                    version: "v1alpha1".into(),
                },
            ],
            route,
            ca_pem: "CA".into(),
        }
    }

    fn tunnel() -> Route {
        Route::Tunnel {
            image: agent::DEFAULT_IMAGE.into(),
            service_external_name: None,
        }
    }

    #[test]
    fn the_tunnel_route_creates_the_agent_and_a_clusterip_service() {
        let p = plan(tunnel());
        let kinds: Vec<String> = p
            .manifests()
            .iter()
            .map(|m| m["kind"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            kinds,
            [
                "Namespace",
                "Lease",
                "Service",
                "ServiceAccount",
                "Role",
                "RoleBinding",
                "ClusterRole",
                "ClusterRoleBinding",
                "Deployment",
                "APIService",
                "APIService"
            ]
        );
        for m in p.manifests() {
            assert_eq!(
                m["metadata"]["labels"][session::SESSION_LABEL],
                "3f2a",
                "{m}"
            );
        }
        assert_eq!(p.service_port(), 443);
        assert_eq!(p.backend(), Backend::Agent);
        assert_eq!(
            p.route_text(),
            "service kubectl-cozy-system/kubectl-cozy-3f2a:443 → tunnel"
        );
        let record = p.record(true, true);
        assert_eq!(
            record.api_services,
            ["v1.a.example.com", "v1alpha1.b.example.com"]
        );
        assert_eq!(
            record.served,
            ["a.example.com/v1", "b.example.com/v1alpha1"]
        );
        assert_eq!(
            record.saved_api_services.as_deref(),
            Some("kubectl-cozy-3f2a-originals")
        );
        let mut out = Vec::new();
        crate::output::write_objects(&mut out, crate::output::OutputFormat::Yaml, &p.manifests())
            .unwrap();
        let yaml = String::from_utf8(out).unwrap();
        assert_eq!(yaml.matches("---\n").count(), 11);
        assert!(yaml.contains("kind: Deployment"), "{yaml}");
    }

    #[test]
    fn the_external_name_route_and_the_test_seam() {
        let p = plan(Route::ExternalName {
            host: "host.k3d.internal".into(),
            port: 34567,
        });
        assert!(p.agent(false, false).is_none());
        assert_eq!(p.service_port(), 34567);
        // The namespace, Lease, Service, the probe's APIService and the
        // served groups'; a reaper knows the probe's from the record.
        let manifests = p.manifests();
        assert_eq!(manifests.len(), 6);
        assert_eq!(
            manifests[3]["metadata"]["name"],
            "v1.3f2a.probe.kubectl-cozy.io"
        );
        assert_eq!(manifests[3]["spec"]["group"], "3f2a.probe.kubectl-cozy.io");
        assert_eq!(manifests[3]["spec"]["groupPriorityMinimum"], 1);
        assert_eq!(
            p.record(true, false).api_services,
            [
                "v1.a.example.com",
                "v1alpha1.b.example.com",
                "v1.3f2a.probe.kubectl-cozy.io"
            ]
        );
        assert_eq!(
            p.route_text(),
            "service kubectl-cozy-system/kubectl-cozy-3f2a:34567 → external-name host.k3d.internal"
        );
        let seam = plan(Route::Tunnel {
            image: "img".into(),
            service_external_name: Some(("localhost".into(), 4242)),
        });
        assert_eq!(
            seam.backend(),
            Backend::ExternalName {
                host: "localhost".into()
            }
        );
        assert_eq!(seam.service_port(), 4242);
        assert!(seam.agent(false, false).is_some());
        // Through the tunnel the agent's connection is the proof.
        assert_eq!(seam.probe(), None);
        assert_eq!(seam.record(true, false).api_services.len(), 2);
    }
}
