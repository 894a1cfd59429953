//! Removing an install (`kubectl cozy install --delete`): of the objects an
//! install of the same kinds in the same namespace consists of, those the
//! cluster holds and that carry the install's `app.kubernetes.io/managed-by`
//! label ([`plan`]), deleted **APIServices first** — an APIService whose
//! server is gone makes discovery fail, and with it every namespace deletion
//! in the cluster — then the rest in reverse apply order, the namespace last
//! ([`delete`]). A namespace other than the install's default one is kept:
//! it may hold more than the install. So is an APIService that points at
//! another Service than this install's: its name does not depend on the
//! namespace, and another install or server may use it now.

use std::time::Duration;

use kube::Client;
use kube::api::DeleteParams;
use serde_json::Value;

use super::apply::{self, ApplyError};
use super::{DEFAULT_NAMESPACE, NAME};

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

/// Whether the cluster's copy of an object is the install's.
fn labelled_ours(held: &Value) -> bool {
    held["metadata"]["labels"]["app.kubernetes.io/managed-by"].as_str() == Some(NAME)
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
/// out.
pub async fn plan(client: &Client, objects: &[Value]) -> Result<Vec<Removal>, ApplyError> {
    let mut out = Vec::new();
    for object in removal_order(objects) {
        let (api, name) = apply::api(client, object)?;
        let held = match api.get_opt(&name).await {
            Ok(Some(held)) => serde_json::to_value(held).unwrap_or_default(),
            Ok(None) => continue,
            Err(kube::Error::Api(status)) if status.code == 404 => continue,
            Err(err) => return Err(apply::request_error("get", object)(err)),
        };
        let described = apply::describe(object);
        if !labelled_ours(&held) {
            out.push(Removal::Keep {
                object: described,
                why: format!("not labelled app.kubernetes.io/managed-by={NAME}: not the install's"),
            });
        } else if object["kind"] == "APIService" && service_of(&held) != service_of(object) {
            out.push(Removal::Keep {
                object: described,
                why: format!(
                    "it points at service {}, not at this install's ({})",
                    service_of(&held),
                    service_of(object)
                ),
            });
        } else if object["kind"] == "Namespace" && name != DEFAULT_NAMESPACE {
            out.push(Removal::Keep {
                object: described,
                why: format!(
                    "it may hold more than the install (delete it yourself if not: kubectl delete namespace {name})"
                ),
            });
        } else {
            out.push(Removal::Delete(object.clone()));
        }
    }
    Ok(out)
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
            Removal::Keep { .. } => None,
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

    #[test]
    fn an_api_service_is_known_by_the_service_it_points_at() {
        let api_service =
            serde_json::json!({"spec": {"service": {"namespace": "ns2", "name": NAME}}});
        assert_eq!(service_of(&api_service), "ns2/kubectl-cozy");
        let local = serde_json::json!({"spec": {}});
        assert_eq!(service_of(&local), "/");
    }
}
