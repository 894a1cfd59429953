//! `kubectl cozy doctor`: APIService health and stuck-namespace diagnosis.
//! Not implemented in this build; it says so instead of printing anything that
//! looks like a diagnosis.

use clap::Args;

use crate::cli::{CliError, Ctx, ExitStatus};

/// Arguments of `kubectl cozy doctor`.
#[derive(Debug, Args)]
#[command(
    long_about = "Diagnose APIService health and explain namespaces stuck in Terminating.\n\n\
Exits 0 when healthy, 3 when problems are found."
)]
pub struct DoctorArgs {
    /// Check every namespace instead of only the Terminating ones
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}

/// Runs `doctor`.
pub async fn run(_args: DoctorArgs, _ctx: &Ctx) -> Result<ExitStatus, CliError> {
    Err(CliError::NotAvailable {
        command: "doctor",
        version: env!("CARGO_PKG_VERSION"),
        hint: "inspect APIServices with `kubectl get apiservices` meanwhile",
    })
}
