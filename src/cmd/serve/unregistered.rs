//! `--route none`: serve over the cluster with the given certificate and
//! register nothing (the APIService is the caller's).

use std::net::SocketAddr;

use super::args::ServeArgs;
use super::cluster_server::{Listening, start_cluster_server};
use super::console::Log;
use super::signals::Signals;
use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::{Following, Registry};

/// Today's cluster mode: serve with the given certificate, register nothing.
pub(super) async fn serve_unregistered(
    args: &ServeArgs,
    registry: Registry,
    following: Following,
    ctx: &Ctx,
) -> Result<ExitStatus, CliError> {
    let (cert_pem, key_pem) = args.tls_files("--route none", "")?;
    let client = ctx.client().await?;
    let log = Log::new(args.quiet, ctx.global().verbosity > 0);
    log.install_access_log();
    let listen = args
        .listen
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 6443)));
    let (running, apps) = start_cluster_server(
        args,
        registry.clone(),
        client,
        ctx.kube_config().await?,
        Listening {
            listen,
            cert_pem,
            key_pem,
            reachability_probe: None,
        },
    )
    .await?;
    let spinner = crate::output::progress::spinner("waiting for the HelmRelease cache to sync");
    apps.wait_ready().await;
    spinner.finish_and_clear();
    let snapshot = registry.snapshot();
    apps.say_unserved(&snapshot);
    let kinds = snapshot.plurals();
    crate::stderr_line!(
        "Serving {} ({}) on https://{}, storing HelmReleases in the cluster (no APIService registered: --route none)",
        super::kinds_count(kinds.len()),
        kinds.join(", "),
        running.local_addr
    );
    let reloads = super::console::report_reloads(following);
    Signals::new()?.next().await;
    reloads.abort();
    crate::stderr_line!(
        "Shutting down (draining for up to {:?})",
        args.drain_timeout
    );
    running.shutdown(args.drain_timeout).await;
    Ok(ExitStatus::Success)
}
