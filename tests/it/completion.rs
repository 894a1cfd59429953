//! Shell completion: committed scripts are current and work in bash, zsh and
//! fish; kubectl's plugin completion protocol works through the real kubectl
//! and its own shell scripts; `completion install` and `uninstall`, also
//! under a real krew across an upgrade.

use std::path::Path;
use std::process::Command;

use clap_complete::Shell;
use kubectl_cozy::cmd::completion::{script, script_file_name};

use crate::support::{bins, plane, tools};

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
    // A script has no -o format: refused as a usage error, not ignored.
    let out = Command::new(bins::kubectl_cozy())
        .args(["completion", "bash", "-o", "json"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("-o json: completion prints"), "{stderr}");
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
    // As cobra answers `kubectl __complete get --output=j`: the bare value.
    assert_eq!(completer(&["version", "--output=j"]), "json\tJSON\n:4\n");
    // A namespace is not a file name (nor anything, with no cluster).
    assert_eq!(
        completer(&["--kubeconfig", "/nonexistent", "-n", ""]),
        ":4\n"
    );
}

/// `-n` and `--session-namespace` complete the cluster's namespaces, as
/// kubectl completes `-n` (kubectl leaves a plugin's flags to the plugin:
/// `kubectl cozy doctor -n <TAB>` offered nothing), through the context
/// the words select; a cluster that does not answer gives nothing, soon.
#[test]
fn namespaces_complete_from_the_cluster() {
    let plane = plane::plane();
    let kubeconfig = plane.kubeconfig.display().to_string();
    let names = |out: String| -> Vec<String> {
        out.lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
            .collect()
    };
    let all = names(completer(&[
        "--kubeconfig",
        &kubeconfig,
        "doctor",
        "-n",
        "",
    ]));
    for ns in ["default", "kube-system", ":4"] {
        assert!(all.contains(&ns.to_owned()), "{ns} in {all:?}");
    }
    assert_eq!(
        names(completer(&[
            "serve",
            "--kubeconfig",
            &kubeconfig,
            "--session-namespace",
            "kube-s"
        ])),
        ["kube-system", ":4"]
    );
    assert_eq!(
        names(completer(&[
            "--kubeconfig",
            &kubeconfig,
            "--namespace=kube-p"
        ])),
        ["kube-public", ":4"]
    );
    // A cluster that is not there: nothing, and no error.
    let dir = tempfile::tempdir().expect("tempdir");
    let dead = crate::support::kubeconfig_for_port(dir.path(), 9);
    let dead = dead.display().to_string();
    assert_eq!(completer(&["--kubeconfig", &dead, "-n", ""]), ":4\n");
    // A cluster that takes connections and never answers: nothing, once
    // the completer's own limit (3 s) is up, not after kube's timeouts
    // (minutes). The test only guards against a hang.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let held: Vec<_> = silent.incoming().collect();
        drop(held);
    });
    let mute = crate::support::kubeconfig_for_port(dir.path(), port);
    let mut child = Command::new(bins::kubectl_complete_cozy())
        .args(["--kubeconfig", &mute.display().to_string(), "-n", ""])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run completer");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the completer still waits for a silent cluster after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("output");
    assert_eq!(String::from_utf8_lossy(&out.stdout), ":4\n");
}

/// The completer runs through any chain of links named
/// `kubectl_complete-cozy` (kubectl runs it by its PATH name).
#[test]
fn completer_is_recognised_through_a_chain_of_links() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("store");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(bins::kubectl_cozy(), store.join("kubectl-cozy")).unwrap();
    std::os::unix::fs::symlink(store.join("kubectl-cozy"), bin.join("kubectl-cozy")).unwrap();
    std::os::unix::fs::symlink("kubectl-cozy", bin.join("kubectl_complete-cozy")).unwrap();
    let out = Command::new(bin.join("kubectl_complete-cozy"))
        .args(["kinds", "sc"])
        .output()
        .expect("run the completer");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "scaffold\tTurn a Helm chart into a kind definition\n:4\n"
    );
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
    // kubectl answers `kubectl __complete get --output=j` with `json`; the
    // plugin's answer must be the same shape.
    let own = kubectl(&["__complete", "get", "--output=j"]);
    assert!(own.lines().any(|l| l == "json"), "{own}");
    let out = kubectl(&["__complete", "cozy", "version", "--output=j"]);
    assert!(out.starts_with("json\t"), "{out}");
    let out = kubectl(&["__complete", "cozy", "install", "--dry-run="]);
    let values: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(values, ["client", "server", ":4"], "{out}");
}

/// Where kubectl's own completion scripts (which speak cobra's protocol)
/// are available: `kubectl cozy version --output=j<TAB>` completes `json`.
/// The candidate `--output=json` completed nothing in bash and zsh and
/// `--output=--output=json` in fish.
#[test]
fn kubectls_shell_scripts_complete_flag_equals_values() {
    let bin_dir = plane::binaries().expect("control plane binaries");
    let path = bins::plugin_path(&[&bin_dir]);
    let bash_completion = Path::new("/usr/share/bash-completion/bash_completion");
    if bash_completion.is_file() {
        // kubectl's bash script needs bash-completion; COMP_WORDS as bash
        // splits `--output=j` (at `=`, which is in COMP_WORDBREAKS).
        let program = format!(
            "source {}\n\
             source <(kubectl completion bash)\n\
             COMP_WORDS=(kubectl cozy version --output = j)\n\
             COMP_CWORD=5\n\
             COMP_LINE='kubectl cozy version --output=j'\n\
             COMP_POINT=${{#COMP_LINE}}\n\
             __start_kubectl kubectl j =\n\
             printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
            bash_completion.display()
        );
        let out = Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &program])
            .env("PATH", &path)
            .env("HOME", "/nonexistent-home")
            .output()
            .expect("run bash");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "json\n",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        eprintln!("skipping kubectl's bash script: bash-completion is not installed");
    }
    if let Some(fish) = shell("fish") {
        let out = Command::new(fish)
            .args(["--no-config", "-c"])
            .arg("kubectl completion fish | source; complete -C 'kubectl cozy version --output=j'")
            .env("PATH", &path)
            .env("HOME", "/nonexistent-home")
            .output()
            .expect("run fish");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "--output=json\tJSON\n",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
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

/// Regression: "installed …; kubectl cozy <TAB> now completes" and then,
/// on the same stdout, a warning that kubectl would not find it. Off PATH:
/// what was done on stdout, the warning (what to add to PATH) on stderr.
#[test]
fn completion_install_off_path_warns_on_stderr_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(bins::kubectl_cozy())
        .args(["completion", "install", "--dir"])
        .arg(dir.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("run");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.starts_with("installed "), "{stdout}");
    assert!(!stdout.contains("completes"), "{stdout}");
    assert!(!stdout.contains("warning"), "{stdout}");
    assert!(
        stderr.starts_with("Warning: ") && stderr.contains("is not on PATH"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("export PATH=\"{}:$PATH\"", dir.path().display())),
        "{stderr}"
    );

    let out = Command::new(bins::kubectl_cozy())
        .args(["completion", "uninstall", "--dir"])
        .arg(dir.path())
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.starts_with("removed "), "{stdout}");
    assert!(!dir.path().join("kubectl_complete-cozy").exists());
}

/// Completes `words` (the last one is being typed) by running the committed
/// bash script the way bash does on TAB, and returns the candidates.
fn bash_complete(words: &[&str]) -> Vec<String> {
    bash_complete_in(Path::new(env!("CARGO_MANIFEST_DIR")), words)
}

/// [`bash_complete`] in the directory `dir`.
fn bash_complete_in(dir: &Path, words: &[&str]) -> Vec<String> {
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
        .current_dir(dir)
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

/// Flags are offered once a dash is typed, as kubectl's completion offers
/// them: `kubectl-cozy <TAB>` listed 16 flags among the subcommands, and
/// `kinds scaffold <TAB>` (whose argument is a chart's path) and `serve
/// --standalone <TAB>` inserted `-`. Paths complete as file names, whole
/// where they hold spaces; a hidden test seam is not offered.
#[test]
fn bash_script_offers_flags_after_a_dash_and_paths_as_file_names() {
    let top = bash_complete(&["kubectl-cozy", ""]);
    assert!(top.contains(&"serve".to_owned()), "{top:?}");
    assert!(!top.iter().any(|w| w.starts_with('-')), "{top:?}");
    assert_eq!(
        bash_complete(&["kubectl-cozy", "kinds", ""]),
        ["list", "scaffold"]
    );
    assert_eq!(
        bash_complete(&["kubectl-cozy", "serve", "--standalone", ""]),
        Vec::<String>::new()
    );
    let flags = bash_complete(&["kubectl-cozy", "serve", "--standalone", "-"]);
    assert!(flags.contains(&"--kinds".to_owned()), "{flags:?}");
    let top_flags = bash_complete(&["kubectl-cozy", "--con"]);
    assert_eq!(top_flags, ["--context"]);
    // The chart argument: file names (bash's own completion, once the
    // script offers nothing).
    assert_eq!(
        bash_complete(&["kubectl-cozy", "kinds", "scaffold", "Cargo.t"]),
        Vec::<String>::new()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("my kinds")).expect("mkdir");
    assert_eq!(
        bash_complete_in(
            dir.path(),
            &["kubectl-cozy", "kinds", "list", "--kinds", "my"]
        ),
        ["my kinds"]
    );
    assert_eq!(
        bash_complete(&["kubectl-cozy", "serve", "--agent"]),
        ["--agent-image"]
    );
}

/// `--output=j<TAB>`: bash splits the word at `=`, so the word before `j`
/// is `=`; the script completed nothing (then file names). And values that
/// are not paths offered file names.
#[test]
fn bash_script_completes_flag_equals_values_and_no_files_for_names() {
    let values = bash_complete(&["kubectl-cozy", "version", "--output", "=", "j"]);
    assert_eq!(values, ["json"]);
    let values = bash_complete(&["kubectl-cozy", "install", "--dry-run", "=", "s"]);
    assert_eq!(values, ["server"]);
    let values = bash_complete(&["kubectl-cozy", "install", "-o", ""]);
    assert_eq!(values, ["yaml", "json", "name"]);
    // The test runs in the crate's directory, which holds files: none of
    // them is offered for a namespace or an image.
    for words in [
        &["kubectl-cozy", "install", "--namespace", "C"][..],
        &["kubectl-cozy", "install", "--image", "C"],
    ] {
        let values = bash_complete(words);
        assert!(
            !values.iter().any(|v| v.starts_with("Cargo")),
            "{words:?}: {values:?}"
        );
    }
    let files = bash_complete(&["kubectl-cozy", "install", "--kinds", "Cargo.t"]);
    assert_eq!(files, ["Cargo.toml"]);
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
    // fish keeps `--flag=` itself; values that are not paths offer no files.
    assert_eq!(
        complete("kubectl-cozy version --output=j"),
        ["--output=json"]
    );
    assert_eq!(
        complete("kubectl-cozy install -o "),
        ["json", "name", "yaml"]
    );
    assert_eq!(
        complete("kubectl-cozy install --image=C"),
        Vec::<String>::new()
    );
    assert_eq!(complete("kubectl-cozy -n C"), Vec::<String>::new());
    // A global option's value before the subcommand: its values, not files.
    assert_eq!(
        complete("kubectl-cozy -o "),
        ["json", "name", "table", "wide", "yaml"]
    );
    assert_eq!(
        complete("kubectl-cozy install --kinds Cargo.t"),
        ["Cargo.toml"]
    );
    // A hidden test seam is not offered.
    assert_eq!(complete("kubectl-cozy serve --agent"), ["--agent-image"]);
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
/// completer where kubectl looks (the PATH directory), not into the store,
/// and to krew's link, not to the store's binary, which an upgrade deletes.
#[test]
fn completion_install_under_krew_layout_reaches_kubectl_and_survives_an_upgrade() {
    let bin_dir = plane::binaries().expect("control plane binaries");
    let root = tempfile::tempdir().expect("tempdir");
    let store = |version: &str| root.path().join("store/cozy").join(version);
    let krew_bin = root.path().join("bin");
    std::fs::create_dir_all(store("v0.1.0")).unwrap();
    std::fs::create_dir_all(&krew_bin).unwrap();
    std::fs::copy(bins::kubectl_cozy(), store("v0.1.0").join("kubectl-cozy")).unwrap();
    std::fs::copy(
        bins::kubectl_cozy(),
        store("v0.1.0").join("kubectl_complete-cozy"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        store("v0.1.0").join("kubectl-cozy"),
        krew_bin.join("kubectl-cozy"),
    )
    .unwrap();
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
    assert!(stdout.contains("now completes"), "{stdout}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_link(krew_bin.join("kubectl_complete-cozy")).unwrap(),
        Path::new("kubectl-cozy")
    );

    let complete_kinds = || {
        let out = Command::new(bin_dir.join("kubectl"))
            .args(["__complete", "cozy", "kinds", ""])
            .env("PATH", &path)
            .env("HOME", "/nonexistent-home")
            .output()
            .expect("run kubectl __complete");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let completions = complete_kinds();
    assert!(
        completions.lines().any(|l| l.starts_with("scaffold")),
        "{completions}"
    );

    // What `kubectl krew upgrade` does to the layout: the new version in
    // the store, bin/'s link re-pointed, the old version deleted.
    std::fs::create_dir_all(store("v0.1.1")).unwrap();
    std::fs::copy(bins::kubectl_cozy(), store("v0.1.1").join("kubectl-cozy")).unwrap();
    std::fs::remove_file(krew_bin.join("kubectl-cozy")).unwrap();
    std::os::unix::fs::symlink(
        store("v0.1.1").join("kubectl-cozy"),
        krew_bin.join("kubectl-cozy"),
    )
    .unwrap();
    std::fs::remove_dir_all(store("v0.1.0")).unwrap();
    let completions = complete_kinds();
    assert!(
        completions.lines().any(|l| l.starts_with("scaffold")),
        "after an upgrade: {completions}"
    );
}

/// The whole life of the completer under a real krew (sigs.k8s.io/krew
/// v0.4.3 from the test tools, its index a local git repository, the archive
/// served over loopback): install, `completion install`, `kubectl krew
/// upgrade` (which deletes the old version's store directory: the
/// completer must keep working), `completion uninstall`, `kubectl krew
/// uninstall` — after which `KREW_ROOT` is as it was.
#[test]
fn under_krew_the_completer_survives_an_upgrade_and_uninstalls() {
    use sha2::{Digest, Sha256};

    use crate::support::krew::{serve_file, tree};

    let kubectl = plane::binaries()
        .expect("control plane binaries")
        .join("kubectl");
    let tools = tools::tools_dir().expect("the Go test tools");
    let root = tempfile::tempdir().expect("tempdir");
    let (krew_root, home) = (root.path().join("krew"), root.path().join("home"));
    let krew_bin = krew_root.join("bin");
    std::fs::create_dir_all(&home).unwrap();

    // The plugin's archive, as the release ships it (the binaries built for
    // this test run).
    let pkg = root.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::copy(bins::kubectl_cozy(), pkg.join("kubectl-cozy")).unwrap();
    std::fs::copy(
        bins::kubectl_complete_cozy(),
        pkg.join("kubectl_complete-cozy"),
    )
    .unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("LICENSE"),
        pkg.join("LICENSE"),
    )
    .unwrap();
    let archive = root.path().join("cozy.tar.gz");
    let out = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(&pkg)
        .args(["kubectl-cozy", "kubectl_complete-cozy", "LICENSE"])
        .output()
        .expect("run tar");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sha: String = Sha256::digest(std::fs::read(&archive).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let uri = format!("{}/cozy.tar.gz", serve_file(archive.clone()));
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let manifest = |version: &str| {
        format!(
            "apiVersion: krew.googlecontainertools.github.com/v1alpha2\n\
             kind: Plugin\n\
             metadata: {{name: cozy}}\n\
             spec:\n  \
               version: {version}\n  \
               homepage: https://example.invalid/kubectl-cozy\n  \
               shortDescription: kubectl-cozy, for the completion tests\n  \
               description: kubectl-cozy, for the completion tests\n  \
               platforms:\n  \
               - selector:\n      \
                   matchLabels: {{os: {os}, arch: {arch}}}\n    \
                 uri: {uri}\n    \
                 sha256: {sha}\n    \
                 files:\n    \
                 - {{from: kubectl-cozy, to: .}}\n    \
                 - {{from: kubectl_complete-cozy, to: .}}\n    \
                 - {{from: LICENSE, to: .}}\n    \
                 bin: kubectl-cozy\n",
            os = std::env::consts::OS,
        )
    };
    // The index krew updates from: a local git repository.
    let index = root.path().join("krew-index");
    std::fs::create_dir_all(index.join("plugins")).unwrap();
    let publish = |version: &str| {
        std::fs::write(index.join("plugins/cozy.yaml"), manifest(version)).unwrap();
        crate::support::krew::commit_index(&index, &home, version);
    };
    let path = std::env::join_paths([
        krew_bin.as_path(),
        tools.as_path(),
        kubectl.parent().unwrap(),
        Path::new("/usr/bin"),
        Path::new("/bin"),
    ])
    .unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(&kubectl)
            .args(args)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &home)
            .env("KREW_ROOT", &krew_root)
            .env("KREW_NO_UPGRADE_CHECK", "1")
            .env("KREW_DEFAULT_INDEX_URI", &index)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run kubectl");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "kubectl {args:?}: {text}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let kinds = || -> Vec<String> {
        run(&["__complete", "cozy", "kinds", ""])
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
            .collect()
    };

    // What krew keeps, but for the index (which each update changes).
    let krew_tree = || -> Vec<String> {
        tree(&krew_root)
            .into_iter()
            .filter(|entry| !entry[2..].starts_with("index"))
            .collect()
    };

    publish("v0.1.0");
    run(&["krew", "update"]);
    let before = krew_tree();
    run(&["krew", "install", "cozy"]);
    let message = run(&["cozy", "completion", "install"]);
    let completer = krew_bin.join("kubectl_complete-cozy");
    assert_eq!(
        message.trim_end(),
        format!(
            "installed {} -> kubectl-cozy; kubectl cozy <TAB> now completes",
            completer.display()
        )
    );
    assert_eq!(kinds(), ["list", "scaffold", ":4"]);

    publish("v0.1.1");
    run(&["krew", "update"]);
    run(&["krew", "upgrade", "cozy"]);
    assert!(!krew_root.join("store/cozy/v0.1.0").exists());
    assert!(krew_root.join("store/cozy/v0.1.1/kubectl-cozy").is_file());
    assert_eq!(kinds(), ["list", "scaffold", ":4"], "after the upgrade");

    // Before `krew uninstall`: the plugin removes its own link.
    let message = run(&["cozy", "completion", "uninstall"]);
    assert_eq!(
        message.trim_end(),
        format!("removed {} (a link to kubectl-cozy)", completer.display())
    );
    run(&["krew", "uninstall", "cozy"]);
    assert_eq!(krew_tree(), before, "krew's root is as before the install");
}
