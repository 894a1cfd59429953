//! The release archive, its sha256 file and its krew manifest, as
//! `scripts/release.sh` leaves them: the archive's entries and modes, a
//! statically linked binary, a checksum that matches, a manifest rendered from
//! the template for exactly this archive, and an archive that is byte for
//! byte the same when built twice from the same binary.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::Command;

use sha2::{Digest, Sha256};

use super::{archive, describe, dist_dir, host_target, tag};

/// Path → (mode, contents) of every entry of a `.tar.gz`.
pub fn entries(path: &std::path::Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let file = std::fs::File::open(path).expect("open archive");
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = BTreeMap::new();
    for entry in tar.entries().expect("read archive") {
        let mut entry = entry.expect("archive entry");
        let name = entry
            .path()
            .expect("entry path")
            .to_string_lossy()
            .into_owned();
        let mode = entry.header().mode().expect("mode");
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("entry data");
        out.insert(name.trim_end_matches('/').to_owned(), (mode, data));
    }
    out
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn archive_holds_the_binary_license_completions_and_man_pages() {
    let entries = entries(&archive());
    let repo = super::repo();
    let mut expected = vec![
        "LICENSE".to_owned(),
        "README.md".to_owned(),
        "completions".to_owned(),
        "kubectl-cozy".to_owned(),
        "man".to_owned(),
        "man/man1".to_owned(),
    ];
    for dir in ["completions", "docs/man"] {
        for e in std::fs::read_dir(repo.join(dir)).expect("read dir") {
            let name = e.expect("entry").file_name().to_string_lossy().into_owned();
            let prefix = if dir == "completions" {
                "completions"
            } else {
                "man/man1"
            };
            expected.push(format!("{prefix}/{name}"));
        }
    }
    expected.sort();
    let names: Vec<String> = entries.keys().cloned().collect();
    assert_eq!(names, expected);

    for (name, (mode, data)) in &entries {
        let want = match name.as_str() {
            "kubectl-cozy" | "completions" | "man" | "man/man1" => 0o755,
            _ => 0o644,
        };
        assert_eq!(mode & 0o7777, want, "{name} mode {mode:o}");
        let committed = match name.split_once('/') {
            Some(("completions", file)) => Some(repo.join("completions").join(file)),
            Some(("man", rest)) if rest.starts_with("man1/") => {
                Some(repo.join("docs/man").join(&rest["man1/".len()..]))
            }
            _ if name == "LICENSE" || name == "README.md" => Some(repo.join(name)),
            _ => None,
        };
        if let Some(path) = committed {
            assert_eq!(
                data,
                &std::fs::read(&path).expect("committed file"),
                "{name} differs from {}",
                path.display()
            );
        }
    }
}

#[test]
fn linux_binaries_are_statically_linked_and_run() {
    if !host_target().contains("-linux-gnu") {
        eprintln!("skipping: static linking is checked on linux-gnu targets");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let status = Command::new("tar")
        .arg("-C")
        .arg(dir.path())
        .arg("-xzf")
        .arg(archive())
        .status()
        .expect("run tar");
    assert!(status.success());
    let bin = "kubectl-cozy";
    let path = dir.path().join(bin);
    let file = Command::new("file")
        .arg("-b")
        .arg(&path)
        .output()
        .expect("run file");
    let desc = String::from_utf8_lossy(&file.stdout);
    assert!(
        desc.contains("statically linked") || desc.contains("static-pie linked"),
        "{bin}: {desc}"
    );
    assert!(!desc.contains("not stripped"), "{bin}: {desc}");
    let ldd = Command::new("ldd").arg(&path).output().expect("run ldd");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&ldd.stdout),
        String::from_utf8_lossy(&ldd.stderr)
    );
    assert!(!text.contains("=>"), "{bin} needs shared libraries: {text}");
    let out = Command::new(dir.path().join("kubectl-cozy"))
        .args(["version", "--client"])
        .env("HOME", dir.path())
        .output()
        .expect("run the archived binary");
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Client Version: {}\n", tag())
    );
}

#[test]
fn sha256_file_matches_the_archive() {
    let archive = archive();
    let name = archive
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let sums =
        std::fs::read_to_string(dist_dir().join(format!("{name}.sha256"))).expect("sha256 file");
    let sha = sha256_hex(&std::fs::read(&archive).expect("read archive"));
    assert_eq!(sums, format!("{sha}  {name}\n"));
    // The format sha256sum checks.
    let out = Command::new("sha256sum")
        .arg("--check")
        .arg(format!("{name}.sha256"))
        .current_dir(dist_dir())
        .output()
        .expect("run sha256sum");
    assert!(out.status.success(), "{}", describe(&out));
}

#[test]
fn manifest_is_the_templates_platform_for_this_archive() {
    let text = std::fs::read_to_string(dist_dir().join("cozy.yaml")).expect("cozy.yaml");
    let manifest: serde_json::Value = serde_saphyr::from_str(&text).expect("manifest is YAML");
    assert_eq!(
        manifest["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(manifest["kind"], "Plugin");
    assert_eq!(manifest["metadata"]["name"], "cozy");
    assert_eq!(manifest["spec"]["version"], tag());
    let platforms = manifest["spec"]["platforms"].as_array().expect("platforms");
    assert_eq!(platforms.len(), 1, "{text}");
    let platform = &platforms[0];
    let archive = archive();
    let name = archive
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        platform["uri"],
        format!(
            "https://github.com/kubectl-cozy/kubectl-cozy/releases/download/{}/{name}",
            tag()
        )
    );
    assert_eq!(
        platform["sha256"],
        sha256_hex(&std::fs::read(&archive).expect("read archive"))
    );
    let (os, arch) = match host_target().as_str() {
        t if t.starts_with("x86_64-unknown-linux") => ("linux", "amd64"),
        t if t.starts_with("aarch64-unknown-linux") => ("linux", "arm64"),
        t if t.starts_with("x86_64-apple") => ("darwin", "amd64"),
        t if t.starts_with("aarch64-apple") => ("darwin", "arm64"),
        t => panic!("no krew platform for {t}"),
    };
    assert_eq!(platform["selector"]["matchLabels"]["os"], os);
    assert_eq!(platform["selector"]["matchLabels"]["arch"], arch);
    assert_eq!(platform["bin"], "kubectl-cozy");
    let files: Vec<(String, String)> = platform["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["from"].as_str().unwrap_or_default().to_owned(),
                f["to"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let entries = entries(&archive);
    for (from, to) in &files {
        assert!(
            entries.contains_key(from),
            "files.from {from} is not in the archive"
        );
        assert_eq!(to, ".");
    }
    assert!(
        files.iter().any(|(f, _)| f == "LICENSE"),
        "krew-index requires the LICENSE: {files:?}"
    );
    assert!(
        !text.contains("{{"),
        "unrendered template in the manifest:\n{text}"
    );
}

#[test]
fn release_script_refuses_bad_arguments() {
    let out = Command::new("bash")
        .arg(super::repo().join("scripts/release.sh"))
        .arg("--bogus")
        .output()
        .expect("run release.sh");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument --bogus"));

    let render = super::repo().join("krew/render.sh");
    let sha = "0".repeat(64);
    let out = Command::new("bash")
        .arg(&render)
        .arg(tag())
        .arg(format!("riscv64gc-unknown-linux-gnu={sha}"))
        .output()
        .expect("run render.sh");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("no platform for target riscv64gc-unknown-linux-gnu"),
        "{}",
        describe(&out)
    );
    let out = Command::new("bash")
        .arg(&render)
        .arg(tag())
        .arg("x86_64-unknown-linux-gnu=not-a-sha")
        .output()
        .expect("run render.sh");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

#[test]
fn archive_and_manifest_are_reproducible() {
    // A second run over the same build gives the same bytes (sorted entries,
    // fixed owner and mtime, gzip without a time stamp), so the published
    // sha256 can be checked by rebuilding.
    let profile = std::env::var("COZY_DIST_PROFILE").unwrap_or_else(|_| "dist-check".to_owned());
    let again = tempfile::tempdir().expect("tempdir");
    let dir = super::run_script(
        "scripts/release.sh",
        &[
            "--profile",
            &profile,
            "--out",
            &again.path().to_string_lossy(),
        ],
    )
    .expect("release.sh");
    let name = archive().file_name().expect("name").to_owned();
    for file in [name.as_os_str(), "cozy.yaml".as_ref()] {
        assert!(
            std::fs::read(dist_dir().join(file)).expect("first build")
                == std::fs::read(dir.join(file)).expect("second build"),
            "{} differs between two runs of release.sh",
            file.to_string_lossy()
        );
    }
}
