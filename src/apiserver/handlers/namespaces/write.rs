//! Update (PUT) and patch of a standalone server's namespaces: the client's
//! metadata (labels, annotations, finalizers, ownerReferences) changes, the
//! server's (`spec`, `status`, uid, timestamps) stays, managedFields follow
//! every write as kube-apiserver records them, and a resourceVersion in the
//! body or patch is a precondition. Through `/finalize` the body's
//! `spec.finalizers` are written too, through `/status` its `status`.
//!
//! PATCH takes JSON patch, merge patch, server-side apply (which also
//! creates a missing namespace, as `kubectl apply --server-side` expects)
//! and strategic merge patch, which kubectl sends for built-in kinds such as
//! Namespace: it is read as a merge patch whose `$` directives are left out
//! (`$patch: delete` on a map deletes it), except that `metadata.finalizers`
//! merge as a set, with `$deleteFromPrimitiveList/finalizers` removing some,
//! and `status.conditions` merge by `type` (the Go type's merge key), as
//! strategic merge patch merges them.

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};
use serde_json::{Map, Value, json};

use super::{GROUP_RESOURCE, check_kind, dry_run, namespace_body, store_error};
use crate::apimachinery::meta_decode::{self, Text};
use crate::apimachinery::object_meta;
use crate::apimachinery::query::Query;
use crate::apimachinery::status::ApiError;
use crate::apiserver::handlers::options::{self, Write};
use crate::apiserver::negotiate::{self, BodyType};
use crate::apiserver::patch::{self, ApplyRequest, PatchKind};
use crate::apiserver::response::{self, Body};
use crate::kinds::schema::{FieldError, FieldErrorKind};
use crate::storage::embedded_store::EmbeddedStore;
use crate::storage::namespace_store::Subresource;
use crate::storage::{StoreError, namespace_store, now};

/// What a write is sent to: the namespace or one of its subresources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// `/api/v1/namespaces/<name>`: its metadata.
    Namespace,
    /// `…/finalize` (PUT only): as an update, and the body's
    /// `spec.finalizers` replace the namespace's (what a namespace
    /// controller, or an operator clearing a stuck namespace, sends).
    /// Removing the last finalizer of a Terminating namespace with nothing
    /// left in it removes the namespace.
    Finalize,
    /// `…/status`: as an update, and the body's (or patched object's)
    /// `status` replaces the namespace's (`spec` stays), its phase held to
    /// the namespace's deletion.
    Status,
}

/// The structural schema of a Namespace's `spec`, for field ownership.
fn spec_schema() -> Value {
    json!({"type": "object", "properties": {"finalizers": {"type": "array", "items": {"type": "string"}}}})
}

/// The field manager of a non-apply write: `fieldManager`, else the user
/// agent's product (`kubectl-create`, `kubectl-client-side-apply`, …).
pub(super) fn field_manager(query: &Query, headers: &HeaderMap) -> String {
    if let Some(m) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.clone();
    }
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .and_then(|ua| ua.split('/').next())
        .filter(|s| !s.is_empty())
        .unwrap_or("unknown")
        .to_owned()
}

/// Records `manager`'s write of `new` over `old` in `new`'s managedFields.
/// Only metadata is tracked: `spec` and `status` are the server's.
pub(super) fn record_managed_fields(old: Option<&Value>, new: &mut Value, manager: &str) {
    let view = |v: &Value| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": v["metadata"].clone()});
    let old_view = old.map(view);
    let mut new_view = view(new);
    patch::record_update_with_schema(
        old_view.as_ref(),
        &mut new_view,
        manager,
        &now(),
        "v1",
        &spec_schema(),
    );
    match new_view.pointer("/metadata/managedFields") {
        Some(managed) => new["metadata"]["managedFields"] = managed.clone(),
        None => {
            if let Some(meta) = new["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
        }
    }
}

/// A PUT to namespace `name` or one of its subresources.
pub(super) fn put(
    store: &EmbeddedStore,
    name: &str,
    query: &Query,
    headers: &HeaderMap,
    body: &Bytes,
    target: Target,
) -> Result<Response<Body>, ApiError> {
    // As kube-apiserver: an update's options before its body, its type and
    // name before the namespace is read.
    options::validate(query, Write::Update)?;
    let mut object = namespace_body(headers, body)?;
    check_api_version(&object)?;
    named_as_url(&mut object, name)?;
    let dry_run = dry_run(query);
    let current = store
        .namespace(name)
        .map_err(store_error)?
        .ok_or_else(|| ApiError::not_found(GROUP_RESOURCE, name))?;
    let manager = field_manager(query, headers);
    let (finalizers, status);
    let subresource = match target {
        Target::Namespace => Subresource::None,
        Target::Finalize => {
            finalizers = namespace_store::spec_finalizers(&object);
            Subresource::Finalize(&finalizers)
        }
        Target::Status => {
            status = decoded_status(&object);
            Subresource::Status(&status)
        }
    };
    let written = write(
        store,
        name,
        &current,
        object,
        Some(&manager),
        subresource,
        dry_run,
    )?;
    Ok(response::json(StatusCode::OK, &written))
}

/// A PATCH of namespace `name` or of its status (not its finalize).
pub(super) fn patch(
    store: &EmbeddedStore,
    name: &str,
    query: &Query,
    headers: &HeaderMap,
    body: &Bytes,
    target: Target,
) -> Result<Response<Body>, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let (kind, strategic) = match negotiate::body_type(content_type)? {
        BodyType::JsonPatch => (PatchKind::Json, false),
        BodyType::MergePatch => (PatchKind::Merge, false),
        BodyType::StrategicMergePatch => (PatchKind::Merge, true),
        BodyType::ApplyPatch => (PatchKind::Apply, false),
        _ => {
            return Err(ApiError::unsupported_media_type(format!(
                "the body of the request was in an unknown format ({}) - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, \
                 application/strategic-merge-patch+json",
                content_type.unwrap_or("none")
            )));
        }
    };
    options::validate(query, Write::Patch(kind))?;
    let force = options::force(query);
    let dry_run = dry_run(query);
    let current = store.namespace(name).map_err(store_error)?;
    // The patched object, and who wrote it when managedFields are still to
    // record it (an apply has).
    let (current, patched, manager) = if kind == PatchKind::Apply {
        // Given and not empty: the options' validation checked it.
        let manager = query.get("fieldManager").map_or("", String::as_str);
        let timestamp = now();
        let applied = patch::server_side_apply(&ApplyRequest {
            current: current.as_ref(),
            body,
            field_manager: manager,
            force,
            schema: &spec_schema(),
            now: &timestamp,
            api_version: "v1",
        })
        .map_err(ApiError::from)?;
        let mut object = applied.object;
        match current {
            Some(current) => {
                if target == Target::Status {
                    let config = patch::applied_configuration(body).map_err(ApiError::from)?;
                    object["status"] = applied_status(&current, &config);
                }
                (current, object, None)
            }
            // An apply creates a missing namespace, not a missing status.
            None if target == Target::Status => {
                return Err(ApiError::not_found(GROUP_RESOURCE, name));
            }
            None => return create_by_apply(store, name, object, dry_run),
        }
    } else {
        let current = current.ok_or_else(|| ApiError::not_found(GROUP_RESOURCE, name))?;
        let merge_body;
        let body: &[u8] = if strategic {
            merge_body = strategic_as_merge(&current, body)?;
            &merge_body
        } else {
            body
        };
        let strict_decoding = query.get("fieldValidation").map(String::as_str) != Some("Ignore");
        let patched =
            patch::apply_patch(kind, &current, body, strict_decoding).map_err(ApiError::from)?;
        check_kind(&patched)?;
        check_patched_types(&patched)?;
        (current, patched, Some(field_manager(query, headers)))
    };
    let status = (target == Target::Status).then(|| decoded_status(&patched));
    let subresource = status
        .as_ref()
        .map_or(Subresource::None, Subresource::Status);
    let written = write(
        store,
        name,
        &current,
        patched,
        manager.as_deref(),
        subresource,
        dry_run,
    )?;
    Ok(response::json(StatusCode::OK, &written))
}

/// The `status` of a namespace written through `/status` as kube-apiserver
/// keeps it, decoded into its Go type and encoded again: the phase
/// defaulted to `Active`, each condition's fields in the type's order
/// (`lastTransitionTime` null when unset, `reason` and `message` left out
/// when empty) and nothing else.
fn decoded_status(namespace: &Value) -> Value {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut status = Map::new();
    let phase = text(namespace.pointer("/status/phase"));
    status.insert(
        "phase".into(),
        json!(if phase.is_empty() { "Active" } else { &phase }),
    );
    let conditions: Vec<Value> = namespace
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|condition| {
            let mut decoded = Map::new();
            decoded.insert("type".into(), json!(text(condition.get("type"))));
            decoded.insert("status".into(), json!(text(condition.get("status"))));
            let time = condition
                .get("lastTransitionTime")
                .filter(|t| t.is_string());
            decoded.insert(
                "lastTransitionTime".into(),
                time.cloned().unwrap_or(Value::Null),
            );
            for key in ["reason", "message"] {
                let value = text(condition.get(key));
                if !value.is_empty() {
                    decoded.insert(key.into(), json!(value));
                }
            }
            Value::Object(decoded)
        })
        .collect();
    if !conditions.is_empty() {
        status.insert("conditions".into(), Value::Array(conditions));
    }
    Value::Object(status)
}

/// The status a server-side apply to `/status` leaves on `current`: the
/// configuration's phase if it has one, and its conditions merged into the
/// live ones by `type` (a listed one's fields set, a new one after the
/// others), as structured merge merges a list keyed by `type`. Who set
/// which condition is not tracked: one an earlier apply set and a later one
/// leaves out stays (kube-apiserver would remove it).
fn applied_status(current: &Value, config: &Value) -> Value {
    let mut status = match current.get("status") {
        Some(Value::Object(status)) => status.clone(),
        _ => Map::new(),
    };
    if let Some(phase) = config.pointer("/status/phase").filter(|p| p.is_string()) {
        status.insert("phase".into(), phase.clone());
    }
    let applied = config
        .pointer("/status/conditions")
        .and_then(Value::as_array);
    if let Some(applied) = applied.filter(|a| !a.is_empty()) {
        let mut conditions: Vec<Value> = status
            .get("conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for item in applied.iter().filter_map(Value::as_object) {
            let at = conditions
                .iter()
                .position(|c| c.get("type") == item.get("type"));
            match at.and_then(|at| conditions[at].as_object_mut()) {
                Some(live) => live.extend(item.clone()),
                None => conditions.push(Value::Object(item.clone())),
            }
        }
        status.insert("conditions".into(), Value::Array(conditions));
    }
    Value::Object(status)
}

/// core's `ValidateNamespaceStatusUpdate` of the phase: `Active` while the
/// namespace is not deleted, `Terminating` once it is.
fn status_phase_problem(status: &Value, meta: &Map<String, Value>) -> Option<FieldError> {
    let phase = status
        .get("phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let deleted = meta.get("deletionTimestamp").is_some_and(|t| !t.is_null());
    let (wanted, detail) = match deleted {
        false => (
            "Active",
            "may only be 'Active' if `deletionTimestamp` is empty",
        ),
        true => (
            "Terminating",
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        ),
    };
    (phase != wanted).then(|| FieldError {
        field: "status.Phase".into(),
        kind: FieldErrorKind::Invalid,
        bad_value: Some(json!(phase)),
        detail: detail.into(),
    })
}

/// Checks `new` against `current` and stores its client metadata, and
/// what `subresource` writes besides (`spec.finalizers`, `status`);
/// `manager` records the write in managedFields (apply has recorded it).
fn write(
    store: &EmbeddedStore,
    name: &str,
    current: &Value,
    mut new: Value,
    manager: Option<&str>,
    subresource: Subresource<'_>,
    dry_run: bool,
) -> Result<Value, ApiError> {
    check_api_version(&new)?;
    named_as_url(&mut new, name)?;
    let old_meta = current["metadata"].as_object().cloned().unwrap_or_default();
    let mut meta = new["metadata"].as_object().cloned().unwrap_or_default();
    object_meta::check_types(&meta).map_err(ApiError::bad_request)?;
    object_meta::prepare_update(&mut meta, &old_meta);
    let mut errors = object_meta::validate_namespace_update(&meta, &old_meta);
    match subresource {
        Subresource::None => {}
        Subresource::Finalize(finalizers) => {
            errors.extend(object_meta::validate_namespace_finalize(finalizers));
        }
        Subresource::Status(status) => errors.extend(status_phase_problem(status, &meta)),
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid("Namespace", "", name, &errors));
    }
    let precondition = meta
        .get("resourceVersion")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(manager) = manager {
        record_managed_fields(Some(current), &mut new, manager);
        meta = new["metadata"].as_object().cloned().unwrap_or_default();
    }
    store
        .update_namespace(name, &meta, subresource, precondition.as_deref(), dry_run)
        .map_err(|e| match e {
            StoreError::NotFound => ApiError::not_found(GROUP_RESOURCE, name),
            StoreError::Conflict(message) => ApiError::conflict(GROUP_RESOURCE, name, message),
            e => store_error(e),
        })
}

/// The name `new` gives itself must be the URL's (a body without one gets
/// it), as kube-apiserver's handler checks before the namespace is read.
fn named_as_url(new: &mut Value, url_name: &str) -> Result<(), ApiError> {
    if !new.get("metadata").is_some_and(Value::is_object) {
        new["metadata"] = json!({});
    }
    match new.pointer("/metadata/name").and_then(Value::as_str) {
        Some(body_name) if body_name != url_name => Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({url_name})"
        ))),
        Some(_) => Ok(()),
        None => {
            new["metadata"]["name"] = json!(url_name);
            Ok(())
        }
    }
}

/// Server-side apply of a namespace that does not exist: created from the
/// applied configuration.
fn create_by_apply(
    store: &EmbeddedStore,
    name: &str,
    applied: Value,
    dry_run: bool,
) -> Result<Response<Body>, ApiError> {
    let meta: Map<String, Value> = applied["metadata"].as_object().cloned().unwrap_or_default();
    let applied_name = meta.get("name").and_then(Value::as_str).unwrap_or_default();
    if applied_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({applied_name}) does not match the name on the URL ({name})"
        )));
    }
    object_meta::check_types(&meta).map_err(ApiError::bad_request)?;
    let mut errors = object_meta::validate_namespace(&meta);
    let spec_finalizers = namespace_store::spec_finalizers(&applied);
    errors.extend(object_meta::validate_namespace_spec_finalizers(
        &spec_finalizers,
    ));
    if !errors.is_empty() {
        return Err(ApiError::invalid("Namespace", "", name, &errors));
    }
    let namespace = namespace_store::new_namespace(name, &meta, &spec_finalizers);
    match store.create_namespace(namespace, dry_run) {
        Ok(ns) => Ok(response::json(StatusCode::CREATED, &ns)),
        Err(e) => Err(super::create_error(e, name)),
    }
}

/// A patched namespace with a field of the wrong type: kube-apiserver's
/// 422, which quotes the patched object as Go encodes it (keys sorted; the
/// object's values here are the store's, as its uid and times differ from
/// any other server's anyway).
fn check_patched_types(patched: &Value) -> Result<(), ApiError> {
    let Some(error) = patched
        .as_object()
        .and_then(|object| meta_decode::namespace_decode_error(object, Text::Reencoded))
    else {
        return Ok(());
    };
    let cause = FieldError {
        field: "patch".into(),
        kind: FieldErrorKind::Invalid,
        bad_value: Some(Value::String(crate::golang::json::marshal(patched))),
        detail: error,
    };
    Err(ApiError::invalid("", "", "", &[cause]))
}

fn check_api_version(object: &Value) -> Result<(), ApiError> {
    match object.get("apiVersion").and_then(Value::as_str) {
        Some(v) if v != "v1" => Err(ApiError::bad_request(format!(
            "the API version in the data ({v}) does not match the expected API version (v1)"
        ))),
        _ => Ok(()),
    }
}

/// A strategic merge patch of a Namespace as a merge patch: see the module
/// documentation.
fn strategic_as_merge(current: &Value, body: &[u8]) -> Result<Vec<u8>, ApiError> {
    let mut patch: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    let Some(object) = patch.as_object_mut() else {
        return Err(ApiError::bad_request(format!(
            "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_type(&patch)
        )));
    };
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let deleted = match meta.remove("$deleteFromPrimitiveList/finalizers") {
            Some(Value::Array(d)) => d,
            _ => Vec::new(),
        };
        let added = match meta.get("finalizers") {
            Some(Value::Array(a)) => Some(a.clone()),
            _ => None,
        };
        if added.is_some() || !deleted.is_empty() {
            let mut merged: Vec<Value> = current
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for f in added.into_iter().flatten() {
                if !merged.contains(&f) {
                    merged.push(f);
                }
            }
            merged.retain(|f| !deleted.contains(f));
            meta.insert("finalizers".into(), Value::Array(merged));
        }
    }
    if let Some(status) = object.get_mut("status").and_then(Value::as_object_mut) {
        merge_conditions(current, status);
    }
    drop_directives(&mut patch);
    serde_json::to_vec(&patch).map_err(|e| ApiError::bad_request(e.to_string()))
}

/// A strategic merge patch's `status.conditions` merged into `current`'s by
/// `type`, `NamespaceCondition`'s merge key, as apimachinery's
/// `strategicpatch` merges them ([`merge_by_type`]), then put in the order
/// of `$setElementOrder/conditions` if the patch has one. The patch then
/// carries the whole list (a merge patch replaces lists).
fn merge_conditions(current: &Value, status: &mut Map<String, Value>) {
    let order = match status.remove("$setElementOrder/conditions") {
        Some(Value::Array(order)) => Some(order),
        _ => None,
    };
    let patch = match status.get("conditions") {
        Some(Value::Array(patch)) => Some(patch),
        _ => None,
    };
    if patch.is_none() && order.is_none() {
        return;
    }
    let live: Vec<Value> = current
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut merged = match patch {
        Some(patch) => merge_by_type(&live, patch),
        None => live.clone(),
    };
    if let Some(order) = order {
        merged = in_order(merged, &order, &live);
    }
    status.insert("conditions".into(), Value::Array(merged));
}

/// The merge key of a condition.
fn type_of(condition: &Value) -> Option<&Value> {
    condition.get("type")
}

/// Where in `list` the condition of `condition`'s type is.
fn place(list: &[Value], condition: &Value) -> Option<usize> {
    list.iter().position(|c| type_of(c) == type_of(condition))
}

/// `mergeSlice` of a list keyed by `type`: `$patch: delete` removes the
/// condition of its type and `$patch: replace` makes the patch's the list;
/// a patched condition is merged into the one of its type or added; then
/// the list is put in the patch's order ([`in_order`]).
fn merge_by_type(live: &[Value], patch: &[Value]) -> Vec<Value> {
    let mut live = live.to_vec();
    let mut items = Vec::new();
    let mut replace = false;
    for item in patch {
        match item.get("$patch").and_then(Value::as_str) {
            Some("delete") => live.retain(|c| type_of(c) != type_of(item)),
            Some("replace") => replace = true,
            _ => items.push(item.clone()),
        }
    }
    if replace {
        return items;
    }
    let mut merged = live.clone();
    for item in &items {
        match place(&merged, item) {
            Some(at) => json_patch::merge(&mut merged[at], item),
            None => {
                let mut added = Value::Null;
                json_patch::merge(&mut added, item);
                merged.push(added);
            }
        }
    }
    in_order(merged, &items, &live)
}

/// `normalizeElementOrder`: the conditions `order` names (in its order)
/// and the others (in the live order) interleaved by their places in
/// `live`, one that is not there before any other.
fn in_order(merged: Vec<Value>, order: &[Value], live: &[Value]) -> Vec<Value> {
    let (mut named, mut others): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|c| place(order, c).is_some());
    named.sort_by_key(|c| place(order, c));
    others.sort_by_key(|c| place(live, c).unwrap_or(usize::MAX));
    let mut left = others.into_iter().peekable();
    let mut right = named.into_iter().peekable();
    let mut ordered = Vec::new();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (Some(l), Some(r)) => matches!(
                (place(live, l), place(live, r)),
                (Some(li), Some(ri)) if li < ri
            ),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        ordered.extend(if take_left { left.next() } else { right.next() });
    }
    ordered
}

/// Leaves out strategic merge patch's `$` keys; a map with `$patch:
/// delete` becomes `null` (deleted).
fn drop_directives(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.get("$patch").and_then(Value::as_str) == Some("delete") {
                *v = Value::Null;
                return;
            }
            map.retain(|k, _| !k.starts_with('$'));
            map.values_mut().for_each(drop_directives);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_directives),
        _ => {}
    }
}

fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null | Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategic_merge_patches_read_as_merge_patches() {
        let current = json!({"metadata": {"name": "a", "finalizers": ["x.io/a", "x.io/b"], "labels": {"k": "v"}}});
        let merge = |body: Value| -> Value {
            serde_json::from_slice(
                &strategic_as_merge(&current, body.to_string().as_bytes()).unwrap(),
            )
            .unwrap()
        };
        assert_eq!(
            merge(
                json!({"metadata": {"$setElementOrder/finalizers": ["x.io/a"], "finalizers": ["x.io/c"],
                                      "labels": {"k": null, "n": "1"}}})
            ),
            json!({"metadata": {"finalizers": ["x.io/a", "x.io/b", "x.io/c"], "labels": {"k": null, "n": "1"}}})
        );
        assert_eq!(
            merge(json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/a"]}})),
            json!({"metadata": {"finalizers": ["x.io/b"]}})
        );
        assert_eq!(
            merge(json!({"metadata": {"annotations": {"$patch": "delete"}}})),
            json!({"metadata": {"annotations": null}})
        );
        let err = strategic_as_merge(&current, b"[1,2]").unwrap_err();
        assert_eq!(
            err.message,
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
    }
}
