//! Admission webhook checks: every Validating/MutatingWebhookConfiguration
//! webhook that calls a Service. With `failurePolicy: Fail` (the v1 default), a
//! missing Service or one without ready endpoints makes kube-apiserver reject
//! every request the webhook intercepts: creates, updates (such as removing a
//! finalizer) and deletes (such as the namespace controller's) — everywhere,
//! or only in the namespaces its `namespaceSelector` selects and for the
//! objects its `objectSelector` selects. [`intercepts`] says whether a request
//! goes through a webhook, and [`holds`] whether a failing one keeps a
//! Terminating namespace: the one answer both the webhook's finding (`blocks`)
//! and the namespace (`blocked`) are given.

use std::collections::BTreeMap;

use futures::future::join_all;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhookConfiguration,
    WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, ListParams};
use kube::core::{Selector, SelectorExt};

use super::apiservices::check_service;
use super::findings::{
    Code, Condition, Evidence, Finding, ObjectRef, RemainingObject, Remedy, Severity, Unchecked,
    WebhookReport,
};
use super::requester::Requester;

/// A webhook as both configuration kinds describe it.
struct Hook {
    kind: &'static str,
    configuration: String,
    name: String,
    failure_policy: String,
    client: WebhookClientConfig,
    rules: Vec<RuleWithOperations>,
    namespace_selector: Option<LabelSelector>,
    object_selector: Option<LabelSelector>,
}

/// A selector that selects something less than everything (an empty one,
/// or none, selects everything).
fn narrowing(selector: Option<LabelSelector>) -> Option<LabelSelector> {
    selector.filter(|s| {
        s.match_labels.as_ref().is_some_and(|m| !m.is_empty())
            || s.match_expressions.as_ref().is_some_and(|e| !e.is_empty())
    })
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
                        namespace_selector: narrowing(w.namespace_selector),
                        object_selector: narrowing(w.object_selector),
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
                        namespace_selector: narrowing(w.namespace_selector),
                        object_selector: narrowing(w.object_selector),
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
                namespace_selector: h.namespace_selector,
                object_selector: h.object_selector,
                intercepts: h.rules,
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

/// `failurePolicy: Fail` and no working backend: every request it
/// intercepts is rejected.
pub fn failing(w: &WebhookReport) -> bool {
    w.failure_policy == "Fail" && !w.healthy
}

/// `team=a,env in (prod)`, as kubectl writes a selector.
pub fn selector_text(selector: &LabelSelector) -> String {
    match Selector::try_from(selector.clone()) {
        Ok(s) => s.to_string(),
        Err(_) => format!("{selector:?}"),
    }
}

/// Whether `selector` (none: everything) selects `labels`; one that does not
/// parse is taken to select them (kube-apiserver refuses to store such).
fn selects(selector: Option<&LabelSelector>, labels: &BTreeMap<String, String>) -> bool {
    match selector.map(|s| Selector::try_from(s.clone())) {
        None | Some(Err(_)) => true,
        Some(Ok(s)) => s.matches(labels),
    }
}

/// A request to intercept or not: `operation` (`CREATE`, `UPDATE`,
/// `DELETE`) on `object` (or on its `subresource`), in a namespace labelled
/// `namespace_labels` (for a Namespace: its own labels).
pub struct Request<'a> {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: &'a str,
    /// The object.
    pub object: &'a ObjectRef,
    /// `finalize`, `status`, …
    pub subresource: Option<&'a str>,
    /// The labels of its namespace (of itself, for a Namespace).
    pub namespace_labels: &'a BTreeMap<String, String>,
    /// Its labels.
    pub object_labels: &'a BTreeMap<String, String>,
}

/// Whether kube-apiserver sends `request` to webhook `w`: a rule matches its
/// operation, group, resource (subresource) and scope — any version, as the
/// default `matchPolicy: Equivalent` converts it — and both selectors
/// select it (the namespaceSelector does not apply to other cluster-scoped
/// objects).
pub fn intercepts(w: &WebhookReport, request: &Request<'_>) -> bool {
    let object = request.object;
    let namespace = object.kind == "Namespace" && object.namespace.is_none();
    let namespaced = object.namespace.is_some();
    let any = |list: &Option<Vec<String>>, value: &str| {
        list.iter()
            .flatten()
            .any(|x| x == "*" || x.as_str() == value)
    };
    // As kube-apiserver matches: `res/*` also matches `res` itself.
    let resource_matches = |patterns: &Option<Vec<String>>| {
        patterns.iter().flatten().any(|p| {
            let (resource, sub) = p.split_once('/').unwrap_or((p.as_str(), ""));
            (resource == "*" || resource == object.resource)
                && (sub == "*" || sub == request.subresource.unwrap_or_default())
        })
    };
    let ruled = w.intercepts.iter().any(|r| {
        any(&r.operations, request.operation)
            && any(&r.api_groups, object.group())
            && resource_matches(&r.resources)
            && match r.scope.as_deref() {
                Some("Cluster") => !namespaced,
                Some("Namespaced") => namespaced,
                _ => true,
            }
    });
    ruled
        && (!(namespaced || namespace)
            || selects(w.namespace_selector.as_ref(), request.namespace_labels))
        && selects(w.object_selector.as_ref(), request.object_labels)
}

/// What a failing webhook `w` rejects that the Terminating namespace `name`
/// (labelled `labels`, holding `remaining`) needs, one phrase each; empty
/// when it does not hold the namespace. It holds it when the namespace
/// controller's conditions quote it, when it intercepts the delete of an
/// object not yet deleted, the update that removes the finalizers of an
/// object (or of the namespace), or the namespace's `finalize`.
pub fn holds(
    w: &WebhookReport,
    name: &str,
    labels: &BTreeMap<String, String>,
    namespace_finalizers: bool,
    remaining: &[RemainingObject],
    conditions: &[Condition],
) -> Vec<String> {
    if !failing(w) {
        return Vec::new();
    }
    let mut held: Vec<String> = conditions
        .iter()
        .filter(|c| c.status == "True")
        .filter(|c| {
            c.message
                .as_deref()
                .is_some_and(|m| m.contains(&format!("\"{}\"", w.webhook)))
        })
        .map(|c| format!("the namespace controller's {} quotes it", c.type_))
        .collect();
    let namespace = ObjectRef::cluster("v1", "Namespace", "namespaces", name);
    let request = |operation, object, subresource, object_labels| Request {
        operation,
        object,
        subresource,
        namespace_labels: labels,
        object_labels,
    };
    for o in remaining {
        if o.deletion_timestamp.is_none()
            && intercepts(w, &request("DELETE", &o.object, None, &o.labels))
        {
            held.push(format!("DELETE {}", o.object.kubectl_name()));
        }
        if !o.finalizers.is_empty() && intercepts(w, &request("UPDATE", &o.object, None, &o.labels))
        {
            held.push(format!(
                "UPDATE {} (removing its finalizers)",
                o.object.kubectl_name()
            ));
        }
    }
    if namespace_finalizers && intercepts(w, &request("UPDATE", &namespace, None, labels)) {
        held.push(format!(
            "UPDATE namespaces/{name} (removing its finalizers)"
        ));
    }
    if intercepts_finalize(w, name, labels) {
        held.push(format!("UPDATE namespaces/{name}/finalize"));
    }
    held
}

/// Whether webhook `w` intercepts the `finalize` of namespace `name`
/// (labelled `labels`): `PUT /api/v1/namespaces/NAME/finalize`, what
/// `--finalize-namespaces` sends.
pub fn intercepts_finalize(
    w: &WebhookReport,
    name: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    let namespace = ObjectRef::cluster("v1", "Namespace", "namespaces", name);
    intercepts(
        w,
        &Request {
            operation: "UPDATE",
            object: &namespace,
            subresource: Some("finalize"),
            namespace_labels: labels,
            object_labels: labels,
        },
    )
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
        .filter(|w| failing(w))
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
            let mut selected = Vec::new();
            if let Some(selector) = &w.namespace_selector {
                selected.push(format!(
                    "in the namespaces its namespaceSelector ({}) selects",
                    selector_text(selector)
                ));
            }
            if let Some(selector) = &w.object_selector {
                selected.push(format!(
                    "for the objects its objectSelector ({}) selects",
                    selector_text(selector)
                ));
            }
            let scope = if selected.is_empty() {
                "cluster-wide".to_owned()
            } else {
                selected.join(" and ")
            };
            let mut f = Finding::new(
                Code::WebhookBackendUnavailable,
                Severity::Error,
                subject(w),
                format!(
                    "webhook {} ({} {}) has failurePolicy Fail and its Service {}/{} is {}",
                    w.webhook, w.kind, w.configuration, s.namespace, s.name, backend
                ),
                format!(
                    "kube-apiserver must call the webhook for every request it intercepts and rejects the request \
                     when it cannot; updates and deletes it intercepts (removing finalizers, the namespace \
                     controller's deletes) fail {scope}"
                ),
            )
            .evidence(
                format!("{} {} webhook {}", w.kind, w.configuration, w.webhook),
                format!("failurePolicy {}, intercepts {intercepts}", w.failure_policy),
            );
            for (field, selector) in [
                ("namespaceSelector", &w.namespace_selector),
                ("objectSelector", &w.object_selector),
            ] {
                if let Some(selector) = selector {
                    f.evidence.push(Evidence {
                        source: format!("{} {} webhook {} {field}", w.kind, w.configuration, w.webhook),
                        observed: selector_text(selector),
                    });
                }
            }
            let mut f = f.evidence(format!("Service {}/{}", s.namespace, s.name), backend)
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
            namespace_selector: None,
            object_selector: None,
            intercepts: Vec::new(),
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

    /// Rules match as kube-apiserver matches them: operation, group,
    /// resource (`*`, `res/*`, `*/*`, subresources), scope.
    #[test]
    fn requests_are_matched_against_the_rules() {
        let rule =
            |v: serde_json::Value| -> RuleWithOperations { serde_json::from_value(v).unwrap() };
        let mut w = hook("Fail", false);
        let none = BTreeMap::new();
        let cm = ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            resource: "configmaps".into(),
            namespace: Some("a".into()),
            name: "x".into(),
        };
        let ns = ObjectRef::cluster("v1", "Namespace", "namespaces", "a");
        let request = |operation, object, subresource| Request {
            operation,
            object,
            subresource,
            namespace_labels: &none,
            object_labels: &none,
        };
        let cases = [
            (
                json_rule(&["UPDATE"], "configmaps", None),
                request("UPDATE", &cm, None),
                true,
            ),
            (
                json_rule(&["UPDATE"], "configmaps", None),
                request("DELETE", &cm, None),
                false,
            ),
            (
                json_rule(&["*"], "*", None),
                request("DELETE", &cm, None),
                true,
            ),
            (
                json_rule(&["*"], "*", None),
                request("UPDATE", &ns, Some("finalize")),
                false,
            ),
            (
                json_rule(&["*"], "*/*", None),
                request("UPDATE", &ns, Some("finalize")),
                true,
            ),
            (
                json_rule(&["*"], "*/*", None),
                request("UPDATE", &cm, None),
                true,
            ),
            (
                json_rule(&["UPDATE"], "namespaces/finalize", None),
                request("UPDATE", &ns, Some("finalize")),
                true,
            ),
            (
                json_rule(&["UPDATE"], "namespaces/finalize", None),
                request("UPDATE", &ns, None),
                false,
            ),
            (
                json_rule(&["UPDATE"], "namespaces/*", None),
                request("UPDATE", &ns, None),
                true,
            ),
            (
                json_rule(&["UPDATE"], "*", Some("Namespaced")),
                request("UPDATE", &ns, None),
                false,
            ),
            (
                json_rule(&["UPDATE"], "*", Some("Cluster")),
                request("UPDATE", &ns, None),
                true,
            ),
        ];
        for (r, req, expected) in cases {
            w.intercepts = vec![rule(r.clone())];
            assert_eq!(
                intercepts(&w, &req),
                expected,
                "{r} on {} {:?}",
                req.object.resource,
                req.subresource
            );
        }
    }

    fn json_rule(operations: &[&str], resource: &str, scope: Option<&str>) -> serde_json::Value {
        let mut r = serde_json::json!({
            "operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": [resource]
        });
        if let Some(scope) = scope {
            r["scope"] = scope.into();
        }
        r
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
