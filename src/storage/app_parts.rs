//! A HelmRelease's app, taken apart for encoding. [`app_parts`] builds the
//! app's small fields as a `Value` (the skeleton) and leaves the two parts
//! that are most of its size in the release: the spec (`spec.values`) and
//! the managedFields (an annotation holding JSON text). Encoding
//! [`AppParts`] writes them straight from the release, which is how the
//! cache's app views and the answers to writes are made without copying a
//! spec; [`to_app`] copies them into a whole `Value`.
//!
//! [`to_app`]: super::helm_release::to_app

use serde_json::{Map, Value, json};

use super::release_naming::{
    MANAGED_FIELDS_ANNOTATION, PASSTHROUGH_METADATA, USER_KEY_PREFIX, app_name,
};
use crate::kinds::definition::ResolvedKind;

/// The app of a HelmRelease less the two parts that are most of its size,
/// which stay in the release until they are needed: copied by [`to_app`],
/// written straight from the release for [`app_view`].
///
/// [`to_app`]: super::helm_release::to_app
/// [`app_view`]: super::helm_release::app_view
pub(super) struct AppParts<'r> {
    /// The app, with `spec: null` in the spec's place and without
    /// `metadata.managedFields`.
    pub(super) skeleton: Value,
    /// The release's `spec.values`: the app's spec.
    pub(super) spec: Option<&'r Value>,
    /// The managed-fields annotation: the app's managedFields as JSON text,
    /// last in its metadata.
    pub(super) managed_fields: Option<&'r str>,
}

/// Takes `release`'s app apart (see [`AppParts`]).
pub(super) fn app_parts<'r>(kind: &ResolvedKind, release: &'r Value) -> AppParts<'r> {
    let d = &kind.definition;
    let no_metadata = Map::new();
    let meta = release
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&no_metadata);
    let release_name = meta.get("name").and_then(Value::as_str).unwrap_or_default();
    let name = app_name(kind, release_name).unwrap_or(release_name);

    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(name));
    if let Some(generate) = meta.get("generateName").and_then(Value::as_str) {
        let generate = app_name(kind, generate).unwrap_or(generate);
        metadata.insert("generateName".into(), json!(generate));
    }
    if let Some(ns) = meta.get("namespace") {
        metadata.insert("namespace".into(), ns.clone());
    }
    for field in ["labels", "annotations"] {
        let restored: Map<String, Value> = meta
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| {
                k.strip_prefix(USER_KEY_PREFIX)
                    .map(|k| (k.to_owned(), v.clone()))
            })
            .collect();
        if !restored.is_empty() {
            metadata.insert(field.into(), Value::Object(restored));
        }
    }
    for key in PASSTHROUGH_METADATA.iter().copied().chain(["finalizers"]) {
        if let Some(v) = meta.get(key) {
            metadata.insert(key.to_owned(), v.clone());
        }
    }

    let managed_fields = release
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(MANAGED_FIELDS_ANNOTATION))
        .and_then(Value::as_str);

    let hr_status = release.get("status");
    let mut status = Map::new();
    if let Some(version) = hr_status.and_then(|s| s.get("lastAttemptedRevision")) {
        status.insert("version".into(), version.clone());
    }
    let conditions: Vec<Value> = hr_status
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| {
            matches!(
                c.get("type").and_then(Value::as_str),
                Some("Ready" | "Released")
            )
        })
        .cloned()
        .collect();
    if !conditions.is_empty() {
        status.insert("conditions".into(), Value::Array(conditions));
    }
    if let Some(g) = hr_status.and_then(|s| s.get("observedGeneration")) {
        status.insert("observedGeneration".into(), g.clone());
    }

    let mut app = Map::new();
    app.insert("apiVersion".into(), kind.group_version().into());
    app.insert("kind".into(), d.kind.clone().into());
    app.insert("metadata".into(), Value::Object(metadata));
    app.insert("spec".into(), Value::Null);
    if !status.is_empty() {
        app.insert("status".into(), Value::Object(status));
    }
    AppParts {
        skeleton: Value::Object(app),
        spec: release.pointer("/spec/values"),
        managed_fields,
    }
}

/// Encodes the app [`to_app`] makes, without copying its spec or parsing
/// its managedFields into values. The annotation's text is written as it is
/// when it parses as JSON (the check is [`to_app`]'s parse, without keeping
/// anything), and left out when not, as [`to_app`] leaves it out.
///
/// [`to_app`]: super::helm_release::to_app
impl serde::Serialize for AppParts<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(fields) = &self.skeleton else {
            return self.skeleton.serialize(serializer);
        };
        let managed = self.managed_fields.and_then(|text| {
            serde_json::from_str::<ParsesAsValue>(text).ok()?;
            serde_json::from_str::<&serde_json::value::RawValue>(text).ok()
        });
        let empty = Value::Object(Map::new());
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (key, value) in fields {
            match (key.as_str(), value) {
                ("spec", _) => map.serialize_entry(key, self.spec.unwrap_or(&empty))?,
                ("metadata", Value::Object(metadata)) if managed.is_some() => {
                    map.serialize_entry(key, &WithManagedFields { metadata, managed })?;
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// JSON that parses as a [`Value`], checked without building one: every
/// number is read as a number (a number out of range fails, as in a
/// `Value`; serde's `IgnoredAny` would skip it unread).
struct ParsesAsValue;

impl<'de> serde::Deserialize<'de> for ParsesAsValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ParsesAsValue)
    }
}

impl<'de> serde::de::Visitor<'de> for ParsesAsValue {
    type Value = ParsesAsValue;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<ParsesAsValue>()?.is_some() {}
        Ok(self)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, ParsesAsValue>()?
            .is_some()
        {}
        Ok(self)
    }
}

/// An app's metadata with its managedFields (JSON text) last.
struct WithManagedFields<'a> {
    metadata: &'a Map<String, Value>,
    managed: Option<&'a serde_json::value::RawValue>,
}

impl serde::Serialize for WithManagedFields<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.metadata {
            map.serialize_entry(key, value)?;
        }
        if let Some(managed) = self.managed {
            map.serialize_entry("managedFields", managed)?;
        }
        map.end()
    }
}
