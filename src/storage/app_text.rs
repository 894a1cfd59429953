//! A HelmRelease's app, encoded straight from the release's JSON text:
//! [`read`] takes the parts of the release an app is made of as borrowed
//! slices of the text ([`super::json_slices`]), and
//! [`ReleaseParts::write_app`] writes the app from them, its spec
//! (`spec.values`, most of its size) and the release's status fields copied
//! as they are. No `serde_json::Value` of the release or the app is built:
//! this is how the cache's app views ([`super::helm_release::AppView`]) and
//! the answers to writes are made.
//!
//! The app's fields, in order: `apiVersion`, `kind`, `metadata` (`name`
//! and `generateName` without the release prefix, `namespace`, the user's
//! labels and annotations without their key prefix, the HelmRelease's own
//! [`PASSTHROUGH_METADATA`] and `finalizers`, then the app's managedFields
//! from their annotation), `spec`, and `status` (`version` from
//! `lastAttemptedRevision`, the `Ready` and `Released` conditions,
//! `observedGeneration`) when it has any of them.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::json_slices::{ObjectWriter, entries, is_object, raw_str};
use super::release_naming::{
    GROUP_LABEL, KIND_LABEL, MANAGED_FIELDS_ANNOTATION, PASSTHROUGH_METADATA, USER_KEY_PREFIX,
    app_name, owns,
};
use crate::kinds::definition::ResolvedKind;

/// The release's own metadata an app shows as it is: [`PASSTHROUGH_METADATA`]
/// and `finalizers`.
const OWN_METADATA: usize = PASSTHROUGH_METADATA.len() + 1;

/// The parts of a HelmRelease an app is made of, borrowed from its text.
#[derive(Default)]
pub(super) struct ReleaseParts<'a> {
    /// `metadata.name`, when a string.
    name: Option<Cow<'a, str>>,
    /// `metadata.generateName`, when a string.
    generate_name: Option<Cow<'a, str>>,
    namespace: Option<&'a RawValue>,
    /// The user's labels, their keys without [`USER_KEY_PREFIX`].
    labels: Vec<(Cow<'a, str>, &'a RawValue)>,
    /// The user's annotations, likewise.
    annotations: Vec<(Cow<'a, str>, &'a RawValue)>,
    kind_label: Option<Cow<'a, str>>,
    group_label: Option<Cow<'a, str>>,
    /// The managed-fields annotation: the app's managedFields as JSON text.
    managed_fields: Option<Cow<'a, str>>,
    /// [`PASSTHROUGH_METADATA`] then `finalizers`, each if present.
    own_metadata: [Option<&'a RawValue>; OWN_METADATA],
    /// `spec.values`: the app's spec.
    values: Option<&'a RawValue>,
    /// `status.lastAttemptedRevision`.
    version: Option<&'a RawValue>,
    /// The `Ready` and `Released` conditions of `status.conditions`.
    conditions: Vec<&'a RawValue>,
    /// `status.observedGeneration`.
    observed_generation: Option<&'a RawValue>,
}

/// Reads the parts of the HelmRelease `text` an app is made of. Lenient as
/// reading a `Value` is: a field of the wrong type counts as absent, and
/// text that is not a JSON object gives no parts.
pub(super) fn read(text: &str) -> ReleaseParts<'_> {
    let mut parts = ReleaseParts::default();
    let _ = entries(text, |key, value| match &*key {
        "metadata" if is_object(value) => parts.read_metadata(value),
        "spec" if is_object(value) => {
            let _ = entries(value.get(), |key, value| {
                if key == "values" {
                    parts.spec_values(value);
                }
            });
        }
        "status" => parts.read_status(value),
        _ => {}
    });
    parts
}

impl<'a> ReleaseParts<'a> {
    fn read_metadata(&mut self, metadata: &'a RawValue) {
        let _ = entries(metadata.get(), |key, value| {
            self.metadata_member(&key, value)
        });
    }

    /// Takes the member `key` of the release's `metadata`, if the app is
    /// made of it.
    pub(super) fn metadata_member(&mut self, key: &str, value: &'a RawValue) {
        match key {
            "name" => self.name = raw_str(value),
            "generateName" => self.generate_name = raw_str(value),
            "namespace" => self.namespace = Some(value),
            "labels" if is_object(value) => {
                let _ = entries(value.get(), |key, value| {
                    if key == KIND_LABEL {
                        self.kind_label = raw_str(value);
                    } else if key == GROUP_LABEL {
                        self.group_label = raw_str(value);
                    }
                    if let Some(user) = strip_user_prefix(key) {
                        self.labels.push((user, value));
                    }
                });
            }
            "annotations" if is_object(value) => {
                let _ = entries(value.get(), |key, value| {
                    if key == MANAGED_FIELDS_ANNOTATION {
                        self.managed_fields = raw_str(value);
                    }
                    if let Some(user) = strip_user_prefix(key) {
                        self.annotations.push((user, value));
                    }
                });
            }
            "finalizers" => self.own_metadata[OWN_METADATA - 1] = Some(value),
            other => {
                if let Some(i) = PASSTHROUGH_METADATA.iter().position(|k| *k == other) {
                    self.own_metadata[i] = Some(value);
                }
            }
        }
    }

    /// Takes the release's `spec.values`: the app's spec.
    pub(super) fn spec_values(&mut self, values: &'a RawValue) {
        self.values = Some(values);
    }

    /// Takes what the app shows of the release's `status`, if an object.
    pub(super) fn read_status(&mut self, status: &'a RawValue) {
        if !is_object(status) {
            return;
        }
        let _ = entries(status.get(), |key, value| match &*key {
            "lastAttemptedRevision" => self.version = Some(value),
            "observedGeneration" => self.observed_generation = Some(value),
            "conditions" => {
                self.conditions = serde_json::from_str::<Vec<&RawValue>>(value.get())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|condition| {
                        let mut kept = false;
                        if is_object(condition) {
                            let _ = entries(condition.get(), |key, value| {
                                if key == "type" {
                                    kept = matches!(
                                        raw_str(value).as_deref(),
                                        Some("Ready" | "Released")
                                    );
                                }
                            });
                        }
                        kept
                    })
                    .collect();
            }
            _ => {}
        });
    }

    /// Whether the release belongs to `kind` (see
    /// [`super::release_naming::owned_by`]).
    pub(super) fn owned_by(&self, kind: &ResolvedKind) -> bool {
        owns(
            kind,
            self.kind_label.as_deref(),
            self.group_label.as_deref(),
            self.name.as_deref(),
        )
    }

    /// Writes the app of the release as compact JSON into `out` (see the
    /// module documentation for its fields). The managedFields annotation is
    /// written as it is when it parses as JSON, and left out when not.
    /// `spec.values`, the app's spec as stored.
    pub(super) fn values(&self) -> Option<&'a RawValue> {
        self.values
    }

    /// Writes the app to `out`, its spec `spec` where given (the values as
    /// a read shows them, [`super::spec_on_read`]), else the stored values.
    pub(super) fn write_app(
        &self,
        kind: &ResolvedKind,
        spec: Option<&RawValue>,
        out: &mut Vec<u8>,
    ) {
        let mut app = ObjectWriter::new(out);
        app.str("apiVersion", &kind.group_version());
        app.str("kind", &kind.definition.kind);

        let mut metadata = ObjectWriter::new(app.key("metadata"));
        let release_name = self.name.as_deref().unwrap_or_default();
        metadata.str("name", app_name(kind, release_name).unwrap_or(release_name));
        if let Some(generate) = self.generate_name.as_deref() {
            metadata.str("generateName", app_name(kind, generate).unwrap_or(generate));
        }
        if let Some(namespace) = self.namespace {
            metadata.raw("namespace", namespace);
        }
        for (field, entries) in [("labels", &self.labels), ("annotations", &self.annotations)] {
            if !entries.is_empty() {
                let mut map = ObjectWriter::new(metadata.key(field));
                for (key, value) in entries {
                    map.raw(key, value);
                }
                map.end();
            }
        }
        let own_keys = PASSTHROUGH_METADATA.iter().copied().chain(["finalizers"]);
        for (key, value) in own_keys.zip(&self.own_metadata) {
            if let Some(value) = value {
                metadata.raw(key, value);
            }
        }
        if let Some(managed) = self.managed_fields.as_deref().and_then(|text| {
            serde_json::from_str::<ParsesAsValue>(text).ok()?;
            serde_json::from_str::<&RawValue>(text).ok()
        }) {
            metadata.raw("managedFields", managed);
        }
        metadata.end();

        match spec.or(self.values) {
            Some(values) => app.raw("spec", values),
            None => app.key("spec").extend_from_slice(b"{}"),
        }

        if self.version.is_some()
            || !self.conditions.is_empty()
            || self.observed_generation.is_some()
        {
            let mut status = ObjectWriter::new(app.key("status"));
            if let Some(version) = self.version {
                status.raw("version", version);
            }
            if !self.conditions.is_empty() {
                let out = status.key("conditions");
                out.push(b'[');
                for (i, condition) in self.conditions.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(condition.get().as_bytes());
                }
                out.push(b']');
            }
            if let Some(generation) = self.observed_generation {
                status.raw("observedGeneration", generation);
            }
            status.end();
        }
        app.end();
    }
}

/// A user's label or annotation key without its prefix; `None` for the
/// server's own.
fn strip_user_prefix(key: Cow<'_, str>) -> Option<Cow<'_, str>> {
    match key {
        Cow::Borrowed(key) => key.strip_prefix(USER_KEY_PREFIX).map(Cow::Borrowed),
        Cow::Owned(key) => key
            .strip_prefix(USER_KEY_PREFIX)
            .map(|user| Cow::Owned(user.to_owned())),
    }
}

/// JSON that parses as a `serde_json::Value`, checked without building
/// one: every number is read as a number (a number out of range fails, as
/// in a `Value`; serde's `IgnoredAny` would skip it unread).
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::kinds::load;

    fn postgres() -> ResolvedKind {
        let text = "kind: Postgres\nopenAPISchema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
                    release:\n  prefix: postgres-\n  chart: {name: postgres, version: 0.1.0, sourceRef: {kind: HelmRepository, name: cozystack-apps, namespace: cozy-public}}\n";
        load::load_text(text, "test").unwrap().kinds.remove(0)
    }

    fn app_of(kind: &ResolvedKind, text: &str) -> (bool, Value) {
        let parts = read(text);
        let mut out = Vec::new();
        parts.write_app(kind, None, &mut out);
        (
            parts.owned_by(kind),
            serde_json::from_slice(&out).expect("the app is JSON"),
        )
    }

    /// A HelmRelease as kube-apiserver writes one: compact, `<`, `>` and
    /// `&` escaped, the release's own managedFields, the chart knobs, and
    /// conditions of other types than the app shows.
    const UPSTREAM: &str = concat!(
        r#"{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"#,
        r#""annotations":{"apps.cozystack.io-note":"a \u003cb\u003e \u0026 c","#,
        r#""apps.cozystack.io/managed-fields":"[{\"manager\":\"kubectl\",\"operation\":\"Update\",\"fieldsV1\":{\"f:spec\":{\"f:replicas\":{}}}}]","#,
        r#""meta.helm.sh/x":"flux's"},"#,
        r#""creationTimestamp":"2026-12-04T12:00:00Z","finalizers":["finalizers.fluxcd.io"],"generation":3,"#,
        r#""labels":{"apps.cozystack.io-team":"db","apps.cozystack.io/application.group":"apps.cozystack.io","#,
        r#""apps.cozystack.io/application.kind":"Postgres","apps.cozystack.io/application.name":"main","helm.toolkit.fluxcd.io/name":"x"},"#,
        r#""managedFields":[{"manager":"kubectl-cozy","operation":"Update","fieldsV1":{"f:spec":{}}}],"#,
        r#""name":"postgres-main","namespace":"tenant-a","resourceVersion":"48213","uid":"0f6a3c1e-8d2b-4c57-9b1a-2e4f6d8c0a13"},"#,
        r#""spec":{"chart":{"spec":{"chart":"postgres","version":"0.1.0"}},"interval":"5m","#,
        r#""values":{"replicas":3,"size":"10Gi","resources":{"cpu":"500m"},"users":{"app":{"readonly":false}}}},"#,
        r#""status":{"conditions":[{"type":"Ready","status":"True","reason":"InstallSucceeded","message":"Helm install succeeded \u0026 tested"},"#,
        r#"{"type":"Reconciling","status":"False"},{"type":"Released","status":"True"},{"status":"True"}],"#,
        r#""lastAttemptedRevision":"0.1.0","observedGeneration":3,"history":[{"chartVersion":"0.1.0"}]}}"#
    );

    #[test]
    fn the_app_of_upstreams_text() {
        let kind = postgres();
        let (owned, app) = app_of(&kind, UPSTREAM);
        assert!(owned);
        assert_eq!(
            app,
            json!({
                "apiVersion": "apps.cozystack.io/v1alpha1",
                "kind": "Postgres",
                "metadata": {
                    "name": "main",
                    "namespace": "tenant-a",
                    "labels": {"team": "db"},
                    "annotations": {"note": "a <b> & c"},
                    "uid": "0f6a3c1e-8d2b-4c57-9b1a-2e4f6d8c0a13",
                    "resourceVersion": "48213",
                    "generation": 3,
                    "creationTimestamp": "2026-12-04T12:00:00Z",
                    "finalizers": ["finalizers.fluxcd.io"],
                    "managedFields": [{"manager": "kubectl", "operation": "Update",
                                       "fieldsV1": {"f:spec": {"f:replicas": {}}}}]
                },
                "spec": {"replicas": 3, "size": "10Gi", "resources": {"cpu": "500m"},
                         "users": {"app": {"readonly": false}}},
                "status": {
                    "version": "0.1.0",
                    "conditions": [
                        {"type": "Ready", "status": "True", "reason": "InstallSucceeded",
                         "message": "Helm install succeeded & tested"},
                        {"type": "Released", "status": "True"}
                    ],
                    "observedGeneration": 3
                }
            })
        );
        // Key for key in the app's order.
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            keys(&app),
            ["apiVersion", "kind", "metadata", "spec", "status"]
        );
        assert_eq!(
            keys(&app["metadata"]),
            [
                "name",
                "namespace",
                "labels",
                "annotations",
                "uid",
                "resourceVersion",
                "generation",
                "creationTimestamp",
                "finalizers",
                "managedFields"
            ]
        );
    }

    #[test]
    fn fields_of_the_wrong_type_count_as_absent() {
        let kind = postgres();
        let (owned, app) = app_of(
            &kind,
            r#"{"metadata": {"name": 3, "generateName": "postgres-g-", "namespace": null,
                "labels": [1], "annotations": {"apps.cozystack.io/managed-fields": "not json"}},
               "spec": [1], "status": {"conditions": {"type": "Ready"}, "observedGeneration": null}}"#,
        );
        assert!(!owned);
        assert_eq!(
            app,
            json!({
                "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
                "metadata": {"name": "", "generateName": "g-", "namespace": null},
                "spec": {},
                "status": {"observedGeneration": null}
            })
        );
        for not_an_object in ["", "[]", "3", "{"] {
            let (owned, app) = app_of(&kind, not_an_object);
            assert!(!owned);
            assert_eq!(app["metadata"], json!({"name": ""}), "{not_an_object}");
        }
    }

    #[test]
    fn ownership_needs_both_labels_and_the_prefix() {
        let kind = postgres();
        let release = |labels: &str, name: &str| {
            format!(r#"{{"metadata": {{"name": "{name}", "labels": {{{labels}}}}}}}"#)
        };
        let both = r#""apps.cozystack.io/application.kind": "Postgres", "apps.cozystack.io/application.group": "apps.cozystack.io""#;
        assert!(read(&release(both, "postgres-a")).owned_by(&kind));
        assert!(!read(&release(both, "redis-a")).owned_by(&kind));
        let kind_only = r#""apps.cozystack.io/application.kind": "Postgres""#;
        assert!(!read(&release(kind_only, "postgres-a")).owned_by(&kind));
        let other = r#""apps.cozystack.io/application.kind": "Redis", "apps.cozystack.io/application.group": "apps.cozystack.io""#;
        assert!(!read(&release(other, "postgres-a")).owned_by(&kind));
    }
}
