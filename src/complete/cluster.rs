//! Completion candidates only the cluster knows: its namespaces, for `-n`
//! and `--session-namespace`, as kubectl completes `-n` (one metadata list
//! of the namespaces, through the context the words before select). A
//! cluster that does not answer within [`CLUSTER_TIMEOUT`] (or a kubeconfig
//! that names none) gives no candidates, not an error: completion never
//! prints one.

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};

use crate::kubeconfig::{self, Selection};

/// How long a completion waits for the cluster: a TAB that hangs is worse
/// than one that offers nothing.
pub(super) const CLUSTER_TIMEOUT: Duration = Duration::from_secs(3);

/// The names of the namespaces of the cluster `selection` names, sorted;
/// none when it cannot be asked or does not answer in time.
pub(super) fn namespace_names(selection: &Selection) -> Vec<String> {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let names = runtime.block_on(async {
        tokio::time::timeout(CLUSTER_TIMEOUT, list_namespaces(selection))
            .await
            .ok()
            .flatten()
    });
    let mut names = names.unwrap_or_default();
    names.sort();
    names
}

async fn list_namespaces(selection: &Selection) -> Option<Vec<String>> {
    let config = kubeconfig::load(selection).await.ok()?;
    let client = crate::kube_client::client(config).ok()?;
    let list = Api::<Namespace>::all(client)
        .list_metadata(&ListParams::default())
        .await
        .ok()?;
    Some(
        list.items
            .into_iter()
            .filter_map(|ns| ns.metadata.name)
            .collect(),
    )
}
