//! Discovery follows the kinds while a session runs. kube-apiserver re-reads
//! an APIService's discovery when the APIService changes and otherwise only
//! once a minute; when the kinds are reloaded (edited definitions, or charts
//! re-scaffolded with `--charts`), serve writes the new kinds' hash into an
//! annotation of each of its APIServices, so `kubectl get <new kind>` works
//! within about a second. A group/version that was not served at start has
//! no APIService; serve says so (a restart registers it).

use std::collections::BTreeSet;

use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, Patch, PatchParams};

use super::console::Log;
use crate::kinds::Registry;
use crate::register::apiservice::GroupVersion;
use crate::register::session::KINDS_HASH_ANNOTATION;

/// Follows `registry` until the task is dropped, nudging `api_services`.
pub(super) fn spawn(
    client: kube::Client,
    registry: Registry,
    api_services: Vec<String>,
    served: Vec<GroupVersion>,
    log: Log,
) -> tokio::task::JoinHandle<()> {
    let mut changes = registry.subscribe();
    let mut previous = changes.borrow_and_update().clone();
    tokio::spawn(async move {
        let api: Api<APIService> = Api::all(client);
        let registered: BTreeSet<GroupVersion> = served.into_iter().collect();
        let mut warned = BTreeSet::new();
        while changes.changed().await.is_ok() {
            let snapshot = changes.borrow_and_update().clone();
            for kind in snapshot.kinds() {
                let gv = GroupVersion {
                    group: kind.resolved.definition.group.clone(),
                    version: kind.resolved.definition.version.clone(),
                };
                if !registered.contains(&gv) && warned.insert(gv.clone()) {
                    log.line(&format!(
                        "Kinds: {}/{} is new and has no APIService in this session; restart serve to serve it through the cluster",
                        gv.group, gv.version
                    ));
                }
            }
            let hash = &snapshot.hash()[..16];
            let patch = serde_json::json!({
                "metadata": {"annotations": {KINDS_HASH_ANNOTATION: hash}}
            });
            for name in &api_services {
                if let Err(err) = api
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    log.line(&format!(
                        "Kinds: could not nudge APIService {name} to re-read discovery ({err}); kube-apiserver picks the change up within a minute"
                    ));
                }
            }
            log.line(&format!(
                "Kinds: reloaded ({}), serving {}; discovery refreshed",
                snapshot.changes_since(&previous),
                snapshot.kinds().len()
            ));
            previous = snapshot;
        }
    })
}
