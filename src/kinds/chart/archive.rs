//! Reading a packaged chart (`.tgz`) in memory, without extracting it.
//!
//! A chart archive holds exactly one top-level directory; of its entries only
//! `<dir>/Chart.yaml`, `<dir>/values.yaml` and `<dir>/values.schema.json` are
//! read. Archives with entries that could be dangerous to anything that does
//! extract them — `..` components, absolute paths, symbolic or hard links,
//! device files and FIFOs, a second top-level directory, duplicated chart
//! files — are refused outright, and decoding stops at the [`Limits`], so a
//! gzip bomb ends in an error instead of exhausting memory.

use std::cell::Cell;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;
use std::rc::Rc;

use flate2::read::GzDecoder;
use tar::EntryType;

use super::Limits;
use super::error::ChartError;
use super::files::{
    CHART_YAML, ChartFiles, RawFile, VALUES_SCHEMA_JSON, VALUES_YAML, io_error, read_limited,
};

/// Reads a `.tgz` file into memory (bounded by [`Limits::max_archive_bytes`]).
pub(super) fn read_archive_file(path: &Path, limits: &Limits) -> Result<Vec<u8>, ChartError> {
    let shown = path.display().to_string();
    let meta = fs::metadata(path).map_err(|err| io_error(&shown, err))?;
    if !meta.is_file() {
        return Err(ChartError::NotAFile { path: shown });
    }
    if meta.len() > limits.max_archive_bytes {
        return Err(ChartError::FileTooLarge {
            file: shown,
            limit: limits.max_archive_bytes,
        });
    }
    let file = File::open(path).map_err(|err| io_error(&shown, err))?;
    read_limited(file, limits.max_archive_bytes, &shown)
}

/// Finds the chart files in an in-memory `.tgz`; `label` names the archive
/// in errors.
pub(super) fn parse_archive(
    bytes: &[u8],
    label: &str,
    limits: &Limits,
) -> Result<ChartFiles, ChartError> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(ChartError::NotGzip {
            archive: label.to_owned(),
        });
    }
    let tripped = Rc::new(Cell::new(false));
    let reader = Capped {
        inner: GzDecoder::new(bytes),
        read: 0,
        limit: limits.max_total_bytes,
        tripped: Rc::clone(&tripped),
    };
    let stream_error = |err: io::Error| {
        if tripped.get() {
            ChartError::ArchiveTooLarge {
                archive: label.to_owned(),
                limit: limits.max_total_bytes,
            }
        } else {
            ChartError::CorruptArchive {
                archive: label.to_owned(),
                message: err.to_string(),
            }
        }
    };

    let mut archive = tar::Archive::new(reader);
    let mut top: Option<String> = None;
    let mut found: Vec<(String, RawFile)> = Vec::new();
    let mut count: u64 = 0;

    for entry in archive.entries().map_err(stream_error)? {
        let mut entry = entry.map_err(stream_error)?;
        count += 1;
        if count > limits.max_entries {
            return Err(ChartError::TooManyEntries {
                archive: label.to_owned(),
                limit: limits.max_entries,
            });
        }

        let kind = entry.header().entry_type();
        if matches!(
            kind,
            EntryType::XGlobalHeader
                | EntryType::XHeader
                | EntryType::GNULongName
                | EntryType::GNULongLink
        ) {
            // Metadata records (e.g. git archive's pax_global_header).
            continue;
        }

        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let refuse = |reason: &str| ChartError::UnsafeEntry {
            archive: label.to_owned(),
            entry: raw_name.clone(),
            reason: reason.to_owned(),
        };
        let components = match split_entry_name(&entry.path_bytes()) {
            Ok(components) => components,
            Err(reason) => return Err(refuse(reason)),
        };

        let is_dir = match kind {
            EntryType::Regular | EntryType::Continuous => false,
            EntryType::Directory => true,
            EntryType::Symlink => {
                return Err(refuse("symbolic links are not allowed in a chart archive"));
            }
            EntryType::Link => return Err(refuse("hard links are not allowed in a chart archive")),
            EntryType::Char | EntryType::Block => {
                return Err(refuse("device files are not allowed in a chart archive"));
            }
            EntryType::Fifo => return Err(refuse("FIFOs are not allowed in a chart archive")),
            EntryType::GNUSparse => return Err(refuse("sparse files are not supported")),
            _ => return Err(refuse("unsupported tar entry type")),
        };

        let Some(first) = components.first() else {
            if is_dir {
                continue; // "./"
            }
            return Err(refuse("entry has an empty name"));
        };
        match &top {
            None => top = Some(first.clone()),
            Some(existing) if existing != first => {
                return Err(refuse(&format!(
                    "second top-level directory; a chart archive holds exactly one, and this one has {existing:?}"
                )));
            }
            Some(_) => {}
        }
        if components.len() == 1 && !is_dir {
            return Err(refuse("file outside the chart's top-level directory"));
        }

        if components.len() != 2 || is_dir {
            continue;
        }
        let name = components[1].as_str();
        if !matches!(name, CHART_YAML | VALUES_YAML | VALUES_SCHEMA_JSON) {
            continue;
        }
        let file_label = format!("{label}!/{first}/{name}");
        if found.iter().any(|(n, _)| n == name) {
            return Err(refuse("the archive holds this file twice"));
        }
        if entry.size() > limits.max_file_bytes {
            return Err(ChartError::FileTooLarge {
                file: file_label,
                limit: limits.max_file_bytes,
            });
        }
        let bytes = match read_limited(&mut entry, limits.max_file_bytes, &file_label) {
            Ok(bytes) => bytes,
            Err(ChartError::Io { source, .. }) => return Err(stream_error(source)),
            Err(other) => return Err(other),
        };
        found.push((
            name.to_owned(),
            RawFile {
                label: file_label,
                bytes,
            },
        ));
    }

    let location = match &top {
        Some(top) => format!("chart archive {label} (directory {top}/)"),
        None => format!("chart archive {label} (the archive is empty)"),
    };
    let mut files = ChartFiles::new(location);
    for (name, file) in found {
        if let Some(slot) = files.slot(&name) {
            *slot = Some(file);
        }
    }
    Ok(files)
}

/// Splits an entry name into its normal components (`.` and empty ones
/// dropped), refusing absolute paths and `..`.
fn split_entry_name(raw: &[u8]) -> Result<Vec<String>, &'static str> {
    let Ok(name) = std::str::from_utf8(raw) else {
        return Err("entry name is not valid UTF-8");
    };
    if name.starts_with('/') || name.starts_with('\\') || has_drive_prefix(name) {
        return Err("absolute paths are not allowed in a chart archive");
    }
    let mut components = Vec::new();
    for part in name.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err("`..` path components are not allowed in a chart archive"),
            _ => components.push(part.to_owned()),
        }
    }
    Ok(components)
}

/// `C:` / `c:\…`: absolute on Windows.
fn has_drive_prefix(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Counts decoded bytes and fails once more than `limit` have been produced.
struct Capped<R> {
    inner: R,
    read: u64,
    limit: u64,
    tripped: Rc<Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read = self.read.saturating_add(n as u64);
        if self.read > self.limit {
            self.tripped.set(true);
            return Err(io::Error::other("uncompressed size limit exceeded"));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::{Path, PathBuf};

    use flate2::Compression;
    use flate2::write::GzEncoder;
    use tar::EntryType;

    use super::super::test_support::{CHART_YAML_OK, Tgz, chart_tgz, write_file};
    use super::super::{ChartError, ChartSource, Limits, load, load_with_limits};

    fn load_tgz(path: &Path) -> Result<super::super::LoadedChart, ChartError> {
        load(&ChartSource::Archive(path.to_owned()))
    }

    fn tmp_tgz(tmp: &tempfile::TempDir) -> PathBuf {
        tmp.path().join("postgres-0.1.0.tgz")
    }

    fn assert_refused(err: &ChartError, entry: &str, reason_part: &str) {
        let ChartError::UnsafeEntry {
            entry: e, reason, ..
        } = err
        else {
            panic!("expected UnsafeEntry, got {err:?}");
        };
        assert_eq!(e, entry, "{err}");
        assert!(reason.contains(reason_part), "{err}");
        assert!(err.to_string().contains(entry), "{err}");
    }

    #[test]
    fn reads_a_packaged_chart() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.file("postgres/values.schema.json", "{\"type\":\"object\"}")
                .dir("postgres/templates/")
                .file("postgres/templates/statefulset.yaml", "kind: StatefulSet\n")
                .dir("postgres/charts/sub/")
                .file(
                    "postgres/charts/sub/Chart.yaml",
                    "apiVersion: v2\nname: sub\nversion: 9.9.9\n",
                )
                .file("postgres/charts/sub/values.yaml", "- not: a map\n");
        });
        let chart = load_tgz(&path).unwrap();
        assert_eq!(chart.metadata.name, "postgres");
        assert_eq!(chart.metadata.version, "0.1.0");
        assert_eq!(chart.values_yaml.as_deref(), Some("replicas: 2\n"));
        assert_eq!(
            chart.values_schema_json.as_deref(),
            Some("{\"type\":\"object\"}")
        );
        assert_eq!(chart.origin, format!("chart archive {}", path.display()));
        assert_eq!(
            ChartSource::from_path(&path),
            ChartSource::Archive(path.clone())
        );
    }

    #[test]
    fn tolerates_dot_prefix_pax_headers_and_missing_dir_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        let mut t = Tgz::create(&path);
        t.special("pax_global_header", EntryType::XGlobalHeader, None)
            .dir("./")
            .file("./postgres/Chart.yaml", CHART_YAML_OK)
            .long_name_file(
                &format!(
                    "postgres/templates/{}/x.yaml",
                    "very-long-directory-name".repeat(6)
                ),
                "a: 1\n",
            );
        t.finish();
        let chart = load_tgz(&path).unwrap();
        assert_eq!(chart.values_yaml, None);
    }

    #[test]
    fn refuses_parent_directory_components() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.file("postgres/../evil", "x");
        });
        assert_refused(&load_tgz(&path).unwrap_err(), "postgres/../evil", "`..`");

        chart_tgz(&path, |t| {
            t.file("../evil", "x");
        });
        assert_refused(&load_tgz(&path).unwrap_err(), "../evil", "`..`");
    }

    #[test]
    fn refuses_absolute_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.file("/etc/cron.d/evil", "x");
        });
        assert_refused(
            &load_tgz(&path).unwrap_err(),
            "/etc/cron.d/evil",
            "absolute",
        );
        chart_tgz(&path, |t| {
            t.file("C:/evil", "x");
        });
        assert_refused(&load_tgz(&path).unwrap_err(), "C:/evil", "absolute");
    }

    #[test]
    fn refuses_symlinks_and_hardlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.special(
                "postgres/templates/passwd",
                EntryType::Symlink,
                Some("/etc/passwd"),
            );
        });
        assert_refused(
            &load_tgz(&path).unwrap_err(),
            "postgres/templates/passwd",
            "symbolic link",
        );

        chart_tgz(&path, |t| {
            t.special(
                "postgres/values.schema.json",
                EntryType::Link,
                Some("postgres/values.yaml"),
            );
        });
        assert_refused(
            &load_tgz(&path).unwrap_err(),
            "postgres/values.schema.json",
            "hard link",
        );
    }

    #[test]
    fn refuses_device_files_and_fifos() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.special("postgres/sda", EntryType::Block, None);
        });
        assert_refused(&load_tgz(&path).unwrap_err(), "postgres/sda", "device");
        chart_tgz(&path, |t| {
            t.special("postgres/tty", EntryType::Char, None);
        });
        assert_refused(&load_tgz(&path).unwrap_err(), "postgres/tty", "device");
        chart_tgz(&path, |t| {
            t.special("postgres/pipe", EntryType::Fifo, None);
        });
        assert_refused(&load_tgz(&path).unwrap_err(), "postgres/pipe", "FIFO");
    }

    #[test]
    fn refuses_two_top_level_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.file(
                "redis/Chart.yaml",
                "apiVersion: v2\nname: redis\nversion: 1.0.0\n",
            );
        });
        let err = load_tgz(&path).unwrap_err();
        assert_refused(&err, "redis/Chart.yaml", "second top-level directory");
        assert!(err.to_string().contains("\"postgres\""), "{err}");

        chart_tgz(&path, |t| {
            t.dir("other/");
        });
        assert_refused(&load_tgz(&path).unwrap_err(), "other/", "second top-level");
    }

    #[test]
    fn refuses_files_at_the_top_and_duplicates() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        let mut t = Tgz::create(&path);
        t.file("Chart.yaml", CHART_YAML_OK);
        t.finish();
        assert_refused(&load_tgz(&path).unwrap_err(), "Chart.yaml", "outside");

        chart_tgz(&path, |t| {
            t.file("postgres/values.yaml", "replicas: 3\n");
        });
        assert_refused(
            &load_tgz(&path).unwrap_err(),
            "postgres/values.yaml",
            "twice",
        );
    }

    #[test]
    fn oversized_values_yaml_is_refused_by_its_header() {
        // 4 MiB + 1 byte: just over the default per-file limit, streamed.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        let mut t = Tgz::create(&path);
        t.file("postgres/Chart.yaml", CHART_YAML_OK).big_file(
            "postgres/values.yaml",
            Limits::DEFAULT.max_file_bytes + 1,
            b'#',
        );
        t.finish();
        let err = load_tgz(&path).unwrap_err();
        let ChartError::FileTooLarge { file, limit } = &err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(*limit, 4 * 1024 * 1024);
        assert!(file.ends_with("!/postgres/values.yaml"), "{err}");
    }

    #[test]
    fn gzip_bomb_stops_at_the_total_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.big_file("postgres/templates/zeros.bin", 2 * 1024 * 1024, 0);
        });
        let compressed = std::fs::metadata(&path).unwrap().len();
        assert!(
            compressed < 64 * 1024,
            "test archive should compress well: {compressed}"
        );
        let limits = Limits {
            max_total_bytes: 1024 * 1024,
            ..Limits::DEFAULT
        };
        let err = load_with_limits(&ChartSource::Archive(path.clone()), &limits).unwrap_err();
        assert!(
            matches!(err, ChartError::ArchiveTooLarge { limit: 1048576, .. }),
            "{err}"
        );
        // The same archive is fine under the default limits.
        assert!(load_tgz(&path).is_ok());
    }

    #[test]
    fn gzip_bomb_under_default_limits() {
        // 65 MiB of zeros compress to well under 1 MiB; decoding stops at 64 MiB.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.big_file("postgres/templates/zeros.bin", 65 * 1024 * 1024, 0);
        });
        assert!(std::fs::metadata(&path).unwrap().len() < 1024 * 1024);
        let err = load_tgz(&path).unwrap_err();
        assert!(
            matches!(err, ChartError::ArchiveTooLarge { limit, .. } if limit == 64 * 1024 * 1024),
            "{err}"
        );
    }

    #[test]
    fn too_many_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            for i in 0..20 {
                t.file(&format!("postgres/templates/t{i}.yaml"), "");
            }
        });
        let limits = Limits {
            max_entries: 10,
            ..Limits::DEFAULT
        };
        let err = load_with_limits(&ChartSource::Archive(path), &limits).unwrap_err();
        assert!(
            matches!(err, ChartError::TooManyEntries { limit: 10, .. }),
            "{err}"
        );
    }

    #[test]
    fn archive_file_size_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |_| {});
        let limits = Limits {
            max_archive_bytes: 16,
            ..Limits::DEFAULT
        };
        let err = load_with_limits(&ChartSource::Archive(path), &limits).unwrap_err();
        assert!(
            matches!(err, ChartError::FileTooLarge { limit: 16, .. }),
            "{err}"
        );
    }

    #[test]
    fn not_gzip() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("chart.tgz");
        write_file(&path, "apiVersion: v2\nname: x\n");
        let err = load_tgz(&path).unwrap_err();
        assert!(matches!(err, ChartError::NotGzip { .. }), "{err}");
        assert!(err.to_string().contains("helm package"), "{err}");
    }

    #[test]
    fn gzip_but_not_tar() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("chart.tgz");
        for payload in [&b"short text"[..], &[b'x'; 2048][..]] {
            let mut gz = GzEncoder::new(std::fs::File::create(&path).unwrap(), Compression::fast());
            gz.write_all(payload).unwrap();
            gz.finish().unwrap();
            let err = load_tgz(&path).unwrap_err();
            assert!(matches!(err, ChartError::CorruptArchive { .. }), "{err}");
        }
    }

    #[test]
    fn truncated_gzip() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        chart_tgz(&path, |t| {
            t.file(
                "postgres/templates/a.yaml",
                &"kind: ConfigMap\n".repeat(500),
            );
        });
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let err = load_tgz(&path).unwrap_err();
        assert!(matches!(err, ChartError::CorruptArchive { .. }), "{err}");
    }

    #[test]
    fn empty_archive_and_archive_without_chart_yaml() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        Tgz::create(&path).finish();
        let err = load_tgz(&path).unwrap_err();
        assert!(matches!(err, ChartError::MissingChartYaml { .. }), "{err}");
        assert!(err.to_string().contains("empty"), "{err}");

        let mut t = Tgz::create(&path);
        t.file("postgres/values.yaml", "a: 1\n")
            .file("postgres/charts/sub/Chart.yaml", CHART_YAML_OK);
        t.finish();
        let err = load_tgz(&path).unwrap_err();
        let ChartError::MissingChartYaml { location } = &err else {
            panic!("unexpected {err:?}");
        };
        assert!(location.contains("postgres/"), "{err}");
    }

    #[test]
    fn malformed_chart_yaml_in_archive_names_entry_and_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp_tgz(&tmp);
        let mut t = Tgz::create(&path);
        t.file(
            "postgres/Chart.yaml",
            "apiVersion: v2\nname: postgres\nversion: [0.1.0\n",
        );
        t.finish();
        let err = load_tgz(&path).unwrap_err();
        let expected = format!("{}!/postgres/Chart.yaml:3:", path.display());
        assert!(err.to_string().starts_with(&expected), "{err}");
    }

    #[test]
    fn directory_is_not_an_archive() {
        let tmp = tempfile::tempdir().unwrap();
        let err = load(&ChartSource::Archive(tmp.path().to_owned())).unwrap_err();
        assert!(matches!(err, ChartError::NotAFile { .. }), "{err}");
    }

    #[test]
    fn entry_names() {
        use super::split_entry_name;
        assert_eq!(split_entry_name(b"./a//b/./c/").unwrap(), ["a", "b", "c"]);
        assert!(split_entry_name(b"a/..\\b").is_err());
        assert!(split_entry_name(b"\\\\server\\share").is_err());
        assert!(split_entry_name(b"a/\xff").is_err());
        assert!(split_entry_name(b"a/..b/c").is_ok());
    }
}
