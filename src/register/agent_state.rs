//! What the tunnel agent's pod is doing, in `kubectl get pods` terms, for
//! `serve` to show while the tunnel is not connected and to name when it
//! never connects: `pod/kubectl-cozy-3f2a-… Pending: Unschedulable (0/3 nodes
//! are available: …)`, `… ImagePullBackOff (Back-off pulling image "…")`, or,
//! with no pod at all, why the Deployment could not create one (a quota, Pod
//! Security admission).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, ListParams};

use super::{agent, session};

/// One line on the agent's state, read from the cluster; `None` when it
/// could not be read.
pub async fn describe(client: &Client, namespace: &str, id: &str) -> Option<String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let params = ListParams::default().labels(&agent::pod_selector(id));
    let pods = pods.list(&params).await.ok()?.items;
    let deployment = if pods.is_empty() {
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
        deployments
            .get_opt(&session::object_name(id))
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    Some(summarize(&pods, deployment.as_ref()))
}

/// The line for `pods` (the newest is described) or, with none, for the
/// Deployment's failure to create one.
pub fn summarize(pods: &[Pod], deployment: Option<&Deployment>) -> String {
    summarize_pods(pods, deployment, "agent pod")
}

/// [`summarize`] for the pods of any Deployment, `what` naming them (`agent
/// pod`, `server pod`) when there is none.
pub fn summarize_pods(pods: &[Pod], deployment: Option<&Deployment>, what: &str) -> String {
    let newest = pods
        .iter()
        .max_by_key(|p| p.metadata.creation_timestamp.as_ref().map(|t| t.0));
    let Some(pod) = newest else {
        let failure = deployment
            .and_then(|d| d.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| {
                c.iter()
                    .find(|c| c.type_ == "ReplicaFailure" && c.status == "True")
            })
            .map(|c| {
                format!(
                    "{}: {}",
                    c.reason.as_deref().unwrap_or("ReplicaFailure"),
                    c.message.as_deref().unwrap_or_default()
                )
            });
        return match failure {
            Some(why) => format!("no {what} could be created ({why})"),
            None => format!("no {what} yet"),
        };
    };
    format!(
        "pod/{} {}",
        pod.metadata.name.as_deref().unwrap_or_default(),
        pod_state(pod)
    )
}

/// `Pending: Unschedulable (…)`, `ImagePullBackOff (…)`, `Running, not ready`, …
fn pod_state(pod: &Pod) -> String {
    let Some(status) = pod.status.as_ref() else {
        return "Pending".to_owned();
    };
    if pod.metadata.deletion_timestamp.is_some() {
        return "Terminating".to_owned();
    }
    let waiting = status
        .container_statuses
        .iter()
        .flatten()
        .filter_map(|c| c.state.as_ref()?.waiting.as_ref())
        .next();
    if let Some(w) = waiting {
        let reason = w.reason.as_deref().unwrap_or("Waiting");
        return match w.message.as_deref().filter(|m| !m.is_empty()) {
            Some(message) => format!("{reason} ({message})"),
            None => reason.to_owned(),
        };
    }
    let terminated = status
        .container_statuses
        .iter()
        .flatten()
        .filter_map(|c| c.state.as_ref()?.terminated.as_ref())
        .next();
    if let Some(t) = terminated {
        return format!(
            "{} (exit code {})",
            t.reason.as_deref().unwrap_or("Terminated"),
            t.exit_code
        );
    }
    let phase = status.phase.as_deref().unwrap_or("Pending");
    let unscheduled = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False" && c.reason.is_some());
    if let Some(c) = unscheduled {
        return format!(
            "{phase}: {} ({})",
            c.reason.as_deref().unwrap_or_default(),
            c.message.as_deref().unwrap_or_default()
        );
    }
    let ready = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    match (phase, ready) {
        ("Running", true) => "Running".to_owned(),
        ("Running", false) => "Running, not ready".to_owned(),
        (phase, _) => phase.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(status: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kubectl-cozy-abc-1", "creationTimestamp": "2026-12-05T10:00:00Z"},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn pending_pods_say_why_as_kubectl_describe_does() {
        let unschedulable = pod(serde_json::json!({
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "message": "0/1 nodes are available: 1 node(s) were unschedulable."}],
        }));
        assert_eq!(
            summarize(&[unschedulable], None),
            "pod/kubectl-cozy-abc-1 Pending: Unschedulable (0/1 nodes are available: 1 node(s) were unschedulable.)"
        );
        let pulling = pod(serde_json::json!({
            "phase": "Pending",
            "containerStatuses": [{"name": "agent", "image": "example.invalid/nope:0", "imageID": "",
                "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "ImagePullBackOff",
                          "message": "Back-off pulling image \"example.invalid/nope:0\""}}}],
        }));
        assert_eq!(
            summarize(&[pulling], None),
            "pod/kubectl-cozy-abc-1 ImagePullBackOff (Back-off pulling image \"example.invalid/nope:0\")"
        );
        let running = pod(serde_json::json!({
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False"}],
        }));
        assert_eq!(
            summarize(&[running], None),
            "pod/kubectl-cozy-abc-1 Running, not ready"
        );
    }

    #[test]
    fn without_a_pod_the_deployment_says_why() {
        let deployment: Deployment = serde_json::from_value(serde_json::json!({
            "status": {"conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                "message": "pods \"kubectl-cozy-abc-1\" is forbidden: exceeded quota: none"}]},
        }))
        .unwrap();
        assert_eq!(
            summarize(&[], Some(&deployment)),
            "no agent pod could be created (FailedCreate: pods \"kubectl-cozy-abc-1\" is forbidden: exceeded quota: none)"
        );
        assert_eq!(summarize(&[], None), "no agent pod yet");
    }
}
