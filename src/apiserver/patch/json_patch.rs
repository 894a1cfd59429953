//! JSON patch (RFC 6902) and merge patch (RFC 7386) on a stored object, as
//! kube-apiserver applies them to a custom resource: JSON patch with
//! gopkg.in/evanphx/json-patch.v4's semantics (its own, not the crate's),
//! merge patch with the `json-patch` crate.
//!
//! Decoding (400 `BadRequest`): unless `fieldValidation=Ignore`,
//! kube-apiserver first decodes the body strictly into its own operation
//! type, so its errors read `error decoding patch: ` and then Go's
//! (`invalid character 'x' looking for beginning of value`, `json: cannot
//! unmarshal object into Go value of type []handlers.jsonPatchOp`, `json:
//! cannot unmarshal number into Go struct field jsonPatchOp.op of type
//! string`); under Ignore only the library decodes (`json: cannot unmarshal
//! object into Go value of type jsonpatch.Patch`), and an `op` or `path`
//! of the wrong type is an operation that does not apply. `null` is an
//! empty patch. Unknown and repeated fields of an operation are strict
//! errors for the caller ([`json_patch_strict_errors`]). More than 10,000
//! operations is 413.
//!
//! An operation that does not apply is 422 `Invalid`, "the server rejected
//! our request due to an error in our request", with empty `details`: the
//! library's reason is not in kube-apiserver's answer (it is logged at
//! debug level here). What evanphx/json-patch.v4 allows, this allows: a
//! missing `value` is `null`; `replace` of a missing object key and `copy`
//! from one add `null`; array indices are Go integers (`-1` counts from the
//! end, `01` and `+1` are 1); a `test` of a missing or `null` member passes
//! against a missing or `null` value; `test` compares numbers as written
//! (`2` is not `2.0`). The root (`""`) can only be replaced (by an object
//! or array) or tested.
//!
//! A result that is not a JSON object is 422 `Invalid` with the decoding
//! error kube-apiserver then meets. Merge patch: the body must be a JSON
//! object (`error decoding patch: json: cannot unmarshal array into Go
//! value of type map[string]interface {}`; `null` is evanphx/json-patch's
//! `Invalid JSON Patch`); under Ignore only the library reads it: what is
//! not JSON, or neither object nor array, is `Invalid JSON Patch`, and an
//! array is the result.
//!
//! serde_json's `preserve_order` makes removals reorder keys, so the result
//! gets the current object's key order back.

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Cause, PatchError, PatchKind};
use crate::golang::json_syntax;
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

/// What kube-apiserver's decoding says of a patched object that is an array.
const NOT_AN_OBJECT: &str = "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }";

/// JSON patch or merge patch on an existing object. Returns the patched
/// object; metadata.resourceVersion present in the patch body stays in the
/// result so the caller can use it as a precondition. `strict_decoding`:
/// `fieldValidation` is not `Ignore` (see the module documentation).
///
/// The caller checks that the result keeps the name and namespace of the
/// URL (kube-apiserver: 400 `BadRequest`), its apiVersion and kind, and
/// validates it. [`PatchKind::Apply`] is not a patch of this kind: it is a
/// 500 here, use [`super::server_side_apply`].
pub fn apply_patch(
    kind: PatchKind,
    current: &Value,
    body: &[u8],
    strict_decoding: bool,
) -> Result<Value, PatchError> {
    let mut patched = match kind {
        PatchKind::Json => json_patch(current, body, strict_decoding)?.0,
        PatchKind::Merge => merge_patch(current, body, strict_decoding)?,
        PatchKind::Apply => {
            return Err(PatchError::internal(
                "apply patches are handled by server-side apply",
            ));
        }
    };
    if !patched.is_object() {
        // Only an array gets here: the root is replaced by an object or an
        // array, and a merge patch that is an array is its own result.
        let json = crate::golang::json::marshal(&patched);
        let detail = format!("Invalid value: {}: {NOT_AN_OBJECT}", go_quote(&json));
        return Err(PatchError::invalid(
            format!(" \"\" is invalid: patch: {detail}"),
            vec![Cause {
                reason: "FieldValueInvalid".to_string(),
                message: detail,
                field: "patch".to_string(),
            }],
        ));
    }
    restore_order(current, &mut patched);
    Ok(patched)
}

/// kube-apiserver's answer to an operation that does not apply.
fn rejected(i: usize, reason: &str) -> PatchError {
    tracing::debug!(operation = i, reason, "JSON patch operation does not apply");
    PatchError {
        empty_details: true,
        ..PatchError::new(422, "Invalid", REJECTED)
    }
}

/// A body as written, members in order and repeats kept: what Go's decoders
/// see (a map keeps the last of repeated members).
enum Written<'a> {
    Null,
    Array(Vec<Written<'a>>),
    Object(Vec<(String, &'a RawValue)>),
    /// A scalar, by its type in Go's messages.
    Scalar(&'static str),
}

struct WrittenVisitor;

impl<'de> Visitor<'de> for WrittenVisitor {
    type Value = Written<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Written::Null)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Written::Scalar("bool"))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Written::Scalar("number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Written::Scalar("number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Written::Scalar("number"))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Written::Scalar("string"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(WrittenSeed)? {
            items.push(item);
        }
        Ok(Written::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            members.push((key, map.next_value::<&RawValue>()?));
        }
        Ok(Written::Object(members))
    }
}

struct WrittenSeed;

impl<'de> serde::de::DeserializeSeed<'de> for WrittenSeed {
    type Value = Written<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(WrittenVisitor)
    }
}

/// The patch body as written, or kube-apiserver's 400 for text that is not
/// JSON.
fn written<'b>(body: &'b [u8], prefix: &str) -> Result<Written<'b>, PatchError> {
    if let Err(e) = json_syntax::check(body) {
        return Err(PatchError::bad_request(format!("{prefix}{e}")));
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    de.deserialize_any(WrittenVisitor)
        .map_err(|e| PatchError::bad_request(format!("{prefix}{e}")))
}

/// The strings of an operation kube-apiserver decodes into its own type.
const OPERATION_FIELDS: [&str; 4] = ["op", "path", "from", "value"];

/// The strict decoding errors of a JSON patch on `current` before those of
/// the object it makes, as kube-apiserver words them: the body's own in
/// the order met (`json patch unknown field "[0].extra"`, `json patch
/// duplicate field "[0].value"`), then the repeated keys the patched
/// object's JSON still has (`duplicate field "metadata.labels.a"`: the
/// library writes a value it has not had to look into as it was written).
/// None for a patch that does not decode or apply (the patch answers that).
pub fn json_patch_strict_errors(current: &Value, body: &[u8]) -> Vec<String> {
    let mut errors = body_strict_errors(body);
    if errors.iter().any(|e| e.contains(" duplicate field \"["))
        && let Ok((_, repeated)) = json_patch(current, body, true)
    {
        errors.extend(repeated.iter().map(|p| format!("duplicate field \"{p}\"")));
    }
    errors
}

fn body_strict_errors(body: &[u8]) -> Vec<String> {
    let Ok(Written::Array(ops)) = written(body, "") else {
        return Vec::new();
    };
    let mut errors: Vec<String> = Vec::new();
    let mut add = |e: String| {
        if !errors.contains(&e) {
            errors.push(e);
        }
    };
    for (i, op) in ops.iter().enumerate() {
        let Written::Object(members) = op else {
            continue;
        };
        let mut seen: Vec<&str> = Vec::new();
        for (key, raw) in members {
            if !OPERATION_FIELDS.contains(&key.as_str()) {
                add(format!("json patch unknown field \"[{i}].{key}\""));
                continue;
            }
            if seen.contains(&key.as_str()) {
                add(format!("json patch duplicate field \"[{i}].{key}\""));
            }
            seen.push(key);
            if key == "value" {
                for inner in crate::apiserver::duplicate_fields::find(raw.get().as_bytes()) {
                    let sep = if inner.starts_with('[') { "" } else { "." };
                    add(format!(
                        "json patch duplicate field \"[{i}].value{sep}{inner}\""
                    ));
                }
            }
        }
    }
    errors
}

/// One operation as evanphx/json-patch.v4 holds it: a map of its members
/// (the last of repeated ones), `null` as a missing pointer; and the paths
/// (`a.b`, `[0].c`) of keys repeated inside its `value` as written.
struct Operation(Map<String, Value>, Vec<String>);

impl Operation {
    /// `Kind`: the `op` string, else "unknown".
    fn kind(&self) -> &str {
        self.0
            .get("op")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
    }

    /// `Path` / `From`: the string, or why not.
    fn pointer(&self, field: &str) -> Result<&str, String> {
        match self.0.get(field) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) => Err(format!("operation missing {field} field")),
            Some(other) => Err(format!(
                "{field} is a {}",
                crate::golang::json::value_kind(other)
            )),
        }
    }

    /// `value`: `None` when absent; `null` as written.
    fn value(&self) -> Option<&Value> {
        self.0.get("value")
    }
}

/// The operations of a JSON patch body, or kube-apiserver's 400.
fn operations(body: &[u8], strict_decoding: bool) -> Result<Vec<Operation>, PatchError> {
    let prefix = if strict_decoding {
        "error decoding patch: "
    } else {
        ""
    };
    let (list, item) = if strict_decoding {
        ("[]handlers.jsonPatchOp", "handlers.jsonPatchOp")
    } else {
        ("jsonpatch.Patch", "jsonpatch.Operation")
    };
    let unmarshal = |what: &str, into: &str| {
        PatchError::bad_request(format!(
            "{prefix}json: cannot unmarshal {what} into Go value of type {into}"
        ))
    };
    let ops = match written(body, prefix)? {
        Written::Null => return Ok(Vec::new()),
        Written::Array(ops) => ops,
        Written::Object(_) => return Err(unmarshal("object", list)),
        Written::Scalar(t) => return Err(unmarshal(t, list)),
    };
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        let members = match op {
            Written::Null => Vec::new(),
            Written::Object(members) => members,
            Written::Array(_) => return Err(unmarshal("array", item)),
            Written::Scalar(t) => return Err(unmarshal(t, item)),
        };
        let mut map = Map::new();
        let mut repeated = Vec::new();
        for (key, raw) in members {
            if key == "value" {
                repeated = crate::apiserver::duplicate_fields::find(raw.get().as_bytes());
            }
            let value: Value = serde_json::from_str(raw.get())
                .map_err(|e| PatchError::bad_request(format!("{prefix}{e}")))?;
            if strict_decoding
                && matches!(key.as_str(), "op" | "path" | "from")
                && !matches!(value, Value::String(_) | Value::Null)
            {
                return Err(PatchError::bad_request(format!(
                    "{prefix}json: cannot unmarshal {} into Go struct field jsonPatchOp.{key} of type string",
                    crate::golang::json::value_kind(&value)
                )));
            }
            map.insert(key, value);
        }
        out.push(Operation(map, repeated));
    }
    Ok(out)
}

/// Whether two JSON pointers are the same or one is inside the other.
fn related(a: &str, b: &str) -> bool {
    let inside =
        |x: &str, y: &str| x.len() > y.len() && x.starts_with(y) && x.as_bytes()[y.len()] == b'/';
    a == b || inside(a, b) || inside(b, a)
}

/// The decoder's path (`metadata.labels.a`, `spec.list[0]`) of a JSON
/// pointer in `doc`, with `inner` (a path inside the value) appended.
fn decoder_path(doc: &Value, pointer: &str, inner: &str) -> Option<String> {
    let mut out = String::new();
    let mut node = doc;
    for token in pointer.split('/').skip(1) {
        let key = decode_key(token);
        match node {
            Value::Object(m) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&key);
                node = m.get(&key)?;
            }
            Value::Array(a) => {
                let i = existing_index(a.len(), &key).ok()?;
                out.push_str(&format!("[{i}]"));
                node = &a[i];
            }
            _ => return None,
        }
    }
    if !inner.starts_with('[') && !out.is_empty() {
        out.push('.');
    }
    out.push_str(inner);
    Some(out)
}

/// The patched object, and the decoder's paths of keys repeated in it (see
/// [`json_patch_strict_errors`]): those of a value added or replaced that
/// no later operation reached into, at or above (which makes the library
/// parse it, or replace it).
fn json_patch(
    current: &Value,
    body: &[u8],
    strict_decoding: bool,
) -> Result<(Value, Vec<String>), PatchError> {
    let ops = operations(body, strict_decoding)?;
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
    // Added or replaced values written with repeated keys, by destination.
    let mut raw_values: Vec<(String, &Vec<String>)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        // Checked before the operation runs: copies clone, and deep values
        // are dropped recursively.
        let path_len = op.pointer("path").map(pointer_len).unwrap_or(0);
        let needed = match op.kind() {
            "add" | "replace" => path_len + op.value().map(depth).unwrap_or(0),
            "move" => {
                let from = op.pointer("from").map(pointer_len).unwrap_or(0);
                path_len + depth_bound.saturating_sub(from)
            }
            "copy" => match op.pointer("from").ok().and_then(|f| lookup(&doc, f)) {
                Some(source) => {
                    copied = copied.saturating_add(json_size(source));
                    if copied > MAX_COPY_BYTES {
                        return Err(rejected(
                            i,
                            &format!(
                                "the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
                            ),
                        ));
                    }
                    path_len + depth(source)
                }
                None => 0,
            },
            _ => 0,
        };
        if needed > MAX_DEPTH {
            return Err(rejected(
                i,
                &format!("the result would nest deeper than {MAX_DEPTH} levels"),
            ));
        }
        depth_bound = depth_bound.max(needed);
        let touched = [op.pointer("path"), op.pointer("from")];
        raw_values.retain(|(dest, _)| {
            !touched
                .iter()
                .flatten()
                .any(|p| p.is_empty() || related(p, dest))
        });
        apply_operation(&mut doc, op).map_err(|e| rejected(i, &e))?;
        if matches!(op.kind(), "add" | "replace")
            && !op.1.is_empty()
            && let Ok(path) = op.pointer("path")
        {
            raw_values.push((path.to_owned(), &op.1));
        }
    }
    let repeated = raw_values
        .iter()
        .flat_map(|(dest, inner)| {
            inner
                .iter()
                .filter_map(|p| decoder_path(&doc, dest, p))
                .collect::<Vec<_>>()
        })
        .collect();
    Ok((doc, repeated))
}

/// evanphx/json-patch.v4's `decodePatchKey`: `~1` is `/`, `~0` is `~`.
fn decode_key(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Go's `strconv.Atoi` of an array index.
fn atoi(key: &str) -> Result<i64, String> {
    key.parse::<i64>()
        .map_err(|_| format!("invalid array index {key:?}"))
}

/// `partialArray.get`'s index: negative counts from the end.
fn existing_index(len: usize, key: &str) -> Result<usize, String> {
    let n = len as i64;
    let mut idx = atoi(key)?;
    if idx < 0 {
        if idx < -n {
            return Err(format!("Unable to access invalid index: {idx}"));
        }
        idx += n;
    }
    if idx >= n {
        return Err(format!("Unable to access invalid index: {idx}"));
    }
    Ok(idx as usize)
}

/// The value at a pointer, as `findObject` and `get` reach it (`null` is
/// absent).
fn lookup<'d>(doc: &'d Value, path: &str) -> Option<&'d Value> {
    let tokens: Vec<&str> = path.split('/').collect();
    if tokens.len() < 2 {
        return None;
    }
    let mut node = doc;
    for token in &tokens[1..] {
        node = child(node, &decode_key(token))?;
    }
    (!node.is_null()).then_some(node)
}

fn child<'d>(node: &'d Value, key: &str) -> Option<&'d Value> {
    match node {
        Value::Object(m) => m.get(key),
        Value::Array(a) => a.get(existing_index(a.len(), key).ok()?),
        _ => None,
    }
}

/// `findObject`: the object or array holding the last token of `path`, and
/// that token. `None` for the root, a pointer without a leading `/`, and a
/// parent that is missing, `null` or a scalar.
fn find_object<'d>(doc: &'d mut Value, path: &str) -> Option<(&'d mut Value, String)> {
    let tokens: Vec<&str> = path.split('/').collect();
    if tokens.len() < 2 {
        return None;
    }
    let mut node = doc;
    for token in &tokens[1..tokens.len() - 1] {
        let key = decode_key(token);
        let next = match node {
            Value::Object(m) => m.get_mut(&key)?,
            Value::Array(a) => {
                let i = existing_index(a.len(), &key).ok()?;
                &mut a[i]
            }
            _ => return None,
        };
        if !(next.is_object() || next.is_array()) {
            return None;
        }
        node = next;
    }
    Some((node, decode_key(tokens[tokens.len() - 1])))
}

/// `container.get`: `None` for a missing or `null` member; an array's bad
/// index is an error.
fn get(con: &Value, key: &str) -> Result<Option<Value>, String> {
    match con {
        Value::Object(m) => Ok(m.get(key).filter(|v| !v.is_null()).cloned()),
        Value::Array(a) => {
            let v = &a[existing_index(a.len(), key)?];
            Ok((!v.is_null()).then(|| v.clone()))
        }
        _ => Err("not a container".to_owned()),
    }
}

/// `container.add`: an object's key is set; an array takes `-` (append) or
/// an index up to its length, negative from the end.
fn add(con: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_owned(), value);
            Ok(())
        }
        Value::Array(a) => {
            if key == "-" {
                a.push(value);
                return Ok(());
            }
            let size = a.len() as i64 + 1;
            let mut idx = atoi(key)?;
            if idx >= size || idx < -size {
                return Err(format!("Unable to access invalid index: {idx}"));
            }
            if idx < 0 {
                idx += size;
            }
            a.insert(idx as usize, value);
            Ok(())
        }
        _ => Err("not a container".to_owned()),
    }
}

/// `container.remove`: an object's key must be there (`null` counts).
fn remove(con: &mut Value, key: &str) -> Result<(), String> {
    match con {
        Value::Object(m) => m
            .shift_remove(key)
            .map(drop)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}")),
        Value::Array(a) => {
            let n = a.len() as i64;
            let mut idx = atoi(key)?;
            if idx >= n || idx < -n {
                return Err(format!("Unable to access invalid index: {idx}"));
            }
            if idx < 0 {
                idx += n;
            }
            a.remove(idx as usize);
            Ok(())
        }
        _ => Err("not a container".to_owned()),
    }
}

/// `lazyNode.equal` of a document's value and a test's: objects and arrays
/// by structure, scalars as written (`2` is not `2.0`).
fn written_equal(doc: &Value, test: &Value) -> bool {
    match (doc, test) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, v)| {
                    b.get(k).is_some_and(|w| match (v.is_null(), w.is_null()) {
                        (true, true) => true,
                        (false, false) => written_equal(v, w),
                        _ => false,
                    })
                })
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(v, w)| written_equal(v, w))
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => false,
        _ => doc == test,
    }
}

fn missing(op: &str, path: &str) -> String {
    format!("{op} operation does not apply: doc is missing path: {path}")
}

/// One operation, as evanphx/json-patch.v4's `Patch.Apply` does it.
fn apply_operation(doc: &mut Value, op: &Operation) -> Result<(), String> {
    let value = || op.value().cloned().unwrap_or(Value::Null);
    match op.kind() {
        "add" => {
            let path = op.pointer("path")?;
            let (con, key) = find_object(doc, path).ok_or_else(|| missing("add", path))?;
            add(con, &key, value())
        }
        "remove" => {
            let path = op.pointer("path")?;
            let (con, key) = find_object(doc, path).ok_or_else(|| missing("remove", path))?;
            remove(con, &key)
        }
        "replace" => {
            let path = op.pointer("path")?;
            if path.is_empty() {
                return match op.value() {
                    Some(v @ (Value::Object(_) | Value::Array(_))) => {
                        *doc = v.clone();
                        Ok(())
                    }
                    _ => Err("replace operation value must be object or array".to_owned()),
                };
            }
            let (con, key) = find_object(doc, path).ok_or_else(|| missing("replace", path))?;
            get(con, &key)?;
            match con {
                Value::Array(a) => {
                    let i = existing_index(a.len(), &key)?;
                    a[i] = value();
                }
                Value::Object(m) => {
                    m.insert(key, value());
                }
                _ => {}
            }
            Ok(())
        }
        "move" => {
            let from = op.pointer("from")?;
            let (con, key) = find_object(doc, from).ok_or_else(|| missing("move", from))?;
            let moved = get(con, &key)?;
            remove(con, &key)?;
            let path = op.pointer("path")?;
            let (con, key) = find_object(doc, path).ok_or_else(|| missing("move", path))?;
            add(con, &key, moved.unwrap_or(Value::Null))
        }
        "copy" => {
            let from = op.pointer("from")?;
            let (con, key) = find_object(doc, from).ok_or_else(|| missing("copy", from))?;
            let copied = get(con, &key)?;
            let path = op.pointer("path")?;
            let (con, key) = find_object(doc, path).ok_or_else(|| missing("copy", path))?;
            add(con, &key, copied.unwrap_or(Value::Null))
        }
        "test" => {
            let path = op.pointer("path")?;
            let failed = || format!("testing value {path} failed");
            if path.is_empty() {
                return match op.value() {
                    Some(v) if written_equal(doc, v) => Ok(()),
                    _ => Err(failed()),
                };
            }
            let (con, key) = find_object(doc, path).ok_or_else(|| missing("test", path))?;
            match (get(con, &key)?, op.value()) {
                (None, None | Some(Value::Null)) => Ok(()),
                (Some(actual), Some(expected)) if written_equal(&actual, expected) => Ok(()),
                _ => Err(failed()),
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
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

fn merge_patch(current: &Value, body: &[u8], strict_decoding: bool) -> Result<Value, PatchError> {
    if !strict_decoding {
        // Only evanphx/json-patch reads the body: what is not JSON, or is
        // neither an object nor an array, is its ErrBadJSONPatch; an array
        // (its objects' null members dropped) is the result.
        const BAD: &str = "Invalid JSON Patch";
        if json_syntax::check(body).is_err() {
            return Err(PatchError::bad_request(BAD));
        }
        return match serde_json::from_slice::<Value>(body) {
            Ok(patch @ Value::Object(_)) => {
                let mut doc = current.clone();
                json_patch::merge(&mut doc, &patch);
                Ok(doc)
            }
            Ok(mut patch @ Value::Array(_)) => {
                prune_nulls(&mut patch);
                Ok(patch)
            }
            _ => Err(PatchError::bad_request(BAD)),
        };
    }
    if let Err(e) = json_syntax::check(body) {
        return Err(PatchError::bad_request(format!(
            "error decoding patch: {e}"
        )));
    }
    let patch = match serde_json::from_slice::<Value>(body) {
        Ok(p @ Value::Object(_)) => p,
        // kube-apiserver decodes the patch into a map first: `null` makes
        // a nil map, which evanphx/json-patch then refuses.
        Ok(Value::Null) => return Err(PatchError::bad_request("Invalid JSON Patch")),
        Ok(other) => {
            return Err(PatchError::bad_request(format!(
                "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                crate::golang::json::value_kind(&other)
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

/// evanphx/json-patch's `pruneAryNulls`: members that are `null` leave
/// every object inside (an array keeps its `null` items).
fn prune_nulls(v: &mut Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                m.retain(|_, x| !x.is_null());
                stack.extend(m.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
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
        apply_patch(
            PatchKind::Json,
            &current(),
            body.to_string().as_bytes(),
            true,
        )
    }

    #[test]
    fn json_patch_add_replace_remove() {
        let out = json_patch_of(json!([
            {"op": "add", "path": "/spec/users/-", "value": "z"},
            {"op": "replace", "path": "/spec/replicas", "value": 3},
            {"op": "remove", "path": "/metadata/labels/a"},
            {"op": "test", "path": "/spec/replicas", "value": 3},
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

    /// kube-apiserver 1.36's answers (a CRD, the same patches).
    #[test]
    fn json_patch_failures() {
        let rejected = |body: Value| {
            let e = json_patch_of(body.clone()).unwrap_err();
            assert_eq!(
                (e.code, e.reason, e.message.as_str()),
                (422, "Invalid", REJECTED),
                "{body}"
            );
            assert!(e.causes.is_empty() && e.empty_details, "{body}");
        };
        rejected(json!([{"op": "test", "path": "/spec/replicas", "value": 2}]));
        rejected(json!([{"op": "test", "path": "/spec/replicas", "value": 1.0}]));
        rejected(json!([
            {"op": "replace", "path": "/spec/replicas", "value": 5},
            {"op": "remove", "path": "/spec/nope"}
        ]));
        rejected(json!([{"op": "frobnicate", "path": "/spec"}]));
        rejected(json!([{"op": "test", "path": "/nope", "value": 1}]));
        rejected(json!([null]));
        rejected(json!([{"op": "add", "path": "", "value": {}}]));
        rejected(json!([{"op": "remove", "path": ""}]));
        rejected(json!([{"op": "remove", "path": "spec"}]));
        rejected(json!([{"op": "add", "value": 1}]));
        rejected(json!([{"op": "move", "path": "/spec/x"}]));
        rejected(json!([{"op": "move", "from": "/spec", "path": "/spec/x"}]));
        rejected(json!([{"op": "add", "path": "/spec/replicas/x", "value": 1}]));
        rejected(json!([{"op": "replace", "path": "/spec/users/2", "value": "z"}]));
        rejected(json!([{"op": "add", "path": "/spec/users/3", "value": "z"}]));
        rejected(json!([{"op": "remove", "path": "/spec/users/-3"}]));
        rejected(json!([{"op": "replace", "path": "/spec/users/-", "value": "z"}]));
        rejected(json!([{"op": "replace", "path": "", "value": "x"}]));

        let bad = |body: &[u8], strict: bool, message: &str| {
            let e = apply_patch(PatchKind::Json, &current(), body, strict).unwrap_err();
            assert_eq!(
                (e.code, e.reason, e.message.as_str()),
                (400, "BadRequest", message),
                "{}",
                String::from_utf8_lossy(body)
            );
        };
        bad(
            br#"{"op": "add"}"#,
            true,
            "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
        );
        bad(
            br#"{"op": "add"}"#,
            false,
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        );
        bad(
            b"[1]",
            true,
            "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp",
        );
        bad(
            b"[[1]]",
            false,
            "json: cannot unmarshal array into Go value of type jsonpatch.Operation",
        );
        bad(
            br#"[{"op":1,"path":"/spec"}]"#,
            true,
            "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string",
        );
        bad(
            b"[{",
            true,
            "error decoding patch: unexpected end of JSON input",
        );
        bad(
            b"x",
            false,
            "invalid character 'x' looking for beginning of value",
        );
        // Under Ignore, an op of the wrong type is an operation that does not apply.
        let e = apply_patch(
            PatchKind::Json,
            &current(),
            br#"[{"op":1,"path":"/spec"}]"#,
            false,
        )
        .unwrap_err();
        assert_eq!(e.code, 422);

        let e = json_patch_of(json!([{"op": "replace", "path": "", "value": [1]}])).unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.message.starts_with(
                " \"\" is invalid: patch: Invalid value: \"[1]\": couldn't get version/kind; json parse error: "
            ),
            "{e}"
        );

        let many: Vec<Value> = (0..10_001)
            .map(|_| json!({"op": "test", "path": "", "value": 1}))
            .collect();
        let e = json_patch_of(Value::Array(many)).unwrap_err();
        assert_eq!((e.code, e.reason), (413, "RequestEntityTooLarge"));
    }

    /// What evanphx/json-patch.v4 (and so kube-apiserver) accepts.
    #[test]
    fn json_patch_leniencies() {
        assert_eq!(
            apply_patch(PatchKind::Json, &current(), b"null", true).unwrap(),
            current()
        );
        let out = json_patch_of(json!([
            {"op": "add", "path": "/spec/a"},
            {"op": "replace", "path": "/spec/b"},
            {"op": "replace", "path": "/spec/c", "value": 1},
            {"op": "copy", "from": "/spec/nope", "path": "/spec/d"},
            {"op": "test", "path": "/spec/nope", "value": null},
            {"op": "test", "path": "/spec/a"},
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/users/-1", "value": "w"},
            {"op": "add", "path": "/spec/users/-1", "value": "v"},
            {"op": "test", "path": "/spec/users/02", "value": "v"},
            {"op": "add", "path": "/spec/users/+0", "value": "u"},
            {"op": "remove", "path": "/spec/users/-4"}
        ]))
        .unwrap();
        assert_eq!(
            out["spec"],
            json!({"replicas": 1, "size": "10Gi", "users": ["x", "w", "v"],
                   "a": null, "b": null, "c": 1, "d": null})
        );
    }

    #[test]
    fn json_patch_strict_errors_in_order() {
        assert_eq!(
            json_patch_strict_errors(
                &current(),
                br#"[{"op":"add","path":"/a","value":{"k":1,"k":2},"extra":1,"value":[{"x":1,"x":2}]},null,{"Op":1}]"#
            ),
            [
                "json patch duplicate field \"[0].value.k\"",
                "json patch unknown field \"[0].extra\"",
                "json patch duplicate field \"[0].value\"",
                "json patch duplicate field \"[0].value[0].x\"",
                "json patch unknown field \"[2].Op\"",
            ]
        );
        assert!(json_patch_strict_errors(&current(), b"[{").is_empty());
        // A value written with a repeated key stays so in the patched
        // object, unless a later operation reaches into it.
        assert_eq!(
            json_patch_strict_errors(
                &current(),
                br#"[{"op":"replace","path":"/metadata/labels","value":{"a":"1","a":"2"}},
                     {"op":"add","path":"/spec/users/0","value":{"b":{"c":1,"c":2}}},
                     {"op":"add","path":"/spec/x","value":{"d":1,"d":2}},
                     {"op":"remove","path":"/spec/x/d"}]"#
            ),
            [
                "json patch duplicate field \"[0].value.a\"",
                "json patch duplicate field \"[1].value.b.c\"",
                "json patch duplicate field \"[2].value.d\"",
                "duplicate field \"metadata.labels.a\"",
                "duplicate field \"spec.users[0].b.c\"",
            ]
        );
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

        // Copies that double the document hit the copy limit.
        let mut ops = vec![json!({"op": "add", "path": "/spec/big", "value": "x".repeat(100_000)})];
        for i in 0..40 {
            ops.push(json!({"op": "copy", "from": "/spec", "path": format!("/metadata/c{i}")}));
        }
        let e = json_patch_of(Value::Array(ops)).unwrap_err();
        assert_eq!(e.code, 422);
    }

    #[test]
    fn merge_patch_with_null_removal() {
        let out = apply_patch(
            PatchKind::Merge,
            &current(),
            br#"{"metadata":{"resourceVersion":"6","labels":{"b":null,"e":"5"}},"spec":{"replicas":null,"users":["q"]}}"#,
            true,
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
            let e = apply_patch(PatchKind::Merge, &current(), body, true).unwrap_err();
            assert_eq!(
                (e.code, e.reason, e.message.as_str()),
                (400, "BadRequest", message.as_str())
            );
        }
        // Not JSON: kube-apiserver words Go's syntax error after the same prefix.
        for body in [&b"{"[..], b""] {
            let e = apply_patch(PatchKind::Merge, &current(), body, true).unwrap_err();
            assert_eq!((e.code, e.reason), (400, "BadRequest"));
            assert!(e.message.starts_with("error decoding patch: "), "{e}");
        }
        // Not JSON: kube-apiserver words Go's syntax error.
        let e = apply_patch(PatchKind::Merge, &current(), b"{} x", true).unwrap_err();
        assert_eq!(
            e.message,
            "error decoding patch: invalid character 'x' after top-level value"
        );
        // Under Ignore only evanphx/json-patch reads it.
        for body in [&b"{"[..], b"5", b"null", b"\"x\""] {
            let e = apply_patch(PatchKind::Merge, &current(), body, false).unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (400, "Invalid JSON Patch"));
        }
        let e = apply_patch(
            PatchKind::Merge,
            &current(),
            br#"[1,null,{"a":null}]"#,
            false,
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.message
                .contains("Invalid value: \"[1,null,{}]\": couldn't get"),
            "{e}"
        );
        let e = apply_patch(PatchKind::Apply, &current(), b"{}", true).unwrap_err();
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
