//! `kubectl cozy kinds …`: list served kinds, scaffold kind definitions.

pub mod list;
pub mod scaffold;

use clap::Subcommand;

use crate::cli::{CliError, Ctx, ExitStatus};

/// Subcommands of `kubectl cozy kinds`.
#[derive(Debug, Subcommand)]
pub enum KindsCommand {
    /// List kinds from local definitions or from the live cluster
    List(list::ListArgs),
    /// Turn a Helm chart into a kind definition
    Scaffold(Box<scaffold::ScaffoldArgs>),
}

/// Runs a `kinds` subcommand.
pub async fn run(command: KindsCommand, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    match command {
        KindsCommand::List(args) => list::run(args, ctx).await,
        KindsCommand::Scaffold(args) => scaffold::run(*args, ctx).await,
    }
}
