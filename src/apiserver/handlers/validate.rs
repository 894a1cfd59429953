//! What a create, update or patch checks of the object it is about to
//! store, in kube-apiserver's order for a custom resource: a metadata field
//! of the wrong type is a 400; unknown fields (outside `spec` by
//! [`unknown_fields`], in `spec` by the kind's schema, which also defaults
//! it) are dropped, and with duplicate keys of a JSON body (a JSON patch's
//! unknown and repeated operation fields, see
//! `patch::json_patch_strict_errors`) they are refused under
//! `fieldValidation=Strict` before any value is judged (a
//! [`Refusal::Strict`]), warned about under `Warn` (the default), dropped
//! silently under `Ignore`; then the metadata (`ValidateObjectMeta`, and on
//! an update what may not change) and the spec are validated together, one
//! 422 naming every problem.

use serde_json::{Value, json};

use super::Call;
use crate::apimachinery::object_meta;
use crate::apimachinery::request_info::Verb;
use crate::apimachinery::status::ApiError;
use crate::apiserver::negotiate::{self, BodyType};
use crate::apiserver::{duplicate_fields, unknown_fields};
use crate::kinds::schema::{FieldError, FieldErrorKind};

/// How unknown and duplicate fields are treated (`fieldValidation`): Strict
/// refuses them, Warn (the default) and Ignore drop them (the last of
/// duplicates wins), Warn with a warning.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldValidation {
    Strict,
    Warn,
    Ignore,
}

/// The `fieldValidation` of a write, which `options::validate` has
/// checked is one of the three or empty (Warn).
fn field_validation(call: &Call<'_>) -> FieldValidation {
    match call.query.get("fieldValidation").map(String::as_str) {
        Some("Strict") => FieldValidation::Strict,
        Some("Ignore") => FieldValidation::Ignore,
        _ => FieldValidation::Warn,
    }
}

/// Whether kube-apiserver decodes a JSON or merge patch strictly before
/// applying it: under `fieldValidation` Strict and Warn (the default), not
/// under Ignore (see `patch::apply_patch`).
pub(super) fn strict_patch_decoding(call: &Call<'_>) -> bool {
    field_validation(call) != FieldValidation::Ignore
}

/// Why [`validate`] refused an object.
pub(super) enum Refusal {
    /// Unknown or duplicate fields under `fieldValidation=Strict`: each
    /// problem as kube-apiserver's strict decoder words it (`unknown field
    /// "sepc"`).
    Strict(Vec<String>),
    /// Anything else, as answered.
    Error(ApiError),
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Refusal {
        Refusal::Error(e)
    }
}

impl Refusal {
    /// The answer. A create or update names the kind as kube-apiserver's
    /// decode error does (400, `Postgres in version "v1alpha1" cannot be
    /// handled as a Postgres: strict decoding error: ...`); a JSON or merge
    /// patch is kube-apiserver's 422 on the field `patch`, quoting
    /// `patched`, the patched object before anything was dropped (`"" is
    /// invalid: patch: Invalid value: "{...}": strict decoding error:
    /// ...`); an apply answers the bare strict decoding error (400).
    pub(super) fn answer(self, call: &Call<'_>, patched: Option<&Value>) -> ApiError {
        let problems = match self {
            Refusal::Error(e) => return e,
            Refusal::Strict(problems) => problems,
        };
        let error = format!("strict decoding error: {}", problems.join(", "));
        match (call.req.verb, patched) {
            (Verb::Create | Verb::Update, _) => {
                let kind = &call.kind.resolved.definition.kind;
                ApiError::bad_request(format!(
                    "{kind} in version \"{}\" cannot be handled as a {kind}: {error}",
                    call.req.version
                ))
            }
            (_, Some(patched)) => {
                let detail = format!(
                    "Invalid value: {}: {error}",
                    crate::golang::quote(&crate::golang::json::marshal(patched))
                );
                ApiError {
                    code: 422,
                    reason: "Invalid",
                    message: format!(" \"\" is invalid: patch: {detail}"),
                    details: Some(json!({"causes": [
                        {"reason": "FieldValueInvalid", "message": detail, "field": "patch"}
                    ]})),
                    retry_after: None,
                    hidden_cause: None,
                }
            }
            _ => ApiError::bad_request(error),
        }
    }
}

/// Checks `app` before it is stored (see the module documentation): the
/// metadata as kube-apiserver's `ValidateObjectMeta` (and on an update what
/// may not change of `current`, the stored object), unknown fields dropped
/// everywhere, the spec defaulted and validated (CEL transition rules
/// against `current` on update); every problem becomes a cause. Returns the
/// warnings: about unknown and duplicate fields, then about the finalizers
/// the write adds.
pub(super) fn validate(
    call: &Call<'_>,
    app: &mut Value,
    current: Option<&Value>,
) -> Result<Vec<String>, Refusal> {
    let mode = field_validation(call);
    let metadata_is_object = |app: &Value| app.get("metadata").is_some_and(Value::is_object);
    if !metadata_is_object(app) {
        return Err(ApiError::bad_request("metadata must be an object").into());
    }
    // managedFields are the field manager's: a request's own entries that
    // do not decode are set aside when the write is recorded, as
    // kube-apiserver's field manager sets them aside (decodeLiveOrNew), and
    // an apply's are the ones it wrote.
    if let Some(Value::Object(meta)) = app.get("metadata") {
        object_meta::check_types_except(meta, &["managedFields"]).map_err(ApiError::bad_request)?;
    }
    let unknown = unknown_fields::prune(app);
    let name = app
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut errors = Vec::new();
    if let Some(Value::Object(meta)) = app.get_mut("metadata") {
        object_meta::omit_empty(meta);
        if let Some(old) = current
            .and_then(|c| c.get("metadata"))
            .and_then(Value::as_object)
        {
            object_meta::prepare_update(meta, old);
            errors.extend(object_meta::validate_update(meta, old));
        }
        errors.extend(object_meta::validate(meta));
    }
    if !app.get("spec").is_some_and(Value::is_object) {
        if let Some(found) = app
            .get("spec")
            .and_then(|spec| json_type_name(spec, current.is_some()))
        {
            // As the schema validator words a wrong type (its value is the
            // type's name).
            errors.push(field_error(
                "spec",
                FieldErrorKind::TypeInvalid,
                Some(json!(found)),
                &format!(
                    "spec in body must be of type object: {}",
                    crate::golang::quote(found)
                ),
            ));
        } else {
            app["spec"] = json!({});
        }
    }
    // The spec is checked even when the metadata is not: one 422 names
    // every problem, as kube-apiserver's validation of a custom resource does.
    let mut pruned = Vec::new();
    let mut ratcheted = Vec::new();
    if let Some(spec) = app.get_mut("spec").filter(|s| s.is_object()) {
        let old_spec = current.and_then(|o| o.get("spec"));
        let outcome = call
            .kind
            .schema
            .default_and_validate_update(spec, old_spec, "spec");
        errors.extend(outcome.errors);
        pruned = outcome.pruned;
        ratcheted = outcome.ratcheted;
    }
    let problems: Vec<String> = if mode == FieldValidation::Ignore {
        Vec::new()
    } else {
        let body_errors = strict_errors_of_body(call, current);
        let unknown = unknown.paths(pruned);
        // A YAML body's repeated keys, found as kube-apiserver's strict
        // YAML conversion finds them, before the unknown fields: one error
        // under Strict, a warning each under Warn.
        let yaml = match negotiate::body_type(call.content_type()) {
            Ok(BodyType::Yaml) => duplicate_fields::in_yaml(&call.body),
            _ => Vec::new(),
        };
        let yaml = match (mode, yaml.is_empty()) {
            (_, true) => Vec::new(),
            (FieldValidation::Strict, false) => {
                vec![format!("yaml: unmarshal errors:\n  {}", yaml.join("\n  "))]
            }
            (_, false) => yaml,
        };
        if body_errors.is_empty() && unknown.is_empty() && yaml.is_empty() {
            Vec::new()
        } else {
            body_errors
                .into_iter()
                .chain(yaml)
                .chain(unknown.iter().map(|p| format!("unknown field \"{p}\"")))
                .collect()
        }
    };
    // Strict refuses unknown and duplicate fields before any value is
    // judged: kube-apiserver's strict decoder fails the request before
    // validation runs, so a body with both gets that answer, not the 422.
    if mode == FieldValidation::Strict && !problems.is_empty() {
        return Err(Refusal::Strict(problems));
    }
    if !errors.is_empty() {
        return Err(invalid(call, &name, errors).into());
    }
    // The strategy's warnings follow the decoder's, as kube-apiserver
    // records them: the rules ratcheted while validating, then the
    // finalizers'.
    let mut warnings = problems;
    warnings.extend(ratcheted.iter().map(ToString::to_string));
    if let Some(Value::Object(meta)) = app.get("metadata") {
        let old = current
            .and_then(|c| c.get("metadata"))
            .and_then(Value::as_object);
        warnings.extend(object_meta::finalizer_warnings(meta, old));
    }
    Ok(warnings)
}

/// The request body's own strict decoding errors, before the object's:
/// keys that repeat in a JSON body or merge patch (the last value was
/// kept), a JSON patch's unknown and repeated operation fields.
fn strict_errors_of_body(call: &Call<'_>, current: Option<&Value>) -> Vec<String> {
    match negotiate::body_type(call.content_type()) {
        Ok(BodyType::Json | BodyType::MergePatch) => duplicate_fields::find(&call.body)
            .iter()
            .map(|p| format!("duplicate field \"{p}\""))
            .collect(),
        Ok(BodyType::JsonPatch) => current
            .map(|c| crate::apiserver::patch::json_patch_strict_errors(c, &call.body))
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// One field's error, for a 422.
pub(super) fn field_error(
    field: &str,
    kind: FieldErrorKind,
    bad_value: Option<Value>,
    detail: &str,
) -> FieldError {
    FieldError {
        field: field.to_owned(),
        kind,
        bad_value,
        detail: detail.to_owned(),
    }
}

/// The 422 of `call`'s kind for the object `name`, with a cause per field.
pub(super) fn invalid(call: &Call<'_>, name: &str, errors: Vec<FieldError>) -> ApiError {
    let d = &call.kind.resolved.definition;
    ApiError::invalid(&d.kind, &d.group, name, &errors)
}

/// A JSON value's type as kube-openapi's validator names it; `None` for
/// `null` (no type: an absent spec). A whole number written as a float
/// (`5.0`) is a `number` on create and an `integer` on update, as
/// kube-apiserver's decoding leaves it (the differential test holds both).
fn json_type_name(v: &Value, update: bool) -> Option<&'static str> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(_) => "boolean",
        Value::String(_) => "string",
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|f| n.is_f64() && (f.fract() != 0.0 || !update)) =>
        {
            "number"
        }
        Value::Number(_) => "integer",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    })
}
