//! The API server over the cluster: delegated authentication, HelmReleases
//! stored in the cluster (impersonating the caller with `--impersonate`).

use std::net::SocketAddr;
use std::sync::Arc;

use super::args::ServeArgs;
use crate::apiserver::handlers::ApiState;
use crate::apiserver::server::{self, RunningServer, ServerConfig};
use crate::auth::Auth;
use crate::cli::CliError;
use crate::kinds::Registry;
use crate::storage::app_store::AppStore;
use crate::storage::cache::WatchCache;
use crate::storage::{Backend, cluster_store::ClusterStore};

/// Where and how the server listens.
pub(super) struct Listening {
    /// The address.
    pub(super) listen: SocketAddr,
    /// The serving certificate chain, PEM.
    pub(super) cert_pem: String,
    /// Its key, PEM.
    pub(super) key_pem: String,
    /// The group/version answered for `serve`'s reachability probe
    /// ([`ApiState::reachability_probe`]).
    pub(super) reachability_probe: Option<(String, String)>,
}

/// The server `listening` over the cluster (delegated authentication);
/// `config` is `client`'s, for the store's own clients (see
/// [`ClusterStore::connect`]).
pub(super) async fn start_cluster_server(
    args: &ServeArgs,
    registry: Registry,
    client: kube::Client,
    config: &kube::Config,
    listening: Listening,
) -> Result<(RunningServer, AppStore), CliError> {
    let Listening {
        listen,
        cert_pem,
        key_pem,
        reachability_probe,
    } = listening;
    let auth = Auth::delegated(client.clone(), Default::default())
        .await
        .map_err(|e| CliError::other("configure delegated authentication", e))?;
    let group = registry
        .snapshot()
        .kinds()
        .first()
        .map(|k| k.resolved.definition.group.clone())
        .unwrap_or_default();
    let store = ClusterStore::connect(config, &group)
        .map_err(|e| CliError::other("build the Kubernetes client", e))?
        .with_impersonation(args.impersonate);
    // Before anything is registered: a cache that can never fill would hold
    // the start (and every list through the APIService) for ever.
    store
        .check_list_access()
        .await
        .map_err(helm_releases_unlistable)?;
    let backend = Backend::Cluster(Box::new(store));
    let apps = AppStore::new(WatchCache::start(backend.clone()), backend);
    // A reload that would leave stored apps unserved is refused or said.
    registry.check_changes_with(apps.kind_change_check());
    let running = server::start(ServerConfig {
        listen,
        cert_pem,
        key_pem,
        auth: Arc::new(auth),
        state: ApiState {
            registry,
            apps: apps.clone(),
            reachability_probe,
        },
        connections: server::ConnectionLimits::default(),
    })
    .await
    .map_err(|e| CliError::other("start the API server", e))?;
    Ok((running, apps))
}

/// Why the HelmReleases cannot be listed, and what to do about it.
fn helm_releases_unlistable(err: kube::Error) -> CliError {
    let what = "list HelmReleases (helm.toolkit.fluxcd.io/v2), where every app is stored";
    match &err {
        kube::Error::Api(status) if status.code == 404 => CliError::other(
            what,
            "the cluster serves no HelmReleases: install Flux (its helm-controller and CRDs) first",
        ),
        // A 403 keeps kube's error: the start's refusals all get the hint
        // of the rights serve needs.
        _ => CliError::other(what, err),
    }
}
