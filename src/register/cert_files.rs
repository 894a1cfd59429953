//! The files both kinds of local credentials keep under the state directory
//! (`serve`'s per-cluster CA and serving certificate, `serve --standalone`'s
//! CA): one error type, the CA loaded from `ca.crt` + `ca.key`, owner-only
//! directories, and owner-only files written atomically (a reader never sees
//! half a key).

use std::path::{Path, PathBuf};

use crate::pki::Ca;

/// Failures preparing certificates and their files.
#[derive(Debug, thiserror::Error)]
pub enum CertFilesError {
    /// File I/O in the state directory.
    #[error("{what} {path}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Certificate generation.
    #[error(transparent)]
    Pki(#[from] crate::pki::Error),
    /// A kubeconfig to write into is not one; it is left as it is.
    #[error("{path} is not a kubeconfig ({message}); it was left as it is: pass another path")]
    NotKubeconfig {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Another writer's `<file>.lock` stayed (client-go's on a kubeconfig,
    /// or another standalone server's on the state directory's record).
    #[error(
        "{lock} exists: another program is writing {file} (kubectl config …, another standalone server), or \
         one stopped while it did; remove the lock if none is running"
    )]
    Locked {
        /// The locked file.
        file: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// A stored CA could not be loaded.
    #[error("the CA in {path} is unusable ({message}); remove the directory to start afresh")]
    BadCa {
        /// The directory.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// A closure mapping an I/O error about `path` to [`CertFilesError::Io`].
pub fn io(
    what: &'static str,
    path: &Path,
) -> impl FnOnce(std::io::Error) -> CertFilesError + use<> {
    let path = path.to_owned();
    move |source| CertFilesError::Io { what, path, source }
}

/// Reads `path` as text.
pub fn read(path: &Path) -> Result<String, CertFilesError> {
    std::fs::read_to_string(path).map_err(io("read", path))
}

/// The CA stored in `dir` (`ca.crt` and `ca.key`), or `None` when either
/// file is missing; a pair that does not load is [`CertFilesError::BadCa`].
pub fn stored_ca(dir: &Path) -> Result<Option<Ca>, CertFilesError> {
    let (cert, key) = ca_paths(dir);
    if !(cert.exists() && key.exists()) {
        return Ok(None);
    }
    let ca = Ca::from_pem(&read(&cert)?, &read(&key)?).map_err(|e| CertFilesError::BadCa {
        path: dir.to_owned(),
        message: e.to_string(),
    })?;
    Ok(Some(ca))
}

/// Writes `ca` into `dir` as `ca.key` and `ca.crt`, owner-only.
pub fn store_ca(dir: &Path, ca: &Ca) -> Result<(), CertFilesError> {
    let (cert, key) = ca_paths(dir);
    write_private(&key, &ca.pair().key_pem)?;
    write_private(&cert, ca.cert_pem())
}

fn ca_paths(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("ca.crt"), dir.join("ca.key"))
}

/// Creates `dir` and its missing parents 0700, and narrows an existing `dir`
/// to 0700.
pub fn create_private_dir(dir: &Path) -> Result<(), CertFilesError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io("create", dir))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io("create", dir))
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir).map_err(io("create", dir))
    }
}

/// Writes `text` to `path` readable by the owner only, atomically: into a
/// fresh temporary file beside it (0600 from its creation), synced, then
/// renamed over it, so a reader (a kubectl started the moment `serve` says it
/// is ready) never sees half a file and the old file's mode never leaks.
pub fn write_private(path: &Path, text: &str) -> Result<(), CertFilesError> {
    use std::io::Write;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    // A temporary file left by a crash may carry another mode: start afresh.
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())
                .and_then(|()| file.sync_all())
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io("write", path))
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn private_files_replace_wider_ones_and_leave_no_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let key = dir.join("ca.key");
        std::fs::write(&key, "old").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&key, "new").unwrap();
        assert_eq!(mode(&key), 0o600);
        assert_eq!(std::fs::read_to_string(&key).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("ca.key")]);
    }

    #[test]
    fn a_stored_ca_round_trips_and_a_broken_one_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(stored_ca(tmp.path()).unwrap().is_none());
        let ca = Ca::new("test CA").unwrap();
        store_ca(tmp.path(), &ca).unwrap();
        let loaded = stored_ca(tmp.path()).unwrap().unwrap();
        assert_eq!(loaded.cert_pem(), ca.cert_pem());
        std::fs::write(tmp.path().join("ca.key"), "not a key").unwrap();
        let err = stored_ca(tmp.path()).unwrap_err();
        assert!(matches!(err, CertFilesError::BadCa { .. }), "{err}");
        assert!(err.to_string().contains("remove the directory"), "{err}");
    }
}
