//! kubectl's `-o custom-columns=HEADER:PATH,…` and `-o
//! custom-columns-file=FILE` over the JSON document a command would print
//! with `-o json`, as kubectl's `CustomColumnsPrinter` prints objects: a
//! row per item of a `List` (the document itself otherwise), headers as
//! written, each cell every value its path selects, printed as Go's `%v`
//! prints them (`map[k:v]`, `[a b]`) and joined with commas, `<none>` where
//! it selects nothing. A path may be written `.a.b`, `a.b`, `{.a.b}` or
//! `{a.b}` (kubectl's `RelaxedJSONPathExpression`).

use serde_json::Value;

use super::Rows;
use crate::apimachinery::jsonpath::JsonPath;

/// One column: its header and its path.
#[derive(Debug)]
struct Column {
    header: String,
    path: JsonPath,
}

/// Parsed custom columns.
#[derive(Debug)]
pub struct Columns {
    columns: Vec<Column>,
}

impl Columns {
    /// Parses `-o custom-columns=`'s value, `HEADER:PATH,…`; the errors are
    /// kubectl's.
    pub fn parse(spec: &str) -> Result<Columns, String> {
        if spec.is_empty() {
            return Err("custom-columns format specified but no custom columns given".to_owned());
        }
        let columns = spec
            .split(',')
            .map(|part| {
                let (header, path) = part.split_once(':').ok_or_else(|| {
                    format!(
                        "unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
                    )
                })?;
                column(header, path)
            })
            .collect::<Result<_, String>>()?;
        Ok(Columns { columns })
    }

    /// Parses a `-o custom-columns-file=` file as kubectl reads one: a line
    /// of headers and a line of paths, separated by white space.
    pub fn parse_file(text: &str) -> Result<Columns, String> {
        let mut lines = text.lines();
        let headers: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let paths: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        if headers.len() != paths.len() {
            return Err(format!(
                "number of headers ({}) and field specifications ({}) don't match",
                headers.len(),
                paths.len()
            ));
        }
        let columns = headers
            .into_iter()
            .zip(paths)
            .map(|(header, path)| column(header, path))
            .collect::<Result<_, String>>()?;
        Ok(Columns { columns })
    }

    /// Renders the table for `document` into `out`: a row for each of its
    /// `items` when it has them (a `List`), one for the document itself
    /// otherwise. On an error in a row, `out` holds the headers and the rows
    /// before it, as kubectl prints them before the error.
    pub fn render_into(&self, document: &Value, out: &mut String) -> Result<(), String> {
        let items: Vec<&Value> = match document.get("items").and_then(Value::as_array) {
            Some(items) => items.iter().collect(),
            None => vec![document],
        };
        let mut rows = Rows::as_written(self.columns.iter().map(|c| c.header.clone()));
        for item in items {
            let cells: Result<Vec<String>, String> =
                self.columns.iter().map(|c| cell(&c.path, item)).collect();
            match cells {
                Ok(cells) => rows.push(cells),
                Err(e) => {
                    out.push_str(&rows.render());
                    return Err(e);
                }
            }
        }
        out.push_str(&rows.render());
        Ok(())
    }
}

fn column(header: &str, path: &str) -> Result<Column, String> {
    let path = relaxed(path)?;
    Ok(Column {
        header: header.to_owned(),
        path: JsonPath::parse(&path)?,
    })
}

/// kubectl's `RelaxedJSONPathExpression`: `a.b`, `.a.b`, `{a.b}` and
/// `{.a.b}` all become `{.a.b}`.
fn relaxed(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Ok(String::new());
    }
    let inner = match path.strip_prefix('{') {
        Some(rest) => rest.strip_suffix('}'),
        None => Some(path),
    };
    let field = inner
        .map(|s| s.strip_prefix('.').unwrap_or(s))
        .filter(|s| !s.is_empty() && !s.contains(['{', '}']));
    match field {
        Some(field) => Ok(format!("{{.{field}}}")),
        None => Err(
            "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'"
                .to_owned(),
        ),
    }
}

/// Every value `path` selects in `item`, as `%v`, joined with commas;
/// `<none>` when it selects none.
fn cell(path: &JsonPath, item: &Value) -> Result<String, String> {
    let values = path.find(item)?;
    if values.is_empty() {
        return Ok("<none>".to_owned());
    }
    Ok(values
        .into_iter()
        .map(crate::golang::unstructured::v)
        .collect::<Vec<_>>()
        .join(","))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn render(columns: &Columns, document: &Value) -> Result<String, String> {
        let mut out = String::new();
        columns.render_into(document, &mut out)?;
        Ok(out)
    }

    fn list() -> Value {
        json!({"apiVersion": "v1", "kind": "List", "items": [
            {"kind": "Postgres", "shortNames": ["pg", "pgs"], "chart": "postgres", "replicas": 2,
             "labels": {"b": "2", "a": "1"}},
            {"kind": "Redis", "shortNames": [], "chart": "", "replicas": 1.5},
        ]})
    }

    /// As kubectl prints `-o custom-columns` (kubectl 1.36 over the same
    /// List): headers as written, a row per item, `%v` of each value.
    #[test]
    fn prints_a_row_per_item_as_kubectl_does() {
        let columns = Columns::parse(
            "Kind:.kind,SHORT:.shortNames[*],chart:{.chart},N:replicas,L:{labels},X:.missing",
        )
        .unwrap();
        assert_eq!(
            render(&columns, &list()).unwrap(),
            "Kind       SHORT    chart      N     L              X\n\
             Postgres   pg,pgs   postgres   2     map[a:1 b:2]   <none>\n\
             Redis      <none>              1.5   <none>         <none>\n"
        );
    }

    #[test]
    fn a_document_that_is_no_list_is_one_row() {
        let columns = Columns::parse("V:.version").unwrap();
        assert_eq!(
            render(&columns, &json!({"version": "v1.2.3"})).unwrap(),
            "V\nv1.2.3\n"
        );
    }

    #[test]
    fn refuses_what_kubectl_refuses() {
        for (spec, error) in [
            (
                "",
                "custom-columns format specified but no custom columns given",
            ),
            (
                "KIND",
                "unexpected custom-columns spec: KIND, expected <header>:<json-path-expr>",
            ),
            (
                "KIND:{.a}}",
                "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'",
            ),
        ] {
            assert_eq!(Columns::parse(spec).unwrap_err(), error, "{spec}");
        }
        assert!(Columns::parse("A:.items[").is_err());
        // An index out of range fails the print, as kubectl's does, after
        // the headers and the rows before it (kubectl 1.36 prints them too).
        let columns = Columns::parse("K:.kind,A:.shortNames[1]").unwrap();
        let mut out = String::new();
        assert_eq!(
            columns.render_into(&list(), &mut out).unwrap_err(),
            "array index out of bounds: index 1, length 0"
        );
        assert_eq!(out, "K          A\nPostgres   pgs\n");
    }

    #[test]
    fn reads_a_columns_file() {
        let columns = Columns::parse_file("KIND   CHART\n.kind  {.chart}\n").unwrap();
        assert_eq!(
            render(&columns, &list()).unwrap(),
            "KIND       CHART\nPostgres   postgres\nRedis\n"
        );
        assert_eq!(
            Columns::parse_file("KIND CHART\n.kind\n").unwrap_err(),
            "number of headers (2) and field specifications (1) don't match"
        );
    }
}
