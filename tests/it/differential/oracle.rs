//! The two validators asked the same question. kube-apiserver: a CRD with
//! the kind's schema under a group of its own, installed on the test control
//! plane, and a server-side dry-run create (`dryRun=All`, nothing stored)
//! per case. Ours: the kind's compiled schema, in process, through
//! `CompiledSchema::default_and_validate` (what the write path calls),
//! with the write path's treatment of unknown fields under
//! `fieldValidation` (Strict refuses them with 400, Warn warns).

use std::time::Duration;

use kubectl_cozy::kinds::registry::ServedKind;
use serde_json::{Value, json};

use super::cases::Case;

/// One cause of a 422, as kube-apiserver's `StatusCause`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cause {
    pub field: String,
    pub reason: String,
    pub message: String,
}

/// What a validator answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Created (dry run): the defaulted, pruned `spec` and the warnings.
    Accepted { spec: Value, warnings: Vec<String> },
    /// 422 Invalid, causes sorted.
    Invalid { causes: Vec<Cause> },
    /// 400 strict decoding error; the unknown fields it names, sorted.
    Strict { unknown: Vec<String> },
    /// Anything else (a finding in itself).
    Other { code: u16, body: String },
}

impl Verdict {
    /// Accepted or refused, for the first comparison.
    pub fn accepted(&self) -> bool {
        matches!(self, Verdict::Accepted { .. })
    }
}

/// The keywords of a CRD's `JSONSchemaProps`; anything else (a kind's own
/// `x-` extensions) is dropped from the CRD, as kube-apiserver would refuse it.
const CRD_KEYWORDS: &[&str] = &[
    "description",
    "type",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "nullable",
    "example",
    "externalDocs",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// `schema` with only CRD keywords; the dropped ones are added to `dropped`.
pub fn crd_schema(schema: &Value, dropped: &mut Vec<String>) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, v) in m {
        if !CRD_KEYWORDS.contains(&k.as_str()) {
            if !dropped.contains(k) {
                dropped.push(k.clone());
            }
            continue;
        }
        let v = match k.as_str() {
            "properties" => Value::Object(
                v.as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, sub)| (name.clone(), crd_schema(sub, dropped)))
                    .collect(),
            ),
            "items" | "not" | "additionalProperties" => crd_schema(v, dropped),
            "allOf" | "anyOf" | "oneOf" => Value::Array(
                v.as_array()
                    .into_iter()
                    .flatten()
                    .map(|sub| crd_schema(sub, dropped))
                    .collect(),
            ),
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// Where a kind is served on kube-apiserver for the comparison.
#[derive(Debug, Clone)]
pub struct Crd {
    pub group: String,
    pub plural: String,
    pub kind: String,
}

impl Crd {
    /// The CRD manifest for `kind` under `group`, and the keywords dropped.
    pub fn manifest(kind: &ServedKind, group: &str) -> (Crd, Value, Vec<String>) {
        let d = &kind.resolved.definition;
        let mut dropped = Vec::new();
        let schema = crd_schema(&d.open_api_schema, &mut dropped);
        let manifest = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{}.{group}", d.plural)},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"kind": d.kind, "plural": d.plural, "singular": d.singular},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": schema}}}
                }]
            }
        });
        let crd = Crd {
            group: group.to_owned(),
            plural: d.plural.clone(),
            kind: d.kind.clone(),
        };
        (crd, manifest, dropped)
    }
}

/// kube-apiserver's answer to a dry-run create of `case`.
pub async fn theirs(client: &kube::Client, crd: &Crd, namespace: &str, case: &Case) -> Verdict {
    let body = json!({
        "apiVersion": format!("{}/v1", crd.group),
        "kind": crd.kind,
        "metadata": {"name": format!("case-{}", case.index)},
        "spec": case.spec,
    });
    let mode = if case.strict { "Strict" } else { "Warn" };
    let uri = format!(
        "/apis/{}/v1/namespaces/{namespace}/{}?dryRun=All&fieldValidation={mode}",
        crd.group, crd.plural
    );
    let mut last = String::new();
    for _attempt in 0..5 {
        let request = http::Request::builder()
            .method(http::Method::POST)
            .uri(&uri)
            .header("content-type", "application/json")
            .body(kube::client::Body::from(
                serde_json::to_vec(&body).expect("JSON"),
            ))
            .expect("request");
        match client.send(request).await {
            Ok(response) => return read(response).await,
            Err(e) => {
                last = e.to_string();
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    panic!("POST {uri}: {last}")
}

/// The verdict of a write's `response`.
pub(super) async fn read(response: http::Response<kube::client::Body>) -> Verdict {
    use http_body_util::BodyExt as _;
    let code = response.status().as_u16();
    let warnings: Vec<String> = response
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .map(|v| unquote_warning(&String::from_utf8_lossy(v.as_bytes())))
        .collect();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("response body")
        .to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    match code {
        200 | 201 => Verdict::Accepted {
            spec: body.get("spec").cloned().unwrap_or(Value::Null),
            warnings: sorted(warnings),
        },
        422 => {
            let causes = body
                .pointer("/details/causes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| Cause {
                    field: text(c, "field"),
                    reason: text(c, "reason"),
                    message: text(c, "message"),
                })
                .collect();
            Verdict::Invalid {
                causes: sorted(causes),
            }
        }
        400 if text(&body, "message").contains("strict decoding error: ") => Verdict::Strict {
            unknown: unknown_fields(&text(&body, "message")),
        },
        _ => Verdict::Other {
            code,
            body: String::from_utf8_lossy(&bytes).chars().take(2000).collect(),
        },
    }
}

fn text(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// `299 - "text"` → `text`.
fn unquote_warning(header: &str) -> String {
    let inner = header
        .strip_prefix("299 - \"")
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(header);
    inner.replace("\\\"", "\"").replace("\\\\", "\\")
}

/// The fields a `strict decoding error` names, sorted. kube-apiserver
/// quotes them without escaping (`unknown field "spec.m.q"uote"`), so the
/// list is split on the separators.
fn unknown_fields(message: &str) -> Vec<String> {
    let list = message
        .split_once("strict decoding error: ")
        .map_or("", |(_, rest)| rest);
    sorted(
        list.split("\", unknown field \"")
            .map(|f| {
                let f = f.strip_prefix("unknown field \"").unwrap_or(f);
                f.strip_suffix('"').unwrap_or(f).to_owned()
            })
            .collect(),
    )
}

/// Our answer for `case`: the kind's compiled schema, as the write path
/// applies it.
pub fn ours(kind: &ServedKind, case: &Case) -> Verdict {
    let mut spec = case.spec.clone();
    let outcome = kind.schema.default_and_validate(&mut spec, "spec");
    // Strict refuses unknown fields before values are judged, as the write
    // path and kube-apiserver's strict decoder do.
    if case.strict && !outcome.pruned.is_empty() {
        return Verdict::Strict {
            unknown: sorted(outcome.pruned),
        };
    }
    if !outcome.errors.is_empty() {
        return Verdict::Invalid {
            causes: causes_of(&outcome.errors),
        };
    }
    let warnings = outcome
        .pruned
        .iter()
        .map(|p| format!("unknown field \"{p}\""))
        .collect();
    Verdict::Accepted {
        spec,
        warnings: sorted(warnings),
    }
}

/// Our errors as kube-apiserver's causes, sorted.
pub(super) fn causes_of(errors: &[kubectl_cozy::kinds::schema::FieldError]) -> Vec<Cause> {
    sorted(
        errors
            .iter()
            .map(|e| Cause {
                field: e.field.clone(),
                reason: e.kind.reason().to_owned(),
                message: e.message(),
            })
            .collect(),
    )
}
