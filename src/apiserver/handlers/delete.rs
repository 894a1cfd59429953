//! delete and deletecollection: `DeleteOptions` from the body or, without
//! one, the query
//! (`propagationPolicy`, `preconditions`, `dryRun`, deprecated
//! `orphanDependents`), answered with the object — carrying a
//! deletionTimestamp when finalizers still hold it — or, for a collection,
//! with the list of what was deleted as it was listed (one page of
//! `limit`, with its `continue` token, when a limit is given). Options that do not validate are
//! refused as apimachinery's `ValidateDeleteOptions` refuses them, for one
//! object and a collection alike: 422 `DeleteOptions.meta.k8s.io "" is
//! invalid`, a cause per broken rule.

use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::Call;
use crate::apimachinery::query::{Query, flag};
use crate::apimachinery::status::ApiError;
use crate::apiserver::response::{self, Body};
use crate::storage::DeleteOptions;

/// The `DeleteOptions` of a delete or deletecollection, from its body or,
/// without one, its query; 400 when they do not decode, 422 when they do
/// not validate.
fn options(call: &Call<'_>) -> Result<DeleteOptions, ApiError> {
    delete_options(&call.body, call.query)
}

/// [`options`] of a bare body and query (also the standalone namespaces').
/// As kube-apiserver reads them: a body's options are the options, and the
/// query is read only without a body (a body without `dryRun` does not run
/// dry however the query asks).
pub(super) fn delete_options(body: &[u8], query: &Query) -> Result<DeleteOptions, ApiError> {
    let body: Option<Value> = if body.iter().all(u8::is_ascii_whitespace) {
        // Options from the query: a malformed grace period is refused
        // (400) rather than ignored, as kube-apiserver decodes it.
        super::read::int_query_param(query, "gracePeriodSeconds")?;
        None
    } else {
        Some(
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?,
        )
    };
    let propagation_policy = match &body {
        Some(body) => body
            .get("propagationPolicy")
            .and_then(Value::as_str)
            .map(str::to_owned),
        None => query.get("propagationPolicy").cloned(),
    };
    let orphan = match &body {
        Some(body) => body.get("orphanDependents").and_then(Value::as_bool),
        None => query
            .contains_key("orphanDependents")
            .then(|| flag(query, "orphanDependents")),
    };
    let dry_run: Vec<&str> = match &body {
        Some(body) => match body.get("dryRun") {
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        },
        None => query.all("dryRun"),
    };
    validate(propagation_policy.as_deref(), orphan.is_some(), &dry_run)?;
    let propagation_policy = match orphan {
        Some(orphan) => Some(if orphan { "Orphan" } else { "Background" }.to_owned()),
        None => propagation_policy,
    };
    let preconditions = body.as_ref().and_then(|b| b.get("preconditions"));
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
        dry_run: !dry_run.is_empty(),
    })
}

/// apimachinery's `ValidateDeleteOptions`: `orphanDependents` and
/// `propagationPolicy` are not both set, the policy is one of three, and
/// `dryRun` holds only `All` (the whole list is the bad value, printed as
/// JSON); every broken rule is a cause of the 422.
fn validate(
    propagation_policy: Option<&str>,
    orphan_set: bool,
    dry_run: &[&str],
) -> Result<(), ApiError> {
    use crate::kinds::schema::FieldErrorKind;
    let error = |field: &str, kind, bad_value: Value, detail: &str| {
        super::validate::field_error(field, kind, Some(bad_value), detail)
    };
    let mut errors = Vec::new();
    if let Some(policy) = propagation_policy {
        if orphan_set {
            errors.push(error(
                "propagationPolicy",
                FieldErrorKind::Invalid,
                policy.into(),
                "orphanDependents and deletionPropagation cannot be both set",
            ));
        }
        if !matches!(policy, "Foreground" | "Background" | "Orphan") {
            errors.push(error(
                "propagationPolicy",
                FieldErrorKind::NotSupported,
                policy.into(),
                r#"supported values: "Foreground", "Background", "Orphan", "nil""#,
            ));
        }
    }
    errors.extend(super::options::dry_run_error(dry_run));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            &errors,
        ))
    }
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

/// deletecollection: the apps its list options select in the namespace,
/// listed as a list lists them ([`super::read::list_to_delete`]: one page
/// when `limit` is given), each deleted (one gone meanwhile is skipped),
/// answered as kube-apiserver's generic store answers: the list as it was
/// listed.
pub(super) async fn delete_collection(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    // As kube-apiserver: the list options are read and validated first.
    let filter = super::read::filter(call)?;
    let limit = super::read::page_limit(call)?;
    super::read::validate_list_options(call, false)?;
    let options = options(call)?;
    let listed = super::read::list_to_delete(call, &filter, limit).await?;
    let apps = call.apps();
    for name in &listed.names {
        match apps
            .delete(call.namespace(), name, &options, call.user)
            .await
        {
            Ok(_) => {}
            Err(e) if e.code == 404 => {} // gone meanwhile
            Err(e) => return Err(e),
        }
    }
    let resolved = &call.kind.resolved;
    let list = json!({
        "apiVersion": resolved.group_version(),
        "kind": format!("{}List", resolved.definition.kind),
        "metadata": listed.list_meta,
        "items": listed.items,
    });
    Ok(response::json(StatusCode::OK, &list))
}
