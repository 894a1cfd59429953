//! Typed manifests of the tunnel agent a `serve --route tunnel` session runs
//! in the cluster: its ServiceAccount, a Role and RoleBinding, a ClusterRole
//! and ClusterRoleBinding, and the Deployment (pure functions, no I/O).
//!
//! **Rights.** The agent reaps its session once the Lease expires, so it may
//! do exactly that and nothing else; every rule names its objects
//! (`resourceNames`):
//!
//! | where | resource | verbs | why |
//! |---|---|---|---|
//! | Role | `leases` `kubectl-cozy-<id>` | get, delete | watch the Lease; delete it last of the namespaced objects |
//! | Role | `leases` (no names) | list | only when the session created its namespace: spare other sessions living there (`list` cannot be scoped by name) |
//! | Role | `services` `kubectl-cozy-<id>` | get, delete | stop the aggregator's route early |
//! | Role | `configmaps` `<saved originals>` | get, delete | restore taken-over APIServices, then drop the copies |
//! | ClusterRole | `apiservices` (the session's) | get, update, patch, delete | restore or delete them first |
//! | ClusterRole | `namespaces` `<ns>` | get, patch, delete | only when the session created it |
//! | ClusterRole | `leases` of the sessions it took APIServices from | get | only when taking over from another serve session: an original whose session has ended is deleted, not restored |
//! | ClusterRole | `clusterroles` `kubectl-cozy-<id>` | get, delete | its own rights, last |
//!
//! The rest (Deployment, ServiceAccount, Role, RoleBinding) is owned by the
//! Lease and the ClusterRoleBinding by the ClusterRole, so the garbage
//! collector removes them; the agent needs no right on them. Creating these
//! objects needs the rights they grant (RBAC escalation rules): serve's user
//! must be cluster-admin-like.
//!
//! **Pod.** PSA `restricted`: non-root (65532), read-only root filesystem, no
//! privilege escalation, all capabilities dropped, seccomp `RuntimeDefault`;
//! small requests and limits; readiness `/readyz` (ready while serve is
//! connected: `docs/tunnel.md`), liveness `/livez`.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, HTTPGetAction, PodSecurityContext, PodSpec,
    PodTemplateSpec, Probe, ResourceRequirements, SeccompProfile, SecurityContext, ServiceAccount,
};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::session::{self, object_name};
use crate::tunnel::agent::{DEFAULT_CONTROL_PORT, DEFAULT_DATA_PORT, DEFAULT_HEALTH_PORT};

/// The agent's default image: this very version's release image.
pub const DEFAULT_IMAGE: &str = crate::version::IMAGE;
/// The agent pods' `app.kubernetes.io/name`.
pub const APP_NAME: &str = "kubectl-cozy-tunnel-agent";
/// The container's name.
pub const CONTAINER: &str = "agent";
/// The user the agent runs as (the image's `nonroot`).
pub const RUN_AS_USER: i64 = 65532;
/// Name of the data port (the Service's target port).
pub const DATA_PORT_NAME: &str = "data";

/// What the agent manifests depend on.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The session id.
    pub id: String,
    /// The session namespace.
    pub namespace: String,
    /// The container image.
    pub image: String,
    /// The APIServices the session registers (or takes over).
    pub api_services: Vec<String>,
    /// The ConfigMap of saved originals, when taking over.
    pub saved_api_services: Option<String>,
    /// Whether the session lives in a namespace of sessions, which may fall
    /// to it (created, adopted, or handed over by its creator): the agent
    /// may then judge and delete it.
    pub in_session_namespace: bool,
    /// The Leases of the serve sessions whose APIServices it takes over: the
    /// agent reads them when reaping, to delete rather than restore an
    /// original whose own session has ended.
    pub original_leases: Vec<String>,
}

/// The agent pods' labels (also the Deployment's selector).
pub fn pod_labels(id: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), APP_NAME.to_owned()),
        (session::SESSION_LABEL.to_owned(), id.to_owned()),
    ])
}

/// [`pod_labels`] as a label selector string (for the port-forward).
pub fn pod_selector(id: &str) -> String {
    pod_labels(id)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// An owner reference to the object `api_version`/`kind` named `name` with
/// `uid` (the session Lease, or the ClusterRole for its binding).
pub fn owner(api_version: &str, kind: &str, name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
        uid: uid.to_owned(),
        ..OwnerReference::default()
    }
}

fn metadata(spec: &AgentSpec, namespaced: bool) -> ObjectMeta {
    let mut meta = ObjectMeta {
        name: Some(object_name(&spec.id)),
        namespace: namespaced.then(|| spec.namespace.clone()),
        labels: Some(BTreeMap::from([(
            "app.kubernetes.io/managed-by".to_owned(),
            "kubectl-cozy".to_owned(),
        )])),
        ..ObjectMeta::default()
    };
    session::mark(&mut meta, &spec.id, &spec.namespace);
    meta
}

fn rule(group: &str, resource: &str, names: &[String], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(vec![resource.to_owned()]),
        resource_names: (!names.is_empty()).then(|| names.to_vec()),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    }
}

/// The agent's ServiceAccount.
pub fn service_account(spec: &AgentSpec) -> ServiceAccount {
    ServiceAccount {
        metadata: metadata(spec, true),
        ..ServiceAccount::default()
    }
}

/// The agent's namespaced rights.
pub fn role(spec: &AgentSpec) -> Role {
    let name = object_name(&spec.id);
    let mut rules = vec![
        rule(
            "coordination.k8s.io",
            "leases",
            &[session::lease_name(&spec.id)],
            &["get", "delete"],
        ),
        rule(
            "",
            "services",
            std::slice::from_ref(&name),
            &["get", "delete"],
        ),
    ];
    if let Some(saved) = &spec.saved_api_services {
        rules.push(rule(
            "",
            "configmaps",
            std::slice::from_ref(saved),
            &["get", "delete"],
        ));
    }
    if spec.in_session_namespace {
        rules.push(rule("coordination.k8s.io", "leases", &[], &["list"]));
    }
    Role {
        metadata: metadata(spec, true),
        rules: Some(rules),
    }
}

fn subject(spec: &AgentSpec) -> Subject {
    Subject {
        kind: "ServiceAccount".to_owned(),
        name: object_name(&spec.id),
        namespace: Some(spec.namespace.clone()),
        ..Subject::default()
    }
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: Some("rbac.authorization.k8s.io".to_owned()),
        kind: kind.to_owned(),
        name: name.to_owned(),
    }
}

/// Binds [`role`] to the ServiceAccount.
pub fn role_binding(spec: &AgentSpec) -> RoleBinding {
    RoleBinding {
        metadata: metadata(spec, true),
        role_ref: role_ref("Role", &object_name(&spec.id)),
        subjects: Some(vec![subject(spec)]),
    }
}

/// The agent's cluster-wide rights.
pub fn cluster_role(spec: &AgentSpec) -> ClusterRole {
    let name = object_name(&spec.id);
    let mut rules = Vec::new();
    if !spec.api_services.is_empty() {
        rules.push(rule(
            "apiregistration.k8s.io",
            "apiservices",
            &spec.api_services,
            &["get", "update", "patch", "delete"],
        ));
    }
    if spec.in_session_namespace {
        rules.push(rule(
            "",
            "namespaces",
            std::slice::from_ref(&spec.namespace),
            &["get", "patch", "delete"],
        ));
    }
    if !spec.original_leases.is_empty() {
        rules.push(rule(
            "coordination.k8s.io",
            "leases",
            &spec.original_leases,
            &["get"],
        ));
    }
    rules.push(rule(
        "rbac.authorization.k8s.io",
        "clusterroles",
        std::slice::from_ref(&name),
        &["get", "delete"],
    ));
    ClusterRole {
        metadata: metadata(spec, false),
        rules: Some(rules),
        ..ClusterRole::default()
    }
}

/// Binds [`cluster_role`] to the ServiceAccount.
pub fn cluster_role_binding(spec: &AgentSpec) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: metadata(spec, false),
        role_ref: role_ref("ClusterRole", &object_name(&spec.id)),
        subjects: Some(vec![subject(spec)]),
    }
}

/// The container's arguments (the image's entrypoint is `kubectl-cozy`).
pub fn args(spec: &AgentSpec) -> Vec<String> {
    [
        "tunnel-agent".to_owned(),
        "--session".to_owned(),
        spec.id.clone(),
        "--session-namespace".to_owned(),
        spec.namespace.clone(),
        "--data-listen".to_owned(),
        format!("0.0.0.0:{DEFAULT_DATA_PORT}"),
        "--control-listen".to_owned(),
        format!("127.0.0.1:{DEFAULT_CONTROL_PORT}"),
        "--health-listen".to_owned(),
        format!("0.0.0.0:{DEFAULT_HEALTH_PORT}"),
    ]
    .to_vec()
}

fn probe(path: &str, period: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::String("health".to_owned()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(period),
        ..Probe::default()
    }
}

/// The pod security context of PSA `restricted`: non-root ([`RUN_AS_USER`],
/// the image's `nonroot`), seccomp `RuntimeDefault`. Shared with the
/// in-cluster server's Deployment (`register::install`).
pub fn restricted_pod() -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: Some(RUN_AS_USER),
        run_as_group: Some(RUN_AS_USER),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".to_owned(),
            ..SeccompProfile::default()
        }),
        ..PodSecurityContext::default()
    }
}

/// The container security context of PSA `restricted`: no privilege
/// escalation, read-only root filesystem, non-root, every capability dropped.
pub fn restricted_container() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(true),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_owned()]),
            ..Capabilities::default()
        }),
        ..SecurityContext::default()
    }
}

/// `cpu` and `memory` quantities, for requests and limits.
pub fn quantities(cpu: &str, memory: &str) -> BTreeMap<String, Quantity> {
    BTreeMap::from([
        ("cpu".to_owned(), Quantity(cpu.to_owned())),
        ("memory".to_owned(), Quantity(memory.to_owned())),
    ])
}

/// The agent's Deployment: one replica, recreated (never two agents of one
/// session), PSA `restricted`.
pub fn deployment(spec: &AgentSpec) -> Deployment {
    let labels = pod_labels(&spec.id);
    let container = Container {
        name: CONTAINER.to_owned(),
        image: Some(spec.image.clone()),
        args: Some(args(spec)),
        ports: Some(vec![
            ContainerPort {
                name: Some(DATA_PORT_NAME.to_owned()),
                container_port: i32::from(DEFAULT_DATA_PORT),
                ..ContainerPort::default()
            },
            ContainerPort {
                name: Some("health".to_owned()),
                container_port: i32::from(DEFAULT_HEALTH_PORT),
                ..ContainerPort::default()
            },
        ]),
        readiness_probe: Some(probe("/readyz", 2)),
        liveness_probe: Some(probe("/livez", 10)),
        resources: Some(ResourceRequirements {
            requests: Some(quantities("10m", "16Mi")),
            limits: Some(quantities("200m", "64Mi")),
            ..ResourceRequirements::default()
        }),
        security_context: Some(restricted_container()),
        ..Container::default()
    };
    Deployment {
        metadata: metadata(spec, true),
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            strategy: Some(DeploymentStrategy {
                type_: Some("Recreate".to_owned()),
                ..DeploymentStrategy::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    service_account_name: Some(object_name(&spec.id)),
                    automount_service_account_token: Some(true),
                    enable_service_links: Some(false),
                    termination_grace_period_seconds: Some(30),
                    security_context: Some(restricted_pod()),
                    containers: vec![container],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn spec(created: bool) -> AgentSpec {
        AgentSpec {
            id: "3f2a".into(),
            namespace: "kubectl-cozy-system".into(),
            image: DEFAULT_IMAGE.into(),
            api_services: vec!["v1alpha1.a.example.com".into()],
            saved_api_services: created.then(|| session::saved_api_services_name("3f2a")),
            in_session_namespace: created,
            original_leases: Vec::new(),
        }
    }

    fn value<T: serde::Serialize>(o: &T) -> Value {
        serde_json::to_value(o).unwrap()
    }

    #[test]
    fn every_rule_names_the_sessions_own_objects() {
        let namespaced = value(&role(&spec(false)));
        assert_eq!(
            namespaced["rules"],
            json!([
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                 "resourceNames": ["kubectl-cozy-3f2a"], "verbs": ["get", "delete"]},
                {"apiGroups": [""], "resources": ["services"],
                 "resourceNames": ["kubectl-cozy-3f2a"], "verbs": ["get", "delete"]},
            ])
        );
        let cluster = value(&cluster_role(&spec(false)));
        assert_eq!(
            cluster["rules"],
            json!([
                {"apiGroups": ["apiregistration.k8s.io"], "resources": ["apiservices"],
                 "resourceNames": ["v1alpha1.a.example.com"],
                 "verbs": ["get", "update", "patch", "delete"]},
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                 "resourceNames": ["kubectl-cozy-3f2a"], "verbs": ["get", "delete"]},
            ])
        );
        // Only the one list, needed to spare other sessions in a namespace
        // this session created; only then the namespace itself.
        let namespaced = value(&role(&spec(true)));
        let unnamed: Vec<&Value> = namespaced["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r.get("resourceNames").is_none())
            .collect();
        assert_eq!(
            unnamed,
            [
                &json!({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list"]})
            ]
        );
        assert!(
            namespaced
                .to_string()
                .contains("kubectl-cozy-3f2a-originals")
        );
        let mut taker = spec(true);
        taker.original_leases = vec!["kubectl-cozy-9x".into()];
        let cluster = value(&cluster_role(&taker));
        assert!(
            cluster["rules"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r.get("resourceNames").is_some())
        );
        assert!(cluster.to_string().contains("\"namespaces\""));
        // The Leases of the sessions it took over from: read only, by name.
        let leases = cluster["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resources"] == serde_json::json!(["leases"]))
            .expect("a leases rule");
        assert_eq!(
            leases["resourceNames"],
            serde_json::json!(["kubectl-cozy-9x"])
        );
        assert_eq!(leases["verbs"], serde_json::json!(["get"]));
        // No wildcard anywhere.
        for text in [namespaced.to_string(), cluster.to_string()] {
            assert!(!text.contains('*'), "{text}");
        }
    }

    #[test]
    fn objects_are_marked_and_bound_to_the_service_account() {
        let s = spec(false);
        let binding = value(&cluster_role_binding(&s));
        assert_eq!(
            binding["metadata"]["labels"][session::SESSION_LABEL],
            "3f2a"
        );
        assert_eq!(
            binding["metadata"]["annotations"][session::NAMESPACE_ANNOTATION],
            "kubectl-cozy-system"
        );
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": "kubectl-cozy-3f2a", "namespace": "kubectl-cozy-system"}])
        );
        assert_eq!(binding["roleRef"]["kind"], "ClusterRole");
        let rb = value(&role_binding(&s));
        assert_eq!(rb["metadata"]["namespace"], "kubectl-cozy-system");
        assert!(rb["metadata"]["annotations"].is_null());
        assert_eq!(
            pod_selector("3f2a"),
            "app.kubernetes.io/name=kubectl-cozy-tunnel-agent,kubectl-cozy.io/session=3f2a"
        );
    }

    #[test]
    fn the_pod_meets_pod_security_restricted() {
        let d = value(&deployment(&spec(false)));
        let pod = &d["spec"]["template"]["spec"];
        let c = &pod["containers"][0];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
        assert!(c["securityContext"]["capabilities"]["add"].is_null());
        assert!(pod["hostNetwork"].is_null() && c["securityContext"]["privileged"].is_null());
        assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
        assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/livez");
        assert_eq!(c["resources"]["limits"]["memory"], "64Mi");
        assert_eq!(c["image"], DEFAULT_IMAGE);
        assert_eq!(d["spec"]["strategy"]["type"], "Recreate");
        assert_eq!(pod["serviceAccountName"], "kubectl-cozy-3f2a");
        let args: Vec<&str> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(
            &args[..5],
            [
                "tunnel-agent",
                "--session",
                "3f2a",
                "--session-namespace",
                "kubectl-cozy-system"
            ]
        );
        assert!(args.contains(&"127.0.0.1:7001"));
        assert_eq!(
            d["spec"]["selector"]["matchLabels"],
            d["spec"]["template"]["metadata"]["labels"]
        );
    }
}
