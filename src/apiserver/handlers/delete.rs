//! delete and deletecollection: `DeleteOptions` from the body or the query
//! (`propagationPolicy`, `preconditions`, `dryRun`, deprecated
//! `orphanDependents`), answered with the object — carrying a
//! deletionTimestamp when finalizers still hold it — or, for a collection,
//! with the list of what was deleted.

use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::Call;
use crate::apimachinery::status::ApiError;
use crate::apiserver::response::{self, Body};
use crate::storage::DeleteOptions;

fn options(call: &Call<'_>) -> Result<DeleteOptions, ApiError> {
    let body: Value = if call.body.iter().all(u8::is_ascii_whitespace) {
        // Options from the query: a malformed grace period is refused
        // (400) rather than ignored, as kube-apiserver decodes it.
        super::read::int_param(call, "gracePeriodSeconds")?;
        json!({})
    } else {
        serde_json::from_slice(&call.body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
    };
    let text = |key: &str| {
        body.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| call.query.get(key).cloned())
    };
    let mut propagation_policy = text("propagationPolicy");
    let orphan = body
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .or_else(|| call.query.get("orphanDependents").map(|v| v == "true"));
    if let Some(orphan) = orphan {
        if propagation_policy.is_some() {
            return Err(ApiError::invalid_query(
                "propagationPolicy",
                "orphanDependents and propagationPolicy cannot both be set",
            ));
        }
        propagation_policy = Some(if orphan { "Orphan" } else { "Background" }.to_owned());
    }
    if let Some(p) = &propagation_policy
        && !matches!(p.as_str(), "Orphan" | "Background" | "Foreground")
    {
        return Err(ApiError::invalid_query(
            "propagationPolicy",
            &format!(
                "Unsupported value: \"{p}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
            ),
        ));
    }
    let dry_run_values: Vec<String> = match body.get("dryRun") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => call.query.get("dryRun").into_iter().cloned().collect(),
    };
    let dry_run = match dry_run_values.as_slice() {
        [] => false,
        [all] if all == "All" => true,
        [other, ..] => {
            return Err(ApiError::bad_request(format!(
                "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
            )));
        }
    };
    let preconditions = body.get("preconditions");
    Ok(DeleteOptions {
        uid: preconditions
            .and_then(|p| p.get("uid"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        resource_version: preconditions
            .and_then(|p| p.get("resourceVersion"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        propagation_policy,
        dry_run,
    })
}

/// delete.
pub(super) async fn delete(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let options = tracing::debug_span!("decode").in_scope(|| options(call))?;
    let app = call
        .apps()
        .delete(call.namespace(), call.name(), &options, call.user)
        .await?;
    let _span = tracing::debug_span!("encode").entered();
    Ok(super::app_json(StatusCode::OK, &app, "application/json"))
}

/// deletecollection: every matching app in the namespace.
pub(super) async fn delete_collection(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let options = options(call)?;
    let filter = super::read::filter(call)?;
    let apps = call.apps();
    // The apps to delete are listed as a list with the same options reads
    // them: consistent unless `resourceVersion` says otherwise, so that
    // writes made just before (taken by the cache ahead of its watch) are
    // among them.
    let snapshot = apps
        .snapshot_at(Some(call.namespace()), super::read::read_at(call)?)
        .await?;
    let names: Vec<String> = snapshot.names(&filter).map(str::to_owned).collect();
    drop(snapshot);
    let mut deleted = Vec::new();
    for name in names {
        match apps
            .delete(call.namespace(), &name, &options, call.user)
            .await
        {
            Ok(app) => deleted.push(app.value()),
            Err(e) if e.code == 404 => {} // gone meanwhile
            Err(e) => return Err(e),
        }
    }
    let resolved = &call.kind.resolved;
    let list = json!({
        "apiVersion": resolved.group_version(),
        "kind": format!("{}List", resolved.definition.kind),
        "metadata": {"resourceVersion": apps.revision().to_string()},
        "items": deleted,
    });
    Ok(response::json(StatusCode::OK, &list))
}
