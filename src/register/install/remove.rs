//! Removing an install (`kubectl cozy install --delete`): of the objects an
//! install of the same kinds in the same namespace consists of, those the
//! cluster holds and that carry the install's `app.kubernetes.io/managed-by`
//! label ([`plan`]), deleted **APIServices first** — an APIService whose
//! server is gone makes discovery fail, and with it every namespace deletion
//! in the cluster — then the rest in reverse apply order, the namespace last
//! ([`delete`]). A namespace other than the install's default one is kept:
//! it may hold more than the install. So is an APIService that points at
//! another Service than this install's: its name does not depend on the
//! namespace, and another install or server may use it now. The cluster's
//! own namespaces (`default`, `kube-system`, …) are never deleted, nor
//! suggested for deletion; an object already being deleted (the namespace
//! still terminating after an earlier `--delete`) counts as gone.

use std::time::Duration;

use kube::Client;
use kube::api::DeleteParams;
use serde_json::Value;

use super::apply::{self, ApplyError};
use super::{DEFAULT_NAMESPACE, NAME, labelled_ours, namespace};

/// How long [`delete`] waits for the APIServices to be gone before it
/// deletes the server behind them.
pub const API_SERVICES_GONE: Duration = Duration::from_secs(30);

/// One object of the plan.
#[derive(Debug, Clone, PartialEq)]
pub enum Removal {
    /// To delete.
    Delete(Value),
    /// Held by the cluster but kept, and why.
    Keep {
        /// `Kind namespace/name`.
        object: String,
        /// Why it stays.
        why: String,
    },
    /// Held by the cluster but already being deleted (a namespace still
    /// terminating): counted as gone.
    Going {
        /// `Kind namespace/name`.
        object: String,
        /// What is under way.
        why: String,
    },
}

/// The order an install is removed in: APIServices first, then the other
/// objects in reverse apply order, the namespace last.
pub fn removal_order(objects: &[Value]) -> Vec<&Value> {
    let kind = |o: &Value| o["kind"].as_str().unwrap_or_default().to_owned();
    let mut order: Vec<&Value> = objects.iter().filter(|o| kind(o) == "APIService").collect();
    order.extend(
        objects
            .iter()
            .rev()
            .filter(|o| !matches!(kind(o).as_str(), "APIService" | "Namespace")),
    );
    order.extend(objects.iter().filter(|o| kind(o) == "Namespace"));
    order
}

/// `namespace/name` of the Service an APIService points at.
fn service_of(api_service: &Value) -> String {
    let service = &api_service["spec"]["service"];
    format!(
        "{}/{}",
        service["namespace"].as_str().unwrap_or_default(),
        service["name"].as_str().unwrap_or_default()
    )
}

/// What to delete of `objects` (an install's manifests): the ones the
/// cluster holds, in [`removal_order`]; objects it does not hold (or whose
/// kind it does not serve, cert-manager's without cert-manager) are left
/// out, and so are the namespaced ones while their namespace is being
/// deleted (they go with it).
pub async fn plan(client: &Client, objects: &[Value]) -> Result<Vec<Removal>, ApplyError> {
    let going = namespace_going(client, objects).await?;
    let mut out = Vec::new();
    for object in removal_order(objects) {
        let in_going = object["kind"] != "Namespace"
            && going.is_some()
            && object["metadata"]["namespace"].as_str() == going.as_deref();
        if in_going {
            continue;
        }
        let (api, name) = apply::api(client, object)?;
        let held = match api.get_opt(&name).await {
            Ok(Some(held)) => serde_json::to_value(held).unwrap_or_default(),
            Ok(None) => continue,
            Err(kube::Error::Api(status)) if status.code == 404 => continue,
            Err(err) => return Err(apply::request_error("get", object)(err)),
        };
        out.push(decide(object, &name, &held));
    }
    Ok(out)
}

/// The name of the install's namespace (the Namespace among `objects`)
/// when the cluster is already deleting it.
async fn namespace_going(client: &Client, objects: &[Value]) -> Result<Option<String>, ApplyError> {
    let Some(object) = objects.iter().find(|o| o["kind"] == "Namespace") else {
        return Ok(None);
    };
    let (api, name) = apply::api(client, object)?;
    match api.get_opt(&name).await {
        Ok(held) => Ok(held
            .filter(|h| h.metadata.deletion_timestamp.is_some())
            .map(|_| name)),
        Err(err) => Err(apply::request_error("get", object)(err)),
    }
}

/// What becomes of `object` (named `name`), which the cluster holds as
/// `held`: already going, kept (and why), or deleted.
fn decide(object: &Value, name: &str, held: &Value) -> Removal {
    let described = apply::describe(object);
    let keep = |why: String| Removal::Keep {
        object: described.clone(),
        why,
    };
    let is_namespace = object["kind"] == "Namespace";
    if held["metadata"]["deletionTimestamp"].is_string() {
        Removal::Going {
            object: described.clone(),
            why: if is_namespace {
                "already being deleted (still terminating), with what it holds".to_owned()
            } else {
                "already being deleted".to_owned()
            },
        }
    } else if !labelled_ours(held) {
        keep(format!(
            "not labelled app.kubernetes.io/managed-by={NAME}: not the install's"
        ))
    } else if object["kind"] == "APIService" && service_of(held) != service_of(object) {
        keep(format!(
            "it points at service {}, not at this install's ({})",
            service_of(held),
            service_of(object)
        ))
    } else if is_namespace && namespace::is_system(name) {
        keep(format!(
            "one of the cluster's own namespaces, never deleted; it carries labels an earlier install set \
             (remove them with: kubectl label namespace {name} {})",
            installs_labels_removed().join(" ")
        ))
    } else if is_namespace && name != DEFAULT_NAMESPACE {
        keep(format!(
            "it may hold more than the install (delete it yourself if not: kubectl delete namespace {name})"
        ))
    } else {
        Removal::Delete(object.clone())
    }
}

/// `kubectl label` arguments removing every label the install's Namespace
/// object carries (`key-`).
fn installs_labels_removed() -> Vec<String> {
    let mut keys: Vec<String> = super::labels().into_keys().collect();
    keys.extend(
        namespace::POD_SECURITY_MODES
            .iter()
            .map(|mode| format!("pod-security.kubernetes.io/{mode}")),
    );
    keys.into_iter().map(|k| format!("{k}-")).collect()
}

/// Deletes the plan's objects in order, the APIServices first and waited
/// for (up to [`API_SERVICES_GONE`]); `done` hears each `Kind
/// namespace/name` as it is deleted. Already gone is fine.
pub async fn delete(
    client: &Client,
    plan: &[Removal],
    mut done: impl FnMut(&str),
) -> Result<usize, ApplyError> {
    let objects: Vec<&Value> = plan
        .iter()
        .filter_map(|r| match r {
            Removal::Delete(o) => Some(o),
            Removal::Keep { .. } | Removal::Going { .. } => None,
        })
        .collect();
    let is_api_service = |o: &Value| o["kind"] == "APIService";
    let mut count = 0;
    for object in objects.iter().filter(|o| is_api_service(o)) {
        delete_one(client, object).await?;
        done(&apply::describe(object));
        count += 1;
    }
    let deadline = tokio::time::Instant::now() + API_SERVICES_GONE;
    for object in objects.iter().filter(|o| is_api_service(o)) {
        let (api, name) = apply::api(client, object)?;
        while matches!(api.get_opt(&name).await, Ok(Some(_)))
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    for object in objects.iter().filter(|o| !is_api_service(o)) {
        delete_one(client, object).await?;
        done(&apply::describe(object));
        count += 1;
    }
    Ok(count)
}

async fn delete_one(client: &Client, object: &Value) -> Result<(), ApplyError> {
    let (api, name) = apply::api(client, object)?;
    match api.delete(&name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(err) => Err(apply::request_error("delete", object)(err)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{generated, spec};
    use super::*;

    #[test]
    fn apiservices_go_first_and_the_namespace_last() {
        let objects = super::super::manifests(&spec(generated()));
        let order: Vec<&str> = removal_order(&objects)
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(order.len(), objects.len());
        let api_services = objects.iter().filter(|o| o["kind"] == "APIService").count();
        assert!(api_services > 0);
        assert!(
            order[..api_services].iter().all(|k| *k == "APIService"),
            "{order:?}"
        );
        assert_eq!(order.last(), Some(&"Namespace"));
        // The server goes before what it needs to run (its Secrets, its rights).
        let position = |kind: &str| order.iter().position(|k| *k == kind).unwrap();
        assert!(position("Deployment") < position("Secret"), "{order:?}");
        assert!(
            position("Deployment") < position("ServiceAccount"),
            "{order:?}"
        );
    }

    #[test]
    fn only_objects_labelled_as_the_installs_are_ours() {
        let ours =
            serde_json::json!({"metadata": {"labels": {"app.kubernetes.io/managed-by": NAME}}});
        let theirs =
            serde_json::json!({"metadata": {"labels": {"app.kubernetes.io/managed-by": "Helm"}}});
        assert!(labelled_ours(&ours));
        assert!(!labelled_ours(&theirs));
        assert!(!labelled_ours(&serde_json::json!({"metadata": {}})));
    }

    fn namespace_object(name: &str) -> Value {
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    }

    #[test]
    fn the_clusters_own_namespaces_are_never_deleted_nor_suggested_for_deletion() {
        let ours =
            serde_json::json!({"metadata": {"labels": {"app.kubernetes.io/managed-by": NAME}}});
        let theirs = serde_json::json!({"metadata": {"labels": {}}});
        for system in namespace::SYSTEM_NAMESPACES {
            for held in [&ours, &theirs] {
                let Removal::Keep { why, .. } = decide(&namespace_object(system), system, held)
                else {
                    panic!("{system} not kept");
                };
                assert!(!why.contains("kubectl delete namespace"), "{why}");
            }
        }
        // Labelled by an earlier install: how to take its labels off.
        let Removal::Keep { why, .. } = decide(&namespace_object("default"), "default", &ours)
        else {
            panic!("default not kept");
        };
        assert!(
            why.contains("kubectl label namespace default app.kubernetes.io/managed-by-")
                && why.contains("pod-security.kubernetes.io/enforce-"),
            "{why}"
        );
        // The install's own namespace: its default one is deleted, another kept.
        assert!(matches!(
            decide(
                &namespace_object(DEFAULT_NAMESPACE),
                DEFAULT_NAMESPACE,
                &ours
            ),
            Removal::Delete(_)
        ));
        let Removal::Keep { why, .. } = decide(&namespace_object("cozy"), "cozy", &ours) else {
            panic!("cozy not kept");
        };
        assert!(why.contains("kubectl delete namespace cozy"), "{why}");
    }

    #[test]
    fn an_object_already_being_deleted_counts_as_going() {
        let terminating = serde_json::json!({"metadata": {
            "labels": {"app.kubernetes.io/managed-by": NAME},
            "deletionTimestamp": "2026-12-05T20:00:00Z",
        }});
        let Removal::Going { object, why } = decide(
            &namespace_object(DEFAULT_NAMESPACE),
            DEFAULT_NAMESPACE,
            &terminating,
        ) else {
            panic!("a terminating namespace is to be deleted again");
        };
        assert_eq!(object, format!("Namespace {DEFAULT_NAMESPACE}"));
        assert!(why.contains("still terminating"), "{why}");
    }

    #[test]
    fn an_api_service_is_known_by_the_service_it_points_at() {
        let api_service =
            serde_json::json!({"spec": {"service": {"namespace": "ns2", "name": NAME}}});
        assert_eq!(service_of(&api_service), "ns2/kubectl-cozy");
        let local = serde_json::json!({"spec": {}});
        assert_eq!(service_of(&local), "/");
    }
}
