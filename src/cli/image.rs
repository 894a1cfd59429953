//! The container image this version is published as
//! (`ghcr.io/kubectl-cozy/kubectl-cozy:v<version>`, built by
//! `scripts/image.sh`): the default image of the tunnel agent that `serve`
//! deploys and of the in-cluster manifests, so that the agent, the server and
//! the client always run the same version.

/// The repository the release pipeline pushes the image to.
pub const REPOSITORY: &str = "ghcr.io/kubectl-cozy/kubectl-cozy";

/// The image's tag: this version's release tag.
pub const TAG: &str = concat!("v", env!("CARGO_PKG_VERSION"));

/// `REPOSITORY:TAG`, the image of this very version.
pub fn reference() -> String {
    format!("{REPOSITORY}:{TAG}")
}
