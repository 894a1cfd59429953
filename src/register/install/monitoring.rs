//! The install's ServiceMonitor (`install --service-monitor`): the
//! Prometheus Operator scrapes every replica's `/metrics` through the
//! install's Service, over HTTPS verified with the serving Secret's CA and
//! the Service's DNS name, with the Prometheus pod's own ServiceAccount
//! token (a bearer token the server reviews as any other; the account needs
//! `get` on the non-resource URL `/metrics`, as for kube-apiserver's own
//! metrics). Labels given to the option are added, so that a Prometheus
//! whose `serviceMonitorSelector` wants one (kube-prometheus-stack's
//! `release`) picks it up.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{InstallSpec, NAME, labels, tls, workload};
use crate::apimachinery::labels::{label_key_problems, label_value_problems};

/// The group/version the Prometheus Operator serves ServiceMonitors in.
pub const SERVICE_MONITOR_API: &str = "monitoring.coreos.com/v1";
/// Where a pod's ServiceAccount token is mounted (Prometheus reads its
/// own from there).
const POD_TOKEN_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// The ServiceMonitor of `spec`'s install, with `extra_labels` beside the
/// install's own.
pub fn service_monitor(spec: &InstallSpec, extra_labels: &BTreeMap<String, String>) -> Value {
    let mut object_labels = labels();
    object_labels.extend(extra_labels.clone());
    json!({
        "apiVersion": SERVICE_MONITOR_API,
        "kind": "ServiceMonitor",
        "metadata": {"name": NAME, "namespace": spec.namespace, "labels": object_labels},
        "spec": {
            // The Service's labels ([`super::metadata`]), in its namespace.
            "selector": {"matchLabels": labels()},
            "namespaceSelector": {"matchNames": [spec.namespace]},
            "endpoints": [{
                "port": workload::PORT_NAME,
                "scheme": "https",
                "path": "/metrics",
                "bearerTokenFile": POD_TOKEN_FILE,
                "tlsConfig": {
                    "ca": {"secret": {"name": tls::SERVING_SECRET, "key": "ca.crt"}},
                    "serverName": service_host(&spec.namespace),
                },
            }],
        },
    })
}

/// The Service's DNS name that the serving certificate names.
fn service_host(namespace: &str) -> String {
    format!("{NAME}.{namespace}.svc")
}

/// `--service-monitor`'s labels: `key=value` pairs separated by commas
/// (none: the install's labels only), each key and value as Kubernetes
/// labels allow.
pub fn parse_labels(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("{pair:?} is not key=value"));
        };
        let (key, value) = (key.trim(), value.trim());
        let problems: Vec<String> = label_key_problems(key)
            .into_iter()
            .chain(label_value_problems(value))
            .collect();
        if !problems.is_empty() {
            return Err(format!("label {key}={value}: {}", problems.join("; ")));
        }
        out.insert(key.to_owned(), value.to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{generated, spec};
    use super::super::{Certificates, workload};
    use super::*;

    /// The ServiceMonitor finds what the install makes: its selector is the
    /// Service's labels in the Service's namespace, its port the Service's
    /// port name, its CA a key of the serving Secret, and its server name
    /// one the serving certificate is issued for.
    #[test]
    fn the_service_monitor_points_at_the_installs_service_and_certificate() {
        let spec = spec(generated());
        let monitor = service_monitor(&spec, &BTreeMap::from([("release".into(), "prom".into())]));
        let service = serde_json::to_value(workload::service(&spec)).unwrap();
        assert_eq!(
            monitor["spec"]["selector"]["matchLabels"],
            service["metadata"]["labels"]
        );
        assert_eq!(
            monitor["spec"]["namespaceSelector"]["matchNames"],
            json!([service["metadata"]["namespace"]])
        );
        let endpoint = &monitor["spec"]["endpoints"][0];
        assert_eq!(endpoint["port"], service["spec"]["ports"][0]["name"]);
        let Certificates::Generated(generated) = &spec.certificates else {
            unreachable!()
        };
        let secret = serde_json::to_value(tls::serving_secret(&spec, generated)).unwrap();
        let ca = &endpoint["tlsConfig"]["ca"]["secret"];
        assert_eq!(ca["name"], secret["metadata"]["name"]);
        assert!(secret["data"].get(ca["key"].as_str().unwrap()).is_some());
        let (dns, _) = tls::hosts(&spec.namespace);
        let server_name = endpoint["tlsConfig"]["serverName"].as_str().unwrap();
        assert!(dns.iter().any(|d| d == server_name), "{dns:?}");
        assert_eq!(monitor["metadata"]["labels"]["release"], "prom");
        assert_eq!(
            monitor["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            NAME
        );
    }

    #[test]
    fn labels_are_key_value_pairs_kubernetes_allows() {
        assert_eq!(parse_labels("").unwrap(), BTreeMap::new());
        assert_eq!(
            parse_labels("release=kube-prometheus-stack, team=platform").unwrap(),
            BTreeMap::from([
                ("release".into(), "kube-prometheus-stack".into()),
                ("team".into(), "platform".into()),
            ])
        );
        assert!(
            parse_labels("release")
                .unwrap_err()
                .contains("not key=value")
        );
        assert!(parse_labels("-bad=x").unwrap_err().contains("label -bad=x"));
        assert!(parse_labels("ok=not valid").is_err());
    }
}
