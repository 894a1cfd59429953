//! krew, validated and installed by krew itself (sigs.k8s.io/krew v0.4.3,
//! built by `tests/tools/build.sh`): `validate-krew-manifest` on the rendered
//! manifest and on the whole template, its install check against the archive
//! served from a loopback HTTP server, and a real `kubectl krew install
//! --manifest --archive` into a temporary `KREW_ROOT`, used through the real
//! kubectl (plugin discovery, `kubectl cozy version` against the test plane,
//! plugin completion after `kubectl cozy completion install`), then
//! uninstalled.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::artefacts::sha256_hex;
use super::{archive, describe, dist_dir, tag};
use crate::support::krew::{serve_file, tree};
use crate::support::{plane, tools};

fn tool(name: &str) -> PathBuf {
    match tools::tools_dir() {
        Ok(dir) => dir.join(name),
        Err(e) => panic!("the Go test tools are not available: {e}"),
    }
}

fn kubectl_dir() -> PathBuf {
    plane::binaries().expect("control plane binaries")
}

/// A PATH with `first` (krew's bin), kubectl-krew, the real kubectl and the
/// system directories, and nothing else (no other plugin leaks in).
fn path_with(first: &[&Path]) -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = first.iter().map(|p| p.to_path_buf()).collect();
    dirs.push(
        tool("kubectl-krew")
            .parent()
            .expect("tools dir")
            .to_path_buf(),
    );
    dirs.push(kubectl_dir());
    dirs.extend(["/usr/bin", "/bin"].map(PathBuf::from));
    std::env::join_paths(dirs).expect("PATH")
}

fn validate(manifest: &Path, install: bool, krew_tmp: &Path) -> Output {
    let mut cmd = Command::new(tool("validate-krew-manifest"));
    cmd.arg("-manifest").arg(manifest);
    if !install {
        cmd.arg("-skip-install");
    }
    // The validator installs through `kubectl krew` found on PATH, into a
    // temporary KREW_ROOT under TMPDIR.
    cmd.env("PATH", path_with(&[]))
        .env("TMPDIR", krew_tmp)
        .env("KREW_NO_UPGRADE_CHECK", "1")
        .output()
        .expect("run validate-krew-manifest")
}

/// Renders the template (krew/render.sh) for the given targets, each with
/// this machine's archive sha256, into `<dir>/cozy.yaml`.
fn render_template(dir: &Path, targets: &[&str]) -> PathBuf {
    let sha = sha256_hex(&std::fs::read(archive()).expect("archive"));
    let out = Command::new("bash")
        .arg(super::repo().join("krew/render.sh"))
        .arg(tag())
        .args(targets.iter().map(|t| format!("{t}={sha}")))
        .output()
        .expect("run krew/render.sh");
    assert!(out.status.success(), "{}", describe(&out));
    let path = dir.join("cozy.yaml");
    std::fs::write(&path, &out.stdout).expect("write manifest");
    path
}

#[test]
fn krew_validator_accepts_the_manifest_and_the_whole_template() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = validate(&dist_dir().join("cozy.yaml"), false, tmp.path());
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("structural validation OK"),
        "{}",
        describe(&out)
    );

    // Every platform of the template, as the release bot renders it: valid,
    // each selector matching a platform krew knows, none overlapping.
    let all = tempfile::tempdir().expect("tempdir");
    let manifest = render_template(
        all.path(),
        &[
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin",
        ],
    );
    let out = validate(&manifest, false, tmp.path());
    assert!(out.status.success(), "{}", describe(&out));

    // The validator does reject: a version krew cannot order.
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    let bad = text.replace(&format!("version: {}", tag()), "version: latest");
    assert_ne!(bad, text);
    std::fs::write(&manifest, bad).expect("write");
    let out = validate(&manifest, false, tmp.path());
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("version"),
        "{}",
        describe(&out)
    );
}

#[test]
fn krew_validator_installs_the_archive_and_finds_the_license() {
    // Without -skip-install the validator runs `kubectl krew install
    // --manifest` for each platform (downloading the uri, checking the
    // sha256, extracting `files`) and requires a LICENSE among the installed
    // files. The uri points at a loopback server holding the same archive.
    let archive = archive();
    let name = archive
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let base = serve_file(archive.clone());
    let text = std::fs::read_to_string(dist_dir().join("cozy.yaml")).expect("manifest");
    let published = format!(
        "https://github.com/kubectl-cozy/kubectl-cozy/releases/download/{}/{name}",
        tag()
    );
    assert!(text.contains(&published), "{text}");
    let local = text.replace(&published, &format!("{base}/{name}"));
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = dir.path().join("cozy.yaml");
    std::fs::write(&manifest, &local).expect("write manifest");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = validate(&manifest, true, tmp.path());
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("all 1 spec.platforms installed fine"),
        "{}",
        describe(&out)
    );

    // A wrong checksum fails the install.
    let sha = sha256_hex(&std::fs::read(&archive).expect("archive"));
    let wrong = sha256_hex(b"not the archive");
    std::fs::write(&manifest, local.replace(&sha, &wrong)).expect("write");
    let out = validate(&manifest, true, tmp.path());
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("checksum does not match"),
        "{}",
        describe(&out)
    );
}

#[test]
fn kubectl_krew_installs_runs_completes_and_uninstalls_the_plugin() {
    let plane = plane();
    let root = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    let krew_root = root.path().join("krew");
    let krew_bin = krew_root.join("bin");
    let path = path_with(&[&krew_bin]);
    let run_with = |args: &[&str], env: &[(&str, &std::ffi::OsStr)]| -> Output {
        Command::new(kubectl_dir().join("kubectl"))
            .args(args)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", home.path())
            .env("KREW_ROOT", &krew_root)
            .env("KREW_NO_UPGRADE_CHECK", "1")
            .env("KUBECONFIG", &plane.kubeconfig)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run kubectl")
    };
    let run = |args: &[&str]| run_with(args, &[]);
    let ok = |args: &[&str]| -> String {
        let out = run(args);
        assert!(out.status.success(), "kubectl {args:?}: {}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    // A krew whose default index (a local git repository laid out like
    // krew-index, holding the manifest as plugins/cozy.yaml) is cloned by
    // `kubectl krew update`: krew refuses to uninstall without an index.
    let manifest = dist_dir().join("cozy.yaml");
    let index = root.path().join("krew-index");
    std::fs::create_dir_all(index.join("plugins")).expect("index dir");
    std::fs::copy(&manifest, index.join("plugins/cozy.yaml")).expect("copy manifest");
    crate::support::krew::commit_index(&index, home.path(), "index");
    let out = run_with(
        &["krew", "update"],
        &[("KREW_DEFAULT_INDEX_URI", index.as_os_str())],
    );
    assert!(out.status.success(), "{}", describe(&out));
    let info = ok(&["krew", "info", "cozy"]);
    assert!(info.contains(&format!("VERSION: {}", tag())), "{info}");
    // That is the state an uninstall must return to.
    let before = tree(&krew_root);

    let archive = archive();
    let out = run(&[
        "krew",
        "install",
        &format!("--manifest={}", manifest.display()),
        &format!("--archive={}", archive.display()),
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Installed plugin: cozy"),
        "{}",
        describe(&out)
    );
    let installed = krew_root.join("store/cozy").join(tag());
    for file in ["kubectl-cozy", "LICENSE"] {
        assert!(
            installed.join(file).is_file(),
            "{file} not installed in {}",
            installed.display()
        );
    }
    // Installed from a manifest, krew lists it under its pseudo-index.
    let list = ok(&["krew", "list"]);
    assert_eq!(
        list.lines().collect::<Vec<_>>(),
        ["detached/cozy"],
        "{list}"
    );
    assert!(ok(&["plugin", "list"]).contains(&krew_bin.join("kubectl-cozy").display().to_string()));

    // The plugin through kubectl, against the real cluster.
    let version = ok(&["cozy", "version"]);
    assert!(
        version.contains(&format!("Client Version: {}", tag())),
        "{version}"
    );
    assert!(version.contains("Server Version: v1."), "{version}");

    // Plugin completion: kubectl runs kubectl_complete-cozy from PATH, which
    // `completion install` links next to krew's link to the plugin.
    let message = ok(&["cozy", "completion", "install"]);
    assert!(
        message.contains(&krew_bin.join("kubectl_complete-cozy").display().to_string()),
        "{message}"
    );
    assert!(!message.contains("warning"), "{message}");
    let words = |out: String| -> Vec<String> {
        out.lines()
            .filter(|l| !l.starts_with(':'))
            .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
            .collect()
    };
    let subcommands = words(ok(&["__complete", "cozy", ""]));
    for sub in ["serve", "doctor", "kinds", "completion", "version"] {
        assert!(
            subcommands.iter().any(|w| w == sub),
            "{sub} not in {subcommands:?}"
        );
    }
    let kinds = words(ok(&["__complete", "cozy", "kinds", ""]));
    assert_eq!(kinds, ["list", "scaffold"]);

    let out = run(&["krew", "uninstall", "cozy"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Uninstalled plugin: cozy"),
        "{}",
        describe(&out)
    );
    assert!(run(&["cozy", "version", "--client"]).status.code() != Some(0));

    // krew removed its link, its store and its receipt; what is left is the
    // completer link `completion install` made, now dangling. It must go: a
    // krew with no receipt (one not installed through krew itself, like this
    // one) takes a bin/ entry without receipts for an old krew home and
    // refuses to run. The manifest's caveats tell users to remove it.
    let after = tree(&krew_root);
    let left: Vec<&String> = after.difference(&before).collect();
    assert_eq!(
        left,
        [&"L bin/kubectl_complete-cozy".to_owned()],
        "{after:?}"
    );
    let gone: Vec<&String> = before.difference(&after).collect();
    assert!(gone.is_empty(), "{gone:?}");
    let caveat = "rm \"${KREW_ROOT:-$HOME/.krew}/bin/kubectl_complete-cozy\"";
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    assert!(
        text.contains(caveat),
        "the caveats say how to remove the link:\n{text}"
    );
    let out = Command::new("sh")
        .args(["-c", caveat])
        .env("KREW_ROOT", &krew_root)
        .output()
        .expect("run the caveat's command");
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(tree(&krew_root), before);
    assert_eq!(ok(&["krew", "list"]).trim(), "");
}
