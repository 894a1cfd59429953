//! Applying an install: what the cluster holds now ([`read_certificates`],
//! [`preview`]: each object as it is and as a server-side dry-run apply
//! would leave it), the diff between them ([`Change::diff`], Secret values
//! masked), and the server-side apply itself ([`apply`], with a field
//! manager, forced: the install owns these objects).
//!
//! Objects are addressed through a fixed table of the kinds an install
//! contains ([`resource`]), so no discovery round trip is needed. A server
//! dry-run of a namespaced object cannot run before its namespace exists;
//! the preview then shows the object as it would be sent.

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::tls::{CA_SECRET, SERVING_SECRET};

/// Failures applying or previewing.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// An object of a kind the table does not know.
    #[error("no API resource known for {api_version} {kind}")]
    UnknownKind {
        /// Its apiVersion.
        api_version: String,
        /// Its kind.
        kind: String,
    },
    /// A request failed.
    #[error("{what} {kind} {name}")]
    Request {
        /// get, dry-run apply or apply.
        what: &'static str,
        /// The object's kind.
        kind: String,
        /// `namespace/name` or `name`.
        name: String,
        /// Why.
        #[source]
        source: Box<kube::Error>,
    },
}

/// The API resource of `object` and whether it is namespaced.
pub fn resource(object: &Value) -> Result<(ApiResource, bool), ApplyError> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let (plural, namespaced) = match (api_version, kind) {
        ("v1", "Namespace") => ("namespaces", false),
        ("v1", "ServiceAccount") => ("serviceaccounts", true),
        ("v1", "ConfigMap") => ("configmaps", true),
        ("v1", "Secret") => ("secrets", true),
        ("v1", "Service") => ("services", true),
        ("apps/v1", "Deployment") => ("deployments", true),
        ("policy/v1", "PodDisruptionBudget") => ("poddisruptionbudgets", true),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => ("clusterroles", false),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => ("clusterrolebindings", false),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => ("rolebindings", true),
        ("apiregistration.k8s.io/v1", "APIService") => ("apiservices", false),
        ("cert-manager.io/v1", "Issuer") => ("issuers", true),
        ("cert-manager.io/v1", "Certificate") => ("certificates", true),
        ("monitoring.coreos.com/v1", "ServiceMonitor") => ("servicemonitors", true),
        ("monitoring.coreos.com/v1", "PrometheusRule") => ("prometheusrules", true),
        _ => {
            return Err(ApplyError::UnknownKind {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            });
        }
    };
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    Ok((ApiResource::from_gvk_with_plural(&gvk, plural), namespaced))
}

/// `Kind namespace/name` (or `Kind name`).
pub fn describe(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or_default();
    format!("{kind} {}", address(object))
}

fn address(object: &Value) -> String {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_owned(),
    }
}

/// The API of `object`'s resource (namespaced where it is) and its name.
pub(super) fn api(
    client: &Client,
    object: &Value,
) -> Result<(Api<DynamicObject>, String), ApplyError> {
    let (resource, namespaced) = resource(object)?;
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let api = match object["metadata"]["namespace"].as_str() {
        Some(ns) if namespaced => Api::namespaced_with(client.clone(), ns, &resource),
        _ => Api::all_with(client.clone(), &resource),
    };
    Ok((api, name))
}

/// Wraps a failed `what` request about `object`.
pub(super) fn request_error(
    what: &'static str,
    object: &Value,
) -> impl FnOnce(kube::Error) -> ApplyError {
    let kind = object["kind"].as_str().unwrap_or_default().to_owned();
    let name = address(object);
    move |source| ApplyError::Request {
        what,
        kind,
        name,
        source: Box::new(source),
    }
}

/// The CA and serving Secrets of an install in `namespace`, if any.
pub async fn read_certificates(
    client: &Client,
    namespace: &str,
) -> Result<(Option<Secret>, Option<Secret>), kube::Error> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    Ok((
        secrets.get_opt(CA_SECRET).await?,
        secrets.get_opt(SERVING_SECRET).await?,
    ))
}

/// What applying one object changes.
#[derive(Debug, Clone)]
pub struct Change {
    /// `Kind namespace/name`.
    pub object: String,
    /// The object as the cluster holds it, cleaned ([`clean`]).
    pub before: Option<Value>,
    /// The object as a server-side dry-run apply leaves it (or as sent,
    /// when its namespace does not exist yet), cleaned.
    pub after: Value,
    /// Whether `after` is as sent rather than the server's answer.
    pub unchecked: bool,
}

impl Change {
    /// Whether the object changes.
    pub fn changes(&self) -> bool {
        self.before.as_ref() != Some(&self.after)
    }

    /// `created`, `changed` or `unchanged`.
    pub fn verb(&self) -> &'static str {
        match (&self.before, self.changes()) {
            (None, _) => "created",
            (Some(_), true) => "changed",
            (Some(_), false) => "unchanged",
        }
    }

    /// A unified diff (`kubectl diff`-like) of the YAML before and after,
    /// Secret values masked; empty when nothing changes.
    pub fn diff(&self) -> String {
        if !self.changes() {
            return String::new();
        }
        let yaml = |v: Option<&Value>| {
            v.map(|v| crate::output::to_yaml(&mask(v)).unwrap_or_default())
                .unwrap_or_default()
        };
        let (before, after) = (yaml(self.before.as_ref()), yaml(Some(&self.after)));
        let from = format!("{} (cluster)", self.object);
        let to = format!(
            "{} ({})",
            self.object,
            if self.unchecked { "as sent" } else { "applied" }
        );
        similar::TextDiff::from_lines(&before, &after)
            .unified_diff()
            .context_radius(3)
            .header(&from, &to)
            .to_string()
    }
}

/// `object` without what the server keeps for itself: `status`,
/// `managedFields`, `resourceVersion`, `uid`, `generation`,
/// `creationTimestamp`, and the Deployment controller's revision annotation.
pub fn clean(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(o) = out.as_object_mut() {
        o.remove("status");
        if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            for key in [
                "managedFields",
                "resourceVersion",
                "uid",
                "generation",
                "creationTimestamp",
            ] {
                meta.remove(key);
            }
            let empty = meta
                .get_mut("annotations")
                .and_then(Value::as_object_mut)
                .map(|a| {
                    a.remove("deployment.kubernetes.io/revision");
                    a.is_empty()
                });
            if empty == Some(true) {
                meta.remove("annotations");
            }
        }
    }
    out
}

/// A Secret's values replaced by a short digest (so a change still shows).
fn mask(object: &Value) -> Value {
    let mut out = object.clone();
    if out["kind"] == "Secret"
        && let Some(data) = out.get_mut("data").and_then(Value::as_object_mut)
    {
        for value in data.values_mut() {
            let digest = Sha256::digest(value.as_str().unwrap_or_default().as_bytes());
            let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
            *value = Value::String(format!("(hidden, sha256 {hex}…)"));
        }
    }
    out
}

fn params(field_manager: &str, dry_run: bool) -> PatchParams {
    let mut p = PatchParams::apply(field_manager).force();
    p.dry_run = dry_run;
    p
}

/// Each object as the cluster holds it and as a server-side dry-run apply
/// would leave it, in order.
pub async fn preview(
    client: &Client,
    objects: &[Value],
    field_manager: &str,
) -> Result<Vec<Change>, ApplyError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut missing_namespaces = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(objects.len());
    for object in objects {
        let (api, name) = api(client, object)?;
        let before = api
            .get_opt(&name)
            .await
            .map_err(request_error("get", object))?
            .map(|o| clean(&serde_json::to_value(o).unwrap_or_default()));
        let namespace = object["metadata"]["namespace"].as_str();
        let namespace_missing = match namespace {
            Some(ns) if missing_namespaces.contains(ns) => true,
            Some(ns) => {
                let missing = namespaces
                    .get_opt(ns)
                    .await
                    .map_err(request_error("get", object))?
                    .is_none();
                if missing {
                    missing_namespaces.insert(ns.to_owned());
                }
                missing
            }
            None => false,
        };
        let (after, unchecked) = if namespace_missing {
            (clean(object), true)
        } else {
            let applied = api
                .patch(&name, &params(field_manager, true), &Patch::Apply(object))
                .await
                .map_err(request_error("dry-run apply", object))?;
            (
                clean(&serde_json::to_value(applied).unwrap_or_default()),
                false,
            )
        };
        out.push(Change {
            object: describe(object),
            before,
            after,
            unchecked,
        });
    }
    Ok(out)
}

/// Server-side applies `objects` in order (`dry_run`: checked by the
/// server, nothing stored); returns each one's `Kind namespace/name`.
pub async fn apply(
    client: &Client,
    objects: &[Value],
    field_manager: &str,
    dry_run: bool,
) -> Result<Vec<String>, ApplyError> {
    let mut out = Vec::with_capacity(objects.len());
    for object in objects {
        let (api, name) = api(client, object)?;
        api.patch(
            &name,
            &params(field_manager, dry_run),
            &Patch::Apply(object),
        )
        .await
        .map_err(request_error(
            if dry_run { "dry-run apply" } else { "apply" },
            object,
        ))?;
        out.push(describe(object));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{generated, spec};
    use super::*;
    use serde_json::json;

    #[test]
    fn every_object_of_an_install_has_a_known_resource() {
        for certificates in [generated(), super::super::Certificates::CertManager] {
            for object in super::super::manifests(&spec(certificates)) {
                let (resource, namespaced) = resource(&object).unwrap();
                assert_eq!(
                    namespaced,
                    object["metadata"]["namespace"].is_string(),
                    "{}",
                    describe(&object)
                );
                assert_eq!(resource.kind, object["kind"].as_str().unwrap());
            }
        }
        assert!(resource(&json!({"apiVersion": "v9", "kind": "Nope"})).is_err());
    }

    #[test]
    fn diffs_ignore_server_fields_and_hide_secret_values() {
        let sent = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "n"}, "data": {"tls.key": "c2VjcmV0"}});
        let mut held = sent.clone();
        held["metadata"]["resourceVersion"] = json!("7");
        held["metadata"]["managedFields"] = json!([{}]);
        let same = Change {
            object: describe(&sent),
            before: Some(clean(&held)),
            after: clean(&sent),
            unchecked: false,
        };
        assert_eq!(same.verb(), "unchanged");
        assert!(same.diff().is_empty());
        let mut other = sent.clone();
        other["data"]["tls.key"] = json!("b3RoZXI=");
        let changed = Change {
            after: clean(&other),
            ..same.clone()
        };
        assert_eq!(changed.verb(), "changed");
        let diff = changed.diff();
        assert!(diff.contains("-  tls.key: (hidden, sha256"), "{diff}");
        assert!(diff.contains("+  tls.key: (hidden, sha256"), "{diff}");
        assert!(!diff.contains("c2VjcmV0"), "{diff}");
        let created = Change {
            before: None,
            ..changed
        };
        assert_eq!(created.verb(), "created");
        assert!(created.diff().contains("+kind: Secret"));
    }
}
