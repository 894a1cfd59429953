//! `doctor` pointed at a kubectl-cozy **standalone** server (`serve
//! --standalone`). Such a server has no aggregation layer and no admission
//! webhooks, so instead of reporting those checks as "could not run", doctor
//! says what it is talking to and checks what there is: that the server is
//! ready (`/readyz`), which kinds it serves (discovery), and, as on a
//! cluster, its namespaces: the server deletes a `Terminating` namespace's
//! apps itself, and one stays while an app's (or its own) finalizers do.

use super::discovery;
use super::findings::{StandaloneServer, Unchecked};
use super::requester::Requester;

/// Checks a standalone server: readiness and discovery. Returns what was
/// seen, what it serves (for the namespaces' content) and what could not be
/// checked.
pub async fn check(req: &Requester) -> (StandaloneServer, discovery::Discovered, Vec<Unchecked>) {
    let mut unchecked = Vec::new();
    let readyz = http::Request::get("/readyz?verbose")
        .body(Vec::new())
        .expect("a static request is valid");
    let ready = match req.call(req.client().request_text(readyz)).await {
        Ok(_) => true,
        Err(err) => {
            unchecked.push(Unchecked {
                what: "GET /readyz (is the standalone server ready?)".into(),
                reason: format!("the server is not ready: {err}"),
                status: err.status(),
            });
            false
        }
    };
    let (discovered, more) = discovery::discover(req).await;
    unchecked.extend(more);
    let mut resources: Vec<String> = discovered
        .resources
        .iter()
        .map(|r| format!("{}.{}/{}", r.plural, r.group, r.version))
        .collect();
    resources.sort();
    (StandaloneServer { ready, resources }, discovered, unchecked)
}

/// The text report's explanation of a standalone server.
pub fn explain(server: &StandaloneServer) -> String {
    let mut text = String::from(
        "This is a kubectl-cozy standalone server (serve --standalone): it has no APIServices and no admission\n\
         webhooks, so there is nothing of those to diagnose. Doctor checked that it is ready, what it serves and\n\
         its namespaces (it deletes a Terminating namespace's apps itself, as the namespace controller does);\n\
         point it at a Kubernetes cluster (--context, --kubeconfig) for the rest.\n\n",
    );
    text.push_str(&format!(
        "READY: {}\n",
        if server.ready { "yes" } else { "no" }
    ));
    if server.resources.is_empty() {
        text.push_str("SERVES: nothing (no kinds loaded)\n");
    } else {
        text.push_str(&format!("SERVES: {}\n", server.resources.join(", ")));
    }
    text
}
