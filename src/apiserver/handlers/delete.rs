//! delete and deletecollection: `DeleteOptions` from the body or the query
//! (`propagationPolicy`, `preconditions`, `dryRun`, deprecated
//! `orphanDependents`), answered with the object — carrying a
//! deletionTimestamp when finalizers still hold it — or, for a collection,
//! with the list of what was deleted.

use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::read::{Filter, current_app};
use super::{Call, READ_YOUR_WRITES};
use crate::apiserver::response::{self, Body};
use crate::apiserver::status::ApiError;
use crate::storage::{DeleteOptions, StoreError, convert, resource_version};

fn options(call: &Call<'_>) -> Result<DeleteOptions, ApiError> {
    let body: Value = if call.body.iter().all(u8::is_ascii_whitespace) {
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

/// Deletes one app; `Ok(app)` is its last state (or its terminating state).
async fn delete_one(
    call: &Call<'_>,
    namespace: &str,
    name: &str,
    options: &DeleteOptions,
) -> Result<Value, ApiError> {
    let resolved = &call.kind.resolved;
    let current = current_app(call, namespace, name)?;
    let release = convert::release_name(resolved, name);
    let result = call
        .state
        .backend
        .delete(namespace, &release, options)
        .await
        .map_err(|e| match e {
            StoreError::Conflict(message) => {
                ApiError::conflict(&call.group_resource(), name, &message)
            }
            other => crate::apiserver::status::from_store(&other, &call.group_resource(), name),
        })?;
    if !options.dry_run {
        let rv = resource_version(&result);
        if rv > 0 {
            call.state
                .cache
                .wait_for_revision(rv, READ_YOUR_WRITES)
                .await;
        }
    }
    // A release deleted at once may come back as a bare Status; answer with the app we had.
    if result.get("spec").is_some() {
        Ok(convert::to_app(resolved, &result))
    } else {
        Ok(current)
    }
}

/// delete.
pub(super) async fn delete(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let options = options(call)?;
    let namespace = call.req.namespace.clone().unwrap_or_default();
    let name = call.req.name.clone().unwrap_or_default();
    let app = delete_one(call, &namespace, &name, &options).await?;
    Ok(response::json(StatusCode::OK, &app))
}

/// deletecollection: every matching app in the namespace.
pub(super) async fn delete_collection(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let options = options(call)?;
    let filter = Filter::from_call(call)?;
    let namespace = call.req.namespace.clone().unwrap_or_default();
    let (objects, _) = call.state.cache.snapshot();
    let names: Vec<String> = objects
        .iter()
        .filter(|(key, release)| filter.app(&call.kind, key, release).is_some())
        .filter_map(|((_, release), _)| convert::app_name(&call.kind.resolved, release))
        .map(str::to_owned)
        .collect();
    let mut deleted = Vec::new();
    for name in names {
        match delete_one(call, &namespace, &name, &options).await {
            Ok(app) => deleted.push(app),
            Err(e) if e.code == 404 => {} // gone meanwhile
            Err(e) => return Err(e),
        }
    }
    let resolved = &call.kind.resolved;
    let list = json!({
        "apiVersion": resolved.group_version(),
        "kind": format!("{}List", resolved.definition.kind),
        "metadata": {"resourceVersion": call.state.cache.revision().to_string()},
        "items": deleted,
    });
    Ok(response::json(StatusCode::OK, &list))
}
