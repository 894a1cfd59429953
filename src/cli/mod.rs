//! The command line: the clap definition of `kubectl cozy`, the program name
//! shown in help (`kubectl cozy` when run as a kubectl plugin), logging set-up,
//! dispatch to [`crate::cmd`], and the mapping of errors to exit codes.

mod console_events;
mod ctx;
mod error;
mod global;
pub mod man;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

pub use ctx::Ctx;
pub use error::{CliError, ExitStatus, unreachable_note};
pub use global::{GlobalArgs, parse_duration, parse_request_timeout};

use crate::cmd;

const LONG_ABOUT: &str = "\
Run Kubernetes extension API servers locally, keep APIServices healthy, and turn Helm charts into
Kubernetes kinds.

kubectl-cozy serves Cozystack-style kinds (Postgres, Redis, … in apps.cozystack.io/v1alpha1), each
object stored as a Flux HelmRelease, through the Kubernetes API aggregation layer.";

const AFTER_HELP: &str = "\
Examples:
  # Serve the example kinds with no cluster at all, then use them with kubectl
  kubectl cozy serve --standalone --kinds examples/kinds

  # Explain why namespaces are stuck in Terminating
  kubectl cozy doctor

  # Turn a Helm chart into a kind definition
  kubectl cozy kinds scaffold examples/charts/postgres

Exit codes:
  0  success          1  error             2  usage error
  3  problems found (doctor)               4  cluster unreachable or not Kubernetes
  5  doctor could not run every check (permissions, timeouts); nothing wrong in what it checked";

/// The `kubectl cozy` command line.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-cozy",
    version,
    about = "Run Kubernetes extension API servers locally, diagnose APIServices, scaffold kinds from Helm charts",
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
    max_term_width = 110
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands of `kubectl cozy`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the extension API server locally and register it with the cluster
    Serve(cmd::serve::ServeArgs),
    /// Install the server in the cluster: a Deployment, its Service, certificate and APIServices
    Install(Box<cmd::install::InstallArgs>),
    /// Diagnose APIService health and namespaces stuck in Terminating
    Doctor(cmd::doctor::DoctorArgs),
    /// List served kinds and scaffold kind definitions from Helm charts
    // `help` is the root's alone, as kubectl's is: `kubectl cozy help kinds list`.
    #[command(subcommand, disable_help_subcommand = true, after_help = KINDS_EXAMPLES)]
    Kinds(Box<cmd::kinds::KindsCommand>),
    /// Print shell completion scripts, or install kubectl's plugin completer
    Completion(cmd::completion::CompletionArgs),
    /// Print the client version and, when a cluster is reachable, the server version
    #[command(after_help = VERSION_EXAMPLES)]
    Version(cmd::version::VersionArgs),
    /// Print the list of flags inherited by all commands
    #[command(after_help = OPTIONS_EXAMPLES)]
    Options,
    /// Run the in-cluster end of serve's reverse tunnel (used by the agent pod)
    #[command(hide = true)]
    TunnelAgent(cmd::tunnel_agent::TunnelAgentArgs),
    /// The local guard of a serve session (started by serve)
    #[command(hide = true)]
    SessionGuard(cmd::session_guard::SessionGuardArgs),
}

const KINDS_EXAMPLES: &str = "\
Examples:
  # The kinds the live cluster serves through kubectl-cozy
  kubectl cozy kinds list

  # Turn a Helm chart into a kind definition
  kubectl cozy kinds scaffold examples/charts/postgres";

const VERSION_EXAMPLES: &str = "\
Examples:
  # Client and server versions
  kubectl cozy version

  # This binary's version only, without contacting a cluster
  kubectl cozy version --client -o json";

const OPTIONS_EXAMPLES: &str = "\
Examples:
  # The flags every command accepts
  kubectl cozy options";

/// The name under which help and usage present the program: `kubectl cozy`
/// when the binary is named `kubectl-cozy` (as kubectl runs plugins), else the
/// binary's own file name.
pub fn display_name(argv0: Option<&OsString>) -> String {
    let base = argv0
        .and_then(|a| {
            std::path::Path::new(a)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "kubectl-cozy".to_owned());
    match base.strip_prefix("kubectl-") {
        // kubectl maps `kubectl-foo_bar` to `kubectl foo-bar`.
        Some(plugin) if !plugin.is_empty() => format!("kubectl {}", plugin.replace('_', "-")),
        _ => base,
    }
}

/// The clap command with the display name applied, for parsing and for tools
/// (completion scripts, the completion engine) that introspect it.
///
/// As in kubectl, `--help` shows a command's examples first and its own flags,
/// and leaves the global flags to `kubectl cozy options`: they stay parsed and
/// completed everywhere, only the help text omits them.
pub fn command_named(name: &str) -> clap::Command {
    let footer = format!(
        "Use \"{name} options\" for a list of global command-line options (applies to all commands)."
    );
    with_help_layout(Cli::command(), &footer)
        .bin_name(name.to_owned())
        .display_name(name.to_owned())
}

/// Applies kubectl's help layout to the root command and all its
/// subcommands: about, examples (clap's `after_help`, copied into the
/// template as it is, so that clap never wraps an example command across
/// lines), usage, the command's own options, then `footer`. The global options, defined on the root and
/// propagated by clap when it builds the command, are hidden from help (not
/// from parsing or completion).
fn with_help_layout(mut cmd: clap::Command, footer: &str) -> clap::Command {
    let global_ids: Vec<clap::Id> = GlobalArgs::augment_args(clap::Command::new("globals"))
        .get_arguments()
        .map(|a| a.get_id().clone())
        .collect();
    for id in &global_ids {
        cmd = cmd.mut_arg(id, |a| a.hide_short_help(true).hide_long_help(true));
    }
    with_help_template(cmd, footer, &[])
}

/// The help template of `cmd` (at `path`, its subcommand names from the
/// root) and of its subcommands. A command that prints `-o` formats
/// ([`crate::cmd::output_formats`]) names them after its options, as
/// kubectl's commands do in theirs (the flag itself is a global one).
fn with_help_template(cmd: clap::Command, footer: &str, path: &[String]) -> clap::Command {
    // `{after-help}` would wrap the examples at the terminal's width, cutting
    // long commands in two; the template's own text is written as it is.
    // (Tags in braces are clap's: an example's `${fpath[1]}` is not one and
    // stays as written, but clap drops a `{` right before another, so no
    // example can show a Go template's `{{`; a test checks every example.)
    let examples = cmd
        .get_after_help()
        .map(|h| format!("\n\n{h}"))
        .unwrap_or_default();
    let names: Vec<&str> = path.iter().map(String::as_str).collect();
    let formats = crate::cmd::output_formats(&names)
        .map(|formats| {
            let list: Vec<&str> = formats.iter().map(|f| f.spelled()).collect();
            format!("\n\nOutput formats (-o, --output): {}", list.join(", "))
        })
        .unwrap_or_default();
    let template = format!(
        "{{about}}{examples}\n\n{{usage-heading}} {{usage}}\n\n{{all-args}}{formats}\n\n{footer}"
    );
    let mut cmd = cmd.help_template(template);
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for sub in names {
        let mut sub_path = path.to_vec();
        sub_path.push(sub.clone());
        cmd = cmd.mut_subcommand(sub, |s| with_help_template(s, footer, &sub_path));
    }
    cmd
}

/// The help text of `kubectl cozy options`: every global flag, with its help.
pub fn global_options_help(name: &str) -> String {
    let cmd = GlobalArgs::augment_args(clap::Command::new("options"))
        .bin_name(format!("{name} options"))
        .about("The following options can be passed to any command:")
        .help_template("{about-with-newline}\n{all-args}\n")
        .disable_help_flag(true);
    let mut cmd = cmd;
    cmd.render_long_help().to_string()
}

/// Parses the process arguments, runs the chosen subcommand and returns the
/// documented exit code.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if is_completer(args.first()) {
        return crate::complete::main(command_named("kubectl cozy"), crate::cmd::output_formats);
    }
    let name = display_name(args.first());
    let cmd = command_named(&name).color(clap_color(&args));
    let matches = match cmd.try_get_matches_from(&args) {
        Ok(m) => m,
        Err(err) => return print_clap_error(err),
    };
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => return print_clap_error(err),
    };
    // Serve refuses flags its mode ignores: which were typed, not defaulted.
    if let (Command::Serve(args), Some(("serve", sub))) = (&mut cli.command, matches.subcommand()) {
        args.note_given(sub);
    }
    // Logs kept in a file or a pod's log keep tracing's full lines.
    let keeps_a_log = match &cli.command {
        Command::TunnelAgent(_) | Command::SessionGuard(_) => true,
        Command::Serve(args) => args.in_cluster,
        _ => false,
    };
    init_logging(cli.global.verbosity, &cli.global, keeps_a_log);
    let verbosity = cli.global.verbosity;
    let (result, server, context) = run(cli, &name);
    error::report(result, server.as_deref(), context.as_deref(), verbosity)
}

/// `--no-color` turns off clap's colours too (its errors, usage and help),
/// which clap decides before it parses: `NO_COLOR` it reads itself. Only
/// words before `--` count, as for parsing.
fn clap_color(args: &[OsString]) -> clap::ColorChoice {
    let no_color = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--no-color");
    if no_color {
        clap::ColorChoice::Never
    } else {
        clap::ColorChoice::Auto
    }
}

fn is_completer(argv0: Option<&OsString>) -> bool {
    argv0
        .and_then(|a| {
            std::path::Path::new(a)
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .is_some_and(|n| n.starts_with("kubectl_complete-"))
}

fn print_clap_error(err: clap::Error) -> ExitCode {
    let code = err.exit_code();
    if let Err(io) = err.print()
        && io.kind() != std::io::ErrorKind::BrokenPipe
    {
        return ExitCode::from(ExitStatus::Error.code());
    }
    // clap uses 0 for --help/--version and 2 for usage errors, as we document.
    ExitCode::from(u8::try_from(code).unwrap_or(ExitStatus::Usage.code()))
}

/// Runs the chosen subcommand; also returns the API server the command talked
/// to, if it loaded a kubeconfig, so errors can name it, and (after an
/// error) the context it used.
fn run(cli: Cli, name: &str) -> (Result<ExitStatus, CliError>, Option<String>, Option<String>) {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return (
                Err(CliError::other("start the async runtime", e)),
                None,
                None,
            );
        }
    };
    let mut global = cli.global;
    if let Err(e) = global.resolve_output() {
        return (Err(CliError::Usage(e)), None, None);
    }
    let ctx = Ctx::new(global);
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => cmd::serve::run(args, &ctx).await,
            Command::Install(args) => cmd::install::run(*args, &ctx).await,
            Command::Doctor(args) => cmd::doctor::run(args, &ctx).await,
            Command::Kinds(kinds) => cmd::kinds::run(*kinds, &ctx).await,
            Command::Completion(args) => cmd::completion::run(args, &ctx).await,
            Command::Version(args) => cmd::version::run(args, &ctx).await,
            Command::Options => {
                let text = global_options_help(name);
                std::io::Write::write_all(&mut ctx.stdout(), text.as_bytes())
                    .map_err(|e| CliError::io("write the global options", e))
                    .map(|()| ExitStatus::Success)
            }
            Command::TunnelAgent(args) => cmd::tunnel_agent::run(args, &ctx).await,
            Command::SessionGuard(args) => cmd::session_guard::run(args, &ctx).await,
        }
    });
    let server = ctx.server_url();
    let context = match (&result, &server) {
        (Err(_), Some(_)) => ctx.context_name(),
        _ => None,
    };
    (result, server, context)
}

/// Logs go to stderr through tracing. `-v N` follows kubectl's scale: 0 shows
/// warnings, 1–3 info, 4–5 debug, 6 and more trace and every request the
/// command sends (method, URL, status, time); `RUST_LOG` overrides it. At
/// the default verbosity a command that `keeps_a_log` not says its warnings
/// as lines of its own ([`console_events`]).
fn init_logging(verbosity: u8, global: &GlobalArgs, keeps_a_log: bool) {
    let level = match verbosity {
        0 => "warn",
        1..=3 => "info",
        4..=5 => "debug",
        _ => "trace",
    };
    // kube's HTTP trace layer logs every 5xx at error level, and its client
    // every answer that is not a success as a `Status` dump at debug level;
    // the command reports failures itself (`doctor` expects 503s from dead
    // APIServices, `serve` 404s from objects it looks for). The request log
    // (`kube_client::request_log`) says which in one line per request from
    // `-v 6`, as kubectl's `-v 6` does; the dumps, answers' bodies, show from
    // `-v 8`, where kubectl shows bodies.
    let requests = if verbosity >= 6 { level } else { "off" };
    // Its client also warns with the whole body of an answer that does not
    // decode (an HTML page where JSON was expected), which the command
    // names itself: shown from `-v 4` on.
    let kube_answers = match verbosity {
        0..=3 => "error",
        4..=7 => "info",
        _ => level,
    };
    // kube's TLS warns on every connection of a cluster with
    // `insecure-skip-tls-verify: true`; kubectl says nothing there, so it
    // shows only when debugging.
    let tls = if verbosity >= 4 { level } else { "error" };
    let from_env = tracing_subscriber::EnvFilter::try_from_default_env().ok();
    let console = verbosity == 0 && from_env.is_none() && !keeps_a_log;
    let filter = from_env.unwrap_or_else(|| {
        tracing_subscriber::EnvFilter::new(format!(
            "kubectl_cozy={level},kube={level},kubectl_cozy::http={requests},\
             kube_client::client={kube_answers},kube_client::client::builder={requests},\
             kube_client::client::tls={tls}"
        ))
    });
    let events = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(global.stderr_color());
    let _ = if console {
        events
            .event_format(console_events::ConsoleEvents)
            .try_init()
    } else {
        events.with_target(verbosity >= 4).try_init()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn scaffold_from_a_repository_index_asks_for_what_is_missing_only() {
        let error = |args: &[&str]| {
            let mut argv = vec!["kubectl-cozy", "kinds", "scaffold"];
            argv.extend_from_slice(args);
            Cli::try_parse_from(argv).unwrap_err().to_string()
        };
        // --chart alone: the index is missing, not a chart path.
        let text = error(&["--chart", "redis"]);
        assert!(text.contains("--repo-index <INDEX>"), "{text}");
        assert!(!text.contains("<CHART>\n"), "{text}");
        let text = error(&["--repo-index", "index.yaml"]);
        assert!(text.contains("--chart <NAME[@VERSION]>"), "{text}");
        // A chart path with the index is one or the other (with --chart
        // alone, `run` says --chart belongs to --repo-index).
        let text = error(&["./redis", "--repo-index", "i.yaml", "--chart", "redis"]);
        assert!(text.contains("cannot be used with"), "{text}");
        assert!(Cli::try_parse_from(["kubectl-cozy", "kinds", "scaffold", "./redis"]).is_ok());
        assert!(
            Cli::try_parse_from([
                "kubectl-cozy",
                "kinds",
                "scaffold",
                "--repo-index",
                "i.yaml",
                "--chart",
                "redis"
            ])
            .is_ok()
        );
    }

    #[test]
    fn doctor_fix_options_need_fix() {
        let parse = |args: &[&str]| {
            let mut argv = vec!["kubectl-cozy", "doctor"];
            argv.extend_from_slice(args);
            Cli::try_parse_from(argv)
        };
        for args in [
            &["--wait", "5s"][..],
            &["--yes"],
            &["--finalize-namespaces"],
        ] {
            let err = parse(args).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains("--fix"), "{args:?}: {err}");
        }
        assert!(parse(&[]).is_ok());
        assert!(parse(&["--fix", "--wait", "5s"]).is_ok());
        // 0 is "no wait" and "every deletion" there, not "no limit".
        for flag in ["--wait", "--stuck-after"] {
            let err = parse(&["--fix", flag, "-1s"])
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("is negative") && !err.contains("no limit"),
                "{flag}: {err}"
            );
        }
        let err = parse(&["--probe-timeout", "-1s"])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains("use 0 for no limit"), "{err}");
    }

    #[test]
    fn plugin_name_is_shown_as_kubectl_subcommand() {
        assert_eq!(
            display_name(Some(&OsString::from("/usr/local/bin/kubectl-cozy"))),
            "kubectl cozy"
        );
        assert_eq!(
            display_name(Some(&OsString::from("kubectl-cozy_dev"))),
            "kubectl cozy-dev"
        );
        assert_eq!(
            display_name(Some(&OsString::from("./target/debug/cozy"))),
            "cozy"
        );
        assert_eq!(display_name(None), "kubectl cozy");
    }

    #[test]
    fn completer_is_recognised_by_argv0() {
        assert!(is_completer(Some(&OsString::from(
            "/bin/kubectl_complete-cozy"
        ))));
        assert!(!is_completer(Some(&OsString::from("/bin/kubectl-cozy"))));
    }

    #[test]
    fn help_leaves_global_options_to_the_options_command() {
        let mut cmd = command_named("kubectl cozy");
        let serve = cmd.find_subcommand_mut("serve").unwrap();
        let help = serve.render_long_help().to_string();
        assert!(!help.contains("--kubeconfig <PATH>"), "{help}");
        assert!(help.contains("--standalone"), "{help}");
        assert!(
            help.contains("Use \"kubectl cozy options\" for a list of global"),
            "{help}"
        );
        let examples = help.find("Examples:").unwrap();
        let usage = help.find("Usage:").unwrap();
        assert!(examples < usage, "examples come first: {help}");
        // A command's own `-o` formats are named in its help (the flag is
        // global), and none where it prints none.
        let kinds = cmd.find_subcommand_mut("kinds").unwrap();
        let list = kinds.find_subcommand_mut("list").unwrap();
        let help = list.render_help().to_string();
        assert!(
            help.contains("Output formats (-o, --output): table, wide, json, yaml, name"),
            "{help}"
        );
        let completion = cmd.find_subcommand_mut("completion").unwrap();
        let help = completion.render_long_help().to_string();
        assert!(!help.contains("Output formats"), "{help}");

        let options = global_options_help("kubectl cozy");
        for flag in [
            "--kubeconfig",
            "--context",
            "--namespace",
            "--request-timeout",
            "--v",
        ] {
            assert!(options.contains(flag), "{flag} in {options}");
        }
    }

    #[test]
    fn global_flags_still_parse_after_a_subcommand() {
        let matches = command_named("kubectl cozy")
            .try_get_matches_from(["kubectl-cozy", "version", "--context", "dev", "-n", "x"])
            .unwrap();
        let cli = Cli::from_arg_matches(&matches).unwrap();
        assert_eq!(cli.global.context.as_deref(), Some("dev"));
        assert_eq!(cli.global.namespace.as_deref(), Some("x"));
    }

    /// Regression: `-V/--version` was offered on every subcommand
    /// (`kubectl cozy version --version` printed `kubectl cozy-version 0.1.0`).
    #[test]
    fn version_flag_is_the_roots_alone() {
        let parse = |args: &[&str]| command_named("kubectl cozy").try_get_matches_from(args);
        let err = parse(&["kubectl-cozy", "--version"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayVersion);
        for sub in [&["version"][..], &["kinds", "list"], &["serve"]] {
            let mut args = vec!["kubectl-cozy"];
            args.extend(sub);
            args.push("--version");
            let err = parse(&args).unwrap_err();
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::UnknownArgument,
                "{args:?}"
            );
        }
    }

    #[test]
    fn no_color_also_turns_off_claps_colours() {
        let args = |words: &[&str]| -> Vec<OsString> { words.iter().map(OsString::from).collect() };
        assert_eq!(
            clap_color(&args(&["kubectl-cozy", "version", "--no-color", "--bad"])),
            clap::ColorChoice::Never
        );
        assert_eq!(
            clap_color(&args(&["kubectl-cozy", "--no-color", "--help"])),
            clap::ColorChoice::Never
        );
        assert_eq!(
            clap_color(&args(&["kubectl-cozy", "version"])),
            clap::ColorChoice::Auto
        );
        assert_eq!(
            clap_color(&args(&["kubectl-cozy", "serve", "--", "--no-color"])),
            clap::ColorChoice::Auto
        );
    }

    /// Regression: clap wrapped the examples at the terminal's width, so
    /// `kinds scaffold --help` cut a command in two (`--format` /
    /// `cozystack`). Every example line shows as written, however narrow
    /// the terminal.
    #[test]
    fn examples_are_never_wrapped() {
        fn walk(cmd: &mut clap::Command, path: &str, broken: &mut Vec<String>) {
            if let Some(examples) = cmd.get_after_help().map(|h| h.to_string()) {
                for long in [false, true] {
                    let help = if long {
                        cmd.render_long_help()
                    } else {
                        cmd.render_help()
                    }
                    .to_string();
                    let lines: Vec<&str> = help.lines().collect();
                    for line in examples.lines().filter(|l| !l.trim().is_empty()) {
                        if !lines.contains(&line) {
                            broken.push(format!("{path}: {line}"));
                        }
                    }
                }
            }
            let names: Vec<String> = cmd
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(|s| s.get_name().to_owned())
                .collect();
            for name in names {
                let sub = cmd.find_subcommand_mut(&name).expect("listed");
                walk(sub, &format!("{path} {name}"), broken);
            }
        }
        let mut cmd = command_named("kubectl cozy").term_width(40);
        cmd.build();
        let mut broken = Vec::new();
        walk(&mut cmd, "kubectl cozy", &mut broken);
        assert!(
            broken.is_empty(),
            "wrapped or missing example lines: {broken:#?}"
        );
    }

    #[test]
    fn help_says_kubectl_cozy() {
        let help = command_named("kubectl cozy").render_help().to_string();
        assert!(
            help.contains("Usage: kubectl cozy [OPTIONS] <COMMAND>"),
            "{help}"
        );
    }
}
