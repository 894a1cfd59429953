//! Paths of the binaries cargo built for this test run, and a PATH that puts
//! them first (so kubectl's plugin discovery finds `kubectl-cozy`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// `kubectl-cozy` as built for this test run.
pub fn kubectl_cozy() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubectl-cozy"))
}

/// `kubectl_complete-cozy` as built for this test run.
pub fn kubectl_complete_cozy() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kubectl_complete-cozy"))
}

/// A PATH holding only the directory of the built plugin binaries, then
/// `extra`, then the system directories (so no other kubectl plugin leaks in).
pub fn plugin_path(extra: &[&Path]) -> OsString {
    let mut dirs: Vec<PathBuf> = vec![kubectl_cozy().parent().expect("bin dir").to_path_buf()];
    dirs.extend(extra.iter().map(|p| p.to_path_buf()));
    dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    std::env::join_paths(dirs).expect("PATH")
}
