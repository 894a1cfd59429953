//! The RBAC `serve --print-rbac` prints, built from the loaded kinds:
//!
//! - the server's own access: a ClusterRole for HelmReleases (all verbs it
//!   uses), namespace reads and — with `--impersonate` — impersonation of
//!   users, groups, service accounts, UIDs and user extras, bound to the
//!   server's subject; `system:auth-delegator` (TokenReview,
//!   SubjectAccessReview); and the `kube-system` Role
//!   `extension-apiserver-authentication-reader` (the trust ConfigMap);
//! - per kind, ClusterRoles `…:view`, `…:edit` and `…:admin`, labelled
//!   `rbac.authorization.k8s.io/aggregate-to-{view,edit,admin}` so the
//!   built-in `view`, `edit` and `admin` roles pick them up: whoever has
//!   `edit` in a namespace can edit Postgres objects there with no extra
//!   binding, while a Role naming only `postgreses` still grants nothing on
//!   `redises`.
//!
//! Each per-kind role lists every verb it grants (view's read verbs are
//! repeated in edit and admin) so none depends on the others' aggregation.

use serde_json::{Value, json};

use crate::kinds::definition::ResolvedKind;

/// Who the server runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RbacSubject {
    /// A ServiceAccount (the usual in-cluster identity).
    ServiceAccount {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A user (a client certificate's CN, say).
    User(String),
}

impl RbacSubject {
    /// Parses `NAMESPACE/NAME` (a ServiceAccount) or `user:NAME`.
    pub fn parse(text: &str) -> Result<RbacSubject, String> {
        if let Some(user) = text.strip_prefix("user:") {
            if user.is_empty() {
                return Err("user: needs a name".to_owned());
            }
            return Ok(RbacSubject::User(user.to_owned()));
        }
        match text.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
                Ok(RbacSubject::ServiceAccount {
                    namespace: ns.to_owned(),
                    name: name.to_owned(),
                })
            }
            _ => Err(format!(
                "{text:?} is neither NAMESPACE/NAME (a ServiceAccount) nor user:NAME"
            )),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            RbacSubject::ServiceAccount { namespace, name } => {
                json!({"kind": "ServiceAccount", "name": name, "namespace": namespace})
            }
            RbacSubject::User(name) => {
                json!({"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name})
            }
        }
    }
}

/// What to print.
#[derive(Debug, Clone)]
pub struct RbacOptions {
    /// Prefix of every object name.
    pub prefix: String,
    /// The server's identity.
    pub subject: RbacSubject,
    /// Whether the server impersonates callers (`serve --impersonate`).
    pub impersonate: bool,
}

impl Default for RbacOptions {
    fn default() -> Self {
        RbacOptions {
            prefix: "kubectl-cozy".to_owned(),
            subject: RbacSubject::ServiceAccount {
                namespace: "cozy-system".to_owned(),
                name: "kubectl-cozy".to_owned(),
            },
            impersonate: false,
        }
    }
}

const READ: &[&str] = &["get", "list", "watch"];
const ALL: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

fn labels(extra: Option<&str>) -> Value {
    let mut labels = json!({"app.kubernetes.io/managed-by": "kubectl-cozy"});
    if let Some(role) = extra {
        labels[format!("rbac.authorization.k8s.io/aggregate-to-{role}")] = json!("true");
    }
    labels
}

fn cluster_role(name: &str, aggregate_to: Option<&str>, rules: Value) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels(aggregate_to)},
        "rules": rules,
    })
}

fn binding(
    kind: &str,
    name: &str,
    namespace: Option<&str>,
    role_kind: &str,
    role: &str,
    subject: &RbacSubject,
) -> Value {
    let mut metadata = json!({"name": name, "labels": labels(None)});
    if let Some(ns) = namespace {
        metadata["namespace"] = json!(ns);
    }
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [subject.to_json()],
    })
}

/// The objects, in apply order.
pub fn manifests<'a>(
    kinds: impl IntoIterator<Item = &'a ResolvedKind>,
    options: &RbacOptions,
) -> Vec<Value> {
    let p = &options.prefix;
    let mut server_rules = vec![
        json!({"apiGroups": ["helm.toolkit.fluxcd.io"], "resources": ["helmreleases"],
               "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}),
        json!({"apiGroups": [""], "resources": ["namespaces"], "verbs": READ}),
    ];
    if options.impersonate {
        server_rules.push(
            json!({"apiGroups": [""], "resources": ["users", "groups", "serviceaccounts"],
                                 "verbs": ["impersonate"]}),
        );
        server_rules.push(
            json!({"apiGroups": ["authentication.k8s.io"], "resources": ["userextras/*", "uids"],
                                 "verbs": ["impersonate"]}),
        );
    }
    let server = format!("{p}:server");
    let mut out = vec![
        cluster_role(&server, None, Value::Array(server_rules)),
        binding(
            "ClusterRoleBinding",
            &server,
            None,
            "ClusterRole",
            &server,
            &options.subject,
        ),
        binding(
            "ClusterRoleBinding",
            &format!("{p}:auth-delegator"),
            None,
            "ClusterRole",
            "system:auth-delegator",
            &options.subject,
        ),
        binding(
            "RoleBinding",
            &format!("{p}:authentication-reader"),
            Some("kube-system"),
            "Role",
            "extension-apiserver-authentication-reader",
            &options.subject,
        ),
    ];
    for kind in kinds {
        let d = &kind.definition;
        let name = kind.resource_group();
        let read = json!([{"apiGroups": [d.group], "resources": [d.plural, format!("{}/status", d.plural)], "verbs": READ}]);
        let write = json!([
            {"apiGroups": [d.group], "resources": [d.plural], "verbs": ALL},
            {"apiGroups": [d.group], "resources": [format!("{}/status", d.plural)], "verbs": READ},
        ]);
        out.push(cluster_role(
            &format!("{p}:{name}:view"),
            Some("view"),
            read,
        ));
        out.push(cluster_role(
            &format!("{p}:{name}:edit"),
            Some("edit"),
            write.clone(),
        ));
        out.push(cluster_role(
            &format!("{p}:{name}:admin"),
            Some("admin"),
            write,
        ));
    }
    out
}

/// The objects as one multi-document YAML stream.
pub fn to_yaml(objects: &[Value]) -> std::io::Result<String> {
    let mut text = String::new();
    for object in objects {
        text.push_str("---\n");
        text.push_str(&crate::output::to_yaml(object)?);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds() -> Vec<ResolvedKind> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
        let registry = crate::kinds::Registry::from_path(&dir).unwrap();
        registry
            .snapshot()
            .kinds()
            .iter()
            .map(|k| k.resolved.clone())
            .collect()
    }

    #[test]
    fn subjects() {
        assert_eq!(
            RbacSubject::parse("cozy/srv"),
            Ok(RbacSubject::ServiceAccount {
                namespace: "cozy".into(),
                name: "srv".into()
            })
        );
        assert_eq!(
            RbacSubject::parse("user:me"),
            Ok(RbacSubject::User("me".into()))
        );
        assert!(RbacSubject::parse("nope").is_err());
        assert!(RbacSubject::parse("a/b/c").is_err());
        assert!(RbacSubject::parse("user:").is_err());
    }

    #[test]
    fn server_and_per_kind_roles() {
        let kinds = kinds();
        let objects = manifests(&kinds, &RbacOptions::default());
        let names: Vec<&str> = objects
            .iter()
            .filter_map(|o| o["metadata"]["name"].as_str())
            .collect();
        assert!(names.contains(&"kubectl-cozy:server"));
        assert!(names.contains(&"kubectl-cozy:auth-delegator"));
        assert!(names.contains(&"kubectl-cozy:postgreses.apps.cozystack.io:edit"));
        let reader = objects
            .iter()
            .find(|o| o["roleRef"]["name"] == "extension-apiserver-authentication-reader")
            .unwrap();
        assert_eq!(reader["metadata"]["namespace"], "kube-system");
        assert_eq!(
            reader["subjects"][0],
            json!({"kind": "ServiceAccount", "name": "kubectl-cozy", "namespace": "cozy-system"})
        );
        let edit = objects
            .iter()
            .find(|o| o["metadata"]["name"] == "kubectl-cozy:postgreses.apps.cozystack.io:edit")
            .unwrap();
        assert_eq!(
            edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"],
            "true"
        );
        assert_eq!(edit["rules"][0]["resources"], json!(["postgreses"]));
        assert_eq!(edit["rules"][0]["verbs"].as_array().unwrap().len(), 8);
        // Impersonation rights only when asked for.
        let text = |o: &[Value]| serde_json::to_string(o).unwrap();
        assert!(!text(&objects).contains("impersonate"));
        let with = manifests(
            &kinds,
            &RbacOptions {
                impersonate: true,
                ..RbacOptions::default()
            },
        );
        assert!(text(&with).contains("impersonate"));
        let yaml = to_yaml(&objects).unwrap();
        assert_eq!(yaml.matches("---\n").count(), objects.len());
        assert!(yaml.contains("aggregate-to-view"), "{yaml}");
    }
}
