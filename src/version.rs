//! What this build says about itself: its own version, the Kubernetes minor
//! version whose API semantics it implements, the `gitVersion` a standalone
//! server reports (one place, because the server writes that text and
//! `doctor` recognises a standalone server by it), and the container image
//! this version is published as (`scripts/image.sh` builds it; `serve`'s
//! tunnel agent and the in-cluster manifests default to it, so agent, server
//! and client always run the same version).

/// This build's version (`Cargo.toml`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The repository the release pipeline pushes the image to.
pub const IMAGE_REPOSITORY: &str = "ghcr.io/kubectl-cozy/kubectl-cozy";

/// The image of this very version: `IMAGE_REPOSITORY:v<version>` (its
/// entrypoint is the `kubectl-cozy` binary).
pub const IMAGE: &str = concat!(
    "ghcr.io/kubectl-cozy/kubectl-cozy:v",
    env!("CARGO_PKG_VERSION")
);

/// The Kubernetes minor version whose API semantics the server implements
/// (the k8s-openapi feature this crate is built with, and the control plane
/// the tests run against).
pub const KUBERNETES_MINOR: u32 = 36;

/// This build's platform as Go names it (`linux/amd64`), as kubectl's
/// `version` and kube-apiserver's `/version` say it (the client's and a
/// standalone server's alike).
pub fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" if cfg!(target_endian = "little") => "ppc64le",
        "powerpc64" => "ppc64",
        "loongarch64" => "loong64",
        other => other,
    };
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{os}/{arch}")
}

/// The semver build-metadata marker that names this tool in a server's
/// `gitVersion`.
const BUILD_MARKER: &str = "+kubectl-cozy.";

/// The `gitVersion` the standalone server reports in `/version`:
/// `v1.36.0+kubectl-cozy.0.1.0`. kubectl's version-skew check reads the
/// Kubernetes part; the build metadata names this tool and its version.
pub fn server_git_version() -> String {
    format!("v1.{KUBERNETES_MINOR}.0{BUILD_MARKER}{VERSION}")
}

/// Whether a server's `gitVersion` says it is a kubectl-cozy server (a
/// standalone one: through kube-apiserver, `/version` is kube-apiserver's).
pub fn is_kubectl_cozy_server(git_version: &str) -> bool {
    git_version.contains(BUILD_MARKER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_is_the_repository_at_this_version() {
        assert_eq!(IMAGE, format!("{IMAGE_REPOSITORY}:v{VERSION}"));
    }

    #[test]
    fn the_minor_is_the_test_planes() {
        let pinned = include_str!("../tests/control-plane/versions.env")
            .lines()
            .find_map(|l| l.strip_prefix("K8S_VERSION="))
            .expect("K8S_VERSION");
        let minor = pinned.split('.').nth(1).expect("minor");
        assert_eq!(minor, KUBERNETES_MINOR.to_string());
    }

    #[test]
    fn a_standalone_git_version_is_recognised() {
        let ours = server_git_version();
        assert!(ours.starts_with("v1.36.0+kubectl-cozy."), "{ours}");
        assert!(is_kubectl_cozy_server(&ours));
        assert!(!is_kubectl_cozy_server("v1.36.3"));
        assert!(!is_kubectl_cozy_server("v1.36.3+k3s1"));
    }
}
