//! kubectl-compatible global flags, accepted before or after any subcommand.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueHint};

use crate::output::OutputFormat;

const HEADING: &str = "Global options";

/// Flags every subcommand accepts, spelled as kubectl spells them.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)
    #[arg(long, global = true, value_name = "PATH", value_hint = ValueHint::FilePath, help_heading = HEADING)]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use
    #[arg(long, global = true, value_name = "NAME", help_heading = HEADING)]
    pub context: Option<String>,

    /// The kubeconfig cluster to use
    #[arg(long, global = true, value_name = "NAME", help_heading = HEADING)]
    pub cluster: Option<String>,

    /// The kubeconfig user to use
    #[arg(long, global = true, value_name = "NAME", help_heading = HEADING)]
    pub user: Option<String>,

    /// Namespace scope (default: the context's namespace)
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE", help_heading = HEADING)]
    pub namespace: Option<String>,

    /// Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_request_timeout,
          help_heading = HEADING)]
    pub request_timeout: Option<Duration>,

    /// Output format
    #[arg(short = 'o', long, global = true, value_enum, value_name = "FORMAT", help_heading = HEADING)]
    pub output: Option<OutputFormat>,

    /// Disable colors (also when NO_COLOR is set or output is not a terminal)
    #[arg(long, global = true, help_heading = HEADING)]
    pub no_color: bool,

    /// Log verbosity on stderr, kubectl's scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace
    #[arg(short = 'v', long = "v", global = true, value_name = "LEVEL", default_value_t = 0,
          help_heading = HEADING)]
    pub verbosity: u8,
}

impl GlobalArgs {
    fn color_allowed(&self) -> bool {
        !self.no_color && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    }

    /// Whether stdout output may use colors.
    pub fn stdout_color(&self) -> bool {
        self.color_allowed() && std::io::stdout().is_terminal()
    }

    /// Whether stderr output (logs, errors, progress) may use colors.
    pub fn stderr_color(&self) -> bool {
        self.color_allowed() && std::io::stderr().is_terminal()
    }
}

/// Parses kubectl's `--request-timeout`: `0` for no limit, a bare number of
/// seconds, or a Go-style duration such as `1m30s`, `500ms`, `2h`.
pub fn parse_request_timeout(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let invalid = || {
        format!("invalid duration {s:?}: use 0, a number of seconds, or a value like 30s, 2m, 1h")
    };
    let mut total = Duration::ZERO;
    let mut rest = s;
    if rest.is_empty() {
        return Err(invalid());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        if digits == 0 {
            return Err(invalid());
        }
        let value: f64 = rest[..digits].parse().map_err(|_| invalid())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per_unit = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(invalid()),
        };
        total += Duration::from_secs_f64(value * seconds_per_unit);
        rest = &rest[unit_len..];
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeout_accepts_kubectl_forms() {
        assert_eq!(parse_request_timeout("0"), Ok(Duration::ZERO));
        assert_eq!(parse_request_timeout("15"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_request_timeout("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(
            parse_request_timeout("500ms"),
            Ok(Duration::from_millis(500))
        );
        assert_eq!(parse_request_timeout("2h"), Ok(Duration::from_secs(7200)));
        assert!(parse_request_timeout("").is_err());
        assert!(parse_request_timeout("soon").is_err());
        assert!(parse_request_timeout("5 parsecs").is_err());
        assert!(parse_request_timeout("s").is_err());
    }
}
