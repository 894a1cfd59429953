//! The start's wait, seen from the tunnel agent: until the tunnel first
//! connects, the spinner shows the agent pod as `kubectl get pods` would
//! ([`show_until_connected`]); and a start that fails before the tunnel ever
//! connected is reported as that, with the pod's state and the tunnel's
//! last error ([`never_connected`]), whatever the APIServices said meanwhile.

use std::convert::Infallible;
use std::sync::Mutex;
use std::time::Duration;

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
