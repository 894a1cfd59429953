//! Server-side apply (`application/apply-patch+yaml`): kube-apiserver's
//! field-manager layers around the structured merge of [`super::updater`].
//!
//! In order, as k8s.io/apimachinery's `NewDefaultFieldManager` stacks them:
//! 1. the body is YAML or JSON and must be a mapping (400 `error decoding
//!    patch: ...`);
//! 2. the stored managedFields must decode (500);
//! 3. the configuration's apiVersion and kind must be the served ones (400
//!    `invalid object type: group/version, Kind=K`) and it may not carry
//!    `metadata.managedFields` (400 `metadata.managedFields must be nil`);
//! 4. an object nobody tracks yet first gets a `before-first-apply`
//!    `Update` entry owning everything it has;
//! 5. structured merge and conflicts (409 with one `FieldManagerConflict`
//!    cause per field); with `force` the applier takes the fields over;
//! 6. for the manager `kubectl`, conflicts on fields that still match the
//!    `kubectl.kubernetes.io/last-applied-configuration` annotation are
//!    forced (the client-side to server-side apply upgrade), and that
//!    annotation, when present, is rewritten from the applied
//!    configuration.
//!
//! The entry's `time` moves only when the object changes. YAML follows
//! sigs.k8s.io/yaml (YAML 1.1 plain scalars: unquoted `on`, `no`, `yes`
//! are booleans, `0755` is octal; quoted scalars stay strings; repeated
//! keys: the last wins).
//!
//! A configuration structured-merge-diff cannot type — a field the schema
//! does not declare (in a map with `properties` and no
//! `additionalProperties`, outside preserved unknown fields; in metadata,
//! at the top, in status), an associative list whose items cannot be keyed,
//! a value of another type than its field's (`.spec.replicas: expected
//! numeric (int or float), got string`, [`super::merge::validate_config`])
//! — is kube-apiserver's 500 with no reason, `failed to create typed patch
//! object (ns/name; group/version, Kind=K): .spec.sepc: field not declared
//! in schema`, whatever `fieldValidation` and `force` say: its field
//! manager types the configuration before anything else looks at it.
//!
//! Deviations: a create whose configuration has no `metadata.name` is 400 here, which
//! kube-apiserver reports as a name mismatch with the URL (also 400).
//! `status` in a configuration is ignored. `null` values of
//! `metadata.labels` and `metadata.annotations` are dropped from the
//! result; nulls under `spec` are left to the schema's pruning.

use serde_json::{Map, Value};

use super::fieldpath::{PathDisplay, PathElement, Set};
use super::managed_fields::{
    BEFORE_FIRST_APPLY, Entry, Managed, Operation, decode, encode, identifier, strip_entry,
};
use super::merge::{compare, to_field_set, validate_config};
use super::merge_types::Node;
use super::record_update::{empty_like, update_managed};
use super::updater::{Conflicts, Updater};
use super::{Cause, PatchError};
use crate::golang::Dialect;

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
const KUBECTL: &str = "kubectl";
/// `TotalAnnotationSizeLimitB`.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// A server-side apply request.
#[derive(Debug, Clone, Copy)]
pub struct ApplyRequest<'a> {
    /// The stored object; `None` creates it.
    pub current: Option<&'a Value>,
    /// The applied configuration, YAML or JSON.
    pub body: &'a [u8],
    /// `fieldManager` (required; empty is 422).
    pub field_manager: &'a str,
    /// `force`: take over conflicting fields.
    pub force: bool,
    /// The structural schema of `spec`, for `x-kubernetes-list-type`,
    /// `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`.
    pub schema: &'a Value,
    /// RFC 3339 timestamp for `managedFields.time`.
    pub now: &'a str,
    /// The served `group/version`.
    pub api_version: &'a str,
}

/// The outcome of an apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// Merged object with metadata.managedFields updated.
    pub object: Value,
}

/// Server-side apply: structured merge of the applied configuration into
/// the live object with field ownership.
///
/// On create the kind is the configuration's (it must have one); the
/// caller checks it against the URL's resource, as it checks name and
/// namespace, and fills in server-set metadata. A `metadata.resourceVersion`
/// in the configuration stays in the result as a precondition for the
/// caller.
pub fn server_side_apply(req: &ApplyRequest) -> Result<Applied, PatchError> {
    if req.field_manager.is_empty() {
        return Err(PatchError::invalid(
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            vec![Cause {
                reason: "FieldValueRequired".to_string(),
                message: "Required value: is required for apply patch".to_string(),
                field: "fieldManager".to_string(),
            }],
        ));
    }
    let original = applied_configuration(req.body)?;
    let live = match req.current {
        Some(c) => c.clone(),
        None => empty_like(&original),
    };
    let managed = decode(&live)
        .map_err(|e| PatchError::internal(format!("failed to decode managed fields: {e}")))?;

    let applied_version = str_at(&original, "/apiVersion");
    let applied_kind = str_at(&original, "/kind");
    let expected_kind = match req.current {
        Some(c) => str_at(c, "/kind"),
        None => applied_kind,
    };
    if applied_version != req.api_version
        || applied_kind != expected_kind
        || applied_kind.is_empty()
    {
        return Err(PatchError::bad_request(format!(
            "invalid object type: {}",
            gvk_string(applied_version, applied_kind)
        )));
    }
    if original
        .pointer("/metadata/managedFields")
        .is_some_and(Value::is_array)
    {
        return Err(PatchError::bad_request(
            "metadata.managedFields must be nil",
        ));
    }
    if req.current.is_none() && str_at(&original, "/metadata/name").is_empty() {
        return Err(PatchError::bad_request(
            "metadata.name: Required value: name is required to create an object by apply",
        ));
    }
    let root = Node::root(req.schema);
    // kube-apiserver answers a configuration structured-merge-diff cannot
    // type (an undeclared field, an unkeyable list item) with 500 and no
    // reason, whatever fieldValidation and force say: so do we.
    validate_config(root, &original).map_err(|e| {
        PatchError::unclassified(format!(
            "failed to create typed patch object ({}/{}; {}): {e}",
            str_at(&original, "/metadata/namespace"),
            str_at(&original, "/metadata/name"),
            gvk_string(applied_version, applied_kind)
        ))
    })?;
    // Nobody owns status through the main resource.
    let mut config = original.clone();
    if let Some(m) = config.as_object_mut() {
        m.shift_remove("status");
    }

    let updater = Updater::new(root, req.api_version);
    let attempt = |force: bool| apply_layers(&updater, req, &live, &config, managed.clone(), force);
    let (mut object, managed) = match attempt(req.force) {
        Ok(done) => done,
        Err(conflicts) => {
            let allowed = (req.field_manager == KUBECTL)
                .then(|| allowed_conflicts_from_last_applied(&updater, &live))
                .flatten();
            match allowed {
                Some(allowed) => {
                    let remaining = conflicts_difference(&conflicts, &allowed);
                    if !remaining.is_empty() {
                        return Err(conflict_error(&remaining));
                    }
                    attempt(true).map_err(|c| conflict_error(&c))?
                }
                None => return Err(conflict_error(&conflicts)),
            }
        }
    };
    if req.field_manager == KUBECTL && last_applied(&object).is_some() {
        set_last_applied(&mut object, build_last_applied(&original));
    }
    encode(&mut object, &managed);
    Ok(Applied { object })
}

/// Skip-non-applied, manager identifier, time, meta stripping and the
/// structured merge, for one attempt.
fn apply_layers(
    updater: &Updater<'_>,
    req: &ApplyRequest<'_>,
    live: &Value,
    config: &Value,
    mut managed: Managed,
    force: bool,
) -> Result<(Value, Managed), Conflicts> {
    if managed.is_empty() {
        // Whoever wrote the untracked object owns what it has.
        update_managed(
            updater,
            &empty_like(config),
            live,
            &mut managed,
            BEFORE_FIRST_APPLY,
            req.now,
        );
    }
    let id = identifier(req.field_manager, Operation::Apply, req.api_version, "");
    let entry = Entry {
        manager: req.field_manager.to_string(),
        operation: Operation::Apply,
        subresource: String::new(),
        api_version: req.api_version.to_string(),
        time: None,
        set: Set::new(),
    };
    let merged = updater.apply(live, config, &mut managed, entry, &id, force)?;
    strip_entry(&mut managed, &id);
    let object = match merged {
        Some(mut object) => {
            if let Some(e) = managed.entries.get_mut(&id) {
                e.time = Some(req.now.to_string());
            }
            drop_null_metadata(&mut object);
            object
        }
        None => live.clone(),
    };
    Ok((object, managed))
}

fn str_at<'v>(v: &'v Value, pointer: &str) -> &'v str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `schema.GroupVersionKind.String()` of an apiVersion and kind.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [""] => ("", ""),
        [v] => ("", *v),
        [g, v] => (*g, *v),
        _ => ("", ""),
    };
    format!("{group}/{version}, Kind={kind}")
}

/// An apply's configuration: its body read as JSON, or else as YAML the
/// way sigs.k8s.io/yaml does.
pub fn applied_configuration(body: &[u8]) -> Result<Value, PatchError> {
    let decode_error = |e: String| PatchError::bad_request(format!("error decoding patch: {e}"));
    let starts_json = body
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    let parsed = match starts_json
        .then(|| serde_json::from_slice::<Value>(body).ok())
        .flatten()
    {
        Some(v) => v,
        None => {
            let text = std::str::from_utf8(body).map_err(|e| decode_error(e.to_string()))?;
            if text.trim().is_empty() {
                Value::Null
            } else {
                let mut options = crate::golang::yaml::yaml_v2_options();
                options.emit_comments = false;
                serde_saphyr::from_str_with_options::<Value>(text, options)
                    .map_err(|e| decode_error(e.to_string()))?
            }
        }
    };
    match parsed {
        Value::Object(_) => Ok(parsed),
        Value::Null => Ok(Value::Object(Map::new())),
        other => Err(decode_error(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                _ => "bool",
            }
        ))),
    }
}

/// Labels and annotations are strings; a `null` one applied means none.
fn drop_null_metadata(object: &mut Value) {
    let Some(Value::Object(meta)) = object.get_mut("metadata") else {
        return;
    };
    for key in ["labels", "annotations"] {
        match meta.get_mut(key) {
            Some(Value::Null) => {
                meta.shift_remove(key);
            }
            Some(Value::Object(m)) => m.retain(|_, v| !v.is_null()),
            _ => {}
        }
    }
}

/// The 409 for conflicts, worded as kube-apiserver words it.
fn conflict_error(conflicts: &Conflicts) -> PatchError {
    let mut flat: Vec<(String, String)> = Vec::new();
    for (who, set) in conflicts.values() {
        for path in set.paths() {
            flat.push((who.clone(), PathDisplay(&path).to_string()));
        }
    }
    let causes = flat
        .iter()
        .map(|(who, path)| Cause {
            reason: "FieldManagerConflict".to_string(),
            message: format!("conflict with {who}"),
            field: path.clone(),
        })
        .collect();
    let message = if let [(who, path)] = flat.as_slice() {
        format!("Apply failed with 1 conflict: conflict with {who}: {path}")
    } else {
        let mut lines = Vec::new();
        for (who, set) in conflicts.values() {
            lines.push(format!("conflicts with {who}:"));
            for path in set.paths() {
                lines.push(format!("- {}", PathDisplay(&path)));
            }
        }
        format!(
            "Apply failed with {} conflicts: {}",
            flat.len(),
            lines.join("\n")
        )
    };
    PatchError::conflict(message, causes)
}

fn last_applied(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Fields of the last-applied annotation that still hold their applied
/// values: conflicts on them are the client-side applier's own.
fn allowed_conflicts_from_last_applied(updater: &Updater<'_>, live: &Value) -> Option<Set> {
    let last = serde_json::from_str::<Value>(last_applied(live)?).ok()?;
    if !last.is_object() || str_at(&last, "/apiVersion") != updater.version() {
        return None;
    }
    validate_config(updater.root(), &last).ok()?;
    let set = to_field_set(updater.root(), &last);
    let cmp = compare(updater.root(), &last, live);
    Some(
        set.difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

fn conflicts_difference(conflicts: &Conflicts, allowed: &Set) -> Conflicts {
    let mut out = Conflicts::new();
    for (id, (who, set)) in conflicts {
        let paths: Vec<Vec<PathElement>> = set
            .paths()
            .into_iter()
            .filter(|p| !allowed.has(p))
            .collect();
        if !paths.is_empty() {
            let set = Set::from_paths(paths.iter().map(Vec::as_slice));
            out.insert(id.clone(), (who.clone(), set));
        }
    }
    out
}

/// The annotation kubectl would write for this configuration: the object
/// without the annotation itself, keys sorted, newline-terminated.
fn build_last_applied(config: &Value) -> String {
    let mut copy = config.clone();
    if let Some(Value::Object(annotations)) = copy.pointer_mut("/metadata/annotations") {
        annotations.shift_remove(LAST_APPLIED);
    }
    let mut s = String::new();
    Dialect::EncodingJson.write_value(&mut s, &copy);
    s.push('\n');
    s
}

fn set_last_applied(obj: &mut Value, value: String) {
    let Some(Value::Object(annotations)) = obj.pointer_mut("/metadata/annotations") else {
        return;
    };
    annotations.insert(LAST_APPLIED.to_string(), Value::String(value));
    let size: usize = annotations
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        annotations.shift_remove(LAST_APPLIED);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::patch::record_update_with_schema;
    use serde_json::json;

    const V: &str = "apps.cozystack.io/v1alpha1";
    const T1: &str = "2024-01-01T00:00:00Z";
    const T2: &str = "2024-01-02T00:00:00Z";
    const T3: &str = "2024-01-03T00:00:00Z";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "version": {"type": "string"},
                "users": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "role": {"type": "string"}
                    }}
                },
                "extensions": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "values": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "flags": {"type": "object", "additionalProperties": {"type": "string"}}
            }
        })
    }

    fn apply(
        current: Option<&Value>,
        body: Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, PatchError> {
        apply_raw(current, body.to_string().as_bytes(), manager, force, now)
    }

    fn apply_raw(
        current: Option<&Value>,
        body: &[u8],
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, PatchError> {
        let schema = schema();
        server_side_apply(&ApplyRequest {
            current,
            body,
            field_manager: manager,
            force,
            schema: &schema,
            now,
            api_version: V,
        })
        .map(|a| a.object)
    }

    fn cfg(spec: Value) -> Value {
        json!({"apiVersion": V, "kind": "Postgres", "metadata": {"name": "db", "namespace": "ns"}, "spec": spec})
    }

    /// kube-apiserver 1.36: 500, no reason, structured-merge-diff's
    /// message, for a field the schema does not declare; free-form places
    /// (preserved unknown fields, additionalProperties) take anything.
    #[test]
    fn undeclared_fields_are_500() {
        let prefix = "failed to create typed patch object (ns/db; apps.cozystack.io/v1alpha1, Kind=Postgres): ";
        for (config, path) in [
            (cfg(json!({"sepc": 1})), ".spec.sepc"),
            (
                cfg(json!({"users": [{"name": "a", "zz": 1}]})),
                ".spec.users[name=\"a\"].zz",
            ),
            (
                json!({"apiVersion": V, "kind": "Postgres", "metadata": {"name": "db", "namespace": "ns", "lables": {}}, "spec": {}}),
                ".metadata.lables",
            ),
            (
                json!({"apiVersion": V, "kind": "Postgres", "metadata": {"name": "db", "namespace": "ns"}, "spec": {}, "sepc": 1}),
                ".sepc",
            ),
            (
                json!({"apiVersion": V, "kind": "Postgres", "metadata": {"name": "db", "namespace": "ns"}, "status": {"foo": 1}}),
                ".status.foo",
            ),
        ] {
            for (current, force) in [(None, false), (None, true)] {
                let e = apply(current, config.clone(), "a", force, T1).unwrap_err();
                assert_eq!((e.code, e.reason), (500, ""), "{config}");
                assert_eq!(
                    e.message,
                    format!("{prefix}{path}: field not declared in schema")
                );
                assert!(e.causes.is_empty());
            }
        }
        // The first undeclared key of a map ends its walk; other maps go on.
        let e = apply(
            None,
            json!({"apiVersion": V, "kind": "Postgres", "metadata": {"name": "db", "namespace": "ns", "zz": 1},
                   "spec": {"a": 1, "b": 2}}),
            "a",
            false,
            T1,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "{prefix}errors:\n  .metadata.zz: field not declared in schema\n  .spec.a: field not declared in schema"
            )
        );
        let ok = apply(
            None,
            cfg(json!({"values": {"x": {"y": 1}}, "flags": {"any": "x"}})),
            "a",
            false,
            T1,
        )
        .unwrap();
        assert_eq!(ok["spec"]["values"]["x"]["y"], 1);
    }

    /// What the store would do on create: server-set metadata.
    fn stored(mut obj: Value) -> Value {
        obj["metadata"]["uid"] = json!("u1");
        obj["metadata"]["resourceVersion"] = json!("1");
        obj
    }

    fn entry<'v>(obj: &'v Value, manager: &str, operation: &str) -> &'v Value {
        obj["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["manager"] == manager && e["operation"] == operation)
            .unwrap_or_else(|| panic!("no {operation} entry for {manager}: {obj}"))
    }

    #[test]
    fn apply_creates() {
        let mut body = cfg(json!({"replicas": 1}));
        body["metadata"]["labels"] = json!({"app": "db"});
        let obj = apply(None, body, "alice", false, T1).unwrap();
        assert_eq!(
            obj,
            json!({
                "apiVersion": V, "kind": "Postgres",
                "metadata": {
                    "name": "db", "namespace": "ns", "labels": {"app": "db"},
                    "managedFields": [{
                        "manager": "alice", "operation": "Apply", "apiVersion": V, "time": T1,
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}}
                    }]
                },
                "spec": {"replicas": 1}
            })
        );
    }

    #[test]
    fn reapply_without_a_field_removes_it() {
        let obj = stored(
            apply(
                None,
                cfg(json!({"replicas": 1, "version": "16"})),
                "alice",
                false,
                T1,
            )
            .unwrap(),
        );
        let obj = apply(Some(&obj), cfg(json!({"replicas": 2})), "alice", false, T2).unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 2}));
        assert_eq!(
            entry(&obj, "alice", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
        assert_eq!(entry(&obj, "alice", "Apply")["time"], T2);
        // Server-set metadata survives the prune.
        assert_eq!(obj["metadata"]["uid"], "u1");
        assert_eq!(obj["metadata"]["name"], "db");
    }

    #[test]
    fn field_owned_by_another_applier_is_not_removed() {
        let obj = stored(
            apply(
                None,
                cfg(json!({"replicas": 1, "version": "16"})),
                "alice",
                false,
                T1,
            )
            .unwrap(),
        );
        let obj = apply(Some(&obj), cfg(json!({"version": "16"})), "bob", false, T2).unwrap();
        // Same value: shared, no conflict.
        assert_eq!(
            entry(&obj, "bob", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:version": {}}})
        );
        assert_eq!(
            entry(&obj, "alice", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}, "f:version": {}}})
        );
        let obj = apply(Some(&obj), cfg(json!({"replicas": 1})), "alice", false, T3).unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 1, "version": "16"}));
        // Bob applies nothing of spec any more.
        let mut empty = cfg(json!({}));
        empty.as_object_mut().unwrap().remove("spec");
        let obj = apply(Some(&obj), empty, "bob", false, T3).unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 1}));
        assert_eq!(
            obj["metadata"]["managedFields"].as_array().unwrap().len(),
            1
        );
        // Applying an empty map owns the map itself.
        let obj = apply(Some(&obj), cfg(json!({})), "bob", false, T3).unwrap();
        assert_eq!(
            entry(&obj, "bob", "Apply")["fieldsV1"],
            json!({"f:spec": {}})
        );
    }

    #[test]
    fn conflicts_and_force() {
        let obj = stored(
            apply(
                None,
                cfg(json!({"replicas": 1, "version": "16"})),
                "alice",
                false,
                T1,
            )
            .unwrap(),
        );
        let e = apply(Some(&obj), cfg(json!({"replicas": 3})), "bob", false, T2).unwrap_err();
        assert_eq!((e.code, e.reason), (409, "Conflict"));
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
        );
        assert_eq!(
            e.causes,
            vec![Cause {
                reason: "FieldManagerConflict".into(),
                message: "conflict with \"alice\"".into(),
                field: ".spec.replicas".into()
            }]
        );
        let e = apply(
            Some(&obj),
            cfg(json!({"replicas": 3, "version": "17"})),
            "bob",
            false,
            T2,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.replicas\n- .spec.version"
        );
        assert_eq!(e.causes.len(), 2);

        let obj = apply(Some(&obj), cfg(json!({"replicas": 3})), "bob", true, T2).unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 3, "version": "16"}));
        assert_eq!(
            entry(&obj, "alice", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:version": {}}})
        );
        assert_eq!(
            entry(&obj, "bob", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
        // Alice no longer owns replicas: dropping it from her config keeps it.
        let obj = apply(
            Some(&obj),
            cfg(json!({"version": "16"})),
            "alice",
            false,
            T3,
        )
        .unwrap();
        assert_eq!(obj["spec"]["replicas"], 3);
    }

    #[test]
    fn conflict_with_an_updater_names_its_version() {
        let schema = schema();
        let mut obj = stored(cfg(json!({"replicas": 1})));
        record_update_with_schema(None, &mut obj, "kubectl-client-side-apply", T1, V, &schema);
        let e = apply(Some(&obj), cfg(json!({"replicas": 2})), "ssa", false, T2).unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps.cozystack.io/v1alpha1: .spec.replicas"
        );
        // The same value is no conflict.
        assert!(apply(Some(&obj), cfg(json!({"replicas": 1})), "ssa", false, T2).is_ok());
    }

    #[test]
    fn update_takes_ownership_from_applier() {
        let schema = schema();
        let obj = stored(apply(None, cfg(json!({"replicas": 1})), "alice", false, T1).unwrap());
        let mut scaled = obj.clone();
        scaled["spec"]["replicas"] = json!(5);
        record_update_with_schema(Some(&obj), &mut scaled, "hpa", T2, V, &schema);
        assert_eq!(
            entry(&scaled, "hpa", "Update")["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
        assert!(
            scaled["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["manager"] != "alice"),
            "alice's entry emptied out: {scaled}"
        );
        let e = apply(
            Some(&scaled),
            cfg(json!({"replicas": 1})),
            "alice",
            false,
            T3,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"hpa\" using apps.cozystack.io/v1alpha1: .spec.replicas"
        );
    }

    #[test]
    fn associative_list_merges_by_key() {
        let users = |v: Value| cfg(json!({"users": v}));
        let obj = stored(
            apply(
                None,
                users(json!([{"name": "a", "role": "r"}])),
                "alice",
                false,
                T1,
            )
            .unwrap(),
        );
        let obj = apply(Some(&obj), users(json!([{"name": "b"}])), "bob", false, T2).unwrap();
        assert_eq!(
            obj["spec"]["users"],
            json!([{"name": "a", "role": "r"}, {"name": "b"}])
        );
        assert_eq!(
            entry(&obj, "bob", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:users": {"k:{\"name\":\"b\"}": {".": {}, "f:name": {}}}}})
        );
        // Alice changes her item and drops nothing of Bob's.
        let obj = apply(
            Some(&obj),
            users(json!([{"name": "a", "role": "s"}])),
            "alice",
            false,
            T3,
        )
        .unwrap();
        assert_eq!(
            obj["spec"]["users"],
            json!([{"name": "a", "role": "s"}, {"name": "b"}])
        );
        // Alice removing her item removes only hers.
        let obj = apply(Some(&obj), users(json!([])), "alice", false, T3).unwrap();
        assert_eq!(obj["spec"]["users"], json!([{"name": "b"}]));
        let e = apply(
            Some(&obj),
            users(json!([{"name": "b", "role": "x"}, {"name": "a"}])),
            "carol",
            false,
            T3,
        );
        assert!(e.is_ok(), "{e:?}");
    }

    #[test]
    fn set_merges_by_value_and_atomic_list_is_replaced() {
        let obj = stored(
            apply(
                None,
                cfg(json!({"extensions": ["a", "b"], "args": ["-x", "-y"]})),
                "alice",
                false,
                T1,
            )
            .unwrap(),
        );
        let obj = apply(
            Some(&obj),
            cfg(json!({"extensions": ["c", "a"]})),
            "bob",
            false,
            T2,
        )
        .unwrap();
        assert_eq!(obj["spec"]["extensions"], json!(["c", "a", "b"]));
        assert_eq!(
            entry(&obj, "bob", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:extensions": {"v:\"a\"": {}, "v:\"c\"": {}}}})
        );
        let e = apply(Some(&obj), cfg(json!({"args": ["-z"]})), "bob", false, T2).unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"alice\": .spec.args"
        );
        let obj = apply(
            Some(&obj),
            cfg(json!({"extensions": ["c", "a"], "args": ["-z"]})),
            "bob",
            true,
            T2,
        )
        .unwrap();
        assert_eq!(obj["spec"]["args"], json!(["-z"]));
        assert_eq!(
            entry(&obj, "alice", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:extensions": {"v:\"a\"": {}, "v:\"b\"": {}}}})
        );
        // Alice drops "b", still owns "a" with Bob.
        let obj = apply(
            Some(&obj),
            cfg(json!({"extensions": ["a"]})),
            "alice",
            false,
            T3,
        )
        .unwrap();
        assert_eq!(obj["spec"]["extensions"], json!(["c", "a"]));
    }

    #[test]
    fn unknown_fields_are_granular_maps() {
        let obj = stored(
            apply(
                None,
                cfg(json!({"values": {"a": {"x": 1}}})),
                "alice",
                false,
                T1,
            )
            .unwrap(),
        );
        assert_eq!(
            entry(&obj, "alice", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:values": {"f:a": {".": {}, "f:x": {}}}}})
        );
        let obj = apply(
            Some(&obj),
            cfg(json!({"values": {"a": {"y": [1]}}})),
            "bob",
            false,
            T2,
        )
        .unwrap();
        assert_eq!(obj["spec"]["values"], json!({"a": {"x": 1, "y": [1]}}));
    }

    #[test]
    fn noop_apply_keeps_object_and_time() {
        let obj = stored(apply(None, cfg(json!({"replicas": 1})), "alice", false, T1).unwrap());
        let again = apply(Some(&obj), cfg(json!({"replicas": 1})), "alice", false, T2).unwrap();
        assert_eq!(again, obj);
        // A new co-owner of unchanged fields gets an entry without time.
        let shared = apply(Some(&obj), cfg(json!({"replicas": 1})), "bob", false, T2).unwrap();
        assert!(entry(&shared, "bob", "Apply").get("time").is_none());
        assert_eq!(shared["spec"], obj["spec"]);
    }

    #[test]
    fn untracked_object_gets_before_first_apply() {
        let obj = stored(cfg(json!({"replicas": 1, "version": "16"})));
        let e = apply(Some(&obj), cfg(json!({"replicas": 2})), "alice", false, T1).unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"before-first-apply\" using apps.cozystack.io/v1alpha1: .spec.replicas"
        );
        let out = apply(Some(&obj), cfg(json!({"replicas": 1})), "alice", false, T1).unwrap();
        assert_eq!(
            entry(&out, "before-first-apply", "Update")["fieldsV1"],
            json!({"f:spec": {".": {}, "f:replicas": {}, "f:version": {}}})
        );
        assert_eq!(
            entry(&out, "alice", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
    }

    #[test]
    fn kubectl_upgrade_from_client_side_apply() {
        let schema = schema();
        let mut live = stored(cfg(json!({"replicas": 1})));
        let last = "{\"apiVersion\":\"apps.cozystack.io/v1alpha1\",\"kind\":\"Postgres\",\"metadata\":{\"name\":\"db\",\"namespace\":\"ns\"},\"spec\":{\"replicas\":1}}\n";
        live["metadata"]["annotations"] = json!({LAST_APPLIED: last});
        record_update_with_schema(None, &mut live, "kubectl-client-side-apply", T1, V, &schema);
        let out = apply(
            Some(&live),
            cfg(json!({"replicas": 2})),
            "kubectl",
            false,
            T2,
        )
        .unwrap();
        assert_eq!(out["spec"]["replicas"], 2);
        assert_eq!(
            out["metadata"]["annotations"][LAST_APPLIED],
            "{\"apiVersion\":\"apps.cozystack.io/v1alpha1\",\"kind\":\"Postgres\",\"metadata\":{\"name\":\"db\",\"namespace\":\"ns\"},\"spec\":{\"replicas\":2}}\n"
        );
        assert_eq!(
            entry(&out, "kubectl", "Apply")["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
        // A field that no longer matches the annotation still conflicts.
        let mut drifted = live.clone();
        drifted["spec"]["replicas"] = json!(7);
        let e = apply(
            Some(&drifted),
            cfg(json!({"replicas": 2})),
            "kubectl",
            false,
            T2,
        )
        .unwrap_err();
        assert_eq!(e.code, 409);
        // Another manager does not get the upgrade path.
        let e = apply(Some(&live), cfg(json!({"replicas": 2})), "other", false, T2).unwrap_err();
        assert_eq!(e.code, 409);
    }

    #[test]
    fn yaml_bodies() {
        let body = b"apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: db\nspec:\n  version: \"on\"\n  flags:\n    a: \"no\"\n    b: 'yes'\n  values:\n    plain: on\n    octal: 0755\n";
        let obj = apply_raw(None, body, "alice", false, T1).unwrap();
        assert_eq!(obj["spec"]["version"], "on");
        assert_eq!(obj["spec"]["flags"], json!({"a": "no", "b": "yes"}));
        // Unquoted, YAML 1.1 as in sigs.k8s.io/yaml.
        assert_eq!(obj["spec"]["values"], json!({"plain": true, "octal": 493}));

        let e = apply_raw(None, b"kind: [", "alice", false, T1).unwrap_err();
        assert_eq!(e.code, 400);
        assert!(
            e.message.starts_with("error decoding patch: "),
            "{}",
            e.message
        );
        let e = apply_raw(None, b"- a\n- b\n", "alice", false, T1).unwrap_err();
        assert_eq!(
            e.message,
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
    }

    #[test]
    fn request_errors() {
        let e = apply(None, cfg(json!({})), "", false, T1).unwrap_err();
        assert_eq!((e.code, e.causes[0].field.as_str()), (422, "fieldManager"));

        let mut wrong = cfg(json!({}));
        wrong["apiVersion"] = json!("apps.cozystack.io/v1");
        let e = apply(None, wrong, "a", false, T1).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "invalid object type: apps.cozystack.io/v1, Kind=Postgres"
            )
        );
        let current = stored(cfg(json!({})));
        let mut other_kind = cfg(json!({}));
        other_kind["kind"] = json!("Redis");
        let e = apply(Some(&current), other_kind, "a", false, T1).unwrap_err();
        assert_eq!(
            e.message,
            "invalid object type: apps.cozystack.io/v1alpha1, Kind=Redis"
        );
        let e = apply_raw(Some(&current), b"", "a", false, T1).unwrap_err();
        assert_eq!(e.message, "invalid object type: /, Kind=");

        let mut mf = cfg(json!({}));
        mf["metadata"]["managedFields"] = json!([]);
        let e = apply(Some(&current), mf, "a", false, T1).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "metadata.managedFields must be nil")
        );

        let mut nameless = cfg(json!({}));
        nameless["metadata"] = json!({});
        let e = apply(None, nameless.clone(), "a", false, T1).unwrap_err();
        assert_eq!(e.code, 400);
        // An existing object keeps its name.
        let out = apply(Some(&current), nameless, "a", false, T1).unwrap();
        assert_eq!(out["metadata"]["name"], "db");

        let e = apply(
            None,
            cfg(json!({"users": [{"name": "a"}, {"name": "a"}]})),
            "a",
            false,
            T1,
        )
        .unwrap_err();
        assert_eq!((e.code, e.reason), (500, ""));
        assert_eq!(
            e.message,
            "failed to create typed patch object (ns/db; apps.cozystack.io/v1alpha1, Kind=Postgres): .spec.users: duplicate entries for key [name=\"a\"]"
        );

        let mut broken = current.clone();
        broken["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Update", "apiVersion": V, "fieldsType": "FieldsV2"}]);
        let e = apply(Some(&broken), cfg(json!({})), "a", false, T1).unwrap_err();
        assert_eq!(e.code, 500);
    }

    #[test]
    fn status_and_null_labels() {
        let mut body = cfg(json!({"replicas": 1}));
        body["status"] = json!({"version": "x"});
        body["metadata"]["labels"] = json!({"a": "1", "b": null});
        let obj = apply(None, body, "alice", false, T1).unwrap();
        assert!(obj.get("status").is_none());
        assert_eq!(obj["metadata"]["labels"], json!({"a": "1"}));
        assert_eq!(
            entry(&obj, "alice", "Apply")["fieldsV1"],
            json!({"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}, "f:spec": {"f:replicas": {}}})
        );
        let mut live = stored(obj);
        live["status"] = json!({"phase": "Ready"});
        let out = apply(Some(&live), cfg(json!({"replicas": 2})), "alice", false, T2).unwrap();
        assert_eq!(out["status"], json!({"phase": "Ready"}));
        assert!(
            out["metadata"]
                .get("labels")
                .is_none_or(|l| l == &json!({})),
            "{out}"
        );
    }

    #[test]
    fn key_order_follows_the_live_object() {
        let obj = stored(
            apply(
                None,
                cfg(json!({"version": "16", "replicas": 1})),
                "alice",
                false,
                T1,
            )
            .unwrap(),
        );
        let out = apply(
            Some(&obj),
            cfg(json!({"users": [], "replicas": 2, "version": "16"})),
            "alice",
            false,
            T2,
        )
        .unwrap();
        let keys: Vec<&String> = out["spec"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["version", "replicas", "users"]);
        let top: Vec<&String> = out.as_object().unwrap().keys().collect();
        assert_eq!(top, ["apiVersion", "kind", "metadata", "spec"]);
    }

    #[test]
    fn resource_version_in_config_is_kept() {
        let obj = stored(apply(None, cfg(json!({"replicas": 1})), "alice", false, T1).unwrap());
        let mut body = cfg(json!({"replicas": 2}));
        body["metadata"]["resourceVersion"] = json!("0");
        let out = apply(Some(&obj), body, "alice", false, T2).unwrap();
        assert_eq!(out["metadata"]["resourceVersion"], "0");
    }
}
