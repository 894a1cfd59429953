//! `kubectl cozy kinds scaffold`.

use std::path::PathBuf;

use clap::{Args, ValueHint};

use crate::cli::{CliError, Ctx, ExitStatus};

/// Arguments of `kubectl cozy kinds scaffold`.
#[derive(Debug, Args)]
pub struct ScaffoldArgs {
    /// A chart directory or a packaged chart (.tgz)
    #[arg(value_name = "CHART", value_hint = ValueHint::AnyPath)]
    pub chart: Option<PathBuf>,
}

/// Runs `kinds scaffold`.
pub async fn run(_args: ScaffoldArgs, _ctx: &Ctx) -> Result<ExitStatus, CliError> {
    Err(CliError::NotAvailable {
        command: "kinds scaffold",
        version: env!("CARGO_PKG_VERSION"),
        hint: "chart scaffolding lands in a later release",
    })
}
