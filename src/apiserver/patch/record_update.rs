//! Field ownership for writes that are not apply (create, update, JSON and
//! merge patch): kube-apiserver's managedFields layers for an `Update` by
//! one manager — the request's own managedFields or reset, capping the
//! `Update` entries at ten, the manager's identifier and time, stripping
//! the fields nobody owns, and the structured merge of [`Updater`] — over
//! the entries of [`super::managed_fields`].
//!
//! A write by manager M ([`record_update`]) is a three-way comparison of the
//! old and new object: every field M added or changed moves to M's
//! `Update` entry and out of everyone else's, removed fields leave every
//! set, and M's entry gets `time` only when it gained fields. Apart from
//! that, as kube-apiserver does:
//! - a request object carrying valid, non-empty `managedFields` replaces the
//!   stored ones, and `managedFields: []` (or `[{}]`) resets them;
//! - an existing object (one with a `uid`) without managed fields stays
//!   untracked until its first apply;
//! - more than 10 `Update` entries are capped by folding the oldest into
//!   an `ancient-changes` entry per apiVersion;
//! - entries recorded for another apiVersion than the served one are
//!   dropped (kube-apiserver drops versions it no longer serves).
//!
//! Never tracked: `apiVersion`, `kind`, `metadata` itself and its `name`,
//! `namespace`, `uid`, `resourceVersion`, `generation`,
//! `creationTimestamp`, `selfLink`, `managedFields` — and `status`, which
//! the main resource endpoint resets.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::managed_fields::{
    Entry, Managed, Operation, UNKNOWN_MANAGER, decode, encode, encode_text, identifier,
    strip_entry, unix_seconds,
};
use super::merge_types::Node;
use super::updater::Updater;

/// The manager `capUpdateManagers` folds the oldest `Update` entries into.
const ANCIENT_CHANGES: &str = "ancient-changes";
/// The identifier of the entry an update is computed in before it is named.
const CURRENT_OPERATION: &str = "current-operation";
/// At most this many `Update` entries are kept.
const MAX_UPDATE_MANAGERS: usize = 10;

/// `managedFields: []` or `[{}]` in a request resets them.
fn is_reset(obj: &Value) -> bool {
    match obj.pointer("/metadata/managedFields") {
        Some(Value::Array(items)) => match items.as_slice() {
            [] => true,
            [Value::Object(m)] => m.is_empty(),
            _ => false,
        },
        _ => false,
    }
}

fn has_uid(obj: &Value) -> bool {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .is_some_and(|u| !u.is_empty())
}

/// The managedFields layers of an `Update` by `manager` (capping,
/// identifier, time, stripping, structured merge): `live` becomes `new`.
pub(crate) fn update_managed(
    updater: &Updater<'_>,
    live: &Value,
    new: &Value,
    managed: &mut Managed,
    manager: &str,
    now: &str,
) {
    let manager = if manager.is_empty() {
        UNKNOWN_MANAGER
    } else {
        manager
    };
    let id = identifier(manager, Operation::Update, updater.version(), "");
    updater.update(live, new, managed, CURRENT_OPERATION);
    strip_entry(managed, CURRENT_OPERATION);
    if let Some(current) = managed.entries.remove(CURRENT_OPERATION) {
        let mut set = current.set;
        if let Some(previous) = managed.entries.get(&id) {
            set.union_with(&previous.set);
        }
        managed.entries.insert(
            id,
            Entry {
                manager: manager.to_string(),
                operation: Operation::Update,
                subresource: String::new(),
                api_version: current.api_version,
                time: Some(now.to_string()),
                set,
            },
        );
    }
    cap_update_managers(managed);
}

/// Folds the oldest `Update` entries into `ancient-changes` entries until
/// at most ten remain (`capUpdateManagers`).
fn cap_update_managers(managed: &mut Managed) {
    let mut updaters: Vec<String> = managed
        .entries
        .iter()
        .filter(|(_, e)| e.operation == Operation::Update)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    let seconds =
        |id: &String| unix_seconds(managed.entries.get(id).and_then(|e| e.time.as_deref()));
    updaters.sort_by(|a, b| seconds(a).cmp(&seconds(b)).then_with(|| a.cmp(b)));
    let mut first_of_version: BTreeMap<String, String> = BTreeMap::new();
    let mut length = updaters.len();
    for id in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(entry) = managed.entries.get(&id).cloned() else {
            continue;
        };
        let bucket = identifier(ANCIENT_CHANGES, Operation::Update, &entry.api_version, "");
        if id == bucket && first_of_version.contains_key(&entry.api_version) {
            // Folding the bucket into itself would drop it.
            continue;
        }
        match first_of_version.get(&entry.api_version) {
            Some(first) => {
                if !managed.entries.contains_key(&bucket)
                    && let Some(moved) = managed.entries.remove(first)
                {
                    managed.entries.insert(
                        bucket.clone(),
                        Entry {
                            manager: ANCIENT_CHANGES.to_string(),
                            operation: Operation::Update,
                            subresource: String::new(),
                            ..moved
                        },
                    );
                }
                let bucket_set = managed
                    .entries
                    .get(&bucket)
                    .map(|b| b.set.clone())
                    .unwrap_or_default();
                managed.entries.insert(
                    bucket,
                    Entry {
                        manager: ANCIENT_CHANGES.to_string(),
                        operation: Operation::Update,
                        subresource: String::new(),
                        api_version: entry.api_version.clone(),
                        time: entry.time.clone(),
                        set: entry.set.union(&bucket_set),
                    },
                );
                managed.entries.remove(&id);
                length -= 1;
            }
            None => {
                first_of_version.insert(entry.api_version.clone(), id);
            }
        }
    }
}

/// The object a create compares against: empty but for its type.
pub(crate) fn empty_like(obj: &Value) -> Value {
    let mut m = Map::new();
    for key in ["apiVersion", "kind"] {
        if let Some(v) = obj.get(key) {
            m.insert(key.to_string(), v.clone());
        }
    }
    Value::Object(m)
}

/// Update managedFields for a non-apply write (create/update/patch by
/// `manager`, operation "Update"): the manager takes ownership of every
/// field it changed (as kube-apiserver does), removing them from other
/// managers' sets.
///
/// `old` is the stored object (`None` for a create), `new` the object about
/// to be stored; its `metadata.managedFields` is rewritten (or removed when
/// nothing is tracked). `now` is an RFC 3339 timestamp and `api_version`
/// the served `group/version`.
///
/// Without the kind's schema every list counts as atomic and every map as
/// granular, so an update to one item of an associative list is recorded
/// as owning the whole list. Use [`record_update_with_schema`] when the
/// schema is at hand; that is what makes later applies see conflicts on
/// list items.
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    now: &str,
    api_version: &str,
) {
    record_update_with_schema(old, new, manager, now, api_version, &json!({}));
}

/// [`record_update`] with the structural schema of `spec`, so that
/// associative lists (`x-kubernetes-list-type: map`/`set`) and atomic maps
/// are tracked the way server-side apply tracks them.
pub fn record_update_with_schema(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    now: &str,
    api_version: &str,
    schema: &Value,
) {
    if let Some(managed) = recorded(old, new, manager, now, api_version, schema) {
        encode(new, &managed);
    }
}

/// [`record_update_with_schema`] that leaves `new` without managedFields and
/// answers with their JSON text instead (`None` when nothing is tracked, or
/// `new` is not an object):
/// what a write stores in its HelmRelease's annotation, serialized straight
/// from the field sets.
pub fn record_update_text(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    now: &str,
    api_version: &str,
    schema: &Value,
) -> Option<String> {
    let managed = recorded(old, new, manager, now, api_version, schema)?;
    encode_text(&managed)
}

/// The managedFields of `new` after `manager`'s update of `old`, with
/// `new`'s own removed; `None` when `new` is not an object or stays
/// untracked.
fn recorded(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    now: &str,
    api_version: &str,
    schema: &Value,
) -> Option<Managed> {
    if !new.is_object() {
        return None;
    }
    // Borrowed, not copied: the comparison only reads the stored object.
    let empty;
    let live = match old {
        Some(o) => o,
        None => {
            empty = empty_like(new);
            &empty
        }
    };
    // decodeLiveOrNew: valid, non-empty managed fields in the request win.
    let managed = if is_reset(new) {
        Managed::default()
    } else {
        match decode(new) {
            Ok(m) if !m.is_empty() => m,
            _ => decode(live).unwrap_or_default(),
        }
    };
    if let Some(Value::Object(meta)) = new.get_mut("metadata") {
        meta.shift_remove("managedFields");
    }
    // An existing object nobody tracks stays untracked.
    if managed.is_empty() && has_uid(live) {
        return None;
    }
    let updater = Updater::new(Node::root(schema), api_version);
    let mut managed = managed;
    update_managed(&updater, live, new, &mut managed, manager, now);
    Some(managed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "apps.cozystack.io/v1alpha1";

    fn obj(spec: Value) -> Value {
        json!({
            "apiVersion": V, "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "ns", "uid": "u1", "resourceVersion": "1"},
            "spec": spec
        })
    }

    #[test]
    fn create_records_everything_set() {
        let mut new = obj(json!({"replicas": 1}));
        new["metadata"]["labels"] = json!({"app": "x"});
        new["status"] = json!({"ready": true});
        record_update(None, &mut new, "kubectl-create", "2024-01-01T00:00:00Z", V);
        assert_eq!(
            new["metadata"]["managedFields"],
            json!([{
                "manager": "kubectl-create", "operation": "Update", "apiVersion": V,
                "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                             "f:spec": {".": {}, "f:replicas": {}}}
            }])
        );
    }

    #[test]
    fn update_moves_ownership_and_keeps_time_without_changes() {
        let mut created = obj(json!({"replicas": 1, "image": "a"}));
        record_update(None, &mut created, "creator", "2024-01-01T00:00:00Z", V);
        let mut updated = created.clone();
        updated["spec"]["replicas"] = json!(2);
        record_update(
            Some(&created),
            &mut updated,
            "scaler",
            "2024-01-02T00:00:00Z",
            V,
        );
        let mf = &updated["metadata"]["managedFields"];
        assert_eq!(mf[0]["manager"], "creator");
        assert_eq!(
            mf[0]["fieldsV1"],
            json!({"f:spec": {".": {}, "f:image": {}}})
        );
        assert_eq!(mf[1]["manager"], "scaler");
        assert_eq!(mf[1]["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
        // A write that changes nothing leaves the entries alone.
        let mut again = updated.clone();
        record_update(
            Some(&updated),
            &mut again,
            "noop",
            "2024-01-03T00:00:00Z",
            V,
        );
        assert_eq!(
            again["metadata"]["managedFields"],
            updated["metadata"]["managedFields"]
        );
    }

    #[test]
    fn untracked_objects_stay_untracked_and_reset_works() {
        let old = obj(json!({"replicas": 1}));
        let mut new = obj(json!({"replicas": 2}));
        record_update(Some(&old), &mut new, "m", "2024-01-01T00:00:00Z", V);
        assert!(new["metadata"].get("managedFields").is_none());

        let mut tracked = obj(json!({"replicas": 1}));
        record_update(None, &mut tracked, "m", "2024-01-01T00:00:00Z", V);
        let mut reset = tracked.clone();
        reset["metadata"]["managedFields"] = json!([]);
        reset["spec"]["replicas"] = json!(3);
        record_update(Some(&tracked), &mut reset, "m", "2024-01-01T00:00:00Z", V);
        assert!(reset["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn decode_errors_and_other_versions() {
        let mut bad = obj(json!({}));
        bad["metadata"]["managedFields"] = json!([{"manager": "m", "operation": "Patch", "apiVersion": V, "fieldsType": "FieldsV1"}]);
        assert_eq!(
            decode(&bad).unwrap_err(),
            "operation must be `Apply` or `Update`"
        );
        bad["metadata"]["managedFields"] =
            json!([{"manager": "m", "operation": "Update", "apiVersion": V}]);
        assert_eq!(
            decode(&bad).unwrap_err(),
            "missing fieldsType in managed fields entry 0"
        );

        // An entry recorded for a version no longer served is dropped.
        let mut old = obj(json!({"replicas": 1}));
        old["metadata"]["managedFields"] = json!([{
            "manager": "old", "operation": "Update", "apiVersion": "apps.cozystack.io/v1alpha0",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}
        }]);
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(2);
        record_update(Some(&old), &mut new, "m", "2024-01-01T00:00:00Z", V);
        let mf = new["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(mf.len(), 1);
        assert_eq!(mf[0]["manager"], "m");
    }

    #[test]
    fn update_managers_are_capped() {
        let mut cur = obj(json!({}));
        record_update(None, &mut cur, "creator", "2024-01-01T00:00:00Z", V);
        for i in 0..12 {
            let mut next = cur.clone();
            next["spec"][format!("f{i}")] = json!(i);
            record_update(
                Some(&cur),
                &mut next,
                &format!("m{i:02}"),
                &format!("2024-01-01T00:00:{:02}Z", i + 1),
                V,
            );
            cur = next;
        }
        let mf = cur["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(mf.len(), 10);
        let names: Vec<&str> = mf.iter().map(|e| e["manager"].as_str().unwrap()).collect();
        assert!(names.contains(&"ancient-changes"), "{names:?}");
        let bucket = mf
            .iter()
            .find(|e| e["manager"] == "ancient-changes")
            .unwrap();
        assert_eq!(
            bucket["fieldsV1"],
            json!({"f:spec": {".": {}, "f:f0": {}, "f:f1": {}, "f:f2": {}}})
        );
    }

    #[test]
    fn lists_follow_the_schema_when_given() {
        let schema = json!({"type": "object", "properties": {"users": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "role": {"type": "string"}}}
        }}});
        let mut old = obj(json!({"users": [{"name": "a", "role": "r"}]}));
        record_update_with_schema(None, &mut old, "c", "2024-01-01T00:00:00Z", V, &schema);
        let mut new = old.clone();
        new["spec"]["users"][0]["role"] = json!("s");
        let mut plain = new.clone();
        record_update_with_schema(
            Some(&old),
            &mut new,
            "m",
            "2024-01-02T00:00:00Z",
            V,
            &schema,
        );
        assert_eq!(
            new["metadata"]["managedFields"][1]["fieldsV1"],
            json!({"f:spec": {"f:users": {"k:{\"name\":\"a\"}": {"f:role": {}}}}})
        );
        // Without the schema the list is atomic.
        record_update(Some(&old), &mut plain, "m", "2024-01-02T00:00:00Z", V);
        assert_eq!(
            plain["metadata"]["managedFields"][1]["fieldsV1"],
            json!({"f:spec": {"f:users": {}}})
        );
    }

    #[test]
    fn status_and_server_fields_are_not_tracked() {
        let old = {
            let mut o = obj(json!({"replicas": 1}));
            record_update(None, &mut o, "c", "2024-01-01T00:00:00Z", V);
            o
        };
        let mut new = old.clone();
        new["status"] = json!({"phase": "Ready"});
        new["metadata"]["resourceVersion"] = json!("2");
        new["metadata"]["generation"] = json!(2);
        record_update(
            Some(&old),
            &mut new,
            "controller",
            "2024-01-02T00:00:00Z",
            V,
        );
        assert_eq!(
            new["metadata"]["managedFields"],
            old["metadata"]["managedFields"]
        );
    }
}
