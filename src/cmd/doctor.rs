//! `kubectl cozy doctor`: APIService health and stuck-namespace diagnosis,
//! with `--fix`. This file maps flags to [`crate::doctor`] options, drives
//! diagnose → plan → confirm → apply, asks the plan's questions at the
//! terminal (dialoguer, [`TerminalConfirmer`]), and prints; the logic lives
//! in [`crate::doctor`].

use std::io::{IsTerminal, Write};
use std::time::Duration;

use clap::Args;

use crate::cli::{CliError, Ctx, ExitStatus, parse_duration, parse_request_timeout};
use crate::doctor::findings::{ScopeKind, Verdict};
use crate::doctor::fix::{self, Confirmer, FixOptions};
use crate::doctor::requester::Requester;
use crate::doctor::{self, Options, render};
use crate::output::{self, OutputFormat, progress};

/// The `-o` formats `doctor` prints its report in: all of them.
pub const OUTPUT_FORMATS: &[OutputFormat] = &[
    OutputFormat::Table,
    OutputFormat::Wide,
    OutputFormat::Json,
    OutputFormat::Yaml,
    OutputFormat::Name,
    OutputFormat::JsonPath,
    OutputFormat::JsonPathFile,
    OutputFormat::JsonPathAsJson,
    OutputFormat::GoTemplate,
    OutputFormat::GoTemplateFile,
    OutputFormat::CustomColumns,
    OutputFormat::CustomColumnsFile,
];

/// Arguments of `kubectl cozy doctor`.
#[derive(Debug, Args)]
#[command(
    long_about = "Diagnose APIService health and explain namespaces stuck in Terminating.\n\n\
Checks every APIService (Available condition, backing Service and ready endpoints, caBundle expiry, a live probe of\n\
/apis/<group>/<version>, and `kubectl cozy serve` sessions with expired Leases), every Terminating namespace (or -n NS)\n\
with its conditions, the objects and finalizers still in it and who owns them, and admission webhooks with\n\
failurePolicy Fail and no backend. Every finding carries the evidence it was read from and the command that fixes it.\n\n\
With --fix, builds a plan and shows it (a dry run unless confirmed at the terminal or given --yes), applies it step by\n\
step, re-reading every object before and after, and reports what is still stuck.",
    after_help = "\
Examples:
  # Why are namespaces stuck in Terminating? Which APIServices are broken?
  kubectl cozy doctor

  # One namespace, as JSON (schema: kubectl-cozy.io/v1alpha1 DoctorReport)
  kubectl cozy doctor -n team-a -o json

  # Show the fix plan, then apply it without prompting
  kubectl cozy doctor --fix
  kubectl cozy doctor --fix --yes

  # Last resort for namespaces still stuck after every other fix
  kubectl cozy doctor --fix --finalize-namespaces

Exit codes: 0 healthy, 3 problems found, 5 some checks could not run (nothing wrong in the rest),
1 error, 4 cluster unreachable or not a Kubernetes API server. After an applied --fix the code describes the state after the fix."
)]
pub struct DoctorArgs {
    /// Check every namespace: also objects stuck in deletion outside Terminating namespaces (-n is then ignored)
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,

    /// Build a fix plan and show it; apply it after a confirmation at the terminal, or with --yes
    #[arg(long)]
    pub fix: bool,

    /// Apply the fix plan without asking
    #[arg(short = 'y', long, requires = "fix")]
    pub yes: bool,

    /// Also plan, as a last resort, clearing spec.finalizers through /finalize for namespaces still stuck
    /// after the other actions (objects left in them stay in etcd)
    #[arg(long, requires = "fix")]
    pub finalize_namespaces: bool,

    /// Time limit for each APIService probe (the aggregator's own availability check allows 5s; 0: the
    /// request timeout's)
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_request_timeout, allow_hyphen_values = true)]
    pub probe_timeout: Duration,

    /// How long --fix waits for unblocked namespaces to finish deleting (0: no wait)
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration,
          requires = "fix", allow_hyphen_values = true)]
    pub wait: Duration,

    /// Deletion older than this counts as stuck rather than in progress (0: every deletion)
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration, allow_hyphen_values = true)]
    pub stuck_after: Duration,

    /// Warn about caBundle certificates that expire within this many days
    #[arg(long, value_name = "DAYS", default_value_t = 30)]
    pub ca_warn_days: i64,

    /// API requests in flight at most
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
}

/// Each probe's limit: `--probe-timeout`, 0 being no limit of its own (as
/// for `--request-timeout`), never over the request timeout.
fn probe_limit(probe_timeout: Duration, request_timeout: Duration) -> Duration {
    if probe_timeout.is_zero() {
        request_timeout
    } else {
        probe_timeout.min(request_timeout)
    }
}

/// Per-request limit when `--request-timeout` is not given.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `doctor`.
pub async fn run(args: DoctorArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let global = ctx.global();
    // As kubectl: -A wins over -n.
    let (scope, namespace) = match (args.all_namespaces, &global.namespace) {
        (true, _) => (ScopeKind::All, None),
        (false, Some(ns)) => (ScopeKind::Namespace, Some(ns.clone())),
        (false, None) => (ScopeKind::Terminating, None),
    };
    let format = ctx.output_in(OutputFormat::Table, OUTPUT_FORMATS, "doctor")?;
    let request_timeout = match global.request_timeout {
        Some(t) if t.is_zero() => Duration::from_secs(24 * 3600),
        Some(t) => t,
        None => DEFAULT_REQUEST_TIMEOUT,
    };
    let opts = Options {
        scope,
        namespace,
        require_namespace: true,
        request_timeout,
        probe_timeout: probe_limit(args.probe_timeout, request_timeout),
        concurrency: usize::from(args.concurrency),
        ca_warn_days: args.ca_warn_days,
        stuck_after: args.stuck_after,
    };
    let mut config = ctx.kube_config().await?.clone();
    let server = config.cluster_url.to_string();
    // Doctor wants the server's answers as they are: kube's default retry of
    // 503s (with back-off) would turn a dead APIService into a timeout.
    config.default_retry = false;
    let client = crate::kube_client::client(config)
        .map_err(|e| CliError::other("build the Kubernetes client", e))?;
    let bar = progress::counter("doctor");
    let req = Requester::new(client, opts.concurrency, opts.request_timeout, bar.clone());
    let diagnosis = doctor::diagnose(&req, &server, &opts).await;
    bar.finish_and_clear();
    let mut report = diagnosis.map_err(|source| CliError::Doctor {
        server: server.clone(),
        source,
    })?;

    let mut out = ctx.stdout();
    let wide = format == OutputFormat::Wide;
    let text = matches!(format, OutputFormat::Table | OutputFormat::Wide);
    let write_err = |e| CliError::io("write the doctor report", e);

    if args.fix {
        let fix_opts = FixOptions {
            finalize_namespaces: args.finalize_namespaces,
            wait: args.wait,
        };
        let mut plan = fix::plan(&report, &fix_opts);
        let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        // Show the plan before asking anything.
        if text {
            report.fix = Some(plan.clone());
            out.write_all(render::report(&report, wide).as_bytes())
                .map_err(write_err)?;
            out.write_all(b"\n").map_err(write_err)?;
            out.write_all(render::plan(&plan).as_bytes())
                .map_err(write_err)?;
            out.flush().map_err(write_err)?;
        } else if interactive && !args.yes && !plan.actions.is_empty() {
            eprint!("{}", render::plan(&plan));
        }
        let mut terminal = TerminalConfirmer;
        let approved = fix::confirm(&plan, args.yes, interactive.then_some(&mut terminal))
            .map_err(|e| CliError::other("read the confirmation from the terminal", e))?;
        if let Some(approved) = approved {
            // Nothing approved: no bar to flash `0/0`.
            let bar = match approved.is_empty() {
                true => indicatif::ProgressBar::hidden(),
                false => progress::counter("fixing"),
            };
            let fixer = req.with_progress(bar.clone());
            fix::apply(&fixer, &report, &mut plan, &approved, &fix_opts, &opts).await;
            bar.finish_and_clear();
        }
        if let Some(after) = &plan.after {
            report.result = Verdict::of(&after.findings, &after.unchecked);
        }
        if text {
            let results = render::results(&plan);
            if !results.is_empty() {
                out.write_all(b"\n").map_err(write_err)?;
                out.write_all(results.as_bytes()).map_err(write_err)?;
            }
            writeln!(out, "\n{}", render::verdict(&report, true)).map_err(write_err)?;
        }
        report.fix = Some(plan);
    }

    let written = match format {
        OutputFormat::Json => output::write_json(&mut out, &report),
        f if OutputFormat::TEMPLATES.contains(&f) => {
            ctx.write_template(&mut out, &report, f)?;
            Ok(())
        }
        OutputFormat::Yaml => output::write_yaml(&mut out, &report),
        OutputFormat::Name => out.write_all(render::names(&report).as_bytes()),
        OutputFormat::Table | OutputFormat::Wide if !args.fix => {
            out.write_all(render::report(&report, wide).as_bytes())
        }
        _ => Ok(()),
    };
    written.map_err(write_err)?;
    out.flush().map_err(write_err)?;
    Ok(match report.result {
        Verdict::Healthy => ExitStatus::Success,
        Verdict::ProblemsFound => ExitStatus::ProblemsFound,
        Verdict::Incomplete => ExitStatus::Incomplete,
    })
}

/// Asks `--fix`'s questions on the terminal (stderr), default no.
pub struct TerminalConfirmer;

impl Confirmer for TerminalConfirmer {
    type Error = dialoguer::Error;

    fn yes_no(&mut self, question: &str) -> Result<bool, dialoguer::Error> {
        // Answered with Enter, as the typed-name questions are: a bare
        // `n` would leave its Enter to answer the next question unseen.
        dialoguer::Confirm::with_theme(&dialoguer::theme::SimpleTheme)
            .wait_for_newline(true)
            .with_prompt(question)
            .default(false)
            .interact()
    }

    fn type_in(&mut self, question: &str) -> Result<String, dialoguer::Error> {
        dialoguer::Input::with_theme(&dialoguer::theme::SimpleTheme)
            .with_prompt(question)
            .allow_empty(true)
            .interact_text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_timeout_of_0_is_the_request_timeouts() {
        let s = Duration::from_secs;
        assert_eq!(probe_limit(s(0), s(10)), s(10));
        assert_eq!(probe_limit(s(5), s(10)), s(5));
        assert_eq!(probe_limit(s(30), s(10)), s(10));
    }
}
