//! The install's Prometheus Operator objects.
//!
//! **ServiceMonitor** (`install --service-monitor`): the Prometheus
//! Operator scrapes every replica's `/metrics` through the install's
//! Service, over HTTPS verified with the serving Secret's CA and the
//! Service's DNS name, with the Prometheus pod's own ServiceAccount token (a
//! bearer token the server reviews as any other; the account needs `get` on
//! the non-resource URL `/metrics`, as for kube-apiserver's own metrics).
//!
//! **PrometheusRule** (`install --prometheus-rules`, with the
//! ServiceMonitor, whose `job` and `namespace` labels its rules select):
//! alerts for what goes wrong with an extension API server, first of all
//! its APIServices being unavailable, which stalls namespace deletion in
//! the whole cluster ([`prometheus_rule`]).
//!
//! Labels given to either option are added to the object, so that a
//! Prometheus whose selector wants one (kube-prometheus-stack's `release`)
//! picks it up.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{InstallSpec, NAME, labels, tls, workload};
use crate::apimachinery::labels::{label_key_problems, label_value_problems};

/// The group/version the Prometheus Operator serves ServiceMonitors and
/// PrometheusRules in.
pub const PROMETHEUS_OPERATOR_API: &str = "monitoring.coreos.com/v1";
/// Where a pod's ServiceAccount token is mounted (Prometheus reads its
/// own from there).
const POD_TOKEN_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// The ServiceMonitor of `spec`'s install, with `extra_labels` beside the
/// install's own.
pub fn service_monitor(spec: &InstallSpec, extra_labels: &BTreeMap<String, String>) -> Value {
    json!({
        "apiVersion": PROMETHEUS_OPERATOR_API,
        "kind": "ServiceMonitor",
        "metadata": object_metadata(spec, extra_labels),
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

/// The PrometheusRule of `spec`'s install, with `extra_labels` beside the
/// install's own. Its alerts:
///
/// - `KubectlCozyAPIServiceUnavailable` (critical): kube-apiserver has
///   found one of the install's APIServices unavailable for 5 minutes
///   (`aggregator_unavailable_apiservice`, kube-apiserver's own metric):
///   discovery is incomplete and namespace deletion stalls cluster-wide;
/// - `KubectlCozyDown` (critical): no replica has answered a scrape for 5
///   minutes;
/// - `KubectlCozyWatchCacheNotSynced` (warning): a replica's HelmRelease
///   watch cache has not synced for 10 minutes (it is not ready);
/// - `KubectlCozyErrors` (warning): more than 5 % of its requests have
///   failed with a 5xx for 10 minutes.
pub fn prometheus_rule(spec: &InstallSpec, extra_labels: &BTreeMap<String, String>) -> Value {
    // Each name as a regular expression (dots escaped) in a PromQL string
    // (whose own escape doubles the backslash).
    let names: Vec<String> = spec
        .served()
        .iter()
        .map(|gv| gv.api_service_name().replace('.', r"\\."))
        .collect();
    let api_services = names.join("|");
    let ns = &spec.namespace;
    let ours = format!(r#"job="{NAME}",namespace="{ns}""#);
    let rules = [
        alert(
            "KubectlCozyAPIServiceUnavailable",
            format!(r#"max by (name) (aggregator_unavailable_apiservice{{name=~"{api_services}"}}) == 1"#),
            ("5m", "critical"),
            "An APIService of kubectl-cozy is unavailable.",
            format!(
                "kube-apiserver has found APIService {{{{ $labels.name }}}} unavailable for 5 minutes: \
                 discovery of the cluster is incomplete and namespace deletion stalls in the whole cluster \
                 until it is back. Its server is the install in namespace {ns}; \
                 `kubectl cozy doctor` says why and offers the fix."
            ),
        ),
        alert(
            "KubectlCozyDown",
            // Scraped and failing, or not there to scrape.
            format!("max by (namespace) (up{{{ours}}}) == 0 or absent(up{{{ours}}})"),
            ("5m", "critical"),
            "kubectl-cozy is down.",
            format!(
                "No replica of kubectl-cozy in namespace {ns} has answered Prometheus for 5 minutes: \
                 its APIServices are unavailable."
            ),
        ),
        alert(
            "KubectlCozyWatchCacheNotSynced",
            format!("kubectl_cozy_watch_cache_ready{{{ours}}} == 0"),
            ("10m", "warning"),
            "A kubectl-cozy replica's watch cache has not synced.",
            "Replica {{ $labels.pod }} has not synced its HelmRelease watch cache for 10 minutes: it is \
             not ready and serves no requests. Its log says why (RBAC on HelmReleases, an unreachable \
             kube-apiserver)."
                .to_owned(),
        ),
        alert(
            "KubectlCozyErrors",
            format!(
                r#"sum by (namespace) (rate(apiserver_request_total{{{ours},code=~"5.."}}[5m])) / sum by (namespace) (rate(apiserver_request_total{{{ours}}}[5m])) > 0.05"#
            ),
            ("10m", "warning"),
            "kubectl-cozy is failing requests.",
            "{{ $value | humanizePercentage }} of the requests to kubectl-cozy in namespace \
             {{ $labels.namespace }} have failed with a server error for 10 minutes."
                .to_owned(),
        ),
    ];
    json!({
        "apiVersion": PROMETHEUS_OPERATOR_API,
        "kind": "PrometheusRule",
        "metadata": object_metadata(spec, extra_labels),
        "spec": {"groups": [{"name": NAME, "rules": rules}]},
    })
}

/// One alerting rule: firing once `expr` has held for `for_` (with its
/// `severity` label), described by `summary` and `description`.
fn alert(
    name: &str,
    expr: String,
    (for_, severity): (&str, &str),
    summary: &str,
    description: String,
) -> Value {
    json!({
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity},
        "annotations": {"summary": summary, "description": description},
    })
}

/// The metadata of the install's Prometheus Operator objects: named and
/// labelled as the install's, with `extra_labels` besides.
fn object_metadata(spec: &InstallSpec, extra_labels: &BTreeMap<String, String>) -> Value {
    let mut object_labels = labels();
    object_labels.extend(extra_labels.clone());
    json!({"name": NAME, "namespace": spec.namespace, "labels": object_labels})
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
