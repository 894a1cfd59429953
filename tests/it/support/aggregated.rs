//! The extension API server running in-process against the test control
//! plane, registered with the real aggregator the way a user would: an
//! ExternalName Service (`localhost`) and an APIService with a caBundle whose
//! CA signed a serving certificate for `<svc>.<ns>.svc`. One per test binary,
//! on its own runtime thread; started on first use by [`aggregated()`].
//! Authentication and authorization are production's: trust read from
//! `kube-system/extension-apiserver-authentication` and watched, reviews
//! made with the plane's admin identity.
//!
//! [`spawn_registered`] registers another server for other kinds and group
//! (the CEL tests' own); [`start_server`] starts further, unregistered
//! servers with any [`Auth`]
//! (security tests point their reviews at dead addresses or their trust at
//! another ConfigMap).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use kubectl_cozy::apiserver::handlers::ApiState;
use kubectl_cozy::apiserver::server::{self, ServerConfig};
use kubectl_cozy::auth::Auth;
use kubectl_cozy::kinds::Registry;
use kubectl_cozy::pki::{Ca, LeafSpec};
use kubectl_cozy::storage::app_store::AppStore;
use kubectl_cozy::storage::cache::WatchCache;
use kubectl_cozy::storage::{Backend, cluster_store::ClusterStore};

use super::plane::{Plane, plane};

/// The Service the APIService points at.
pub const SERVICE: &str = "kubectl-cozy-test";

/// A registered, Available extension server.
#[derive(Debug)]
pub struct Aggregated {
    /// `https://127.0.0.1:<port>` of the server itself.
    pub direct_url: String,
    /// The CA of its serving certificate, PEM.
    pub ca_pem: String,
}

static SERVER: OnceLock<Result<Aggregated, String>> = OnceLock::new();

/// The shared aggregated server (with the example kinds).
pub fn aggregated() -> &'static Aggregated {
    let result = SERVER.get_or_init(|| {
        let kinds = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
        spawn_registered(plane(), kinds, "apps.cozystack.io", SERVICE)
    });
    match result {
        Ok(a) => a,
        Err(e) => panic!("the aggregated test server did not start: {e}"),
    }
}

/// Starts a server for the kinds in `kinds` (of `group`) on its own runtime
/// thread, with production's delegated auth, and registers it with the
/// aggregator through Service `service`; returns once its APIService is
/// Available. The server runs until the test binary exits.
pub fn spawn_registered(
    plane: &'static Plane,
    kinds: PathBuf,
    group: &'static str,
    service: &'static str,
) -> Result<Aggregated, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(format!("aggregated-{group}"))
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let started = async {
                    let client = plane.client().await;
                    let auth = Auth::delegated(client.clone(), Default::default())
                        .await
                        .map_err(|e| e.to_string())?;
                    let server = ServerSpec {
                        kinds: &kinds,
                        group,
                        service,
                    };
                    let (running, ca_pem, _cache) =
                        start_server_for(&server, plane.config().await, Arc::new(auth), false)
                            .await?;
                    Ok::<_, String>((running, ca_pem))
                };
                match started.await {
                    Ok((running, ca_pem)) => {
                        let port = running.local_addr.port();
                        let _ = tx.send(Ok((port, ca_pem)));
                        let _keep = running;
                        std::future::pending::<()>().await;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                    }
                }
            });
        })
        .map_err(|e| e.to_string())?;
    let (port, ca_pem) = rx.recv().map_err(|e| e.to_string())??;
    register(plane, group, service, port, &ca_pem)?;
    Ok(Aggregated {
        direct_url: format!("https://127.0.0.1:{port}"),
        ca_pem,
    })
}

/// What an in-process server serves: the kinds in a directory, of one
/// group, named by the Service its APIService points at.
pub struct ServerSpec<'a> {
    /// The kind definitions.
    pub kinds: &'a Path,
    /// Their group (the HelmReleases' ownership label too).
    pub group: &'a str,
    /// The Service name its serving certificate names.
    pub service: &'a str,
}

/// Starts a server with the example kinds over `upstream`'s cluster, with
/// `auth`, on a free port; returns it and the CA of its serving certificate.
/// Call it on a runtime that outlives the server.
pub async fn start_server(
    upstream: kube::Config,
    auth: Arc<Auth>,
    impersonate: bool,
) -> Result<(server::RunningServer, String), String> {
    let (running, ca_pem, _cache) = start_server_with_cache(upstream, auth, impersonate).await?;
    Ok((running, ca_pem))
}

/// [`start_server`], also returning the server's watch cache (fault tests
/// watch its upstream reconnections).
pub async fn start_server_with_cache(
    upstream: kube::Config,
    auth: Arc<Auth>,
    impersonate: bool,
) -> Result<(server::RunningServer, String, WatchCache), String> {
    let kinds = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
    let server = ServerSpec {
        kinds: &kinds,
        group: "apps.cozystack.io",
        service: SERVICE,
    };
    start_server_for(&server, upstream, auth, impersonate).await
}

/// Starts the server `spec` describes over `upstream`'s cluster (its store's
/// clients made as `serve` makes them), with `auth`,
/// on a free port; returns it, the CA of its serving certificate and its
/// watch cache.
pub async fn start_server_for(
    spec: &ServerSpec<'_>,
    upstream: kube::Config,
    auth: Arc<Auth>,
    impersonate: bool,
) -> Result<(server::RunningServer, String, WatchCache), String> {
    let registry = Registry::from_path(spec.kinds).map_err(|e| e.to_string())?;
    let backend = Backend::Cluster(Box::new(
        ClusterStore::connect(&upstream, spec.group)
            .map_err(|e| e.to_string())?
            .with_impersonation(impersonate),
    ));
    let cache = WatchCache::start(backend.clone());
    let ca = Ca::new("kubectl-cozy-test-extension-ca").map_err(|e| e.to_string())?;
    let serving = ca
        .issue(&LeafSpec::server(
            "kubectl-cozy",
            &[&format!("{}.default.svc", spec.service), "localhost"],
            &["127.0.0.1".parse().expect("ip")],
        ))
        .map_err(|e| e.to_string())?;
    let running = server::start(ServerConfig {
        listen: "127.0.0.1:0".parse().expect("addr"),
        cert_pem: serving.cert_pem,
        key_pem: serving.key_pem,
        auth,
        state: ApiState {
            registry,
            apps: AppStore::new(cache.clone(), backend),
            reachability_probe: None,
        },
        connections: server::ConnectionLimits::default(),
    })
    .await
    .map_err(|e| e.to_string())?;
    cache.wait_ready().await;
    Ok((running, ca.cert_pem().to_owned(), cache))
}

/// Registers `group`/v1alpha1 at `port` through an ExternalName Service
/// `service` (`localhost`), trusting `ca_pem`; waits until Available.
fn register(
    plane: &Plane,
    group: &str,
    service: &str,
    port: u16,
    ca_pem: &str,
) -> Result<(), String> {
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let name = format!("v1alpha1.{group}");
    let manifest = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {service}, namespace: default}}\nspec: {{type: ExternalName, externalName: localhost}}\n---\n\
         apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {{name: {name}}}\n\
         spec:\n  group: {group}\n  version: v1alpha1\n  service: {{namespace: default, name: {service}, port: {port}}}\n  \
         caBundle: {ca_bundle}\n  groupPriorityMinimum: 1000\n  versionPriority: 15\n"
    );
    apply(plane, &manifest)?;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let out = plane
            .kubectl()
            .args([
                "get",
                "apiservice",
                &name,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Available\")].status}",
            ])
            .output()
            .map_err(|e| e.to_string())?;
        if String::from_utf8_lossy(&out.stdout).trim() == "True" {
            return Ok(());
        }
        if Instant::now() > deadline {
            let detail = plane
                .kubectl()
                .args(["get", "apiservice", &name, "-o", "yaml"])
                .output();
            return Err(format!(
                "APIService {name} not Available within 120s: {}",
                detail
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default()
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// `kubectl apply --server-side -f -` with `manifest`.
pub fn apply(plane: &Plane, manifest: &str) -> Result<(), String> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = plane
        .kubectl()
        .args(["apply", "--server-side", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(manifest.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "kubectl apply: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
