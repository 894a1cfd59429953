//! Charts from a local Helm repository index (`index.yaml`): choosing the
//! version (the one asked for, or the highest stable SemVer one), resolving
//! the entry's URL against the index's directory (relative paths and
//! `file://` URLs; remote URLs are refused, this tool does not download),
//! checking the archive against the entry's sha256 `digest`, and loading it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::error::ChartError;
use super::files::{decode_utf8, io_error, read_limited};
use super::yaml::{yaml_error, yaml_options};
use super::{Limits, LoadedChart, archive};

/// How many chart names an error lists before abridging.
const MAX_LISTED_CHARTS: usize = 30;

/// `index.yaml` as far as it is needed.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct RawIndex {
    api_version: Option<String>,
    entries: Option<BTreeMap<String, Option<Vec<RawEntry>>>>,
}

/// One chart version in the index.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawEntry {
    version: Option<String>,
    urls: Option<Vec<String>>,
    digest: Option<String>,
}

impl RawEntry {
    fn version(&self) -> &str {
        self.version.as_deref().map_or("", str::trim)
    }
}

/// Loads `chart` (at `version`, or the highest stable version) from the
/// repository index at `index_path`.
pub(super) fn load_from_index(
    index_path: &Path,
    chart: &str,
    version: Option<&str>,
    limits: &Limits,
) -> Result<LoadedChart, ChartError> {
    let index = index_path.display().to_string();
    let raw = read_index(index_path, &index, limits)?;

    let entries = raw.entries.unwrap_or_default();
    let Some(versions) = entries.get(chart) else {
        let mut available: Vec<String> = entries.keys().take(MAX_LISTED_CHARTS).cloned().collect();
        if entries.len() > MAX_LISTED_CHARTS {
            available.push(format!("… and {} more", entries.len() - MAX_LISTED_CHARTS));
        }
        return Err(ChartError::ChartNotInIndex {
            index,
            chart: chart.to_owned(),
            available,
        });
    };
    let versions = versions.as_deref().unwrap_or_default();
    let entry = select_version(versions, version).ok_or_else(|| match version {
        Some(version) => ChartError::VersionNotInIndex {
            index: index.clone(),
            chart: chart.to_owned(),
            version: version.to_owned(),
            available: available_versions(versions),
        },
        None => ChartError::NoStableVersion {
            index: index.clone(),
            chart: chart.to_owned(),
            available: available_versions(versions),
        },
    })?;
    let entry_version = entry.version().to_owned();

    let Some(url) = entry.urls.as_deref().and_then(<[String]>::first) else {
        return Err(ChartError::InvalidIndex {
            index,
            message: format!("entry {chart} {entry_version} has no urls"),
        });
    };
    let index_dir = match index_path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let archive_path = resolve_chart_url(index_dir, url).map_err(|problem| match problem {
        UrlProblem::Remote => ChartError::RemoteChartUrl {
            chart: chart.to_owned(),
            version: entry_version.clone(),
            url: url.clone(),
        },
        UrlProblem::Unsupported(reason) => ChartError::UnsupportedUrl {
            chart: chart.to_owned(),
            version: entry_version.clone(),
            url: url.clone(),
            reason,
        },
    })?;
    let archive_label = archive_path.display().to_string();

    let bytes = archive::read_archive_file(&archive_path, limits)?;
    if let Some(digest) = entry.digest.as_deref().filter(|d| !d.trim().is_empty()) {
        verify_digest(digest, &bytes, &archive_label).map_err(|problem| match problem {
            Some(err) => err,
            None => ChartError::InvalidIndex {
                index: index.clone(),
                message: format!(
                    "entry {chart} {entry_version}: digest {digest:?} is not a sha256 hex digest"
                ),
            },
        })?;
    }
    let files = archive::parse_archive(&bytes, &archive_label, limits)?;
    let origin =
        format!("chart {chart} {entry_version} from repository index {index} ({archive_label})");
    let loaded = files.into_loaded(origin, Some(dir_url(index_dir)))?;

    if loaded.metadata.name != chart || !same_version(&loaded.metadata.version, &entry_version) {
        return Err(ChartError::IndexMismatch {
            index,
            chart: chart.to_owned(),
            version: entry_version,
            archive: archive_label,
            found: format!("{} {}", loaded.metadata.name, loaded.metadata.version),
        });
    }
    Ok(loaded)
}

fn read_index(path: &Path, label: &str, limits: &Limits) -> Result<RawIndex, ChartError> {
    let meta = fs::metadata(path).map_err(|err| io_error(label, err))?;
    if !meta.is_file() {
        return Err(ChartError::NotAFile {
            path: label.to_owned(),
        });
    }
    if meta.len() > limits.max_index_bytes {
        return Err(ChartError::FileTooLarge {
            file: label.to_owned(),
            limit: limits.max_index_bytes,
        });
    }
    let file = fs::File::open(path).map_err(|err| io_error(label, err))?;
    let text = decode_utf8(read_limited(file, limits.max_index_bytes, label)?, label)?;
    let raw: RawIndex = serde_saphyr::from_str_with_options(&text, yaml_options())
        .map_err(|err| yaml_error(&err, label))?;
    match raw.api_version.as_deref().map(str::trim) {
        Some("v1") => Ok(raw),
        None | Some("") => Err(ChartError::InvalidIndex {
            index: label.to_owned(),
            message: "no apiVersion; is this a Helm repository index.yaml?".to_owned(),
        }),
        Some(other) => Err(ChartError::InvalidIndex {
            index: label.to_owned(),
            message: format!("unsupported apiVersion {other:?} (expected v1)"),
        }),
    }
}

/// The exact `requested` version, or the highest SemVer version without a
/// prerelease part.
fn select_version<'a>(entries: &'a [RawEntry], requested: Option<&str>) -> Option<&'a RawEntry> {
    match requested {
        Some(requested) => {
            let requested = requested.trim();
            entries
                .iter()
                .find(|e| e.version() == requested)
                .or_else(|| {
                    entries
                        .iter()
                        .find(|e| same_version(e.version(), requested))
                })
        }
        None => entries
            .iter()
            .filter_map(|e| Some((semver::Version::parse(e.version()).ok()?, e)))
            .filter(|(v, _)| v.pre.is_empty())
            .max_by(|(a, _), (b, _)| a.cmp(b))
            .map(|(_, e)| e),
    }
}

/// Equal as strings, or as SemVer versions.
fn same_version(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (semver::Version::parse(a), semver::Version::parse(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

/// The versions of a chart, highest first (non-SemVer ones last).
fn available_versions(entries: &[RawEntry]) -> Vec<String> {
    let mut parsed: Vec<(semver::Version, String)> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    for entry in entries {
        let version = entry.version().to_owned();
        if parsed.iter().any(|(_, v)| *v == version) || other.contains(&version) {
            continue;
        }
        match semver::Version::parse(&version) {
            Ok(v) => parsed.push((v, version)),
            Err(_) => other.push(version),
        }
    }
    parsed.sort_by(|a, b| b.0.cmp(&a.0));
    parsed.into_iter().map(|(_, v)| v).chain(other).collect()
}

/// Why a chart URL cannot be turned into a local path.
#[derive(Debug, PartialEq, Eq)]
enum UrlProblem {
    /// `http://` or `https://`.
    Remote,
    /// Another scheme, or an undecodable path.
    Unsupported(String),
}

/// Resolves an index entry URL against the index's directory.
///
/// * `postgres-0.1.0.tgz`, `charts/x.tgz`, `../x.tgz`: relative to the
///   index's directory; `/srv/x.tgz`: that path;
/// * `file:///srv/x.tgz` and `file://localhost/srv/x.tgz`: that path;
///   `file://charts/x.tgz` (as Helm writes local paths): relative;
/// * `http(s)://…`: [`UrlProblem::Remote`]; any other scheme: unsupported.
///
/// Percent-escapes are decoded; a `?query` or `#fragment` is dropped.
fn resolve_chart_url(base_dir: &Path, url: &str) -> Result<PathBuf, UrlProblem> {
    let url = url.trim();
    let path_part = match split_scheme(url) {
        None => url,
        Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
            "http" | "https" => return Err(UrlProblem::Remote),
            "file" => {
                let rest = rest.strip_prefix("//").unwrap_or(rest);
                match rest.strip_prefix("localhost/") {
                    Some(abs) => &rest[rest.len() - abs.len() - 1..],
                    None => rest,
                }
            }
            other => {
                return Err(UrlProblem::Unsupported(format!(
                    "{other}: URLs are not supported; use a relative path or a file:// URL"
                )));
            }
        },
    };
    let path_part = path_part.split(['?', '#']).next().unwrap_or_default();
    if path_part.is_empty() {
        return Err(UrlProblem::Unsupported("the URL has no path".to_owned()));
    }
    let decoded = String::from_utf8(percent_decode(path_part))
        .map_err(|_| UrlProblem::Unsupported("the decoded path is not valid UTF-8".to_owned()))?;
    let decoded = windows_drive_path(&decoded);
    let path = Path::new(decoded);
    if path.is_absolute() || decoded.starts_with('/') {
        Ok(path.to_owned())
    } else {
        Ok(base_dir.join(path))
    }
}

/// `/C:/x` (from `file:///C:/x`) is `C:/x` on Windows.
fn windows_drive_path(path: &str) -> &str {
    let bytes = path.as_bytes();
    if cfg!(windows)
        && bytes.len() >= 3
        && bytes[0] == b'/'
        && bytes[1].is_ascii_alphabetic()
        && bytes[2] == b':'
    {
        &path[1..]
    } else {
        path
    }
}

/// `scheme:rest` for URLs with a scheme of two or more characters (a single
/// letter is a Windows drive).
fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = scheme.len() >= 2
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some((scheme, rest))
}

fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).and_then(|b| (*b as char).to_digit(16)),
                bytes.get(i + 2).and_then(|b| (*b as char).to_digit(16)),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// `file://` URL of a directory, with a trailing `/`.
fn dir_url(dir: &Path) -> String {
    let absolute = fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_owned());
    let mut path = absolute.to_string_lossy().replace('\\', "/");
    if let Some(stripped) = path.strip_prefix("//?/") {
        path = stripped.to_owned();
    }
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    if !path.ends_with('/') {
        path.push('/');
    }
    let mut url = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'.' | b'_' | b'~' | b':') {
            url.push(byte as char);
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// Checks `bytes` against a sha256 hex digest (optionally `sha256:`
/// prefixed). `Err(None)`: the digest itself is malformed.
fn verify_digest(expected: &str, bytes: &[u8], archive: &str) -> Result<(), Option<ChartError>> {
    let trimmed = expected.trim();
    let want = trimmed
        .strip_prefix("sha256:")
        .unwrap_or(trimmed)
        .to_ascii_lowercase();
    if want.len() != 64 || !want.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(None);
    }
    let actual: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if actual == want {
        Ok(())
    } else {
        Err(Some(ChartError::DigestMismatch {
            archive: archive.to_owned(),
            expected: want,
            actual,
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use sha2::{Digest, Sha256};

    use super::super::test_support::{Tgz, write_file};
    use super::super::{ChartError, ChartSource, LoadedChart, load, split_chart_ref};
    use super::{UrlProblem, percent_decode, resolve_chart_url};

    /// Writes `NAME-VERSION.tgz` into `dir` (or under `sub/`) and returns
    /// its sha256.
    fn chart(dir: &Path, file: &str, name: &str, version: &str) -> String {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        let mut t = Tgz::create(&path);
        t.file(
            &format!("{name}/Chart.yaml"),
            &format!("apiVersion: v2\nname: {name}\nversion: {version}\n"),
        )
        .file(
            &format!("{name}/values.yaml"),
            &format!("tag: \"{version}\"\n"),
        );
        t.finish();
        Sha256::digest(std::fs::read(&path).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    struct Repo {
        _tmp: tempfile::TempDir,
        dir: PathBuf,
        index: PathBuf,
    }

    /// A repository with postgres 0.1.0, 0.2.0 (digest), 0.3.0-rc.1 and
    /// a redis chart with only prereleases.
    fn repo(extra_entries: &str) -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        let _ = chart(&dir, "postgres-0.1.0.tgz", "postgres", "0.1.0");
        let d2 = chart(&dir, "charts/postgres-0.2.0.tgz", "postgres", "0.2.0");
        let _ = chart(&dir, "postgres-0.3.0-rc.1.tgz", "postgres", "0.3.0-rc.1");
        let _ = chart(&dir, "redis-1.0.0-beta.1.tgz", "redis", "1.0.0-beta.1");
        let index = dir.join("index.yaml");
        write_file(
            &index,
            &format!(
                "apiVersion: v1\n\
                 generated: \"2025-01-01T00:00:00Z\"\n\
                 entries:\n\
                 \x20 postgres:\n\
                 \x20 - name: postgres\n    version: 0.1.0\n    urls: [postgres-0.1.0.tgz]\n    created: \"2025-01-01T00:00:00Z\"\n\
                 \x20 - name: postgres\n    version: 0.3.0-rc.1\n    urls: [postgres-0.3.0-rc.1.tgz]\n\
                 \x20 - name: postgres\n    version: 0.2.0\n    urls: [charts/postgres-0.2.0.tgz]\n    digest: {d2}\n    maintainers: [{{name: x}}]\n\
                 \x20 redis:\n\
                 \x20 - name: redis\n    version: 1.0.0-beta.1\n    urls: [redis-1.0.0-beta.1.tgz]\n\
                 {extra_entries}"
            ),
        );
        Repo {
            _tmp: tmp,
            dir,
            index,
        }
    }

    fn load_ref(repo: &Repo, chart_ref: &str) -> Result<LoadedChart, ChartError> {
        load(&ChartSource::repo_index(&repo.index, chart_ref))
    }

    #[test]
    fn picks_highest_stable_version() {
        let repo = repo("");
        let chart = load_ref(&repo, "postgres").unwrap();
        assert_eq!(chart.metadata.version, "0.2.0");
        assert_eq!(chart.values_yaml.as_deref(), Some("tag: \"0.2.0\"\n"));
        assert!(
            chart
                .origin
                .starts_with("chart postgres 0.2.0 from repository index "),
            "{}",
            chart.origin
        );
        assert!(
            chart.origin.contains("postgres-0.2.0.tgz"),
            "{}",
            chart.origin
        );
        let url = chart.repo_url.unwrap();
        assert!(
            url.starts_with("file:///") && url.ends_with("/repo/"),
            "{url}"
        );
    }

    #[test]
    fn exact_versions_including_prereleases() {
        let repo = repo("");
        assert_eq!(
            load_ref(&repo, "postgres@0.1.0").unwrap().metadata.version,
            "0.1.0"
        );
        assert_eq!(
            load_ref(&repo, "postgres@0.3.0-rc.1")
                .unwrap()
                .metadata
                .version,
            "0.3.0-rc.1"
        );
        assert_eq!(
            load_ref(&repo, "redis@1.0.0-beta.1")
                .unwrap()
                .metadata
                .version,
            "1.0.0-beta.1"
        );
    }

    #[test]
    fn only_prereleases_need_an_explicit_version() {
        let repo = repo("");
        let err = load_ref(&repo, "redis").unwrap_err();
        assert!(matches!(err, ChartError::NoStableVersion { .. }), "{err}");
        assert!(err.to_string().contains("1.0.0-beta.1"), "{err}");
    }

    #[test]
    fn unknown_version_lists_available() {
        let repo = repo("");
        let err = load_ref(&repo, "postgres@9.9.9").unwrap_err();
        let ChartError::VersionNotInIndex { available, .. } = &err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(available, &["0.3.0-rc.1", "0.2.0", "0.1.0"]);
        assert!(
            err.to_string().contains("0.3.0-rc.1, 0.2.0, 0.1.0"),
            "{err}"
        );
    }

    #[test]
    fn unknown_chart_lists_charts() {
        let repo = repo("");
        let err = load_ref(&repo, "mysql").unwrap_err();
        let ChartError::ChartNotInIndex { available, .. } = &err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(available, &["postgres", "redis"]);
    }

    #[test]
    fn digest_mismatch_and_malformed_digest() {
        let zeros = "0".repeat(64);
        let repo = repo(&format!(
            "\x20 bad:\n\
             \x20 - version: 1.0.0\n    urls: [bad-1.0.0.tgz]\n    digest: {zeros}\n\
             \x20 odd:\n\
             \x20 - version: 1.0.0\n    urls: [odd-1.0.0.tgz]\n    digest: not-a-digest\n\
             \x20 upper:\n\
             \x20 - version: 1.0.0\n    urls: [upper-1.0.0.tgz]\n    digest: DIGEST\n"
        ));
        let _ = chart(&repo.dir, "bad-1.0.0.tgz", "bad", "1.0.0");
        let _ = chart(&repo.dir, "odd-1.0.0.tgz", "odd", "1.0.0");
        let upper = chart(&repo.dir, "upper-1.0.0.tgz", "upper", "1.0.0");
        let text = std::fs::read_to_string(&repo.index).unwrap();
        let upper_digest = format!("sha256:{}", upper.to_uppercase());
        std::fs::write(&repo.index, text.replace("DIGEST", &upper_digest)).unwrap();

        let err = load_ref(&repo, "bad").unwrap_err();
        let ChartError::DigestMismatch {
            expected, actual, ..
        } = &err
        else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(expected, &zeros);
        assert_eq!(actual.len(), 64);

        let err = load_ref(&repo, "odd").unwrap_err();
        assert!(matches!(err, ChartError::InvalidIndex { .. }), "{err}");
        assert!(err.to_string().contains("not-a-digest"), "{err}");

        assert_eq!(load_ref(&repo, "upper").unwrap().metadata.name, "upper");
    }

    #[test]
    fn remote_urls_are_refused() {
        let repo = repo(
            "\x20 web:\n\
             \x20 - version: 1.0.0\n    urls: [\"https://charts.example.com/web-1.0.0.tgz\"]\n\
             \x20 plain:\n\
             \x20 - version: 1.0.0\n    urls: [\"HTTP://charts.example.com/plain-1.0.0.tgz\"]\n\
             \x20 oci:\n\
             \x20 - version: 1.0.0\n    urls: [\"oci://registry.example.com/charts/oci\"]\n",
        );
        let err = load_ref(&repo, "web").unwrap_err();
        assert!(matches!(err, ChartError::RemoteChartUrl { .. }), "{err}");
        assert!(
            err.to_string().contains(
                "remote chart URLs are not supported; download the chart and pass the .tgz"
            ),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("https://charts.example.com/web-1.0.0.tgz"),
            "{err}"
        );
        let err = load_ref(&repo, "plain").unwrap_err();
        assert!(matches!(err, ChartError::RemoteChartUrl { .. }), "{err}");
        let err = load_ref(&repo, "oci").unwrap_err();
        assert!(matches!(err, ChartError::UnsupportedUrl { .. }), "{err}");
    }

    #[test]
    fn file_urls_and_escapes() {
        let repo = repo("");
        let abs = repo.dir.join("postgres-0.1.0.tgz");
        let text = std::fs::read_to_string(&repo.index).unwrap();
        let text = text.replace(
            "urls: [postgres-0.1.0.tgz]",
            &format!("urls: [\"file://{}\"]", abs.display()),
        );
        std::fs::write(&repo.index, text).unwrap();
        assert_eq!(
            load_ref(&repo, "postgres@0.1.0").unwrap().metadata.version,
            "0.1.0"
        );

        let base = Path::new("/srv/repo");
        let cases = [
            ("x-1.0.0.tgz", "/srv/repo/x-1.0.0.tgz"),
            ("./sub/x.tgz?raw=1#frag", "/srv/repo/./sub/x.tgz"),
            ("x-1.0.0%2Bbuild.1.tgz", "/srv/repo/x-1.0.0+build.1.tgz"),
            ("my%20charts/x.tgz", "/srv/repo/my charts/x.tgz"),
            ("/abs/x.tgz", "/abs/x.tgz"),
            ("file:///abs/x.tgz", "/abs/x.tgz"),
            ("file://localhost/abs/x.tgz", "/abs/x.tgz"),
            ("file://sub/x.tgz", "/srv/repo/sub/x.tgz"),
            ("100%.tgz", "/srv/repo/100%.tgz"),
        ];
        for (url, expected) in cases {
            assert_eq!(
                resolve_chart_url(base, url),
                Ok(PathBuf::from(expected)),
                "{url}"
            );
        }
        assert_eq!(
            resolve_chart_url(base, "https://x/y.tgz"),
            Err(UrlProblem::Remote)
        );
        assert!(matches!(
            resolve_chart_url(base, "s3://b/y.tgz"),
            Err(UrlProblem::Unsupported(_))
        ));
        assert!(matches!(
            resolve_chart_url(base, "x%FF.tgz"),
            Err(UrlProblem::Unsupported(_))
        ));
        assert!(matches!(
            resolve_chart_url(base, "?q"),
            Err(UrlProblem::Unsupported(_))
        ));
        assert_eq!(percent_decode("%41%4a%zz%"), b"AJ%zz%");
    }

    #[test]
    fn index_entry_pointing_at_another_version() {
        let repo = repo(
            "\x20 liar:\n\
             \x20 - version: 2.0.0\n    urls: [postgres-0.1.0.tgz]\n",
        );
        let err = load_ref(&repo, "liar").unwrap_err();
        assert!(matches!(err, ChartError::IndexMismatch { .. }), "{err}");
        assert!(err.to_string().contains("postgres 0.1.0"), "{err}");
    }

    #[test]
    fn missing_archive_and_missing_urls() {
        let repo = repo(
            "\x20 gone:\n\
             \x20 - version: 1.0.0\n    urls: [gone-1.0.0.tgz]\n\
             \x20 nourl:\n\
             \x20 - version: 1.0.0\n",
        );
        let err = load_ref(&repo, "gone").unwrap_err();
        assert!(matches!(err, ChartError::Io { .. }), "{err}");
        assert!(err.to_string().contains("gone-1.0.0.tgz"), "{err}");
        let err = load_ref(&repo, "nourl").unwrap_err();
        assert!(err.to_string().contains("has no urls"), "{err}");
    }

    #[test]
    fn malformed_indexes() {
        let tmp = tempfile::tempdir().unwrap();
        let index = tmp.path().join("index.yaml");
        write_file(
            &index,
            "apiVersion: v1\nentries:\n  postgres:\n  - version: [1\n",
        );
        let err = load(&ChartSource::repo_index(&index, "postgres")).unwrap_err();
        assert!(
            matches!(err, ChartError::Yaml { line: Some(4), .. }),
            "{err}"
        );
        assert!(err.to_string().contains("index.yaml:4:"), "{err}");

        write_file(&index, "entries: {}\n");
        let err = load(&ChartSource::repo_index(&index, "postgres")).unwrap_err();
        assert!(err.to_string().contains("no apiVersion"), "{err}");

        write_file(&index, "apiVersion: v1\n");
        let err = load(&ChartSource::repo_index(&index, "postgres")).unwrap_err();
        assert!(matches!(err, ChartError::ChartNotInIndex { .. }), "{err}");
        assert!(err.to_string().ends_with("the index has: (none)"), "{err}");

        let err = load(&ChartSource::repo_index(tmp.path().join("nope.yaml"), "x")).unwrap_err();
        assert!(matches!(err, ChartError::Io { .. }), "{err}");
    }

    #[test]
    fn relative_index_path_in_current_directory_form() {
        // An index given as a bare file name resolves URLs against ".".
        assert_eq!(
            resolve_chart_url(Path::new("."), "x.tgz"),
            Ok(PathBuf::from("./x.tgz"))
        );
    }

    #[test]
    fn chart_refs() {
        assert_eq!(split_chart_ref("postgres"), ("postgres".into(), None));
        assert_eq!(
            split_chart_ref("postgres@0.2.0"),
            ("postgres".into(), Some("0.2.0".into()))
        );
        assert_eq!(split_chart_ref("postgres@"), ("postgres".into(), None));
        assert_eq!(
            ChartSource::repo_index("i.yaml", "redis@1.0.0-rc.1"),
            ChartSource::RepoIndex {
                index: "i.yaml".into(),
                chart: "redis".into(),
                version: Some("1.0.0-rc.1".into())
            }
        );
    }
}
