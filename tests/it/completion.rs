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
        [
            "serve",
            "install",
            "doctor",
            "kinds",
            "completion",
            "version",
            "options",
            "help",
            ":4"
        ]
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

/// Completes `words` (the last one is being typed) by running the committed
/// bash script the way bash does on TAB, and returns the candidates.
fn bash_complete(words: &[&str]) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/kubectl-cozy.bash");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\n\
         complete -p kubectl-cozy >&2\n\
         COMP_WORDS=({})\n\
         COMP_CWORD={}\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         COMP_POINT=${{#COMP_LINE}}\n\
         _kubectl__cozy kubectl-cozy \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.len() - 1
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("-F _kubectl__cozy"),
        "the script registers its function for kubectl-cozy: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Regression (issue 16 §5): the bash script completed only the top level.
#[test]
fn bash_script_completes_subcommands_and_flag_values() {
    let top = bash_complete(&["kubectl-cozy", "ki"]);
    assert_eq!(top, ["kinds"]);
    let all = bash_complete(&["kubectl-cozy", ""]);
    assert!(all.contains(&"serve".to_owned()), "{all:?}");
    assert!(!all.contains(&"tunnel-agent".to_owned()), "hidden: {all:?}");
    let kinds = bash_complete(&["kubectl-cozy", "kinds", ""]);
    assert!(
        kinds.contains(&"list".to_owned()) && kinds.contains(&"scaffold".to_owned()),
        "{kinds:?}"
    );
    let install = bash_complete(&["kubectl-cozy", "completion", "ins"]);
    assert_eq!(install, ["install"]);
    let output = bash_complete(&["kubectl-cozy", "kinds", "list", "-o", ""]);
    for format in ["table", "wide", "json", "yaml", "name"] {
        assert!(
            output.contains(&format.to_owned()),
            "{format} in {output:?}"
        );
    }
    let flags = bash_complete(&["kubectl-cozy", "serve", "--stand"]);
    assert_eq!(flags, ["--standalone"]);
}

/// A shell the test needs, or `None` (with a note) where it is not installed
/// and `COZY_REQUIRE_SHELLS` is unset; `.ci/run` installs them and sets it.
fn shell(name: &str) -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("COZY_REQUIRE_SHELLS").is_none(),
            "{name} is not installed (scripts/install-deps.sh installs it)"
        );
        eprintln!("skipping the {name} completion check: {name} is not installed");
    }
    found
}

#[test]
fn fish_script_completes_subcommands_and_flag_values() {
    let Some(fish) = shell("fish") else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/kubectl-cozy.fish");
    let complete = |line: &str| {
        let out = Command::new(&fish)
            .arg("--no-config")
            .arg("-c")
            .arg(format!(
                "source '{}'; complete -C '{line}'",
                script.display()
            ))
            .output()
            .expect("run fish");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    let kinds = complete("kubectl-cozy kinds ");
    assert!(kinds.contains(&"scaffold".to_owned()), "{kinds:?}");
    let top = complete("kubectl-cozy ");
    assert!(top.contains(&"serve".to_owned()), "{top:?}");
    assert!(!top.contains(&"tunnel-agent".to_owned()), "hidden: {top:?}");
    let output = complete("kubectl-cozy doctor -o ");
    assert!(output.contains(&"json".to_owned()), "{output:?}");
}

#[test]
fn zsh_script_defines_its_completion_function() {
    let Some(zsh) = shell("zsh") else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    // Load the script as compinit would (autoloaded from fpath) and check that
    // it parses and registers `_kubectl-cozy` for the binary.
    let out = Command::new(&zsh)
        .args(["-f", "-c"])
        .arg(format!(
            "fpath=('{}' $fpath); autoload -Uz compinit; compinit -u -D; \
             print -r -- ${{_comps[kubectl-cozy]}}; zsh -n '{}/_kubectl-cozy' && print parsed",
            dir.display(),
            dir.display()
        ))
        .output()
        .expect("run zsh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("_kubectl-cozy") && stdout.contains("parsed"),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Regression (issue 16 §6): under krew the binary lives in krew's store and
/// `$KREW_ROOT/bin` holds a symlink to it; `completion install` must link the
/// completer where kubectl looks (the PATH directory), not into the store.
#[test]
fn completion_install_under_krew_layout_reaches_kubectl() {
    let bin_dir = plane::binaries().expect("control plane binaries");
    let root = tempfile::tempdir().expect("tempdir");
    let store = root.path().join("store/cozy/v0.1.0");
    let krew_bin = root.path().join("bin");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::create_dir_all(&krew_bin).unwrap();
    std::fs::copy(bins::kubectl_cozy(), store.join("kubectl-cozy")).unwrap();
    std::fs::copy(bins::kubectl_cozy(), store.join("kubectl_complete-cozy")).unwrap();
    std::os::unix::fs::symlink(store.join("kubectl-cozy"), krew_bin.join("kubectl-cozy")).unwrap();
    let path = std::env::join_paths([krew_bin.as_path(), Path::new("/usr/bin"), Path::new("/bin")])
        .unwrap();

    let out = Command::new(krew_bin.join("kubectl-cozy"))
        .args(["completion", "install"])
        .env("PATH", &path)
        .output()
        .expect("run completion install");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("installed"), "{stdout}");
    assert!(!stdout.contains("warning"), "{stdout}");
    assert!(krew_bin.join("kubectl_complete-cozy").exists());

    let out = Command::new(bin_dir.join("kubectl"))
        .args(["__complete", "cozy", "kinds", ""])
        .env("PATH", &path)
        .env("HOME", "/nonexistent-home")
        .output()
        .expect("run kubectl __complete");
    let completions = String::from_utf8_lossy(&out.stdout);
    assert!(
        completions.lines().any(|l| l.starts_with("scaffold")),
        "{completions}"
    );
}
