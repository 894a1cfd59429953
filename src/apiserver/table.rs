//! Server-side printing: `meta.k8s.io/v1` `Table`s for `kubectl get`, and
//! `PartialObjectMetadata(List)` for metadata clients (the garbage collector,
//! the namespace controller, `kubectl delete --wait`).
//!
//! [`build_table`] mirrors kube-apiserver's custom-resource table convertor
//! (k8s.io/apiextensions-apiserver `registry/customresource/tableconvertor`):
//!
//! - the first column is `Name` (`type: string`, `format: name`), then the
//!   kind's printer columns with their type, format, priority and
//!   description (default `Custom resource definition column (in JSONPath
//!   format): <path>`);
//! - each cell takes the **first** value its [`JsonPath`] selects; a missing
//!   value or an evaluation error gives `null`;
//! - `string` cells are printed as client-go's JSONPath prints (maps and
//!   arrays as JSON); `integer`, `number` and `boolean` cells keep their JSON
//!   type when it fits and are `null` otherwise;
//! - `date` cells are rendered **on the server** as a human-readable age
//!   (`5m`, `3d2h`; `<invalid>` for an unparsable time, `<unknown>` for an
//!   empty one), as upstream does with `ConvertToHumanReadableDateType`;
//! - every column is sent whatever its priority: kubectl hides `priority > 0`
//!   columns unless `-o wide`.
//!
//! Rows carry `object` per `includeObject`: `PartialObjectMetadata` by
//! default, the whole object, or `null`.
//!
//! A list renders each app's row from its kept [`TableRow`], made on the app's
//! first Table read and kept with its app view: the cells encoded once,
//! `date` cells kept as their time and aged per request, the row's
//! `PartialObjectMetadata` copied from the app's kept JSON. A Table list of
//! unchanged apps then costs about what a JSON list does, with the same
//! bytes [`build_table`] would give.

use std::ops::Range;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::negotiate::IncludeObject;
use crate::apimachinery::jsonpath::{JsonPath, to_text};
use crate::golang::{self, GoDuration};
use crate::kinds::definition::{PrinterColumn, ResolvedKind};
use crate::storage::helm_release::{AppView, TableCell, TableRow};

/// The description kube-apiserver gives the `Name` column (ObjectMeta's
/// `name` documentation).
pub(crate) const NAME_COLUMN_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// How to build a table beyond the objects themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TableOptions {
    /// What each row's `object` holds.
    pub include_object: IncludeObject,
    /// Whether columns with `priority > 0` are included. kube-apiserver always
    /// includes them (kubectl filters them client-side), so servers should
    /// pass `true`; `false` drops them and their cells.
    pub wide_columns_included: bool,
    /// Omit `columnDefinitions` (sent as `null`), as kube-apiserver does for
    /// every watch event after the first.
    pub no_headers: bool,
    /// The time ages are computed against (default: now).
    pub now: Option<Timestamp>,
}

impl Default for TableOptions {
    fn default() -> TableOptions {
        TableOptions {
            include_object: IncludeObject::Metadata,
            wide_columns_included: true,
            no_headers: false,
            now: None,
        }
    }
}

/// Builds the `Table` for `objects` of `kind`. `list_meta` becomes the table's
/// `metadata` (`resourceVersion`, `continue`, `remainingItemCount`, as the
/// list carried them; `{}` or the object's `resourceVersion` for a single
/// object).
pub(crate) fn build_table(
    kind: &ResolvedKind,
    objects: &[&Value],
    include_object: IncludeObject,
    list_meta: Value,
    wide_columns_included: bool,
) -> Value {
    build_table_with(
        kind,
        objects,
        list_meta,
        &TableOptions {
            include_object,
            wide_columns_included,
            ..TableOptions::default()
        },
    )
}

/// [`build_table`] with every option.
pub(crate) fn build_table_with(
    kind: &ResolvedKind,
    objects: &[&Value],
    list_meta: Value,
    options: &TableOptions,
) -> Value {
    let columns: Vec<&PrinterColumn> = kind
        .definition
        .printer_columns
        .iter()
        .filter(|c| options.wide_columns_included || c.priority == 0)
        .collect();
    let paths: Vec<Option<JsonPath>> = columns
        .iter()
        .map(|c| JsonPath::parse(&c.json_path).ok())
        .collect();
    let now = options.now.unwrap_or_else(Timestamp::now);

    let column_definitions = if options.no_headers {
        Value::Null
    } else {
        let mut defs = vec![json!({
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": NAME_COLUMN_DESCRIPTION,
            "priority": 0,
        })];
        defs.extend(columns.iter().map(|c| column_definition(c)));
        Value::Array(defs)
    };

    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            let name = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            let mut cells = Vec::with_capacity(columns.len() + 1);
            cells.push(Value::String(name.to_owned()));
            for (column, path) in columns.iter().zip(&paths) {
                let first = path
                    .as_ref()
                    .and_then(|p| p.find(object).ok())
                    .and_then(|values| values.first().copied());
                cells.push(match first {
                    None => Value::Null,
                    Some(v) => cell_for(&column.type_, v, now),
                });
            }
            let row_object = match options.include_object {
                IncludeObject::None => Value::Null,
                IncludeObject::Metadata => partial_object_metadata(object),
                IncludeObject::Object => (*object).clone(),
            };
            json!({"cells": cells, "object": row_object})
        })
        .collect();

    let mut table = Map::new();
    table.insert("kind".into(), "Table".into());
    table.insert("apiVersion".into(), "meta.k8s.io/v1".into());
    table.insert("metadata".into(), object_or_empty(list_meta));
    table.insert("columnDefinitions".into(), column_definitions);
    table.insert("rows".into(), Value::Array(rows));
    Value::Object(table)
}

/// The Table row of `view`, an app of `kind`, with every printer column:
/// made on the first call, kept with the view after (see the module doc).
pub(crate) fn kept_row<'v>(view: &'v AppView, kind: &ResolvedKind) -> &'v TableRow {
    view.table_row.get_or_init(|| new_row(kind, &view.json))
}

/// The row of the app encoded as `json`: what [`build_table`] would give
/// for it with every column, less what depends on the request (the time,
/// `includeObject`).
fn new_row(kind: &ResolvedKind, json: &str) -> TableRow {
    let object: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    let encode = |v: &Value| TableCell::Encoded(v.to_string().into_boxed_str());
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut cells = vec![encode(&Value::String(name.to_owned()))];
    for column in &kind.definition.printer_columns {
        let first = JsonPath::parse(&column.json_path)
            .ok()
            .and_then(|p| p.find(&object).ok().and_then(|v| v.first().copied()));
        cells.push(match first {
            None => encode(&Value::Null),
            Some(Value::String(s)) if column.type_ == "date" => {
                match (s.as_str(), s.parse::<Timestamp>()) {
                    ("" | "null", _) => encode(&Value::String("<unknown>".to_owned())),
                    (_, Ok(t)) => TableCell::Age(t),
                    (_, Err(_)) => encode(&Value::String("<invalid>".to_owned())),
                }
            }
            // Not a string: not a date, whatever the time.
            Some(v) => encode(&cell_for(&column.type_, v, Timestamp::UNIX_EPOCH)),
        });
    }
    TableRow {
        metadata: metadata_range(&object, json),
        cells,
    }
}

/// Appends `row` as [`build_table`] encodes a row, ages as of `now`, its
/// `object` per `include` (`json` is the app's JSON the row was made from).
pub(crate) fn render_row(
    row: &TableRow,
    json: &str,
    include: IncludeObject,
    now: Timestamp,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"{\"cells\":[");
    for (i, cell) in row.cells.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match cell {
            TableCell::Encoded(text) => out.extend_from_slice(text.as_bytes()),
            TableCell::Age(t) => {
                let age = golang::human_duration(GoDuration::from_nanos_saturating(
                    now.as_nanosecond() - t.as_nanosecond(),
                ));
                out.extend_from_slice(Value::String(age).to_string().as_bytes());
            }
        }
    }
    out.extend_from_slice(b"],\"object\":");
    match include {
        IncludeObject::None => out.extend_from_slice(b"null"),
        IncludeObject::Object => out.extend_from_slice(json.as_bytes()),
        IncludeObject::Metadata => {
            out.extend_from_slice(
                b"{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":",
            );
            match row.metadata.clone().and_then(|r| json.get(r)) {
                Some(metadata) => out.extend_from_slice(metadata.as_bytes()),
                None => {
                    let object: Value = serde_json::from_str(json).unwrap_or(Value::Null);
                    let metadata = object.get("metadata").filter(|m| m.is_object());
                    match metadata {
                        Some(m) => out.extend_from_slice(m.to_string().as_bytes()),
                        None => out.extend_from_slice(b"{}"),
                    }
                }
            }
            out.push(b'}');
        }
    }
    out.push(b'}');
}

/// The byte range of the top-level `metadata` object of `object` within
/// `json`, its compact encoding (as app views are kept): where the metadata,
/// encoded again, sits after `"metadata":` outside any string (a string
/// holding it would have its quotes escaped). The first such place is the
/// top-level one, since an app's `metadata` precedes its `spec`; `None` when
/// not found, and the row's metadata is then encoded per request.
fn metadata_range(object: &Value, json: &str) -> Option<Range<usize>> {
    let metadata = object.get("metadata").filter(|m| m.is_object())?;
    let needle = format!("\"metadata\":{metadata}");
    let start = json.find(&needle)? + "\"metadata\":".len();
    Some(start..start + needle.len() - "\"metadata\":".len())
}

/// The encoded Table of a list up to its first row: `{"kind":"Table", …,
/// "rows":[`, with every column; rows follow ([`render_row`]), then `]}`.
pub(crate) fn table_head(kind: &ResolvedKind, list_meta: Value) -> Vec<u8> {
    let empty = build_table(kind, &[], IncludeObject::None, list_meta, true);
    let mut bytes = serde_json::to_vec(&empty).unwrap_or_default();
    // `…,"rows":[]}` less its last two bytes.
    bytes.truncate(bytes.len().saturating_sub(2));
    bytes
}

/// The `TableColumnDefinition` of a printer column.
pub(crate) fn column_definition(column: &PrinterColumn) -> Value {
    let description = if column.description.is_empty() {
        format!(
            "Custom resource definition column (in JSONPath format): {}",
            column.json_path
        )
    } else {
        column.description.clone()
    };
    json!({
        "name": column.name,
        "type": column.type_,
        "format": column.format,
        "description": description,
        "priority": column.priority,
    })
}

fn object_or_empty(v: Value) -> Value {
    match v {
        Value::Object(_) => v,
        _ => Value::Object(Map::new()),
    }
}

/// upstream `cellForJSONValue` (and, for `string`, JSONPath printing).
fn cell_for(type_: &str, value: &Value, now: Timestamp) -> Value {
    match type_ {
        "string" => Value::String(to_text(value)),
        "integer" => match value {
            Value::Number(n) => match n.as_i64() {
                Some(i) => i.into(),
                // Go converts float64 to int64 by truncation.
                None => n
                    .as_f64()
                    .map_or(Value::Null, |f| (f.trunc() as i64).into()),
            },
            _ => Value::Null,
        },
        "number" => match value {
            Value::Number(n) => match n.as_i64() {
                Some(i) => i.into(),
                None => match n.as_f64() {
                    // Go prints an integral float64 without a fraction.
                    Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => (f as i64).into(),
                    Some(f) => json!(f),
                    None => Value::Null,
                },
            },
            _ => Value::Null,
        },
        "boolean" => match value {
            Value::Bool(b) => Value::Bool(*b),
            _ => Value::Null,
        },
        "date" => match value {
            Value::String(s) => Value::String(human_readable_date(s, now)),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

/// upstream `ConvertToHumanReadableDateType` of an RFC 3339 string.
pub(crate) fn human_readable_date(s: &str, now: Timestamp) -> String {
    if s.is_empty() || s == "null" {
        return "<unknown>".to_owned();
    }
    match s.parse::<Timestamp>() {
        Ok(t) => golang::human_duration(GoDuration::from_nanos_saturating(
            now.as_nanosecond() - t.as_nanosecond(),
        )),
        Err(_) => "<invalid>".to_owned(),
    }
}

/// `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{…}}`
/// with the object's whole `metadata`.
pub(crate) fn partial_object_metadata(object: &Value) -> Value {
    let metadata = object
        .get("metadata")
        .filter(|m| m.is_object())
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
    })
}

/// A `PartialObjectMetadataList` of `objects`; `list_meta` becomes its
/// `metadata`; `items` is `[]` when empty.
pub(crate) fn partial_object_metadata_list(objects: &[&Value], list_meta: Value) -> Value {
    let items: Vec<Value> = objects.iter().map(|o| partial_object_metadata(o)).collect();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object_or_empty(list_meta),
        "items": items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::definition::KindDefinition;

    fn kind(columns: Vec<PrinterColumn>) -> ResolvedKind {
        let mut def: KindDefinition = serde_json::from_value(json!({
            "kind": "Postgres",
            "plural": "postgreses",
            "openAPISchema": {"type": "object"},
            "release": {"chart": {"name": "postgres", "sourceRef": {"kind": "HelmRepository", "name": "r"}}}
        }))
        .unwrap();
        def.printer_columns = columns;
        def.resolve("test").unwrap()
    }

    fn column(name: &str, type_: &str, path: &str, priority: i32) -> PrinterColumn {
        PrinterColumn {
            name: name.into(),
            type_: type_.into(),
            json_path: path.into(),
            priority,
            description: String::new(),
            format: String::new(),
        }
    }

    fn app(name: &str, ready: &str, created: &str) -> Value {
        json!({
            "apiVersion": "apps.cozystack.io/v1alpha1",
            "kind": "Postgres",
            "metadata": {"name": name, "namespace": "ns1", "creationTimestamp": created, "resourceVersion": "7"},
            "spec": {"replicas": 2, "ratio": 1.5, "items": [{"name": "x"}, {"name": "y"}], "tags": {"b": 1, "a": 2}},
            "status": {
                "version": "0.4.0",
                "conditions": [
                    {"type": "Released", "status": "True"},
                    {"type": "Ready", "status": ready, "message": "Release reconciliation succeeded"}
                ]
            }
        })
    }

    fn now() -> Timestamp {
        "2026-01-01T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn default_columns_with_filter_paths() {
        let k = kind(Vec::new()); // defaults: Ready, Version, Status, Age
        let a = app("pg1", "True", "2026-01-01T11:55:00Z");
        let b = app("pg2", "False", "2025-12-29T12:00:00Z");
        let table = build_table_with(
            &k,
            &[&a, &b],
            json!({"resourceVersion": "42"}),
            &TableOptions {
                now: Some(now()),
                ..TableOptions::default()
            },
        );
        assert_eq!(table["kind"], "Table");
        assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(table["metadata"], json!({"resourceVersion": "42"}));
        let defs = table["columnDefinitions"].as_array().unwrap();
        assert_eq!(
            defs[0],
            json!({"name": "Name", "type": "string", "format": "name", "description": NAME_COLUMN_DESCRIPTION, "priority": 0})
        );
        assert_eq!(
            defs[1],
            json!({"name": "Ready", "type": "string", "format": "", "description": "Whether the release is ready", "priority": 0})
        );
        assert_eq!(defs.len(), 5);
        assert_eq!(
            table["rows"][0]["cells"],
            json!([
                "pg1",
                "True",
                "0.4.0",
                "Release reconciliation succeeded",
                "5m"
            ])
        );
        assert_eq!(
            table["rows"][1]["cells"],
            json!([
                "pg2",
                "False",
                "0.4.0",
                "Release reconciliation succeeded",
                "3d"
            ])
        );
        assert_eq!(
            table["rows"][0]["object"],
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": a["metadata"]})
        );
    }

    /// A Table rendered from kept rows is byte for byte the one
    /// `build_table` gives, for every `includeObject`, ages as of the request.
    #[test]
    fn kept_rows_render_what_build_table_gives() {
        let k = kind(vec![
            column(
                "Ready",
                "string",
                ".status.conditions[?(@.type==\"Ready\")].status",
                0,
            ),
            column("Replicas", "integer", ".spec.replicas", 0),
            column("Ratio", "number", ".spec.ratio", 0),
            column("Tags", "string", ".spec.tags", 1),
            column("Missing", "string", ".status.nope", 0),
            column("Bool", "boolean", ".spec.replicas", 0),
            column("Broken", "string", ".spec[", 0),
            column("BadDate", "date", ".status.version", 0),
            column("NoDate", "date", ".spec.replicas", 0),
            column("Empty", "date", ".metadata.empty", 0),
            column("Age", "date", ".metadata.creationTimestamp", 0),
        ]);
        let mut odd = app("pg\"3", "False", "2020-02-29T00:00:00Z");
        odd["metadata"]["empty"] = json!("");
        odd["metadata"]["labels"] = json!({"a": "é\u{1}"});
        let apps = [
            app("pg1", "True", "2026-01-01T11:55:00Z"),
            app("pg2", "False", "2025-12-29T12:00:00Z"),
            odd,
            json!({"spec": {"replicas": 1}}),
        ];
        let views: Vec<AppView> = apps
            .iter()
            .map(|a| AppView {
                json: a.to_string().into_boxed_str(),
                table_row: std::sync::OnceLock::new(),
            })
            .collect();
        for include in [
            IncludeObject::Metadata,
            IncludeObject::None,
            IncludeObject::Object,
        ] {
            for later in [0, 3_600] {
                let at: Timestamp = now() + jiff::SignedDuration::from_secs(later);
                let list_meta = json!({"resourceVersion": "42", "continue": "x"});
                let mut bytes = table_head(&k, list_meta.clone());
                for (i, view) in views.iter().enumerate() {
                    if i > 0 {
                        bytes.push(b',');
                    }
                    render_row(kept_row(view, &k), &view.json, include, at, &mut bytes);
                }
                bytes.extend_from_slice(b"]}");
                let refs: Vec<&Value> = apps.iter().collect();
                let want = build_table_with(
                    &k,
                    &refs,
                    list_meta,
                    &TableOptions {
                        include_object: include,
                        now: Some(at),
                        ..TableOptions::default()
                    },
                );
                assert_eq!(
                    String::from_utf8(bytes).unwrap(),
                    serde_json::to_string(&want).unwrap(),
                    "{include:?} at +{later}s"
                );
            }
        }
        // Made once, kept after.
        assert!(std::ptr::eq(
            kept_row(&views[0], &k),
            kept_row(&views[0], &k)
        ));

        // JSON not in the kept (compact) form: the metadata is encoded per request.
        let pretty = serde_json::to_string_pretty(&apps[0]).unwrap();
        let row = new_row(&k, &pretty);
        assert!(row.metadata.is_none());
        let mut bytes = Vec::new();
        render_row(&row, &pretty, IncludeObject::Metadata, now(), &mut bytes);
        let rendered: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(rendered["object"]["metadata"], apps[0]["metadata"]);
    }

    #[test]
    fn typed_cells_and_missing_values() {
        let mut described = column("Replicas", "integer", ".spec.replicas", 0);
        described.description = "How many".into();
        let k = kind(vec![
            described,
            column("Ratio", "number", ".spec.ratio", 0),
            column("RatioInt", "integer", ".spec.ratio", 0),
            column("ReplicasNum", "number", ".spec.replicas", 0),
            column("First", "string", ".spec.items[*].name", 0),
            column("Third", "string", ".spec.items[2].name", 0),
            column("Tags", "string", ".spec.tags", 1),
            column("Missing", "string", ".status.nope", 0),
            column("Bool", "boolean", ".spec.replicas", 0),
            column("Broken", "string", ".spec[", 0),
            column("BadDate", "date", ".status.version", 0),
        ]);
        let a = app("pg1", "True", "2026-01-01T11:55:00Z");
        let table = build_table_with(
            &k,
            &[&a],
            json!({}),
            &TableOptions {
                include_object: IncludeObject::None,
                now: Some(now()),
                ..TableOptions::default()
            },
        );
        assert_eq!(
            table["rows"][0]["cells"],
            json!([
                "pg1",
                2,
                1.5,
                1,
                2,
                "x",
                null,
                "{\"a\":2,\"b\":1}",
                null,
                null,
                null,
                "<invalid>"
            ])
        );
        assert_eq!(table["rows"][0]["object"], Value::Null);
        let defs = &table["columnDefinitions"];
        assert_eq!(defs[1]["description"], "How many");
        assert_eq!(
            defs[2]["description"],
            "Custom resource definition column (in JSONPath format): .spec.ratio"
        );
        assert_eq!(defs[7]["priority"], 1);

        let narrow = build_table_with(
            &k,
            &[&a],
            Value::Null,
            &TableOptions {
                include_object: IncludeObject::Object,
                wide_columns_included: false,
                no_headers: true,
                now: Some(now()),
            },
        );
        assert_eq!(narrow["columnDefinitions"], Value::Null);
        assert_eq!(narrow["metadata"], json!({}));
        assert_eq!(
            narrow["rows"][0]["cells"].as_array().map(Vec::len),
            Some(11)
        );
        assert_eq!(narrow["rows"][0]["object"], a);
    }

    #[test]
    fn empty_table_has_rows_array() {
        let k = kind(Vec::new());
        let table = build_table(
            &k,
            &[],
            IncludeObject::Metadata,
            json!({"resourceVersion": "1"}),
            true,
        );
        assert_eq!(table["rows"], json!([]));
        assert_eq!(
            serde_json::to_string(&table)
                .unwrap()
                .find("\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\""),
            Some(1)
        );
    }

    #[test]
    fn human_readable_dates() {
        assert_eq!(human_readable_date("2026-01-01T08:40:00Z", now()), "3h20m");
        assert_eq!(human_readable_date("", now()), "<unknown>");
        assert_eq!(human_readable_date("yesterday", now()), "<invalid>");
        assert_eq!(
            human_readable_date("2026-01-01T13:00:00Z", now()),
            "<invalid>"
        );
        assert_eq!(
            human_readable_date("2026-01-01T11:59:58.5+00:00", now()),
            "1s"
        );
    }

    #[test]
    fn partial_metadata() {
        let a = app("pg1", "True", "2026-01-01T11:55:00Z");
        let p = partial_object_metadata(&a);
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            format!(
                "{{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{}}}",
                serde_json::to_string(&a["metadata"]).unwrap()
            )
        );
        assert_eq!(partial_object_metadata(&json!({}))["metadata"], json!({}));
        let list =
            partial_object_metadata_list(&[&a], json!({"resourceVersion": "9", "continue": "c"}));
        assert_eq!(list["kind"], "PartialObjectMetadataList");
        assert_eq!(
            list["metadata"],
            json!({"resourceVersion": "9", "continue": "c"})
        );
        assert_eq!(list["items"][0], p);
        assert_eq!(
            partial_object_metadata_list(&[], json!({}))["items"],
            json!([])
        );
    }
}
