//! Owner-only files and directories for what the standalone server keeps on
//! disk: the SQLite store (app specs, passwords included, sit in it and in
//! its write-ahead log) and the lock beside it. Directories this creates are
//! 0700 and files 0600; files that already exist are narrowed to 0600 (an
//! existing directory is left as the user made it).

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
}
