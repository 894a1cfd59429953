//! Owner-only files and directories for what the standalone server keeps on
//! disk: the SQLite store (app specs, passwords included, sit in it and in
//! its write-ahead log) and the lock beside it. Directories this creates are
//! 0700 and files 0600; files that already exist are narrowed to 0600 (an
//! existing directory is left as the user made it, but one that must be
//! trusted, the state directory with the CA, is refused when another user
//! owns it or may write to it: [`check_trusted_dir`]).

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Creates `dir` and any missing parents, owner-only (0700 where created).
pub fn create_dir(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Refuses a directory this user must trust (where the standalone CA's key
/// lives) that another user owns or can write to: they could have put
/// their own CA there, or replace one. (A shared `/tmp` is the example.)
/// Its parents are checked as OpenSSH checks a key's: each owned by this
/// user or root, and none others may write to unless it is sticky (as
/// `/tmp` is: there nobody may rename what another user owns); otherwise
/// another user could move the directory aside and put their own in its
/// place.
pub fn check_trusted_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(dir)?;
        let me = rustix::process::geteuid().as_raw();
        check_trusted_parents(dir, me)?;
        if meta.uid() != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "owned by uid {}, not by this user (uid {me}): another user could have put a CA there",
                    meta.uid()
                ),
            ));
        }
        let mode = meta.mode() & 0o777;
        if mode & 0o022 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "writable by other users (mode {mode:04o}): make it owner-only (chmod 700) or choose another"
                ),
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Each parent of `dir` (resolved) is owned by `me` or root, and writable
/// by others only if sticky.
#[cfg(unix)]
fn check_trusted_parents(dir: &Path, me: u32) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    const STICKY: u32 = 0o1000;
    let resolved = std::fs::canonicalize(dir)?;
    for parent in resolved.ancestors().skip(1) {
        let meta = std::fs::metadata(parent)?;
        let mode = meta.mode() & 0o7777;
        let refusal = if meta.uid() != me && meta.uid() != 0 {
            format!(
                "its parent {} is owned by uid {}, not by this user (uid {me}) or root: \
                 that user could put another directory in its place",
                parent.display(),
                meta.uid()
            )
        } else if mode & 0o022 != 0 && mode & STICKY == 0 {
            format!(
                "its parent {} is writable by other users and not sticky (mode {:04o}): \
                 they could put another directory in its place",
                parent.display(),
                mode
            )
        } else {
            continue;
        };
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, refusal));
    }
    Ok(())
}

/// Opens `path` for reading and writing, creating it 0600 if missing and
/// narrowing it to 0600 if it exists with wider permissions.
pub fn open(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    restrict(&file)?;
    Ok(file)
}

/// Narrows `path` to 0600 if it exists (a no-op when it does not).
pub fn restrict_path(path: &Path) -> io::Result<()> {
    match File::open(path) {
        Ok(file) => restrict(&file),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
fn restrict(file: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = file.metadata()?.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict(_file: &File) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn created_directories_and_files_are_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&tmp.path().join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("store.sqlite");
        open(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
    }

    #[test]
    fn existing_world_readable_files_are_narrowed() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("store.sqlite-wal");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        restrict_path(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        restrict_path(&tmp.path().join("absent")).unwrap();
    }

    #[test]
    fn a_directory_others_own_or_may_write_is_not_trusted() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("state");
        create_dir(&dir).unwrap();
        check_trusted_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).unwrap();
        let err = check_trusted_dir(&dir).unwrap_err().to_string();
        assert!(err.contains("writable by other users (mode 0770)"), "{err}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        check_trusted_dir(&dir).unwrap();
        // A parent others may write to: only if sticky (as /tmp is, where
        // the temporary directory lives).
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = check_trusted_dir(&dir).unwrap_err().to_string();
        assert!(
            err.contains("is writable by other users and not sticky (mode 0777)"),
            "{err}"
        );
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        check_trusted_dir(&dir).unwrap();
        // Through a symbolic link: the directory it leads to is judged.
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        check_trusted_dir(&link).unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        // Another user's (where the test may give it away: as root).
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
            let err = check_trusted_dir(&dir).unwrap_err().to_string();
            assert!(
                err.starts_with("owned by uid 65534, not by this user (uid 0)"),
                "{err}"
            );
        }
    }
}
