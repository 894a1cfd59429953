//! The exclusive lock a standalone server holds on its store: `<store>.lock`
//! beside the SQLite file, locked for the life of the process (an OS file
//! lock, so a killed server leaves nothing to clean up) and naming its
//! holder — PID and address — so a second server on the same store is
//! refused with who has it. Two servers on one store would each serve only
//! their own writes and hand out the same resourceVersions.

use std::fs::File;
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

use super::private_files;

/// Taking the lock failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error(
        "the store {store} is in use by another server ({holder}); stop it or use another --data file"
    )]
    Held {
        /// The store file.
        store: PathBuf,
        /// What the holder wrote about itself.
        holder: String,
    },
    /// The lock file could not be opened, locked or written.
    #[error("lock {path}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A held store lock; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct StoreLock {
    file: File,
    path: PathBuf,
}

/// The lock file of a store.
pub fn lock_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl StoreLock {
    /// Locks `store` for this process, recording `address` as where it serves.
    pub fn acquire(store: &Path, address: &str) -> Result<StoreLock, LockError> {
        let path = lock_path(store);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = private_files::open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(LockError::Held {
                    store: store.to_owned(),
                    holder: if holder.is_empty() {
                        "a process that has not said who it is yet".into()
                    } else {
                        holder.to_owned()
                    },
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        let mut lock = StoreLock { file, path };
        lock.record(address)?;
        Ok(lock)
    }

    /// Records where the holder serves (once the real port is known).
    pub fn record(&mut self, address: &str) -> Result<(), LockError> {
        let text = format!("PID {} serving on {address}\n", std::process::id());
        let file = &mut self.file;
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(text.as_bytes()))
            .and_then(|()| file.flush())
            .map_err(|source| LockError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_who_holds_the_store() {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store.sqlite");
        let mut first = StoreLock::acquire(&store, "https://127.0.0.1:0").unwrap();
        first.record("https://127.0.0.1:7443").unwrap();
        let err = StoreLock::acquire(&store, "https://127.0.0.1:8443").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&format!("PID {}", std::process::id()))
                && text.contains("https://127.0.0.1:7443")
                && text.contains("store.sqlite"),
            "{text}"
        );
        drop(first);
        StoreLock::acquire(&store, "https://127.0.0.1:8443").expect("free once dropped");
    }
}
