//! Go test tools (tests/tools/): `COZY_TEST_TOOLS_DIR`, else what
//! `tests/tools/build.sh` built (cached machine-wide, built on first use).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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

fn build() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("COZY_TEST_TOOLS_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/build.sh");
    let output = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("run {}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed with {}",
            script.display(),
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let dir = stdout.lines().last().unwrap_or_default().trim();
    if dir.is_empty() {
        return Err(format!("{} printed no directory", script.display()));
    }
    Ok(PathBuf::from(dir))
}
