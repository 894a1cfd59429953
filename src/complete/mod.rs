//! kubectl's plugin completion protocol (kubectl ≥ 1.26,
//! `k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go`): kubectl runs
//! `kubectl_complete-cozy <words after "kubectl cozy"…> <word being typed>`
//! and reads one candidate per line (`value<TAB>description` allowed) and a
//! final `:<cobra ShellCompDirective>` line.
//!
//! Candidates come from the clap definition (subcommands, flags, enumerated
//! values) and from the kubeconfig (contexts, clusters, users). Later features
//! plug dynamic sources into [`value_candidates`].

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ValueHint};

use crate::kubeconfig::{self, Selection};

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
pub fn main(root: clap::Command) -> ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a: OsString| a.to_string_lossy().into_owned())
        .collect();
    let text = complete(root, &args).render();
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
    /// Positional arguments already given to `command`.
    positionals: usize,
    /// Flags seen so far, for kubeconfig look-ups (`--kubeconfig`, `--context`).
    selection: Selection,
    /// After `--`, everything is positional.
    after_double_dash: bool,
}

/// Completes `args` against `root`: the words after `kubectl cozy`, the last
/// being the word under the cursor (possibly empty).
pub fn complete(mut root: clap::Command, args: &[String]) -> Completions {
    let (typed, words) = match args.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    root.build();
    let pos = walk(root, words);

    if let Some(arg) = &pos.pending_value {
        return filter(value_candidates(arg, &pos.selection), typed);
    }
    if let Some((flag, value)) = typed.split_once('=')
        && flag.starts_with("--")
        && let Some(arg) = find_long(&pos.command, &flag[2..])
    {
        let mut values = filter(value_candidates(arg, &pos.selection), value);
        for candidate in &mut values.candidates {
            candidate.0 = format!("{flag}={}", candidate.0);
        }
        return values;
    }
    if typed.starts_with('-') && !pos.after_double_dash {
        return filter(flag_candidates(&pos.command), typed);
    }
    let mut out = Completions::new(directive::NO_FILE_COMP);
    for sub in pos.command.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.push(
            sub.get_name(),
            sub.get_about().map(|a| a.to_string()).unwrap_or_default(),
        );
    }
    if out.candidates.is_empty() {
        // No subcommands: complete the next positional argument.
        let positional = pos.command.get_positionals().nth(pos.positionals);
        if let Some(arg) = positional {
            return filter(value_candidates(arg, &pos.selection), typed);
        }
    }
    filter(out, typed)
}

fn walk(root: clap::Command, words: &[String]) -> Position {
    let mut pos = Position {
        command: root,
        pending_value: None,
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
        _ => {}
    }
}

fn takes_value(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
}

fn find_long<'a>(cmd: &'a clap::Command, name: &str) -> Option<&'a Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|al| al.contains(&name))
    })
}

fn find_short(cmd: &clap::Command, c: char) -> Option<&Arg> {
    cmd.get_arguments().find(|a| a.get_short() == Some(c))
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
/// or a directive telling the shell to complete files or directories.
pub fn value_candidates(arg: &Arg, selection: &Selection) -> Completions {
    let names = match arg.get_id().as_str() {
        "context" => Some(kubeconfig::context_names(selection)),
        "cluster" => Some(kubeconfig::cluster_names(selection)),
        "user" => Some(kubeconfig::user_names(selection)),
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
        ValueHint::FilePath | ValueHint::AnyPath | ValueHint::Unknown => {
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

    fn values(args: &[&str]) -> (Vec<String>, u32) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let c = complete(crate::cli::command_named("kubectl cozy"), &args);
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
    }

    #[test]
    fn flag_values() {
        let (v, d) = values(&["version", "-o", ""]);
        assert_eq!(v, ["table", "wide", "json", "yaml", "name"]);
        assert_eq!(d, directive::NO_FILE_COMP);
        assert_eq!(values(&["version", "--output=j"]).0, ["--output=json"]);
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
