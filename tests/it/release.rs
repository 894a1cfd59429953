//! What a release ships, checked the way users and the release pipeline use
//! it: the man pages as `man` shows them and `--help` examples (here; that
//! the committed pages are current is a unit test of `cli::man`), the archive, its
//! sha256 and krew manifest ([`artefacts`]), krew's own validator and a real
//! `kubectl krew install` ([`krew`]), and the container image ([`image`]).
//!
//! The artefacts come from `COZY_DIST_DIR` (`.ci/run` builds them with
//! `scripts/release.sh --profile dist-check` and `scripts/image.sh`), else the
//! first test that needs them runs those scripts into the test target dir.

mod artefacts;
mod image;
mod krew;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use clap::CommandFactory;
use kubectl_cozy::cli::{Cli, command_named, man};

/// The release tag of this version, `v<version>`.
pub fn tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// The target triple of this machine, as `rustc -vV` names it.
pub fn host_target() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

static DIST: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// The directory holding this machine's release archive, its `.sha256` and
/// `cozy.yaml`: `COZY_DIST_DIR`, else built by `scripts/release.sh`.
pub fn dist_dir() -> PathBuf {
    let dir = DIST.get_or_init(|| {
        if let Some(dir) = std::env::var_os("COZY_DIST_DIR") {
            return Ok(PathBuf::from(dir));
        }
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dist");
        run_script(
            "scripts/release.sh",
            &["--profile", "dist-check", "--out", &out.to_string_lossy()],
        )
    });
    match dir {
        Ok(dir) => dir.clone(),
        Err(e) => panic!("no release artefacts: {e}"),
    }
}

/// The release archive of this machine's target in [`dist_dir`].
pub fn archive() -> PathBuf {
    dist_dir().join(format!("kubectl-cozy-{}-{}.tar.gz", tag(), host_target()))
}

/// Runs a repository script, its stderr shown, and returns the directory it
/// prints on its last line. The script runs without the variables `cargo
/// test` sets for this test crate (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …):
/// build scripts that watch them (ring's) would otherwise see them change
/// since `.ci/run`'s own `release.sh` and rebuild what it just built.
pub fn run_script(script: &str, args: &[&str]) -> Result<PathBuf, String> {
    let mut command = Command::new("bash");
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let per_crate = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix));
        if per_crate || name == "CARGO_PRIMARY_PACKAGE" || name == "OUT_DIR" {
            command.env_remove(&*name);
        }
    }
    let out = command
        .arg(repo().join(script))
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("run {script}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{script} failed with {}", out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().last().map(str::trim) {
        Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir)),
        _ => Err(format!("{script} printed no directory")),
    }
}

/// Output of a finished command as text, stdout then stderr, for messages.
pub fn describe(out: &std::process::Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn man_page_renders_with_man() {
    // The page a user opens: `man` (groff) reads the committed roff without
    // warnings and shows the examples.
    let Ok(status) = Command::new("man").arg("--version").output() else {
        eprintln!("skipping: man is not installed");
        return;
    };
    assert!(status.status.success());
    let page = repo().join(man::COMMITTED_DIR).join("kubectl-cozy-serve.1");
    let out = Command::new("man")
        .arg("--warnings")
        .arg("-l")
        .arg(&page)
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("PAGER", "cat")
        .output()
        .expect("run man");
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kubectl cozy serve"), "{text}");
    assert!(text.contains("Examples:"), "{text}");
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.trim().is_empty(), "man warns: {warnings}");
}

#[test]
fn every_command_help_starts_with_examples() {
    // kubectl's help layout: each command's help shows examples first; the
    // man pages render the same text.
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        let examples = cmd.get_after_help().map(|h| h.to_string());
        if !examples.is_some_and(|h| h.starts_with("Examples:\n  ")) {
            missing.push(path.to_owned());
        }
        // clap's `help` prints another command's help, examples included.
        for sub in cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut missing = Vec::new();
    let mut cmd = command_named("kubectl cozy");
    cmd.build();
    walk(&cmd, "kubectl cozy", &mut missing);
    assert!(missing.is_empty(), "commands without examples: {missing:?}");
    // The clap definition itself is consistent (debug assertions of clap).
    Cli::command().debug_assert();
}
