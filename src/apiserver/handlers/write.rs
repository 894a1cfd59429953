//! create, update and patch. Every write: its options are validated
//! ([`super::options`]), the body is decoded (JSON or YAML),
//! checked against the URL (kind, namespace, name), checked as
//! [`super::validate`] checks it (unknown fields dropped, and refused or
//! warned about under `fieldValidation`; metadata validated as
//! kube-apiserver validates `ObjectMeta`; the spec defaulted and validated
//! against the kind's structural schema, 422 with one cause per field),
//! then field ownership recorded in managedFields from the object as it
//! will be stored (defaulted and pruned, as kube-apiserver's field manager
//! sees a decoded custom resource: the writer owns the defaults it got,
//! nobody the dropped fields), then stored through the app store with the
//! caller's resourceVersion as a precondition (409 when stale; never a
//! silent overwrite). An update that changes nothing is answered by the
//! app store without a write, its resourceVersion kept. `dryRun=All` goes
//! upstream too.
//!
//! Server-side apply records ownership from the applied configuration
//! before defaults, as kube-apiserver's field manager does (it defaults the
//! merged object after), so an applier does not own the defaults.

use std::sync::Arc;

use http::{Response, StatusCode, header};
use serde_json::{Value, json};
use tracing::debug_span;

use super::options::{self, Write};
use super::validate::{field_error, invalid, strict_patch_decoding, validate};
use super::{Call, parse_typed_body};
use crate::apimachinery::meta_decode;
use crate::apimachinery::request_info::Verb;
use crate::apimachinery::status::ApiError;
use crate::apiserver::negotiate::{self, BodyType};
use crate::apiserver::patch::{self, ApplyRequest, PatchKind};
use crate::apiserver::response::Body;
use crate::drop_later::drop_later;
use crate::kinds::schema::FieldErrorKind;
use crate::storage::helm_release::AppView;
use crate::storage::now;

/// Server-set metadata a client may not choose on create.
const SERVER_SET: [&str; 6] = [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
];

/// create.
pub(super) async fn create(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    if !takes_body_type(call) {
        return Err(unsupported_media_type());
    }
    options::validate(call.query, Write::Create)?;
    let mut app = decode(call)?;
    let manager = field_manager(call);
    debug_span!("prepare").in_scope(|| prepare_new(call, &mut app))?;
    let warnings = debug_span!("validate")
        .in_scope(|| validate(call, &mut app, None))
        .map_err(|r| r.answer(call, None))?;
    drop_status(&mut app);
    let managed_fields = record_update(call, None, &mut app, &manager);
    Ok(respond(
        StatusCode::CREATED,
        store_create(call, app, managed_fields, warnings).await?,
    ))
}

/// update.
pub(super) async fn update(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    // As kube-apiserver: an update's options before its content type.
    options::validate(call.query, Write::Update)?;
    if !takes_body_type(call) {
        return Err(unsupported_media_type());
    }
    let mut app = decode(call)?;
    let name = call.name().to_owned();
    let given_kind = app.get("kind").cloned();
    let current = debug_span!("prepare").in_scope(|| {
        check_type_meta(call, &app)?;
        check_identity(call, &mut app)?;
        call.apps().current(call.namespace(), &name)
    })?;
    if app
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        // As kube-apiserver's generic store words it: the resource (not the
        // kind) names what is invalid, and the missing version is the
        // number 0.
        return Err(ApiError::invalid(
            &call.req.resource,
            &call.req.group,
            &name,
            &[field_error(
                "metadata.resourceVersion",
                FieldErrorKind::Invalid,
                Some(json!(0)),
                "must be specified for an update",
            )],
        ));
    }
    kind_mismatch(call, given_kind.as_ref(), &name)?;
    let manager = field_manager(call);
    let warnings = debug_span!("validate")
        .in_scope(|| validate(call, &mut app, Some(&current)))
        .map_err(|r| r.answer(call, None))?;
    let managed_fields = record_update(call, Some(&current), &mut app, &manager);
    let written = store_update(call, &current, app, managed_fields, warnings).await;
    drop_later(current);
    Ok(respond(StatusCode::OK, written?))
}

/// patch: JSON patch, merge patch, server-side apply; strategic merge and
/// anything else is 415.
pub(super) async fn patch(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    // kube-apiserver's patch handler names the types it takes, not the one
    // it was given (strategic merge patch included: not for custom resources).
    let kind = match negotiate::body_type(call.content_type()) {
        Ok(BodyType::JsonPatch) => PatchKind::Json,
        Ok(BodyType::MergePatch) => PatchKind::Merge,
        Ok(BodyType::ApplyPatch) => PatchKind::Apply,
        _ => {
            return Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            ));
        }
    };
    let name = call.name().to_owned();
    let apps = call.apps();
    options::validate(call.query, Write::Patch(kind))?;
    let gv = call.kind.resolved.group_version();
    if kind == PatchKind::Apply {
        // Required and not empty: `options::validate` checked it.
        let manager = call.query.get("fieldManager").cloned().unwrap_or_default();
        let current = apps.current(call.namespace(), &name).ok();
        let schema = &call.kind.resolved.definition.open_api_schema;
        let timestamp = now();
        let applied = patch::server_side_apply(&ApplyRequest {
            current: current.as_ref(),
            body: &call.body,
            field_manager: &manager,
            force: options::force(call.query),
            schema,
            now: &timestamp,
            api_version: &gv,
        })
        .map_err(ApiError::from)?;
        let mut app = applied.object;
        check_identity(call, &mut app)?;
        return match current {
            None => {
                prepare_new(call, &mut app)?;
                let warnings = debug_span!("validate")
                    .in_scope(|| validate(call, &mut app, None))
                    .map_err(|r| r.answer(call, None))?;
                drop_status(&mut app);
                Ok(respond(
                    StatusCode::CREATED,
                    store_create(call, app, None, warnings).await?,
                ))
            }
            Some(current) => {
                if app.pointer("/metadata/resourceVersion").is_none() {
                    app["metadata"]["resourceVersion"] =
                        current["metadata"]["resourceVersion"].clone();
                }
                let warnings = debug_span!("validate")
                    .in_scope(|| validate(call, &mut app, Some(&current)))
                    .map_err(|r| r.answer(call, None));
                let written = match warnings {
                    Ok(warnings) => store_update(call, &current, app, None, warnings).await,
                    Err(e) => Err(e),
                };
                drop_later(current);
                Ok(respond(StatusCode::OK, written?))
            }
        };
    }

    let manager = field_manager(call);
    let strict_decoding = strict_patch_decoding(call);
    // Without a resourceVersion in the patch, kube-apiserver retries on
    // conflict with the latest object; with one, a conflict is the answer.
    for _attempt in 0..5 {
        let prepare = debug_span!("prepare").entered();
        let current = apps.current(call.namespace(), &name)?;
        let mut patched = patch::apply_patch(kind, &current, &call.body, strict_decoding)
            .map_err(ApiError::from)?;
        let explicit_rv = patched.pointer("/metadata/resourceVersion")
            != current.pointer("/metadata/resourceVersion");
        check_type_meta(call, &patched)?;
        check_identity(call, &mut patched)?;
        if patched.pointer("/metadata/resourceVersion").is_none() {
            patched["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
        }
        drop(prepare);
        let warnings = match debug_span!("validate")
            .in_scope(|| validate(call, &mut patched, Some(&current)))
        {
            Ok(warnings) => warnings,
            Err(refusal) => {
                // The patched object as it was before validation dropped
                // anything: kube-apiserver's message quotes it.
                let unvalidated =
                    patch::apply_patch(kind, &current, &call.body, strict_decoding).ok();
                drop_later(current);
                return Err(refusal.answer(call, unvalidated.as_ref()));
            }
        };
        let managed_fields = record_update(call, Some(&current), &mut patched, &manager);
        match store_update(call, &current, patched, managed_fields, warnings).await {
            Err(e) if e.code == 409 && !explicit_rv => {
                apps.wait_for_change_after(&current).await;
                drop_later(current);
                continue;
            }
            other => {
                drop_later(current);
                return other.map(|written| respond(StatusCode::OK, written));
            }
        }
    }
    Err(ApiError::conflict(
        &call.group_resource(),
        &name,
        "the object has been modified too often; please retry",
    ))
}

/// The request body as JSON (decoded from YAML when it is YAML). JSON that
/// does not parse is kube-apiserver's "unrecognized" 400, its syntax error
/// in Go's words.
fn decode(call: &Call<'_>) -> Result<Value, ApiError> {
    debug_span!("decode").in_scope(|| {
        parse_typed_body(
            &call.body,
            call.content_type(),
            &call.kind.resolved.definition.kind,
        )
    })
}

/// Records `manager`'s update of `app` (over `current`): the JSON text of
/// its managedFields, which the app no longer holds (`None`: untracked).
fn record_update(
    call: &Call<'_>,
    current: Option<&Value>,
    app: &mut Value,
    manager: &str,
) -> Option<String> {
    let _span = debug_span!("managed_fields").entered();
    patch::record_update_text(
        current,
        app,
        manager,
        &now(),
        &call.kind.resolved.group_version(),
        &call.kind.resolved.definition.open_api_schema,
    )
}

/// Whether a create or update can read its body: JSON or YAML.
fn takes_body_type(call: &Call<'_>) -> bool {
    matches!(
        negotiate::body_type(call.content_type()),
        Ok(BodyType::Json | BodyType::Yaml)
    )
}

/// The 415 of a create or update, worded as kube-apiserver's for a custom
/// resource: the types its serializers name (protobuf among them, which it
/// cannot decode into a custom resource either), not the one given.
fn unsupported_media_type() -> ApiError {
    ApiError::unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: application/json, \
         application/yaml, application/vnd.kubernetes.protobuf",
    )
}

/// The field manager of a non-apply write: `fieldManager`, else the user agent's product.
fn field_manager(call: &Call<'_>) -> String {
    if let Some(m) = call.query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.clone();
    }
    call.headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .and_then(|ua| ua.split('/').next())
        .filter(|s| !s.is_empty())
        .unwrap_or("unknown")
        .to_owned()
}

fn check_type_meta(call: &Call<'_>, app: &Value) -> Result<(), ApiError> {
    let resolved = &call.kind.resolved;
    let want_gv = resolved.group_version();
    // A create's or an update's body is decoded as kube-apiserver decodes a
    // custom resource's: it must say its kind, and its apiVersion is
    // compared even when left out; another kind is the validation's 422
    // ([`kind_mismatch`]). A patch's result keeps the stored ones unless
    // the patch changed them.
    let body = matches!(call.req.verb, Verb::Create | Verb::Update);
    if body {
        type_meta_decodable(call, app)?;
    }
    let given_version = match app.get("apiVersion").and_then(Value::as_str) {
        Some(v) => Some(v),
        None if body => Some(""),
        None => None,
    };
    if let Some(api_version) = given_version
        && api_version != want_gv
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({want_gv})"
        )));
    }
    if let Some(kind) = app.get("kind").and_then(Value::as_str)
        && kind != resolved.definition.kind
        && !body
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            resolved.definition.kind
        )));
    }
    if !app.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    // Before the name is looked for or the namespace compared: a field of
    // the wrong type is kube-apiserver's decoding error of a create's or an
    // update's body (a patch's result is judged later, in `validate`).
    if matches!(call.req.verb, Verb::Create | Verb::Update)
        && let Some(error) = app.get("metadata").and_then(meta_decode::decode_error)
    {
        let kind = &resolved.definition.kind;
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{}\" cannot be handled as a {kind}: {error}",
            call.req.version
        )));
    }
    Ok(())
}

/// kube-apiserver's decoding errors of a custom resource's body that lacks
/// a `kind`, or whose `apiVersion` or `kind` is no string: "the object
/// provided is unrecognized", with the body (as JSON) and its first 30
/// bytes as sent.
fn type_meta_decodable(call: &Call<'_>, app: &Value) -> Result<(), ApiError> {
    let Some(object) = app.as_object() else {
        return Ok(());
    };
    let unrecognized =
        |why: String| super::unrecognized(&call.kind.resolved.definition.kind, &call.body, &why);
    // Go's encoding/json reports the first field (in the body's order) of
    // the wrong type; `null` leaves a string empty.
    for (key, value) in object {
        if !matches!(key.as_str(), "apiVersion" | "kind") {
            continue;
        }
        let go_type = match value {
            Value::String(_) | Value::Null => continue,
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        return Err(unrecognized(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {go_type} into Go struct \
             field .{key} of type string"
        )));
    }
    if app
        .get("kind")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        let text = match negotiate::body_type(call.content_type()) {
            Ok(BodyType::Json) => String::from_utf8_lossy(&call.body).into_owned(),
            _ => app.to_string(),
        };
        return Err(unrecognized(format!(
            "Object 'Kind' is missing in '{text}'"
        )));
    }
    Ok(())
}

/// A create's or an update's body of another kind of the group:
/// kube-apiserver's validation refuses it first of all, naming the kind it
/// was given (`Redis.apps.cozystack.io "db" is invalid: kind: …`).
fn kind_mismatch(call: &Call<'_>, given: Option<&Value>, name: &str) -> Result<(), ApiError> {
    let want = &call.kind.resolved.definition.kind;
    match given.and_then(Value::as_str) {
        Some(kind) if kind != want => Err(ApiError::invalid(
            kind,
            &call.req.group,
            name,
            &[field_error(
                "kind",
                FieldErrorKind::Invalid,
                Some(json!(kind)),
                &format!("must be {want}"),
            )],
        )),
        _ => Ok(()),
    }
}

/// Namespace and name in the body must agree with the URL (filled in when
/// absent). A create reads no name from the URL: kube-apiserver's create
/// handler takes the body's, whatever path the create was sent to.
fn check_identity(call: &Call<'_>, app: &mut Value) -> Result<(), ApiError> {
    if !app.get("metadata").is_some_and(Value::is_object) {
        app["metadata"] = json!({});
    }
    let url_ns = call.req.namespace.clone().unwrap_or_default();
    match app.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() && ns != url_ns => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        _ => app["metadata"]["namespace"] = json!(url_ns),
    }
    if let Some(url_name) = call
        .req
        .name
        .as_ref()
        .filter(|_| call.req.verb != Verb::Create)
    {
        match app.pointer("/metadata/name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() && n != url_name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({url_name})"
                )));
            }
            _ => app["metadata"]["name"] = json!(url_name),
        }
    }
    let resolved = &call.kind.resolved;
    app["apiVersion"] = json!(resolved.group_version());
    app["kind"] = json!(resolved.definition.kind);
    Ok(())
}

/// Checks, names and cleans an object about to be created.
fn prepare_new(call: &Call<'_>, app: &mut Value) -> Result<(), ApiError> {
    check_type_meta(call, app)?;
    let given_kind = app.get("kind").cloned();
    check_identity(call, app)?;
    let meta = app["metadata"]
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
    for key in SERVER_SET {
        meta.remove(key);
    }
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if name.is_empty() {
        match meta
            .get("generateName")
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
        {
            Some(base) => {
                let generated = generate_name(base, call.kind.resolved.name_max());
                meta.insert("name".into(), json!(generated));
            }
            None => {
                return Err(invalid(
                    call,
                    "",
                    vec![field_error(
                        "metadata.name",
                        FieldErrorKind::Required,
                        None,
                        "name or generateName is required",
                    )],
                ));
            }
        }
    }
    let name = app
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    kind_mismatch(call, given_kind.as_ref(), name)
}

/// Drops the `status` of an object about to be created: the main resource
/// does not set it (as for a custom resource with a status subresource).
fn drop_status(app: &mut Value) {
    if let Some(obj) = app.as_object_mut() {
        obj.shift_remove("status");
    }
}

/// Random characters kube-apiserver's generateName appends.
const GENERATED_SUFFIX: usize = 5;
/// kube-apiserver's longest generateName base (`maxGeneratedNameLength`).
const GENERATED_BASE_MAX: usize = 63 - GENERATED_SUFFIX;

/// kube-apiserver's generateName: the base cut (to 58 characters, and so
/// that the name fits the kind's `name_max`) plus five random characters
/// from an alphabet without vowels or look-alikes.
fn generate_name(base: &str, name_max: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let keep = GENERATED_BASE_MAX.min(name_max.saturating_sub(GENERATED_SUFFIX));
    let base: String = base.chars().take(keep).collect();
    let random = uuid::Uuid::new_v4();
    let suffix: String = random
        .as_bytes()
        .iter()
        .take(GENERATED_SUFFIX)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect();
    format!("{base}{suffix}")
}

/// A stored app (encoded once, kept by the cache too) and the warnings for the client.
struct Written {
    app: Arc<AppView>,
    warnings: Vec<String>,
}

/// The response for a write, with `Warning: 299` headers as kube-apiserver sends them.
fn respond(code: StatusCode, written: Written) -> Response<Body> {
    let _span = debug_span!("encode").entered();
    let mut response = super::app_json(code, &written.app, "application/json");
    for warning in written.warnings {
        let escaped = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = http::HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(header::WARNING, v);
        }
    }
    response
}

async fn store_create(
    call: &Call<'_>,
    app: Value,
    managed_fields: Option<String>,
    warnings: Vec<String>,
) -> Result<Written, ApiError> {
    if let Some(store) = call.state.apps.embedded() {
        super::namespaces::admit_create(store, call.namespace())?;
    }
    let dry_run = call.dry_run();
    let app = call
        .apps()
        .create(app, managed_fields, dry_run, call.user)
        .await?;
    Ok(Written { app, warnings })
}

async fn store_update(
    call: &Call<'_>,
    current: &Value,
    app: Value,
    managed_fields: Option<String>,
    warnings: Vec<String>,
) -> Result<Written, ApiError> {
    let dry_run = call.dry_run();
    let app = call
        .apps()
        .update(current, app, managed_fields, dry_run, call.user)
        .await?;
    Ok(Written { app, warnings })
}
