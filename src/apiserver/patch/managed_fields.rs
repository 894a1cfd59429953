//! `metadata.managedFields` entries: decoding and encoding them, their
//! identifiers and how a manager is named in messages, following
//! k8s.io/apimachinery `pkg/util/managedfields/internal`.
//!
//! An entry is identified by manager, operation, subresource and — for
//! `Update` only — apiVersion, so one manager has one `Apply` entry and one
//! `Update` entry per apiVersion. Entries are written sorted by operation,
//! then time (to the second), manager, apiVersion and subresource.
//!
//!
//! What a write that is not apply does to them is in [`super::record_update`].

use std::collections::BTreeMap;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::fieldpath::{PathElement, Set};
use crate::golang::{self, Dialect};

/// The manager name kube-apiserver uses for writes without one.
pub(crate) const UNKNOWN_MANAGER: &str = "unknown";

/// The manager that takes over an untracked object's fields on first apply.
pub(crate) const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// The operation of a managedFields entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One managedFields entry.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The manager name.
    pub(crate) manager: String,
    /// Apply or Update.
    pub(crate) operation: Operation,
    /// The subresource the write went to, or empty.
    pub(crate) subresource: String,
    /// The apiVersion the fields were recorded in.
    pub(crate) api_version: String,
    /// When the entry last gained fields (RFC 3339), if known.
    pub(crate) time: Option<String>,
    /// The owned fields.
    pub(crate) set: Set,
}

/// All entries of an object, by manager identifier.
#[derive(Debug, Clone, Default)]
pub(crate) struct Managed {
    /// Entries by [`identifier`].
    pub(crate) entries: BTreeMap<String, Entry>,
}

impl Managed {
    /// Whether there are no entries.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// kube's `BuildManagerIdentifier`: the entry's JSON without fields, type
/// and time, and without apiVersion for appliers.
pub(crate) fn identifier(
    manager: &str,
    operation: Operation,
    api_version: &str,
    subresource: &str,
) -> String {
    let mut s = String::from("{");
    let mut first = true;
    let mut field = |s: &mut String, name: &str, value: &str| {
        if value.is_empty() {
            return;
        }
        if !first {
            s.push(',');
        }
        first = false;
        Dialect::EncodingJson.write_string(s, name);
        s.push(':');
        Dialect::EncodingJson.write_string(s, value);
    };
    field(&mut s, "manager", manager);
    field(&mut s, "operation", operation.as_str());
    if operation == Operation::Update {
        field(&mut s, "apiVersion", api_version);
    }
    field(&mut s, "subresource", subresource);
    s.push('}');
    s
}

/// How a conflict message names a manager (`printManager`).
pub(crate) fn print_manager(entry: Option<&Entry>, id: &str) -> String {
    let Some(e) = entry else {
        return golang::quote(id);
    };
    let mut s = golang::quote(&e.manager);
    if !e.subresource.is_empty() {
        s.push_str(" with subresource ");
        s.push_str(&golang::quote(&e.subresource));
    }
    if e.operation == Operation::Update {
        s.push_str(" using ");
        s.push_str(&e.api_version);
    }
    s
}

/// The fields kube-apiserver never records (`stripMetaManager`).
pub(crate) fn strip_set() -> &'static Set {
    static STRIP: std::sync::LazyLock<Set> = std::sync::LazyLock::new(build_strip_set);
    &STRIP
}

fn build_strip_set() -> Set {
    let f = |s: &str| PathElement::Field(s.into());
    let meta = |s: &str| vec![f("metadata"), f(s)];
    let paths: Vec<Vec<PathElement>> = vec![
        vec![f("apiVersion")],
        vec![f("kind")],
        vec![f("metadata")],
        meta("name"),
        meta("namespace"),
        meta("creationTimestamp"),
        meta("selfLink"),
        meta("uid"),
        meta("clusterName"),
        meta("generation"),
        meta("managedFields"),
        meta("resourceVersion"),
    ];
    Set::from_paths(paths.iter().map(Vec::as_slice))
}

/// Drops the never-recorded fields from one entry, and the entry if that
/// empties it.
pub(crate) fn strip_entry(managed: &mut Managed, id: &str) {
    if let Some(e) = managed.entries.get_mut(id) {
        e.set.subtract(strip_set());
        if e.set.is_empty() {
            managed.entries.remove(id);
        }
    }
}

fn entry_str<'a>(entry: &'a Map<String, Value>, key: &str, i: usize) -> Result<&'a str, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!(
            "{key} of managed fields entry {i} must be a string"
        )),
    }
}

/// Decodes `metadata.managedFields` (`DecodeManagedFields`). Anything but a
/// list is no managed fields.
pub(crate) fn decode(obj: &Value) -> Result<Managed, String> {
    let Some(Value::Array(items)) = obj.pointer("/metadata/managedFields") else {
        return Ok(Managed::default());
    };
    let mut managed = Managed::default();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(entry) = item else {
            return Err(format!("managed fields entry {i} must be an object"));
        };
        let operation = match entry_str(entry, "operation", i)? {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return Err("operation must be `Apply` or `Update`".to_string()),
        };
        let api_version = entry_str(entry, "apiVersion", i)?;
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".to_string());
        }
        match entry_str(entry, "fieldsType", i)? {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {} in managed fields entry {i}",
                    golang::quote(other)
                ));
            }
        }
        let set = match entry.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(f) => Set::from_fields_v1(f).map_err(|e| {
                format!("error decoding versioned set from managed fields entry {i}: {e}")
            })?,
        };
        let manager = entry_str(entry, "manager", i)?.to_string();
        let subresource = entry_str(entry, "subresource", i)?.to_string();
        let time = entry_str(entry, "time", i)?;
        let id = identifier(&manager, operation, api_version, &subresource);
        managed.entries.insert(
            id,
            Entry {
                manager,
                operation,
                subresource,
                api_version: api_version.to_string(),
                time: (!time.is_empty()).then(|| time.to_string()),
                set,
            },
        );
    }
    Ok(managed)
}

pub(crate) fn unix_seconds(time: Option<&str>) -> i64 {
    time.and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map_or(0, |t| t.as_second())
}

/// The entries in the order kube writes them: by operation, then time (to
/// the second), manager, apiVersion and subresource.
fn sorted(managed: &Managed) -> Vec<&Entry> {
    let mut entries: Vec<(i64, &Entry)> = managed
        .entries
        .values()
        .map(|e| (unix_seconds(e.time.as_deref()), e))
        .collect();
    entries.sort_by(|(p_time, p), (q_time, q)| {
        p.operation
            .as_str()
            .cmp(q.operation.as_str())
            .then_with(|| p_time.cmp(q_time))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    entries.into_iter().map(|(_, e)| e).collect()
}

/// Writes the entries into `obj.metadata.managedFields`, sorted as kube
/// sorts them; no entries removes the field.
pub(crate) fn encode(obj: &mut Value, managed: &Managed) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    if managed.is_empty() {
        if let Some(Value::Object(meta)) = root.get_mut("metadata") {
            meta.shift_remove("managedFields");
        }
        return;
    }
    let list: Vec<Value> = sorted(managed)
        .into_iter()
        .map(|e| {
            let mut m = Map::new();
            if !e.manager.is_empty() {
                m.insert("manager".into(), e.manager.clone().into());
            }
            m.insert("operation".into(), e.operation.as_str().into());
            m.insert("apiVersion".into(), e.api_version.clone().into());
            if let Some(t) = &e.time {
                m.insert("time".into(), t.clone().into());
            }
            m.insert("fieldsType".into(), "FieldsV1".into());
            m.insert("fieldsV1".into(), e.set.to_fields_v1());
            if !e.subresource.is_empty() {
                m.insert("subresource".into(), e.subresource.clone().into());
            }
            Value::Object(m)
        })
        .collect();
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert("managedFields".into(), Value::Array(list));
    }
}

/// The JSON text of what [`encode`] writes into `metadata.managedFields`,
/// serialized straight from the entries (`None` for no entries): what the
/// HelmRelease's annotation holds.
pub(crate) fn encode_text(managed: &Managed) -> Option<String> {
    if managed.is_empty() {
        return None;
    }
    let entries: Vec<EntryJson<'_>> = sorted(managed).into_iter().map(EntryJson).collect();
    // Strings and maps with string keys: serializing cannot fail.
    serde_json::to_string(&entries).ok()
}

/// One entry as `metadata.managedFields` holds it.
struct EntryJson<'a>(&'a Entry);

impl Serialize for EntryJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let mut m = serializer.serialize_map(None)?;
        if !e.manager.is_empty() {
            m.serialize_entry("manager", &e.manager)?;
        }
        m.serialize_entry("operation", e.operation.as_str())?;
        m.serialize_entry("apiVersion", &e.api_version)?;
        if let Some(t) = &e.time {
            m.serialize_entry("time", t)?;
        }
        m.serialize_entry("fieldsType", "FieldsV1")?;
        m.serialize_entry("fieldsV1", &e.set.fields_v1())?;
        if !e.subresource.is_empty() {
            m.serialize_entry("subresource", &e.subresource)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "apps.cozystack.io/v1alpha1";

    #[test]
    fn encoded_text_is_the_encoded_values() {
        let path = |names: &[&str]| -> Vec<PathElement> {
            names
                .iter()
                .map(|n| PathElement::Field((*n).into()))
                .collect()
        };
        let set = |paths: &[&[&str]]| {
            let paths: Vec<Vec<PathElement>> = paths.iter().map(|p| path(p)).collect();
            Set::from_paths(paths.iter().map(Vec::as_slice))
        };
        let entry =
            |manager: &str, operation, time: Option<&str>, subresource: &str, s: Set| Entry {
                manager: manager.to_string(),
                operation,
                subresource: subresource.to_string(),
                api_version: V.to_string(),
                time: time.map(str::to_string),
                set: s,
            };
        let mut managed = Managed::default();
        for e in [
            entry(
                "kubectl",
                Operation::Update,
                Some("2026-12-03T10:00:00Z"),
                "",
                set(&[
                    &["spec", "replicas"],
                    &["spec"],
                    &["metadata", "labels", "a\"b"],
                ]),
            ),
            entry(
                "a<b",
                Operation::Apply,
                Some("2026-12-03T09:00:00Z"),
                "",
                set(&[&["spec", "storage"]]),
            ),
            entry(
                "",
                Operation::Update,
                None,
                "status",
                set(&[&["status", "ready"]]),
            ),
        ] {
            let id = identifier(&e.manager, e.operation, &e.api_version, &e.subresource);
            managed.entries.insert(id, e);
        }
        let mut object = serde_json::json!({"metadata": {}});
        encode(&mut object, &managed);
        assert_eq!(
            encode_text(&managed).unwrap(),
            object["metadata"]["managedFields"].to_string()
        );
        assert_eq!(encode_text(&Managed::default()), None);
    }

    /// kube's order: operation (`Apply` before `Update`), then time to the
    /// second, then manager — what the differential tests cannot compare,
    /// as the two servers' times differ.
    #[test]
    fn entries_are_sorted_by_operation_then_second_then_manager() {
        let entry = |manager: &str, operation, time: &str| Entry {
            manager: manager.to_string(),
            operation,
            subresource: String::new(),
            api_version: V.to_string(),
            time: Some(time.to_string()),
            set: Set::default(),
        };
        let mut managed = Managed::default();
        for e in [
            entry("unknown", Operation::Update, "2026-12-03T10:00:00.9Z"),
            entry("m", Operation::Update, "2026-12-03T10:00:00.1Z"),
            entry("early", Operation::Update, "2026-12-03T09:59:59Z"),
            entry("z-applier", Operation::Apply, "2026-12-03T11:00:00Z"),
        ] {
            let id = identifier(&e.manager, e.operation, &e.api_version, &e.subresource);
            managed.entries.insert(id, e);
        }
        let order: Vec<&str> = sorted(&managed)
            .iter()
            .map(|e| e.manager.as_str())
            .collect();
        assert_eq!(order, ["z-applier", "early", "m", "unknown"]);
    }

    #[test]
    fn identifiers_match_kube() {
        assert_eq!(
            identifier("kubectl", Operation::Update, V, ""),
            r#"{"manager":"kubectl","operation":"Update","apiVersion":"apps.cozystack.io/v1alpha1"}"#
        );
        assert_eq!(
            identifier("a<b", Operation::Apply, V, "status"),
            r#"{"manager":"a\u003cb","operation":"Apply","subresource":"status"}"#
        );
    }
}
