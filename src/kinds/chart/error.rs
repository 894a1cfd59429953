//! The error type of chart reading: [`ChartError`], one variant per way a
//! chart directory, archive or repository index can be unusable, each with a
//! message that names the file (and line/column, entry or URL) at fault.

use std::fmt;
use std::io;

/// Why a chart could not be read.
///
/// Every message names the offending file: a path for chart directories, and
/// `ARCHIVE!/ENTRY` for files inside a packaged chart.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChartError {
    /// A file or directory could not be read.
    #[error("read {path}")]
    Io {
        /// The path that failed.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// A chart directory was expected but the path is something else.
    #[error("{path} is not a directory")]
    NotADirectory {
        /// The path given.
        path: String,
    },

    /// A file was expected but the path is a directory, FIFO, device, ….
    #[error("{path} is not a regular file")]
    NotAFile {
        /// The path given.
        path: String,
    },

    /// The chart has no `Chart.yaml`.
    #[error("Chart.yaml not found in {location}")]
    MissingChartYaml {
        /// Where it was looked for, e.g. `chart directory ./charts/postgres`.
        location: String,
    },

    /// A YAML file does not parse (or does not have the expected shape).
    #[error("{}: invalid YAML: {message}", Located(file, *line, *column))]
    Yaml {
        /// The file, e.g. `./charts/postgres/Chart.yaml`.
        file: String,
        /// 1-based line, when known.
        line: Option<u64>,
        /// 1-based column, when known.
        column: Option<u64>,
        /// What is wrong.
        message: String,
    },

    /// `values.schema.json` is not valid JSON.
    #[error("{}: invalid JSON: {message}", Located(file, *line, *column))]
    Json {
        /// The file.
        file: String,
        /// 1-based line, when known.
        line: Option<u64>,
        /// 1-based column, when known.
        column: Option<u64>,
        /// What is wrong.
        message: String,
    },

    /// A file parses but its content is not usable (wrong top-level type,
    /// not UTF-8, …).
    #[error("{file}: {message}")]
    InvalidContent {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },

    /// A required Chart.yaml field is absent or empty.
    #[error("{file}: required field `{field}` is missing or empty")]
    MissingField {
        /// The Chart.yaml at fault.
        file: String,
        /// The field's name as spelled in Chart.yaml.
        field: &'static str,
    },

    /// The chart version is not SemVer 2.
    #[error(
        "{file}: chart version {version:?} is not a valid SemVer 2 version ({reason}); \
         Helm requires versions such as 1.2.3 or 1.2.3-rc.1"
    )]
    InvalidVersion {
        /// The Chart.yaml at fault.
        file: String,
        /// The version as written.
        version: String,
        /// The parser's complaint.
        reason: String,
    },

    /// The chart name is unusable.
    #[error("{file}: chart name {name:?} is invalid: {reason}")]
    InvalidName {
        /// The Chart.yaml at fault.
        file: String,
        /// The name as written.
        name: String,
        /// What is wrong with it.
        reason: String,
    },

    /// Another Chart.yaml field has an unacceptable value.
    #[error("{file}: {message}")]
    InvalidMetadata {
        /// The Chart.yaml at fault.
        file: String,
        /// What is wrong.
        message: String,
    },

    /// The chart is a library chart, which Helm cannot install.
    #[error(
        "{file}: chart {name:?} is a library chart (`type: library`); library charts \
         cannot be installed, so they cannot back a kind"
    )]
    LibraryChart {
        /// The chart name.
        name: String,
        /// The Chart.yaml declaring it.
        file: String,
    },

    /// A file is larger than allowed.
    #[error("{file} is larger than the limit of {limit} bytes")]
    FileTooLarge {
        /// The file (or archive entry).
        file: String,
        /// The limit in bytes.
        limit: u64,
    },

    /// Decompressing an archive produced more bytes than allowed.
    #[error(
        "{archive}: uncompressed content exceeds the limit of {limit} bytes \
         (corrupt or malicious archive?)"
    )]
    ArchiveTooLarge {
        /// The archive.
        archive: String,
        /// The limit in bytes.
        limit: u64,
    },

    /// An archive has more entries than allowed.
    #[error("{archive}: more than {limit} entries (corrupt or malicious archive?)")]
    TooManyEntries {
        /// The archive.
        archive: String,
        /// The limit.
        limit: u64,
    },

    /// The archive is not gzip-compressed.
    #[error(
        "{archive} is not gzip-compressed; expected a .tgz chart archive as made by `helm package`"
    )]
    NotGzip {
        /// The archive.
        archive: String,
    },

    /// The archive is gzip but its content is not a readable tar stream.
    #[error("{archive}: not a readable gzip-compressed tar archive: {message}")]
    CorruptArchive {
        /// The archive.
        archive: String,
        /// What the decoder reported.
        message: String,
    },

    /// The archive holds an entry that a chart archive must not have
    /// (`..`, an absolute path, a link, a device file, a second top-level
    /// directory, …). Nothing is ever extracted; such archives are refused
    /// outright.
    #[error("{archive}: refusing entry {entry:?}: {reason}")]
    UnsafeEntry {
        /// The archive.
        archive: String,
        /// The entry name as stored in the archive.
        entry: String,
        /// Why it is refused.
        reason: String,
    },

    /// A symbolic link in a chart directory points outside that directory.
    #[error("{path} is a symbolic link to {target}, outside the chart directory")]
    SymlinkEscape {
        /// The link.
        path: String,
        /// Where it resolves to.
        target: String,
    },

    /// The repository index is malformed.
    #[error("{index}: {message}")]
    InvalidIndex {
        /// The index file.
        index: String,
        /// What is wrong.
        message: String,
    },

    /// The repository index has no chart of that name.
    #[error(
        "{index}: no chart named {chart:?}; the index has: {}",
        list_or_none(available)
    )]
    ChartNotInIndex {
        /// The index file.
        index: String,
        /// The chart asked for.
        chart: String,
        /// The chart names the index has (possibly abridged).
        available: Vec<String>,
    },

    /// The repository index has the chart but not that version.
    #[error(
        "{index}: chart {chart:?} has no version {version:?}; available versions: {}",
        list_or_none(available)
    )]
    VersionNotInIndex {
        /// The index file.
        index: String,
        /// The chart.
        chart: String,
        /// The version asked for.
        version: String,
        /// The versions the index has, highest first.
        available: Vec<String>,
    },

    /// No version was asked for and the chart has no stable (non-prerelease)
    /// SemVer version to default to.
    #[error(
        "{index}: chart {chart:?} has no stable SemVer version; name one explicitly \
         (CHART@VERSION) from: {}",
        list_or_none(available)
    )]
    NoStableVersion {
        /// The index file.
        index: String,
        /// The chart.
        chart: String,
        /// The versions the index has.
        available: Vec<String>,
    },

    /// The index points at an `http(s)://` URL; this tool does not download.
    #[error(
        "chart {chart} {version} is at {url}: remote chart URLs are not supported; \
         download the chart and pass the .tgz"
    )]
    RemoteChartUrl {
        /// The chart.
        chart: String,
        /// The version.
        version: String,
        /// The URL in the index.
        url: String,
    },

    /// The index points at a URL this tool cannot use (`oci://`, a file URL
    /// with a host, …).
    #[error("chart {chart} {version}: unsupported chart URL {url:?}: {reason}")]
    UnsupportedUrl {
        /// The chart.
        chart: String,
        /// The version.
        version: String,
        /// The URL in the index.
        url: String,
        /// Why it cannot be used.
        reason: String,
    },

    /// The archive's sha256 does not match the index's `digest`.
    #[error(
        "{archive}: sha256 digest mismatch: the repository index says {expected}, \
         the file has {actual}"
    )]
    DigestMismatch {
        /// The archive.
        archive: String,
        /// The digest from the index.
        expected: String,
        /// The digest of the file.
        actual: String,
    },

    /// The archive an index entry points at holds a different chart or version.
    #[error("{index}: entry {chart} {version} points at {archive}, which holds {found}")]
    IndexMismatch {
        /// The index file.
        index: String,
        /// The chart name in the index.
        chart: String,
        /// The version in the index.
        version: String,
        /// The archive.
        archive: String,
        /// `NAME VERSION` from the archive's Chart.yaml.
        found: String,
    },
}

/// Formats `FILE:LINE:COL`, `FILE:LINE` or `FILE`.
struct Located<'a>(&'a str, Option<u64>, Option<u64>);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.1, self.2) {
            (Some(line), Some(column)) => write!(f, "{}:{line}:{column}", self.0),
            (Some(line), None) => write!(f, "{}:{line}", self.0),
            _ => f.write_str(self.0),
        }
    }
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items.join(", ")
    }
}
