//! `ObjectMeta` validation, a port of k8s.io/apimachinery
//! `api/validation/objectmeta.go` (`ValidateObjectMetaAccessor` and
//! `ValidateObjectMetaAccessorUpdate`) with the checks of
//! `util/validation` it calls, down to its error texts: names and
//! generateName (RFC 1123 subdomains), namespaces (RFC 1123 labels), label
//! keys and values, annotation keys and their 256 KiB total, finalizer
//! names, ownerReferences, generation, and what an update may not change;
//! a Namespace's as core's `ValidateNamespace` judges it (finalizer names
//! without a path must be Kubernetes' own, in metadata and spec), and the
//! warnings kube-apiserver gives a custom resource's write about the
//! finalizers it adds ([`finalizer_warnings`]).
//!
//! [`check_types`] comes first: a field of the wrong JSON type (`finalizers:
//! "zz"`) is a decoding error (400) in kube-apiserver, before validation.

use serde_json::{Map, Value, json};

use super::labels::{
    DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, is_dns1123_subdomain, label_key_problems,
    label_value_problems, max_len_error, regex_error,
};
use crate::kinds::schema::{FieldError, FieldErrorKind};

/// kube-apiserver's limit on the total size of an object's annotations.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";

/// The owners kube-apiserver refuses (`BannedOwners`): events.
const BANNED_OWNERS: [(&str, &str); 2] = [("v1", "Event"), ("events.k8s.io/v1", "Event")];

/// A metadata field of the wrong type, as kube-apiserver's decoder reports it.
pub fn check_types(meta: &Map<String, Value>) -> Result<(), String> {
    check_types_except(meta, &[])
}

/// [`check_types`] but for the fields in `skip` (fields the server wrote
/// itself, whose type is known).
pub fn check_types_except(meta: &Map<String, Value>, skip: &[&str]) -> Result<(), String> {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, OwnerReference};
    use std::collections::BTreeMap;
    fn check<T: serde::de::DeserializeOwned>(field: &str, value: &Value) -> Result<(), String> {
        if value.is_null() {
            return Ok(());
        }
        T::deserialize(value)
            .map(drop)
            .map_err(|e| format!("metadata.{field}: {e}"))
    }
    for (field, value) in meta {
        if skip.contains(&field.as_str()) {
            continue;
        }
        match field.as_str() {
            "name" | "generateName" | "namespace" | "uid" | "resourceVersion" | "selfLink"
            | "creationTimestamp" | "deletionTimestamp" => check::<String>(field, value)?,
            "generation" | "deletionGracePeriodSeconds" => check::<i64>(field, value)?,
            "labels" | "annotations" => check::<BTreeMap<String, String>>(field, value)?,
            "finalizers" => check::<Vec<String>>(field, value)?,
            "ownerReferences" => check::<Vec<OwnerReference>>(field, value)?,
            "managedFields" => check::<Vec<ManagedFieldsEntry>>(field, value)?,
            _ => {}
        }
    }
    Ok(())
}

/// `ValidateObjectMetaAccessor` for a namespaced object whose names are RFC
/// 1123 subdomains (as custom resources'). An empty name is left to the
/// caller (it may still be generated).
pub fn validate(meta: &Map<String, Value>) -> Vec<FieldError> {
    let text = |key: &str| meta.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut errors = Vec::new();
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        for msg in name_is_dns_subdomain(generate_name, true) {
            errors.push(invalid("metadata.generateName", json!(generate_name), msg));
        }
    }
    let name = text("name");
    if !name.is_empty() {
        for msg in name_is_dns_subdomain(name, false) {
            errors.push(invalid("metadata.name", json!(name), msg));
        }
    }
    let namespace = text("namespace");
    if namespace.is_empty() {
        errors.push(error(
            "metadata.namespace",
            FieldErrorKind::Required,
            None,
            "",
        ));
    } else {
        for msg in dns1123_label_problems(namespace) {
            errors.push(invalid("metadata.namespace", json!(namespace), msg));
        }
    }
    errors.extend(validate_shared(meta));
    errors
}

/// What `ValidateObjectMetaAccessor` checks alike of every object after its
/// name and namespace: generation, labels, annotations, ownerReferences and
/// finalizers.
fn validate_shared(meta: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(generation) = meta.get("generation").and_then(Value::as_i64)
        && generation < 0
    {
        errors.push(invalid(
            "metadata.generation",
            json!(generation),
            "must be greater than or equal to 0".into(),
        ));
    }
    errors.extend(validate_labels(strings(meta.get("labels"))));
    errors.extend(validate_annotations(strings(meta.get("annotations"))));
    if let Some(Value::Array(refs)) = meta.get("ownerReferences") {
        errors.extend(validate_owner_references(refs));
    }
    if let Some(Value::Array(finalizers)) = meta.get("finalizers") {
        errors.extend(validate_finalizers(finalizers));
    }
    errors
}

/// A Namespace's metadata as kube-apiserver's core `ValidateObjectMeta`
/// judges it (cluster-scoped, names RFC 1123 labels; then each finalizer
/// without a path must be one of Kubernetes' own). An empty name is left to
/// the caller.
pub fn validate_namespace(meta: &Map<String, Value>) -> Vec<FieldError> {
    let text = |key: &str| meta.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut errors = Vec::new();
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        // As `maskTrailingDash`: a prefix may end in a dash.
        let masked = match generate_name.strip_suffix('-') {
            Some(rest) if !rest.is_empty() => format!("{rest}a"),
            _ => generate_name.to_owned(),
        };
        for msg in dns1123_label_problems(&masked) {
            errors.push(invalid("metadata.generateName", json!(generate_name), msg));
        }
    }
    let name = text("name");
    if !name.is_empty() {
        for msg in dns1123_label_problems(name) {
            errors.push(invalid("metadata.name", json!(name), msg));
        }
    }
    if !text("namespace").is_empty() {
        errors.push(error(
            "metadata.namespace",
            FieldErrorKind::Forbidden,
            None,
            "not allowed on this type",
        ));
    }
    errors.extend(validate_shared(meta));
    for (i, finalizer) in strings_list(meta.get("finalizers")).iter().enumerate() {
        errors.extend(kube_finalizer_name_problem(
            &format!("metadata.finalizers[{i}]"),
            finalizer,
        ));
    }
    errors
}

/// A Namespace's metadata on update, as kube-apiserver 1.36 judges it:
/// `ValidateNamespace`, then `ValidateObjectMetaAccessorUpdate` (which
/// checks labels, annotations and ownerReferences again) — and the whole
/// once more: it lists every cause of a namespace update twice over (seen
/// on the real server; its message says each once, as ours does).
pub fn validate_namespace_update(
    new: &Map<String, Value>,
    old: &Map<String, Value>,
) -> Vec<FieldError> {
    let mut once = validate_namespace(new);
    once.extend(validate_update(new, old));
    once.extend(validate_labels(strings(new.get("labels"))));
    once.extend(validate_annotations(strings(new.get("annotations"))));
    if let Some(Value::Array(refs)) = new.get("ownerReferences") {
        once.extend(validate_owner_references(refs));
    }
    let mut errors = once.clone();
    errors.extend(once);
    errors
}

/// `spec.finalizers` of a Namespace, as `ValidateNamespace` judges each
/// (every problem at the list's path, without an index).
pub fn validate_namespace_spec_finalizers(finalizers: &[String]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for finalizer in finalizers {
        errors.extend(finalizer_name_problems("spec.finalizers", finalizer));
    }
    errors
}

/// `ValidateNamespaceFinalizeUpdate`'s check of a `/finalize`'s
/// `spec.finalizers`: as on create, but each named by its index.
pub fn validate_namespace_finalize(finalizers: &[String]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, finalizer) in finalizers.iter().enumerate() {
        errors.extend(finalizer_name_problems(
            &format!("spec.finalizers[{i}]"),
            finalizer,
        ));
    }
    errors
}

/// What is wrong with finalizer name `finalizer` at `field`.
fn finalizer_name_problems(field: &str, finalizer: &str) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = label_key_problems(finalizer)
        .into_iter()
        .map(|msg| invalid(field, json!(finalizer), msg))
        .collect();
    errors.extend(kube_finalizer_name_problem(field, finalizer));
    errors
}

/// core's `validateKubeFinalizerName`: a name without a path must be one of
/// Kubernetes' own.
fn kube_finalizer_name_problem(field: &str, finalizer: &str) -> Option<FieldError> {
    (!finalizer.contains('/') && !STANDARD_FINALIZERS.contains(&finalizer)).then(|| {
        invalid(
            field,
            json!(finalizer),
            "name is neither a standard finalizer name nor is it fully qualified".into(),
        )
    })
}

/// `ValidateObjectMetaAccessorUpdate`: what an update may not change of
/// `old`. `new` has been through [`prepare_update`].
pub fn validate_update(new: &Map<String, Value>, old: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if old.get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        let before = strings_list(old.get("finalizers"));
        for finalizer in strings_list(new.get("finalizers")) {
            if !before.contains(&finalizer) {
                errors.push(error(
                    "metadata.finalizers",
                    FieldErrorKind::Forbidden,
                    None,
                    &format!(
                        "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                        crate::golang::quote(&finalizer)
                    ),
                ));
            }
        }
    }
    for field in ["name", "namespace", "uid"] {
        let (now, was) = (new.get(field), old.get(field));
        if now != was {
            errors.push(invalid(
                &format!("metadata.{field}"),
                now.cloned().unwrap_or(json!("")),
                "field is immutable".into(),
            ));
        }
    }
    errors
}

/// What kube-apiserver's `BeforeUpdate` fills in from `old` before
/// validating an update: a missing uid, and the server-kept creation and
/// deletion timestamps and grace period (a client cannot change those).
pub fn prepare_update(new: &mut Map<String, Value>, old: &Map<String, Value>) {
    if new
        .get("uid")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
        && let Some(uid) = old.get("uid")
    {
        new.insert("uid".into(), uid.clone());
    }
    for field in [
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        match old.get(field) {
            Some(value) if !value.is_null() => {
                new.insert(field.into(), value.clone());
            }
            _ => {
                new.remove(field);
            }
        }
    }
}

/// What kube-apiserver's decoder of a custom resource leaves of empty
/// metadata fields: it reads `metadata` into `ObjectMeta` and writes it
/// back, which omits the fields that are null or empty (`finalizers: []`,
/// `labels: {}`, `generateName: ""`, `generation: 0`), so the object
/// stored, and the field manager, never see them. `managedFields` is left
/// to the field manager (`[]` resets them).
pub fn omit_empty(meta: &mut Map<String, Value>) {
    let empty = |key: &str, value: &Value| match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty() && key != "managedFields",
        Value::Object(o) => o.is_empty(),
        Value::Number(n) => key == "generation" && n.as_i64() == Some(0),
        Value::Bool(_) => false,
    };
    if meta.iter().any(|(key, value)| empty(key, value)) {
        meta.retain(|key, value| !empty(key, value));
    }
}

/// `NameIsDNSSubdomain`: a prefix (generateName) may end in '-'.
fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    let masked;
    let name = if prefix && name.ends_with('-') {
        masked = format!("{}a", &name[..name.len() - 1]);
        masked.as_str()
    } else {
        name
    };
    let mut errs = Vec::new();
    if name.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !is_dns1123_subdomain(name) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1123Label` (namespace names).
fn dns1123_label_problems(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    let b = value.as_bytes();
    let ok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let valid = match b {
        [] => false,
        [only] => ok(*only),
        [first, middle @ .., last] => {
            ok(*first) && ok(*last) && middle.iter().all(|&c| ok(c) || c == b'-')
        }
    };
    if !valid {
        errs.push(regex_error(
            DNS1123_LABEL_ERR,
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

fn validate_labels<'a>(labels: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in labels {
        for msg in label_key_problems(key) {
            errors.push(invalid("metadata.labels", json!(key), msg));
        }
        for msg in label_value_problems(value) {
            errors.push(invalid("metadata.labels", json!(value), msg));
        }
    }
    errors
}

fn validate_annotations<'a>(
    annotations: impl Iterator<Item = (&'a str, &'a str)>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut total = 0usize;
    for (key, value) in annotations {
        // A qualified name, except that case does not matter.
        for msg in label_key_problems(&key.to_lowercase()) {
            errors.push(invalid("metadata.annotations", json!(key), msg));
        }
        total += key.len() + value.len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errors.push(error(
            "metadata.annotations",
            FieldErrorKind::TooLong,
            None,
            &format!("must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
        ));
    }
    errors
}

fn validate_finalizers(finalizers: &[Value]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let names: Vec<&str> = finalizers.iter().filter_map(Value::as_str).collect();
    for name in &names {
        for msg in label_key_problems(name) {
            errors.push(invalid("metadata.finalizers", json!(name), msg));
        }
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        errors.push(invalid(
            "metadata.finalizers",
            Value::Array(finalizers.to_vec()),
            "finalizer orphan and foregroundDeletion cannot be both set".into(),
        ));
    }
    errors
}

fn validate_owner_references(refs: &[Value]) -> Vec<FieldError> {
    const PATH: &str = "metadata.ownerReferences";
    let mut errors = Vec::new();
    let mut first_controller: Option<String> = None;
    for r in refs {
        let text = |key: &str| r.get(key).and_then(Value::as_str).unwrap_or_default();
        let (api_version, kind, name, uid) =
            (text("apiVersion"), text("kind"), text("name"), text("uid"));
        // schema.FromAPIVersionAndKind: the version is what follows the last '/'.
        let version = api_version.rsplit('/').next().unwrap_or_default();
        if version.is_empty() {
            errors.push(invalid(
                &format!("{PATH}.apiVersion"),
                json!(api_version),
                "version must not be empty".into(),
            ));
        }
        for (field, value) in [("kind", kind), ("name", name), ("uid", uid)] {
            if value.is_empty() {
                errors.push(invalid(
                    &format!("{PATH}.{field}"),
                    json!(value),
                    "must not be empty".into(),
                ));
            }
        }
        if BANNED_OWNERS.contains(&(api_version, kind)) {
            let gvk = match api_version.split_once('/') {
                Some((group, version)) => format!("{group}/{version}, Kind={kind}"),
                None => format!("/{api_version}, Kind={kind}"),
            };
            errors.push(invalid(
                PATH,
                r.clone(),
                format!("{gvk} is disallowed from being an owner"),
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{name}");
            match &first_controller {
                Some(first) => errors.push(invalid(
                    PATH,
                    Value::Array(refs.to_vec()),
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                    ),
                )),
                None => first_controller = Some(current),
            }
        }
    }
    errors
}

fn strings(value: Option<&Value>) -> impl Iterator<Item = (&str, &str)> {
    value
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
}

/// Kubernetes' own finalizers, which need no domain (`standardFinalizers`).
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// The warnings kube-apiserver gives a custom resource's write
/// (apiextensions' `generateWarningsFromObj`): one for each finalizer it
/// adds (not one `old` already had), sorted and once each, whose name has no
/// path and is not one of Kubernetes' own. A valid object's names are
/// qualified names, so only the domain is ever said.
pub fn finalizer_warnings(
    new: &Map<String, Value>,
    old: Option<&Map<String, Value>>,
) -> Vec<String> {
    let kept = old
        .map(|o| strings_list(o.get("finalizers")))
        .unwrap_or_default();
    let added: std::collections::BTreeSet<String> = strings_list(new.get("finalizers"))
        .into_iter()
        .filter(|f| !kept.contains(f))
        .collect();
    added
        .into_iter()
        .filter(|f| !f.contains('/') && !STANDARD_FINALIZERS.contains(&f.as_str()))
        .map(|f| {
            let domain = if f.contains('.') {
                "a domain-qualified finalizer name including a path (/)"
            } else {
                "a domain-qualified finalizer name"
            };
            format!(
                "metadata.finalizers: {}: prefer {domain} to avoid accidental conflicts with other finalizer writers",
                crate::golang::quote(&f)
            )
        })
        .collect()
}

/// The strings of a JSON list (`finalizers`), the rest left out.
pub(crate) fn strings_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn invalid(field: &str, value: Value, detail: String) -> FieldError {
    FieldError {
        field: field.to_owned(),
        kind: FieldErrorKind::Invalid,
        bad_value: Some(value),
        detail,
    }
}

fn error(field: &str, kind: FieldErrorKind, value: Option<Value>, detail: &str) -> FieldError {
    FieldError {
        field: field.to_owned(),
        kind,
        bad_value: value,
        detail: detail.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn finalizers_a_write_adds_without_a_domain_and_path_are_warned_about_once_in_order() {
        let new = meta(json!({"finalizers": [
            "cleanup", "example.com/hold", "kubernetes", "orphan", "foregroundDeletion",
            "finalizers.fluxcd.io", "cleanup", "b-kept", "Upper"
        ]}));
        let old = meta(json!({"finalizers": ["b-kept"]}));
        assert_eq!(
            finalizer_warnings(&new, Some(&old)),
            [
                r#"metadata.finalizers: "Upper": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"#,
                r#"metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"#,
                r#"metadata.finalizers: "finalizers.fluxcd.io": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"#,
            ]
        );
        assert_eq!(finalizer_warnings(&new, Some(&new)), Vec::<String>::new());
        assert_eq!(
            finalizer_warnings(&meta(json!({})), None),
            Vec::<String>::new()
        );
    }

    #[test]
    fn valid_metadata_passes() {
        let m = meta(json!({
            "name": "db1", "namespace": "team-a", "generateName": "db-",
            "labels": {"app.kubernetes.io/name": "pg", "empty": ""},
            "annotations": {"Example.com/Note": "x".repeat(1000)},
            "finalizers": ["example.com/block", "orphan"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u", "controller": true}]
        }));
        assert!(check_types(&m).is_ok());
        assert_eq!(messages(&validate(&m)), Vec::<String>::new());
    }

    #[test]
    fn invalid_names_namespaces_and_labels_are_refused_with_kube_apiserver_texts() {
        let m = meta(json!({
            "name": "Bad_Name", "namespace": "Bad_NS", "generateName": "x_-",
            "labels": {"k": "v".repeat(64), "bad key!": "ok", "nul": "a\u{0}b"}
        }));
        let got = messages(&validate(&m));
        let has = |s: &str| got.iter().any(|m| m.contains(s));
        assert!(
            has("metadata.namespace: Invalid value: \"Bad_NS\": a lowercase RFC 1123 label"),
            "{got:#?}"
        );
        assert!(
            has("metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"),
            "{got:#?}"
        );
        assert!(
            has("metadata.generateName: Invalid value: \"x_-\""),
            "{got:#?}"
        );
        assert!(has("metadata.labels: Invalid value: \"vvvv"), "{got:#?}");
        assert!(has("must be no more than 63 bytes"), "{got:#?}");
        assert!(
            has("metadata.labels: Invalid value: \"bad key!\""),
            "{got:#?}"
        );
        assert!(
            has("metadata.labels: Invalid value: \"a\\x00b\""),
            "{got:#?}"
        );
        let long_ns = meta(json!({"name": "a", "namespace": "a".repeat(300)}));
        assert!(messages(&validate(&long_ns))[0].contains("must be no more than 63 bytes"));
    }

    #[test]
    fn annotations_over_256_kib_in_total_are_too_long() {
        let m = meta(json!({"name": "a", "namespace": "n", "annotations": {
            "a": "x".repeat(150 * 1024), "b": "x".repeat(150 * 1024)}}));
        assert_eq!(
            messages(&validate(&m)),
            ["metadata.annotations: Too long: must have at most 262144 bytes"]
        );
        let bad_key = meta(json!({"name": "a", "namespace": "n", "annotations": {"-x": ""}}));
        assert!(
            messages(&validate(&bad_key))[0]
                .starts_with("metadata.annotations: Invalid value: \"-x\"")
        );
    }

    #[test]
    fn finalizers_and_owner_references_are_checked() {
        let m = meta(json!({"name": "a", "namespace": "n",
        "finalizers": ["not a name", "orphan", "foregroundDeletion"],
        "ownerReferences": [
            {"apiVersion": "", "kind": "", "name": "", "uid": ""},
            {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"},
            {"apiVersion": "apps/v1", "kind": "A", "name": "x", "uid": "2", "controller": true},
            {"apiVersion": "apps/v1", "kind": "B", "name": "y", "uid": "3", "controller": true}
        ]}));
        let got = messages(&validate(&m));
        for want in [
            "metadata.finalizers: Invalid value: \"not a name\"",
            "finalizer orphan and foregroundDeletion cannot be both set",
            "metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty",
            "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty",
            "/v1, Kind=Event is disallowed from being an owner",
            "Only one reference can have Controller set to true. Found \"true\" in references for A/x and B/y",
        ] {
            assert!(
                got.iter().any(|m| m.contains(want)),
                "{want} not in {got:#?}"
            );
        }
    }

    #[test]
    fn wrongly_typed_fields_are_decoding_errors() {
        for (field, value) in [
            ("finalizers", json!("zz")),
            ("labels", json!(["a"])),
            ("annotations", json!({"a": 1})),
            ("ownerReferences", json!([{"name": 5}])),
            ("generation", json!("1")),
            ("name", json!(7)),
        ] {
            let m = meta(json!({ field: value }));
            let err = check_types(&m).unwrap_err();
            assert!(err.starts_with(&format!("metadata.{field}: ")), "{err}");
            assert!(check_types_except(&m, &[field]).is_ok());
        }
        let m = meta(json!({"managedFields": [{"manager": 1}]}));
        assert!(
            check_types(&m)
                .unwrap_err()
                .starts_with("metadata.managedFields: ")
        );
        assert!(check_types_except(&m, &["managedFields"]).is_ok());
    }

    #[test]
    fn updates_keep_identity_and_add_no_finalizers_while_deleting() {
        let old = meta(json!({"name": "a", "namespace": "n", "uid": "u1",
            "creationTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["example.com/x"],
            "deletionTimestamp": "2026-01-02T00:00:00Z"}));
        let mut new = meta(
            json!({"name": "a", "namespace": "n", "creationTimestamp": null,
            "finalizers": ["example.com/x", "example.com/y"]}),
        );
        prepare_update(&mut new, &old);
        assert_eq!(new["uid"], "u1");
        assert_eq!(new["creationTimestamp"], old["creationTimestamp"]);
        let got = messages(&validate_update(&new, &old));
        assert_eq!(got.len(), 1, "{got:#?}");
        assert!(got[0].contains("no new finalizers can be added if the object is being deleted"));

        let mut changed_uid = meta(json!({"name": "a", "namespace": "n", "uid": "other"}));
        prepare_update(&mut changed_uid, &old);
        assert_eq!(
            messages(&validate_update(&changed_uid, &old)),
            ["metadata.uid: Invalid value: \"other\": field is immutable"]
        );
    }

    /// kube-apiserver 1.36: a create with `finalizers: []` stores no
    /// finalizers, and its managedFields own none.
    #[test]
    fn empty_fields_are_omitted_as_object_meta_omits_them() {
        let mut m = meta(json!({
            "name": "a", "generateName": "", "finalizers": [], "labels": {}, "annotations": null,
            "generation": 0, "deletionGracePeriodSeconds": 0, "managedFields": [],
            "ownerReferences": [{"uid": "u"}]
        }));
        omit_empty(&mut m);
        assert_eq!(
            Value::Object(m),
            json!({"name": "a", "deletionGracePeriodSeconds": 0, "managedFields": [],
                   "ownerReferences": [{"uid": "u"}]})
        );
    }
}
