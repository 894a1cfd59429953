//! Reading Helm charts for `kubectl cozy kinds scaffold`.
//!
//! This module owns everything between "the user named a chart" and "here
//! are its metadata, `values.yaml` and `values.schema.json` as text":
//!
//! * [`load`] / [`load_with_limits`] read a chart from a [`ChartSource`]: a
//!   chart directory, a packaged `.tgz` (read in memory, never extracted), or
//!   an entry of a local Helm repository `index.yaml`.
//! * [`ChartMetadata`] models `Chart.yaml` and is validated the way Helm
//!   does (SemVer 2 versions, no library charts, …).
//! * [`propose_kind`] proposes a kind, with its capitals, for a chart, and
//!   [`pluralize`] makes the plural resource name of a kind;
//!   [`settings`] reads the rest of the kind's settings a chart may carry
//!   in its annotations.
//!
//! Only three files of a chart are ever read: `Chart.yaml`, `values.yaml` and
//! `values.schema.json` of the chart itself (never of its `charts/`
//! subcharts). Sizes are bounded by [`Limits`], so hostile input yields a
//! [`ChartError`] rather than exhausting memory.

mod archive;
mod dir;
mod error;
mod files;
mod index;
mod metadata;
mod names;
pub(crate) mod settings;
mod yaml;

#[cfg(test)]
mod example_charts;
#[cfg(test)]
pub(crate) mod test_support;

use std::fmt;
use std::path::{Path, PathBuf};

pub(crate) use self::error::ChartError;
pub(crate) use self::metadata::{ChartDependency, ChartMetadata};
pub(crate) use self::names::{KIND_ANNOTATION, pluralize, propose_kind};

/// Where to read a chart from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChartSource {
    /// An unpacked chart directory (holding `Chart.yaml`).
    Dir(PathBuf),
    /// A packaged chart, as made by `helm package` (`NAME-VERSION.tgz`).
    Archive(PathBuf),
    /// A chart listed in a local Helm repository index.
    RepoIndex {
        /// The repository's `index.yaml`.
        index: PathBuf,
        /// The chart name (a key of the index's `entries`).
        chart: String,
        /// The exact version; `None` picks the highest non-prerelease one.
        version: Option<String>,
    },
}

impl ChartSource {
    /// A directory becomes [`ChartSource::Dir`], anything else
    /// [`ChartSource::Archive`] (a missing path is reported when loading).
    pub(crate) fn from_path(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        if path.is_dir() {
            Self::Dir(path)
        } else {
            Self::Archive(path)
        }
    }

    /// A [`ChartSource::RepoIndex`] from `--repo-index INDEX --chart NAME[@VERSION]`.
    pub(crate) fn repo_index(index: impl Into<PathBuf>, chart_ref: &str) -> Self {
        let (chart, version) = split_chart_ref(chart_ref);
        Self::RepoIndex {
            index: index.into(),
            chart,
            version,
        }
    }
}

impl fmt::Display for ChartSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dir(path) => write!(f, "chart directory {}", path.display()),
            Self::Archive(path) => write!(f, "chart archive {}", path.display()),
            Self::RepoIndex {
                index,
                chart,
                version: Some(version),
            } => write!(
                f,
                "chart {chart} {version} from repository index {}",
                index.display()
            ),
            Self::RepoIndex {
                index,
                chart,
                version: None,
            } => write!(f, "chart {chart} from repository index {}", index.display()),
        }
    }
}

/// Splits `NAME@VERSION` into its parts; `NAME` alone (or `NAME@`) has no
/// version.
pub(crate) fn split_chart_ref(chart_ref: &str) -> (String, Option<String>) {
    match chart_ref.split_once('@') {
        Some((name, version)) if !version.trim().is_empty() => {
            (name.trim().to_owned(), Some(version.trim().to_owned()))
        }
        Some((name, _)) => (name.trim().to_owned(), None),
        None => (chart_ref.trim().to_owned(), None),
    }
}

/// A chart read into memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoadedChart {
    /// The validated `Chart.yaml`.
    pub metadata: ChartMetadata,
    /// `values.yaml` verbatim (comments included), when the chart has one.
    /// It is known to parse as YAML with a mapping (or nothing) at the top.
    pub values_yaml: Option<String>,
    /// `values.schema.json` verbatim, when the chart has one. It is known to
    /// parse as JSON holding an object (or a boolean schema).
    pub values_schema_json: Option<String>,
    /// Where the chart came from, for humans: `chart directory
    /// ./charts/postgres`, `chart archive ./postgres-0.1.0.tgz`, or `chart
    /// postgres 0.1.0 from repository index ./repo/index.yaml
    /// (./repo/postgres-0.1.0.tgz)`.
    pub origin: String,
    /// For charts from a repository index: the repository's URL, i.e. the
    /// `file://` URL of the directory holding `index.yaml` (with a trailing
    /// `/`). `None` for directories and archives.
    pub repo_url: Option<String>,
}

/// Size limits that keep hostile or broken input from exhausting memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Each of `Chart.yaml`, `values.yaml` and `values.schema.json`.
    pub max_file_bytes: u64,
    /// Uncompressed bytes decoded from one archive, all entries included.
    pub max_total_bytes: u64,
    /// Entries in one archive (directories and headers included).
    pub max_entries: u64,
    /// Size of the `.tgz` file itself.
    pub max_archive_bytes: u64,
    /// Size of a repository `index.yaml`.
    pub max_index_bytes: u64,
}

impl Limits {
    /// 4 MiB per chart file, 64 MiB uncompressed per archive, 10,000 archive
    /// entries, 64 MiB per archive file and per repository index.
    pub(crate) const DEFAULT: Self = Self {
        max_file_bytes: 4 * 1024 * 1024,
        max_total_bytes: 64 * 1024 * 1024,
        max_entries: 10_000,
        max_archive_bytes: 64 * 1024 * 1024,
        max_index_bytes: 64 * 1024 * 1024,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Reads a chart with the default [`Limits`].
pub(crate) fn load(source: &ChartSource) -> Result<LoadedChart, ChartError> {
    load_with_limits(source, &Limits::DEFAULT)
}

/// Reads a chart, refusing input beyond `limits`.
pub(crate) fn load_with_limits(
    source: &ChartSource,
    limits: &Limits,
) -> Result<LoadedChart, ChartError> {
    match source {
        ChartSource::Dir(path) => dir::load_dir(path, limits),
        ChartSource::Archive(path) => load_archive(path, limits),
        ChartSource::RepoIndex {
            index,
            chart,
            version,
        } => index::load_from_index(index, chart, version.as_deref(), limits),
    }
}

/// Reads a packaged chart from a file.
fn load_archive(path: &Path, limits: &Limits) -> Result<LoadedChart, ChartError> {
    let bytes = archive::read_archive_file(path, limits)?;
    load_archive_bytes(&bytes, &path.display().to_string(), limits)
}

/// Reads a packaged chart held in memory; `label` names it in errors.
pub(crate) fn load_archive_bytes(
    bytes: &[u8],
    label: &str,
    limits: &Limits,
) -> Result<LoadedChart, ChartError> {
    let contents = archive::parse_archive(bytes, label, limits)?;
    contents.into_loaded(format!("chart archive {label}"), None)
}
