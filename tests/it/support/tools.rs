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
    tool("informer")
}

/// A file the test tools' build left (a tool, or a CRD it fetched).
fn tool(file: &str) -> PathBuf {
    match tools_dir() {
        Ok(dir) => dir.join(file),
        Err(e) => panic!("the Go test tools are not available: {e}"),
    }
}

/// The Prometheus Operator's ServiceMonitor and PrometheusRule CRDs, as its
/// release ships them.
pub fn prometheus_operator_crds() -> [PathBuf; 2] {
    [
        tool("servicemonitors.crd.yaml"),
        tool("prometheusrules.crd.yaml"),
    ]
}

/// Prometheus's rules manager and PromQL engine evaluating alerting rules
/// over series (tests/tools/promrules).
pub fn promrules() -> PathBuf {
    tool("promrules")
}

fn build() -> Result<PathBuf, String> {
    super::built_dir("COZY_TEST_TOOLS_DIR", "tests/tools/build.sh")
}
