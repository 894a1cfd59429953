//! A HelmRelease as the watch cache keeps it ([`Stored`]): its compact JSON
//! (of its `spec`, only `values`), the few fields scans check without
//! parsing, and the app it converts to, made once per served kind and kept.
//! It is made from an object, from upstream's JSON text, or from upstream's
//! answer to a write or a delete ([`DeleteAnswer`]), its app view then made
//! on the way.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::kinds::registry::ServedKind;
use crate::storage::helm_release::{self, AppView};
use crate::storage::kept_text::{self, KeptText};
use crate::storage::key::Key;
use crate::storage::{app_text, resource_version};

/// A HelmRelease as the cache keeps it: its compact JSON, parsed on use,
/// and the few fields scans check without parsing. A parsed
/// `serde_json::Value` takes about six times the memory of its JSON, and the
/// cache holds every owned HelmRelease of the cluster.
///
/// Of the HelmRelease's `spec`, only `values` (the app's spec) is kept: the
/// rest (chart, interval, install and upgrade settings, maxHistory) is the
/// kind definition's, made again by every write, and nothing that reads the
/// cache looks at it (about 260 of the 1,600 bytes of a typical object).
///
/// The app it converts to is made on first use and kept with it, so lists
/// and gets of an unchanged object cost a copy of its JSON, not a parse,
/// conversion and encoding each time.
#[derive(Debug)]
pub struct Stored {
    json: Box<str>,
    resource_version: u64,
    kind_label: Option<Box<str>>,
    app: Mutex<Option<AppMemo>>,
}

/// The app view of a [`Stored`] for one served kind (`stamp`, see
/// [`crate::kinds::registry::ServedKind::stamp`]); `None` when the
/// HelmRelease is not that kind's.
#[derive(Debug)]
struct AppMemo {
    stamp: u64,
    view: Option<Arc<AppView>>,
}

/// A HelmRelease as [`Stored`] encodes it: every field, but of `spec` only
/// `values`.
struct Kept<'a>(&'a Value);

impl serde::Serialize for Kept<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(fields) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (key, value) in fields {
            match value {
                Value::Object(spec) if key == "spec" => {
                    map.serialize_entry(key, &SpecValues(spec))?;
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// A HelmRelease's `spec` as [`Stored`] keeps it: `values` alone.
struct SpecValues<'a>(&'a serde_json::Map<String, Value>);

impl serde::Serialize for SpecValues<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let values = self.0.get("values");
        let mut map = serializer.serialize_map(Some(usize::from(values.is_some())))?;
        if let Some(values) = values {
            map.serialize_entry("values", values)?;
        }
        map.end()
    }
}

/// Upstream's answer to a delete, kept ([`Stored::from_delete_answer`]).
pub struct DeleteAnswer {
    /// The key the answer names (empty for a `Status`).
    pub key: Key,
    /// The answer as the cache keeps a release.
    pub stored: Arc<Stored>,
    /// Whether the answer is the release as upstream last had it (it has a
    /// `spec`) rather than a `Status`.
    pub is_release: bool,
    /// Whether finalizers still hold the release (it is marked for
    /// deletion, not gone).
    pub held: bool,
}

impl Stored {
    /// Keeps `object` compactly, of its `spec` only `values`.
    pub fn new(object: &Value) -> Stored {
        Stored {
            json: helm_release::compact_json(&Kept(object)),
            resource_version: resource_version(object),
            kind_label: object
                .pointer("/metadata/labels")
                .and_then(|labels| labels.get(helm_release::KIND_LABEL))
                .and_then(Value::as_str)
                .map(Into::into),
            app: Mutex::new(None),
        }
    }

    /// Keeps upstream's JSON text of a HelmRelease, made straight from the
    /// text ([`kept_text`]); with its key. Fails where parsing it as
    /// a [`crate::storage::release_json::Release`] fails.
    pub fn from_text(text: &str) -> Result<(Key, Stored), serde_json::Error> {
        Ok(Stored::kept(kept_text::keep(text)?, None))
    }

    /// Keeps upstream's answer `text` to a write of an app of the served
    /// `kind`, with its app view made on the way: the answer is read once
    /// for both ([`kept_text::keep_with_parts`]).
    pub fn from_answer(text: &str, kind: &ServedKind) -> Result<(Key, Stored), serde_json::Error> {
        let (kept, app) = Stored::read_answer(text, kind)?;
        Ok(Stored::kept(kept, Some(app)))
    }

    /// Keeps upstream's answer `text` to a delete of an app of `kind` as
    /// [`Stored::from_answer`] keeps the answer to a write, and reads on the
    /// way what the delete does next ([`DeleteAnswer`]).
    pub fn from_delete_answer(
        text: &str,
        kind: &ServedKind,
    ) -> Result<DeleteAnswer, serde_json::Error> {
        let (kept, app) = Stored::read_answer(text, kind)?;
        let (is_release, held) = (kept.has_spec, kept.has_finalizers);
        let (key, stored) = Stored::kept(kept, Some(app));
        Ok(DeleteAnswer {
            key,
            stored: Arc::new(stored),
            is_release,
            held,
        })
    }

    /// [`Stored::from_delete_answer`] of the embedded store's answer, a
    /// `Value`.
    pub fn from_delete_value(answer: &Value) -> DeleteAnswer {
        DeleteAnswer {
            key: Key::of(answer),
            stored: Arc::new(Stored::new(answer)),
            is_release: answer.get("spec").is_some(),
            held: answer
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty()),
        }
    }

    /// Upstream's answer `text` kept, and the app of `kind` made from the
    /// parts read on the way.
    fn read_answer(
        text: &str,
        kind: &ServedKind,
    ) -> Result<(KeptText, AppMemo), serde_json::Error> {
        let mut parts = app_text::ReleaseParts::default();
        let kept = kept_text::keep_with_parts(text, &mut parts)?;
        let view = helm_release::app_view_of_parts(&kind.resolved, Some(&kind.schema), &parts)
            .map(Arc::new);
        Ok((
            kept,
            AppMemo {
                stamp: kind.stamp,
                view,
            },
        ))
    }

    /// The object `kept` made, with its key, and its app view if made.
    fn kept(kept: KeptText, app: Option<AppMemo>) -> (Key, Stored) {
        let stored = Stored {
            json: kept.json,
            resource_version: kept.resource_version,
            kind_label: kept.kind_label,
            app: Mutex::new(app),
        };
        (kept.key, stored)
    }

    /// The kept JSON.
    pub(crate) fn json(&self) -> &str {
        &self.json
    }

    /// The app this HelmRelease is for the served `kind` (identified by its
    /// stamp), made once from the kept JSON and kept; `None` when it is not
    /// that kind's. Its spec is the stored values as a read shows them,
    /// pruned and defaulted by the kind's schema
    /// ([`crate::storage::spec_on_read`]). A write makes it for its answer
    /// before handing the object to the cache, so the reads after the write
    /// find it made.
    pub fn app_view(&self, kind: &ServedKind) -> Option<Arc<AppView>> {
        let stamp = kind.stamp;
        let mut memo = self.app.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(memo) = memo.as_ref()
            && memo.stamp == stamp
        {
            return memo.view.clone();
        }
        let parts = app_text::read(&self.json);
        let view = helm_release::app_view_of_parts(&kind.resolved, Some(&kind.schema), &parts)
            .map(Arc::new);
        *memo = Some(AppMemo {
            stamp,
            view: view.clone(),
        });
        view
    }

    /// Keeps `view` as the app view of the served kind `stamp` unless one
    /// is kept already: a write whose answer the cache had from the watch
    /// first hands over the view it made, so the next read of the app does
    /// not convert the HelmRelease again.
    pub fn keep_app_view(&self, stamp: u64, view: Arc<AppView>) {
        let mut memo = self.app.lock().unwrap_or_else(|p| p.into_inner());
        if memo.is_none() {
            *memo = Some(AppMemo {
                stamp,
                view: Some(view),
            });
        }
    }

    /// The object, parsed (about 10 µs for a typical HelmRelease).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }

    /// What a write of the app keeps of this HelmRelease (see
    /// [`helm_release::to_helm_release`]): its labels, annotations and
    /// status, parsed without the rest (the chart values above all).
    pub fn write_base(&self) -> Value {
        #[derive(serde::Deserialize)]
        struct Base {
            #[serde(default)]
            metadata: Option<Meta>,
            #[serde(default)]
            status: Option<Value>,
        }
        #[derive(serde::Deserialize)]
        struct Meta {
            #[serde(default)]
            labels: Option<Value>,
            #[serde(default)]
            annotations: Option<Value>,
        }
        let Ok(base) = serde_json::from_str::<Base>(&self.json) else {
            return Value::Null;
        };
        let mut metadata = serde_json::Map::new();
        if let Some(meta) = base.metadata {
            for (key, value) in [("labels", meta.labels), ("annotations", meta.annotations)] {
                if let Some(value) = value {
                    metadata.insert(key.into(), value);
                }
            }
        }
        let mut object = serde_json::Map::new();
        object.insert("metadata".into(), Value::Object(metadata));
        if let Some(status) = base.status {
            object.insert("status".into(), status);
        }
        Value::Object(object)
    }

    /// `metadata.resourceVersion`, as a number.
    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// The app kind label, if any.
    pub fn kind_label(&self) -> Option<&str> {
        self.kind_label.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{hr, postgres};
    use super::*;
    use serde_json::json;

    #[test]
    fn app_views_are_made_once_per_served_kind() {
        let kind = postgres();
        let app = json!({
            "apiVersion": kind.resolved.group_version(), "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "ns", "labels": {"team": "a"}},
            "spec": {"size": "1Gi"},
        });
        let mut release = helm_release::to_helm_release(&kind.resolved, &app, None, None).unwrap();
        release["metadata"]["resourceVersion"] = json!("7");
        let stored = Stored::new(&release);

        let view = stored.app_view(&kind).expect("owned");
        assert_eq!(view.labels().get("team"), Some(&json!("a")));
        assert_eq!(view.value()["spec"], json!({"size": "1Gi"}));
        assert_eq!(view.value(), helm_release::to_app(&kind.resolved, &release));
        // Kept: the same view again for the same kind, a new one for a reloaded kind.
        assert!(Arc::ptr_eq(&view, &stored.app_view(&kind).unwrap()));
        assert!(!Arc::ptr_eq(&view, &stored.app_view(&postgres()).unwrap()));
        // Not this kind's (another kind's name prefix): no view.
        let other = Stored::new(&hr("db"));
        assert!(other.app_view(&kind).is_none());
    }

    #[test]
    fn an_answer_is_kept_with_its_view_as_a_watch_event_would_be() {
        let kind = postgres();
        let app = json!({
            "apiVersion": kind.resolved.group_version(), "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "ns", "labels": {"team": "a"},
                         "annotations": {"note": "<&>"}},
            "spec": {"size": "1Gi", "replicas": 2},
        });
        let mut release = helm_release::to_helm_release(&kind.resolved, &app, None, None).unwrap();
        release["metadata"]["resourceVersion"] = json!("7");
        release["metadata"]["managedFields"] =
            json!([{"manager": "kubectl-cozy", "fieldsV1": {"f:spec": {}}}]);
        release["status"] =
            json!({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]});
        // As kube-apiserver escapes it.
        let answer = release.to_string().replace("<&>", "\\u003c\\u0026\\u003e");
        assert!(answer.contains("\\u0026"));

        let (key, stored) = Stored::from_answer(&answer, &kind).unwrap();
        let (watched_key, watched) = Stored::from_text(&answer).unwrap();
        assert_eq!((&key, key.name()), (&watched_key, "postgres-db"));
        assert_eq!(stored.json, watched.json);
        // What parsing the answer as a watch event's object kept (without
        // the release's own managedFields).
        let crate::storage::release_json::Release(parsed) = serde_json::from_str(&answer).unwrap();
        assert_eq!(stored.value(), Stored::new(&parsed).value());
        assert!(stored.value()["metadata"].get("managedFields").is_none());
        assert_eq!(
            (stored.resource_version(), stored.kind_label()),
            (7, Some("Postgres"))
        );
        // The view made on the way is kept, and is the one a read makes.
        let view = stored.app_view(&kind).unwrap();
        assert_eq!(view.json, watched.app_view(&kind).unwrap().json);
        assert_eq!(view.value(), helm_release::to_app(&kind.resolved, &release));
        assert_eq!(
            view.value()["metadata"]["annotations"],
            json!({"note": "<&>"})
        );
        assert!(Arc::ptr_eq(&view, &stored.app_view(&kind).unwrap()));
        // Not this kind's answer: kept, without a view.
        let (_, other) = Stored::from_answer(&hr("db").to_string(), &kind).unwrap();
        assert!(other.app_view(&kind).is_none());
        assert!(Stored::from_answer("{\"kind\": \"Status\"", &kind).is_err());
    }

    #[test]
    fn stored_keeps_of_the_spec_only_the_values() {
        let kind = postgres();
        let app = json!({
            "apiVersion": kind.resolved.group_version(), "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "ns", "labels": {"team": "a"},
                         "annotations": {"note": "x"}},
            "spec": {"size": "1Gi", "spec": {"values": 1}},
        });
        let mut release = helm_release::to_helm_release(&kind.resolved, &app, None, None).unwrap();
        release["metadata"]["resourceVersion"] = json!("7");
        release["status"] = json!({"lastAttemptedRevision": "0.1.0", "observedGeneration": 1,
            "conditions": [{"type": "Ready", "status": "True"}]});
        assert!(release["spec"].get("chart").is_some());
        let stored = Stored::new(&release);

        let kept = stored.value();
        assert_eq!(
            kept["spec"],
            json!({"values": {"size": "1Gi", "spec": {"values": 1}}})
        );
        for field in ["apiVersion", "kind", "metadata", "status"] {
            assert_eq!(kept[field], release[field], "{field}");
        }
        assert_eq!(stored.kind_label(), Some("Postgres"));
        // The app is the same as from the whole HelmRelease.
        let view = stored.app_view(&kind).expect("owned");
        assert_eq!(view.value(), helm_release::to_app(&kind.resolved, &release));
        // Kept again (a re-list's deletion keeps what the cache had): unchanged.
        assert_eq!(Stored::new(&kept).value(), kept);
        // An update made over the parts a write keeps is the update made
        // over the whole HelmRelease (labels, annotations, status).
        let mut changed = app.clone();
        changed["spec"]["size"] = json!("2Gi");
        changed["metadata"]["labels"] = json!({"team": "b"});
        let base = stored.write_base();
        assert!(base.get("spec").is_none());
        assert_eq!(
            helm_release::to_helm_release(&kind.resolved, &changed, Some(&base), None).unwrap(),
            helm_release::to_helm_release(&kind.resolved, &changed, Some(&release), None).unwrap()
        );
        // Not an object, or a spec that is not one: kept as it is.
        assert_eq!(Stored::new(&json!({"spec": 1})).value(), json!({"spec": 1}));
    }
}
