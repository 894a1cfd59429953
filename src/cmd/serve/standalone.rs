//! `--standalone`: no cluster; the embedded store, certificates of a local
//! CA, and a kubeconfig for them.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::args::ServeArgs;
use super::signals::Signals;
use crate::apiserver::handlers::ApiState;
use crate::apiserver::server::{self, ServerConfig};
use crate::auth::Auth;
use crate::cli::{CliError, ExitStatus};
use crate::kinds::{Following, Registry};
use crate::register::credentials as standalone;
use crate::register::kubeconfig_file;
use crate::register::previous_context::PreviousContext;
use crate::storage::app_store::AppStore;
use crate::storage::cache::WatchCache;
use crate::storage::store_lock::StoreLock;
use crate::storage::{Backend, embedded_store::EmbeddedStore, private_files};

/// `--standalone`: the embedded store and a kubeconfig.
pub(super) async fn serve_standalone(
    args: &ServeArgs,
    registry: Registry,
    following: Following,
) -> Result<ExitStatus, CliError> {
    let listen = args
        .listen
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 6443)));
    // A port another server holds is said before anything is made: the
    // store, its lock and the certificates would be left for nothing. The
    // port is let go at once, not held until the server starts: the check
    // of the kubeconfig's running server below may dial this very address
    // (a stopped server's context), and a port held but not served would
    // stall it until its timeout.
    if listen.port() != 0 {
        std::net::TcpListener::bind(listen).map_err(|source| {
            CliError::other(
                "start the API server",
                server::ServerError::Bind {
                    addr: listen,
                    source,
                },
            )
        })?;
    }
    let state_dir = super::state_dir(args)?;
    let data = args
        .data
        .clone()
        .unwrap_or_else(|| state_dir.join("standalone.sqlite"));
    if let Some(parent) = data.parent() {
        private_files::create_dir(parent)
            .map_err(|e| CliError::io(format!("create {}", parent.display()), e))?;
    }
    // From the start: a signal before the handlers exist would kill the
    // process with its context current in the kubeconfig.
    let mut signals = Signals::new()?;
    // One server per store: held until the process ends.
    let mut lock = StoreLock::acquire(&data, &standalone::server_url(listen))
        .map_err(|e| CliError::other("lock the store", e))?;
    let kubeconfig = match &args.write_kubeconfig {
        Some(path) => path.clone(),
        None => standalone::default_kubeconfig_path().map_err(CliError::Usage)?,
    };
    // One server per kubeconfig context: writing ours over a running
    // server's would cut kubectl off from it, and leave the file naming a
    // server that is gone once this one stops.
    // A Ctrl-C while it is asked (a few seconds at most) stops here.
    let running = tokio::select! {
        running = running_server_in(&kubeconfig) => running,
        () = signals.next() => return Ok(ExitStatus::Success),
    };
    if let Some(running) = running {
        return Err(CliError::other(
            "check the kubeconfig",
            format!(
                "context {} in {} is the standalone server running at {running}",
                kubeconfig_file::CONTEXT,
                kubeconfig.display()
            ),
        )
        .with_hint(
            "give this server a kubeconfig of its own (--write-kubeconfig PATH), or stop that one first",
        ));
    }
    let store = EmbeddedStore::open(&data)
        .map_err(|e| CliError::other(format!("open {}", data.display()), e))?;
    let credentials = standalone::credentials(&state_dir, listen)
        .map_err(|e| CliError::other("prepare the standalone certificates", e))?;
    // Namespaces whose deletion a stopped server left unfinished.
    crate::apiserver::handlers::namespaces::resume_deletions(&store, &registry);
    let backend = Backend::Embedded(store.clone());
    let apps = AppStore::new(WatchCache::start(backend.clone()), backend);
    // A reload that would leave stored apps unserved is refused or said.
    registry.check_changes_with(apps.kind_change_check());
    let running = server::start(ServerConfig {
        listen,
        cert_pem: format!("{}{}", credentials.serving.cert_pem, credentials.ca_pem),
        key_pem: credentials.serving.key_pem.clone(),
        auth: Arc::new(
            Auth::standalone(&credentials.ca_pem)
                .map_err(|e| CliError::other("configure authentication", e))?,
        ),
        state: ApiState {
            registry: registry.clone(),
            apps: apps.clone(),
            reachability_probe: None,
        },
        connections: server::ConnectionLimits::default(),
    })
    .await
    .map_err(|e| CliError::other("start the API server", e))?;
    let url = standalone::server_url(running.local_addr);
    lock.record(&url)
        .map_err(|e| CliError::other("lock the store", e))?;
    let spinner = crate::output::progress::spinner("waiting for the store's cache to load");
    apps.wait_ready().await;
    spinner.finish_and_clear();
    apps.say_unserved(&registry.snapshot());
    let written = standalone::write_kubeconfig(&kubeconfig, &url, &credentials)
        .map_err(|e| CliError::other("write the kubeconfig", e))?;
    if let Some(before) = &written.replaced_server {
        crate::stderr_line!(
            "Note: context kubectl-cozy in {} pointed at {before}; it now points here \
             (--write-kubeconfig PATH keeps one file per server)",
            kubeconfig.display()
        );
    }
    let record = PreviousContext::of(&state_dir, &written.file);
    let previous = previous_context(&record, &kubeconfig, &written);
    let snapshot = registry.snapshot();
    let kinds = snapshot.plurals();
    // A wildcard address: the kubeconfig reaches it on loopback, but every
    // interface serves it, which the line says.
    let every_interface = if running.local_addr.ip().is_unspecified() {
        format!(" (listening on {}: every interface)", running.local_addr)
    } else {
        String::new()
    };
    // Where kubectl reads this file already, with our context current, a
    // bare command reaches the server.
    let kubeconfig_flag = if kubectl_reads(&written.file) {
        String::new()
    } else {
        format!("--kubeconfig {} ", kubeconfig.display())
    };
    crate::stderr_line!(
        "Serving {} ({}) on {url}{every_interface} from {}\nKubeconfig: {}\nTry: kubectl {kubeconfig_flag}get {}\nPress Ctrl-C to stop.",
        super::kinds_count(kinds.len()),
        kinds.join(", "),
        data.display(),
        kubeconfig.display(),
        kinds.first().copied().unwrap_or("all")
    );
    let reloads = super::console::report_reloads(following);
    signals.next().await;
    reloads.abort();
    // First: the kubeconfig is what a user stopping the server reaches for next.
    if let Some(previous) = &previous {
        restore_context(&record, &kubeconfig, &url, previous);
    }
    crate::stderr_line!(
        "Shutting down (draining for up to {:?})",
        args.drain_timeout
    );
    running.shutdown(args.drain_timeout).await;
    // The store's file alone holds everything once stopped (a copy of it
    // is a whole backup); after a kill its `-wal` file is part of it.
    if let Err(e) = store.checkpoint() {
        crate::stderr_line!(
            "Warning: {} keeps part of the store in {}-wal: {}",
            data.display(),
            data.display(),
            crate::error_chain::error_chain(&e)
        );
    }
    Ok(ExitStatus::Success)
}

/// The URL of the standalone server the context `kubectl-cozy` of the
/// kubeconfig at `path` names, if one answers there (its `/version`, read
/// with that context's credentials within a few seconds, has our marker):
/// another server started with the same `--write-kubeconfig`. A server that
/// is gone (killed, stopped, its port free) or anything else is none.
async fn running_server_in(path: &Path) -> Option<String> {
    use kube::config::{KubeConfigOptions, Kubeconfig};
    let kubeconfig = Kubeconfig::read_from(path).ok()?;
    // Only the credentials standalone writes (a client certificate): a
    // context edited to run a credential plugin is not ours to run here.
    let context = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == kubeconfig_file::CONTEXT)?
        .context
        .as_ref()?;
    let user = kubeconfig
        .auth_infos
        .iter()
        .find(|u| Some(&u.name) == context.user.as_ref())?
        .auth_info
        .as_ref()?;
    if user.exec.is_some() || user.auth_provider.is_some() {
        return None;
    }
    let options = KubeConfigOptions {
        context: Some(kubeconfig_file::CONTEXT.to_owned()),
        ..KubeConfigOptions::default()
    };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .ok()?;
    let server = config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_owned();
    config.connect_timeout = Some(Duration::from_secs(2));
    config.read_timeout = Some(Duration::from_secs(2));
    let client = crate::kube_client::client(config).ok()?;
    let info = tokio::time::timeout(Duration::from_secs(4), client.apiserver_version())
        .await
        .ok()?
        .ok()?;
    crate::version::is_kubectl_cozy_server(&info.git_version).then_some(server)
}

/// Whether kubectl, run from here, reads its current context from `file`
/// (a real path): the first file of `KUBECONFIG`, or `~/.kube/config` when
/// that is unset or empty.
fn kubectl_reads(file: &Path) -> bool {
    kubectl_reads_with(
        file,
        std::env::var_os("KUBECONFIG"),
        std::env::var_os("HOME"),
    )
}

/// [`kubectl_reads`] with `KUBECONFIG` and `HOME` given.
fn kubectl_reads_with(
    file: &Path,
    kubeconfig_env: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> bool {
    let first = match kubeconfig_env.filter(|v| !v.is_empty()) {
        Some(list) => std::env::split_paths(&list).find(|p| !p.as_os_str().is_empty()),
        None => home.map(|home| Path::new(&home).join(".kube/config")),
    };
    first
        .and_then(|p| std::fs::canonicalize(p).ok())
        .is_some_and(|p| p == file)
}

/// The context to make current again when the server stops: the one
/// current before (recorded in the state directory until then), or, when
/// ours was current already, the one a server before this one recorded and
/// did not restore (killed); says which.
fn previous_context(
    record: &PreviousContext,
    kubeconfig: &Path,
    written: &standalone::KubeconfigWritten,
) -> Option<String> {
    let (previous, left) = match &written.previous_context {
        Some(previous) => (previous.clone(), ""),
        None if written.ours_was_current => (
            record.recall()?,
            " (a server before this one stopped without making it current)",
        ),
        None => {
            // No context was current: an old record is no longer this file's.
            let _ = record.forget();
            return None;
        }
    };
    if let Err(e) = record.remember(&previous) {
        tracing::warn!(
            "record the previous context: {}",
            crate::error_chain::error_chain(&e)
        );
    }
    crate::stderr_line!(
        "Note: context kubectl-cozy is current in {} while this server runs; {previous} is made \
         current again when it stops on Ctrl-C or SIGTERM{left}",
        kubeconfig.display()
    );
    Some(previous)
}

/// Makes `previous` current again in the kubeconfig the server wrote for
/// `url`, unless the user has made another context current meanwhile, a
/// server started since took our context, or `previous` is gone; says so,
/// and drops the record unless a later server (on the same file, or after
/// a failure here) may still restore it.
fn restore_context(record: &PreviousContext, kubeconfig: &Path, url: &str, previous: &str) {
    use standalone::Kept;
    let kept = standalone::restore_kubeconfig_context(kubeconfig, url, previous);
    if matches!(
        kept,
        Ok(None | Some(Kept::AnotherCurrent | Kept::PreviousGone))
    ) {
        let _ = record.forget();
    }
    match kept {
        Ok(None) => crate::stderr_line!(
            "Kubeconfig: context {previous} is current again in {}",
            kubeconfig.display()
        ),
        Ok(Some(Kept::AnotherCurrent)) => {}
        Ok(Some(Kept::AnotherServer)) => crate::stderr_line!(
            "Kubeconfig: context kubectl-cozy in {} is another server's now; left current",
            kubeconfig.display()
        ),
        Ok(Some(Kept::PreviousGone)) => crate::stderr_line!(
            "Kubeconfig: context {previous} is no longer in {}; kubectl-cozy is left current \
             (kubectl config use-context NAME)",
            kubeconfig.display()
        ),
        Err(e) => crate::stderr_line!(
            "Warning: could not make context {previous} current again in {}: {}",
            kubeconfig.display(),
            crate::error_chain::error_chain(&e)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_reads_the_first_kubeconfig_file_or_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_owned();
        std::fs::create_dir_all(home.join(".kube")).unwrap();
        let default = home.join(".kube/config");
        let other = home.join("other");
        std::fs::write(&default, "").unwrap();
        std::fs::write(&other, "").unwrap();
        let (default, other) = (
            std::fs::canonicalize(default).unwrap(),
            std::fs::canonicalize(other).unwrap(),
        );
        let reads = |file: &Path, env: Option<&str>| {
            kubectl_reads_with(file, env.map(Into::into), Some(home.clone().into()))
        };
        assert!(reads(&default, None));
        assert!(reads(&default, Some("")));
        assert!(!reads(&other, None));
        let list = format!("{}:{}", other.display(), default.display());
        assert!(reads(&other, Some(&list)));
        assert!(!reads(&default, Some(&list)));
    }
}
