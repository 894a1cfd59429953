//! Test helpers: writing files and building `.tgz` chart archives —
//! including malicious ones — entry by entry, with raw header names so
//! that `..`, absolute paths and links can be produced.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use tar::{EntryType, Header};

/// A valid Chart.yaml for a chart named `postgres`, version 0.1.0.
pub(super) const CHART_YAML_OK: &str = "apiVersion: v2\nname: postgres\nversion: 0.1.0\nappVersion: \"17\"\ndescription: Managed PostgreSQL\n";

/// Writes `content` to `path`, creating parent directories.
pub(super) fn write_file(path: &Path, content: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, content).unwrap();
}

/// Builds a gzip-compressed tar archive entry by entry.
pub(crate) struct Tgz {
    builder: tar::Builder<GzEncoder<File>>,
}

impl Tgz {
    /// Starts an archive at `path`.
    pub(super) fn create(path: &Path) -> Self {
        let file = File::create(path).unwrap();
        Self {
            builder: tar::Builder::new(GzEncoder::new(file, Compression::fast())),
        }
    }

    /// A regular file with the given content.
    pub(super) fn file(&mut self, name: &str, content: &str) -> &mut Self {
        self.raw(
            name,
            EntryType::Regular,
            None,
            content.len() as u64,
            content.as_bytes(),
        )
    }

    /// A regular file of `size` bytes of `byte`, streamed (never in memory).
    pub(super) fn big_file(&mut self, name: &str, size: u64, byte: u8) -> &mut Self {
        self.raw(
            name,
            EntryType::Regular,
            None,
            size,
            io::repeat(byte).take(size),
        )
    }

    /// A directory entry.
    pub(super) fn dir(&mut self, name: &str) -> &mut Self {
        self.raw(name, EntryType::Directory, None, 0, io::empty())
    }

    /// A symbolic or hard link, or any other data-less entry type.
    pub(super) fn special(&mut self, name: &str, kind: EntryType, link: Option<&str>) -> &mut Self {
        self.raw(name, kind, link, 0, io::empty())
    }

    /// An entry whose name (≤ 100 bytes) is written to the header verbatim.
    pub(super) fn raw(
        &mut self,
        name: &str,
        kind: EntryType,
        link: Option<&str>,
        size: u64,
        data: impl Read,
    ) -> &mut Self {
        let mut header = Header::new_gnu();
        {
            let gnu = header.as_gnu_mut().unwrap();
            gnu.name[..name.len()].copy_from_slice(name.as_bytes());
            if let Some(link) = link {
                gnu.linkname[..link.len()].copy_from_slice(link.as_bytes());
            }
        }
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(if kind == EntryType::Directory {
            0o755
        } else {
            0o644
        });
        header.set_mtime(1_700_000_000);
        header.set_cksum();
        self.builder.append(&header, data).unwrap();
        self
    }

    /// A file with a long (GNU long name / PAX) path, through the tar
    /// crate's own path handling.
    pub(super) fn long_name_file(&mut self, name: &str, content: &str) -> &mut Self {
        let mut header = Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(EntryType::Regular);
        self.builder
            .append_data(&mut header, name, content.as_bytes())
            .unwrap();
        self
    }

    /// Writes the end-of-archive marker and the gzip trailer.
    pub(super) fn finish(self) {
        self.builder.into_inner().unwrap().finish().unwrap();
    }
}

/// A minimal valid chart archive for `postgres` with the given extra
/// entries appended by `extra`.
pub(crate) fn chart_tgz(path: &Path, extra: impl FnOnce(&mut Tgz)) {
    let mut tgz = Tgz::create(path);
    tgz.dir("postgres/")
        .file("postgres/Chart.yaml", CHART_YAML_OK)
        .file("postgres/values.yaml", "replicas: 2\n");
    extra(&mut tgz);
    tgz.finish();
}
