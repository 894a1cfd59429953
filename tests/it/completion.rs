//! Shell completion: committed scripts are current, and kubectl's plugin
//! completion protocol works through the real kubectl.

use std::path::Path;
use std::process::Command;

use clap_complete::Shell;
use kubectl_cozy::cmd::completion::{script, script_file_name};

use crate::support::{bins, plane};

#[test]
fn committed_completion_scripts_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    let update = std::env::var_os("COZY_UPDATE_COMPLETIONS").is_some();
    let mut stale = Vec::new();
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::PowerShell] {
        let path = dir.join(script_file_name(shell));
        let fresh = script(shell);
        if update {
            std::fs::write(&path, &fresh).expect("write completion script");
        } else if std::fs::read(&path).ok().as_deref() != Some(fresh.as_slice()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale completion scripts {stale:?}: run COZY_UPDATE_COMPLETIONS=1 cargo test completion"
    );
}

#[test]
fn completion_subcommand_prints_the_committed_script() {
    let out = Command::new(bins::kubectl_cozy())
        .args(["completion", "bash"])
        .output()
        .expect("run");
    assert!(out.status.success());
    assert_eq!(out.stdout, script(Shell::Bash));
}

fn completer(args: &[&str]) -> String {
    let out = Command::new(bins::kubectl_complete_cozy())
        .args(args)
        .output()
        .expect("run completer");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf8")
}

#[test]
fn completer_speaks_kubectls_protocol() {
    // kubectl passes the words after `kubectl cozy`, then the word being typed.
    let out = completer(&["ki"]);
    assert!(out.starts_with("kinds\t"), "{out}");
    assert!(out.ends_with(":4\n"), "{out}");
    let out = completer(&[""]);
    let values: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(
        values,
        ["serve", "doctor", "kinds", "completion", "version", ":4"]
    );
    let out = completer(&["kinds", "list", "-o", ""]);
    assert!(out.contains("yaml\t") && out.contains("wide\t"), "{out}");
    let out = completer(&["--kube"]);
    assert!(out.starts_with("--kubeconfig\t"), "{out}");
}

#[test]
fn kubectl_completes_the_plugin() {
    let bin_dir = plane::binaries().expect("control plane binaries");
    let kubectl = |args: &[&str]| {
        let out = Command::new(bin_dir.join("kubectl"))
            .args(args)
            .env("PATH", bins::plugin_path(&[]))
            .env("HOME", "/nonexistent-home")
            .output()
            .expect("run kubectl __complete");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = kubectl(&["__complete", "cozy", "ki"]);
    assert!(out.lines().any(|l| l.starts_with("kinds")), "{out}");
    let out = kubectl(&["__complete", "cozy", "kinds", ""]);
    assert!(out.lines().any(|l| l.starts_with("scaffold")), "{out}");
}

#[test]
fn completion_install_links_the_completer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(bins::kubectl_cozy())
        .args(["completion", "install", "--dir"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = dir.path().join("kubectl_complete-cozy");
    let out = Command::new(&installed)
        .args(["kinds", "sc"])
        .output()
        .expect("run installed completer");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("scaffold\t"));
}
