//! Fuzz targets of PATCH: JSON patch, merge patch and server-side apply,
//! each followed by the managedFields bookkeeping a write does.
//!
//! Input: the first line is the stored object as JSON (anything that is
//! not a JSON object stands for the example Postgres app); for `apply` the
//! second line is the `spec` schema (JSON, or an example kind's name in
//! quotes; anything else stands for Postgres's) and `null` on the first
//! line creates the object. The rest of the input is the request body.

use std::sync::OnceLock;

use serde_json::Value;

use crate::apiserver::patch::{
    ApplyRequest, PatchKind, apply_patch, record_update_with_schema, server_side_apply,
};

const API_VERSION: &str = "apps.cozystack.io/v1alpha1";
const NOW: &str = "2026-01-01T00:00:00Z";
const MANAGER: &str = "fuzz";

/// The example Postgres app, the stored object when the input gives none.
fn example_app() -> &'static Value {
    static APP: OnceLock<Value> = OnceLock::new();
    APP.get_or_init(|| {
        serde_saphyr::from_str(include_str!("../storage/testdata/postgres-app.yaml"))
            .expect("the example app parses")
    })
}

fn postgres_schema() -> &'static Value {
    super::example_schema("postgres").expect("the Postgres example kind has a schema")
}

/// The stored object of the first line.
fn current(line: &[u8]) -> Value {
    match serde_json::from_slice::<Value>(line) {
        Ok(v @ Value::Object(_)) => v,
        _ => example_app().clone(),
    }
}

/// What every successful patch result must be: a JSON object that can be
/// stored (encoded, and decoded again when read; serde_json refuses to
/// decode nesting deeper than 128).
fn assert_storable(v: &Value) {
    assert!(v.is_object(), "a patch result is not an object: {v}");
    let text = serde_json::to_string(v).expect("a patch result encodes");
    if let Err(e) = serde_json::from_str::<Value>(&text) {
        panic!("a patch result does not decode again: {e}");
    }
}

fn patch(kind: PatchKind, data: &[u8]) -> Option<(Value, Value)> {
    let (line, body) = super::split_line(data);
    let current = current(line);
    let mut patched = apply_patch(kind, &current, body, true).ok()?;
    assert_storable(&patched);
    let before = patched.clone();
    record_update_with_schema(
        Some(&current),
        &mut patched,
        MANAGER,
        NOW,
        API_VERSION,
        postgres_schema(),
    );
    assert_storable(&patched);
    Some((current, before))
}

/// `json_patch`: an RFC 6902 patch (`application/json-patch+json`).
pub fn json_patch(data: &[u8]) {
    let _ = patch(PatchKind::Json, data);
}

/// `merge_patch`: an RFC 7386 merge patch (`application/merge-patch+json`).
///
/// Asserts that a merge patch is idempotent: applying it again to its own
/// result changes nothing (RFC 7386 section 1).
pub fn merge_patch(data: &[u8]) {
    let Some((_, patched)) = patch(PatchKind::Merge, data) else {
        return;
    };
    let (_, body) = super::split_line(data);
    let again = apply_patch(PatchKind::Merge, &patched, body, true)
        .unwrap_or_else(|e| panic!("a merge patch that applied once fails again: {e}"));
    assert_eq!(
        again, patched,
        "a merge patch applied twice changed the result"
    );
}

/// `apply`: server-side apply (`application/apply-patch+yaml`).
///
/// Asserts that apply is idempotent: applying the same configuration again
/// with the same manager succeeds and changes nothing.
pub fn apply(data: &[u8]) {
    let (line, rest) = super::split_line(data);
    let (schema_line, body) = super::split_line(rest);
    let current = match serde_json::from_slice::<Value>(line) {
        Ok(Value::Null) => None,
        Ok(v @ Value::Object(_)) => Some(v),
        _ => Some(example_app().clone()),
    };
    let schema = match serde_json::from_slice::<Value>(schema_line) {
        Ok(Value::String(name)) => super::example_schema(&name)
            .unwrap_or(postgres_schema())
            .clone(),
        Ok(v @ Value::Object(_)) => v,
        _ => postgres_schema().clone(),
    };
    let request = |current: Option<&Value>, force: bool| {
        server_side_apply(&ApplyRequest {
            current,
            body,
            field_manager: MANAGER,
            force,
            schema: &schema,
            now: NOW,
            api_version: API_VERSION,
        })
    };
    let first = match request(current.as_ref(), false) {
        Ok(applied) => applied.object,
        Err(_) => match request(current.as_ref(), true) {
            Ok(applied) => applied.object,
            Err(_) => return,
        },
    };
    assert_storable(&first);
    let second = request(Some(&first), false)
        .unwrap_or_else(|e| panic!("an apply that succeeded fails when repeated: {e}"));
    assert_eq!(
        second.object, first,
        "an apply repeated with the same manager changed the object"
    );
}
