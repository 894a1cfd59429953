//! OpenAPI documents built from a kinds [`Snapshot`], shaped like the ones
//! kube-apiserver publishes for custom resources
//! (k8s.io/apiextensions-apiserver `controller/openapi/builder`):
//!
//! - `GET /openapi/v2` → [`v2`]: Swagger 2.0 with every served kind;
//! - `GET /openapi/v3` → [`v3_root_from`]: `{"paths":{"apis/<g>/<v>":
//!   {"serverRelativeURL":"/openapi/v3/apis/<g>/<v>?hash=<HASH>"}}}`;
//! - `GET /openapi/v3/apis/<g>/<v>` → [`v3_group_version`]; its `ETag` and
//!   `?hash=` are [`hash_of`] the document.
//!
//! A standalone server also serves the core `v1` namespaces, so with
//! [`OpenApiOptions::core_namespaces`] `Namespace` is in v2 too, and v3 has
//! an `api/v1` document ([`v3_core_v1`], from [`namespaces`]).
//!
//! Per kind: list/create/deletecollection on
//! `/apis/<g>/<v>/namespaces/{namespace}/<plural>`, get/put/patch/delete on
//! `…/{name}`, get on `…/{name}/status`, and list on `/apis/<g>/<v>/<plural>`
//! (all namespaces). Each operation carries `x-kubernetes-action` and a
//! single-object `x-kubernetes-group-version-kind`; each definition an array
//! of them. Definitions are named as upstream names custom resources:
//! `util.ToRESTFriendlyName("<group>/<version>/<kind>")` reverses the group,
//! so `Postgres` in `apps.cozystack.io/v1alpha1` is
//! `io.cozystack.apps.v1alpha1.Postgres` (see [`definition_name`]).
//!
//! PATCH consumes only `application/json-patch+json`,
//! `application/merge-patch+json` and `application/apply-patch+yaml`: no
//! strategic merge patch, so `kubectl apply` computes a merge patch.
//! `fieldValidation` is declared only with
//! [`OpenApiOptions::field_validation`], since kubectl sends
//! `fieldValidation=Strict` (and skips its own validation) whenever it is.
//!
//! `spec` is the kind's schema. v3 keeps it whole (after unfolding
//! `x-kubernetes-int-or-string` into `anyOf: [integer, string]`, as upstream);
//! v2 gets upstream's `ToStructuralOpenAPIV2` treatment (junctors dropped,
//! `nullable` and preserve-unknown-fields nodes made untyped and
//! property-less, arrays without items untyped) and, like kube-apiserver's
//! published v2, no `default`s.
//!
//! Each kind's definition also carries [`RELEASE_EXTENSION`]: the chart its
//! apps install and their HelmReleases' name prefix, which discovery does
//! not carry and `kinds list` reads from a cluster.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};

mod namespaces;

use super::negotiate::PATCH_TYPES;
use crate::kinds::definition::{KindDefinition, ResolvedKind};
use crate::kinds::registry::Snapshot;

/// Options of the generated documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct OpenApiOptions {
    /// Declare the `fieldValidation` query parameter on create, update and
    /// patch. Only set this when the server honours `Strict` and `Warn`.
    pub field_validation: bool,
    /// Describe the core `v1` namespaces (v2, and v3 at `api/v1`): only a
    /// standalone server serves them.
    pub core_namespaces: bool,
}

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    V2,
    V3,
}

impl Flavor {
    fn reference(self, name: &str) -> Value {
        let prefix = match self {
            Flavor::V2 => "#/definitions/",
            Flavor::V3 => "#/components/schemas/",
        };
        json!({ "$ref": format!("{prefix}{name}") })
    }

    fn meta(self, name: &str) -> Value {
        self.reference(&format!("{META}.{name}"))
    }
}

/// The definition name kube-apiserver gives a custom resource kind:
/// `ToRESTFriendlyName("<group>/<version>/<kind>")`, i.e. the group's labels
/// reversed (`io.cozystack.apps.v1alpha1.Postgres`).
pub(crate) fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let group: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", group.join("."))
}

/// `endpoints.GetArticleForNoun`: no article for nouns that look plural.
fn article_for(noun: &str) -> &'static str {
    if !noun.ends_with("ss") && noun.ends_with('s') {
        return " ";
    }
    match noun.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => " an ",
        _ => " a ",
    }
}

/// kube-openapi's `ToValidOperationID`.
fn operation_id_part(s: &str, capitalize_first: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// The operation ID and tag kube-apiserver derives for `verb` + `rest` on
/// group `group`, version `version` (`listAppsCozystackIoV1alpha1NamespacedPostgres`;
/// the core group is `core`: `listCoreV1Namespace`).
fn operation_id(verb: &str, rest: &str, group: &str, version: &str) -> (String, String) {
    let trimmed = match group {
        "" => "core",
        g => g.strip_suffix(".k8s.io").unwrap_or(g),
    };
    let id = format!(
        "{verb}{}{}{}",
        operation_id_part(trimmed, true),
        operation_id_part(version, true),
        operation_id_part(rest, true)
    );
    let tag = format!(
        "{}_{}",
        operation_id_part(trimmed, false),
        operation_id_part(version, false)
    );
    (id, tag)
}

#[derive(Debug, Clone, Copy)]
struct Param {
    name: &'static str,
    in_: &'static str,
    type_: &'static str,
    description: &'static str,
}

const fn query(name: &'static str, type_: &'static str, description: &'static str) -> Param {
    Param {
        name,
        in_: "query",
        type_,
        description,
    }
}

const PRETTY: Param = query(
    "pretty",
    "string",
    "If 'true', then the output is pretty printed.",
);
const ALLOW_WATCH_BOOKMARKS: Param = query(
    "allowWatchBookmarks",
    "boolean",
    "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag. Ignored for non-watch requests.",
);
const CONTINUE: Param = query(
    "continue",
    "string",
    "The continue option should be set when retrieving more results from the server: its value is the metadata.continue of the previous page. An expired token is answered with 410 Gone (reason Expired).",
);
const FIELD_SELECTOR: Param = query(
    "fieldSelector",
    "string",
    "A selector to restrict the list of returned objects by their fields (metadata.name and metadata.namespace). Defaults to everything.",
);
const LABEL_SELECTOR: Param = query(
    "labelSelector",
    "string",
    "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
);
const LIMIT: Param = query(
    "limit",
    "integer",
    "limit is a maximum number of responses to return for a list call. If more items exist, the server sets the `continue` field on the list metadata.",
);
const RESOURCE_VERSION: Param = query(
    "resourceVersion",
    "string",
    "resourceVersion sets a constraint on what resource versions a request may be served from. Defaults to unset (the most recent).",
);
const RESOURCE_VERSION_MATCH: Param = query(
    "resourceVersionMatch",
    "string",
    "resourceVersionMatch determines how resourceVersion is applied to list calls: NotOlderThan or Exact. Requires resourceVersion.",
);
const SEND_INITIAL_EVENTS: Param = query(
    "sendInitialEvents",
    "boolean",
    "With watch=true, start the watch stream with synthetic events for the current state of all objects, followed by a bookmark annotated \"k8s.io/initial-events-end\".",
);
const TIMEOUT_SECONDS: Param = query(
    "timeoutSeconds",
    "integer",
    "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
);
const WATCH: Param = query(
    "watch",
    "boolean",
    "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.",
);
const DRY_RUN: Param = query(
    "dryRun",
    "string",
    "When present, indicates that modifications should not be persisted. The only valid value is All.",
);
const FIELD_MANAGER: Param = query(
    "fieldManager",
    "string",
    "fieldManager is a name associated with the actor or entity that is making these changes. Required for apply patches (application/apply-patch+yaml).",
);
const FIELD_VALIDATION: Param = query(
    "fieldValidation",
    "string",
    "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn (the default) or Strict.",
);
const FORCE: Param = query(
    "force",
    "boolean",
    "Force is going to \"force\" apply requests: the fields are taken over from their other managers. Must be unset for non-apply patch requests.",
);
const GRACE_PERIOD_SECONDS: Param = query(
    "gracePeriodSeconds",
    "integer",
    "The duration in seconds before the object should be deleted.",
);
const ORPHAN_DEPENDENTS: Param = query(
    "orphanDependents",
    "boolean",
    "Deprecated: use propagationPolicy. Whether the dependent objects should be orphaned.",
);
const PROPAGATION_POLICY: Param = query(
    "propagationPolicy",
    "string",
    "Whether and how garbage collection will be performed: Orphan, Background or Foreground.",
);
const NAMESPACE: Param = Param {
    name: "namespace",
    in_: "path",
    type_: "string",
    description: "object name and auth scope, such as for teams and projects",
};

const LIST_PARAMS: &[Param] = &[
    ALLOW_WATCH_BOOKMARKS,
    CONTINUE,
    FIELD_SELECTOR,
    LABEL_SELECTOR,
    LIMIT,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
    WATCH,
];
const DELETE_COLLECTION_PARAMS: &[Param] = &[
    CONTINUE,
    DRY_RUN,
    FIELD_SELECTOR,
    GRACE_PERIOD_SECONDS,
    LABEL_SELECTOR,
    LIMIT,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
];
const DELETE_PARAMS: &[Param] = &[
    DRY_RUN,
    GRACE_PERIOD_SECONDS,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
];

fn write_params(field_validation: bool, patch: bool) -> Vec<Param> {
    let mut params = vec![DRY_RUN, FIELD_MANAGER];
    if field_validation {
        params.push(FIELD_VALIDATION);
    }
    if patch {
        params.push(FORCE);
    }
    params
}

fn param_json(flavor: Flavor, p: &Param) -> Value {
    let mut out = Map::new();
    match flavor {
        Flavor::V2 => {
            out.insert("uniqueItems".into(), true.into());
            out.insert("type".into(), p.type_.into());
            out.insert("description".into(), p.description.into());
            out.insert("name".into(), p.name.into());
            out.insert("in".into(), p.in_.into());
            if p.in_ == "path" {
                out.insert("required".into(), true.into());
            }
        }
        Flavor::V3 => {
            out.insert("name".into(), p.name.into());
            out.insert("in".into(), p.in_.into());
            out.insert("description".into(), p.description.into());
            if p.in_ == "path" {
                out.insert("required".into(), true.into());
            }
            out.insert(
                "schema".into(),
                json!({"type": p.type_, "uniqueItems": true}),
            );
        }
    }
    Value::Object(out)
}

/// A request body: media types, schema, required.
struct Body<'a> {
    types: &'a [&'a str],
    schema: Value,
    required: bool,
}

/// One operation of a path.
struct Operation<'a> {
    action: &'static str,
    verb: &'static str,
    rest: String,
    description: String,
    params: &'a [Param],
    body: Option<Body<'a>>,
    responses: Vec<(&'static str, &'static str, Option<Value>)>,
}

/// What every operation of one kind shares.
struct Context<'a> {
    flavor: Flavor,
    group: &'a str,
    version: &'a str,
    gvk: Value,
}

const JSON_YAML: &[&str] = &["application/json", "application/yaml"];

/// What a create answers: the object, as 200, 201 or 202 (kube-apiserver's
/// three).
fn create_responses(object: &Value) -> Vec<(&'static str, &'static str, Option<Value>)> {
    ["200", "201", "202"]
        .into_iter()
        .zip(["OK", "Created", "Accepted"])
        .map(|(code, text)| (code, text, Some(object.clone())))
        .collect()
}

impl Context<'_> {
    fn operation(&self, op: Operation<'_>) -> Value {
        let (id, tag) = operation_id(op.verb, &op.rest, self.group, self.version);
        let mut out = Map::new();
        let mut responses = Map::new();
        for (code, description, schema) in op.responses {
            let mut response = Map::new();
            response.insert("description".into(), description.into());
            if let Some(schema) = schema {
                match self.flavor {
                    Flavor::V2 => {
                        response.insert("schema".into(), schema);
                    }
                    Flavor::V3 => {
                        let content: Map<String, Value> = JSON_YAML
                            .iter()
                            .map(|t| ((*t).to_owned(), json!({"schema": schema})))
                            .collect();
                        response.insert("content".into(), Value::Object(content));
                    }
                }
            }
            responses.insert(code.into(), Value::Object(response));
        }
        responses.insert("401".into(), json!({"description": "Unauthorized"}));
        let mut params: Vec<Value> = op
            .params
            .iter()
            .map(|p| param_json(self.flavor, p))
            .collect();
        match self.flavor {
            Flavor::V2 => {
                out.insert("description".into(), op.description.into());
                let consumes: Vec<&str> = match &op.body {
                    Some(body) => body.types.to_vec(),
                    None => vec!["*/*"],
                };
                out.insert("consumes".into(), json!(consumes));
                out.insert("produces".into(), json!(JSON_YAML));
                out.insert("schemes".into(), json!(["https"]));
                out.insert("tags".into(), json!([tag]));
                out.insert("operationId".into(), id.into());
                if let Some(body) = op.body {
                    let mut param = Map::new();
                    param.insert("name".into(), "body".into());
                    param.insert("in".into(), "body".into());
                    if body.required {
                        param.insert("required".into(), true.into());
                    }
                    param.insert("schema".into(), body.schema);
                    params.insert(0, Value::Object(param));
                }
                if !params.is_empty() {
                    out.insert("parameters".into(), Value::Array(params));
                }
                out.insert("responses".into(), Value::Object(responses));
            }
            Flavor::V3 => {
                out.insert("tags".into(), json!([tag]));
                out.insert("description".into(), op.description.into());
                out.insert("operationId".into(), id.into());
                if !params.is_empty() {
                    out.insert("parameters".into(), Value::Array(params));
                }
                if let Some(body) = op.body {
                    let content: Map<String, Value> = body
                        .types
                        .iter()
                        .map(|t| ((*t).to_owned(), json!({"schema": body.schema})))
                        .collect();
                    let mut request = Map::new();
                    request.insert("content".into(), Value::Object(content));
                    if body.required {
                        request.insert("required".into(), true.into());
                    }
                    out.insert("requestBody".into(), Value::Object(request));
                }
                out.insert("responses".into(), Value::Object(responses));
            }
        }
        out.insert("x-kubernetes-action".into(), op.action.into());
        out.insert("x-kubernetes-group-version-kind".into(), self.gvk.clone());
        Value::Object(out)
    }
}

fn path_item(operations: Vec<(&'static str, Value)>, path_params: Vec<Value>) -> Value {
    let mut item = Map::new();
    for (method, op) in operations {
        item.insert(method.into(), op);
    }
    item.insert("parameters".into(), Value::Array(path_params));
    Value::Object(item)
}

/// The paths of one kind, in kube-apiserver's layout.
fn kind_paths(
    flavor: Flavor,
    d: &KindDefinition,
    options: &OpenApiOptions,
) -> Vec<(String, Value)> {
    let object = flavor.reference(&definition_name(&d.group, &d.version, &d.kind));
    let list = flavor.reference(&definition_name(
        &d.group,
        &d.version,
        &format!("{}List", d.kind),
    ));
    let status = flavor.meta("Status");
    let ctx = Context {
        flavor,
        group: &d.group,
        version: &d.version,
        gvk: json!({"group": d.group, "version": d.version, "kind": d.kind}),
    };
    let kind = d.kind.as_str();
    let article = article_for(kind);
    let pretty = param_json(flavor, &PRETTY);
    let namespace = param_json(flavor, &NAMESPACE);
    let name_param = Param {
        name: "name",
        in_: "path",
        type_: "string",
        description: "",
    };
    let name = {
        let mut p = param_json(flavor, &name_param);
        p["description"] = format!("name of the {kind}").into();
        p
    };
    let write = write_params(options.field_validation, false);
    let patch = write_params(options.field_validation, true);
    let get_params = [RESOURCE_VERSION];
    let root = format!("/apis/{}/{}", d.group, d.version);

    let list_all = ctx.operation(Operation {
        action: "list",
        verb: "list",
        rest: format!("{kind}ForAllNamespaces"),
        description: format!("list objects of kind {kind}"),
        params: LIST_PARAMS,
        body: None,
        responses: vec![("200", "OK", Some(list.clone()))],
    });
    let list_ns = ctx.operation(Operation {
        action: "list",
        verb: "list",
        rest: format!("Namespaced{kind}"),
        description: format!("list objects of kind {kind}"),
        params: LIST_PARAMS,
        body: None,
        responses: vec![("200", "OK", Some(list))],
    });
    let create = ctx.operation(Operation {
        action: "post",
        verb: "create",
        rest: format!("Namespaced{kind}"),
        description: format!("create{article}{kind}"),
        params: &write,
        body: Some(Body {
            types: JSON_YAML,
            schema: object.clone(),
            required: true,
        }),
        responses: create_responses(&object),
    });
    let delete_collection = ctx.operation(Operation {
        action: "deletecollection",
        verb: "delete",
        rest: format!("CollectionNamespaced{kind}"),
        description: format!("delete collection of {kind}"),
        params: DELETE_COLLECTION_PARAMS,
        body: Some(Body {
            types: &["application/json"],
            schema: flavor.meta("DeleteOptions"),
            required: false,
        }),
        responses: vec![("200", "OK", Some(status.clone()))],
    });
    let read = ctx.operation(Operation {
        action: "get",
        verb: "read",
        rest: format!("Namespaced{kind}"),
        description: format!("read the specified {kind}"),
        params: &get_params,
        body: None,
        responses: vec![("200", "OK", Some(object.clone()))],
    });
    let replace = ctx.operation(Operation {
        action: "put",
        verb: "replace",
        rest: format!("Namespaced{kind}"),
        description: format!("replace the specified {kind}"),
        params: &write,
        body: Some(Body {
            types: JSON_YAML,
            schema: object.clone(),
            required: true,
        }),
        responses: vec![
            ("200", "OK", Some(object.clone())),
            ("201", "Created", Some(object.clone())),
        ],
    });
    let patch_op = ctx.operation(Operation {
        action: "patch",
        verb: "patch",
        rest: format!("Namespaced{kind}"),
        description: format!("partially update the specified {kind}"),
        params: &patch,
        body: Some(Body {
            types: &PATCH_TYPES,
            schema: flavor.meta("Patch"),
            required: true,
        }),
        responses: vec![
            ("200", "OK", Some(object.clone())),
            ("201", "Created", Some(object.clone())),
        ],
    });
    let delete = ctx.operation(Operation {
        action: "delete",
        verb: "delete",
        rest: format!("Namespaced{kind}"),
        description: format!("delete{article}{kind}"),
        params: DELETE_PARAMS,
        body: Some(Body {
            types: &["application/json"],
            schema: flavor.meta("DeleteOptions"),
            required: false,
        }),
        responses: vec![
            ("200", "OK", Some(status.clone())),
            ("202", "Accepted", Some(status)),
        ],
    });
    let read_status = ctx.operation(Operation {
        action: "get",
        verb: "read",
        rest: format!("Namespaced{kind}Status"),
        description: format!("read status of the specified {kind}"),
        params: &get_params,
        body: None,
        responses: vec![("200", "OK", Some(object))],
    });

    let namespaced = format!("{root}/namespaces/{{namespace}}/{}", d.plural);
    vec![
        (
            format!("{root}/{}", d.plural),
            path_item(vec![("get", list_all)], vec![pretty.clone()]),
        ),
        (
            namespaced.clone(),
            path_item(
                vec![
                    ("get", list_ns),
                    ("post", create),
                    ("delete", delete_collection),
                ],
                vec![namespace.clone(), pretty.clone()],
            ),
        ),
        (
            format!("{namespaced}/{{name}}"),
            path_item(
                vec![
                    ("get", read),
                    ("put", replace),
                    ("delete", delete),
                    ("patch", patch_op),
                ],
                vec![name.clone(), namespace.clone(), pretty.clone()],
            ),
        ),
        (
            format!("{namespaced}/{{name}}/status"),
            path_item(vec![("get", read_status)], vec![name, namespace, pretty]),
        ),
    ]
}

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.";
const KIND_DESCRIPTION: &str =
    "Kind is a string value representing the REST resource this object represents. In CamelCase.";

fn type_meta_properties(props: &mut Map<String, Value>) {
    props.insert(
        "apiVersion".into(),
        json!({"description": API_VERSION_DESCRIPTION, "type": "string"}),
    );
    props.insert(
        "kind".into(),
        json!({"description": KIND_DESCRIPTION, "type": "string"}),
    );
}

/// The extension of a kind's definition naming its chart (`chart`, a
/// `chartRef` as `Kind/name`), `chartVersion` and `releasePrefix`.
pub(crate) const RELEASE_EXTENSION: &str = "x-kubectl-cozy-release";

fn release_extension(kind: &ResolvedKind) -> Value {
    let d = &kind.definition;
    let mut out = Map::new();
    match (&d.release.chart, &d.release.chart_ref) {
        (Some(chart), _) => {
            out.insert("chart".into(), chart.name.clone().into());
            if let Some(version) = &chart.version {
                out.insert("chartVersion".into(), version.clone().into());
            }
        }
        (None, Some(r)) => {
            out.insert("chart".into(), format!("{}/{}", r.kind, r.name).into());
        }
        (None, None) => {}
    }
    out.insert("releasePrefix".into(), kind.release_prefix.clone().into());
    Value::Object(out)
}

fn gvk_extension(group: &str, version: &str, kind: &str) -> Value {
    json!([{"group": group, "kind": kind, "version": version}])
}

/// The `status` every kind reports (see `storage::helm_release`).
pub(crate) fn status_schema() -> Value {
    json!({
        "description": "Status of the application's HelmRelease, as reported by Flux.",
        "type": "object",
        "properties": {
            "conditions": {
                "description": "The Ready and Released conditions of the HelmRelease.",
                "type": "array",
                "items": {
                    "description": "A condition of the release.",
                    "type": "object",
                    "required": ["type", "status"],
                    "properties": {
                        "lastTransitionTime": {"description": "When the condition last changed.", "type": "string", "format": "date-time"},
                        "message": {"description": "Human-readable details.", "type": "string"},
                        "observedGeneration": {"description": "The generation the condition was computed for.", "type": "integer", "format": "int64"},
                        "reason": {"description": "Machine-readable reason, in CamelCase.", "type": "string"},
                        "status": {"description": "True, False or Unknown.", "type": "string"},
                        "type": {"description": "Ready or Released.", "type": "string"}
                    }
                },
                "x-kubernetes-list-map-keys": ["type"],
                "x-kubernetes-list-type": "map"
            },
            "observedGeneration": {
                "description": "The generation of the application last reconciled.",
                "type": "integer",
                "format": "int64"
            },
            "version": {
                "description": "The chart version last attempted.",
                "type": "string"
            }
        }
    })
}

fn is_true(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool) == Some(true)
}

/// upstream `ToStructuralOpenAPIV2`, plus dropping `default`s.
fn to_v2(schema: &mut Value) {
    let Value::Object(s) = schema else {
        return;
    };
    for junctor in ["allOf", "oneOf", "anyOf", "not"] {
        s.remove(junctor);
    }
    s.remove("default");
    let preserve = is_true(s.get("x-kubernetes-preserve-unknown-fields"));
    if is_true(s.get("nullable")) {
        s.remove("type");
        s.remove("items");
        s.remove("properties");
    }
    s.remove("nullable");
    if preserve {
        s.remove("items");
        s.remove("properties");
    }
    if !s.contains_key("items") && s.get("type").and_then(Value::as_str) == Some("array") {
        s.remove("type");
    }
    if preserve && s.get("type").and_then(Value::as_str) == Some("object") {
        s.remove("type");
    }
    let nullable_props: Vec<String> = s
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter(|(_, p)| is_true(p.get("nullable")))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    let additional_nullable = is_true(
        s.get("additionalProperties")
            .and_then(|a| a.get("nullable")),
    );
    if additional_nullable {
        s.remove("required");
    } else if !nullable_props.is_empty()
        && let Some(Value::Array(required)) = s.get_mut("required")
    {
        required.retain(|r| {
            r.as_str()
                .is_none_or(|r| !nullable_props.iter().any(|p| p == r))
        });
        if required.is_empty() {
            s.remove("required");
        }
    }
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for prop in props.values_mut() {
            to_v2(prop);
        }
    }
    if let Some(items) = s.get_mut("items") {
        to_v2(items);
    }
    if let Some(additional @ Value::Object(_)) = s.get_mut("additionalProperties") {
        to_v2(additional);
    }
}

fn int_or_string_any_of() -> Value {
    json!([{"type": "integer"}, {"type": "string"}])
}

/// upstream `Structural.Unfold`: `x-kubernetes-int-or-string` gains
/// `anyOf: [{type: integer}, {type: string}]` (inside `allOf` when `anyOf` is
/// taken).
fn to_v3(schema: &mut Value) {
    let Value::Object(s) = schema else {
        return;
    };
    if is_true(s.get("x-kubernetes-int-or-string")) {
        let pattern = int_or_string_any_of();
        let has_pattern = s.get("anyOf") == Some(&pattern)
            || s.get("allOf")
                .and_then(|a| a.get(0))
                .and_then(|first| first.get("anyOf"))
                == Some(&pattern);
        if !has_pattern {
            if s.contains_key("anyOf") {
                let mut all_of = vec![json!({"anyOf": pattern})];
                if let Some(Value::Array(existing)) = s.remove("allOf") {
                    all_of.extend(existing);
                }
                s.insert("allOf".into(), Value::Array(all_of));
            } else {
                s.insert("anyOf".into(), pattern);
            }
        }
    }
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for prop in props.values_mut() {
            to_v3(prop);
        }
    }
    if let Some(items) = s.get_mut("items") {
        to_v3(items);
    }
    if let Some(additional @ Value::Object(_)) = s.get_mut("additionalProperties") {
        to_v3(additional);
    }
}

/// The schema of a whole object of kind `kind`.
fn kind_schema(flavor: Flavor, kind: &ResolvedKind) -> Value {
    let d = &kind.definition;
    let mut spec = d.open_api_schema.clone();
    let mut status = status_schema();
    match flavor {
        Flavor::V2 => {
            to_v2(&mut spec);
            to_v2(&mut status);
        }
        Flavor::V3 => to_v3(&mut spec),
    }
    let mut metadata = flavor.meta("ObjectMeta");
    metadata["description"] = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata".into();
    let mut props = Map::new();
    type_meta_properties(&mut props);
    props.insert("metadata".into(), metadata);
    props.insert("spec".into(), spec);
    props.insert("status".into(), status);
    let mut out = Map::new();
    if !d.description.is_empty() {
        out.insert("description".into(), d.description.clone().into());
    }
    out.insert("type".into(), "object".into());
    out.insert("properties".into(), Value::Object(props));
    out.insert(
        "x-kubernetes-group-version-kind".into(),
        gvk_extension(&d.group, &d.version, &d.kind),
    );
    out.insert(RELEASE_EXTENSION.into(), release_extension(kind));
    Value::Object(out)
}

/// The schema of a list of kind `d`.
fn list_schema(flavor: Flavor, d: &KindDefinition) -> Value {
    let list_kind = format!("{}List", d.kind);
    let mut items = json!({
        "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", d.plural),
        "type": "array",
    });
    items["items"] = flavor.reference(&definition_name(&d.group, &d.version, &d.kind));
    let mut metadata = flavor.meta("ListMeta");
    metadata["description"] = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata".into();
    let mut props = Map::new();
    type_meta_properties(&mut props);
    props.insert("items".into(), items);
    props.insert("metadata".into(), metadata);
    json!({
        "description": format!("{list_kind} is a list of {}", d.kind),
        "type": "object",
        "required": ["items"],
        "properties": props,
        "x-kubernetes-group-version-kind": gvk_extension(&d.group, &d.version, &list_kind),
    })
}

/// The `meta.k8s.io/v1` definitions the paths and kinds reference, minimal
/// but complete enough for `kubectl explain <kind>.metadata` and apply.
fn meta_definitions(flavor: Flavor) -> Vec<(String, Value)> {
    let r = |name: &str| flavor.meta(name);
    let with = |mut v: Value, description: &str| {
        v["description"] = description.into();
        v
    };
    let string = |description: &str| json!({"description": description, "type": "string"});
    let int64 = |description: &str| json!({"description": description, "type": "integer", "format": "int64"});
    let string_map = |description: &str| json!({"description": description, "type": "object", "additionalProperties": {"type": "string"}});
    let defs = vec![
        (
            "DeleteOptions",
            json!({
                "description": "DeleteOptions may be provided when deleting an API object.",
                "type": "object",
                "properties": {
                    "apiVersion": string(API_VERSION_DESCRIPTION),
                    "dryRun": {
                        "description": "When present, indicates that modifications should not be persisted. The only valid value is All.",
                        "type": "array",
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "atomic"
                    },
                    "gracePeriodSeconds": int64("The duration in seconds before the object should be deleted."),
                    "kind": string(KIND_DESCRIPTION),
                    "orphanDependents": {"description": "Deprecated: use propagationPolicy. Whether the dependent objects should be orphaned.", "type": "boolean"},
                    "preconditions": with(r("Preconditions"), "Must be fulfilled before a deletion is carried out."),
                    "propagationPolicy": string("Whether and how garbage collection will be performed: Orphan, Background or Foreground.")
                },
                "x-kubernetes-group-version-kind": [{"group": "", "kind": "DeleteOptions", "version": "v1"}]
            }),
        ),
        (
            "FieldsV1",
            json!({"description": "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.", "type": "object"}),
        ),
        (
            "ListMeta",
            json!({
                "description": "ListMeta describes metadata that synthetic resources must have, including lists.",
                "type": "object",
                "properties": {
                    "continue": string("continue may be set if the user set a limit on the number of items returned; pass it as the continue parameter to get the next page."),
                    "remainingItemCount": int64("The number of subsequent items in the list which are not included in this list response."),
                    "resourceVersion": string("The resource version of the list, opaque to clients."),
                    "selfLink": string("Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.")
                }
            }),
        ),
        (
            "ManagedFieldsEntry",
            json!({
                "description": "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.",
                "type": "object",
                "properties": {
                    "apiVersion": string("APIVersion defines the version of this resource that this field set applies to."),
                    "fieldsType": string("FieldsType is the discriminator for the different fields format and version. The only valid value is FieldsV1."),
                    "fieldsV1": with(r("FieldsV1"), "FieldsV1 holds the first JSON version format as described in the FieldsV1 type."),
                    "manager": string("Manager is an identifier of the workflow managing these fields."),
                    "operation": string("Operation is the type of operation which lead to this ManagedFieldsEntry being created: Apply or Update."),
                    "subresource": string("Subresource is the name of the subresource used to update that object, or empty for the main resource."),
                    "time": with(r("Time"), "Time is the timestamp of when the ManagedFields entry was added.")
                }
            }),
        ),
        (
            "ObjectMeta",
            json!({
                "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
                "type": "object",
                "properties": {
                    "annotations": string_map("Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata."),
                    "creationTimestamp": with(r("Time"), "CreationTimestamp is the server time when this object was created. Populated by the system. Read-only."),
                    "deletionGracePeriodSeconds": int64("Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Read-only."),
                    "deletionTimestamp": with(r("Time"), "DeletionTimestamp is the time at which this resource will be deleted, set by the server when a graceful deletion is requested. Read-only."),
                    "finalizers": {
                        "description": "Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.",
                        "type": "array",
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "set",
                        "x-kubernetes-patch-strategy": "merge"
                    },
                    "generateName": string("GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided."),
                    "generation": int64("A sequence number representing a specific generation of the desired state. Populated by the system. Read-only."),
                    "labels": string_map("Map of string keys and values that can be used to organize and categorize (scope and select) objects."),
                    "managedFields": {
                        "description": "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow.",
                        "type": "array",
                        "items": r("ManagedFieldsEntry"),
                        "x-kubernetes-list-type": "atomic"
                    },
                    "name": string("Name must be unique within a namespace. Cannot be updated."),
                    "namespace": string("Namespace defines the space within which each name must be unique. Cannot be updated."),
                    "ownerReferences": {
                        "description": "List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.",
                        "type": "array",
                        "items": r("OwnerReference"),
                        "x-kubernetes-list-map-keys": ["uid"],
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-patch-merge-key": "uid",
                        "x-kubernetes-patch-strategy": "merge"
                    },
                    "resourceVersion": string("An opaque value that represents the internal version of this object, used for optimistic concurrency, change detection, and the watch operation. Read-only."),
                    "selfLink": string("Deprecated: selfLink is a legacy read-only field that is no longer populated by the system."),
                    "uid": string("UID is the unique in time and space value for this object. Populated by the system. Read-only.")
                }
            }),
        ),
        (
            "OwnerReference",
            json!({
                "description": "OwnerReference contains enough information to let you identify an owning object.",
                "type": "object",
                "required": ["apiVersion", "kind", "name", "uid"],
                "properties": {
                    "apiVersion": string("API version of the referent."),
                    "blockOwnerDeletion": {"description": "If true, the owner cannot be deleted from the key-value store until this reference is removed (foreground deletion).", "type": "boolean"},
                    "controller": {"description": "If true, this reference points to the managing controller.", "type": "boolean"},
                    "kind": string("Kind of the referent."),
                    "name": string("Name of the referent."),
                    "uid": string("UID of the referent.")
                },
                "x-kubernetes-map-type": "atomic"
            }),
        ),
        (
            "Patch",
            json!({"description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.", "type": "object"}),
        ),
        (
            "Preconditions",
            json!({
                "description": "Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.",
                "type": "object",
                "properties": {
                    "resourceVersion": string("Specifies the target ResourceVersion"),
                    "uid": string("Specifies the target UID.")
                }
            }),
        ),
        (
            "Status",
            json!({
                "description": "Status is a return value for calls that don't return other objects.",
                "type": "object",
                "properties": {
                    "apiVersion": string(API_VERSION_DESCRIPTION),
                    "code": {"description": "Suggested HTTP return code for this status, 0 if not set.", "type": "integer", "format": "int32"},
                    "details": with(r("StatusDetails"), "Extended data associated with the reason."),
                    "kind": string(KIND_DESCRIPTION),
                    "message": string("A human-readable description of the status of this operation."),
                    "metadata": with(r("ListMeta"), "Standard list metadata."),
                    "reason": string("A machine-readable description of why this operation is in the \"Failure\" status."),
                    "status": string("Status of the operation. One of: \"Success\" or \"Failure\".")
                },
                "x-kubernetes-group-version-kind": [{"group": "", "kind": "Status", "version": "v1"}]
            }),
        ),
        (
            "StatusCause",
            json!({
                "description": "StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.",
                "type": "object",
                "properties": {
                    "field": string("The field of the resource that has caused this error, as named by its JSON serialization."),
                    "message": string("A human-readable description of the cause of the error."),
                    "reason": string("A machine-readable description of the cause of the error.")
                }
            }),
        ),
        (
            "StatusDetails",
            json!({
                "description": "StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.",
                "type": "object",
                "properties": {
                    "causes": {
                        "description": "The Causes array includes more details associated with the StatusReason failure.",
                        "type": "array",
                        "items": r("StatusCause"),
                        "x-kubernetes-list-type": "atomic"
                    },
                    "group": string("The group attribute of the resource associated with the status StatusReason."),
                    "kind": string("The kind attribute of the resource associated with the status StatusReason."),
                    "name": string("The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described)."),
                    "retryAfterSeconds": {"description": "If specified, the time in seconds before the operation should be retried.", "type": "integer", "format": "int32"},
                    "uid": string("UID of the resource.")
                }
            }),
        ),
        (
            "Time",
            json!({"description": "Time is a timestamp in RFC 3339 form, in UTC.", "type": "string", "format": "date-time"}),
        ),
    ];
    defs.into_iter()
        .map(|(name, schema)| (format!("{META}.{name}"), schema))
        .collect()
}

/// Kinds and their paths and definitions, for the kinds `keep` selects.
fn build(
    flavor: Flavor,
    snapshot: &Snapshot,
    options: &OpenApiOptions,
    keep: impl Fn(&KindDefinition) -> bool,
) -> (Map<String, Value>, Map<String, Value>) {
    let mut paths = Map::new();
    let mut definitions = Map::new();
    for kind in snapshot.kinds() {
        let d = &kind.resolved.definition;
        if !keep(d) {
            continue;
        }
        for (path, item) in kind_paths(flavor, d, options) {
            paths.insert(path, item);
        }
        definitions.insert(
            definition_name(&d.group, &d.version, &d.kind),
            kind_schema(flavor, &kind.resolved),
        );
        definitions.insert(
            definition_name(&d.group, &d.version, &format!("{}List", d.kind)),
            list_schema(flavor, d),
        );
    }
    if !paths.is_empty() {
        definitions.extend(meta_definitions(flavor));
    }
    (paths, definitions)
}

fn info() -> Value {
    json!({"title": "kubectl-cozy", "version": env!("CARGO_PKG_VERSION")})
}

/// `GET /openapi/v2`: Swagger 2.0 for every served kind (and the core
/// namespaces with [`OpenApiOptions::core_namespaces`]).
pub(crate) fn v2(snapshot: &Snapshot, options: &OpenApiOptions) -> Value {
    let (mut paths, mut definitions) = build(Flavor::V2, snapshot, options, |_| true);
    if options.core_namespaces {
        add_core_namespaces(Flavor::V2, &mut paths, &mut definitions);
    }
    json!({
        "swagger": "2.0",
        "info": info(),
        "paths": paths,
        "definitions": definitions,
    })
}

/// The namespaces' paths and definitions, and the meta ones they need.
fn add_core_namespaces(
    flavor: Flavor,
    paths: &mut Map<String, Value>,
    definitions: &mut Map<String, Value>,
) {
    paths.extend(namespaces::paths(flavor));
    definitions.extend(namespaces::definitions(flavor));
    for (name, schema) in meta_definitions(flavor) {
        definitions.entry(name).or_insert(schema);
    }
}

/// `GET /openapi/v3`: one entry per served group-version, pointing at its
/// document with the document's hash (built here; the server builds it with
/// [`v3_root_from`] over the documents it keeps).
#[cfg(test)]
pub(crate) fn v3_root(snapshot: &Snapshot, options: &OpenApiOptions) -> Value {
    let core = v3_core_v1(options).map(|doc| (String::new(), "v1".to_owned(), hash_of(&doc)));
    let documents: Vec<(String, String, String)> = core
        .into_iter()
        .chain(
            super::discovery::groups(snapshot)
                .into_iter()
                .flat_map(|(group, versions)| {
                    versions.into_iter().filter_map(move |version| {
                        let doc = v3_group_version(snapshot, &group, &version, options)?;
                        Some((group.clone(), version, hash_of(&doc)))
                    })
                }),
        )
        .collect();
    v3_root_from(
        documents
            .iter()
            .map(|(g, v, hash)| (g.as_str(), v.as_str(), hash.as_str())),
    )
}

/// The v3 root over documents already built: `(group, version, hash)` of
/// each, in discovery order (group `""` is the core group, `api/<v>`).
pub(crate) fn v3_root_from<'a>(
    documents: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
) -> Value {
    let mut paths = Map::new();
    for (group, version, hash) in documents {
        let key = if group.is_empty() {
            format!("api/{version}")
        } else {
            format!("apis/{group}/{version}")
        };
        paths.insert(
            key.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={hash}")}),
        );
    }
    json!({ "paths": paths })
}

/// `GET /openapi/v3/apis/<group>/<version>`: the OpenAPI 3.0 document of one
/// group-version, or `None` if nothing is served there.
pub(crate) fn v3_group_version(
    snapshot: &Snapshot,
    group: &str,
    version: &str,
    options: &OpenApiOptions,
) -> Option<Value> {
    let (paths, schemas) = build(Flavor::V3, snapshot, options, |d| {
        d.group == group && d.version == version
    });
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": info(),
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// `GET /openapi/v3/api/v1`: the OpenAPI 3.0 document of the core `v1`
/// namespaces, or `None` unless [`OpenApiOptions::core_namespaces`].
pub(crate) fn v3_core_v1(options: &OpenApiOptions) -> Option<Value> {
    if !options.core_namespaces {
        return None;
    }
    let mut paths = Map::new();
    let mut schemas = Map::new();
    add_core_namespaces(Flavor::V3, &mut paths, &mut schemas);
    Some(json!({
        "openapi": "3.0.0",
        "info": info(),
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// Upper-case hex SHA-512 of the serialized document, as kube-openapi
/// computes the `?hash=` and `ETag` of v3 documents.
pub(crate) fn hash_of(doc: &Value) -> String {
    hash_of_bytes(&serde_json::to_vec(doc).unwrap_or_default())
}

/// Upper-case hex SHA-512 of `bytes`.
pub(crate) fn hash_of_bytes(bytes: &[u8]) -> String {
    Sha512::digest(bytes)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::kinds::Registry;

    fn examples() -> std::sync::Arc<Snapshot> {
        Registry::from_path(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/kinds"
        )))
        .unwrap()
        .snapshot()
    }

    const PG: &str = "io.cozystack.apps.v1alpha1.Postgres";
    const NS_PATH: &str = "/apis/apps.cozystack.io/v1alpha1/namespaces/{namespace}/postgreses";

    #[test]
    fn naming() {
        assert_eq!(
            definition_name("apps.cozystack.io", "v1alpha1", "Postgres"),
            PG
        );
        assert_eq!(
            definition_name("stable.example.com", "v1", "CronTab"),
            "com.example.stable.v1.CronTab"
        );
        assert_eq!(
            operation_id(
                "list",
                "NamespacedPostgres",
                "apps.cozystack.io",
                "v1alpha1"
            ),
            (
                "listAppsCozystackIoV1alpha1NamespacedPostgres".to_owned(),
                "appsCozystackIo_v1alpha1".to_owned()
            )
        );
        assert_eq!(
            operation_id("delete", "CollectionNamespacedPod", "batch.k8s.io", "v1").0,
            "deleteBatchV1CollectionNamespacedPod"
        );
        assert_eq!(
            operation_id("list", "Namespace", "", "v1"),
            ("listCoreV1Namespace".to_owned(), "core_v1".to_owned())
        );
        assert_eq!(article_for("Postgres"), " ");
        assert_eq!(article_for("Bucket"), " a ");
        assert_eq!(article_for("Ingress"), " an ");
    }

    #[test]
    fn v2_transform_follows_upstream() {
        let mut schema = json!({
            "type": "object",
            "required": ["a", "b"],
            "properties": {
                "a": {"type": "string", "nullable": true, "default": "x"},
                "b": {"type": "array"},
                "c": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"d": {"type": "string"}}},
                "e": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
                "f": {"type": "array", "items": {"type": "string", "default": "z", "nullable": false}}
            }
        });
        to_v2(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "required": ["b"],
                "properties": {
                    "a": {},
                    "b": {},
                    "c": {"x-kubernetes-preserve-unknown-fields": true},
                    "e": {"x-kubernetes-int-or-string": true},
                    "f": {"type": "array", "items": {"type": "string"}}
                }
            })
        );
    }

    #[test]
    fn v3_unfolds_int_or_string() {
        let mut schema = json!({"properties": {
            "a": {"x-kubernetes-int-or-string": true},
            "b": {"x-kubernetes-int-or-string": true, "anyOf": [{"minimum": 1}, {"pattern": "x"}]},
            "c": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}
        }});
        to_v3(&mut schema);
        assert_eq!(schema["properties"]["a"]["anyOf"], int_or_string_any_of());
        assert_eq!(
            schema["properties"]["b"]["allOf"],
            json!([{"anyOf": int_or_string_any_of()}])
        );
        assert!(schema["properties"]["c"].get("allOf").is_none());
    }

    #[test]
    fn field_validation_is_opt_in() {
        let s = examples();
        let has = |doc: &Value| {
            doc["paths"][format!("{NS_PATH}/{{name}}")]["patch"]["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation")
        };
        assert!(!has(&v3_group_version(
            &s,
            "apps.cozystack.io",
            "v1alpha1",
            &OpenApiOptions::default()
        )
        .unwrap()));
        let on = OpenApiOptions {
            field_validation: true,
            ..OpenApiOptions::default()
        };
        assert!(has(&v3_group_version(
            &s,
            "apps.cozystack.io",
            "v1alpha1",
            &on
        )
        .unwrap()));
        assert!(has(&v2(&s, &on)));
    }

    /// A document as a snapshot records it: pretty JSON, without this
    /// build's version (so a release does not change every snapshot).
    fn snapshot_text(mut doc: Value) -> String {
        doc["info"]["version"] = json!("<version>");
        serde_json::to_string_pretty(&doc).unwrap()
    }

    /// Every OpenAPI document of the example kinds, member for member.
    #[test]
    fn documents_from_example_kinds() {
        let s = examples();
        let options = OpenApiOptions {
            field_validation: true,
            core_namespaces: false,
        };
        let v2 = v2(&s, &options);
        assert_no_dangling_refs(&v2, "#/definitions/", &v2["definitions"]);
        insta::assert_snapshot!("openapi_v2", snapshot_text(v2));

        let doc = v3_group_version(&s, "apps.cozystack.io", "v1alpha1", &options).unwrap();
        assert_no_dangling_refs(&doc, "#/components/schemas/", &doc["components"]["schemas"]);
        let root = v3_root(&s, &options);
        assert_eq!(
            root,
            json!({"paths": {"apis/apps.cozystack.io/v1alpha1": {
                "serverRelativeURL": format!(
                    "/openapi/v3/apis/apps.cozystack.io/v1alpha1?hash={}",
                    hash_of(&doc)
                )
            }}})
        );
        assert!(v3_group_version(&s, "apps.cozystack.io", "v1", &options).is_none());
        assert_eq!(hash_of(&doc).len(), 128);
        assert_eq!(
            hash_of(&doc),
            hash_of(&v3_group_version(&s, "apps.cozystack.io", "v1alpha1", &options).unwrap())
        );
        insta::assert_snapshot!("openapi_v3_apps_cozystack_io_v1alpha1", snapshot_text(doc));
    }

    /// A standalone server's documents: Namespace in v2, and an `api/v1`
    /// document first in the v3 root; without the option, neither.
    #[test]
    fn standalone_documents_describe_namespaces() {
        let s = examples();
        let aggregated = OpenApiOptions {
            field_validation: true,
            core_namespaces: false,
        };
        let standalone = OpenApiOptions {
            core_namespaces: true,
            ..aggregated
        };
        assert!(v3_core_v1(&aggregated).is_none());
        let doc = v3_core_v1(&standalone).unwrap();
        assert_no_dangling_refs(&doc, "#/components/schemas/", &doc["components"]["schemas"]);
        let list = &doc["paths"]["/api/v1/namespaces"]["get"];
        assert_eq!(list["operationId"], "listCoreV1Namespace");
        assert_eq!(
            list["x-kubernetes-group-version-kind"],
            json!({"group": "", "version": "v1", "kind": "Namespace"})
        );
        let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
        assert_eq!(paths, ["/api/v1/namespaces", "/api/v1/namespaces/{name}"]);
        // No patch and no fieldValidation: kubectl validates namespaces itself.
        assert!(!doc.to_string().contains("fieldValidation"));
        assert!(!doc.to_string().contains("\"patch\""));
        insta::assert_snapshot!("openapi_v3_api_v1", snapshot_text(doc.clone()));

        let root = v3_root(&s, &standalone);
        let keys: Vec<&String> = root["paths"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["api/v1", "apis/apps.cozystack.io/v1alpha1"]);
        assert_eq!(
            root["paths"]["api/v1"]["serverRelativeURL"],
            format!("/openapi/v3/api/v1?hash={}", hash_of(&doc))
        );
        // The group-version documents do not change.
        assert_eq!(
            v3_group_version(&s, "apps.cozystack.io", "v1alpha1", &standalone),
            v3_group_version(&s, "apps.cozystack.io", "v1alpha1", &aggregated)
        );

        let with = v2(&s, &standalone);
        let without = v2(&s, &aggregated);
        assert_no_dangling_refs(&with, "#/definitions/", &with["definitions"]);
        for name in [
            "io.k8s.api.core.v1.Namespace",
            "io.k8s.api.core.v1.NamespaceList",
            "io.k8s.api.core.v1.NamespaceSpec",
            "io.k8s.api.core.v1.NamespaceStatus",
            "io.k8s.api.core.v1.NamespaceCondition",
        ] {
            assert!(with["definitions"].get(name).is_some(), "{name}");
            assert!(without["definitions"].get(name).is_none(), "{name}");
        }
        assert_eq!(
            with["paths"]["/api/v1/namespaces/{name}"]["delete"]["operationId"],
            "deleteCoreV1Namespace"
        );
        // Everything else is as in the aggregated document.
        let mut trimmed = with.clone();
        for (key, _) in without["paths"].as_object().unwrap() {
            trimmed["paths"].as_object_mut().unwrap().remove(key);
        }
        assert_eq!(trimmed["paths"].as_object().unwrap().len(), 2);
        for (key, value) in without["definitions"].as_object().unwrap() {
            assert_eq!(&with["definitions"][key], value, "{key}");
        }
    }

    fn assert_no_dangling_refs(doc: &Value, prefix: &str, defs: &Value) {
        fn walk(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::Object(m) => {
                    if let Some(Value::String(r)) = m.get("$ref") {
                        out.push(r.clone());
                    }
                    m.values().for_each(|x| walk(x, out));
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        let mut refs = Vec::new();
        walk(doc, &mut refs);
        assert!(!refs.is_empty());
        for r in refs {
            let name = r
                .strip_prefix(prefix)
                .unwrap_or_else(|| panic!("bad ref {r}"));
            assert!(defs.get(name).is_some(), "dangling {r}");
        }
    }
}
