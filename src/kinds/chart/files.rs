//! The three files a chart is read for (`Chart.yaml`, `values.yaml`,
//! `values.schema.json`): bounded reading, UTF-8 decoding, JSON error
//! mapping with line and column, the sanity checks on `values.yaml` and
//! `values.schema.json`, and assembly into a [`LoadedChart`] — shared by the
//! directory, archive and repository-index readers.

use std::fmt;
use std::io::{self, Read};

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::error::ChartError;
use super::metadata;
use super::yaml::{yaml_error, yaml_options};
use super::{ChartMetadata, LoadedChart};

/// The chart's metadata file.
pub(super) const CHART_YAML: &str = "Chart.yaml";
/// The chart's default values.
pub(super) const VALUES_YAML: &str = "values.yaml";
/// The JSON Schema of the chart's values.
pub(super) const VALUES_SCHEMA_JSON: &str = "values.schema.json";

/// One file's bytes and the name it is reported under.
#[derive(Debug)]
pub(super) struct RawFile {
    /// Path (or `ARCHIVE!/ENTRY`) used in error messages.
    pub(super) label: String,
    /// Content as read.
    pub(super) bytes: Vec<u8>,
}

/// The files found for one chart, before validation.
#[derive(Debug)]
pub(super) struct ChartFiles {
    /// Where `Chart.yaml` was looked for (for [`ChartError::MissingChartYaml`]).
    pub(super) location: String,
    /// `Chart.yaml`, if present.
    pub(super) chart_yaml: Option<RawFile>,
    /// `values.yaml`, if present.
    pub(super) values_yaml: Option<RawFile>,
    /// `values.schema.json`, if present.
    pub(super) values_schema_json: Option<RawFile>,
}

impl ChartFiles {
    /// No files yet; `location` describes where they are looked for.
    pub(super) fn new(location: String) -> Self {
        Self {
            location,
            chart_yaml: None,
            values_yaml: None,
            values_schema_json: None,
        }
    }

    /// The slot for a file name, or `None` for files that are not read.
    pub(super) fn slot(&mut self, name: &str) -> Option<&mut Option<RawFile>> {
        match name {
            CHART_YAML => Some(&mut self.chart_yaml),
            VALUES_YAML => Some(&mut self.values_yaml),
            VALUES_SCHEMA_JSON => Some(&mut self.values_schema_json),
            _ => None,
        }
    }

    /// Decodes and validates the files.
    pub(super) fn into_loaded(
        self,
        origin: String,
        repo_url: Option<String>,
    ) -> Result<LoadedChart, ChartError> {
        let Some(chart_yaml) = self.chart_yaml else {
            return Err(ChartError::MissingChartYaml {
                location: self.location,
            });
        };
        let metadata = parse_metadata(chart_yaml)?;
        let values_yaml = self
            .values_yaml
            .map(|file| {
                let text = decode_utf8(file.bytes, &file.label)?;
                check_values_yaml(&text, &file.label)?;
                Ok::<_, ChartError>(text)
            })
            .transpose()?;
        let values_schema_json = self
            .values_schema_json
            .map(|file| {
                let text = decode_utf8(file.bytes, &file.label)?;
                check_values_schema(&text, &file.label)?;
                Ok::<_, ChartError>(text)
            })
            .transpose()?;
        Ok(LoadedChart {
            metadata,
            values_yaml,
            values_schema_json,
            origin,
            repo_url,
        })
    }
}

fn parse_metadata(file: RawFile) -> Result<ChartMetadata, ChartError> {
    let text = decode_utf8(file.bytes, &file.label)?;
    metadata::parse_chart_yaml(&text, &file.label)
}

/// Reads at most `limit` bytes; more is [`ChartError::FileTooLarge`].
pub(super) fn read_limited(
    reader: impl Read,
    limit: u64,
    label: &str,
) -> Result<Vec<u8>, ChartError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| ChartError::Io {
            path: label.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(ChartError::FileTooLarge {
            file: label.to_owned(),
            limit,
        });
    }
    Ok(bytes)
}

/// UTF-8 text without a leading byte-order mark.
pub(super) fn decode_utf8(bytes: Vec<u8>, label: &str) -> Result<String, ChartError> {
    let mut text = String::from_utf8(bytes).map_err(|err| ChartError::InvalidContent {
        file: label.to_owned(),
        message: format!(
            "not valid UTF-8 (invalid byte at offset {})",
            err.utf8_error().valid_up_to()
        ),
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// `values.yaml` must parse and hold a mapping (or nothing) at the top,
/// as Helm requires.
fn check_values_yaml(text: &str, label: &str) -> Result<(), ChartError> {
    let top: TopLevel = serde_saphyr::from_str_with_options(text, yaml_options())
        .map_err(|err| yaml_error(&err, label))?;
    match top {
        TopLevel::Mapping | TopLevel::Empty => Ok(()),
        TopLevel::Other(what) => Err(ChartError::InvalidContent {
            file: label.to_owned(),
            message: format!("the top level must be a mapping of values, not {what}"),
        }),
    }
}

/// `values.schema.json` must parse as JSON and hold a schema (an object, or
/// a boolean schema).
fn check_values_schema(text: &str, label: &str) -> Result<(), ChartError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|err| {
        // serde_json's column 0 is "not known" (the end of the text).
        let (line, column) = if err.line() > 0 {
            (
                Some(err.line() as u64),
                Some(err.column() as u64).filter(|c| *c > 0),
            )
        } else {
            (None, None)
        };
        ChartError::Json {
            file: label.to_owned(),
            line,
            column,
            message: json_message(&err),
        }
    })?;
    match value {
        serde_json::Value::Object(_) | serde_json::Value::Bool(_) => Ok(()),
        other => Err(ChartError::InvalidContent {
            file: label.to_owned(),
            message: format!("a JSON Schema must be an object, not {}", json_kind(&other)),
        }),
    }
}

/// serde_json's message without its trailing " at line L column C".
fn json_message(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    full.strip_suffix(&suffix)
        .map_or_else(|| full.clone(), str::to_owned)
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// What a YAML document holds at its top level (content is skipped).
enum TopLevel {
    Mapping,
    Empty,
    Other(&'static str),
}

impl<'de> Deserialize<'de> for TopLevel {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopLevelVisitor)
    }
}

struct TopLevelVisitor;

impl<'de> Visitor<'de> for TopLevelVisitor {
    type Value = TopLevel;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping of values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(TopLevel::Mapping)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TopLevel, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(TopLevel::Other("a list"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<TopLevel, E> {
        Ok(TopLevel::Empty)
    }

    fn visit_none<E: de::Error>(self) -> Result<TopLevel, E> {
        Ok(TopLevel::Empty)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<TopLevel, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<TopLevel, E> {
        Ok(TopLevel::Other("a boolean"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<TopLevel, E> {
        Ok(TopLevel::Other("a number"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<TopLevel, E> {
        Ok(TopLevel::Other("a number"))
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<TopLevel, E> {
        Ok(TopLevel::Other("a number"))
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<TopLevel, E> {
        Ok(TopLevel::Other("a number"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<TopLevel, E> {
        Ok(TopLevel::Other("a number"))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<TopLevel, E> {
        Ok(TopLevel::Other("a string"))
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<TopLevel, E> {
        Ok(TopLevel::Other("binary data"))
    }
}

/// Turns an I/O error into [`ChartError::Io`] for `path`.
pub(super) fn io_error(path: impl fmt::Display, source: io::Error) -> ChartError {
    ChartError::Io {
        path: path.to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Result<(), ChartError> {
        check_values_yaml(text, "values.yaml")
    }

    #[test]
    fn values_yaml_shapes() {
        assert!(values("").is_ok());
        assert!(values("# only a comment\n").is_ok());
        assert!(values("~\n").is_ok());
        assert!(values("a: 1\nb: {c: [1, 2]}\n'yes': \"yes\"\nn: null\nt: !!str 1\n").is_ok());
        assert!(values("base: &b {x: 1}\nother: *b\n").is_ok());
        let err = values("- a\n- b\n").unwrap_err();
        assert!(err.to_string().contains("not a list"), "{err}");
        let err = values("just a string\n").unwrap_err();
        assert!(err.to_string().contains("not a string"), "{err}");
    }

    #[test]
    fn values_yaml_syntax_error_has_location() {
        let err = values("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        let ChartError::Yaml { line, column, .. } = &err else {
            panic!("unexpected {err:?}");
        };
        assert!(line.is_some() && column.is_some(), "{err}");
        assert!(err.to_string().starts_with("values.yaml:"), "{err}");
    }

    #[test]
    fn values_yaml_duplicate_key_is_an_error() {
        let err = values("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert!(err.to_string().starts_with("values.yaml:3:1:"), "{err}");
    }

    #[test]
    fn schema_checks() {
        assert!(check_values_schema("{\"type\": \"object\"}", "s.json").is_ok());
        assert!(check_values_schema("true", "s.json").is_ok());
        let err = check_values_schema("[1]", "s.json").unwrap_err();
        assert!(err.to_string().contains("not an array"), "{err}");
        let err = check_values_schema("{\n  \"type\": \"object\",\n}\n", "s.json").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("s.json:3:1: invalid JSON:"), "{msg}");
        assert!(!msg.ends_with("column 1"), "{msg}");
    }

    #[test]
    fn utf8_and_bom() {
        assert_eq!(
            decode_utf8(b"\xef\xbb\xbfa: 1".to_vec(), "f").unwrap(),
            "a: 1"
        );
        let err = decode_utf8(b"a: \xff".to_vec(), "f").unwrap_err();
        assert!(err.to_string().contains("offset 3"), "{err}");
    }

    #[test]
    fn read_limited_enforces_limit() {
        assert_eq!(read_limited(&b"abcd"[..], 4, "f").unwrap(), b"abcd");
        let err = read_limited(&b"abcde"[..], 4, "f").unwrap_err();
        assert!(
            matches!(err, ChartError::FileTooLarge { limit: 4, .. }),
            "{err}"
        );
    }
}
