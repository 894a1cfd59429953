//! `serve --in-cluster`: the server as `kubectl cozy install` runs it, one
//! replica of a Deployment. Nothing is registered (the install owns the
//! Service and APIServices); the client is the pod's own (in-cluster config:
//! its ServiceAccount token, when `KUBERNETES_SERVICE_HOST` is set and no
//! kubeconfig is given; else the kubeconfig, as for a replica run by hand or
//! in tests); the serving certificate comes from the files of the mounted
//! Secret. `/readyz` fails until the HelmRelease watch cache has synced, and
//! again from SIGTERM on while requests drain; `/livez` answers as long as
//! the process serves.

use std::net::SocketAddr;

use super::args::ServeArgs;
use super::cluster_server::{Listening, start_cluster_server};
use super::console::Log;
use super::signals::Signals;
use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::Registry;

/// Where a replica listens unless `--listen` says otherwise.
const DEFAULT_LISTEN: ([u8; 4], u16) = ([0, 0, 0, 0], 8443);

/// The pod's client configuration: in-cluster config inside a pod, else
/// the kubeconfig.
async fn config(ctx: &Ctx) -> Result<kube::Config, CliError> {
    let in_pod = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
        && ctx.global().kubeconfig.is_none()
        && std::env::var_os("KUBECONFIG").is_none();
    if !in_pod {
        return Ok(ctx.kube_config().await?.clone());
    }
    kube::Config::incluster().map_err(|e| CliError::other("load the in-cluster configuration", e))
}

/// Serves until SIGTERM or SIGINT, then drains.
pub(super) async fn serve(
    args: &ServeArgs,
    registry: Registry,
    ctx: &Ctx,
) -> Result<ExitStatus, CliError> {
    let mut signals = Signals::new()?;
    let (cert_pem, key_pem) = args.tls_files("--in-cluster", " (the mounted serving Secret)")?;
    let config = config(ctx).await?;
    let client = crate::kube_client::client(config.clone())
        .map_err(|e| CliError::other("build the Kubernetes client", e))?;
    let log = Log::new(args.quiet, ctx.global().verbosity > 0);
    log.install_access_log();
    let listen = args
        .listen
        .unwrap_or_else(|| SocketAddr::from(DEFAULT_LISTEN));
    let (running, apps) = start_cluster_server(
        args,
        registry.clone(),
        client,
        &config,
        Listening {
            listen,
            cert_pem,
            key_pem,
            reachability_probe: None,
        },
    )
    .await?;
    crate::stderr_line!(
        "Listening on https://{} (in-cluster); /readyz fails until the HelmRelease cache has synced",
        running.local_addr
    );
    let synced = tokio::select! {
        () = apps.wait_ready() => true,
        () = signals.next() => false,
    };
    if synced {
        let snapshot = registry.snapshot();
        apps.say_unserved(&snapshot);
        let kinds = snapshot.plurals();
        crate::stderr_line!(
            "Ready: serving {} kinds ({}) on https://{}, HelmRelease cache synced",
            kinds.len(),
            kinds.join(", "),
            running.local_addr
        );
        signals.next().await;
    }
    crate::stderr_line!(
        "Shutting down: /readyz fails, draining for up to {:?}",
        args.drain_timeout
    );
    running.shutdown(args.drain_timeout).await;
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::super::args::ServeArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn parse(line: &[&str]) -> Result<ServeArgs, String> {
        let mut argv = vec!["serve", "--kinds", "k", "--in-cluster"];
        argv.extend_from_slice(line);
        Cli::try_parse_from(argv)
            .map(|c| c.serve)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn in_cluster_needs_the_mounted_certificate_and_registers_nothing() {
        let tls = ["--tls-cert-file", "c", "--tls-key-file", "k"];
        assert!(parse(&tls).unwrap().in_cluster);
        assert!(parse(&[]).unwrap_err().contains("--tls-cert-file"));
        for other in [
            &["--standalone"][..],
            &["--dry-run"],
            &["--takeover"],
            &["--print-rbac"],
            &["--route", "tunnel"],
        ] {
            let mut line = tls.to_vec();
            line.extend_from_slice(other);
            let err = parse(&line).unwrap_err();
            assert!(err.contains("cannot be used with"), "{other:?}: {err}");
        }
        // The Deployment's own args parse.
        let spec =
            crate::register::install::tests::spec(crate::register::install::tests::generated());
        let args = crate::register::install::workload::args(&spec);
        let parsed = Cli::try_parse_from(&args)
            .map_err(|e| e.to_string())
            .unwrap();
        assert!(parsed.serve.in_cluster);
        assert_eq!(parsed.serve.listen.unwrap().port(), 8443);
    }
}
