//! Exit codes and the one error type the command line reports. Commands return
//! [`CliError`]; [`report`] prints `error: …` with its causes on stderr and
//! chooses the documented exit code. A broken pipe on stdout is not an error.

use std::error::Error as StdError;
use std::io::Write;
use std::process::ExitCode;

/// Documented exit codes of `kubectl cozy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: the command did what was asked.
    Success,
    /// 1: the command failed.
    Error,
    /// 2: the command line was invalid.
    Usage,
    /// 3: `doctor` ran and found problems.
    ProblemsFound,
    /// 4: the cluster could not be reached.
    Unreachable,
    /// 5: `doctor` found nothing wrong but could not run every check
    /// (permissions, timeouts).
    Incomplete,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Error => 1,
            ExitStatus::Usage => 2,
            ExitStatus::ProblemsFound => 3,
            ExitStatus::Unreachable => 4,
            ExitStatus::Incomplete => 5,
        }
    }
}

/// Everything a command can fail with, as the user sees it.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line was well-formed for clap but makes no sense.
    #[error("{0}")]
    Usage(String),
    /// The subcommand exists but is not implemented in this build.
    #[error("`kubectl cozy {command}` is not available yet in kubectl-cozy {version}; {hint}")]
    NotAvailable {
        /// The subcommand, e.g. `doctor`.
        command: &'static str,
        /// This build's version.
        version: &'static str,
        /// What the user can do instead.
        hint: &'static str,
    },
    /// No kubeconfig, or a kubeconfig that does not select a usable context.
    #[error(transparent)]
    Kubeconfig(#[from] crate::kubeconfig::Error),
    /// The cluster did not answer.
    #[error("cannot reach the cluster at {server}")]
    Unreachable {
        /// The API server URL from the kubeconfig.
        server: String,
        /// The transport or HTTP error.
        #[source]
        source: kube::Error,
    },
    /// `doctor` could not produce a report.
    #[error("diagnose the cluster at {server}")]
    Doctor {
        /// The API server URL from the kubeconfig.
        server: String,
        /// Why.
        #[source]
        source: crate::doctor::Error,
    },
    /// Writing to stdout or a file failed.
    #[error("{what}")]
    Io {
        /// What was being written, e.g. `write completion script`.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Any other failure, with what was being done and why it failed.
    #[error("{what}")]
    Other {
        /// What was being done, e.g. `start the async runtime`.
        what: String,
        /// The underlying error.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
}

impl CliError {
    /// Wraps an error with a description of what was being done.
    pub fn other(
        what: impl Into<String>,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Self {
        CliError::Other {
            what: what.into(),
            source: source.into(),
        }
    }

    /// Wraps an I/O error with a description of what was being written.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        CliError::Io {
            what: what.into(),
            source,
        }
    }

    /// The exit status this error maps to.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            CliError::Usage(_) => ExitStatus::Usage,
            CliError::Unreachable { .. } => ExitStatus::Unreachable,
            CliError::Doctor {
                source: crate::doctor::Error::Unreachable(_),
                ..
            } => ExitStatus::Unreachable,
            _ => ExitStatus::Error,
        }
    }

    fn is_broken_pipe(&self) -> bool {
        let mut cur: Option<&(dyn StdError + 'static)> = Some(self);
        while let Some(err) = cur {
            if let Some(io) = err.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return true;
            }
            cur = err.source();
        }
        false
    }
}

/// Prints the error (if any) and returns the exit code.
pub(super) fn report(result: Result<ExitStatus, CliError>) -> ExitCode {
    match result {
        Ok(status) => ExitCode::from(status.code()),
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "error: {err}");
            let mut source = err.source();
            while let Some(cause) = source {
                let _ = writeln!(stderr, "  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::from(err.exit_status().code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_anywhere_in_the_chain_is_detected() {
        let err = CliError::io(
            "write table",
            std::io::Error::from(std::io::ErrorKind::BrokenPipe),
        );
        assert!(err.is_broken_pipe());
        let err = CliError::other("x", std::io::Error::other("boom"));
        assert!(!err.is_broken_pipe());
    }

    #[test]
    fn codes_are_stable() {
        let codes: Vec<u8> = [
            ExitStatus::Success,
            ExitStatus::Error,
            ExitStatus::Usage,
            ExitStatus::ProblemsFound,
            ExitStatus::Unreachable,
            ExitStatus::Incomplete,
        ]
        .iter()
        .map(|s| s.code())
        .collect();
        assert_eq!(codes, vec![0, 1, 2, 3, 4, 5]);
    }
}
