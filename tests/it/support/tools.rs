//! Go test tools (tests/tools/): `COZY_TEST_TOOLS_DIR`, else what
//! `tests/tools/build.sh` built (cached machine-wide, built on first use).

use std::path::PathBuf;
use std::sync::OnceLock;

static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// The directory holding the built test tools.
pub fn tools_dir() -> Result<PathBuf, String> {
    DIR.get_or_init(build).clone()
}

/// The client-go informer tool (tests/tools/informer).
pub fn informer() -> PathBuf {
    match tools_dir() {
        Ok(dir) => dir.join("informer"),
        Err(e) => panic!("the Go test tools are not available: {e}"),
    }
}

/// The Prometheus Operator's ServiceMonitor CRD, as its release ships it.
pub fn service_monitor_crd() -> PathBuf {
    match tools_dir() {
        Ok(dir) => dir.join("servicemonitors.crd.yaml"),
        Err(e) => panic!("the Go test tools are not available: {e}"),
    }
}

fn build() -> Result<PathBuf, String> {
    super::built_dir("COZY_TEST_TOOLS_DIR", "tests/tools/build.sh")
}
