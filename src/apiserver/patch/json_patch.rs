//! JSON patch (RFC 6902) and merge patch (RFC 7386) on a stored object, with
//! kube-apiserver's status codes, using the `json-patch` crate.
//!
//! - A body that does not decode is 400 `BadRequest`: for JSON patch, not a
//!   JSON array of objects; for merge patch, not a JSON object (`error
//!   decoding patch: json: cannot unmarshal array into Go value of type
//!   map[string]interface {}` as kube-apiserver words it; `null` is
//!   evanphx/json-patch's `Invalid JSON Patch`).
//! - More than 10,000 JSON patch operations is 413.
//! - An operation that cannot be applied — a failed `test`, a missing path,
//!   an unknown `op` — is 422 `Invalid` with kube-apiserver's message "the
//!   server rejected our request due to an error in our request"; the
//!   detail is in a cause on the field `patch`.
//! - A result that is not a JSON object is 422 `Invalid`, as when
//!   kube-apiserver fails to decode it.
//!
//! `test` compares numbers by value (`1` equals `1.0`). serde_json's
//! `preserve_order` makes removals reorder keys (`swap_remove`), so the
//! result gets the current object's key order back.

use serde_json::{Map, Value};

use super::fieldpath::values_equal;
use super::{Cause, PatchError, PatchKind};
use crate::golang::quote as go_quote;

/// kube-apiserver's `maxJSONPatchOperations`.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// kube-apiserver's default `--json-patch-max-copy-bytes`
/// (evanphx/json-patch's `AccumulatedCopySizeLimit`).
const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// The deepest nesting of arrays and objects a patch may produce: what
/// serde_json reads back (its recursion limit). Beyond it a result could
/// not be stored, and walking it could exhaust the stack.
pub(crate) const MAX_DEPTH: usize = 127;

const REJECTED: &str = "the server rejected our request due to an error in our request";

/// JSON patch or merge patch on an existing object. Returns the patched
/// object; metadata.resourceVersion present in the patch body stays in the
/// result so the caller can use it as a precondition.
///
/// The caller checks that the result keeps the name and namespace of the
/// URL (kube-apiserver: 400 `BadRequest`), its apiVersion and kind, and
/// validates it. [`PatchKind::Apply`] is not a patch of this kind: it is a
/// 500 here, use [`super::server_side_apply`].
pub fn apply_patch(kind: PatchKind, current: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let mut patched = match kind {
        PatchKind::Json => json_patch(current, body)?,
        PatchKind::Merge => merge_patch(current, body)?,
        PatchKind::Apply => {
            return Err(PatchError::internal(
                "apply patches are handled by server-side apply",
            ));
        }
    };
    if !patched.is_object() {
        let json = serde_json::to_string(&patched).unwrap_or_default();
        let detail = "the patched object must be a JSON object";
        return Err(PatchError::invalid(
            format!(
                " \"\" is invalid: patch: Invalid value: {}: {detail}",
                go_quote(&json)
            ),
            vec![Cause {
                reason: "FieldValueInvalid".to_string(),
                message: format!("Invalid value: {}: {detail}", go_quote(&json)),
                field: "patch".to_string(),
            }],
        ));
    }
    restore_order(current, &mut patched);
    Ok(patched)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn rejected(detail: String) -> PatchError {
    PatchError::invalid(
        REJECTED,
        vec![Cause {
            reason: "FieldValueInvalid".to_string(),
            message: detail,
            field: "patch".to_string(),
        }],
    )
}

fn json_patch(current: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let ops = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(ops)) => ops,
        Ok(other) => {
            return Err(PatchError::bad_request(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
                json_type(&other)
            )));
        }
        Err(e) => return Err(PatchError::bad_request(e.to_string())),
    };
    if let Some(op) = ops.iter().find(|op| !op.is_object()) {
        return Err(PatchError::bad_request(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
            json_type(op)
        )));
    }
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::too_large(format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    let mut doc = current.clone();
    // An upper bound of the document's depth, kept without walking it.
    let mut depth_bound = depth(&doc);
    let mut copied = 0usize;
    for (i, raw) in ops.into_iter().enumerate() {
        let op: json_patch::PatchOperation =
            serde_json::from_value(raw).map_err(|e| rejected(format!("operation {i}: {e}")))?;
        // Checked before the operation runs: copies clone, and deep values
        // are dropped recursively.
        let needed = match &op {
            json_patch::PatchOperation::Add(a) => pointer_len(a.path.as_str()) + depth(&a.value),
            json_patch::PatchOperation::Replace(r) => {
                pointer_len(r.path.as_str()) + depth(&r.value)
            }
            json_patch::PatchOperation::Move(m) => {
                pointer_len(m.path.as_str())
                    + depth_bound.saturating_sub(pointer_len(m.from.as_str()))
            }
            json_patch::PatchOperation::Copy(c) => match doc.pointer(c.from.as_str()) {
                Some(source) => {
                    copied = copied.saturating_add(json_size(source));
                    if copied > MAX_COPY_BYTES {
                        return Err(rejected(format!(
                            "operation {i}: Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
                        )));
                    }
                    pointer_len(c.path.as_str()) + depth(source)
                }
                None => 0,
            },
            json_patch::PatchOperation::Remove(_) | json_patch::PatchOperation::Test(_) => 0,
        };
        if needed > MAX_DEPTH {
            return Err(rejected(format!(
                "operation {i}: the result would nest deeper than {MAX_DEPTH} levels"
            )));
        }
        depth_bound = depth_bound.max(needed);
        if let json_patch::PatchOperation::Test(t) = &op {
            match doc.pointer(t.path.as_str()) {
                Some(actual) if values_equal(actual, &t.value) => {}
                Some(_) => {
                    return Err(rejected(format!(
                        "operation {i}: testing value {} failed",
                        t.path
                    )));
                }
                None => {
                    return Err(rejected(format!(
                        "operation {i}: unable to test nonexistent key {}",
                        t.path
                    )));
                }
            }
            continue;
        }
        // One operation at a time on our own copy: the error names the
        // operation, and a failure just drops the copy.
        json_patch::patch_unsafe(&mut doc, std::slice::from_ref(&op))
            .map_err(|e| rejected(format!("operation {i}: {} at path {}", e.kind, e.path)))?;
    }
    Ok(doc)
}

/// The number of reference tokens of a JSON pointer.
fn pointer_len(pointer: &str) -> usize {
    pointer.bytes().filter(|b| *b == b'/').count()
}

/// The nesting depth of arrays and objects (a scalar is 0), computed
/// without recursion.
pub(crate) fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(items) => {
                max = max.max(d + 1);
                stack.extend(items.iter().map(|x| (x, d + 1)));
            }
            Value::Object(map) => {
                max = max.max(d + 1);
                stack.extend(map.values().map(|x| (x, d + 1)));
            }
            _ => {}
        }
    }
    max
}

/// The length of a value's JSON, without building it.
fn json_size(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

fn merge_patch(current: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let patch = match serde_json::from_slice::<Value>(body) {
        Ok(p @ Value::Object(_)) => p,
        // kube-apiserver decodes the patch into a map first: `null` makes
        // a nil map, which evanphx/json-patch then refuses.
        Ok(Value::Null) => return Err(PatchError::bad_request("Invalid JSON Patch")),
        Ok(other) => {
            return Err(PatchError::bad_request(format!(
                "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_type(&other)
            )));
        }
        Err(e) => {
            return Err(PatchError::bad_request(format!(
                "error decoding patch: {e}"
            )));
        }
    };
    let mut doc = current.clone();
    json_patch::merge(&mut doc, &patch);
    Ok(doc)
}

/// Puts the keys of every object in `patched` back in the order they have
/// in `original`, new keys last (in the patch's order). A map already in
/// that order (what a patch that only changes values leaves) is not
/// rebuilt; one that is not is rebuilt in one pass.
fn restore_order(original: &Value, patched: &mut Value) {
    match (original, patched) {
        (Value::Object(o), Value::Object(p)) => {
            if !in_original_order(o, p) {
                let new_keys: Vec<String> =
                    p.keys().filter(|k| !o.contains_key(*k)).cloned().collect();
                let mut taken = std::mem::take(p);
                for key in o.keys().chain(&new_keys) {
                    if let Some((key, v)) = taken.remove_entry(key) {
                        p.insert(key, v);
                    }
                }
            }
            for (key, v) in p.iter_mut() {
                if let Some(orig) = o.get(key) {
                    restore_order(orig, v);
                }
            }
        }
        (Value::Array(o), Value::Array(p)) => {
            for (orig, v) in o.iter().zip(p.iter_mut()) {
                restore_order(orig, v);
            }
        }
        _ => {}
    }
}

/// Whether the keys of `patched` that `original` has come in `original`'s
/// order, before every key it does not have.
fn in_original_order(original: &Map<String, Value>, patched: &Map<String, Value>) -> bool {
    let mut original_keys = original.keys();
    let mut new_seen = false;
    for key in patched.keys() {
        if original.contains_key(key) {
            // Later in `original` than the previous shared key, and no new key before it.
            if new_seen || !original_keys.any(|k| k == key) {
                return false;
            }
        } else {
            new_seen = true;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn current() -> Value {
        json!({
            "apiVersion": "apps.cozystack.io/v1alpha1",
            "kind": "Postgres",
            "metadata": {"name": "db", "resourceVersion": "7", "labels": {"a": "1", "b": "2", "c": "3"}},
            "spec": {"replicas": 1, "size": "10Gi", "users": ["x", "y"]}
        })
    }

    fn json_patch_of(body: Value) -> Result<Value, PatchError> {
        apply_patch(PatchKind::Json, &current(), body.to_string().as_bytes())
    }

    #[test]
    fn json_patch_add_replace_remove() {
        let out = json_patch_of(json!([
            {"op": "add", "path": "/spec/users/-", "value": "z"},
            {"op": "replace", "path": "/spec/replicas", "value": 3},
            {"op": "remove", "path": "/metadata/labels/a"},
            {"op": "test", "path": "/spec/replicas", "value": 3.0},
            {"op": "copy", "from": "/spec/size", "path": "/spec/backupSize"},
            {"op": "move", "from": "/metadata/labels/b", "path": "/metadata/labels/d"}
        ]))
        .unwrap();
        assert_eq!(out["spec"]["users"], json!(["x", "y", "z"]));
        assert_eq!(out["spec"]["replicas"], json!(3));
        assert_eq!(out["spec"]["backupSize"], json!("10Gi"));
        assert_eq!(out["metadata"]["labels"], json!({"c": "3", "d": "2"}));
        // Key order survives removals (preserve_order's swap_remove).
        let keys: Vec<&String> = out["metadata"]["labels"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys, ["c", "d"]);
        let spec_keys: Vec<&String> = out["spec"].as_object().unwrap().keys().collect();
        assert_eq!(spec_keys, ["replicas", "size", "users", "backupSize"]);
        assert_eq!(out["metadata"]["resourceVersion"], "7");
    }

    #[test]
    fn json_patch_failures() {
        let e = json_patch_of(json!([{"op": "test", "path": "/spec/replicas", "value": 2}]))
            .unwrap_err();
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        assert_eq!(e.message, REJECTED);
        assert_eq!(
            e.causes[0].message,
            "operation 0: testing value /spec/replicas failed"
        );
        let e = json_patch_of(json!([
            {"op": "replace", "path": "/spec/replicas", "value": 5},
            {"op": "remove", "path": "/spec/nope"}
        ]))
        .unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.causes[0].message.starts_with("operation 1:"),
            "{:?}",
            e.causes
        );
        let e = json_patch_of(json!([{"op": "frobnicate", "path": "/spec"}])).unwrap_err();
        assert_eq!(e.code, 422);
        let e = json_patch_of(json!([{"op": "test", "path": "/nope", "value": 1}])).unwrap_err();
        assert_eq!(e.code, 422);

        let e = json_patch_of(json!({"op": "add"})).unwrap_err();
        assert_eq!((e.code, e.reason), (400, "BadRequest"));
        assert_eq!(
            e.message,
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        );
        let e = json_patch_of(json!([1])).unwrap_err();
        assert_eq!(e.code, 400);
        let e = apply_patch(PatchKind::Json, &current(), b"[{").unwrap_err();
        assert_eq!(e.code, 400);

        let e = json_patch_of(json!([{"op": "replace", "path": "", "value": [1]}])).unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.message
                .starts_with(" \"\" is invalid: patch: Invalid value: \"[1]\"")
        );

        let many: Vec<Value> = (0..10_001)
            .map(|_| json!({"op": "test", "path": "", "value": 1}))
            .collect();
        let e = json_patch_of(Value::Array(many)).unwrap_err();
        assert_eq!((e.code, e.reason), (413, "RequestEntityTooLarge"));
    }

    #[test]
    fn depth_limit_matches_serde_json() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH)).is_ok());
        assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH + 1)).is_err());
        let v: Value = serde_json::from_str(&nested(5)).unwrap();
        assert_eq!(depth(&v), 5);
        assert_eq!(depth(&json!(1)), 0);
    }

    #[test]
    fn json_patch_cannot_nest_without_bound() {
        // Each move nests the document one level deeper.
        let mut ops = vec![json!({"op": "add", "path": "/spec/n", "value": {}})];
        for _ in 0..200 {
            ops.push(json!({"op": "add", "path": "/spec/t", "value": {}}));
            ops.push(json!({"op": "move", "from": "/spec/n", "path": "/spec/t/n"}));
            ops.push(json!({"op": "move", "from": "/spec/t", "path": "/spec/n"}));
        }
        let e = json_patch_of(Value::Array(ops)).unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.causes[0].message.contains("deeper than"),
            "{:?}",
            e.causes
        );

        // Copies that double the document hit the copy limit.
        let mut ops = vec![json!({"op": "add", "path": "/spec/big", "value": "x".repeat(100_000)})];
        for i in 0..40 {
            ops.push(json!({"op": "copy", "from": "/spec", "path": format!("/metadata/c{i}")}));
        }
        let e = json_patch_of(Value::Array(ops)).unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.causes[0].message.contains("accumulated size"),
            "{:?}",
            e.causes
        );
    }

    #[test]
    fn merge_patch_with_null_removal() {
        let out = apply_patch(
            PatchKind::Merge,
            &current(),
            br#"{"metadata":{"resourceVersion":"6","labels":{"b":null,"e":"5"}},"spec":{"replicas":null,"users":["q"]}}"#,
        )
        .unwrap();
        assert_eq!(
            out["metadata"]["labels"],
            json!({"a": "1", "c": "3", "e": "5"})
        );
        let keys: Vec<&String> = out["metadata"]["labels"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys, ["a", "c", "e"]);
        assert_eq!(out["spec"], json!({"size": "10Gi", "users": ["q"]}));
        // The body's resourceVersion is kept for the caller's precondition.
        assert_eq!(out["metadata"]["resourceVersion"], "6");
    }

    /// kube-apiserver 1.36's answers (a CRD, `kubectl patch --type merge`).
    #[test]
    fn merge_patch_bad_bodies() {
        let map = "into Go value of type map[string]interface {}";
        for (body, message) in [
            (
                &b"[1,2]"[..],
                format!("error decoding patch: json: cannot unmarshal array {map}"),
            ),
            (
                b"\"x\"",
                format!("error decoding patch: json: cannot unmarshal string {map}"),
            ),
            (
                b"5",
                format!("error decoding patch: json: cannot unmarshal number {map}"),
            ),
            (
                b"true",
                format!("error decoding patch: json: cannot unmarshal bool {map}"),
            ),
            (b"null", "Invalid JSON Patch".to_owned()),
        ] {
            let e = apply_patch(PatchKind::Merge, &current(), body).unwrap_err();
            assert_eq!(
                (e.code, e.reason, e.message.as_str()),
                (400, "BadRequest", message.as_str())
            );
        }
        // Not JSON: kube-apiserver words Go's syntax error after the same prefix.
        for body in [&b"{"[..], b""] {
            let e = apply_patch(PatchKind::Merge, &current(), body).unwrap_err();
            assert_eq!((e.code, e.reason), (400, "BadRequest"));
            assert!(e.message.starts_with("error decoding patch: "), "{e}");
        }
        let e = apply_patch(PatchKind::Apply, &current(), b"{}").unwrap_err();
        assert_eq!(e.code, 500);
    }

    /// The order as first written: every map rebuilt, key by key.
    fn restore_order_by_rebuilding(original: &Value, patched: &mut Value) {
        match (original, patched) {
            (Value::Object(o), Value::Object(p)) => {
                let mut taken = std::mem::take(p);
                let mut ordered = Map::new();
                for key in o.keys() {
                    if let Some(v) = taken.shift_remove(key) {
                        ordered.insert(key.clone(), v);
                    }
                }
                ordered.extend(taken);
                for (key, v) in ordered.iter_mut() {
                    if let Some(orig) = o.get(key) {
                        restore_order_by_rebuilding(orig, v);
                    }
                }
                *p = ordered;
            }
            (Value::Array(o), Value::Array(p)) => {
                for (orig, v) in o.iter().zip(p.iter_mut()) {
                    restore_order_by_rebuilding(orig, v);
                }
            }
            _ => {}
        }
    }

    proptest::proptest! {
        /// Skipping maps already in order and rebuilding the others in one
        /// pass gives the order rebuilding every map gave, key for key.
        #[test]
        fn restored_order_is_the_rebuilt_order(
            original in proptest::collection::vec(0u8..12, 0..10),
            patched in proptest::collection::vec(0u8..16, 0..12),
            nested in proptest::prelude::any::<bool>(),
        ) {
            let map = |keys: &[u8], inner: &Value| -> Value {
                let mut m = Map::new();
                for k in keys {
                    m.insert(format!("k{k}"), inner.clone());
                }
                Value::Object(m)
            };
            let inner_original = if nested { map(&[3, 1, 2], &json!(1)) } else { json!(1) };
            let inner_patched = if nested { map(&[2, 5, 3], &json!(2)) } else { json!(2) };
            let original = map(&original, &inner_original);
            let patched = map(&patched, &inner_patched);
            let mut fast = patched.clone();
            restore_order(&original, &mut fast);
            let mut rebuilt = patched;
            restore_order_by_rebuilding(&original, &mut rebuilt);
            proptest::prop_assert_eq!(
                serde_json::to_string(&fast).unwrap(),
                serde_json::to_string(&rebuilt).unwrap()
            );
        }
    }
}
