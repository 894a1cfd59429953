//! Whose namespace an install goes to. The install's Namespace object
//! carries the Pod Security `restricted` labels and the install's
//! `app.kubernetes.io/managed-by` label; applied to a namespace that already
//! exists and is not the install's (`default`, `kube-system`, a team's), it
//! would relabel that namespace — and `restricted` in `kube-system` stops
//! privileged system pods from being re-created. So such a namespace is left
//! out of the install ([`without_namespace`]) and said to be left as it is
//! ([`left_as_it_is`]). The cluster's own namespaces ([`is_system`]) are never
//! the install's, whatever their labels say (an earlier version labelled
//! them).

use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::Api;
use serde_json::Value;

use super::{NAME, labelled_ours};

/// The namespaces every cluster has and an install never creates or
/// deletes.
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// The Pod Security modes the install's own namespace is labelled
/// `restricted` for.
pub const POD_SECURITY_MODES: [&str; 3] = ["enforce", "audit", "warn"];

/// What the cluster holds under the install's namespace name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// No namespace of that name: the install creates it.
    Missing,
    /// The install's own (labelled `app.kubernetes.io/managed-by=kubectl-cozy`,
    /// and not one of [`SYSTEM_NAMESPACES`]).
    Ours,
    /// A namespace that exists and is not the install's: left as it is.
    Foreign,
}

/// Whether `name` is one of the cluster's own namespaces.
pub fn is_system(name: &str) -> bool {
    SYSTEM_NAMESPACES.contains(&name)
}

/// What `held` (the cluster's namespace named `name`, if any) is to the
/// install.
pub fn classify(name: &str, held: Option<&Value>) -> Held {
    match held {
        None => Held::Missing,
        Some(_) if is_system(name) => Held::Foreign,
        Some(ns) if labelled_ours(ns) => Held::Ours,
        Some(_) => Held::Foreign,
    }
}

/// Reads namespace `name` and says what it is to the install.
pub async fn read(client: &Client, name: &str) -> Result<Held, kube::Error> {
    let held = Api::<Namespace>::all(client.clone()).get_opt(name).await?;
    let held = held.map(|ns| serde_json::to_value(ns).unwrap_or_default());
    Ok(classify(name, held.as_ref()))
}

/// `objects` without the Namespace object.
pub fn without_namespace(objects: Vec<Value>) -> Vec<Value> {
    objects
        .into_iter()
        .filter(|o| o["kind"] != "Namespace")
        .collect()
}

/// The line that says a foreign namespace `name` is left as it is, and so
/// carries none of the Pod Security labels the install's own namespace
/// gets (with the command that sets them, but for a system namespace).
pub fn left_as_it_is(name: &str) -> String {
    if is_system(name) {
        return format!(
            "Note: namespace {name} is one of the cluster's own, never the install's: it is left as it is, so the \
             Pod Security `restricted` labels the install's own namespace gets are not set there; a namespace of \
             the install's own (-n) is safer"
        );
    }
    let head = format!(
        "Note: namespace {name} exists and is not the install's (no app.kubernetes.io/managed-by={NAME} label): \
         it is left as it is, so the Pod Security `restricted` labels the install's own namespace gets are not set there"
    );
    let labels: Vec<String> = POD_SECURITY_MODES
        .iter()
        .map(|mode| format!("pod-security.kubernetes.io/{mode}=restricted"))
        .collect();
    format!(
        "{head} (to set them: kubectl label namespace {name} {})",
        labels.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_namespace_is_the_installs_only_when_labelled_so_and_not_the_clusters_own() {
        let ours = json!({"metadata": {"labels": {"app.kubernetes.io/managed-by": NAME}}});
        let theirs = json!({"metadata": {"labels": {"team": "a"}}});
        assert_eq!(classify("cozy", None), Held::Missing);
        assert_eq!(classify("cozy", Some(&ours)), Held::Ours);
        assert_eq!(classify("cozy", Some(&theirs)), Held::Foreign);
        assert_eq!(
            classify("cozy", Some(&json!({"metadata": {}}))),
            Held::Foreign
        );
        // Labelled by an earlier version: still the cluster's.
        for system in SYSTEM_NAMESPACES {
            assert_eq!(classify(system, Some(&ours)), Held::Foreign, "{system}");
        }
    }

    #[test]
    fn the_namespace_object_is_left_out_and_the_rest_kept_in_order() {
        let objects = vec![
            json!({"kind": "Namespace"}),
            json!({"kind": "ServiceAccount"}),
            json!({"kind": "APIService"}),
        ];
        let kinds: Vec<Value> = without_namespace(objects)
            .into_iter()
            .map(|o| o["kind"].clone())
            .collect();
        assert_eq!(kinds, vec![json!("ServiceAccount"), json!("APIService")]);
    }

    #[test]
    fn the_note_says_what_is_not_set_and_suggests_labels_but_for_system_namespaces() {
        let team = left_as_it_is("team-a");
        assert!(
            team.contains("namespace team-a exists and is not the install's"),
            "{team}"
        );
        assert!(
            team.contains(
                "kubectl label namespace team-a pod-security.kubernetes.io/enforce=restricted"
            ),
            "{team}"
        );
        let system = left_as_it_is("kube-system");
        assert!(system.contains("left as it is"), "{system}");
        assert!(!system.contains("kubectl label"), "{system}");
    }
}
