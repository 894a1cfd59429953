//! `kubectl cozy kinds list`.

use std::path::PathBuf;

use clap::{Args, ValueHint};

use crate::cli::{CliError, Ctx, ExitStatus};

/// Arguments of `kubectl cozy kinds list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Kind definitions: a file or a directory of YAML files (default: the live cluster)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath)]
    pub kinds: Option<PathBuf>,
}

/// Runs `kinds list`.
pub async fn run(_args: ListArgs, _ctx: &Ctx) -> Result<ExitStatus, CliError> {
    Err(CliError::NotAvailable {
        command: "kinds list",
        version: env!("CARGO_PKG_VERSION"),
        hint: "kind definitions land in a later release",
    })
}
