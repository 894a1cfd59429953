//! One module per subcommand. Each exposes its clap arguments and an async
//! `run(args, &Ctx) -> Result<ExitStatus, CliError>`.

pub mod completion;
pub mod doctor;
pub mod install;
pub mod kinds;
pub mod serve;
pub mod tunnel_agent;
pub mod version;
