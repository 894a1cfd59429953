//! The container image `scripts/image.sh` assembles from the release
//! archive: what skopeo reads from the oci-archive (entrypoint, user, labels,
//! platform, the reference `kubectl_cozy::cli::image` names), what umoci
//! unpacks from the layout (a scratch-like root), and the entrypoint run from
//! that root as a container runtime would: as user 65532, on a read-only root
//! filesystem, with the cluster's kubeconfig and /etc/hosts mounted in, against
//! the real test control plane.
//!
//! Needs umoci, skopeo and util-linux's unshare; without them the tests are
//! skipped with a note unless `COZY_REQUIRE_IMAGE_TOOLS` is set (`.ci/run`
//! installs them through scripts/install-deps.sh and sets it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use super::{archive, describe, dist_dir, tag};
use crate::support::plane;

struct Image {
    /// The OCI layout directory.
    layout: PathBuf,
    /// The oci-archive tarball.
    archive: PathBuf,
}

fn arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

fn tools_present() -> bool {
    let found = ["umoci", "skopeo", "unshare", "chroot"].iter().all(|tool| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(tool).is_file()))
    });
    if !found {
        assert!(
            std::env::var_os("COZY_REQUIRE_IMAGE_TOOLS").is_none(),
            "umoci, skopeo, unshare or chroot is missing (scripts/install-deps.sh installs them)"
        );
        eprintln!("skipping the image check: umoci, skopeo, unshare or chroot is not installed");
    }
    found && std::env::consts::OS == "linux"
}

static IMAGE: OnceLock<Result<Image, String>> = OnceLock::new();

/// The image of this machine's archive: from the dist directory when
/// `scripts/image.sh` already ran there, else built next to the archive.
fn built() -> Option<&'static Image> {
    if !tools_present() {
        return None;
    }
    let image = IMAGE.get_or_init(|| {
        let name = format!("kubectl-cozy-{}-linux-{}", tag(), arch());
        let mut dir = dist_dir();
        if !dir.join(format!("{name}.oci.tar")).is_file() {
            dir = super::run_script(
                "scripts/image.sh",
                &[
                    "--archive",
                    &archive().to_string_lossy(),
                    "--out",
                    &Path::new(env!("CARGO_TARGET_TMPDIR"))
                        .join("image")
                        .to_string_lossy(),
                ],
            )?;
        }
        Ok(Image {
            layout: dir.join(format!("{name}.oci")),
            archive: dir.join(format!("{name}.oci.tar")),
        })
    });
    match image {
        Ok(image) => Some(image),
        Err(e) => panic!("no container image: {e}"),
    }
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", describe(out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn skopeo_reads_entrypoint_user_labels_and_reference() {
    let Some(image) = built() else { return };
    let reference = format!("oci-archive:{}", image.archive.display());
    let config = json(
        &Command::new("skopeo")
            .args(["inspect", "--config", &reference])
            .output()
            .expect("run skopeo"),
    );
    assert_eq!(config["os"], "linux");
    assert_eq!(config["architecture"], arch());
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["/kubectl-cozy"])
    );
    assert!(config["config"]["Cmd"].is_null(), "{config:#}");
    assert_eq!(config["config"]["User"], "65532:65532");
    let labels = &config["config"]["Labels"];
    assert_eq!(labels["org.opencontainers.image.version"], tag());
    assert_eq!(labels["org.opencontainers.image.licenses"], "Apache-2.0");
    assert_eq!(
        labels["org.opencontainers.image.source"],
        "https://github.com/kubectl-cozy/kubectl-cozy"
    );
    assert_eq!(
        config["rootfs"]["diff_ids"].as_array().map(Vec::len),
        Some(1)
    );

    let inspect = json(
        &Command::new("skopeo")
            .args(["inspect", &reference])
            .output()
            .expect("run skopeo"),
    );
    assert_eq!(inspect["Labels"], *labels);
    assert_eq!(inspect["Layers"].as_array().map(Vec::len), Some(1));

    // Both outputs carry the reference serve and the manifests default to.
    let index = read_index_from_archive(&image.archive);
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        kubectl_cozy::version::IMAGE
    );
    let index: serde_json::Value = serde_json::from_slice(
        &std::fs::read(image.layout.join("index.json")).expect("layout index.json"),
    )
    .expect("index JSON");
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        kubectl_cozy::version::IMAGE
    );
}

fn read_index_from_archive(path: &Path) -> serde_json::Value {
    use std::io::Read;
    let mut tar = tar::Archive::new(std::fs::File::open(path).expect("open oci-archive"));
    for entry in tar.entries().expect("read oci-archive") {
        let mut entry = entry.expect("entry");
        if entry.path().expect("path").as_os_str() == "index.json" {
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("read index.json");
            return serde_json::from_slice(&data).expect("index JSON");
        }
    }
    panic!("{} has no index.json", path.display());
}

/// Unpacks the image into `<dir>/bundle` with umoci and returns the bundle.
fn unpack(image: &Image, dir: &Path) -> PathBuf {
    let bundle = dir.join("bundle");
    let mut cmd = Command::new("umoci");
    cmd.arg("unpack");
    if !is_root() {
        cmd.arg("--rootless");
    }
    let out = cmd
        .arg("--image")
        .arg(format!(
            "{}:{}",
            image.layout.display(),
            kubectl_cozy::version::IMAGE
        ))
        .arg(&bundle)
        .output()
        .expect("run umoci unpack");
    assert!(out.status.success(), "{}", describe(&out));
    bundle
}

fn is_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

#[test]
fn unpacked_root_is_scratch_like_and_the_entrypoint_talks_to_the_cluster() {
    let Some(image) = built() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = unpack(image, dir.path());
    let rootfs = bundle.join("rootfs");

    // Only what the image needs: no shell, no libc, no package manager.
    let mut files = Vec::new();
    for entry in walk(&rootfs) {
        files.push(entry);
    }
    files.sort();
    assert_eq!(
        files,
        [
            "etc/",
            "etc/group",
            "etc/nsswitch.conf",
            "etc/passwd",
            "etc/ssl/",
            "etc/ssl/certs/",
            "etc/ssl/certs/ca-certificates.crt",
            "home/",
            "home/nonroot/",
            "kubectl-cozy",
            "tmp/",
            "usr/",
            "usr/share/",
            "usr/share/doc/",
            "usr/share/doc/kubectl-cozy/",
            "usr/share/doc/kubectl-cozy/LICENSE",
        ]
    );
    let passwd = std::fs::read_to_string(rootfs.join("etc/passwd")).expect("passwd");
    assert!(passwd.contains("nonroot:x:65532:65532:"), "{passwd}");
    let group = std::fs::read_to_string(rootfs.join("etc/group")).expect("group");
    assert!(group.contains("nonroot:x:65532:"), "{group}");
    let cas =
        std::fs::read_to_string(rootfs.join("etc/ssl/certs/ca-certificates.crt")).expect("CAs");
    assert!(cas.matches("BEGIN CERTIFICATE").count() > 50, "a CA bundle");

    // The runtime spec umoci derives from the image config.
    let spec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("config.json")).expect("config.json"))
            .expect("runtime spec");
    assert_eq!(
        spec["process"]["args"],
        serde_json::json!(["/kubectl-cozy"])
    );
    assert_eq!(spec["process"]["user"]["uid"], 65532);
    assert_eq!(spec["process"]["user"]["gid"], 65532);

    // Run the entrypoint the way a runtime would: the image's user, a
    // read-only root, the cluster's kubeconfig (server named `localhost`, so
    // the static binary resolves it through /etc/hosts and nsswitch.conf)
    // and /etc/hosts bind-mounted onto mount points made in this copy.
    let plane = plane();
    let kubeconfig = dir.path().join("kubeconfig");
    let flat = plane
        .kubectl()
        .args(["config", "view", "--raw", "--minify", "--flatten"])
        .output()
        .expect("kubectl config view");
    assert!(flat.status.success(), "{}", describe(&flat));
    let text =
        String::from_utf8_lossy(&flat.stdout).replace("https://127.0.0.1:", "https://localhost:");
    assert!(text.contains("https://localhost:"), "{text}");
    std::fs::write(&kubeconfig, text).expect("write kubeconfig");
    set_mode(&kubeconfig, 0o644);
    std::fs::create_dir(rootfs.join("run")).expect("mkdir run");
    std::fs::create_dir(rootfs.join("proc")).expect("mkdir proc");
    std::fs::write(rootfs.join("run/kubeconfig"), "").expect("mount point");
    std::fs::write(rootfs.join("etc/hosts"), "").expect("mount point");

    // A private mount and PID namespace: the root bound onto itself and made
    // read-only last (the mounts below it stay as they are), /proc as a
    // runtime mounts it, then the image's environment only.
    let run = |args: &[&str]| -> Output {
        let script = r#"set -e
root="$1"; kubeconfig="$2"; user="$3"; shift 3
chroot="$(command -v chroot)"
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --bind "$kubeconfig" "$root/run/kubeconfig"
mount --bind /etc/hosts "$root/etc/hosts"
mount -o remount,bind,ro "$root"
if [ -n "$user" ]; then set -- --userspec="$user" "$root" "$@"; else set -- "$root" "$@"; fi
exec env -i HOME=/home/nonroot PATH=/ "$chroot" "$@""#;
        let mut cmd = Command::new("unshare");
        if !is_root() {
            cmd.arg("--map-root-user");
        }
        let user = if is_root() { "65532:65532" } else { "" };
        cmd.args(["--mount", "--pid", "--fork", "--propagation", "private"])
            .args(["sh", "-c", script, "sh"])
            .arg(&rootfs)
            .arg(&kubeconfig)
            .arg(user)
            .arg("/kubectl-cozy")
            .args(args)
            .output()
            .expect("run unshare")
    };
    let out = run(&["version", "--kubeconfig", "/run/kubeconfig"]);
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("Client Version: {}", tag())),
        "{stdout}"
    );
    assert!(stdout.contains("Server Version: v1."), "{stdout}");

    // The root really is read-only there: /tmp is world-writable in the
    // image, yet nothing can be created in it.
    let out = run(&["completion", "install", "--dir", "/tmp"]);
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Read-only file system"),
        "{}",
        describe(&out)
    );
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Paths under `root`, directories with a trailing slash.
fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            if path.symlink_metadata().expect("metadata").is_dir() {
                out.push(format!("{rel}/"));
                stack.push(path);
            } else {
                out.push(rel);
            }
        }
    }
    out
}
