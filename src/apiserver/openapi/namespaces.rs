//! The core `v1` Namespace in the OpenAPI documents of a standalone server,
//! which serves `/api/v1/namespaces` itself
//! ([`crate::apiserver::handlers::namespaces`]); in aggregated mode
//! kube-apiserver owns core/v1 and none of this is published.
//!
//! Paths are list (with a `metadata.name` field selector), create, read
//! and delete, each with its `x-kubernetes-action` and
//! `x-kubernetes-group-version-kind` — so that `kubectl explain ns` finds
//! the kind (its template looks the GVK up from `/api/v1/namespaces`); the
//! update, patch and watch the handler also serves are not described. None
//! takes `fieldValidation`: kubectl validates namespaces on its side,
//! against these schemas.
//! Definitions are named as kube-apiserver names them
//! (`io.k8s.api.core.v1.Namespace`, `…NamespaceList`, `…NamespaceSpec`,
//! `…NamespaceStatus`, `…NamespaceCondition`) and describe the fields this
//! server keeps.

use serde_json::{Map, Value, json};

use super::{
    API_VERSION_DESCRIPTION, Body, Context, DRY_RUN, FIELD_SELECTOR, Flavor, JSON_YAML,
    KIND_DESCRIPTION, NAMESPACE, Operation, PRETTY, Param, create_responses, gvk_extension,
    param_json, path_item,
};

/// The definition-name prefix of the core `v1` group.
const CORE: &str = "io.k8s.api.core.v1";

fn core(flavor: Flavor, name: &str) -> Value {
    flavor.reference(&format!("{CORE}.{name}"))
}

/// `…` with `description` beside it.
fn described(mut v: Value, description: &str) -> Value {
    v["description"] = description.into();
    v
}

/// The paths of `/api/v1/namespaces`, in kube-apiserver's layout.
pub(super) fn paths(flavor: Flavor) -> Vec<(String, Value)> {
    let object = core(flavor, "Namespace");
    let list = core(flavor, "NamespaceList");
    let ctx = Context {
        flavor,
        group: "",
        version: "v1",
        gvk: json!({"group": "", "version": "v1", "kind": "Namespace"}),
    };
    let field_selector = Param {
        description: "A selector on the namespaces' fields: only metadata.name is served (`metadata.name=NAME`).",
        ..FIELD_SELECTOR
    };
    let list_params = [field_selector];
    let dry_run = [DRY_RUN];
    let list = ctx.operation(Operation {
        action: "list",
        verb: "list",
        rest: "Namespace".into(),
        description: "list objects of kind Namespace".into(),
        params: &list_params,
        body: None,
        responses: vec![("200", "OK", Some(list))],
    });
    let create = ctx.operation(Operation {
        action: "post",
        verb: "create",
        rest: "Namespace".into(),
        description: "create a Namespace".into(),
        params: &dry_run,
        body: Some(Body {
            types: JSON_YAML,
            schema: object.clone(),
            required: true,
        }),
        responses: create_responses(&object),
    });
    let read = ctx.operation(Operation {
        action: "get",
        verb: "read",
        rest: "Namespace".into(),
        description: "read the specified Namespace".into(),
        params: &[],
        body: None,
        responses: vec![("200", "OK", Some(object.clone()))],
    });
    let delete = ctx.operation(Operation {
        action: "delete",
        verb: "delete",
        rest: "Namespace".into(),
        description: "delete a Namespace: it turns Terminating, its apps are deleted, and it goes when they are gone".into(),
        params: &dry_run,
        body: Some(Body {
            types: &["application/json"],
            schema: flavor.meta("DeleteOptions"),
            required: false,
        }),
        responses: vec![("200", "OK", Some(object))],
    });
    let pretty = param_json(flavor, &PRETTY);
    let name = param_json(
        flavor,
        &Param {
            name: "name",
            description: "name of the Namespace",
            ..NAMESPACE
        },
    );
    vec![
        (
            "/api/v1/namespaces".to_owned(),
            path_item(vec![("get", list), ("post", create)], vec![pretty.clone()]),
        ),
        (
            "/api/v1/namespaces/{name}".to_owned(),
            path_item(vec![("get", read), ("delete", delete)], vec![name, pretty]),
        ),
    ]
}

fn type_meta(props: &mut Map<String, Value>) {
    props.insert(
        "apiVersion".into(),
        json!({"description": API_VERSION_DESCRIPTION, "type": "string"}),
    );
    props.insert(
        "kind".into(),
        json!({"description": KIND_DESCRIPTION, "type": "string"}),
    );
}

/// The Namespace definitions (the `meta.k8s.io` ones they refer to are the
/// documents' shared ones).
pub(super) fn definitions(flavor: Flavor) -> Vec<(String, Value)> {
    let mut namespace = Map::new();
    type_meta(&mut namespace);
    namespace.insert(
        "metadata".into(),
        described(
            flavor.meta("ObjectMeta"),
            "Standard object's metadata: the name, labels and annotations, and what the server sets.",
        ),
    );
    namespace.insert(
        "spec".into(),
        described(
            core(flavor, "NamespaceSpec"),
            "Spec is what is asked of the namespace.",
        ),
    );
    namespace.insert(
        "status".into(),
        described(
            core(flavor, "NamespaceStatus"),
            "Status is the namespace's current state. Read-only.",
        ),
    );
    let mut list = Map::new();
    type_meta(&mut list);
    list.insert(
        "items".into(),
        json!({
            "description": "The namespaces.",
            "type": "array",
            "items": core(flavor, "Namespace"),
        }),
    );
    list.insert(
        "metadata".into(),
        described(flavor.meta("ListMeta"), "Standard list metadata."),
    );
    let defs = vec![
        (
            "Namespace",
            json!({
                "description": "Namespace is a scope for the names of namespaced objects: apps in different namespaces may share a name.",
                "type": "object",
                "properties": namespace,
                "x-kubernetes-group-version-kind": gvk_extension("", "v1", "Namespace"),
            }),
        ),
        (
            "NamespaceCondition",
            json!({
                "description": "NamespaceCondition is one aspect of the namespace's state.",
                "type": "object",
                "required": ["type", "status"],
                "properties": {
                    "lastTransitionTime": described(flavor.meta("Time"), "When the condition last changed status."),
                    "message": {"description": "A human-readable account of the condition.", "type": "string"},
                    "reason": {"description": "Why the condition has its status, in CamelCase.", "type": "string"},
                    "status": {"description": "True, False or Unknown.", "type": "string"},
                    "type": {"description": "The kind of condition.", "type": "string"}
                }
            }),
        ),
        (
            "NamespaceList",
            json!({
                "description": "NamespaceList is a list of namespaces.",
                "type": "object",
                "required": ["items"],
                "properties": list,
                "x-kubernetes-group-version-kind": gvk_extension("", "v1", "NamespaceList"),
            }),
        ),
        (
            "NamespaceSpec",
            json!({
                "description": "NamespaceSpec is what is asked of a namespace.",
                "type": "object",
                "properties": {
                    "finalizers": {
                        "description": "Finalizers must all be removed before the namespace is removed; a new namespace gets \"kubernetes\".",
                        "type": "array",
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "atomic"
                    }
                }
            }),
        ),
        (
            "NamespaceStatus",
            json!({
                "description": "NamespaceStatus is the current state of a namespace.",
                "type": "object",
                "properties": {
                    "conditions": {
                        "description": "The latest observations of the namespace's state.",
                        "type": "array",
                        "items": core(flavor, "NamespaceCondition"),
                        "x-kubernetes-list-map-keys": ["type"],
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-patch-merge-key": "type",
                        "x-kubernetes-patch-strategy": "merge"
                    },
                    "phase": {
                        "description": "Active, or Terminating once its deletion has started (then nothing new may be created in it).",
                        "type": "string",
                        "enum": ["Active", "Terminating"]
                    }
                }
            }),
        ),
    ];
    defs.into_iter()
        .map(|(name, schema)| (format!("{CORE}.{name}"), schema))
        .collect()
}
