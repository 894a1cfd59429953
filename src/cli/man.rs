//! The man pages of `kubectl cozy`: one roff page per visible command
//! (`kubectl-cozy.1`, `kubectl-cozy-serve.1`, `kubectl-cozy-kinds-list.1`, …),
//! rendered by clap_mangen from the same clap definition as `--help`. They are
//! committed under `docs/man/` (a test keeps them current) and shipped in the
//! release archive under `man/man1/`.
//!
//! The global options are documented once, on `kubectl-cozy.1`; the page of a
//! subcommand lists its own options and points there, as `--help` points to
//! `kubectl cozy options`.
//!
//! Text is set ragged-right without hyphenation (`.nh`, `.ad l`), and the
//! examples section as written (`.nf`), so that commands and names stay whole
//! and can be copied from the page.

use clap::{Args, CommandFactory};

use super::{Cli, GlobalArgs};

/// The directory of the committed pages, relative to the repository root.
pub const COMMITTED_DIR: &str = "docs/man";

/// One rendered man page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The page's file name, e.g. `kubectl-cozy-kinds-list.1`.
    pub file_name: String,
    /// The page in roff.
    pub roff: Vec<u8>,
}

/// Every page, the root's first, then each visible subcommand's, depth first.
pub fn pages() -> Vec<Page> {
    // `kubectl cozy help CMD` is `kubectl cozy CMD --help`: no pages of its own.
    let mut root = Cli::command()
        .disable_help_subcommand(true)
        .bin_name("kubectl cozy");
    root.build();
    let global_ids: Vec<clap::Id> = GlobalArgs::augment_args(clap::Command::new("globals"))
        .get_arguments()
        .map(|a| a.get_id().clone())
        .collect();
    let mut pages = vec![render(root.clone())];
    for sub in visible_subcommands(&root) {
        collect(sub, &global_ids, &mut pages);
    }
    pages
}

fn collect(cmd: &clap::Command, global_ids: &[clap::Id], pages: &mut Vec<Page>) {
    let mut own = cmd.clone();
    for id in global_ids {
        if own.get_arguments().any(|a| a.get_id() == id) {
            own = own.mut_arg(id, |a| a.hide(true));
        }
    }
    let note = "Global options (--kubeconfig, --context, -n, -o, -v, …): see kubectl-cozy(1).";
    let after = match cmd.get_after_help() {
        Some(examples) => format!("{examples}\n\n{note}"),
        None => note.to_owned(),
    };
    pages.push(render(own.after_help(after).after_long_help(None::<&str>)));
    for sub in visible_subcommands(cmd) {
        collect(sub, global_ids, pages);
    }
}

fn visible_subcommands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set())
}

fn render(cmd: clap::Command) -> Page {
    let man = clap_mangen::Man::new(cmd)
        .source(concat!("kubectl-cozy ", env!("CARGO_PKG_VERSION")))
        .manual("kubectl-cozy manual");
    let mut roff = Vec::new();
    man.render(&mut roff)
        .expect("rendering into a Vec cannot fail");
    Page {
        file_name: man.get_filename(),
        roff: copyable(&String::from_utf8_lossy(&roff)).into_bytes(),
    }
}

/// clap_mangen's page with hyphenation and justification off after the
/// title (`.nh`, `.ad l`: no `cozys-tack`, no stretched spaces), and its
/// EXTRA section (the examples) in no-fill mode (`.nf` … `.fi`), each line as
/// written: roff would otherwise join and break the example commands.
fn copyable(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len() + 32);
    let mut in_extra = false;
    for line in roff.split_inclusive('\n') {
        if line.starts_with(".SH ") && in_extra {
            out.push_str(".fi\n");
            in_extra = false;
        }
        out.push_str(line);
        if line.starts_with(".TH ") {
            out.push_str(".nh\n.ad l\n");
        } else if line == ".SH EXTRA\n" {
            out.push_str(".nf\n");
            in_extra = true;
        }
    }
    if in_extra {
        out.push_str(".fi\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(page: &Page) -> String {
        String::from_utf8(page.roff.clone()).expect("roff is UTF-8")
    }

    #[test]
    fn one_page_per_visible_command_named_like_the_plugin() {
        let names: Vec<String> = pages().into_iter().map(|p| p.file_name).collect();
        assert_eq!(names[0], "kubectl-cozy.1");
        for name in [
            "kubectl-cozy-serve.1",
            "kubectl-cozy-doctor.1",
            "kubectl-cozy-kinds.1",
            "kubectl-cozy-kinds-list.1",
            "kubectl-cozy-kinds-scaffold.1",
            "kubectl-cozy-completion-install.1",
            "kubectl-cozy-version.1",
        ] {
            assert!(
                names.iter().any(|n| n == name),
                "{name} missing from {names:?}"
            );
        }
        let hidden: Vec<String> = Cli::command()
            .get_subcommands()
            .filter(|s| s.is_hide_set())
            .map(|s| format!("kubectl-cozy-{}.1", s.get_name()))
            .collect();
        assert!(hidden.iter().all(|h| !names.contains(h)), "{hidden:?}");
    }

    #[test]
    fn synopsis_says_kubectl_cozy_and_globals_live_on_the_root_page() {
        let pages = pages();
        let root = text(&pages[0]);
        let global_option = ".TP\n\\fB\\-\\-kubeconfig\\fR";
        assert!(root.contains(global_option), "{root}");
        let serve = pages
            .iter()
            .find(|p| p.file_name == "kubectl-cozy-serve.1")
            .map(text)
            .expect("serve page");
        assert!(
            serve.contains(".SH SYNOPSIS\n\\fBkubectl cozy serve\\fR"),
            "{serve}"
        );
        assert!(!serve.contains(global_option), "{serve}");
        assert!(serve.contains("see kubectl\\-cozy(1)"), "{serve}");
        assert!(serve.contains("Examples:"), "{serve}");
    }

    /// Regression: roff hyphenated and justified the pages (`cozys-tack`,
    /// `de-scribes`) and filled the examples, joining and breaking the
    /// commands. Every page turns both off; the examples are set as written.
    #[test]
    fn pages_are_not_hyphenated_and_examples_stay_as_written() {
        for page in pages() {
            let roff = text(&page);
            let th = roff.find("\n.TH ").expect("title");
            let after_title = &roff[th + 1..];
            let body = after_title.split_once('\n').expect("title line").1;
            assert!(
                body.starts_with(".nh\n.ad l\n"),
                "{}: {roff}",
                page.file_name
            );
            let extra = roff.split_once(".SH EXTRA\n").expect("examples").1;
            assert!(extra.starts_with(".nf\n"), "{}: {roff}", page.file_name);
            let examples = extra.split(".SH ").next().unwrap_or_default();
            assert!(
                examples.ends_with(".fi\n"),
                "{}: {examples}",
                page.file_name
            );
            assert!(
                examples.contains("Examples:\n  # "),
                "{}: {examples}",
                page.file_name
            );
        }
    }

    /// The committed pages equal what the clap definition renders now; with
    /// `COZY_UPDATE_MAN=1` the test rewrites them (and drops pages of
    /// commands that are gone) instead.
    #[test]
    fn committed_pages_are_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(COMMITTED_DIR);
        let pages = pages();
        let committed = || -> Vec<String> {
            std::fs::read_dir(&dir).map_or_else(
                |_| Vec::new(),
                |entries| {
                    entries
                        .filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.ends_with(".1"))
                        .collect()
                },
            )
        };
        if std::env::var_os("COZY_UPDATE_MAN").is_some() {
            std::fs::create_dir_all(&dir).expect("create the man page directory");
            for name in committed() {
                std::fs::remove_file(dir.join(name)).expect("remove an old page");
            }
            for page in &pages {
                std::fs::write(dir.join(&page.file_name), &page.roff).expect("write a page");
            }
        }
        let mut stale: Vec<String> = pages
            .iter()
            .filter(|p| std::fs::read(dir.join(&p.file_name)).ok().as_deref() != Some(&p.roff[..]))
            .map(|p| p.file_name.clone())
            .collect();
        stale.extend(
            committed()
                .into_iter()
                .filter(|n| !pages.iter().any(|p| &p.file_name == n))
                .map(|n| format!("{n} (no such command)")),
        );
        assert!(
            stale.is_empty(),
            "stale man pages in {}: {stale:?}; run COZY_UPDATE_MAN=1 cargo test --lib cli::man",
            dir.display()
        );
    }
}
