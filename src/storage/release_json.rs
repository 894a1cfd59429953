//! A HelmRelease's JSON parsed into a `Value` the way the cache keeps it,
//! in one pass ([`Release`]): `metadata.managedFields` is skipped while
//! parsing (kube-apiserver's record of the HelmRelease's own field owners
//! is about as large as the rest of the object, and nothing here reads it),
//! so is every field of `spec` but `values` (the chart and the Helm knobs
//! come from the kind's definition; the cache keeps only the values), and
//! `apiVersion` and `kind` are filled in when an object leaves them out.
//! The deleted objects of watch events and the answers to deletes come this
//! way; changed objects, list items and the answers to creates and updates
//! are kept straight from their text without a `Value`
//! ([`super::kept_text`], the same object).
//!
//! Writes built from a kept object send no `managedFields`, which leaves
//! the HelmRelease's as they are upstream.
//!
//! A watch event's changed object is first kept as its text
//! ([`ReleaseText`]) with only its key and resourceVersion read: the cache
//! keeps it only when it does not already hold that version, which it does
//! for every write made through the server (taken from the write's answer,
//! see [`super::cache::WatchCache::take_kept_write`]). That event arrives
//! while the write's answer is being turned into the client's response, so
//! reading it again competed with the response for the same two cores.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::helm_release::HELMRELEASE_API_VERSION;
use super::key::Key;

/// A HelmRelease (or a `Status` answer) without `metadata.managedFields`
/// and with only `values` of its `spec`, with its type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Release(pub(crate) Value);

impl<'de> Deserialize<'de> for Release {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Release, D::Error> {
        let mut object = deserializer.deserialize_map(ObjectVisitor)?;
        if !object.contains_key("apiVersion") {
            object.insert("apiVersion".into(), HELMRELEASE_API_VERSION.into());
            object.insert("kind".into(), "HelmRelease".into());
        }
        Ok(Release(Value::Object(object)))
    }
}

/// A HelmRelease as upstream's JSON text, with the fields read that decide
/// whether it needs parsing at all: its key and resourceVersion.
#[derive(Debug)]
pub struct ReleaseText {
    /// Its namespace and name, as the cache keys it ([`Key::of`] of the
    /// parsed object: empty where missing or not a string).
    pub key: Key,
    /// `metadata.resourceVersion` (0 when missing or not a number).
    pub resource_version: u64,
    text: Box<RawValue>,
}

/// A watch event's object as its JSON text. Read straight from the line
/// when the object follows the event's `type`, as kube-apiserver writes
/// every event; serde buffers an object that comes first (an adjacently
/// tagged enum's content before its tag), and a buffered object cannot be
/// read as text, so that one is parsed and encoded again instead of
/// refused.
#[derive(Debug, Clone)]
pub struct ObjectText(pub Box<RawValue>);

/// serde_json's name for a raw value: asked for under it, its deserializer
/// hands over the text. Any other deserializer (serde's buffer) gives the
/// value itself, which [`ObjectText`] then encodes.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

impl<'de> Deserialize<'de> for ObjectText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ObjectText, D::Error> {
        deserializer.deserialize_newtype_struct(RAW_VALUE_TOKEN, ObjectTextVisitor)
    }
}

struct ObjectTextVisitor;

impl<'de> Visitor<'de> for ObjectTextVisitor {
    type Value = ObjectText;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    /// serde_json's raw value: the text, through `RawValue`'s own visitor.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjectText, A::Error> {
        Box::<RawValue>::deserialize(de::value::MapAccessDeserializer::new(map)).map(ObjectText)
    }

    /// Any other deserializer: the value, encoded.
    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<ObjectText, D::Error> {
        let value = Value::deserialize(deserializer)?;
        serde_json::value::to_raw_value(&value)
            .map(ObjectText)
            .map_err(de::Error::custom)
    }
}

/// What [`ReleaseText`] reads of an object: `metadata`'s identity fields,
/// every other field skipped unparsed.
#[derive(serde::Deserialize)]
struct Identity {
    #[serde(default)]
    metadata: Option<IdentityMeta>,
}

/// Each field as any JSON: one that is not a string reads as empty, as
/// [`super::key::Key::of`] and [`super::resource_version`] read it from a
/// parsed object.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct IdentityMeta {
    #[serde(default)]
    namespace: Value,
    #[serde(default)]
    name: Value,
    #[serde(default)]
    resource_version: Value,
}

impl ReleaseText {
    /// Reads `text`'s identity. Fails only where [`ReleaseText::keep`]
    /// would fail too (a `metadata`, or the whole text, that is neither an
    /// object nor an array): no event that parses is refused here.
    pub fn new(text: Box<RawValue>) -> Result<ReleaseText, serde_json::Error> {
        let meta = serde_json::from_str::<Identity>(text.get())?.metadata;
        let (key, resource_version) = meta.map_or_else(Default::default, |m| {
            (
                Key::new(
                    m.namespace.as_str().unwrap_or_default(),
                    m.name.as_str().unwrap_or_default(),
                ),
                m.resource_version
                    .as_str()
                    .and_then(|rv| rv.parse().ok())
                    .unwrap_or(0),
            )
        });
        Ok(ReleaseText {
            key,
            resource_version,
            text,
        })
    }

    /// The object kept as the cache keeps it, made straight from the text
    /// ([`super::cache::Stored::from_text`]).
    pub fn keep(&self) -> Result<super::cache::Stored, serde_json::Error> {
        super::cache::Stored::from_text(self.text.get()).map(|(_, stored)| stored)
    }
}

/// The top level: every field as it is, `metadata` through [`METADATA`]
/// and `spec` through [`AnySpec`].
struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match key.as_str() {
                "metadata" => map.next_value_seed(METADATA)?,
                "spec" => map.next_value_seed(AnySpec)?,
                _ => map.next_value::<Value>()?,
            };
            object.insert(key, value);
        }
        Ok(object)
    }
}

/// An object of which only the fields `keep` accepts are parsed (the
/// others are skipped unparsed), or `null`: `metadata` and `spec`.
#[derive(Clone, Copy)]
struct KeptFields {
    what: &'static str,
    keep: fn(&str) -> bool,
}

/// `metadata`, without `managedFields`.
const METADATA: KeptFields = KeptFields {
    what: "object metadata",
    keep: |key| key != "managedFields",
};

/// `spec`, of which only `values` is kept.
const SPEC: KeptFields = KeptFields {
    what: "a HelmRelease spec",
    keep: |key| key == "values",
};

impl<'de> DeserializeSeed<'de> for KeptFields {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeptFields {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut kept = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if (self.keep)(&key) {
                let value = map.next_value::<Value>()?;
                kept.insert(key, value);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Value::Object(kept))
    }
}

/// [`SPEC`], except that a spec that is not an object (which the
/// HelmRelease schema forbids) is kept as it is rather than failing the
/// whole event or page.
#[derive(Clone, Copy)]
struct AnySpec;

impl<'de> DeserializeSeed<'de> for AnySpec {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AnySpec {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        SPEC.expecting(f)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Value::deserialize(de::value::SeqAccessDeserializer::new(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        SPEC.visit_map(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Value {
        serde_json::from_str::<Release>(&v.to_string()).unwrap().0
    }

    #[test]
    fn managed_fields_and_spec_knobs_are_skipped_and_the_rest_kept_in_order() {
        let kept = parse(json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {
                "name": "postgres-db", "namespace": "t", "resourceVersion": "7",
                "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}],
                "labels": {"a": "b"}
            },
            "spec": {"interval": "5m", "values": {"replicas": 2, "nested": {"list": [1, null]}},
                     "chart": {"spec": {"chart": "postgres"}}, "maxHistory": 5},
            "status": {}
        }));
        assert_eq!(
            kept.to_string(),
            r#"{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"postgres-db","namespace":"t","resourceVersion":"7","labels":{"a":"b"}},"spec":{"values":{"replicas":2,"nested":{"list":[1,null]}}},"status":{}}"#
        );
    }

    #[test]
    fn the_type_is_filled_in_and_a_status_left_as_it_is() {
        let item = parse(json!({"metadata": {"name": "x"}, "spec": {}}));
        assert_eq!(item["apiVersion"], HELMRELEASE_API_VERSION);
        assert_eq!(item["kind"], "HelmRelease");
        let status =
            json!({"apiVersion": "v1", "kind": "Status", "status": "Success", "metadata": {}});
        assert_eq!(parse(status.clone()), status);
        assert_eq!(parse(json!({"metadata": null}))["metadata"], Value::Null);
        assert_eq!(parse(json!({"spec": null}))["spec"], Value::Null);
        assert_eq!(parse(json!({"spec": {}}))["spec"], json!({}));
        // A spec the schema forbids is kept as it is, not an error.
        for spec in [
            json!([1, {"a": "b"}]),
            json!("x"),
            json!(-1),
            json!(2.5),
            json!(true),
        ] {
            assert_eq!(parse(json!({"spec": spec}))["spec"], spec);
        }
    }

    #[test]
    fn a_watch_events_object_is_kept_as_text_in_either_order() {
        use kube::api::WatchEvent;
        let object = r#"{"metadata": {"name": "a", "resourceVersion": "5"},  "spec": {"values": {"x": 1e3}}}"#;
        // kube-apiserver's order: the text as it is, spacing and all.
        let line = format!(r#"{{"type":"ADDED","object":{object}}}"#);
        let WatchEvent::Added(ObjectText(text)) = serde_json::from_str(&line).unwrap() else {
            panic!("an ADDED event");
        };
        assert_eq!(text.get(), object);
        // The object first: buffered by serde, encoded again, same value.
        let line = format!(r#"{{"object":{object},"type":"MODIFIED"}}"#);
        let WatchEvent::Modified(ObjectText(text)) = serde_json::from_str(&line).unwrap() else {
            panic!("a MODIFIED event");
        };
        let released = ReleaseText::new(text).unwrap();
        assert_eq!((released.key.name(), released.resource_version), ("a", 5));
        assert_eq!(
            released.keep().unwrap().value(),
            parse(serde_json::from_str(object).unwrap())
        );
    }

    fn text(json: &str) -> Result<ReleaseText, serde_json::Error> {
        ReleaseText::new(serde_json::from_str::<Box<RawValue>>(json).unwrap())
    }

    #[test]
    fn a_release_text_reads_its_identity_and_parses_as_a_release() {
        let object = json!({
            "kind": "HelmRelease", "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "spec": {"values": {"name": "not this one"}, "interval": "5m"},
            "metadata": {"labels": {"name": "nor this"}, "namespace": "t",
                         "managedFields": [{"manager": "m"}], "name": "postgres-db",
                         "resourceVersion": "42"},
            "status": {"observedGeneration": 1}
        });
        let released = text(&object.to_string()).unwrap();
        assert_eq!(
            (
                released.key.namespace(),
                released.key.name(),
                released.resource_version
            ),
            ("t", "postgres-db", 42)
        );
        assert_eq!(released.keep().unwrap().value(), parse(object));

        let bare = text(r#"{"metadata": null}"#).unwrap();
        assert_eq!((bare.key.name(), bare.resource_version), ("", 0));
        let odd = text(r#"{"metadata": {"name": "x", "resourceVersion": "v1"}}"#).unwrap();
        assert_eq!((odd.key.name(), odd.resource_version), ("x", 0));
        let odder =
            text(r#"{"metadata": {"name": 3, "namespace": ["t"], "resourceVersion": 4}}"#).unwrap();
        assert_eq!(
            (
                odder.key.namespace(),
                odder.key.name(),
                odder.resource_version
            ),
            ("", "", 0)
        );
    }

    #[test]
    fn a_release_text_is_refused_only_where_a_release_is() {
        for refused in ["7", r#""x""#, r#"{"metadata": 3}"#, r#"{"metadata": "x"}"#] {
            assert!(text(refused).is_err(), "{refused}");
            assert!(
                serde_json::from_str::<Release>(refused).is_err(),
                "{refused}"
            );
        }
        // Its reading is the more lenient one: keeping refuses these.
        for lenient in ["[]", r#"{"metadata": [1]}"#] {
            assert!(text(lenient).unwrap().keep().is_err(), "{lenient}");
        }
    }

    #[test]
    fn what_is_not_an_object_is_refused() {
        assert!(serde_json::from_str::<Release>("[]").is_err());
        assert!(serde_json::from_str::<Release>(r#"{"metadata": 3}"#).is_err());
        assert!(serde_json::from_str::<Release>(r#"{"metadata": {"name": "x"#).is_err());
    }
}
