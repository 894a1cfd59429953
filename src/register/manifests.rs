//! Typed manifests of what `serve` needs in a cluster. Today: the RBAC
//! `serve --print-rbac` prints, built from the loaded kinds:
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
//! The objects are k8s-openapi types ([`Manifest`]), so a field name cannot be
//! misspelt; the session's own objects (Service, APIService, agent) join them
//! here when `serve` registers itself.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

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

    /// The subject of a (Cluster)RoleBinding.
    pub fn to_subject(&self) -> Subject {
        match self {
            RbacSubject::ServiceAccount { namespace, name } => Subject {
                kind: "ServiceAccount".into(),
                name: name.clone(),
                namespace: Some(namespace.clone()),
                api_group: None,
            },
            RbacSubject::User(name) => Subject {
                kind: "User".into(),
                api_group: Some(RBAC_GROUP.into()),
                name: name.clone(),
                namespace: None,
            },
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

/// One object of a manifest; serializes with its `apiVersion` and `kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Manifest {
    /// A ClusterRole.
    ClusterRole(ClusterRole),
    /// A ClusterRoleBinding.
    ClusterRoleBinding(ClusterRoleBinding),
    /// A RoleBinding.
    RoleBinding(RoleBinding),
}

impl Manifest {
    /// The object's metadata.
    pub fn metadata(&self) -> &ObjectMeta {
        match self {
            Manifest::ClusterRole(o) => &o.metadata,
            Manifest::ClusterRoleBinding(o) => &o.metadata,
            Manifest::RoleBinding(o) => &o.metadata,
        }
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or_default()
    }
}

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
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

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(strings(resources)),
        verbs: strings(verbs),
        ..PolicyRule::default()
    }
}

fn metadata(name: &str, namespace: Option<&str>, aggregate_to: Option<&str>) -> ObjectMeta {
    let mut labels = BTreeMap::from([(
        "app.kubernetes.io/managed-by".to_owned(),
        "kubectl-cozy".to_owned(),
    )]);
    if let Some(role) = aggregate_to {
        labels.insert(format!("{RBAC_GROUP}/aggregate-to-{role}"), "true".into());
    }
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        labels: Some(labels),
        ..ObjectMeta::default()
    }
}

fn cluster_role(name: &str, aggregate_to: Option<&str>, rules: Vec<PolicyRule>) -> Manifest {
    Manifest::ClusterRole(ClusterRole {
        metadata: metadata(name, None, aggregate_to),
        rules: Some(rules),
        ..ClusterRole::default()
    })
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: Some(RBAC_GROUP.into()),
        kind: kind.into(),
        name: name.into(),
    }
}

fn cluster_role_binding(name: &str, role: &str, subject: &RbacSubject) -> Manifest {
    Manifest::ClusterRoleBinding(ClusterRoleBinding {
        metadata: metadata(name, None, None),
        role_ref: role_ref("ClusterRole", role),
        subjects: Some(vec![subject.to_subject()]),
    })
}

/// The RBAC objects for `kinds`, in apply order.
pub fn rbac<'a>(
    kinds: impl IntoIterator<Item = &'a ResolvedKind>,
    options: &RbacOptions,
) -> Vec<Manifest> {
    let p = &options.prefix;
    let mut server_rules = vec![
        rule(
            "helm.toolkit.fluxcd.io",
            &["helmreleases"],
            &[
                "get", "list", "watch", "create", "update", "patch", "delete",
            ],
        ),
        rule("", &["namespaces"], READ),
    ];
    if options.impersonate {
        server_rules.push(rule(
            "",
            &["users", "groups", "serviceaccounts"],
            &["impersonate"],
        ));
        server_rules.push(rule(
            "authentication.k8s.io",
            &["userextras/*", "uids"],
            &["impersonate"],
        ));
    }
    let server = format!("{p}:server");
    let mut out = vec![
        cluster_role(&server, None, server_rules),
        cluster_role_binding(&server, &server, &options.subject),
        cluster_role_binding(
            &format!("{p}:auth-delegator"),
            "system:auth-delegator",
            &options.subject,
        ),
        Manifest::RoleBinding(RoleBinding {
            metadata: metadata(
                &format!("{p}:authentication-reader"),
                Some("kube-system"),
                None,
            ),
            role_ref: role_ref("Role", "extension-apiserver-authentication-reader"),
            subjects: Some(vec![options.subject.to_subject()]),
        }),
    ];
    for kind in kinds {
        let d = &kind.definition;
        let name = kind.resource_group();
        let status = format!("{}/status", d.plural);
        let read = vec![rule(&d.group, &[&d.plural, &status], READ)];
        let write = vec![
            rule(&d.group, &[&d.plural], ALL),
            rule(&d.group, &[&status], READ),
        ];
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

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
        let typed = rbac(&kinds, &RbacOptions::default());
        let objects: Vec<Value> = typed
            .iter()
            .map(|o| serde_json::to_value(o).unwrap())
            .collect();
        let names: Vec<&str> = typed.iter().map(Manifest::name).collect();
        assert!(names.contains(&"kubectl-cozy:server"));
        assert!(names.contains(&"kubectl-cozy:auth-delegator"));
        assert!(names.contains(&"kubectl-cozy:postgreses.apps.cozystack.io:edit"));
        let reader = objects
            .iter()
            .find(|o| o["roleRef"]["name"] == "extension-apiserver-authentication-reader")
            .unwrap();
        assert_eq!(reader["apiVersion"], "rbac.authorization.k8s.io/v1");
        assert_eq!(reader["kind"], "RoleBinding");
        assert_eq!(reader["metadata"]["namespace"], "kube-system");
        assert_eq!(
            reader["subjects"][0],
            json!({"kind": "ServiceAccount", "name": "kubectl-cozy", "namespace": "cozy-system"})
        );
        let edit = objects
            .iter()
            .find(|o| o["metadata"]["name"] == "kubectl-cozy:postgreses.apps.cozystack.io:edit")
            .unwrap();
        assert_eq!(edit["kind"], "ClusterRole");
        assert_eq!(
            edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"],
            "true"
        );
        assert_eq!(edit["rules"][0]["resources"], json!(["postgreses"]));
        assert_eq!(edit["rules"][0]["verbs"].as_array().unwrap().len(), 8);
        // Impersonation rights only when asked for.
        let text = |o: &[Manifest]| serde_json::to_string(o).unwrap();
        assert!(!text(&typed).contains("impersonate"));
        let with = rbac(
            &kinds,
            &RbacOptions {
                impersonate: true,
                ..RbacOptions::default()
            },
        );
        assert!(text(&with).contains("impersonate"));
        let user = rbac(
            &kinds,
            &RbacOptions {
                subject: RbacSubject::User("me".into()),
                ..RbacOptions::default()
            },
        );
        assert_eq!(
            serde_json::to_value(&user[1]).unwrap()["subjects"][0],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "me"})
        );
        let values: Vec<Value> = typed
            .iter()
            .map(|m| serde_json::to_value(m).unwrap())
            .collect();
        let mut out = Vec::new();
        crate::output::write_objects(&mut out, crate::output::OutputFormat::Yaml, &values).unwrap();
        let yaml = String::from_utf8(out).unwrap();
        assert_eq!(yaml.matches("---\n").count(), typed.len());
        assert!(yaml.contains("aggregate-to-view"), "{yaml}");
        assert!(
            yaml.contains("apiVersion: rbac.authorization.k8s.io/v1"),
            "{yaml}"
        );
    }
}
