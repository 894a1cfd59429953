//! `kubectl cozy serve`: the extension API server, registered in the current
//! cluster for as long as it runs.
//!
//! A composer: flags → options → start the parts → wait for a signal → tear
//! down in reverse. This file owns the dispatch ([`args`] the flags); a
//! registered session is [`session`] (its wait for the agent [`agent_wait`],
//! its end [`stop`]; while it runs, [`kinds_follow`] and [`ownership`] watch
//! the kinds and who holds its APIServices), the other modes are
//! [`standalone`] and [`unregistered`]. The parts live in
//! [`crate::register`] (certificates, the session's objects, the Lease, the
//! teardown) and [`crate::tunnel`] (the reverse tunnel); see `docs/serve.md`.
//!
//! - `--standalone`: no cluster; an embedded store and a kubeconfig for it.
//! - `--route tunnel` (default): an agent pod in the session namespace and a
//!   reverse tunnel over pods/portforward; `--route external-name`: an
//!   ExternalName Service to a host the cluster reaches this machine by;
//!   `--route none`: serve only (`--tls-cert-file`/`--tls-key-file`), the
//!   APIService is the caller's.
//! - `--in-cluster` ([`in_cluster`]): the server `kubectl cozy install`
//!   deploys, registered by the install, not by itself.
//! - `--dry-run` prints every object a session would create and creates
//!   nothing; `--print-rbac` prints the RBAC of an in-cluster server.

mod agent_wait;
mod args;
mod cluster_server;
mod console;
mod guard;
mod in_cluster;
mod kinds_follow;
mod ownership;
mod plan;
mod rbac;
mod session;
mod signals;
mod standalone;
mod stop;
mod unregistered;

pub use args::{RouteArg, ServeArgs};

use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::{KindSource, Registry};
use crate::output::OutputFormat;
use args::{check_mode_flags, kind_source, route_of};

/// The `-o` formats of what `serve --dry-run` and `--print-rbac` print
/// (objects; the serving itself takes no `-o`).
pub const OUTPUT_FORMATS: &[OutputFormat] =
    &[OutputFormat::Yaml, OutputFormat::Json, OutputFormat::Name];

/// Runs `serve`.
pub async fn run(args: ServeArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    check_global_flags(&args, ctx)?;
    check_mode_flags(&args, ctx.global())?;
    let source = kind_source(&args)?;
    let registry = Registry::from_source(&source).map_err(|e| {
        let what = match &source {
            KindSource::Definitions(_) => "load kind definitions",
            KindSource::Charts(_) => "scaffold kinds from the charts",
        };
        CliError::other(what, e)
    })?;
    if args.print_rbac {
        return rbac::print_rbac(&args, &registry, ctx);
    }
    let route = route_of(&args)?;
    if args.dry_run {
        return plan::dry_run(&args, &registry, route, ctx).await;
    }
    crate::allocator::tune_for_server();
    // Before any other thread but the runtime's workers starts: the watch
    // cache's thread then shares the main thread's malloc arena, not a
    // request worker's (`allocator`).
    crate::storage::cache_thread::handle();
    crate::allocator::spawn_trimmer();
    if let Some((before, after)) = crate::open_files::raise_to_hard_limit() {
        tracing::debug!("open-file limit raised from {before} to {after}");
    }
    for warning in registry.snapshot().warnings() {
        tracing::warn!("{warning}");
    }
    // Serve's console says the kinds' changes from the first: what comes
    // while it starts waits for it. A server without one (`--in-cluster`)
    // leaves them to the registry's log.
    let in_cluster = args.in_cluster && !args.standalone;
    let following = (!in_cluster).then(|| registry.follow());
    let _file_watch = registry
        .watch_source(source.clone())
        .map_err(|e| CliError::other(format!("watch {}", source.path().display()), e))?;
    let Some(following) = following else {
        return in_cluster::serve(&args, registry, ctx).await;
    };
    if args.standalone {
        return standalone::serve_standalone(&args, registry, following).await;
    }
    match route {
        RouteArg::None => unregistered::serve_unregistered(&args, registry, following, ctx).await,
        route => session::serve_session(&args, registry, following, route, ctx)
            .await
            .map_err(session::with_rights_hint),
    }
}

/// `1 kind`, `3 kinds`: how many kinds a start line serves.
fn kinds_count(n: usize) -> String {
    if n == 1 {
        "1 kind".to_owned()
    } else {
        format!("{n} kinds")
    }
}

/// kubectl's `-n` and `-o` mean something only for some of serve's modes;
/// elsewhere they are refused rather than ignored.
fn check_global_flags(args: &ServeArgs, ctx: &Ctx) -> Result<(), CliError> {
    if ctx.global().namespace.is_some() {
        return Err(CliError::Usage(
            "serve takes no -n/--namespace: it serves every namespace, and a session's own objects go in \
             --session-namespace (default kubectl-cozy-system)"
                .into(),
        ));
    }
    match ctx.global().output.as_ref().map(|o| o.format) {
        None => Ok(()),
        Some(format) if args.dry_run || args.print_rbac => {
            if OUTPUT_FORMATS.contains(&format) {
                Ok(())
            } else {
                Err(CliError::Usage(format!(
                    "--dry-run and --print-rbac print {}",
                    crate::output::describe_formats(OUTPUT_FORMATS)
                )))
            }
        }
        Some(_) => Err(CliError::Usage(
            "-o applies to --dry-run and --print-rbac only".into(),
        )),
    }
}

/// `--state-dir`, else the default (under `XDG_STATE_HOME` or `HOME`):
/// created owner-only, and refused when another user owns it or may write
/// to it, since the CA its certificates are trusted by lives there.
fn state_dir(args: &ServeArgs) -> Result<std::path::PathBuf, CliError> {
    use crate::storage::private_files;
    let dir = match &args.state_dir {
        Some(dir) => dir.clone(),
        None => crate::register::credentials::default_state_dir().map_err(CliError::Usage)?,
    };
    private_files::create_dir(&dir)
        .map_err(|e| CliError::io(format!("create {}", dir.display()), e))?;
    private_files::check_trusted_dir(&dir)
        .map_err(|e| CliError::other(format!("use the state directory {}", dir.display()), e))?;
    Ok(dir)
}
