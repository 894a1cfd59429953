//! `kubectl cozy serve`: the extension API server.
//!
//! `--standalone` serves the kinds over the embedded store with no cluster at
//! all and writes a kubeconfig for it. Without it, the server stores apps as
//! HelmReleases in the current cluster and delegates authentication and
//! authorization to it ([`crate::auth`]; trust from
//! `kube-system/extension-apiserver-authentication`, hot-reloaded);
//! registering the APIService that reaches it is the caller's job for now.
//! `--impersonate` writes HelmReleases as the requesting user; `--print-rbac`
//! prints the RBAC the server and its users need, and exits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueHint};

use crate::apiserver::handlers::ApiState;
use crate::apiserver::server::{self, ServerConfig};
use crate::auth::Auth;
use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::Registry;
use crate::register::credentials as standalone;
use crate::register::manifests::{self, RbacOptions, RbacSubject};
use crate::storage::app_store::AppStore;
use crate::storage::cache::WatchCache;
use crate::storage::store_lock::StoreLock;
use crate::storage::{
    Backend, cluster_store::ClusterStore, embedded_store::EmbeddedStore, private_files,
};

/// Arguments of `kubectl cozy serve`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  # No cluster needed: serve the example kinds, then use them with kubectl
  kubectl cozy serve --standalone --kinds examples/kinds
  kubectl --kubeconfig ~/.config/kubectl-cozy/standalone.kubeconfig get postgreses

  # Serve on another port and keep the data elsewhere
  kubectl cozy serve --standalone --kinds ./kinds --listen 127.0.0.1:7443 --data ./cozy.sqlite

  # The RBAC for a server running as ServiceAccount cozy-system/kubectl-cozy
  kubectl cozy serve --kinds ./kinds --print-rbac | kubectl apply -f -")]
pub struct ServeArgs {
    /// Serve without any cluster, over an embedded store, and write a kubeconfig for it
    #[arg(long)]
    pub standalone: bool,

    /// Kind definitions: a file or a directory of YAML files (reloaded on change)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath, required = true)]
    pub kinds: Option<PathBuf>,

    /// Address to listen on
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,

    /// Embedded store file (standalone; default: <state dir>/standalone.sqlite)
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub data: Option<PathBuf>,

    /// Where to write the kubeconfig (standalone; default: ~/.config/kubectl-cozy/standalone.kubeconfig)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub write_kubeconfig: Option<PathBuf>,

    /// Directory for the standalone CA (default: ~/.local/state/kubectl-cozy)
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub state_dir: Option<PathBuf>,

    /// Serving certificate (cluster mode), PEM
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath, requires = "tls_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// Serving key (cluster mode), PEM
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath, requires = "tls_cert_file")]
    pub tls_key_file: Option<PathBuf>,

    /// Write HelmReleases as the requesting user (impersonation), so users need HelmRelease rights too
    #[arg(long)]
    pub impersonate: bool,

    /// Print the RBAC objects the server and its users need (YAML) and exit
    #[arg(long)]
    pub print_rbac: bool,

    /// The server's identity in --print-rbac: NAMESPACE/NAME (a ServiceAccount) or user:NAME
    #[arg(long, value_name = "SUBJECT", default_value = "cozy-system/kubectl-cozy", value_parser = parse_rbac_subject)]
    pub rbac_subject: String,

    /// Time to let requests finish on shutdown
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::cli::parse_request_timeout)]
    pub drain_timeout: Duration,
}

/// Runs `serve`.
pub async fn run(args: ServeArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let kinds_path = args
        .kinds
        .clone()
        .ok_or_else(|| CliError::Usage("--kinds is required".into()))?;
    let registry = Registry::from_path(&kinds_path)
        .map_err(|e| CliError::other("load kind definitions", e))?;
    if args.print_rbac {
        return print_rbac(&args, &registry, ctx);
    }
    crate::allocator::tune_for_server();
    crate::allocator::spawn_trimmer();
    for warning in registry.snapshot().warnings() {
        tracing::warn!("{warning}");
    }
    let _file_watch = registry
        .watch_path(kinds_path.clone())
        .map_err(|e| CliError::other(format!("watch {}", kinds_path.display()), e))?;

    let (backend, mut config_for) = if args.standalone {
        let state_dir = args
            .state_dir
            .clone()
            .unwrap_or_else(standalone::default_state_dir);
        let data = args
            .data
            .clone()
            .unwrap_or_else(|| state_dir.join("standalone.sqlite"));
        if let Some(parent) = data.parent() {
            private_files::create_dir(parent)
                .map_err(|e| CliError::io(format!("create {}", parent.display()), e))?;
        }
        let lock = StoreLock::acquire(&data, &standalone::server_url(args.listen))
            .map_err(|e| CliError::other("lock the store", e))?;
        let store = EmbeddedStore::open(&data)
            .map_err(|e| CliError::other(format!("open {}", data.display()), e))?;
        let credentials = standalone::credentials(&state_dir, args.listen)
            .map_err(|e| CliError::other("prepare the standalone certificates", e))?;
        (
            Backend::Embedded(store),
            Mode::Standalone {
                credentials,
                data,
                lock,
            },
        )
    } else {
        let client = ctx.client().await?;
        let (cert_pem, key_pem) = match (&args.tls_cert_file, &args.tls_key_file) {
            (Some(c), Some(k)) => (
                std::fs::read_to_string(c)
                    .map_err(|e| CliError::io(format!("read {}", c.display()), e))?,
                std::fs::read_to_string(k)
                    .map_err(|e| CliError::io(format!("read {}", k.display()), e))?,
            ),
            _ => {
                return Err(CliError::Usage(
                    "cluster mode needs --tls-cert-file and --tls-key-file (or use --standalone)"
                        .into(),
                ));
            }
        };
        let auth = Auth::delegated(client.clone(), Default::default())
            .await
            .map_err(|e| CliError::other("configure delegated authentication", e))?;
        let group = registry
            .snapshot()
            .kinds()
            .first()
            .map(|k| k.resolved.definition.group.clone())
            .unwrap_or_default();
        (
            Backend::Cluster(Box::new(
                ClusterStore::new(client, &group).with_impersonation(args.impersonate),
            )),
            Mode::Cluster {
                cert_pem,
                key_pem,
                auth: Arc::new(auth),
            },
        )
    };

    let apps = AppStore::new(WatchCache::start(backend.clone()), backend);
    let state = ApiState {
        registry: registry.clone(),
        apps: apps.clone(),
    };
    let config = match &config_for {
        Mode::Standalone { credentials, .. } => ServerConfig {
            listen: args.listen,
            cert_pem: format!("{}{}", credentials.serving.cert_pem, credentials.ca_pem),
            key_pem: credentials.serving.key_pem.clone(),
            auth: Arc::new(
                Auth::standalone(&credentials.ca_pem)
                    .map_err(|e| CliError::other("configure authentication", e))?,
            ),
            state,
        },
        Mode::Cluster {
            cert_pem,
            key_pem,
            auth,
        } => ServerConfig {
            listen: args.listen,
            cert_pem: cert_pem.clone(),
            key_pem: key_pem.clone(),
            auth: auth.clone(),
            state,
        },
    };
    let running = server::start(config)
        .await
        .map_err(|e| CliError::other("start the API server", e))?;
    let url = standalone::server_url(running.local_addr);
    let spinner = crate::output::progress::spinner("waiting for the HelmRelease cache to sync");
    apps.wait_ready().await;
    spinner.finish_and_clear();

    let snapshot = registry.snapshot();
    let kinds: Vec<&str> = snapshot
        .kinds()
        .iter()
        .map(|k| k.resolved.definition.plural.as_str())
        .collect();
    let mut stderr = std::io::stderr().lock();
    use std::io::Write as _;
    match &mut config_for {
        Mode::Standalone {
            credentials,
            data,
            lock,
        } => {
            lock.record(&url)
                .map_err(|e| CliError::other("lock the store", e))?;
            let kubeconfig = args
                .write_kubeconfig
                .clone()
                .unwrap_or_else(standalone::default_kubeconfig_path);
            standalone::write_kubeconfig(&kubeconfig, &url, credentials)
                .map_err(|e| CliError::other("write the kubeconfig", e))?;
            let _ = writeln!(
                stderr,
                "Serving {} kinds ({}) on {url} from {}\nKubeconfig: {}\nTry: kubectl --kubeconfig {} get {}\nPress Ctrl-C to stop.",
                kinds.len(),
                kinds.join(", "),
                data.display(),
                kubeconfig.display(),
                kubeconfig.display(),
                kinds.first().copied().unwrap_or("all")
            );
        }
        Mode::Cluster { .. } => {
            let _ = writeln!(
                stderr,
                "Serving {} kinds ({}) on {url}, storing HelmReleases in the cluster",
                kinds.len(),
                kinds.join(", ")
            );
        }
    }
    drop(stderr);

    shutdown_signal().await;
    eprintln!(
        "Shutting down (draining for up to {:?})",
        args.drain_timeout
    );
    running.shutdown(args.drain_timeout).await;
    Ok(ExitStatus::Success)
}

enum Mode {
    Standalone {
        credentials: standalone::Credentials,
        data: PathBuf,
        /// Held while serving: one server per store.
        lock: StoreLock,
    },
    Cluster {
        cert_pem: String,
        key_pem: String,
        auth: Arc<Auth>,
    },
}

/// Validates `--rbac-subject` (kept as text: `ServeArgs` stays small).
fn parse_rbac_subject(text: &str) -> Result<String, String> {
    RbacSubject::parse(text).map(|_| text.to_owned())
}

/// `--print-rbac`: the objects for the loaded kinds, as YAML on stdout.
fn print_rbac(args: &ServeArgs, registry: &Registry, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let snapshot = registry.snapshot();
    let options = RbacOptions {
        subject: RbacSubject::parse(&args.rbac_subject).map_err(CliError::Usage)?,
        impersonate: args.impersonate,
        ..RbacOptions::default()
    };
    let objects = manifests::rbac(snapshot.kinds().iter().map(|k| &k.resolved), &options);
    let text =
        manifests::to_yaml(&objects).map_err(|e| CliError::io("render the RBAC objects", e))?;
    let mut out = ctx.stdout();
    std::io::Write::write_all(&mut out, text.as_bytes())
        .map_err(|e| CliError::io("write the RBAC objects", e))?;
    Ok(ExitStatus::Success)
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
