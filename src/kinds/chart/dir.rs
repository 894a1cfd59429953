//! Reading an unpacked chart directory: `Chart.yaml`, `values.yaml` and
//! `values.schema.json` at its top, each bounded in size. A file may be a
//! symbolic link (Helm allows that) as long as it resolves inside the chart
//! directory.

use std::fs::{self, File};
use std::io;
use std::path::Path;

use super::error::ChartError;
use super::files::{
    CHART_YAML, ChartFiles, RawFile, VALUES_SCHEMA_JSON, VALUES_YAML, io_error, read_limited,
};
use super::{Limits, LoadedChart};

/// Reads and validates the chart in `dir`.
pub(super) fn load_dir(dir: &Path, limits: &Limits) -> Result<LoadedChart, ChartError> {
    let shown = dir.display().to_string();
    let meta = fs::metadata(dir).map_err(|err| io_error(&shown, err))?;
    if !meta.is_dir() {
        return Err(ChartError::NotADirectory { path: shown });
    }
    let root = fs::canonicalize(dir).map_err(|err| io_error(&shown, err))?;

    let mut files = ChartFiles::new(format!("chart directory {shown}"));
    for name in [CHART_YAML, VALUES_YAML, VALUES_SCHEMA_JSON] {
        let file = read_member(dir, &root, name, limits)?;
        if let Some(slot) = files.slot(name) {
            *slot = file;
        }
    }
    files.into_loaded(format!("chart directory {shown}"), None)
}

/// Reads `dir/name`; `None` when it does not exist.
fn read_member(
    dir: &Path,
    root: &Path,
    name: &str,
    limits: &Limits,
) -> Result<Option<RawFile>, ChartError> {
    let path = dir.join(name);
    let label = path.display().to_string();
    let link_meta = match fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_error(&label, err)),
    };
    let target = if link_meta.file_type().is_symlink() {
        let resolved = fs::canonicalize(&path).map_err(|err| io_error(&label, err))?;
        if !resolved.starts_with(root) {
            return Err(ChartError::SymlinkEscape {
                path: label,
                target: resolved.display().to_string(),
            });
        }
        resolved
    } else {
        path
    };
    let meta = fs::metadata(&target).map_err(|err| io_error(&label, err))?;
    if !meta.is_file() {
        return Err(ChartError::NotAFile { path: label });
    }
    if meta.len() > limits.max_file_bytes {
        return Err(ChartError::FileTooLarge {
            file: label,
            limit: limits.max_file_bytes,
        });
    }
    let file = File::open(&target).map_err(|err| io_error(&label, err))?;
    let bytes = read_limited(file, limits.max_file_bytes, &label)?;
    Ok(Some(RawFile { label, bytes }))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::super::test_support::{CHART_YAML_OK, write_file};
    use super::super::{ChartError, ChartSource, Limits, load, load_with_limits};

    #[test]
    fn reads_a_chart_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("postgres");
        write_file(&dir.join("Chart.yaml"), CHART_YAML_OK);
        write_file(&dir.join("values.yaml"), "# comment kept\nreplicas: 2\n");
        write_file(&dir.join("values.schema.json"), "{\"type\": \"object\"}\n");
        // Subchart files must not be picked up.
        write_file(
            &dir.join("charts/sub/Chart.yaml"),
            "apiVersion: v2\nname: sub\nversion: 9.9.9\n",
        );
        let chart = load(&ChartSource::Dir(dir.clone())).unwrap();
        assert_eq!(chart.metadata.name, "postgres");
        assert_eq!(
            chart.values_yaml.as_deref(),
            Some("# comment kept\nreplicas: 2\n")
        );
        assert_eq!(
            chart.values_schema_json.as_deref(),
            Some("{\"type\": \"object\"}\n")
        );
        assert_eq!(chart.origin, format!("chart directory {}", dir.display()));
        assert_eq!(chart.repo_url, None);
    }

    #[test]
    fn values_and_schema_are_optional() {
        let tmp = tempfile::tempdir().unwrap();
        write_file(&tmp.path().join("Chart.yaml"), CHART_YAML_OK);
        let chart = load(&ChartSource::Dir(tmp.path().to_owned())).unwrap();
        assert_eq!(chart.values_yaml, None);
        assert_eq!(chart.values_schema_json, None);
    }

    #[test]
    fn missing_chart_yaml() {
        let tmp = tempfile::tempdir().unwrap();
        write_file(&tmp.path().join("values.yaml"), "a: 1\n");
        let err = load(&ChartSource::Dir(tmp.path().to_owned())).unwrap_err();
        let ChartError::MissingChartYaml { location } = &err else {
            panic!("unexpected {err:?}");
        };
        assert!(
            location.contains(&tmp.path().display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn not_a_directory_and_missing_path() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("x.tgz");
        write_file(&file, "x");
        let err = load(&ChartSource::Dir(file)).unwrap_err();
        assert!(matches!(err, ChartError::NotADirectory { .. }), "{err}");
        let err = load(&ChartSource::Dir(tmp.path().join("nope"))).unwrap_err();
        assert!(matches!(err, ChartError::Io { .. }), "{err}");
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn malformed_chart_yaml_in_directory_names_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        write_file(
            &tmp.path().join("Chart.yaml"),
            "apiVersion: v2\nname: x\nversion: 1.0.0\ndescription: \"open\n",
        );
        let err = load(&ChartSource::Dir(tmp.path().to_owned())).unwrap_err();
        let expected = format!("{}:", tmp.path().join("Chart.yaml").display());
        assert!(err.to_string().starts_with(&expected), "{err}");
        assert!(
            matches!(
                err,
                ChartError::Yaml {
                    line: Some(_),
                    column: Some(_),
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn oversized_values_yaml() {
        let tmp = tempfile::tempdir().unwrap();
        write_file(&tmp.path().join("Chart.yaml"), CHART_YAML_OK);
        write_file(&tmp.path().join("values.yaml"), &"a: 1\n".repeat(100));
        let limits = Limits {
            max_file_bytes: 256,
            ..Limits::DEFAULT
        };
        let err = load_with_limits(&ChartSource::Dir(tmp.path().to_owned()), &limits).unwrap_err();
        assert!(
            matches!(err, ChartError::FileTooLarge { limit: 256, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("values.yaml"), "{err}");
    }

    #[test]
    fn values_yaml_that_is_a_directory() {
        let tmp = tempfile::tempdir().unwrap();
        write_file(&tmp.path().join("Chart.yaml"), CHART_YAML_OK);
        fs::create_dir(tmp.path().join("values.yaml")).unwrap();
        let err = load(&ChartSource::Dir(tmp.path().to_owned())).unwrap_err();
        assert!(matches!(err, ChartError::NotAFile { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn fifo_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        write_file(&tmp.path().join("Chart.yaml"), CHART_YAML_OK);
        let fifo = tmp.path().join("values.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|status| status.success()) {
            return; // no mkfifo here; nothing to test
        }
        let err = load(&ChartSource::Dir(tmp.path().to_owned())).unwrap_err();
        assert!(matches!(err, ChartError::NotAFile { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_inside_are_followed_outside_refused() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("chart");
        write_file(&dir.join("meta/Chart.yaml"), CHART_YAML_OK);
        symlink("meta/Chart.yaml", dir.join("Chart.yaml")).unwrap();
        write_file(&tmp.path().join("secret.yaml"), "password: hunter2\n");
        let chart = load(&ChartSource::Dir(dir.clone())).unwrap();
        assert_eq!(chart.metadata.name, "postgres");

        symlink("../secret.yaml", dir.join("values.yaml")).unwrap();
        let err = load(&ChartSource::Dir(dir.clone())).unwrap_err();
        assert!(matches!(err, ChartError::SymlinkEscape { .. }), "{err}");
        assert!(err.to_string().contains("values.yaml"), "{err}");
        fs::remove_file(dir.join("values.yaml")).unwrap();

        symlink("/etc/hostname-does-not-exist", dir.join("values.yaml")).unwrap();
        let err = load(&ChartSource::Dir(dir)).unwrap_err();
        assert!(matches!(err, ChartError::Io { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn chart_directory_reached_through_a_symlink() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        write_file(&tmp.path().join("real/Chart.yaml"), CHART_YAML_OK);
        write_file(&tmp.path().join("real/values.yaml"), "a: 1\n");
        symlink("real", tmp.path().join("link")).unwrap();
        let chart = load(&ChartSource::from_path(tmp.path().join("link"))).unwrap();
        assert_eq!(chart.values_yaml.as_deref(), Some("a: 1\n"));
    }
}
