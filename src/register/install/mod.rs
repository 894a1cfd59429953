//! Everything a production install of the server needs in a cluster
//! (`kubectl cozy install`), as typed manifests in apply order
//! ([`manifests`]): the namespace (PSA `restricted`), the ServiceAccount and
//! the RBAC `serve --print-rbac` prints ([`super::manifests::rbac`]), the kind
//! definitions as a ConfigMap ([`kinds`]), the serving certificate (a Secret
//! made here, or cert-manager's: [`tls`]), the Service, the Deployment and
//! its PodDisruptionBudget ([`workload`]), with `--service-monitor` and
//! `--prometheus-rules` the Prometheus Operator's ServiceMonitor and
//! PrometheusRule ([`monitoring`]), and one
//! APIService per served group/version with its `caBundle`. Applying them (diff, server-side apply,
//! dry runs) is [`apply`]'s; the pods run `serve --in-cluster`. A namespace
//! that exists and is not the install's is left out and left as it is
//! ([`namespace`]).
//!
//! | file | owns |
//! |---|---|
//! | [`workload`] | Namespace, ServiceAccount, Service, Deployment, PodDisruptionBudget |
//! | [`kinds`] | the kind definitions as a ConfigMap |
//! | [`tls`] | the CA and serving Secrets (reused, renewed, rotated) or cert-manager's Issuers and Certificates |
//! | [`monitoring`] | the ServiceMonitor that has the Prometheus Operator scrape `/metrics`, the PrometheusRule's alerts |
//! | [`apply`] | the diff against the cluster and the server-side apply |
//! | [`namespace`] | whether the namespace is the install's, or exists already and is left as it is |
//! | [`claim`] | whether the APIServices the cluster holds for the install's group/versions are free for it |
//! | [`remove`] | `install --delete`: what of an install the cluster holds, removed APIServices first |
//! | [`rollout`] | `--apply`'s wait for the Deployment before registering APIServices that are new |

pub mod apply;
pub mod claim;
pub mod kinds;
pub mod monitoring;
pub mod namespace;
pub mod remove;
pub mod rollout;
pub mod tls;
pub mod workload;

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::{
    APIService, APIServiceSpec, ServiceReference,
};
use serde_json::Value;

use super::apiservice::{GROUP_PRIORITY_MINIMUM, GroupVersion, SERVICE_PORT, VERSION_PRIORITY};
use super::manifests::{self, RbacOptions, RbacSubject};
use crate::kinds::definition::ResolvedKind;

/// The name of the ServiceAccount, Service, Deployment and
/// PodDisruptionBudget, and the prefix of every other object's.
pub const NAME: &str = "kubectl-cozy";
/// The default namespace.
pub const DEFAULT_NAMESPACE: &str = "kubectl-cozy";
/// The default number of replicas.
pub const DEFAULT_REPLICAS: i32 = 2;
/// The annotation cert-manager's CA injector reads on an APIService.
pub const INJECT_CA_FROM: &str = "cert-manager.io/inject-ca-from";

/// Where the serving certificate comes from.
#[derive(Debug, Clone)]
pub enum Certificates {
    /// A Secret made (or reused) by the tool: [`tls::Generated`].
    Generated(tls::Generated),
    /// cert-manager issues and renews it; its CA injector fills `caBundle`.
    CertManager,
}

/// What an install depends on.
#[derive(Debug, Clone)]
pub struct InstallSpec {
    /// The namespace of every namespaced object.
    pub namespace: String,
    /// The server's image.
    pub image: String,
    /// How many replicas.
    pub replicas: i32,
    /// Whether the server writes HelmReleases as the requesting user.
    pub impersonate: bool,
    /// The kinds (for RBAC and the APIServices).
    pub kinds: Vec<ResolvedKind>,
    /// The kind definition files as ConfigMap data (file name → text).
    pub kind_files: BTreeMap<String, String>,
    /// The serving certificate.
    pub certificates: Certificates,
    /// A ServiceMonitor with these labels besides the install's own
    /// (`--service-monitor`); none without it.
    pub service_monitor: Option<BTreeMap<String, String>>,
    /// A PrometheusRule with these labels besides the install's own
    /// (`--prometheus-rules`); none without it.
    pub prometheus_rules: Option<BTreeMap<String, String>>,
}

impl InstallSpec {
    /// The served group/versions, sorted, once each.
    pub fn served(&self) -> Vec<GroupVersion> {
        let mut out: Vec<GroupVersion> = self
            .kinds
            .iter()
            .map(|k| GroupVersion {
                group: k.definition.group.clone(),
                version: k.definition.version.clone(),
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The prefix of the cluster-wide RBAC objects: [`NAME`] in the default
    /// namespace, `kubectl-cozy-<namespace>` elsewhere (two installs never
    /// share a ClusterRoleBinding).
    pub fn rbac_prefix(&self) -> String {
        if self.namespace == DEFAULT_NAMESPACE {
            NAME.to_owned()
        } else {
            format!("{NAME}-{}", self.namespace)
        }
    }

    /// The server's identity.
    pub fn subject(&self) -> RbacSubject {
        RbacSubject::ServiceAccount {
            namespace: self.namespace.clone(),
            name: NAME.to_owned(),
        }
    }
}

/// Labels of every object: `app.kubernetes.io/{name,managed-by}`.
pub fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), NAME.to_owned()),
        ("app.kubernetes.io/managed-by".to_owned(), NAME.to_owned()),
    ])
}

/// Whether an object the cluster holds (as JSON) carries the install's
/// `app.kubernetes.io/managed-by` label.
pub fn labelled_ours(held: &Value) -> bool {
    held["metadata"]["labels"]["app.kubernetes.io/managed-by"].as_str() == Some(NAME)
}

/// Metadata named `name` (in `namespace`, when namespaced) with [`labels`].
pub fn metadata(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        labels: Some(labels()),
        ..ObjectMeta::default()
    }
}

/// The APIService for `gv`, pointing at the install's Service, with
/// `caBundle` (generated certificates) or cert-manager's injection
/// annotation.
pub fn api_service(spec: &InstallSpec, gv: &GroupVersion) -> APIService {
    let mut metadata = metadata(&gv.api_service_name(), None);
    let ca_bundle = match &spec.certificates {
        Certificates::Generated(g) => Some(ByteString(g.ca.cert_pem.as_bytes().to_vec())),
        Certificates::CertManager => {
            metadata.annotations = Some(BTreeMap::from([(
                INJECT_CA_FROM.to_owned(),
                format!("{}/{}", spec.namespace, tls::SERVING_SECRET),
            )]));
            None
        }
    };
    APIService {
        metadata,
        spec: Some(APIServiceSpec {
            group: Some(gv.group.clone()),
            version: Some(gv.version.clone()),
            service: Some(ServiceReference {
                namespace: Some(spec.namespace.clone()),
                name: Some(NAME.to_owned()),
                port: Some(i32::from(SERVICE_PORT)),
            }),
            ca_bundle,
            group_priority_minimum: GROUP_PRIORITY_MINIMUM,
            version_priority: VERSION_PRIORITY,
            insecure_skip_tls_verify: None,
        }),
        status: None,
    }
}

/// The resources (plurals, subresources too) the cluster serves in `api`
/// (a group/version): none when it serves no such group/version, as a
/// cluster without the operator that defines them.
pub async fn served_resources(
    client: &kube::Client,
    api: &str,
) -> Result<Vec<String>, kube::Error> {
    match client.list_api_group_resources(api).await {
        Ok(list) => Ok(list.resources.into_iter().map(|r| r.name).collect()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Vec::new()),
        Err(err) => Err(err),
    }
}

fn value<T: serde::Serialize>(object: &T) -> Value {
    serde_json::to_value(object).unwrap_or_default()
}

/// Every object of the install, in apply order: namespace, identity and
/// rights, configuration and certificates, Service, Deployment,
/// PodDisruptionBudget, the ServiceMonitor and PrometheusRule if wanted,
/// APIServices (last:
/// the aggregator routes to the server only once it can exist).
pub fn manifests(spec: &InstallSpec) -> Vec<Value> {
    let mut out = vec![
        value(&workload::namespace(spec)),
        value(&workload::service_account(spec)),
    ];
    let rbac = RbacOptions {
        prefix: spec.rbac_prefix(),
        subject: spec.subject(),
        impersonate: spec.impersonate,
    };
    out.extend(manifests::rbac(&spec.kinds, &rbac).iter().map(value));
    out.push(value(&kinds::config_map(spec)));
    match &spec.certificates {
        Certificates::Generated(generated) => {
            out.push(value(&tls::ca_secret(spec, generated)));
            out.push(value(&tls::serving_secret(spec, generated)));
        }
        Certificates::CertManager => out.extend(tls::cert_manager(spec)),
    }
    out.push(value(&workload::service(spec)));
    out.push(value(&workload::deployment(spec)));
    out.push(value(&workload::pod_disruption_budget(spec)));
    if let Some(labels) = &spec.service_monitor {
        out.push(monitoring::service_monitor(spec, labels));
    }
    if let Some(labels) = &spec.prometheus_rules {
        out.push(monitoring::prometheus_rule(spec, labels));
    }
    out.extend(spec.served().iter().map(|gv| value(&api_service(spec, gv))));
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn spec(certificates: Certificates) -> InstallSpec {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
        let registry = crate::kinds::Registry::from_path(&dir).unwrap();
        InstallSpec {
            namespace: "cozy-test".into(),
            image: crate::version::IMAGE.into(),
            replicas: 2,
            impersonate: false,
            kinds: registry
                .snapshot()
                .kinds()
                .iter()
                .map(|k| k.resolved.clone())
                .collect(),
            kind_files: kinds::files(&dir).unwrap(),
            certificates,
            service_monitor: None,
            prometheus_rules: None,
        }
    }

    pub(crate) fn generated() -> Certificates {
        Certificates::Generated(
            tls::prepare(None, None, "cozy-test", jiff::Timestamp::now()).unwrap(),
        )
    }

    #[test]
    fn the_objects_come_in_apply_order() {
        let objects = manifests(&spec(generated()));
        let kinds: Vec<&str> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds[0], "Namespace");
        assert_eq!(kinds[1], "ServiceAccount");
        let position = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
        assert!(position("ClusterRole") < position("Deployment"));
        assert!(position("Secret") < position("Deployment"));
        assert!(position("ConfigMap") < position("Deployment"));
        assert!(position("Service") < position("APIService"));
        assert_eq!(*kinds.last().unwrap(), "APIService");
        assert!(kinds.contains(&"PodDisruptionBudget"));
        let names: Vec<&str> = objects
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"kubectl-cozy-cozy-test:server"),
            "{names:?}"
        );
        for o in &objects {
            assert!(o["apiVersion"].is_string(), "{o}");
            assert_eq!(
                o["metadata"]["labels"]["app.kubernetes.io/managed-by"], NAME,
                "{o}"
            );
        }
    }

    #[test]
    fn api_services_carry_the_ca_or_the_injection_annotation() {
        let spec_generated = spec(generated());
        let gv = &spec_generated.served()[0];
        let a = value(&api_service(&spec_generated, gv));
        assert_eq!(
            a["spec"]["service"],
            json!({"namespace": "cozy-test", "name": NAME, "port": 443})
        );
        assert!(a["spec"]["caBundle"].as_str().unwrap().starts_with("LS0t"));
        assert!(a["metadata"].get("annotations").is_none());
        let spec_cm = spec(Certificates::CertManager);
        let a = value(&api_service(&spec_cm, gv));
        assert!(a["spec"].get("caBundle").is_none());
        assert_eq!(
            a["metadata"]["annotations"][INJECT_CA_FROM],
            format!("cozy-test/{}", tls::SERVING_SECRET)
        );
        assert!(
            manifests(&spec_cm)
                .iter()
                .any(|o| o["kind"] == "Certificate")
        );
    }
}
