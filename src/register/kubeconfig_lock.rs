//! client-go's lock on a kubeconfig file it writes: `<file>.lock`, created
//! exclusively before the file is read and removed once it is written
//! (`clientcmd.ModifyConfig`'s `lockFile`). Taking it, standalone's writes
//! and kubectl's own (`kubectl config use-context`, `set-context`, a
//! cloud CLI's `get-credentials`) never interleave, so neither loses the
//! other's change.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::cert_files::CertFilesError;

/// How long a lock another writer holds is waited for: kubectl holds it
/// for milliseconds.
const WAIT: Duration = Duration::from_secs(2);

/// A held lock, released (its file removed) when dropped.
#[derive(Debug)]
pub struct KubeconfigLock {
    path: PathBuf,
}

impl KubeconfigLock {
    /// Takes the lock of the kubeconfig `file` (its directory must exist),
    /// waiting up to [`WAIT`] while another writer holds it; a lock held
    /// longer (most likely left by a writer that crashed) is named.
    pub fn acquire(file: &Path) -> Result<KubeconfigLock, CertFilesError> {
        Self::acquire_within(file, WAIT)
    }

    fn acquire_within(file: &Path, wait: Duration) -> Result<KubeconfigLock, CertFilesError> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let deadline = Instant::now() + wait;
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => return Ok(KubeconfigLock { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if Instant::now() >= deadline {
                        return Err(CertFilesError::KubeconfigLocked { lock: path });
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(source) => {
                    return Err(CertFilesError::Io {
                        what: "lock",
                        path,
                        source,
                    });
                }
            }
        }
    }
}

impl Drop for KubeconfigLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_kubectls_file_and_excludes_a_second_writer() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        let lock = KubeconfigLock::acquire(&config).unwrap();
        assert!(dir.path().join("config.lock").exists());
        let err = KubeconfigLock::acquire_within(&config, Duration::from_millis(50)).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "{} exists",
                dir.path().join("config.lock").display()
            )),
            "{err}"
        );
        drop(lock);
        assert!(!dir.path().join("config.lock").exists());
        // Released, it is free again; a lock released while waiting is taken.
        let held = KubeconfigLock::acquire(&config).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        KubeconfigLock::acquire_within(&config, Duration::from_secs(5)).unwrap();
        release.join().unwrap();
    }
}
