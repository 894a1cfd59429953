//! Rendering results the way kubectl does: borderless tables with upper-case
//! headers and three spaces between columns, JSON and YAML documents, and
//! `kind.group/name` lines, ages as kubectl prints them ([`ages`]). Progress on long
//! waits lives in [`progress`].

pub mod ages;
pub mod custom_columns;
pub mod go_template;
pub mod jsonpath_template;
pub mod progress;

/// `eprintln!` that never panics: where stderr went away (a closed pipe
/// after `serve … 2>&1 | tee log` is interrupted, a closed terminal),
/// `serve` must still clean up, and `eprintln!` would panic instead.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub use ages::{age, ago};

use std::io::Write;

use clap::ValueEnum;
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table, presets};
use serde::Serialize;

/// `-o/--output` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A table, as `kubectl get` prints
    Table,
    /// A table with additional columns
    Wide,
    /// JSON
    Json,
    /// YAML
    Yaml,
    /// Only names, as kubectl prints them (an object's kind.group/name; a kind's plural.group, as api-resources)
    Name,
    /// kubectl's JSONPath template over the JSON document (`-o jsonpath=TEMPLATE`)
    #[value(skip)]
    JsonPath,
    /// A JSONPath template read from a file (`-o jsonpath-file=FILE`)
    #[value(skip)]
    JsonPathFile,
    /// What a JSONPath template selects, as JSON arrays (`-o jsonpath-as-json=TEMPLATE`)
    #[value(skip)]
    JsonPathAsJson,
    /// A Go template over the JSON document (`-o go-template=TEMPLATE`, or `-o template=`)
    #[value(skip)]
    GoTemplate,
    /// A Go template read from a file (`-o go-template-file=FILE`, or `-o templatefile=`)
    #[value(skip)]
    GoTemplateFile,
    /// kubectl's custom columns over the JSON document (`-o custom-columns=SPEC`)
    #[value(skip)]
    CustomColumns,
    /// Custom columns read from a file (`-o custom-columns-file=FILE`)
    #[value(skip)]
    CustomColumnsFile,
}

impl OutputFormat {
    /// The name `-o` takes, e.g. `json`.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Table => "table",
            OutputFormat::Wide => "wide",
            OutputFormat::Json => "json",
            OutputFormat::Yaml => "yaml",
            OutputFormat::Name => "name",
            OutputFormat::JsonPath => "jsonpath",
            OutputFormat::JsonPathFile => "jsonpath-file",
            OutputFormat::JsonPathAsJson => "jsonpath-as-json",
            OutputFormat::GoTemplate => "go-template",
            OutputFormat::GoTemplateFile => "go-template-file",
            OutputFormat::CustomColumns => "custom-columns",
            OutputFormat::CustomColumnsFile => "custom-columns-file",
        }
    }

    /// As `-o` takes it: `json`, `jsonpath=TEMPLATE`, `custom-columns=SPEC`.
    pub fn spelled(self) -> &'static str {
        match self {
            OutputFormat::JsonPath => "jsonpath=TEMPLATE",
            OutputFormat::JsonPathFile => "jsonpath-file=FILE",
            OutputFormat::JsonPathAsJson => "jsonpath-as-json=TEMPLATE",
            OutputFormat::GoTemplate => "go-template=TEMPLATE",
            OutputFormat::GoTemplateFile => "go-template-file=FILE",
            OutputFormat::CustomColumns => "custom-columns=SPEC",
            OutputFormat::CustomColumnsFile => "custom-columns-file=FILE",
            f => f.name(),
        }
    }

    /// The formats that print a template over the JSON document
    /// ([`render_template`]).
    pub const TEMPLATES: [OutputFormat; 7] = [
        OutputFormat::JsonPath,
        OutputFormat::JsonPathFile,
        OutputFormat::JsonPathAsJson,
        OutputFormat::GoTemplate,
        OutputFormat::GoTemplateFile,
        OutputFormat::CustomColumns,
        OutputFormat::CustomColumnsFile,
    ];

    /// Whether `-o` names a file for this format (`-o jsonpath-file=FILE`):
    /// the template is the file's text.
    pub fn reads_file(self) -> bool {
        matches!(
            self,
            OutputFormat::JsonPathFile
                | OutputFormat::GoTemplateFile
                | OutputFormat::CustomColumnsFile
        )
    }
}

/// `formats` as an error message lists them: `-o yaml, -o json or -o name`.
pub fn describe_formats(formats: &[OutputFormat]) -> String {
    let names: Vec<String> = formats
        .iter()
        .map(|f| format!("-o {}", f.spelled()))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A table of rows under upper-case headers, printed the way `kubectl get` does.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Headers and cells printed as given (`-o custom-columns`), not
    /// upper-cased headers and `<none>` for empty cells.
    as_written: bool,
}

impl Rows {
    /// A table with these column headers (upper-cased on output).
    pub fn new<I, S>(headers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Rows {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            as_written: false,
        }
    }

    /// A table whose headers and cells print as given, as `-o
    /// custom-columns` prints them.
    pub fn as_written<I, S>(headers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Rows {
            as_written: true,
            ..Rows::new(headers)
        }
    }

    /// Appends one row; missing cells print as `<none>`.
    pub fn push<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.headers.len(), "<none>".to_owned());
        self.rows.push(row);
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Renders the table as text lines without trailing spaces. As
    /// kubectl's tab writer, a column is at least 6 wide with its padding
    /// of 3 (a header shorter than 3 is padded: the trailing spaces of the
    /// last column are trimmed with the rest).
    pub fn render(&self) -> String {
        let mut table = Table::new();
        let header = |h: &String| {
            let h = if self.as_written {
                h.clone()
            } else {
                h.to_uppercase()
            };
            format!("{h:<3}")
        };
        table
            .load_style(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(self.headers.iter().map(header));
        for row in &self.rows {
            table.add_row(row.iter().map(|c| {
                if c.is_empty() && !self.as_written {
                    "<none>"
                } else {
                    c.as_str()
                }
            }));
        }
        for column in table.column_iter_mut() {
            column.set_padding((0, 3));
            column.set_cell_alignment(CellAlignment::Left);
            column.set_constraint(ColumnConstraint::ContentWidth);
        }
        let mut out = String::new();
        for line in table.lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// Writes the rendered table.
    pub fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        w.write_all(self.render().as_bytes())
    }
}

/// Writes a value as pretty JSON followed by a newline.
pub fn write_json<T: Serialize + ?Sized>(w: &mut impl Write, value: &T) -> std::io::Result<()> {
    // `From` keeps the kind of an I/O error (a broken pipe stays one).
    serde_json::to_writer_pretty(&mut *w, value).map_err(std::io::Error::from)?;
    w.write_all(b"\n")
}

/// Renders `value`'s JSON document into `out` by a template format (one of
/// [`OutputFormat::TEMPLATES`]) and its `template` as `-o` gave it (a
/// file's text for the file formats): JSONPath (no newline is added, as
/// kubectl adds none; the error is kubectl's `error executing jsonpath …`),
/// its values as JSON arrays, a Go template (`error executing template …`),
/// or custom columns. On an error in a Go template or a custom-columns row,
/// `out` holds what rendered before it, which kubectl prints before the
/// error; a JSONPath template renders whole or not at all, as kubectl
/// evaluates it before printing. With `allow_missing_keys` off
/// (`--allow-missing-template-keys=false`) a JSONPath field or Go template
/// key that selects nothing is an error; custom columns print `<none>`
/// either way, as kubectl's do.
pub fn render_template<T: Serialize + ?Sized>(
    value: &T,
    format: OutputFormat,
    template: &str,
    allow_missing_keys: bool,
    out: &mut String,
) -> Result<(), String> {
    let document = serde_json::to_value(value).map_err(|e| e.to_string())?;
    match format {
        OutputFormat::CustomColumns => {
            custom_columns::Columns::parse(template)?.render_into(&document, out)
        }
        OutputFormat::CustomColumnsFile => {
            custom_columns::Columns::parse_file(template)?.render_into(&document, out)
        }
        OutputFormat::GoTemplate | OutputFormat::GoTemplateFile => {
            go_template::Template::parse(template)
                .and_then(|t| {
                    t.allowing_missing_keys(allow_missing_keys)
                        .render_into(&document, out)
                })
                .map_err(|e| {
                    format!(
                        "error executing template {}: {e}",
                        crate::golang::quote(template)
                    )
                })
        }
        _ => jsonpath_template::Template::parse(template)
            .and_then(|t| {
                let t = t.allowing_missing_keys(allow_missing_keys);
                if format == OutputFormat::JsonPathAsJson {
                    t.render_as_json(&document)
                } else {
                    t.render(&document)
                }
            })
            .map(|text| out.push_str(&text))
            .map_err(|e| {
                format!(
                    "error executing jsonpath {}: {e}",
                    crate::golang::quote(template)
                )
            }),
    }
}

/// Writes a value as a YAML document.
pub fn write_yaml<T: Serialize>(w: &mut impl Write, value: &T) -> std::io::Result<()> {
    let text = to_yaml(value)?;
    w.write_all(text.as_bytes())
}

/// Writes Kubernetes objects as kubectl prints several: YAML documents
/// (`---` before each), one JSON `List` (which `kubectl apply -f` takes), or
/// `kind.group/name` lines (`-o name`). The table formats are the caller's
/// to refuse; they print YAML here.
pub fn write_objects(
    w: &mut impl Write,
    format: OutputFormat,
    objects: &[serde_json::Value],
) -> std::io::Result<()> {
    match format {
        OutputFormat::Json => write_json(
            w,
            &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects}),
        ),
        OutputFormat::Name => {
            let text: String = objects.iter().map(|o| name_line(o) + "\n").collect();
            w.write_all(text.as_bytes())
        }
        // The template formats are refused before objects are printed this way.
        OutputFormat::Yaml
        | OutputFormat::Table
        | OutputFormat::Wide
        | OutputFormat::JsonPath
        | OutputFormat::JsonPathFile
        | OutputFormat::JsonPathAsJson
        | OutputFormat::GoTemplate
        | OutputFormat::GoTemplateFile
        | OutputFormat::CustomColumns
        | OutputFormat::CustomColumnsFile => {
            let mut text = String::new();
            for object in objects {
                text.push_str("---\n");
                text.push_str(&to_yaml(object)?);
            }
            w.write_all(text.as_bytes())
        }
    }
}

/// `lease.coordination.k8s.io/name`, `service/name`: kubectl's `-o name`.
fn name_line(object: &serde_json::Value) -> String {
    let kind = object["kind"].as_str().unwrap_or_default().to_lowercase();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    match object["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
    {
        Some((group, _)) => format!("{kind}.{group}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

/// Serializes a value to YAML text (serde-saphyr), ending in a newline.
pub fn to_yaml<T: Serialize>(value: &T) -> std::io::Result<String> {
    let mut text = serde_saphyr::to_string(value).map_err(std::io::Error::other)?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_are_what_o_takes() {
        for format in OutputFormat::value_variants() {
            assert_eq!(
                format.to_possible_value().map(|v| v.get_name().to_owned()),
                Some(format.name().to_owned())
            );
        }
        assert_eq!(
            describe_formats(&[OutputFormat::Yaml, OutputFormat::Json, OutputFormat::Name]),
            "-o yaml, -o json or -o name"
        );
        assert_eq!(describe_formats(&[OutputFormat::Json]), "-o json");
    }

    #[test]
    fn objects_print_as_yaml_documents_a_json_list_or_names() {
        let objects = [
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}),
            serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                               "metadata": {"name": "b", "namespace": "a"}}),
        ];
        let print = |format| {
            let mut out = Vec::new();
            write_objects(&mut out, format, &objects).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            print(OutputFormat::Name),
            "namespace/a\nlease.coordination.k8s.io/b\n"
        );
        assert!(print(OutputFormat::Yaml).starts_with("---\napiVersion: v1\nkind: Namespace\n"));
        let list: serde_json::Value = serde_json::from_str(&print(OutputFormat::Json)).unwrap();
        assert_eq!(list["kind"], "List");
        assert_eq!(list["items"][1]["kind"], "Lease");
    }

    #[test]
    fn table_reads_like_kubectl_get() {
        let mut rows = Rows::new(["Kind", "Plural", "Short names"]);
        rows.push(["Postgres", "postgreses", "pg"]);
        rows.push(["Redis", "redises", ""]);
        let text = rows.render();
        assert_eq!(
            text,
            "KIND       PLURAL       SHORT NAMES\nPostgres   postgreses   pg\nRedis      redises      <none>\n"
        );
    }

    #[test]
    fn yaml_keeps_ambiguous_strings_quoted() {
        let v = serde_json::json!({"a": "no", "b": "on", "c": "~", "d": true});
        let text = to_yaml(&v).unwrap();
        let back: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, v, "{text}");
    }
}
