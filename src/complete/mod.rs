//! kubectl's plugin completion protocol (kubectl ≥ 1.26,
//! `k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go`): kubectl runs
//! `kubectl_complete-cozy <words after "kubectl cozy"…> <word being typed>`
//! and reads one candidate per line (`value<TAB>description` allowed) and a
//! final `:<cobra ShellCompDirective>` line.
//!
//! Candidates come from the clap definition (subcommands, flags, enumerated
//! values, the `-o` formats the command prints), from the kubeconfig
//! (contexts, clusters, users) and from the cluster (namespaces, see
//! `cluster.rs`). A value completes file names only when it is
//! a path (clap's `ValueHint::FilePath`, `DirPath`, `AnyPath`; a `PathBuf`
//! argument is `AnyPath`); for any other value (a namespace, an image, a
//! number) the shell is told not to offer files. As in cobra, the value of
//! `--flag=value` completes bare (`json`, not `--output=json`): the shells'
//! scripts keep the flag. [`for_completion`] is the clap definition as
//! completion sees it, shared with `kubectl cozy completion`'s scripts.
//! Later features plug dynamic sources into [`value_candidates`].

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Arg, ArgAction, ValueEnum, ValueHint};

use crate::kubeconfig::{self, Selection};
use crate::output::OutputFormat;

mod cluster;

/// The `-o` formats the command at a path of subcommand names prints, or
/// `None` when it declares none (`cmd::output_formats`, passed in by the
/// callers: the commands use completion, not the other way round).
pub type OutputFormatsOf = fn(&[&str]) -> Option<&'static [OutputFormat]>;

/// Cobra's `ShellCompDirective` bits.
pub mod directive {
    /// Let the shell complete file names too.
    pub const DEFAULT: u32 = 0;
    /// Completion failed.
    pub const ERROR: u32 = 1;
    /// Do not add a space after the completion.
    pub const NO_SPACE: u32 = 2;
    /// Do not fall back to file names.
    pub const NO_FILE_COMP: u32 = 4;
    /// Complete directory names only.
    pub const FILTER_DIRS: u32 = 16;
}

/// A completion answer: candidates with optional descriptions, and a directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completions {
    /// `(value, description)` pairs.
    pub candidates: Vec<(String, String)>,
    /// Cobra directive bits.
    pub directive: u32,
}

impl Completions {
    fn new(directive: u32) -> Self {
        Completions {
            candidates: Vec::new(),
            directive,
        }
    }

    fn push(&mut self, value: impl Into<String>, description: impl Into<String>) {
        self.candidates.push((value.into(), description.into()));
    }

    /// The protocol's text: a line per candidate, then `:<directive>`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (value, description) in &self.candidates {
            out.push_str(value);
            let first_line = description.lines().next().unwrap_or("");
            if !first_line.is_empty() {
                out.push('\t');
                out.push_str(first_line);
            }
            out.push('\n');
        }
        out.push_str(&format!(":{}\n", self.directive));
        out
    }
}

/// Entry point of `kubectl_complete-cozy`: completes the process arguments
/// against `root`, the command line's clap definition (passed in by
/// [`crate::cli`], which owns it).
pub fn main(root: clap::Command, output_formats: OutputFormatsOf) -> ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a: OsString| a.to_string_lossy().into_owned())
        .collect();
    let text = complete(root, output_formats, &args).render();
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// What the words before the one being completed tell us.
struct Position {
    command: clap::Command,
    /// The flag whose value is being typed, if any.
    pending_value: Option<Arg>,
    /// A flag whose value is optional (`install --dry-run`) right before the
    /// word being typed: that word may be its value or the next argument.
    optional_value: Option<Arg>,
    /// Positional arguments already given to `command`.
    positionals: usize,
    /// Flags seen so far, for kubeconfig look-ups (`--kubeconfig`, `--context`).
    selection: Selection,
    /// After `--`, everything is positional.
    after_double_dash: bool,
}

/// Completes `args` against `root` (whose commands print `output_formats`):
/// the words after `kubectl cozy`, the last being the word under the cursor
/// (possibly empty).
pub fn complete(
    root: clap::Command,
    output_formats: OutputFormatsOf,
    args: &[String],
) -> Completions {
    let (typed, words) = match args.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    let root = for_completion(root, output_formats);
    let pos = walk(
        each_command(root, &[], &|cmd, path| {
            hide_unprinted_template_flags(cmd, output_formats(path))
        }),
        words,
    );

    if let Some(arg) = &pos.pending_value {
        return filter(value_candidates(arg, &pos.selection), typed);
    }
    if pos.after_double_dash {
        return filter(word_candidates(&pos), typed);
    }
    // `--output=j` and `-o=j` complete to the bare value (`json`), as cobra
    // answers: kubectl's bash, zsh and fish scripts complete what follows the
    // `=` and keep the flag.
    if let Some((flag, value)) = typed.split_once('=')
        && let Some(arg) = find_flag(&pos.command, flag)
        && takes_value(arg)
    {
        return filter(value_candidates(arg, &pos.selection), value);
    }
    if typed.starts_with('-') {
        return filter(flag_candidates(&pos.command), typed);
    }
    let words = word_candidates(&pos);
    let Some(arg) = &pos.optional_value else {
        return filter(words, typed);
    };
    // The word after a flag with an optional value is that value when it
    // does not start with `-` (clap takes it so), or else the next argument:
    // offer both.
    let mut out = value_candidates(arg, &pos.selection);
    if !words.candidates.is_empty() || words.directive != directive::NO_FILE_COMP {
        out.directive = words.directive;
    }
    out.candidates.extend(words.candidates);
    filter(out, typed)
}

/// The subcommands of the command reached or, when it has none, what its
/// next positional argument takes.
fn word_candidates(pos: &Position) -> Completions {
    let mut out = Completions::new(directive::NO_FILE_COMP);
    if !pos.after_double_dash {
        for sub in pos.command.get_subcommands().filter(|s| !s.is_hide_set()) {
            out.push(
                sub.get_name(),
                sub.get_about().map(|a| a.to_string()).unwrap_or_default(),
            );
        }
    }
    if out.candidates.is_empty()
        && let Some(arg) = pos.command.get_positionals().nth(pos.positionals)
    {
        return value_candidates(arg, &pos.selection);
    }
    out
}

/// The clap definition as completion sees it, for the completer and for the
/// standalone scripts alike: built (the global flags propagated to every
/// subcommand); `-o` of each command offering only the formats it prints
/// (`output_formats`); every value that is neither a path nor
/// enumerated marked [`ValueHint::Other`], which tells every shell not to
/// offer file names.
pub fn for_completion(mut root: clap::Command, output_formats: OutputFormatsOf) -> clap::Command {
    root.build();
    with_value_hints(each_command(root, &[], &|cmd, path| {
        narrow_output_formats(cmd, output_formats(path))
    }))
}

fn with_value_hints(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        if arg.get_action().takes_values()
            && arg.get_value_hint() == ValueHint::Unknown
            && arg.get_possible_values().is_empty()
        {
            arg.value_hint(ValueHint::Other)
        } else {
            arg
        }
    })
    .mut_subcommands(with_value_hints)
}

/// `change` applied to `cmd` and every command below it, each with its path
/// of subcommand names below the root (`["kinds", "scaffold"]`).
fn each_command(
    cmd: clap::Command,
    path: &[&str],
    change: &dyn Fn(clap::Command, &[&str]) -> clap::Command,
) -> clap::Command {
    change(cmd, path).mut_subcommands(|sub| {
        let name = sub.get_name().to_owned();
        let mut sub_path = path.to_vec();
        sub_path.push(&name);
        each_command(sub, &sub_path, change)
    })
}

/// `-o` of a command printing `declared` (`None`: it declares none)
/// offers those formats.
fn narrow_output_formats(cmd: clap::Command, declared: Option<&[OutputFormat]>) -> clap::Command {
    // `-o` reads `jsonpath=TEMPLATE` and `custom-columns=SPEC` too, which
    // are no values to offer; the names are (a command's own, else all of
    // them).
    let formats = declared.unwrap_or(OutputFormat::value_variants());
    cmd.mut_args(|arg| {
        if arg.get_id() != "output" {
            return arg;
        }
        let values: Vec<PossibleValue> = formats
            .iter()
            .filter_map(ValueEnum::to_possible_value)
            .collect();
        let arg = arg.value_parser(PossibleValuesParser::new(values));
        // A command printing no template (`kinds scaffold`: yaml, json)
        // says what its `-o` takes, not every format there is.
        if prints_templates(declared) {
            arg
        } else {
            let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
            arg.help(format!("Output format: {}", names.join(" or ")))
        }
    })
}

/// Whether a command printing `declared` (`None`: it declares none, so any)
/// prints templates (`-o jsonpath=…`, `-o go-template=…`).
fn prints_templates(declared: Option<&[OutputFormat]>) -> bool {
    declared.is_none_or(|formats| formats.iter().any(|f| OutputFormat::TEMPLATES.contains(f)))
}

/// Hides `--template` and `--allow-missing-template-keys` where `-o` prints
/// no template, for the completer only: the shells' scripts drop a hidden
/// flag's name from every command ([`crate::cmd::completion`]), so they
/// keep these.
fn hide_unprinted_template_flags(
    cmd: clap::Command,
    declared: Option<&[OutputFormat]>,
) -> clap::Command {
    let shown = prints_templates(declared);
    cmd.mut_args(|arg| match arg.get_id().as_str() {
        "template" | "allow_missing_template_keys" if !shown => arg.hide(true),
        _ => arg,
    })
}

fn walk(root: clap::Command, words: &[String]) -> Position {
    let mut pos = Position {
        command: root,
        pending_value: None,
        optional_value: None,
        positionals: 0,
        selection: Selection::default(),
        after_double_dash: false,
    };
    let mut iter = words.iter().peekable();
    while let Some(word) = iter.next() {
        if pos.after_double_dash {
            pos.positionals += 1;
            continue;
        }
        if word == "--" {
            pos.after_double_dash = true;
            continue;
        }
        let found = if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            find_long(&pos.command, name).cloned().map(|a| (a, inline))
        } else if let Some(short) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            let mut chars = short.chars();
            let c = chars.next().unwrap_or('-');
            let rest: String = chars.collect();
            let rest = rest.strip_prefix('=').map(str::to_owned).unwrap_or(rest);
            find_short(&pos.command, c)
                .cloned()
                .map(|a| (a, (!rest.is_empty()).then_some(rest)))
        } else {
            None
        };
        if let Some((arg, inline)) = found {
            if takes_value(&arg) {
                let value = match inline {
                    Some(v) => Some(v),
                    // `--dry-run` alone: clap takes the next word as its value
                    // only if it does not look like a flag, and never when the
                    // value must follow `=`.
                    None if value_is_optional(&arg) => {
                        if arg.is_require_equals_set() {
                            None
                        } else {
                            match iter.peek() {
                                Some(next) if !next.starts_with('-') => iter.next().cloned(),
                                Some(_) => None,
                                None => {
                                    pos.optional_value = Some(arg);
                                    return pos;
                                }
                            }
                        }
                    }
                    None => match iter.next() {
                        Some(v) => Some(v.clone()),
                        None => {
                            pos.pending_value = Some(arg);
                            return pos;
                        }
                    },
                };
                remember(&mut pos.selection, &arg, value);
            }
            continue;
        }
        if word.starts_with('-') {
            continue; // unknown flag: ignore it, as cobra does
        }
        let sub = pos
            .command
            .get_subcommands()
            .find(|s| s.get_name() == word || s.get_all_aliases().any(|a| a == word))
            .cloned();
        match sub {
            Some(sub) => {
                pos.command = sub;
                pos.positionals = 0;
            }
            None => pos.positionals += 1,
        }
    }
    pos
}

fn remember(selection: &mut Selection, arg: &Arg, value: Option<String>) {
    match arg.get_id().as_str() {
        "kubeconfig" => selection.kubeconfig = value.map(Into::into),
        "context" => selection.context = value,
        "cluster" => selection.cluster = value,
        "user" => selection.user = value,
        _ => {}
    }
}

fn takes_value(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
}

/// Whether the flag may be given without a value (`num_args = 0..=1`).
fn value_is_optional(arg: &Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.min_values() == 0)
}

fn find_long<'a>(cmd: &'a clap::Command, name: &str) -> Option<&'a Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|al| al.contains(&name))
    })
}

fn find_short(cmd: &clap::Command, c: char) -> Option<&Arg> {
    cmd.get_arguments().find(|a| a.get_short() == Some(c))
}

/// The flag spelled `--name` or `-c`.
fn find_flag<'a>(cmd: &'a clap::Command, flag: &str) -> Option<&'a Arg> {
    if let Some(long) = flag.strip_prefix("--") {
        return find_long(cmd, long);
    }
    let mut chars = flag.strip_prefix('-')?.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => find_short(cmd, c),
        _ => None,
    }
}

fn flag_candidates(cmd: &clap::Command) -> Completions {
    let mut out = Completions::new(directive::NO_FILE_COMP);
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        if let Some(long) = arg.get_long() {
            out.push(format!("--{long}"), help.clone());
        }
        if let Some(short) = arg.get_short() {
            out.push(format!("-{short}"), help);
        }
    }
    out
}

/// Candidates for the value of `arg`: enumerated values, kubeconfig names,
/// or a directive: files for a path, directories for a directory, nothing
/// (no file names) for any other value.
pub fn value_candidates(arg: &Arg, selection: &Selection) -> Completions {
    let names = match arg.get_id().as_str() {
        "context" => Some(kubeconfig::context_names(selection)),
        "cluster" => Some(kubeconfig::cluster_names(selection)),
        "user" => Some(kubeconfig::user_names(selection)),
        "namespace" | "session_namespace" => Some(cluster::namespace_names(selection)),
        _ => None,
    };
    if let Some(names) = names {
        let mut out = Completions::new(directive::NO_FILE_COMP);
        for name in names {
            out.push(name, "");
        }
        return out;
    }
    let possible = arg.get_possible_values();
    if !possible.is_empty() {
        let mut out = Completions::new(directive::NO_FILE_COMP);
        for value in possible.iter().filter(|v| !v.is_hide_set()) {
            out.push(
                value.get_name(),
                value.get_help().map(|h| h.to_string()).unwrap_or_default(),
            );
        }
        return out;
    }
    match arg.get_value_hint() {
        ValueHint::DirPath => Completions::new(directive::FILTER_DIRS),
        ValueHint::FilePath | ValueHint::AnyPath | ValueHint::ExecutablePath => {
            Completions::new(directive::DEFAULT)
        }
        _ => Completions::new(directive::NO_FILE_COMP),
    }
}

fn filter(mut completions: Completions, typed: &str) -> Completions {
    completions
        .candidates
        .retain(|(value, _)| value.starts_with(typed));
    completions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputFormat;

    fn values(args: &[&str]) -> (Vec<String>, u32) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let c = complete(
            crate::cli::command_named("kubectl cozy"),
            crate::cmd::output_formats,
            &args,
        );
        (
            c.candidates.into_iter().map(|(v, _)| v).collect(),
            c.directive,
        )
    }

    #[test]
    fn subcommands_at_the_top() {
        let (v, d) = values(&[""]);
        assert_eq!(
            v,
            [
                "serve",
                "install",
                "doctor",
                "kinds",
                "completion",
                "version",
                "options",
                "help"
            ]
        );
        assert_eq!(d, directive::NO_FILE_COMP);
        assert_eq!(values(&["ki"]).0, ["kinds"]);
        assert_eq!(values(&["kinds", ""]).0, ["list", "scaffold"]);
    }

    #[test]
    fn flags_including_globals() {
        let (v, _) = values(&["kinds", "list", "--k"]);
        assert!(
            v.contains(&"--kinds".to_owned()) && v.contains(&"--kubeconfig".to_owned()),
            "{v:?}"
        );
        let (v, _) = values(&["-"]);
        assert!(
            v.contains(&"-n".to_owned()) && v.contains(&"--namespace".to_owned()),
            "{v:?}"
        );
        // --version is the root's alone.
        assert!(v.contains(&"--version".to_owned()), "{v:?}");
        let (v, _) = values(&["version", "-"]);
        assert!(
            !v.contains(&"--version".to_owned()) && !v.contains(&"-V".to_owned()),
            "{v:?}"
        );
    }

    #[test]
    fn flag_values() {
        let (v, d) = values(&["kinds", "list", "-o", ""]);
        assert_eq!(v, ["table", "wide", "json", "yaml", "name"]);
        assert_eq!(d, directive::NO_FILE_COMP);
        assert_eq!(values(&["--kubeconfig", ""]).1, directive::DEFAULT);
        assert_eq!(
            values(&["completion", "install", "--dir", ""]).1,
            directive::FILTER_DIRS
        );
        // A value already given is skipped, not mistaken for a subcommand.
        assert_eq!(
            values(&["-n", "kinds", ""]).0,
            [
                "serve",
                "install",
                "doctor",
                "kinds",
                "completion",
                "version",
                "options",
                "help"
            ]
        );
    }

    /// cobra's protocol: `kubectl __complete get --output=j` answers `json`,
    /// and kubectl's bash, zsh and fish scripts put the flag back. A
    /// candidate `--output=json` became `--output=--output=json`.
    #[test]
    fn flag_equals_value_completes_bare_values() {
        assert_eq!(
            values(&["version", "--output=j"]),
            (vec!["json".to_owned()], 4)
        );
        assert_eq!(values(&["version", "-o=y"]).0, ["yaml"]);
        assert_eq!(values(&["install", "--dry-run="]).0, ["client", "server"]);
        assert_eq!(values(&["install", "--dry-run=s"]).0, ["server"]);
        // A path's value leaves it to the shell's file completion.
        assert_eq!(
            values(&["install", "--kinds=ex"]),
            (Vec::new(), directive::DEFAULT)
        );
        // An unknown flag or a flag without a value: nothing.
        assert_eq!(values(&["version", "--client=t"]).0, Vec::<String>::new());
        assert_eq!(values(&["version", "--nope=t"]).0, Vec::<String>::new());
    }

    /// Files only where the value is a path: a namespace, an image, a
    /// number or a duration is not.
    #[test]
    fn only_path_values_complete_files() {
        // (A namespace is the cluster's: none where no kubeconfig names one.)
        for args in [
            &["--kubeconfig", "/nonexistent", "-n", ""][..],
            &["--kubeconfig", "/nonexistent", "--namespace", ""],
            &["install", "--image", ""],
            &["install", "--replicas", ""],
            &["install", "--field-manager", ""],
            &["--request-timeout", ""],
            &["-v", ""],
            &["serve", "--listen", ""],
            &["serve", "--agent-image", ""],
            &["kinds", "scaffold", "--kind", ""],
            &["doctor", "--concurrency", ""],
        ] {
            assert_eq!(
                values(args),
                (Vec::new(), directive::NO_FILE_COMP),
                "{args:?}"
            );
        }
        for args in [
            &["--kubeconfig", ""][..],
            &["install", "--kinds", ""],
            &["serve", "--kinds", ""],
            &["serve", "--data", ""],
            &["kinds", "scaffold", "--repo-index", ""],
            &["kinds", "scaffold", ""],
        ] {
            assert_eq!(values(args), (Vec::new(), directive::DEFAULT), "{args:?}");
        }
        for args in [
            &["serve", "--charts", ""][..],
            &["serve", "--state-dir", ""],
            &["kinds", "scaffold", "--out", ""],
        ] {
            assert_eq!(
                values(args),
                (Vec::new(), directive::FILTER_DIRS),
                "{args:?}"
            );
        }
    }

    /// Every value that names a path (value name PATH, FILE, DIR, …) is
    /// declared a path, so it keeps completing files.
    #[test]
    fn path_values_are_declared_paths() {
        fn walk(cmd: &clap::Command, path: &str, wrong: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let names = arg.get_value_names().unwrap_or_default();
                let looks_like_path = names
                    .iter()
                    .any(|n| ["PATH", "FILE", "DIR", "INDEX", "CHART"].contains(&n.as_str()));
                let is_path = matches!(
                    arg.get_value_hint(),
                    ValueHint::FilePath | ValueHint::DirPath | ValueHint::AnyPath
                );
                if looks_like_path != is_path {
                    wrong.push(format!("{path} --{}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), wrong);
            }
        }
        let mut wrong = Vec::new();
        let root = for_completion(
            crate::cli::command_named("kubectl cozy"),
            crate::cmd::output_formats,
        );
        walk(&root, "kubectl cozy", &mut wrong);
        assert!(wrong.is_empty(), "{wrong:?}");
    }

    /// `install --dry-run`'s value is optional: a flag after it is a flag,
    /// not its value.
    #[test]
    fn optional_values_do_not_swallow_the_next_flag() {
        assert_eq!(
            values(&["install", "--dry-run", "--kinds", ""]),
            values(&["install", "--kinds", ""])
        );
        assert_eq!(
            values(&["install", "--dry-run", "--kinds", ""]).1,
            directive::DEFAULT
        );
        assert_eq!(
            values(&["install", "--dry-run", "-o", ""]).0,
            ["yaml", "json", "name"]
        );
        // A word that is not a flag is its value (as clap parses it).
        assert_eq!(
            values(&["install", "--dry-run", "server", "--kinds", ""]).1,
            directive::DEFAULT
        );
        // Right after it: its values, or a flag.
        assert_eq!(
            values(&["install", "--dry-run", ""]),
            (
                vec!["client".to_owned(), "server".to_owned()],
                directive::NO_FILE_COMP
            )
        );
        assert!(values(&["install", "--dry-run", "--ki"]).0 == ["--kinds"]);
    }

    /// `-o` offers what the command prints (the list its own check uses).
    #[test]
    fn output_formats_are_the_commands_own() {
        let names = |formats: &[OutputFormat]| -> Vec<String> {
            formats
                .iter()
                .filter(|f| !OutputFormat::TEMPLATES.contains(f))
                .map(|f| f.name().to_owned())
                .collect()
        };
        assert_eq!(
            values(&["install", "-o", ""]).0,
            names(crate::cmd::install::OUTPUT_FORMATS)
        );
        assert_eq!(values(&["install", "-o", ""]).0, ["yaml", "json", "name"]);
        assert_eq!(
            values(&["kinds", "scaffold", "--output", ""]).0,
            ["yaml", "json"]
        );
        assert_eq!(values(&["version", "-o", ""]).0, ["table", "json", "yaml"]);
        assert_eq!(values(&["serve", "-o", ""]).0, ["yaml", "json", "name"]);
        assert_eq!(
            values(&["doctor", "-o", ""]).0,
            ["table", "wide", "json", "yaml", "name"]
        );
        // Before the command is known, every format.
        assert_eq!(
            values(&["-o", ""]).0,
            ["table", "wide", "json", "yaml", "name"]
        );
        assert_eq!(values(&["kinds", "scaffold", "--output=j"]).0, ["json"]);
    }

    /// The template flags are offered where `-o` prints templates only, and
    /// `--output` says what the command takes.
    #[test]
    fn template_flags_only_where_templates_print() {
        let flags = |args: &[&str]| -> Vec<(String, String)> {
            let root = crate::cli::command_named("kubectl cozy");
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            complete(root, crate::cmd::output_formats, &args)
                .candidates
                .into_iter()
                .filter(|(v, _)| v.contains("template") || v == "--output")
                .collect()
        };
        for args in [
            &["kinds", "scaffold", "--"][..],
            &["install", "--"],
            &["serve", "--"],
        ] {
            let offered = flags(args);
            assert_eq!(offered.len(), 1, "{args:?}: {offered:?}");
            assert!(
                offered[0].1 == "Output format: yaml or json"
                    || offered[0].1 == "Output format: yaml or json or name",
                "{offered:?}"
            );
        }
        let offered = flags(&["kinds", "list", "--"]);
        assert_eq!(
            offered.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>(),
            ["--output", "--allow-missing-template-keys", "--template"]
        );
        assert!(offered[0].1.contains("go-template=TEMPLATE"), "{offered:?}");
    }

    #[test]
    fn positional_file_argument_falls_back_to_files() {
        let (v, d) = values(&["kinds", "scaffold", ""]);
        assert!(v.is_empty());
        assert_eq!(d, directive::DEFAULT);
    }

    #[test]
    fn contexts_come_from_the_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\ncontexts:\n- name: dev\n  context: {cluster: c}\n- name: prod\n  context: {cluster: c}\n",
        )
        .unwrap();
        let p = path.to_string_lossy().into_owned();
        assert_eq!(
            values(&["--kubeconfig", &p, "--context", ""]).0,
            ["dev", "prod"]
        );
        assert_eq!(values(&["--kubeconfig", &p, "--context", "p"]).0, ["prod"]);
    }

    #[test]
    fn render_matches_the_protocol() {
        let mut c = Completions::new(4);
        c.push("serve", "Run it\nmore");
        c.push("x", "");
        assert_eq!(c.render(), "serve\tRun it\nx\n:4\n");
    }
}
