//! App ⇄ HelmRelease, as pure functions. An application object of a served
//! kind (`Postgres` in `apps.cozystack.io/v1alpha1`) is stored as a Flux
//! `HelmRelease` (`helm.toolkit.fluxcd.io/v2`) named `<prefix><name>` in the
//! same namespace:
//!
//! - ownership labels `apps.cozystack.io/application.{kind,group,name}` select
//!   it; the definition's release labels are added;
//! - user labels and annotations are stored with the key prefix
//!   `apps.cozystack.io-` and restored without it (so `last-applied-configuration`
//!   round-trips verbatim);
//! - `spec` becomes `spec.values`; chart/chartRef and the HelmRelease knobs
//!   come from the definition;
//! - uid, resourceVersion, generation, timestamps, finalizers and
//!   ownerReferences are the HelmRelease's own; `generateName` is stored
//!   with the release prefix, as the name;
//! - status: `Ready` and `Released` conditions, `version` from
//!   `lastAttemptedRevision`, `observedGeneration`.
//!
//! The naming and ownership rules are `release_naming`'s (re-exported
//! here); the app of a release is encoded straight from its JSON text by
//! `app_text`.

use serde_json::{Map, Value, json};

use super::app_text;
use super::release_naming::PASSTHROUGH_METADATA;
pub use super::release_naming::{
    GROUP_LABEL, HELMRELEASE_API_VERSION, KIND_LABEL, MANAGED_FIELDS_ANNOTATION, NAME_LABEL,
    USER_KEY_PREFIX, app_name, owned_by, ownership_selector, release_name,
};
use crate::kinds::definition::{HELM_RELEASE_NAME_MAX, ObjectRef, ResolvedKind};
use crate::kinds::schema::CompiledSchema;

/// An app that cannot be stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// The HelmRelease name would exceed Helm's limit.
    #[error(
        "metadata.name: Invalid value: {}: must be no more than {max} characters (HelmRelease name {} is {len})",
        crate::golang::quote(.name),
        crate::golang::quote(.release)
    )]
    NameTooLong {
        /// The app name.
        name: String,
        /// The HelmRelease name.
        release: String,
        /// Its length.
        len: usize,
        /// The longest app name that fits.
        max: usize,
    },
    /// A field has the wrong shape.
    #[error("{field}: Invalid value: {message}")]
    Invalid {
        /// The field path.
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// An app as get and list serve it: its compact JSON, made once per stored
/// HelmRelease and kept with it (see
/// [`crate::storage::cache::Stored::app_view`]). Only the JSON is kept (its
/// name is the HelmRelease's less the prefix; labels are read from it when a
/// selector asks), so that keeping views costs about the size of the app.
/// Its `kubectl get` Table row is made on the first Table read and kept
/// too (the server's Table printing makes and reads it).
#[derive(Debug)]
pub struct AppView {
    /// The app, encoded.
    pub json: Box<str>,
    /// The app's Table row, once a Table read has asked for it.
    pub(crate) table_row: std::sync::OnceLock<TableRow>,
}

/// An app's Table row as it is kept with its [`AppView`]: every cell of
/// the kind's printer columns encoded once, except the time-dependent ones,
/// and where the app's `metadata` sits in the view's JSON (for the row's
/// `PartialObjectMetadata`). Plain data: the Table printing above makes and
/// renders it.
#[derive(Debug)]
pub(crate) struct TableRow {
    /// The cells, `Name` first.
    pub(crate) cells: Vec<TableCell>,
    /// The byte range of the app's `metadata` object in its JSON.
    pub(crate) metadata: Option<std::ops::Range<usize>>,
}

/// One cell of a kept [`TableRow`].
#[derive(Debug)]
pub(crate) enum TableCell {
    /// The cell, encoded.
    Encoded(Box<str>),
    /// A `date` cell: rendered as its age at the time of each request.
    Age(jiff::Timestamp),
}

impl AppView {
    /// The app, parsed.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }

    /// `metadata.labels`, read from the JSON up to them and no further
    /// ([`super::view_labels`]).
    pub fn labels(&self) -> Map<String, Value> {
        super::view_labels::read(&self.json)
    }
}

/// The app view of `release`, or `None` when it is not `kind`'s.
pub fn app_view(kind: &ResolvedKind, release: &Value) -> Option<AppView> {
    app_view_of_text(kind, &release.to_string())
}

/// The app view of the HelmRelease JSON `text` (as the cache keeps it, or
/// as upstream wrote it), or `None` when it is not `kind`'s: encoded
/// straight from the text ([`app_text`]).
pub fn app_view_of_text(kind: &ResolvedKind, text: &str) -> Option<AppView> {
    app_view_of_parts(kind, None, &app_text::read(text))
}

/// The app view of the release `parts` were read from, or `None` when it
/// is not `kind`'s; its spec pruned and defaulted by `schema` where given,
/// as a read shows it ([`super::spec_on_read`]).
pub(super) fn app_view_of_parts(
    kind: &ResolvedKind,
    schema: Option<&CompiledSchema>,
    parts: &app_text::ReleaseParts<'_>,
) -> Option<AppView> {
    parts.owned_by(kind).then(|| AppView {
        json: app_json(kind, schema, parts),
        table_row: std::sync::OnceLock::new(),
    })
}

/// The app of the HelmRelease JSON `text` as `kind`'s, encoded, whether
/// or not the release is `kind`'s; its spec as [`app_view_of_parts`]
/// makes it.
pub(crate) fn app_json_of_text(
    kind: &ResolvedKind,
    schema: Option<&CompiledSchema>,
    text: &str,
) -> Box<str> {
    app_json(kind, schema, &app_text::read(text))
}

fn app_json(
    kind: &ResolvedKind,
    schema: Option<&CompiledSchema>,
    parts: &app_text::ReleaseParts<'_>,
) -> Box<str> {
    let spec = schema.and_then(|schema| super::spec_on_read::normalized(schema, parts.values()));
    exact_json(|out| {
        parts.write_app(kind, spec.as_deref(), out);
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap_or_else(|never| match never {})
}

/// `value` as compact JSON in a block of exactly its size (see
/// [`exact_json`]).
pub fn compact_json(value: &(impl serde::Serialize + ?Sized)) -> Box<str> {
    exact_json(|buffer| serde_json::to_writer(buffer, value)).unwrap_or_default()
}

/// The JSON `write` writes, in a block of exactly its size: written into a
/// reused buffer first, so that what the cache keeps of every object is one
/// allocation, not the last of a series of doublings whose freed blocks are
/// left between kept ones. `write` must write UTF-8 (JSON) and not call
/// `exact_json` itself.
pub(crate) fn exact_json<E>(
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<Box<str>, E> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with_borrow_mut(|buffer| {
        buffer.clear();
        let written = write(buffer);
        let json = written.map(|()| {
            std::str::from_utf8(buffer)
                .map(Box::from)
                .unwrap_or_default()
        });
        if buffer.capacity() > 64 * 1024 {
            *buffer = Vec::new(); // an outsized object: do not keep its buffer
        }
        json
    })
}

/// Converts an app (already validated and defaulted) into its HelmRelease.
/// `existing` is the stored HelmRelease on update: its labels and annotations
/// that are not ours (e.g. Flux's) are kept, and its status. Only those are
/// read of it ([`crate::storage::cache::Stored::write_base`]).
/// `managed_fields` is the JSON text of the app's managedFields when the
/// write recorded them as text (the app then has none); otherwise the app's
/// own are written.
pub fn to_helm_release(
    kind: &ResolvedKind,
    app: &Value,
    existing: Option<&Value>,
    managed_fields: Option<String>,
) -> Result<Value, ConvertError> {
    release_object(kind, app, existing, managed_fields).map(|release| release.to_value())
}

/// [`to_helm_release`] as a [`ReleaseObject`]: the metadata built, the
/// rest borrowed from `kind`, `app` and `existing`, to encode without
/// building the whole object.
pub fn release_object<'a>(
    kind: &'a ResolvedKind,
    app: &'a Value,
    existing: Option<&'a Value>,
    managed_fields: Option<String>,
) -> Result<ReleaseObject<'a>, ConvertError> {
    let no_metadata = Map::new();
    let meta = app
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&no_metadata);
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let release = release_name(kind, &name);
    if release.len() > HELM_RELEASE_NAME_MAX {
        return Err(ConvertError::NameTooLong {
            max: kind.name_max(),
            len: release.len(),
            name,
            release,
        });
    }
    let d = &kind.definition;

    let mut labels = Map::new();
    let mut annotations = Map::new();
    if let Some(existing_meta) = existing.and_then(|e| e.get("metadata")) {
        for (target, field) in [(&mut labels, "labels"), (&mut annotations, "annotations")] {
            for (k, v) in existing_meta
                .get(field)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if !k.starts_with(USER_KEY_PREFIX)
                    && !k.starts_with("apps.cozystack.io/application.")
                    && k != MANAGED_FIELDS_ANNOTATION
                {
                    target.insert(k.clone(), v.clone());
                }
            }
        }
    }
    for (k, v) in &d.release.labels {
        labels.insert(k.clone(), json!(v));
    }
    for (target, field) in [(&mut labels, "labels"), (&mut annotations, "annotations")] {
        for (k, v) in meta
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if !v.is_string() {
                return Err(ConvertError::Invalid {
                    field: format!("metadata.{field}"),
                    message: format!("{k}: value must be a string"),
                });
            }
            let stored = format!("{USER_KEY_PREFIX}{k}");
            if let Some(problem) = stored_key_problem(k, &stored) {
                return Err(ConvertError::Invalid {
                    field: format!("metadata.{field}"),
                    message: problem,
                });
            }
            target.insert(stored, v.clone());
        }
    }
    let managed_fields = managed_fields.or_else(|| {
        meta.get("managedFields")
            .filter(|m| m.as_array().is_some_and(|a| !a.is_empty()))
            .map(Value::to_string)
    });
    if let Some(text) = managed_fields {
        annotations.insert(MANAGED_FIELDS_ANNOTATION.to_owned(), Value::String(text));
    }
    labels.insert(KIND_LABEL.to_owned(), json!(d.kind));
    labels.insert(GROUP_LABEL.to_owned(), json!(d.group));
    labels.insert(NAME_LABEL.to_owned(), json!(name));

    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(release));
    // Kept (with the prefix, as the name) because kube-apiserver keeps it.
    if let Some(generate) = meta.get("generateName").and_then(Value::as_str) {
        metadata.insert("generateName".into(), json!(release_name(kind, generate)));
    }
    if let Some(ns) = meta.get("namespace") {
        metadata.insert("namespace".into(), ns.clone());
    }
    metadata.insert("labels".into(), Value::Object(labels));
    if !annotations.is_empty() {
        metadata.insert("annotations".into(), Value::Object(annotations));
    }
    for key in PASSTHROUGH_METADATA.iter().copied().chain(["finalizers"]) {
        if let Some(v) = meta.get(key).filter(|v| !v.is_null()) {
            metadata.insert(key.to_owned(), v.clone());
        }
    }

    let r = &d.release;
    let spec = ReleaseSpec {
        interval: r.interval.as_deref().unwrap_or("5m"),
        release_name: release,
        chart: r.chart.as_ref().map(|chart| ChartTemplate {
            spec: ChartTemplateSpec {
                chart: &chart.name,
                source_ref: &chart.source_ref,
                reconcile_strategy: "ChartVersion",
                version: chart.version.as_deref(),
            },
        }),
        chart_ref: r.chart.is_none().then_some(r.chart_ref.as_ref()).flatten(),
        install: Timeout {
            timeout: r.install_timeout.as_deref().unwrap_or("10m"),
        },
        upgrade: Timeout {
            timeout: r.upgrade_timeout.as_deref().unwrap_or("10m"),
        },
        max_history: r.max_history.unwrap_or(5),
        values: app.get("spec").unwrap_or(&EMPTY_OBJECT),
    };
    Ok(ReleaseObject {
        api_version: HELMRELEASE_API_VERSION,
        kind: "HelmRelease",
        metadata,
        spec: SpecToWrite::Made(spec),
        // The status belongs to helm-controller; keep what is stored.
        status: existing.and_then(|e| e.get("status")),
    })
}

/// `{}`, for an app without `spec`.
static EMPTY_OBJECT: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(Map::new()));

/// A HelmRelease to write ([`release_object`]): its metadata, and its spec
/// and status borrowed from the definition, the app and the stored
/// release. It serializes to the object [`to_helm_release`] builds, key for
/// key in the same order, so a write can encode it without copying the
/// app's values into a tree first.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseObject<'a> {
    api_version: &'static str,
    kind: &'static str,
    metadata: Map<String, Value>,
    spec: SpecToWrite<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'a Value>,
}

/// The spec a write sends: made from the definition and the app, or the
/// stored one kept as it is ([`ReleaseObject::keep_spec`]).
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
enum SpecToWrite<'a> {
    /// Made by [`release_object`].
    Made(ReleaseSpec<'a>),
    /// The stored HelmRelease's, verbatim.
    Kept(Value),
}

/// A HelmRelease's spec as the definition makes it; `values` is the app's
/// spec.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ReleaseSpec<'a> {
    interval: &'a str,
    release_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    chart: Option<ChartTemplate<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chart_ref: Option<&'a ObjectRef>,
    install: Timeout<'a>,
    upgrade: Timeout<'a>,
    max_history: u32,
    values: &'a Value,
}

/// `spec.chart`.
#[derive(Debug, serde::Serialize)]
struct ChartTemplate<'a> {
    spec: ChartTemplateSpec<'a>,
}

/// `spec.chart.spec`.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ChartTemplateSpec<'a> {
    chart: &'a str,
    source_ref: &'a ObjectRef,
    reconcile_strategy: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<&'a str>,
}

/// `spec.install` and `spec.upgrade`.
#[derive(Debug, serde::Serialize)]
struct Timeout<'a> {
    timeout: &'a str,
}

impl ReleaseObject<'_> {
    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.metadata
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Writes `stored_spec` (the HelmRelease's spec as upstream holds it)
    /// instead of the spec made from the definition and the app: for a
    /// write that changes the app's metadata only, so that its values stay
    /// as they were written (not pruned or defaulted by the kind as it is
    /// now) and its chart as it was (a newer chart version in the kind is
    /// not a Helm upgrade on a `kubectl label`), as a custom resource's
    /// metadata-only update leaves its spec and generation alone.
    pub fn keep_spec(&mut self, stored_spec: Value) {
        self.spec = SpecToWrite::Kept(stored_spec);
    }

    /// `metadata.namespace` (`default` when the app names none).
    pub fn namespace(&self) -> &str {
        self.metadata
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or("default")
    }

    /// Sets `metadata.resourceVersion`, an update's precondition.
    pub fn set_resource_version(&mut self, resource_version: Value) {
        self.metadata
            .insert("resourceVersion".into(), resource_version);
    }

    /// The HelmRelease as a tree.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// Whether writing this over `stored` (the HelmRelease as kept) would
    /// change nothing: the same type, spec (a spec kept with
    /// [`ReleaseObject::keep_spec`] is `stored`'s) and metadata, but for what
    /// kube-apiserver keeps itself whatever an update says (uid,
    /// resourceVersion, generation, timestamps) and the status (a
    /// subresource). Numbers are compared as written (`3.0` is not `3`).
    pub fn unchanged(&self, stored: &Value) -> bool {
        /// Metadata an update cannot change.
        const KEPT: [&str; 6] = [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ];
        /// Metadata a write sets, or removes by leaving it out.
        const WRITTEN: [&str; 5] = [
            "generateName",
            "labels",
            "annotations",
            "finalizers",
            "ownerReferences",
        ];
        let Some(meta) = stored.get("metadata").and_then(Value::as_object) else {
            return false;
        };
        stored.get("apiVersion").and_then(Value::as_str) == Some(self.api_version)
            && stored.get("kind").and_then(Value::as_str) == Some(self.kind)
            && self
                .metadata
                .iter()
                .all(|(k, v)| KEPT.contains(&k.as_str()) || meta.get(k) == Some(v))
            && WRITTEN
                .iter()
                .all(|k| self.metadata.contains_key(*k) || !meta.contains_key(*k))
            && match &self.spec {
                // Kept from `stored` itself (`keep_spec`): the same.
                SpecToWrite::Kept(_) => true,
                SpecToWrite::Made(spec) => {
                    serde_json::to_value(spec).is_ok_and(|spec| stored.get("spec") == Some(&spec))
                }
            }
    }
}

/// Converts a HelmRelease owned by `kind` back into the app (its view,
/// parsed).
pub fn to_app(kind: &ResolvedKind, release: &Value) -> Value {
    let json = app_json_of_text(kind, None, &release.to_string());
    serde_json::from_str(&json).unwrap_or(Value::Null)
}

/// Why the user's label or annotation `key` cannot be stored on the
/// HelmRelease as `stored` (with [`USER_KEY_PREFIX`] before it), which
/// kube-apiserver checks as it checks any key. The key itself was
/// validated with the app's metadata, and the prefix keeps a valid key's
/// characters valid: only its length can grow out of bounds — a name of 46
/// to 63 characters (without a prefix of its own), or a prefix of 236 to
/// 253.
fn stored_key_problem(key: &str, stored: &str) -> Option<String> {
    let room = USER_KEY_PREFIX.len();
    let (part, length, max) = match key.split_once('/') {
        Some((prefix, _)) => ("prefix part", prefix.len() + room, 253),
        None => ("name part", key.len() + room, 63),
    };
    (length > max).then(|| {
        format!(
            "{key:?}: stored on the HelmRelease as {stored:?}, whose {part} {}; a key here can have a name of at \
             most {} characters without a prefix, or a prefix of at most {} characters",
            crate::apimachinery::labels::max_len_error(max),
            63 - room,
            253 - room
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::load;

    fn postgres() -> ResolvedKind {
        let text = "kind: Postgres\nshortNames: [pg]\nopenAPISchema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
                    release:\n  labels: {sharding.fluxcd.io/key: tenants}\n  chart: {name: postgres, version: 0.1.0, sourceRef: {kind: HelmRepository, name: cozystack-apps, namespace: cozy-public}}\n";
        load::load_text(text, "test").unwrap().kinds.remove(0)
    }

    fn fixture(name: &str) -> Value {
        let text = match name {
            "app" => include_str!("testdata/postgres-app.yaml"),
            "release" => include_str!("testdata/postgres-helmrelease.yaml"),
            _ => unreachable!(),
        };
        serde_saphyr::from_str(text).unwrap()
    }

    #[test]
    fn app_to_helm_release_matches_fixture() {
        let kind = postgres();
        let mut app = fixture("app");
        app.as_object_mut().unwrap().remove("status");
        let release = to_helm_release(&kind, &app, None, None).unwrap();
        let mut expected = fixture("release");
        expected.as_object_mut().unwrap().remove("status");
        assert_eq!(
            release,
            expected,
            "{}",
            serde_json::to_string_pretty(&release).unwrap()
        );
        // Encoded straight from its parts, key for key in the fixture's order.
        let object = release_object(&kind, &app, None, None).unwrap();
        assert_eq!(
            serde_json::to_string(&object).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
    }

    #[test]
    fn helm_release_to_app_matches_fixture() {
        let kind = postgres();
        let app = to_app(&kind, &fixture("release"));
        assert_eq!(
            app,
            fixture("app"),
            "{}",
            serde_json::to_string_pretty(&app).unwrap()
        );
    }

    #[test]
    fn the_view_is_the_app_encoded() {
        let kind = postgres();
        let mut release = fixture("release");
        let text = |r: &Value| String::from(app_view(&kind, r).unwrap().json);
        // Byte for byte the app's compact JSON, managedFields included.
        let managed = json!([{"manager": "m", "operation": "Update", "apiVersion": "v",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:size": {}}}}]);
        release["metadata"]["annotations"][MANAGED_FIELDS_ANNOTATION] = json!(managed.to_string());
        let app = to_app(&kind, &release);
        assert_eq!(app["metadata"]["managedFields"], managed);
        assert_eq!(text(&release), serde_json::to_string(&app).unwrap());
        // Spaced out: the same value. Not JSON, or a number JSON cannot
        // hold: left out by both.
        release["metadata"]["annotations"][MANAGED_FIELDS_ANNOTATION] =
            json!(serde_json::to_string_pretty(&managed).unwrap());
        assert_eq!(app_view(&kind, &release).unwrap().value(), app);
        for bad in ["{not json", "[1e400]", ""] {
            release["metadata"]["annotations"][MANAGED_FIELDS_ANNOTATION] = json!(bad);
            let app = to_app(&kind, &release);
            assert!(app["metadata"].get("managedFields").is_none(), "{bad}");
            assert_eq!(
                text(&release),
                serde_json::to_string(&app).unwrap(),
                "{bad}"
            );
        }
        // Without values: an empty spec.
        release["spec"].as_object_mut().unwrap().remove("values");
        assert_eq!(
            text(&release),
            serde_json::to_string(&to_app(&kind, &release)).unwrap()
        );
        assert_eq!(to_app(&kind, &release)["spec"], json!({}));
    }

    #[test]
    fn round_trip_keeps_foreign_metadata_and_status() {
        let kind = postgres();
        let mut stored = fixture("release");
        stored["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"] = json!("x");
        let app = to_app(&kind, &stored);
        let again = to_helm_release(&kind, &app, Some(&stored), None).unwrap();
        assert_eq!(
            again["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"],
            "x"
        );
        assert_eq!(again["status"], stored["status"]);
        assert_eq!(again["spec"], stored["spec"]);
        assert_eq!(to_app(&kind, &again), app);
    }

    /// A write of the app as it is changes nothing of its HelmRelease, even
    /// with what upstream adds (its managedFields, status, a newer
    /// resourceVersion); anything a write sets or removes does.
    #[test]
    fn a_release_is_unchanged_by_the_app_as_it_is() {
        let kind = postgres();
        let mut stored = fixture("release");
        stored["metadata"]["managedFields"] = json!([{"manager": "kubectl-cozy"}]);
        stored["metadata"]["generation"] = json!(7);
        let app = to_app(&kind, &stored);
        let unchanged = |app: &Value, stored: &Value| {
            release_object(&kind, app, Some(stored), None)
                .unwrap()
                .unchanged(stored)
        };
        assert!(unchanged(&app, &stored));
        let mut changed = app.clone();
        changed["spec"]["replicas"] = json!(5);
        assert!(!unchanged(&changed, &stored));
        let mut labelled = app.clone();
        labelled["metadata"]["labels"]["new"] = json!("x");
        assert!(!unchanged(&labelled, &stored));
        let mut unfinalized = app.clone();
        unfinalized["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("finalizers");
        assert!(
            !unchanged(&unfinalized, &stored),
            "the write removes the finalizers"
        );
        // The definition's part of the spec (a new chart version) counts.
        let mut older = stored.clone();
        older["spec"]["chart"]["spec"]["version"] = json!("0.0.1");
        assert!(!unchanged(&app, &older));
        // Numbers as written: `3.0` is a change of `3`.
        assert_eq!(app["spec"]["replicas"], 3);
        let mut float = app.clone();
        float["spec"]["replicas"] = json!(3.0);
        assert!(!unchanged(&float, &stored));
    }

    #[test]
    fn compact_json_is_serde_json_compact_encoding() {
        for value in [
            fixture("release"),
            json!({"big": "x".repeat(100_000)}),
            fixture("app"),
        ] {
            assert_eq!(
                &*compact_json(&value),
                serde_json::to_string(&value).unwrap()
            );
        }
    }

    #[test]
    fn ownership() {
        let kind = postgres();
        let release = fixture("release");
        assert!(owned_by(&kind, &release));
        let mut other = release.clone();
        other["metadata"]["labels"][KIND_LABEL] = json!("Redis");
        assert!(!owned_by(&kind, &other));
        assert_eq!(
            ownership_selector(&kind),
            "apps.cozystack.io/application.kind=Postgres,apps.cozystack.io/application.group=apps.cozystack.io"
        );
    }

    #[test]
    fn generate_name_survives_the_round_trip() {
        let kind = postgres();
        let app = json!({"metadata": {"name": "db-x7k2p", "generateName": "db-", "namespace": "ns"}, "spec": {}});
        let release = to_helm_release(&kind, &app, None, None).unwrap();
        assert_eq!(
            release["metadata"]["generateName"],
            format!("{}db-", kind.release_prefix)
        );
        assert_eq!(to_app(&kind, &release)["metadata"], app["metadata"]);
    }

    #[test]
    fn names_longer_than_helm_allows_are_refused() {
        let kind = postgres();
        let name = "a".repeat(45);
        let app = json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {}});
        let err = to_helm_release(&kind, &app, None, None).unwrap_err();
        assert!(
            err.to_string()
                .contains("must be no more than 44 characters"),
            "{err}"
        );
        let ok = json!({"metadata": {"name": "a".repeat(44), "namespace": "ns"}, "spec": {}});
        to_helm_release(&kind, &ok, None, None).unwrap();
    }

    /// A label or annotation key is stored behind `apps.cozystack.io-`,
    /// where kube-apiserver checks it again: one valid on its own that
    /// grows out of bounds there is refused, naming the user's key.
    #[test]
    fn keys_that_outgrow_their_bounds_behind_the_prefix_are_refused() {
        let kind = postgres();
        let with = |field: &str, key: &str| json!({"metadata": {"name": "db", "namespace": "ns", field: {key: "v"}}, "spec": {}});
        for (field, key) in [
            ("labels", "k".repeat(46)),
            ("annotations", "K".repeat(46)),
            ("labels", format!("{}.example.com/k", "d".repeat(224))),
        ] {
            let err = to_helm_release(&kind, &with(field, &key), None, None).unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains(&format!(
                    "{key:?}: stored on the HelmRelease as \"apps.cozystack.io-{key}\""
                )) && text.contains(
                    "a name of at most 45 characters without a prefix, or a prefix of at most 235"
                ),
                "{field} {key}: {text}"
            );
        }
        for (field, key) in [
            ("labels", "k".repeat(45)),
            ("annotations", "example.com/".to_owned() + &"k".repeat(63)),
        ] {
            to_helm_release(&kind, &with(field, &key), None, None)
                .unwrap_or_else(|e| panic!("{field} {key}: {e}"));
        }
    }
}
