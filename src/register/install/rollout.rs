//! `install --apply`'s wait for its Deployment before registering
//! APIServices that are new: an APIService whose Service has no ready pod is
//! unavailable, and an unavailable APIService stalls discovery and every
//! namespace deletion in the cluster — for as long as the first pods take to
//! start (scheduling, an image pull), or for good if they never do.
//! APIServices that exist already are applied with the rest: a rolling
//! update keeps serving from the old pods meanwhile.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, ListParams};

use super::workload;
use crate::register::agent_state;

/// Where a Deployment's rollout stands, for registering its APIServices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rollout {
    /// A pod of its current generation is available.
    Available,
    /// Not yet: how far it is.
    Waiting(String),
    /// It will not get there by itself (its progress deadline passed).
    Failed(String),
}

/// Why the wait ended without an available pod.
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    /// The limit passed.
    #[error("deployment/{name} had no available pod after {}s ({last})", waited.as_secs())]
    Timeout {
        /// The Deployment.
        name: String,
        /// How long it was waited for.
        waited: Duration,
        /// Its last state.
        last: String,
    },
    /// Its progress deadline passed.
    #[error("deployment/{name} is not progressing: {why}")]
    Failed {
        /// The Deployment.
        name: String,
        /// Its Progressing condition's reason and message, and its pods.
        why: String,
    },
    /// Reading it failed.
    #[error("read deployment/{name}")]
    Read {
        /// The Deployment.
        name: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

/// Judges `deployment`: available once the controller has seen its current
/// generation and a pod of it — not an old one still serving during a
/// rolling update — is available (one is enough for the APIServices to
/// answer); failed only then, if its progress deadline passed.
pub fn judge(deployment: &Deployment) -> Rollout {
    let generation = deployment.metadata.generation.unwrap_or(0);
    let status = deployment.status.clone().unwrap_or_default();
    let wanted = deployment
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1);
    if status.observed_generation.unwrap_or(0) < generation {
        return Rollout::Waiting("its controller has not seen it yet".to_owned());
    }
    let updated = status.updated_replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    // Old pods count as available at most: what is left is updated.
    let old = status.replicas.unwrap_or(0).saturating_sub(updated);
    let updated_available = available.saturating_sub(old).min(updated);
    if updated_available >= 1 {
        return Rollout::Available;
    }
    if let Some(stalled) = status.conditions.iter().flatten().find(|c| {
        c.type_ == "Progressing"
            && c.status == "False"
            && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
    }) {
        return Rollout::Failed(format!(
            "ProgressDeadlineExceeded ({})",
            stalled.message.as_deref().unwrap_or_default()
        ));
    }
    Rollout::Waiting(format!(
        "{updated_available} of {wanted} updated replicas available"
    ))
}

/// Waits (up to `limit`; `None`: no limit) until the install's Deployment
/// in `namespace` has an available pod, saying how far it is through
/// `progress` (its replicas, then its newest pod as `kubectl get pods`
/// would: `Pending: Unschedulable (…)`, `ImagePullBackOff (…)`).
pub async fn wait_available(
    client: &Client,
    namespace: &str,
    limit: Option<Duration>,
    mut progress: impl FnMut(&str),
) -> Result<(), RolloutError> {
    let name = super::NAME;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let started = tokio::time::Instant::now();
    loop {
        let deployment = deployments
            .get(name)
            .await
            .map_err(|source| RolloutError::Read {
                name: name.to_owned(),
                source,
            })?;
        let state = judge(&deployment);
        let pods_line = || async {
            let listed = pods
                .list(&ListParams::default().labels(&workload::pod_selector()))
                .await
                .map(|l| l.items)
                .unwrap_or_default();
            agent_state::summarize_pods(&listed, Some(&deployment), "server pod")
        };
        let last = match state {
            Rollout::Available => return Ok(()),
            Rollout::Failed(why) => {
                return Err(RolloutError::Failed {
                    name: name.to_owned(),
                    why: format!("{why}; {}", pods_line().await),
                });
            }
            Rollout::Waiting(how_far) => {
                let last = format!("{how_far}; {}", pods_line().await);
                progress(&last);
                last
            }
        };
        if let Some(limit) = limit
            && started.elapsed() >= limit
        {
            return Err(RolloutError::Timeout {
                name: name.to_owned(),
                waited: limit,
                last,
            });
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(generation: i64, status: serde_json::Value) -> Deployment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kubectl-cozy", "generation": generation},
            "spec": {"replicas": 2, "selector": {}, "template": {}},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn one_available_pod_of_the_current_generation_is_enough() {
        let judged = |generation, status| judge(&deployment(generation, status));
        assert_eq!(
            judged(
                2,
                serde_json::json!({"observedGeneration": 1, "replicas": 2,
                "updatedReplicas": 2, "availableReplicas": 2})
            ),
            Rollout::Waiting("its controller has not seen it yet".into())
        );
        assert_eq!(
            judged(
                1,
                serde_json::json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2})
            ),
            Rollout::Waiting("0 of 2 updated replicas available".into())
        );
        assert_eq!(
            judged(
                1,
                serde_json::json!({"observedGeneration": 1, "replicas": 2,
                "updatedReplicas": 2, "availableReplicas": 1})
            ),
            Rollout::Available
        );
        // A rolling update: the two available pods are the old ones.
        assert_eq!(
            judged(
                2,
                serde_json::json!({"observedGeneration": 2, "replicas": 3,
                "updatedReplicas": 1, "availableReplicas": 2})
            ),
            Rollout::Waiting("0 of 2 updated replicas available".into())
        );
        assert_eq!(
            judged(
                2,
                serde_json::json!({"observedGeneration": 2, "replicas": 3,
                "updatedReplicas": 1, "availableReplicas": 3})
            ),
            Rollout::Available
        );
        let stalled = serde_json::json!([{"type": "Progressing", "status": "False",
            "reason": "ProgressDeadlineExceeded",
            "message": "ReplicaSet \"kubectl-cozy-5d\" has timed out progressing."}]);
        // A pod available beats a stalled rollout of the others; a stale
        // status (not yet observed) is waited out.
        assert_eq!(
            judged(
                1,
                serde_json::json!({"observedGeneration": 1, "replicas": 2,
                "updatedReplicas": 2, "availableReplicas": 1, "conditions": stalled})
            ),
            Rollout::Available
        );
        assert_eq!(
            judged(
                3,
                serde_json::json!({"observedGeneration": 2, "conditions": stalled})
            ),
            Rollout::Waiting("its controller has not seen it yet".into())
        );
        assert_eq!(
            judged(1, serde_json::json!({"observedGeneration": 1, "conditions": stalled})),
            Rollout::Failed(
                "ProgressDeadlineExceeded (ReplicaSet \"kubectl-cozy-5d\" has timed out progressing.)"
                    .into()
            )
        );
    }
}
