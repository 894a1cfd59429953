//! Upstream's HelmRelease JSON made into what the cache keeps of it
//! ([`super::cache::Stored`]) in one pass over borrowed slices of the text
//! ([`super::json_slices`]): every field as it is, but
//! `metadata.managedFields` left out and of `spec` only `values`, and
//! `apiVersion` and `kind` filled in when upstream leaves them out (the
//! items of a list). The same object [`super::release_json::Release`]
//! parses into a `Value` and [`super::cache::Stored::new`] encodes, made
//! without building the `Value`: the answers to the server's writes, the
//! watch events of changed objects and the items of the cache's list all
//! come this way, and a parse of a 2.5 KB HelmRelease into a `Value` took
//! about as long as the rest of a write's own work.
//!
//! The fields a scan checks without parsing are read on the way: the
//! object's key, resourceVersion and kind label, and for the answer to a
//! delete whether it has a `spec` and finalizers.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::app_text::ReleaseParts;
use super::helm_release::{HELMRELEASE_API_VERSION, KIND_LABEL};
use super::json_slices::{
    BorrowedKey, Members, ObjectOf, ObjectWriter, entries, is_object, raw_str, read_object,
};
use super::key::Key;

/// A HelmRelease as the cache keeps it, made from its text.
#[derive(Debug)]
pub(crate) struct KeptText {
    /// The kept JSON.
    pub(crate) json: Box<str>,
    /// Its namespace and name (empty where missing or not a string, as
    /// [`Key::of`] reads them).
    pub(crate) key: Key,
    /// `metadata.resourceVersion` (0 when missing or not a number).
    pub(crate) resource_version: u64,
    /// The app kind label, if any.
    pub(crate) kind_label: Option<Box<str>>,
    /// Whether the object has a `spec` (upstream's answer to a delete may
    /// be a `Status` instead of the release).
    pub(crate) has_spec: bool,
    /// Whether `metadata.finalizers` lists any (a deleted release they
    /// hold is still there, marked for deletion).
    pub(crate) has_finalizers: bool,
}

/// What [`keep`] reads of `metadata` on the way.
#[derive(Default)]
struct Identity<'a> {
    namespace: Option<&'a RawValue>,
    name: Option<&'a RawValue>,
    resource_version: Option<&'a RawValue>,
    labels: Option<&'a RawValue>,
    finalizers: Option<&'a RawValue>,
}

/// Keeps the HelmRelease `text` (see the module documentation). Fails when
/// `text` is not a JSON object, or its `metadata` is neither an object nor
/// `null`, as [`super::release_json::Release`] fails.
pub(crate) fn keep(text: &str) -> Result<KeptText, serde_json::Error> {
    keep_reading(text, None)
}

/// [`keep`], and on the way the parts of the release its app is made of
/// into `parts` ([`super::app_text`]): upstream's answer to a write is
/// read once for what the cache keeps and for the answer's app.
pub(crate) fn keep_with_parts<'a>(
    text: &'a str,
    parts: &mut ReleaseParts<'a>,
) -> Result<KeptText, serde_json::Error> {
    keep_reading(text, Some(parts))
}

fn keep_reading<'a>(
    text: &'a str,
    parts: Option<&mut ReleaseParts<'a>>,
) -> Result<KeptText, serde_json::Error> {
    let mut identity = Identity::default();
    let mut has_spec = false;
    let json = super::helm_release::exact_json(|out| {
        let mut top = TopLevel {
            object: ObjectWriter::new(out),
            identity: &mut identity,
            parts,
            has_api_version: false,
            has_kind: false,
            has_spec: false,
        };
        read_object(text, &mut top)?;
        has_spec = top.has_spec;
        let TopLevel {
            mut object,
            has_api_version,
            has_kind,
            ..
        } = top;
        if !has_api_version {
            object.str("apiVersion", HELMRELEASE_API_VERSION);
            if !has_kind {
                object.str("kind", "HelmRelease");
            }
        }
        object.end();
        Ok::<_, serde_json::Error>(())
    })?;
    fn read_str(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
        raw.and_then(raw_str)
    }
    let key = Key::new(
        &read_str(identity.namespace).unwrap_or_default(),
        &read_str(identity.name).unwrap_or_default(),
    );
    let resource_version = read_str(identity.resource_version)
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0);
    let mut kind_label = None;
    if let Some(labels) = identity.labels.filter(|l| is_object(l)) {
        entries(labels.get(), |key, value| {
            if key == KIND_LABEL {
                kind_label = raw_str(value).map(|k| k.into());
            }
        })?;
    }
    Ok(KeptText {
        json,
        key,
        resource_version,
        kind_label,
        has_spec,
        has_finalizers: identity.finalizers.is_some_and(is_non_empty_array),
    })
}

/// Whether `raw` is an array with an item.
fn is_non_empty_array(raw: &RawValue) -> bool {
    raw.get()
        .trim_start()
        .strip_prefix('[')
        .is_some_and(|items| !items.trim_start().starts_with(']'))
}

/// The release's fields: `metadata` and `spec` kept through their own
/// readers, the others as they are.
struct TopLevel<'a, 'o, 'r> {
    object: ObjectWriter<'o>,
    identity: &'r mut Identity<'a>,
    parts: Option<&'r mut ReleaseParts<'a>>,
    has_api_version: bool,
    has_kind: bool,
    has_spec: bool,
}

impl<'a> Members<'a> for TopLevel<'a, '_, '_> {
    fn member<A: MapAccess<'a>>(&mut self, key: Cow<'a, str>, map: &mut A) -> Result<(), A::Error> {
        match &*key {
            "metadata" => {
                let mut metadata = Metadata {
                    object: ObjectWriter::deferred(self.object.key("metadata")),
                    identity: self.identity,
                    parts: self.parts.as_deref_mut(),
                };
                let is_object = map.next_value_seed(ObjectOf(&mut metadata))?;
                if is_object {
                    metadata.object.end();
                } else {
                    metadata.object.null();
                }
            }
            "spec" => {
                self.has_spec = true;
                map.next_value_seed(Spec {
                    out: self.object.key("spec"),
                    parts: self.parts.as_deref_mut(),
                })?
            }
            _ => {
                let value: &'a RawValue = map.next_value()?;
                self.has_api_version |= key == "apiVersion";
                self.has_kind |= key == "kind";
                if key == "status"
                    && let Some(parts) = self.parts.as_deref_mut()
                {
                    parts.read_status(value);
                }
                self.object.raw(&key, value);
            }
        }
        Ok(())
    }
}

/// `metadata` without `managedFields`, its identity read on the way.
struct Metadata<'a, 'o, 'r> {
    object: ObjectWriter<'o>,
    identity: &'r mut Identity<'a>,
    parts: Option<&'r mut ReleaseParts<'a>>,
}

impl<'a> Members<'a> for Metadata<'a, '_, '_> {
    fn member<A: MapAccess<'a>>(&mut self, key: Cow<'a, str>, map: &mut A) -> Result<(), A::Error> {
        if key == "managedFields" {
            map.next_value::<IgnoredAny>()?;
            return Ok(());
        }
        let value: &'a RawValue = map.next_value()?;
        match &*key {
            "namespace" => self.identity.namespace = Some(value),
            "name" => self.identity.name = Some(value),
            "resourceVersion" => self.identity.resource_version = Some(value),
            "labels" => self.identity.labels = Some(value),
            "finalizers" => self.identity.finalizers = Some(value),
            _ => {}
        }
        if let Some(parts) = self.parts.as_deref_mut() {
            parts.metadata_member(&key, value);
        }
        self.object.raw(&key, value);
        Ok(())
    }
}

/// A `spec` object kept as `{"values": …}`, or `{}` without values. A
/// `spec` that is not an object (which the HelmRelease schema forbids) is
/// kept as it is.
struct Spec<'o, 'a, 'r> {
    out: &'o mut Vec<u8>,
    parts: Option<&'r mut ReleaseParts<'a>>,
}

impl<'a> DeserializeSeed<'a> for Spec<'_, 'a, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'a> Visitor<'a> for Spec<'_, 'a, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a HelmRelease spec")
    }

    fn visit_map<A: MapAccess<'a>>(self, mut map: A) -> Result<(), A::Error> {
        let mut object = ObjectWriter::new(self.out);
        let mut parts = self.parts;
        while let Some(BorrowedKey(key)) = map.next_key()? {
            if key == "values" {
                let values: &'a RawValue = map.next_value()?;
                if let Some(parts) = parts.as_deref_mut() {
                    parts.spec_values(values);
                }
                object.raw("values", values);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        object.end();
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        write_value(self.out, v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        write_value(self.out, v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        write_value(self.out, v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        write_value(self.out, v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        write_value(self.out, v)
    }

    fn visit_seq<A: de::SeqAccess<'a>>(self, seq: A) -> Result<(), A::Error> {
        let value = serde_json::Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        write_value(self.out, value)
    }
}

/// `value`, encoded into `out`.
fn write_value<E: de::Error>(out: &mut Vec<u8>, value: impl serde::Serialize) -> Result<(), E> {
    serde_json::to_writer(out, &value).map_err(E::custom)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::storage::cache::Stored;
    use crate::storage::release_json::Release;

    /// What the Value path keeps of `object`: parsed as a [`Release`],
    /// encoded as [`Stored`] encodes.
    fn kept_by_value(text: &str) -> Value {
        let Release(value) = serde_json::from_str(text).unwrap();
        Stored::new(&value).value()
    }

    #[test]
    fn the_kept_text_is_the_value_paths_byte_for_byte() {
        let objects = [
            json!({
                "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {
                    "name": "postgres-db", "namespace": "t", "resourceVersion": "7",
                    "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}],
                    "labels": {"apps.cozystack.io/application.kind": "Postgres", "a": "b\"<"},
                    "annotations": {"x": "{\"y\":[1,2]}"}
                },
                "spec": {"interval": "5m", "values": {"replicas": 2, "nested": {"list": [1, null, -3, 2.5]}},
                         "chart": {"spec": {"chart": "postgres"}}, "maxHistory": 5},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]}
            }),
            json!({"metadata": {"name": "x"}, "spec": {}}),
            json!({"metadata": null, "spec": null}),
            json!({"spec": {"chart": {}}}),
            json!({"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}}),
            json!({"spec": [1, {"a": "b"}]}),
            json!({"spec": "x"}),
            json!({}),
        ];
        for object in objects {
            let text = object.to_string();
            let kept = keep(&text).unwrap();
            let by_value = kept_by_value(&text);
            assert_eq!(&*kept.json, by_value.to_string(), "{text}");
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(kept.key, Key::of(&value), "{text}");
            assert_eq!(
                kept.resource_version,
                crate::storage::resource_version(&value)
            );
        }
    }

    #[test]
    fn identity_and_kind_label_are_read_on_the_way() {
        let text = r#"{"metadata": {"namespace": "t", "name": "pg-a\u0062", "resourceVersion": "42",
            "labels": {"apps.cozystack.io/application.kind": "Postgres"}}, "spec": {"values": {}}}"#;
        let kept = keep(text).unwrap();
        assert_eq!(
            (kept.key.namespace(), kept.key.name(), kept.resource_version),
            ("t", "pg-ab", 42)
        );
        assert_eq!(kept.kind_label.as_deref(), Some("Postgres"));
        // Whitespace between fields is upstream's (kube-apiserver writes none).
        assert_eq!(
            serde_json::from_str::<Value>(&kept.json).unwrap(),
            kept_by_value(text)
        );
        let odd =
            keep(r#"{"metadata": {"name": 3, "resourceVersion": "v1", "labels": [1]}}"#).unwrap();
        assert_eq!((odd.key.name(), odd.resource_version), ("", 0));
        assert_eq!(odd.kind_label, None);
    }

    #[test]
    fn spec_and_finalizers_are_read_on_the_way() {
        let read = |text: &str| {
            let kept = keep(text).unwrap();
            (kept.has_spec, kept.has_finalizers)
        };
        let held = r#"{"metadata": {"name": "a", "finalizers": ["x/y"]}, "spec": {"values": {}}}"#;
        assert_eq!(read(held), (true, true));
        assert_eq!(
            read(r#"{"metadata": {"finalizers": [ ]}, "spec": null}"#),
            (true, false)
        );
        assert_eq!(
            read(r#"{"metadata": {"finalizers": null}}"#),
            (false, false)
        );
        let status = r#"{"kind": "Status", "apiVersion": "v1", "status": "Success",
            "details": {"name": "a"}, "metadata": {}}"#;
        assert_eq!(read(status), (false, false));
    }

    #[test]
    fn it_is_refused_where_a_release_is() {
        for refused in [
            "7",
            r#""x""#,
            "[]",
            r#"{"metadata": 3}"#,
            r#"{"metadata": "x"}"#,
            r#"{"metadata": [1]}"#,
            r#"{"metadata": {}"#,
        ] {
            assert!(keep(refused).is_err(), "{refused}");
            assert!(
                serde_json::from_str::<Release>(refused).is_err(),
                "{refused}"
            );
        }
    }
}
