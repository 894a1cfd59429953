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
/// none when it cannot be asked or does not answer in time. Asked on a
/// thread of its own, waited for at most [`CLUSTER_TIMEOUT`] whatever it
/// does: loading the kubeconfig may run a credential plugin (`exec`), which
/// blocks (and may wait for a browser's login) where no timer can cut it.
/// A thread still asking when the time is up is left to the process's end.
pub(super) fn namespace_names(selection: &Selection) -> Vec<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let selection = selection.clone();
    let asked = std::thread::Builder::new()
        .name("complete-namespaces".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let _ = tx.send(runtime.block_on(list_namespaces(&selection)));
        });
    if asked.is_err() {
        return Vec::new();
    }
    let mut names = rx
        .recv_timeout(CLUSTER_TIMEOUT)
        .ok()
        .flatten()
        .unwrap_or_default();
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
