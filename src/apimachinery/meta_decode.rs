//! Objects decoded as kube-apiserver decodes them into Go structs, for
//! their decoding errors: a custom resource's `metadata` into
//! `metav1.ObjectMeta` on create and update ([`decode_error`]), and a whole
//! `Namespace` into `core/v1.Namespace` for the standalone server
//! ([`namespace_decode_error`]). The error is the first field of the wrong
//! JSON type in `encoding/json`'s words (`json: cannot unmarshal bool into
//! Go struct field ObjectMeta.name of type string`; from a Namespace,
//! `ObjectMeta.metadata.name`), or a timestamp's error, which stops the
//! decoding at once (`parsing time "yesterday" as
//! "2006-01-02T15:04:05Z07:00": …`). kube-apiserver answers it 400 before
//! it looks for a name or compares the namespace with the URL's, so a
//! `"name": true` is not "name or generateName is required".
//!
//! "First" depends on the [`Text`] decoded: a custom resource's metadata
//! (and a patched object) was decoded into unstructured JSON and encoded
//! again, so its keys are met sorted, at every level, a number is quoted as
//! Go prints a float64 (`99999999999999999999` is `100000000000000000000`),
//! and one that is whole and fits decodes into an `int64` whichever way it
//! was written (`2.0`); a built-in kind's body is decoded as sent. `null` is
//! the zero value anywhere.

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
    /// A slice of a string kind: the slice's and the element's Go names
    /// (`[]string`, `string`).
    Strings(&'static str, &'static str),
    /// A struct: its Go type's and its own name (`v1.ObjectMeta`,
    /// `ObjectMeta`), and its fields.
    Struct(&'static str, &'static str, Fields),
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
    ("finalizers", Go::Strings("[]string", "string")),
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

const NAMESPACE_CONDITION: Fields = &[
    ("type", Go::Str("v1.NamespaceConditionType")),
    ("status", Go::Str("v1.ConditionStatus")),
    ("lastTransitionTime", Go::Time),
    ("reason", Go::Str("string")),
    ("message", Go::Str("string")),
];

/// `core/v1.Namespace`.
const NAMESPACE: Fields = &[
    ("kind", Go::Str("string")),
    ("apiVersion", Go::Str("string")),
    (
        "metadata",
        Go::Struct("v1.ObjectMeta", "ObjectMeta", OBJECT_META),
    ),
    (
        "spec",
        Go::Struct(
            "v1.NamespaceSpec",
            "NamespaceSpec",
            &[(
                "finalizers",
                Go::Strings("[]v1.FinalizerName", "v1.FinalizerName"),
            )],
        ),
    ),
    (
        "status",
        Go::Struct(
            "v1.NamespaceStatus",
            "NamespaceStatus",
            &[
                ("phase", Go::Str("v1.NamespacePhase")),
                (
                    "conditions",
                    Go::Structs(
                        "[]v1.NamespaceCondition",
                        "v1.NamespaceCondition",
                        "NamespaceCondition",
                        NAMESPACE_CONDITION,
                    ),
                ),
            ],
        ),
    ),
];

/// The JSON text Go decodes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Text {
    /// The request's body itself (a built-in kind's create or update): keys
    /// in its order, numbers as written (`2.0` is no `int64`; quoted as
    /// serde_json prints them, which keeps no number's text: `1e3` is
    /// `1000.0` where Go says `1e3`).
    Body,
    /// JSON that kube-apiserver encoded from a map first (a custom
    /// resource's metadata, a patched object): keys sorted at every level,
    /// numbers as Go prints a float64 (`2.0` is `2`).
    Reencoded,
}

/// The decoding error of a custom resource's `metadata`, if it has one (a
/// missing or `null` metadata has none). kube-apiserver decodes it alone,
/// from keys it sorted.
pub fn decode_error(metadata: &Value) -> Option<String> {
    match metadata {
        Value::Null => None,
        Value::Object(meta) => {
            Decoder::new(Text::Reencoded).fields(meta, OBJECT_META, "ObjectMeta", "")
        }
        other => Some(format!(
            "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
            value_kind(other)
        )),
    }
}

/// The decoding error of a whole `Namespace` (kube-apiserver decodes the
/// built-in kind into its Go struct: `ObjectMeta.metadata.name`,
/// `NamespaceSpec.spec.finalizers`), if it has one; `object` is a JSON
/// object.
pub fn namespace_decode_error(object: &Map<String, Value>, text: Text) -> Option<String> {
    Decoder::new(text).fields(object, NAMESPACE, "Namespace", "")
}

/// One decoding: the text decoded, and the first type mismatch met, which
/// Go saves and reports once the decoding ends.
struct Decoder {
    text: Text,
    saved: Option<String>,
}

impl Decoder {
    fn new(text: Text) -> Self {
        Self { text, saved: None }
    }

    /// Decodes `object` as the struct `strukt`: the error, if any.
    fn fields(
        &mut self,
        object: &Map<String, Value>,
        fields: Fields,
        strukt: &str,
        path: &str,
    ) -> Option<String> {
        match self.decode_fields(object, fields, strukt, path) {
            Err(stopped) => Some(stopped),
            Ok(()) => self.saved.take(),
        }
    }

    /// `object`'s keys in the order Go meets them.
    fn keys<'a>(&self, object: &'a Map<String, Value>) -> Vec<&'a String> {
        let mut keys: Vec<&String> = object.keys().collect();
        if self.text == Text::Reencoded {
            keys.sort();
        }
        keys
    }

    /// Decodes `object`'s known fields in the order Go meets them: a type
    /// mismatch is saved (the first one wins) and decoding goes on, as
    /// `encoding/json` does; a timestamp's error stops it, as an
    /// `UnmarshalJSON` error does. `strukt` is the Go struct's name and
    /// `path` the fields leading to it (`ownerReferences.`).
    fn decode_fields(
        &mut self,
        object: &Map<String, Value>,
        fields: Fields,
        strukt: &str,
        path: &str,
    ) -> Result<(), String> {
        for key in self.keys(object) {
            let Some((name, go)) = fields.iter().find(|(name, _)| name == key) else {
                continue;
            };
            let place = Place { strukt, path, name };
            self.decode_value(&object[key.as_str()], *go, &place)?;
        }
        Ok(())
    }

    /// Keeps the first type mismatch.
    fn save(&mut self, message: impl FnOnce() -> String) {
        if self.saved.is_none() {
            self.saved = Some(message());
        }
    }

    /// Decodes `value` as `go` into the field at `place`. See
    /// [`Self::decode_fields`] for the error.
    fn decode_value(&mut self, value: &Value, go: Go, place: &Place<'_>) -> Result<(), String> {
        let message = |what: &str, into: &str| {
            format!(
                "json: cannot unmarshal {what} into Go struct field {} of type {into}",
                place.field()
            )
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
                    || self.text == Text::Reencoded
                        && n.as_f64().is_some_and(|f| {
                            f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64
                        });
                if !whole {
                    let printed = match self.text {
                        Text::Reencoded => crate::golang::json::marshal(&Value::Number(n.clone())),
                        Text::Body => n.to_string(),
                    };
                    self.save(|| message(&format!("number {printed}"), "int64"));
                }
            }
            (Go::StringMap, Value::Object(map)) => {
                for key in self.keys(map) {
                    let v = &map[key.as_str()];
                    if !matches!(v, Value::String(_) | Value::Null) {
                        self.save(|| message(value_kind(v), "string"));
                    }
                }
            }
            (Go::Strings(_, element), Value::Array(items)) => {
                for v in items {
                    if !matches!(v, Value::String(_) | Value::Null) {
                        self.save(|| message(value_kind(v), element));
                    }
                }
            }
            (Go::Struct(_, strukt, fields), Value::Object(object)) => {
                self.decode_fields(object, fields, strukt, &place.inner_path())?;
            }
            (Go::Structs(_, element, strukt, fields), Value::Array(items)) => {
                let path = place.inner_path();
                for item in items {
                    match item {
                        Value::Null => {}
                        Value::Object(object) => {
                            self.decode_fields(object, fields, strukt, &path)?
                        }
                        other => self.save(|| message(value_kind(other), element)),
                    }
                }
            }
            (Go::Str(into), other) => self.save(|| message(value_kind(other), into)),
            (Go::Int64, other) => self.save(|| message(value_kind(other), "int64")),
            (Go::Bool, other) => self.save(|| message(value_kind(other), "bool")),
            (Go::StringMap, other) => {
                self.save(|| message(value_kind(other), "map[string]string"));
            }
            (Go::Strings(slice, _), other) => self.save(|| message(value_kind(other), slice)),
            (Go::Struct(go_type, ..), other) => self.save(|| message(value_kind(other), go_type)),
            (Go::Structs(slice, ..), other) => self.save(|| message(value_kind(other), slice)),
        }
        Ok(())
    }
}

/// Where a field is, as Go's errors name it; its texts are made only for
/// an error (every create and update decodes its metadata here).
struct Place<'a> {
    /// The Go struct holding the field (`ObjectMeta`).
    strukt: &'a str,
    /// The fields leading to that struct from the decoded value
    /// (`ownerReferences.`).
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

    /// kube-apiserver's answers to a Namespace created with each body (the
    /// differential test asks it again).
    #[test]
    fn a_namespace_decodes_as_its_go_struct_in_the_bodys_order() {
        let error = |text: &str, typed: Text| {
            let object: Value = serde_json::from_str(text).unwrap();
            namespace_decode_error(object.as_object().unwrap(), typed)
        };
        let body = |text: &str| error(text, Text::Body).unwrap();
        assert_eq!(
            body(r#"{"metadata": {"name": true}}"#),
            "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.name of type string"
        );
        assert_eq!(
            body(r#"{"metadata": 5}"#),
            "json: cannot unmarshal number into Go struct field Namespace.metadata of type v1.ObjectMeta"
        );
        assert_eq!(
            body(r#"{"spec": {"finalizers": [1]}}"#),
            "json: cannot unmarshal number into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName"
        );
        assert_eq!(
            body(r#"{"metadata": {"ownerReferences": [{"name": 5}]}}"#),
            "json: cannot unmarshal number into Go struct field OwnerReference.metadata.ownerReferences.name of type string"
        );
        assert_eq!(
            body(r#"{"status": {"conditions": [{"lastTransitionTime": "now"}]}}"#),
            "parsing time \"now\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"now\" as \"2006\""
        );
        // The body's order, or sorted when encoded again; `2.0` only as written.
        let both = r#"{"metadata": {"labels": {"a": 1}, "finalizers": "x"}}"#;
        assert!(body(both).contains("ObjectMeta.metadata.labels of type string"));
        let sorted = error(both, Text::Reencoded).unwrap();
        assert!(sorted.contains("ObjectMeta.metadata.finalizers of type []string"));
        let two = r#"{"metadata": {"generation": 2.0}}"#;
        assert!(
            body(two).contains("number 2.0 into Go struct field ObjectMeta.metadata.generation")
        );
        assert_eq!(error(two, Text::Reencoded), None);
        let fine = r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"},
                       "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}"#;
        assert_eq!(error(fine, Text::Body), None);
    }
}
