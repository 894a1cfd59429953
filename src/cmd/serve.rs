//! `kubectl cozy serve`: the local extension API server. Not implemented in
//! this build; it says so and exits non-zero.

use std::path::PathBuf;

use clap::{Args, ValueHint};

use crate::cli::{CliError, Ctx, ExitStatus};

/// Arguments of `kubectl cozy serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve without any cluster, over an embedded store, and write a kubeconfig for it
    #[arg(long)]
    pub standalone: bool,

    /// Kind definitions: a file or a directory of YAML files
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath)]
    pub kinds: Option<PathBuf>,
}

/// Runs `serve`.
pub async fn run(_args: ServeArgs, _ctx: &Ctx) -> Result<ExitStatus, CliError> {
    Err(CliError::NotAvailable {
        command: "serve",
        version: env!("CARGO_PKG_VERSION"),
        hint: "the extension API server lands in a later release",
    })
}
