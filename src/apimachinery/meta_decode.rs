//! An object's `metadata` decoded as kube-apiserver decodes a custom
//! resource's into `metav1.ObjectMeta` on create and update: the first
//! field of the wrong JSON type in `encoding/json`'s words (`json: cannot
//! unmarshal bool into Go struct field ObjectMeta.name of type string`), or
//! a timestamp's error, which stops the decoding at once (`parsing time
//! "yesterday" as "2006-01-02T15:04:05Z07:00": …`). kube-apiserver answers it 400 before
//! it looks for a name or compares the namespace with the URL's, so a
//! `"name": true` is not "name or generateName is required".
//!
//! The body was decoded into unstructured JSON and encoded again first, so
//! "first" is in the order of sorted keys, at every level; a number is
//! quoted as Go prints a float64 (`99999999999999999999` is
//! `100000000000000000000`), and one that is whole and fits decodes into
//! an `int64` whichever way it was written (`2.0`). `null` is the zero
//! value anywhere.

use serde_json::{Map, Value};

use crate::golang::json::value_kind;

/// What a field decodes into.
#[derive(Clone, Copy)]
enum Go {
    /// A string kind (`string`, `types.UID`).
    Str(&'static str),
    /// A `metav1.Time`: an RFC 3339 string.
    Time,
    Int64,
    Bool,
    /// `map[string]string`.
    StringMap,
    /// `[]string`.
    Strings,
    /// A slice of structs: the slice's and the element's Go names, and the
    /// element's fields.
    Structs(&'static str, &'static str, &'static str, Fields),
}

type Fields = &'static [(&'static str, Go)];

const OWNER_REFERENCE: Fields = &[
    ("apiVersion", Go::Str("string")),
    ("kind", Go::Str("string")),
    ("name", Go::Str("string")),
    ("uid", Go::Str("types.UID")),
    ("controller", Go::Bool),
    ("blockOwnerDeletion", Go::Bool),
];

const MANAGED_FIELDS_ENTRY: Fields = &[
    ("manager", Go::Str("string")),
    ("operation", Go::Str("v1.ManagedFieldsOperationType")),
    ("apiVersion", Go::Str("string")),
    ("time", Go::Time),
    ("fieldsType", Go::Str("string")),
    ("subresource", Go::Str("string")),
];

const OBJECT_META: Fields = &[
    ("name", Go::Str("string")),
    ("generateName", Go::Str("string")),
    ("namespace", Go::Str("string")),
    ("selfLink", Go::Str("string")),
    ("uid", Go::Str("types.UID")),
    ("resourceVersion", Go::Str("string")),
    ("generation", Go::Int64),
    ("creationTimestamp", Go::Time),
    ("deletionTimestamp", Go::Time),
    ("deletionGracePeriodSeconds", Go::Int64),
    ("labels", Go::StringMap),
    ("annotations", Go::StringMap),
    (
        "ownerReferences",
        Go::Structs(
            "[]v1.OwnerReference",
            "v1.OwnerReference",
            "OwnerReference",
            OWNER_REFERENCE,
        ),
    ),
    ("finalizers", Go::Strings),
    (
        "managedFields",
        Go::Structs(
            "[]v1.ManagedFieldsEntry",
            "v1.ManagedFieldsEntry",
            "ManagedFieldsEntry",
            MANAGED_FIELDS_ENTRY,
        ),
    ),
];

/// The decoding error of `metadata`, if it has one (a missing or `null`
/// metadata has none).
pub fn decode_error(metadata: &Value) -> Option<String> {
    match metadata {
        Value::Null => None,
        Value::Object(meta) => {
            let mut saved = None;
            match decode_fields(meta, OBJECT_META, "ObjectMeta", "", &mut saved) {
                Err(stopped) => Some(stopped),
                Ok(()) => saved,
            }
        }
        other => Some(format!(
            "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
            value_kind(other)
        )),
    }
}

/// Decodes `object`'s known fields in the order Go meets them (kube-apiserver
/// encodes the metadata again before it decodes it, which sorts the keys):
/// a type mismatch is saved in `saved` (the first one wins) and decoding
/// goes on, as `encoding/json` does; a timestamp's error stops it, as an
/// `UnmarshalJSON` error does. `strukt` is the Go struct's name and `path`
/// the fields leading to it (`ownerReferences.`).
fn decode_fields(
    object: &Map<String, Value>,
    fields: Fields,
    strukt: &str,
    path: &str,
    saved: &mut Option<String>,
) -> Result<(), String> {
    let mut keys: Vec<&String> = object.keys().collect();
    keys.sort();
    for key in keys {
        let Some((name, go)) = fields.iter().find(|(name, _)| name == key) else {
            continue;
        };
        let place = Place { strukt, path, name };
        decode_value(&object[key.as_str()], *go, &place, saved)?;
    }
    Ok(())
}

/// Where a field is, as Go's errors name it; its texts are made only for
/// an error (every create and update decodes its metadata here).
struct Place<'a> {
    /// The Go struct holding the field (`ObjectMeta`).
    strukt: &'a str,
    /// The fields leading to that struct (`ownerReferences.`).
    path: &'a str,
    /// The field's JSON name.
    name: &'a str,
}

impl Place<'_> {
    /// The error's `Struct.Field` (`OwnerReference.ownerReferences.name`).
    fn field(&self) -> String {
        format!("{}.{}{}", self.strukt, self.path, self.name)
    }

    /// The path to the fields of a struct held here (`ownerReferences.`).
    fn inner_path(&self) -> String {
        format!("{}{}.", self.path, self.name)
    }
}

/// Decodes `value` as `go` into the field at `place`. See [`decode_fields`]
/// for `saved` and the error.
fn decode_value(
    value: &Value,
    go: Go,
    place: &Place<'_>,
    saved: &mut Option<String>,
) -> Result<(), String> {
    let message = |what: &str, into: &str| {
        format!(
            "json: cannot unmarshal {what} into Go struct field {} of type {into}",
            place.field()
        )
    };
    let mut save = |what: &str, into: &str| {
        if saved.is_none() {
            *saved = Some(message(what, into));
        }
    };
    match (go, value) {
        (_, Value::Null) | (Go::Str(_), Value::String(_)) | (Go::Bool, Value::Bool(_)) => {}
        // `metav1.Time.UnmarshalJSON`: the text must be a string, and an
        // RFC 3339 time.
        (Go::Time, Value::String(text)) => {
            if let Some(error) = crate::golang::rfc3339::parse_error(text) {
                return Err(error);
            }
        }
        (Go::Time, other) => return Err(message(value_kind(other), "string")),
        (Go::Int64, Value::Number(n)) => {
            let whole = n.as_i64().is_some()
                || n.as_f64().is_some_and(|f| {
                    f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64
                });
            if !whole {
                let printed = crate::golang::json::marshal(&Value::Number(n.clone()));
                save(&format!("number {printed}"), "int64");
            }
        }
        (Go::StringMap, Value::Object(map)) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for key in keys {
                let v = &map[key.as_str()];
                if !matches!(v, Value::String(_) | Value::Null) {
                    save(value_kind(v), "string");
                }
            }
        }
        (Go::Strings, Value::Array(items)) => {
            for v in items {
                if !matches!(v, Value::String(_) | Value::Null) {
                    save(value_kind(v), "string");
                }
            }
        }
        (Go::Structs(_, element, strukt, fields), Value::Array(items)) => {
            let path = place.inner_path();
            for item in items {
                match item {
                    Value::Null => {}
                    Value::Object(object) => {
                        decode_fields(object, fields, strukt, &path, saved)?;
                    }
                    other => {
                        if saved.is_none() {
                            *saved = Some(message(value_kind(other), element));
                        }
                    }
                }
            }
        }
        (Go::Str(into), other) => save(value_kind(other), into),
        (Go::Int64, other) => save(value_kind(other), "int64"),
        (Go::Bool, other) => save(value_kind(other), "bool"),
        (Go::StringMap, other) => save(value_kind(other), "map[string]string"),
        (Go::Strings, other) => save(value_kind(other), "[]string"),
        (Go::Structs(slice, ..), other) => save(value_kind(other), slice),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// kube-apiserver's answers (after `cannot be handled as a Postgres: `)
    /// to a custom resource created with each metadata, from the local
    /// control plane (the differential test asks it again).
    #[test]
    fn errors_are_kube_apiservers() {
        let cases = [
            (
                json!({"name": true}),
                "json: cannot unmarshal bool into Go struct field ObjectMeta.name of type string",
            ),
            (
                json!({"generateName": 5}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.generateName of type string",
            ),
            (
                json!({"name": "p1", "namespace": [1]}),
                "json: cannot unmarshal array into Go struct field ObjectMeta.namespace of type string",
            ),
            (
                json!(5),
                "json: cannot unmarshal number into Go value of type v1.ObjectMeta",
            ),
            (
                json!([]),
                "json: cannot unmarshal array into Go value of type v1.ObjectMeta",
            ),
            (
                json!({"generation": 1.5}),
                "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64",
            ),
            (
                json!({"generation": 99_999_999_999_999_999_999.0}),
                "json: cannot unmarshal number 100000000000000000000 into Go struct field ObjectMeta.generation of type int64",
            ),
            (
                json!({"generation": "1"}),
                "json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64",
            ),
            (
                json!({"creationTimestamp": 5}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string",
            ),
            (
                json!({"uid": 5}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.uid of type types.UID",
            ),
            (
                json!({"labels": {"a": true}}),
                "json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type string",
            ),
            (
                json!({"annotations": "x"}),
                "json: cannot unmarshal string into Go struct field ObjectMeta.annotations of type map[string]string",
            ),
            (
                json!({"finalizers": "zz"}),
                "json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string",
            ),
            (
                json!({"finalizers": [1]}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string",
            ),
            (
                json!({"ownerReferences": {}}),
                "json: cannot unmarshal object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference",
            ),
            (
                json!({"ownerReferences": [5]}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.ownerReferences of type v1.OwnerReference",
            ),
            (
                json!({"ownerReferences": [{"name": 5}]}),
                "json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.name of type string",
            ),
            (
                json!({"ownerReferences": [{"controller": "yes"}]}),
                "json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool",
            ),
            (
                json!({"managedFields": "x"}),
                "json: cannot unmarshal string into Go struct field ObjectMeta.managedFields of type []v1.ManagedFieldsEntry",
            ),
            (
                json!({"managedFields": [{"manager": 5}]}),
                "json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.manager of type string",
            ),
            (
                json!({"deletionGracePeriodSeconds": "5"}),
                "json: cannot unmarshal string into Go struct field ObjectMeta.deletionGracePeriodSeconds of type int64",
            ),
        ];
        for (meta, want) in cases {
            assert_eq!(decode_error(&meta).as_deref(), Some(want), "{meta}");
        }
    }

    #[test]
    fn well_typed_metadata_and_nulls_decode() {
        for meta in [
            json!(null),
            json!({}),
            json!({"name": "a", "generation": 2.0, "labels": {"a": null}, "finalizers": [null],
                   "ownerReferences": [null, {"name": "o", "controller": true, "zz": 1}],
                   "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}],
                   "unknown": 5, "creationTimestamp": "2026-12-06T03:00:00Z"}),
        ] {
            assert_eq!(decode_error(&meta), None, "{meta}");
        }
    }

    #[test]
    fn the_first_wrong_field_in_sorted_order_is_named_and_a_time_stops_the_rest() {
        let first = |text: &str| {
            let meta: Value = serde_json::from_str(text).unwrap();
            decode_error(&meta).unwrap()
        };
        assert!(first(r#"{"name": true, "generateName": 5}"#).contains("ObjectMeta.generateName"));
        assert!(first(r#"{"labels": {"b": 1, "a": true}}"#).contains("unmarshal bool"));
        assert!(
            first(r#"{"ownerReferences": [{"name": 5, "controller": "yes"}]}"#)
                .contains("OwnerReference.ownerReferences.controller")
        );
        assert!(
            first(r#"{"annotations": "x", "creationTimestamp": 5}"#)
                .contains("ObjectMeta.creationTimestamp of type string")
        );
        assert!(
            first(r#"{"zz": 1, "name": 5, "deletionTimestamp": "soon"}"#)
                .starts_with("parsing time \"soon\"")
        );
        assert!(
            first(r#"{"managedFields": [{"time": "now", "manager": 5}]}"#)
                .starts_with("parsing time \"now\"")
        );
    }
}
