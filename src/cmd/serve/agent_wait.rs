//! The start's wait, seen from the tunnel agent: until the tunnel first
//! connects, the spinner shows the agent pod as `kubectl get pods` would
//! ([`show_until_connected`]); and a start that fails before the tunnel ever
//! connected is reported as that, with the pod's state and the tunnel's
//! last error ([`never_connected`]), whatever the APIServices said meanwhile.
//! Once it connected, the APIServices are switched to the agent's Service
//! only when that lists a ready endpoint ([`endpoints_ready`]).

use std::convert::Infallible;
use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams};
use tokio::sync::watch;

use super::console::Progress;
use crate::cli::CliError;
use crate::register::agent_state;
use crate::register::plan::Plan;
use crate::tunnel::TunnelStatus;

/// Whether the tunnel has never connected yet.
pub(super) fn never_connected_yet(status: &watch::Receiver<TunnelStatus>) -> bool {
    status.borrow().connections == 0
}

/// Reads the agent's state every second until the tunnel first connects,
/// showing it on `spinner` and keeping the last line in `news`; then waits
/// forever (the caller's other branches end the wait).
pub(super) async fn show_until_connected(
    client: &kube::Client,
    plan: &Plan,
    status: &watch::Receiver<TunnelStatus>,
    spinner: &Progress,
    news: &Mutex<Option<String>>,
) -> Infallible {
    while never_connected_yet(status) {
        if let Some(line) = agent_state::describe(client, &plan.namespace, &plan.id).await {
            spinner.set_message(format!("waiting for the tunnel agent: {line}"));
            if let Ok(mut news) = news.lock() {
                *news = Some(line);
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    std::future::pending().await
}

/// Waits until the agent's Service lists a ready endpoint: the pod turns
/// Ready within its readiness period (2 s) once the tunnel has connected,
/// and the EndpointSlice controller follows; APIServices switched to the
/// Service before that would be unavailable meanwhile. At once when the
/// Service is not the agent's (the test seam's ExternalName), or when its
/// EndpointSlices may not be read (said at debug level: then the
/// APIServices' own wait for Available covers it); other failures to read
/// them are tried again (the caller bounds the wait).
pub(super) async fn endpoints_ready(client: &kube::Client, plan: &Plan, spinner: &Progress) {
    if plan.backend() != crate::register::apiservice::Backend::Agent {
        return;
    }
    let service = crate::register::session::object_name(&plan.id);
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), &plan.namespace);
    let selector = ListParams::default().labels(&format!("kubernetes.io/service-name={service}"));
    spinner.set_message(format!(
        "waiting for service/{service} to list the agent as ready"
    ));
    loop {
        match slices.list(&selector).await {
            Ok(list) if has_ready_endpoint(&list.items) => return,
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 403 => {
                tracing::debug!(message = %status.message, "may not list the agent Service's EndpointSlices");
                return;
            }
            Err(err) => {
                tracing::debug!(error = %err, "list the agent Service's EndpointSlices");
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Whether any of `slices` has an endpoint with an address that is ready
/// (an unset `ready` means ready, as the EndpointSlice API says).
fn has_ready_endpoint(slices: &[EndpointSlice]) -> bool {
    slices
        .iter()
        .flat_map(|s| s.endpoints.iter().flatten())
        .any(|e| {
            !e.addresses.is_empty() && e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true)
        })
}

/// The start's failure `err`, restated as the tunnel never connecting: the
/// agent's last state, the tunnel's last error, and `err` as what happened
/// meanwhile.
pub(super) fn never_connected(
    err: &CliError,
    plan: &Plan,
    status: &watch::Receiver<TunnelStatus>,
    news: &Mutex<Option<String>>,
) -> CliError {
    let last = status
        .borrow()
        .last_error
        .clone()
        .unwrap_or_else(|| "no attempt finished".to_owned());
    let agent = news
        .lock()
        .ok()
        .and_then(|n| n.clone())
        .unwrap_or_else(|| "its state could not be read".to_owned());
    CliError::other(
        format!(
            "the tunnel to the agent in namespace {} never connected",
            plan.namespace
        ),
        format!(
            "agent: {agent}; last attempt: {last}; meanwhile: {}",
            crate::error_chain::error_chain(err)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(endpoints: serde_json::Value) -> EndpointSlice {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kubectl-cozy-3f2a-x"},
            "addressType": "IPv4",
            "endpoints": endpoints,
        }))
        .unwrap()
    }

    #[test]
    fn only_an_endpoint_with_an_address_that_is_not_unready_counts() {
        assert!(!has_ready_endpoint(&[]));
        assert!(!has_ready_endpoint(&[slice(serde_json::json!([]))]));
        assert!(!has_ready_endpoint(&[slice(
            serde_json::json!([{"addresses": ["10.0.0.7"], "conditions": {"ready": false}}])
        )]));
        assert!(has_ready_endpoint(&[
            slice(serde_json::json!([{"addresses": ["10.0.0.7"], "conditions": {"ready": false}}])),
            slice(serde_json::json!([{"addresses": ["10.0.0.8"], "conditions": {"ready": true}}])),
        ]));
        // Unset means ready (the API's own rule).
        assert!(has_ready_endpoint(&[slice(
            serde_json::json!([{"addresses": ["10.0.0.7"]}])
        )]));
    }
}
