//! Admission webhook checks: every Validating/MutatingWebhookConfiguration
//! webhook that calls a Service. With `failurePolicy: Fail` (the v1 default), a
//! missing Service or one without ready endpoints makes kube-apiserver reject
//! every request the webhook intercepts, cluster-wide: creates, updates (such as
//! removing a finalizer) and deletes (such as the namespace controller's).

use futures::future::join_all;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhookConfiguration,
    WebhookClientConfig,
};
use kube::api::{Api, ListParams};

use super::apiservices::check_service;
use super::findings::{Code, Finding, ObjectRef, Remedy, Severity, Unchecked, WebhookReport};
use super::requester::Requester;

/// A webhook as both configuration kinds describe it.
struct Hook {
    kind: &'static str,
    configuration: String,
    name: String,
    failure_policy: String,
    client: WebhookClientConfig,
    rules: Vec<RuleWithOperations>,
}

/// Lists both webhook configuration kinds and checks every Service backend.
pub async fn collect(req: &Requester) -> (Vec<WebhookReport>, Vec<Unchecked>) {
    let mut unchecked = Vec::new();
    let mut hooks = Vec::new();
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(req.client().clone());
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(req.client().clone());
    let params = ListParams::default();
    let (v, m) = tokio::join!(
        req.call(validating.list(&params)),
        req.call(mutating.list(&params))
    );
    match v {
        Ok(list) => {
            for c in list.items {
                let configuration = c.metadata.name.clone().unwrap_or_default();
                for w in c.webhooks.unwrap_or_default() {
                    hooks.push(Hook {
                        kind: "ValidatingWebhookConfiguration",
                        configuration: configuration.clone(),
                        name: w.name,
                        failure_policy: w.failure_policy.unwrap_or_else(|| "Fail".into()),
                        client: w.client_config,
                        rules: w.rules.unwrap_or_default(),
                    });
                }
            }
        }
        Err(err) => unchecked.push(
            err.unchecked("list validatingwebhookconfigurations.admissionregistration.k8s.io"),
        ),
    }
    match m {
        Ok(list) => {
            for c in list.items {
                let configuration = c.metadata.name.clone().unwrap_or_default();
                for w in c.webhooks.unwrap_or_default() {
                    hooks.push(Hook {
                        kind: "MutatingWebhookConfiguration",
                        configuration: configuration.clone(),
                        name: w.name,
                        failure_policy: w.failure_policy.unwrap_or_else(|| "Fail".into()),
                        client: w.client_config,
                        rules: w.rules.unwrap_or_default(),
                    });
                }
            }
        }
        Err(err) => unchecked
            .push(err.unchecked("list mutatingwebhookconfigurations.admissionregistration.k8s.io")),
    }
    let checks = join_all(hooks.into_iter().filter_map(|h| {
        let service = h.client.service.clone()?;
        Some(async move {
            let (check, _, more) = check_service(
                req,
                &service.namespace,
                &service.name,
                service.port.unwrap_or(443),
            )
            .await;
            let healthy = check.exists == Some(true)
                && check.error.is_none()
                && check.ready_endpoints.is_none_or(|n| n > 0);
            let report = WebhookReport {
                kind: h.kind.to_owned(),
                configuration: h.configuration,
                webhook: h.name,
                failure_policy: h.failure_policy,
                rules: rule_texts(&h.rules),
                service: check,
                healthy,
            };
            (report, more)
        })
    }))
    .await;
    let mut reports = Vec::new();
    for (report, more) in checks {
        reports.push(report);
        unchecked.extend(more);
    }
    reports.sort_by(|a, b| {
        (&a.kind, &a.configuration, &a.webhook).cmp(&(&b.kind, &b.configuration, &b.webhook))
    });
    (reports, unchecked)
}

/// `CREATE,DELETE configmaps` (group-qualified when not core).
fn rule_texts(rules: &[RuleWithOperations]) -> Vec<String> {
    rules
        .iter()
        .map(|r| {
            let ops = r.operations.clone().unwrap_or_default().join(",");
            let groups = r.api_groups.clone().unwrap_or_default();
            let resources: Vec<String> = r
                .resources
                .clone()
                .unwrap_or_default()
                .iter()
                .flat_map(|res| {
                    groups.iter().map(move |g| {
                        if g.is_empty() {
                            res.clone()
                        } else {
                            format!("{res}.{g}")
                        }
                    })
                })
                .collect();
            format!("{ops} {}", resources.join(","))
        })
        .collect()
}

/// The object a webhook finding is about: its configuration.
fn subject(w: &WebhookReport) -> ObjectRef {
    let resource = if w.kind == "ValidatingWebhookConfiguration" {
        "validatingwebhookconfigurations"
    } else {
        "mutatingwebhookconfigurations"
    };
    ObjectRef::cluster(
        "admissionregistration.k8s.io/v1",
        &w.kind,
        resource,
        &w.configuration,
    )
}

/// The id of the finding about a webhook.
pub fn finding_id(w: &WebhookReport) -> String {
    format!(
        "{}:{}#{}",
        Code::WebhookBackendUnavailable,
        super::findings::subject_key(&subject(w)),
        w.webhook
    )
}

/// Findings: `failurePolicy: Fail` webhooks whose backend is missing or has no
/// ready endpoints.
pub fn findings(webhooks: &[WebhookReport]) -> Vec<Finding> {
    webhooks
        .iter()
        .filter(|w| w.failure_policy == "Fail" && !w.healthy)
        .map(|w| {
            let s = &w.service;
            let backend = match (s.exists, s.ready_endpoints, &s.error) {
                (Some(false), _, _) => "not found".to_owned(),
                (_, _, Some(e)) => e.clone(),
                (_, Some(0), _) => format!("no ready endpoints for port {}", s.port),
                _ => "unusable".to_owned(),
            };
            let intercepts = if w.rules.is_empty() {
                "no rules".to_owned()
            } else {
                w.rules.join("; ")
            };
            let mut f = Finding::new(
                Code::WebhookBackendUnavailable,
                Severity::Error,
                subject(w),
                format!(
                    "webhook {} ({} {}) has failurePolicy Fail and its Service {}/{} is {}",
                    w.webhook, w.kind, w.configuration, s.namespace, s.name, backend
                ),
                "kube-apiserver must call the webhook for every request it intercepts and rejects the request when it \
                 cannot; updates and deletes it intercepts (removing finalizers, the namespace controller's deletes) \
                 fail cluster-wide",
            )
            .evidence(
                format!("{} {} webhook {}", w.kind, w.configuration, w.webhook),
                format!("failurePolicy {}, intercepts {intercepts}", w.failure_policy),
            )
            .evidence(format!("Service {}/{}", s.namespace, s.name), backend)
            .remedy(Remedy {
                description: "restore the webhook's backend; or, if it is gone for good, delete the configuration \
                              (or set failurePolicy: Ignore). doctor --fix does not touch webhooks"
                    .into(),
                command: format!(
                    "kubectl delete {} {}",
                    w.kind.to_lowercase(),
                    w.configuration
                ),
                automatic: false,
            });
            f.id = finding_id(w);
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::findings::ServiceCheck;

    fn hook(policy: &str, exists: bool) -> WebhookReport {
        WebhookReport {
            kind: "ValidatingWebhookConfiguration".into(),
            configuration: "deny-all".into(),
            webhook: "deny.example.com".into(),
            failure_policy: policy.into(),
            rules: vec!["DELETE configmaps".into()],
            service: ServiceCheck {
                namespace: "default".into(),
                name: "missing".into(),
                port: 443,
                exists: Some(exists),
                ..ServiceCheck::default()
            },
            healthy: exists,
        }
    }

    #[test]
    fn fail_policy_without_backend_is_an_error() {
        let found = findings(&[
            hook("Fail", false),
            hook("Ignore", false),
            hook("Fail", true),
        ]);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.code, Code::WebhookBackendUnavailable);
        assert!(
            f.what.contains("Service default/missing is not found"),
            "{}",
            f.what
        );
        assert_eq!(
            f.remedy.as_ref().unwrap().command,
            "kubectl delete validatingwebhookconfiguration deny-all"
        );
        assert_eq!(
            f.id,
            "WebhookBackendUnavailable:validatingwebhookconfiguration/deny-all#deny.example.com"
        );
    }

    #[test]
    fn rules_read_as_operations_and_resources() {
        let rule: RuleWithOperations = serde_json::from_value(serde_json::json!({
            "operations": ["CREATE", "DELETE"], "apiGroups": ["", "apps"], "resources": ["configmaps"],
            "apiVersions": ["*"]
        }))
        .unwrap();
        assert_eq!(
            rule_texts(&[rule]),
            vec!["CREATE,DELETE configmaps,configmaps.apps"]
        );
    }
}
