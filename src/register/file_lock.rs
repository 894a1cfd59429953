//! An exclusive `<file>.lock` around a file's read-modify-write, as
//! client-go takes one around a kubeconfig it writes
//! (`clientcmd.ModifyConfig`'s `lockFile`): created exclusively before the
//! file is read, removed once it is written. Standalone takes it around
//! its kubeconfig writes, so that neither they nor kubectl's own
//! (`kubectl config use-context`, `set-context`, a cloud CLI's
//! `get-credentials`) lose the other's change, and around its
//! previous-context record, which servers sharing a state directory update.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::cert_files::CertFilesError;

/// How long a lock another writer holds is waited for: writers hold it
/// for milliseconds.
const WAIT: Duration = Duration::from_secs(2);

/// How old a lock on a file only kubectl-cozy writes must be to be taken
/// for one left by a crashed writer ([`FileLock::acquire_own`]).
const STALE: Duration = Duration::from_secs(30);

/// A held lock, released (its file removed) when dropped.
#[derive(Debug)]
pub struct FileLock {
    path: PathBuf,
}

impl FileLock {
    /// Takes the lock of `file` (its directory must exist), waiting up to
    /// [`WAIT`] while another writer holds it; a lock held longer (most
    /// likely left by a writer that crashed) is named, not broken, as
    /// kubectl does.
    pub fn acquire(file: &Path) -> Result<FileLock, CertFilesError> {
        Self::acquire_within(file, WAIT)
    }

    /// [`FileLock::acquire`] for a file only kubectl-cozy writes, whose
    /// writers hold the lock for milliseconds: a lock older than
    /// [`STALE`] was left by one that crashed, and is taken over.
    pub fn acquire_own(file: &Path) -> Result<FileLock, CertFilesError> {
        match Self::acquire_within(file, WAIT) {
            Err(CertFilesError::Locked { lock, .. })
                if std::fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE) =>
            {
                tracing::warn!(
                    "taking over {}, left by a writer that stopped",
                    lock.display()
                );
                let _ = std::fs::remove_file(&lock);
                Self::acquire_within(file, WAIT)
            }
            other => other,
        }
    }

    fn acquire_within(file: &Path, wait: Duration) -> Result<FileLock, CertFilesError> {
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
                Ok(_) => return Ok(FileLock { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if Instant::now() >= deadline {
                        return Err(CertFilesError::Locked {
                            file: file.to_owned(),
                            lock: path,
                        });
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

impl Drop for FileLock {
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
        let lock = FileLock::acquire(&config).unwrap();
        assert!(dir.path().join("config.lock").exists());
        let err = FileLock::acquire_within(&config, Duration::from_millis(50)).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "{} exists: another program is writing {}",
                dir.path().join("config.lock").display(),
                config.display()
            )),
            "{err}"
        );
        drop(lock);
        assert!(!dir.path().join("config.lock").exists());
        // Released, it is free again; a lock released while waiting is taken.
        let held = FileLock::acquire(&config).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        FileLock::acquire_within(&config, Duration::from_secs(5)).unwrap();
        release.join().unwrap();
    }

    #[test]
    fn a_stale_lock_on_our_own_file_is_taken_over_a_fresh_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("previous-contexts.json");
        let lock = dir.path().join("previous-contexts.json.lock");
        std::fs::write(&lock, "").unwrap();
        // Fresh: another writer's, waited for and named.
        assert!(matches!(
            FileLock::acquire_own(&record),
            Err(CertFilesError::Locked { .. })
        ));
        // Left by a writer that crashed a while ago: taken, and released.
        let old = std::time::SystemTime::now() - STALE - Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let held = FileLock::acquire_own(&record).unwrap();
        assert!(lock.exists());
        drop(held);
        assert!(!lock.exists());
    }
}
