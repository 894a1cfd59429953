//! The install's workload: the namespace (PSA `restricted` enforced), the
//! ServiceAccount, the ClusterIP Service, the Deployment running
//! `serve --in-cluster`, and its PodDisruptionBudget (pure functions).
//!
//! **Pod.** The security settings are the tunnel agent's
//! ([`agent::restricted_pod`], [`agent::restricted_container`]); the serving
//! certificate is mounted from its Secret ([`tls::SERVING_SECRET`]) and the
//! kind definitions from their ConfigMap (kubelet refreshes both; the server
//! reloads the kinds on change). Readiness is `/readyz`, which fails until
//! the HelmRelease watch cache has synced (and again while shutting down);
//! liveness is `/livez`. A generated certificate's digest is a pod-template
//! annotation, so a rotation rolls the pods (the server reads its
//! certificate at start).
//!
//! **Availability.** `replicas` (2 by default), a rolling update that never
//! goes below it (`maxUnavailable: 0`), a PodDisruptionBudget allowing one
//! voluntary disruption at a time, and spread over nodes and zones
//! (`ScheduleAnyway`, so a one-node cluster still runs every replica).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, ContainerPort, HTTPGetAction, Namespace, PodSecurityContext,
    PodSpec, PodTemplateSpec, Probe, ResourceRequirements, SecretVolumeSource, Service,
    ServiceAccount, ServicePort, ServiceSpec, TopologySpreadConstraint, Volume, VolumeMount,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use sha2::{Digest, Sha256};

use super::{Certificates, InstallSpec, NAME, kinds, labels, metadata, tls};
use crate::register::agent;
use crate::register::apiservice::SERVICE_PORT;

/// The port the server listens on in the pod.
pub const PORT: u16 = 8443;
/// The container port's name (the Service's target port).
pub const PORT_NAME: &str = "https";
/// Where the serving Secret is mounted.
pub const SERVING_DIR: &str = "/var/run/kubectl-cozy/serving";
/// Where the kinds ConfigMap is mounted.
pub const KINDS_DIR: &str = "/etc/kubectl-cozy/kinds";
/// The container's name.
pub const CONTAINER: &str = "server";
/// The pod-template annotation with the generated serving certificate's
/// digest (a new certificate rolls the pods).
pub const CERT_DIGEST_ANNOTATION: &str = "kubectl-cozy.io/serving-cert-sha256";
/// The pod-template annotation listing the served group/versions: a new
/// one rolls the pods, so that `install --apply` registers its APIService
/// once a pod that read it answers (changes within the served groups are
/// reloaded by the running pods without a restart).
pub const SERVED_ANNOTATION: &str = "kubectl-cozy.io/served";

/// The server pods' labels (the Deployment's, Service's and
/// PodDisruptionBudget's selector).
pub fn pod_labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), NAME.to_owned()),
        (
            "app.kubernetes.io/component".to_owned(),
            "server".to_owned(),
        ),
    ])
}

/// [`pod_labels`] as a label selector's text (`name=…,component=server`).
pub fn pod_selector() -> String {
    pod_labels()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn selector() -> LabelSelector {
    LabelSelector {
        match_labels: Some(pod_labels()),
        ..LabelSelector::default()
    }
}

/// The namespace, with PSA `restricted` enforced, audited and warned.
pub fn namespace(spec: &InstallSpec) -> Namespace {
    let mut meta = metadata(&spec.namespace, None);
    if let Some(l) = meta.labels.as_mut() {
        for mode in super::namespace::POD_SECURITY_MODES {
            l.insert(
                format!("pod-security.kubernetes.io/{mode}"),
                "restricted".to_owned(),
            );
        }
    }
    Namespace {
        metadata: meta,
        ..Namespace::default()
    }
}

/// The server's ServiceAccount.
pub fn service_account(spec: &InstallSpec) -> ServiceAccount {
    ServiceAccount {
        metadata: metadata(NAME, Some(&spec.namespace)),
        ..ServiceAccount::default()
    }
}

/// The Service the APIServices point at: port 443 to the pods' `https`.
pub fn service(spec: &InstallSpec) -> Service {
    Service {
        metadata: metadata(NAME, Some(&spec.namespace)),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            selector: Some(pod_labels()),
            ports: Some(vec![ServicePort {
                name: Some(PORT_NAME.to_owned()),
                port: i32::from(SERVICE_PORT),
                target_port: Some(IntOrString::String(PORT_NAME.to_owned())),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// The container's arguments (the image's entrypoint is `kubectl-cozy`).
pub fn args(spec: &InstallSpec) -> Vec<String> {
    let mut args: Vec<String> = [
        "serve",
        "--in-cluster",
        "--kinds",
        KINDS_DIR,
        "--tls-cert-file",
        &format!("{SERVING_DIR}/tls.crt"),
        "--tls-key-file",
        &format!("{SERVING_DIR}/tls.key"),
        "--listen",
        &format!("0.0.0.0:{PORT}"),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    if spec.impersonate {
        args.push("--impersonate".to_owned());
    }
    args
}

fn probe(path: &str, period: i32, failures: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::String(PORT_NAME.to_owned()),
            scheme: Some("HTTPS".to_owned()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(period),
        failure_threshold: Some(failures),
        timeout_seconds: Some(2),
        ..Probe::default()
    }
}

fn spread(topology_key: &str) -> TopologySpreadConstraint {
    TopologySpreadConstraint {
        max_skew: 1,
        topology_key: topology_key.to_owned(),
        when_unsatisfiable: "ScheduleAnyway".to_owned(),
        label_selector: Some(selector()),
        ..TopologySpreadConstraint::default()
    }
}

/// The Deployment: `spec.replicas` pods of `serve --in-cluster`.
pub fn deployment(spec: &InstallSpec) -> Deployment {
    let container = Container {
        name: CONTAINER.to_owned(),
        image: Some(spec.image.clone()),
        args: Some(args(spec)),
        ports: Some(vec![ContainerPort {
            name: Some(PORT_NAME.to_owned()),
            container_port: i32::from(PORT),
            protocol: Some("TCP".to_owned()),
            ..ContainerPort::default()
        }]),
        readiness_probe: Some(probe("/readyz", 5, 2)),
        liveness_probe: Some(probe("/livez", 10, 3)),
        resources: Some(ResourceRequirements {
            requests: Some(agent::quantities("100m", "128Mi")),
            limits: Some(agent::quantities("2", "1Gi")),
            ..ResourceRequirements::default()
        }),
        security_context: Some(agent::restricted_container()),
        volume_mounts: Some(vec![
            VolumeMount {
                name: "serving".to_owned(),
                mount_path: SERVING_DIR.to_owned(),
                read_only: Some(true),
                ..VolumeMount::default()
            },
            VolumeMount {
                name: "kinds".to_owned(),
                mount_path: KINDS_DIR.to_owned(),
                read_only: Some(true),
                ..VolumeMount::default()
            },
        ]),
        ..Container::default()
    };
    let mut annotations = BTreeMap::from([(
        SERVED_ANNOTATION.to_owned(),
        spec.served()
            .iter()
            .map(|gv| format!("{}/{}", gv.group, gv.version))
            .collect::<Vec<_>>()
            .join(","),
    )]);
    if let Certificates::Generated(g) = &spec.certificates {
        let digest = Sha256::digest(g.serving.cert_pem.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        annotations.insert(CERT_DIGEST_ANNOTATION.to_owned(), hex);
    }
    let annotations = Some(annotations);
    let mut template_labels = labels();
    template_labels.extend(pod_labels());
    Deployment {
        metadata: metadata(NAME, Some(&spec.namespace)),
        spec: Some(DeploymentSpec {
            replicas: Some(spec.replicas),
            selector: selector(),
            strategy: Some(DeploymentStrategy {
                type_: Some("RollingUpdate".to_owned()),
                rolling_update: Some(RollingUpdateDeployment {
                    max_surge: Some(IntOrString::Int(1)),
                    max_unavailable: Some(IntOrString::Int(0)),
                }),
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(template_labels),
                    annotations,
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    service_account_name: Some(NAME.to_owned()),
                    automount_service_account_token: Some(true),
                    enable_service_links: Some(false),
                    termination_grace_period_seconds: Some(30),
                    security_context: Some(PodSecurityContext {
                        fs_group: Some(agent::RUN_AS_USER),
                        ..agent::restricted_pod()
                    }),
                    topology_spread_constraints: Some(vec![
                        spread("kubernetes.io/hostname"),
                        spread("topology.kubernetes.io/zone"),
                    ]),
                    containers: vec![container],
                    volumes: Some(vec![
                        Volume {
                            name: "serving".to_owned(),
                            secret: Some(SecretVolumeSource {
                                secret_name: Some(tls::SERVING_SECRET.to_owned()),
                                default_mode: Some(0o440),
                                ..SecretVolumeSource::default()
                            }),
                            ..Volume::default()
                        },
                        Volume {
                            name: "kinds".to_owned(),
                            config_map: Some(ConfigMapVolumeSource {
                                name: kinds::CONFIG_MAP.to_owned(),
                                ..ConfigMapVolumeSource::default()
                            }),
                            ..Volume::default()
                        },
                    ]),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

/// One voluntary disruption at a time.
pub fn pod_disruption_budget(spec: &InstallSpec) -> PodDisruptionBudget {
    PodDisruptionBudget {
        metadata: metadata(NAME, Some(&spec.namespace)),
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::Int(1)),
            selector: Some(selector()),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{generated, spec};
    use super::*;
    use serde_json::{Value, json};

    fn value<T: serde::Serialize>(o: &T) -> Value {
        serde_json::to_value(o).unwrap()
    }

    #[test]
    fn the_deployment_is_restricted_probed_spread_and_mounts_its_inputs() {
        let s = spec(generated());
        let d = value(&deployment(&s));
        assert_eq!(d["spec"]["replicas"], 2);
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        let c = &pod["containers"][0];
        assert_eq!(c["image"], crate::version::IMAGE);
        assert_eq!(c["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
        assert_eq!(c["readinessProbe"]["httpGet"]["scheme"], "HTTPS");
        assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/livez");
        assert!(c["resources"]["limits"]["memory"].is_string());
        let args: Vec<&str> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(&args[..2], ["serve", "--in-cluster"]);
        assert!(args.contains(&KINDS_DIR));
        assert!(!args.contains(&"--impersonate"));
        assert_eq!(
            pod["topologySpreadConstraints"][0]["topologyKey"],
            "kubernetes.io/hostname"
        );
        assert_eq!(
            pod["volumes"][0]["secret"]["secretName"],
            tls::SERVING_SECRET
        );
        assert_eq!(pod["volumes"][1]["configMap"]["name"], kinds::CONFIG_MAP);
        // A new group/version rolls the pods.
        let served = d["spec"]["template"]["metadata"]["annotations"][SERVED_ANNOTATION]
            .as_str()
            .unwrap();
        assert!(
            !served.is_empty() && served.split(',').all(|gv| gv.contains('/')),
            "{served}"
        );
        assert_eq!(
            d["spec"]["template"]["metadata"]["annotations"][CERT_DIGEST_ANNOTATION]
                .as_str()
                .unwrap()
                .len(),
            64
        );
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 0);
        // The selector matches the template.
        for (k, v) in d["spec"]["selector"]["matchLabels"].as_object().unwrap() {
            assert_eq!(&d["spec"]["template"]["metadata"]["labels"][k], v);
        }
    }

    #[test]
    fn namespace_service_and_budget() {
        let s = spec(generated());
        let ns = value(&namespace(&s));
        assert_eq!(
            ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
            "restricted"
        );
        let svc = value(&service(&s));
        assert_eq!(svc["spec"]["ports"][0]["port"], 443);
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], PORT_NAME);
        assert_eq!(svc["spec"]["selector"], value(&pod_labels()));
        let pdb = value(&pod_disruption_budget(&s));
        assert_eq!(pdb["apiVersion"], "policy/v1");
        assert_eq!(pdb["spec"]["maxUnavailable"], 1);
    }
}
