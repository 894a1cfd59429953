//! While a session runs, who holds its APIServices: another `serve
//! --takeover` may take one over (and give it back when it ends), or someone
//! may delete it. Serve polls them and says so when that changes, so the
//! session whose group was taken knows why its access log went quiet.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::Api;

use super::console::Log;
use crate::register::session;

/// How often the APIServices are read.
const EVERY: Duration = Duration::from_secs(3);

/// Who holds an APIService of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Holder {
    /// This session.
    Us,
    /// Another serve session: its id and who started it.
    Session { id: String, by: Option<String> },
    /// Someone else (no session label).
    Other,
    /// It no longer exists.
    Gone,
}

/// Follows `names` (this session's `own` APIServices) until the task is
/// dropped, printing each change of holder.
pub(super) fn spawn(
    client: kube::Client,
    own: String,
    names: Vec<String>,
    log: Log,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let api: Api<APIService> = Api::all(client);
        let mut last: BTreeMap<String, Holder> =
            names.iter().map(|n| (n.clone(), Holder::Us)).collect();
        loop {
            tokio::time::sleep(EVERY).await;
            for name in &names {
                let Ok(found) = api.get_opt(name).await else {
                    continue;
                };
                let now = holder(found.as_ref(), &own);
                if last.get(name) != Some(&now) {
                    log.line(&change_line(name, &now));
                    last.insert(name.clone(), now);
                }
            }
        }
    })
}

fn holder(found: Option<&APIService>, own: &str) -> Holder {
    let Some(found) = found else {
        return Holder::Gone;
    };
    let meta = &found.metadata;
    match session::session_of(meta.labels.as_ref(), meta.annotations.as_ref(), None) {
        Some((id, _)) if id == own => Holder::Us,
        Some((id, _)) => Holder::Session {
            id,
            by: meta
                .annotations
                .as_ref()
                .and_then(|a| a.get(session::REGISTERED_BY_ANNOTATION))
                .cloned(),
        },
        None => Holder::Other,
    }
}

/// The line for an APIService now held by `now`.
fn change_line(name: &str, now: &Holder) -> String {
    match now {
        Holder::Us => format!("APIService {name} is back with this session"),
        Holder::Session { id, by } => format!(
            "APIService {name} was taken over by serve session {id}{}: requests for it go there now; it comes back when that session ends",
            by.as_deref().map(|b| format!(" ({b})")).unwrap_or_default()
        ),
        Holder::Other => format!(
            "APIService {name} was replaced by someone else (no serve session): requests for it no longer reach this server"
        ),
        Holder::Gone => format!(
            "APIService {name} was deleted by someone else: requests for it no longer reach this server (restart serve to register it again)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_service(labels: serde_json::Value, annotations: serde_json::Value) -> APIService {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "v1alpha1.a.example.com", "labels": labels, "annotations": annotations},
        }))
        .unwrap()
    }

    #[test]
    fn the_holder_is_read_from_the_session_label() {
        let ours = api_service(
            serde_json::json!({session::SESSION_LABEL: "3f2a"}),
            serde_json::json!({}),
        );
        assert_eq!(holder(Some(&ours), "3f2a"), Holder::Us);
        let taken = api_service(
            serde_json::json!({session::SESSION_LABEL: "9x"}),
            serde_json::json!({session::REGISTERED_BY_ANNOTATION: "bob@box, pid 7, since 2026-12-05T10:00:00Z"}),
        );
        let now = holder(Some(&taken), "3f2a");
        assert_eq!(
            change_line("v1alpha1.a.example.com", &now),
            "APIService v1alpha1.a.example.com was taken over by serve session 9x (bob@box, pid 7, since \
             2026-12-05T10:00:00Z): requests for it go there now; it comes back when that session ends"
        );
        let foreign = api_service(serde_json::json!({}), serde_json::json!({}));
        assert_eq!(holder(Some(&foreign), "3f2a"), Holder::Other);
        assert_eq!(holder(None, "3f2a"), Holder::Gone);
    }
}
