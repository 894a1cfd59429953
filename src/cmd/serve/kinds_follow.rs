//! Discovery follows the kinds while a session runs. kube-apiserver re-reads
//! an APIService's discovery when the APIService changes and otherwise only
//! once a minute; when the kinds are reloaded (edited definitions, or charts
//! re-scaffolded with `--charts`), serve writes the new kinds' hash into an
//! annotation of each of its APIServices, so `kubectl get <new kind>` works
//! within about a second. A group/version that was not served at start has
//! no APIService; serve says so (a restart registers it). An APIService
//! another session has taken over (`--takeover`) is not touched: the nudge
//! is a JSON patch that first tests the session label.

use std::collections::BTreeSet;

use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, Patch, PatchParams};

use super::console::Log;
use crate::kinds::{Following, News};
use crate::register::apiservice::GroupVersion;
use crate::register::session::{KINDS_HASH_ANNOTATION, SESSION_LABEL};

/// Follows the kinds (`following`, taken when serve started, so nothing
/// since is missed) until the task is dropped, nudging `api_services`
/// while they are session `own`'s.
pub(super) fn spawn(
    client: kube::Client,
    mut following: Following,
    own: String,
    api_services: Vec<String>,
    served: Vec<GroupVersion>,
    log: Log,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let api: Api<APIService> = Api::all(client);
        let registered: BTreeSet<GroupVersion> = served.into_iter().collect();
        let mut warned = BTreeSet::new();
        while let Some(news) = following.next().await {
            if let Some(line) = news.verdict_line() {
                log.line(&line);
                continue;
            }
            let News::Reloaded {
                previous,
                now: snapshot,
            } = news
            else {
                continue;
            };
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
            let patch = nudge(&own, &snapshot.hash()[..16]);
            for name in &api_services {
                match api
                    .patch(name, &PatchParams::default(), &Patch::Json::<()>(patch.clone()))
                    .await
                {
                    Ok(_) => {}
                    // The label's test failed: another session holds it
                    // (the ownership watch says so), or it is gone.
                    Err(kube::Error::Api(status)) if status.code == 422 || status.code == 404 => {
                        log.line(&format!(
                            "Kinds: APIService {name} is not this session's now; its discovery is left alone"
                        ));
                    }
                    Err(err) => log.line(&format!(
                        "Kinds: could not nudge APIService {name} to re-read discovery ({err}); kube-apiserver picks the change up within a minute"
                    )),
                }
            }
            log.line(&format!(
                "Kinds: reloaded ({}), serving {}; discovery refreshed{}",
                snapshot.changes_since(&previous),
                snapshot.kinds().len(),
                snapshot.watches_ended_since(&previous)
            ));
        }
    })
}

/// The patch that nudges an APIService of session `own`: the kinds' `hash`
/// in [`KINDS_HASH_ANNOTATION`], only while its session label is `own`.
fn nudge(own: &str, hash: &str) -> json_patch::Patch {
    use json_patch::jsonptr::PointerBuf;
    use json_patch::{AddOperation, PatchOperation, TestOperation};
    json_patch::Patch(vec![
        PatchOperation::Test(TestOperation {
            path: PointerBuf::from_tokens(["metadata", "labels", SESSION_LABEL]),
            value: own.into(),
        }),
        PatchOperation::Add(AddOperation {
            path: PointerBuf::from_tokens(["metadata", "annotations", KINDS_HASH_ANNOTATION]),
            value: hash.into(),
        }),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pointers escape the keys' `/` (RFC 6901).
    #[test]
    fn the_nudge_tests_the_session_label_then_adds_the_hash() {
        assert_eq!(
            serde_json::to_value(nudge("3f2a", "abc")).unwrap(),
            serde_json::json!([
                {"op": "test", "path": "/metadata/labels/kubectl-cozy.io~1session", "value": "3f2a"},
                {"op": "add", "path": "/metadata/annotations/kubectl-cozy.io~1kinds-hash", "value": "abc"},
            ])
        );
    }
}
