//! Descriptions attached to an inferred schema from the comments that
//! `super::comments` found: `@param` wins over helm-docs, readme-generator
//! modifiers refine a `null` value's schema, and a cozyvalues-gen type
//! replaces the schema inferred for its key with the one `super::typed`
//! builds from it. A `@param` for a key that `values.yaml` does not define,
//! or a repeated one, becomes a warning.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::super::issue::{Issue, push_pointer};
use super::super::structural_check::check_structural;
use super::comments::{Comments, Seg, scan_comments};
use super::free_form;
use super::typed::{TypeDefs, with_options_hint};

/// Removes `default` from `node` and everything below it.
fn strip_defaults(node: &mut Map<String, Value>) {
    node.remove("default");
    for key in ["properties", "additionalProperties", "items"] {
        match node.get_mut(key) {
            Some(Value::Object(children)) if key == "properties" => {
                for child in children.values_mut() {
                    if let Value::Object(child) = child {
                        strip_defaults(child);
                    }
                }
            }
            Some(Value::Object(child)) => strip_defaults(child),
            _ => {}
        }
    }
}

/// Describes the keys of `schema` (inferred from `values`) from the
/// comments of `src`, the text `values` was parsed from.
pub(super) fn apply(
    src: &str,
    values: &Value,
    schema: &mut Map<String, Value>,
    warnings: &mut Vec<Issue>,
) {
    let Comments {
        params,
        helm_docs,
        typedefs,
        enums,
        skipped,
        ..
    } = scan_comments(src);
    // A skipped key keeps its type but no default: each app's HelmRelease
    // would otherwise carry the value of the day it was written (an image
    // tag), and a chart upgrade could no longer change it.
    for path in &skipped {
        if let Some(node) = lookup(schema, path) {
            strip_defaults(node);
        }
    }
    let types = TypeDefs {
        typedefs: &typedefs,
        enums: &enums,
    };
    let mut done: HashMap<Vec<Seg>, usize> = HashMap::new();
    for (path, doc) in params {
        if let Some(prev) = done.get(&path) {
            warnings.push(Issue::new(
                display_pointer(&path),
                format!(
                    "line {}: @param repeats the description from line {prev}; ignored",
                    doc.line
                ),
            ));
            continue;
        }
        match lookup(schema, &path) {
            Some(node) => {
                if let Some(t) = &doc.type_name {
                    let ptr = display_pointer(&path);
                    // The value in values.yaml, else the `name=default`.
                    let value = match (value_at(values, &path), &doc.default) {
                        (None | Some(Value::Null), Some(d)) => Some(types.read_default(t, d)),
                        (v, _) => v.cloned(),
                    };
                    match typed_schema(&types, t, value.as_ref(), &ptr) {
                        Ok((typed, mut typed_warnings)) => {
                            *node = typed;
                            warnings.append(&mut typed_warnings);
                        }
                        Err(why) => warnings.push(Issue::new(
                            &ptr,
                            format!(
                                "line {}: @param type {t:?} not used: {why}; the schema is inferred from the value",
                                doc.line
                            ),
                        )),
                    }
                }
                apply_modifiers(node, &doc.modifiers);
                let text = match &doc.options_source {
                    Some(source) => with_options_hint(&doc.text, source),
                    None => doc.text.clone(),
                };
                if !text.is_empty() {
                    set_description(node, &text);
                }
                done.insert(path, doc.line);
            }
            None => warnings.push(Issue::new(
                display_pointer(&path),
                format!(
                    "line {}: @param names a key that values.yaml does not define",
                    doc.line
                ),
            )),
        }
    }
    for (path, doc) in helm_docs {
        if done.contains_key(&path) || doc.text.is_empty() {
            continue;
        }
        if let Some(node) = lookup(schema, &path) {
            set_description(node, &doc.text);
        }
    }
}

/// For a chart that ships a `values.schema.json`: a `## @param` (else
/// helm-docs) description from `src`, the chart's `values.yaml`, for each
/// key of `schema` the schema leaves undescribed. The schema's own types and
/// descriptions stay; keys it does not declare are left to the warnings of
/// laying the values over it.
pub(crate) fn describe_given_schema(src: &str, schema: &mut Value) {
    let Value::Object(root) = schema else {
        return;
    };
    let Comments {
        params, helm_docs, ..
    } = scan_comments(src);
    for (path, doc) in params.iter().chain(&helm_docs) {
        let text = match &doc.options_source {
            Some(source) => with_options_hint(&doc.text, source),
            None => doc.text.clone(),
        };
        if text.is_empty() {
            continue;
        }
        if let Some(node) = lookup(root, path)
            && !node.contains_key("description")
        {
            set_description(node, &text);
        }
    }
}

/// `values` (a chart's `values.yaml`, as Helm reads it) without the keys
/// its `## @skip` lines in `src` name: laid over a given schema, they give
/// no default (see [`apply`]'s reason).
pub(crate) fn without_skipped(src: &str, values: &mut Value) {
    for path in scan_comments(src).skipped {
        let Some((Seg::Key(last), parents)) = path.split_last() else {
            continue;
        };
        if let Some(parent) = mapping_at(values, parents) {
            parent.remove(last);
        }
    }
}

/// The mapping at `path` (keys only) in the values document.
fn mapping_at<'v>(values: &'v mut Value, path: &[Seg]) -> Option<&'v mut Map<String, Value>> {
    let mut node = values;
    for seg in path {
        node = match seg {
            Seg::Key(k) => node.as_object_mut()?.get_mut(k)?,
            Seg::Items => return None,
        };
    }
    node.as_object_mut()
}

/// The schema of cozyvalues-gen type `t` for `value`, checked to be
/// structural with valid defaults; `Err` says why it cannot be used.
fn typed_schema(
    types: &TypeDefs<'_>,
    t: &str,
    value: Option<&Value>,
    ptr: &str,
) -> Result<(Map<String, Value>, Vec<Issue>), String> {
    let mut warnings = Vec::new();
    let mut node = types.schema(t, value, ptr, &mut warnings)?;
    let first_problem = |node: &Map<String, Value>| {
        let wrapped = serde_json::json!({"type": "object", "properties": {"v": node}});
        check_structural(&wrapped)
            .into_iter()
            .next()
            .map(|problem| {
                let at = problem.pointer.strip_prefix("/properties/v").unwrap_or("");
                format!("{ptr}{at}: {}", problem.message)
            })
    };
    let Some(problem) = first_problem(&node) else {
        return Ok((node, warnings));
    };
    // A list or map whose entries miss a required field, say: the value
    // cannot be the default, but the type still describes the key.
    if node.remove("default").is_some() && first_problem(&node).is_none() {
        warnings.push(Issue::new(
            ptr,
            format!(
                "the value does not fit the @param type {t:?} ({problem}); not used as the default"
            ),
        ));
        return Ok((node, warnings));
    }
    Err(problem)
}

/// The value at `path` in the values document (the first item for `[]`).
fn value_at<'v>(values: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    let mut v = values;
    for seg in path {
        v = match seg {
            Seg::Key(k) => v.get(k)?,
            Seg::Items => v.get(0)?,
        };
    }
    Some(v)
}

fn display_pointer(path: &[Seg]) -> String {
    let mut p = String::new();
    for s in path {
        p = match s {
            Seg::Key(k) => push_pointer(&p, k),
            Seg::Items => push_pointer(&p, "0"),
        };
    }
    p
}

fn lookup<'m>(
    root: &'m mut Map<String, Value>,
    path: &[Seg],
) -> Option<&'m mut Map<String, Value>> {
    let mut node = root;
    for seg in path {
        let next = match seg {
            Seg::Key(k) => node.get_mut("properties")?.as_object_mut()?.get_mut(k)?,
            Seg::Items => node.get_mut("items")?,
        };
        node = next.as_object_mut()?;
    }
    Some(node)
}

fn set_description(node: &mut Map<String, Value>, text: &str) {
    let mut out = Map::new();
    let mut placed = false;
    for (k, v) in std::mem::take(node) {
        let after_header = matches!(
            k.as_str(),
            "type" | "nullable" | "x-kubernetes-int-or-string"
        );
        if !after_header && !placed && k != "description" {
            out.insert("description".into(), text.into());
            placed = true;
        }
        if k != "description" {
            out.insert(k, v);
        }
    }
    if !placed {
        out.insert("description".into(), text.into());
    }
    *node = out;
}

fn apply_modifiers(node: &mut Map<String, Value>, modifiers: &[String]) {
    let is_null_node =
        node.get("nullable") == Some(&Value::Bool(true)) && !node.contains_key("type");
    for m in modifiers {
        match m.as_str() {
            "nullable" if !node.contains_key("nullable") => {
                let mut out = Map::new();
                for (k, v) in std::mem::take(node) {
                    let is_type = k == "type";
                    out.insert(k, v);
                    if is_type {
                        out.insert("nullable".into(), true.into());
                    }
                }
                out.entry("nullable").or_insert(Value::Bool(true));
                *node = out;
            }
            "string" | "object" | "array" if is_null_node => {
                let mut out = Map::new();
                out.insert("type".into(), m.as_str().into());
                out.insert("nullable".into(), true.into());
                match m.as_str() {
                    "object" => {
                        out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
                    }
                    "array" => {
                        out.insert("items".into(), Value::Object(free_form()));
                    }
                    _ => {}
                }
                *node = out;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::infer;
    use serde_json::json;

    #[test]
    fn bitnami_params_describe_keys() {
        let out = infer(
            r#"
## @section Global parameters
## @param global.imageRegistry Global Docker image registry
## @param global.storageClass [nullable] Global StorageClass
## @skip global.internal
global:
  imageRegistry: ""
  storageClass: ""
  internal: x
## @param auth.existingSecret [string, nullable] Name of an existing secret
## @param users[0].name Name of the first user
## @param users[].roles Roles of each user
## @param missing.key This key does not exist
## @param replicaCount
auth:
  existingSecret:
users:
  - name: admin
    roles: [a]
replicaCount: 1
"#,
        );
        let p = &out.schema["properties"];
        assert_eq!(
            p["global"]["properties"]["imageRegistry"],
            json!({"type": "string", "description": "Global Docker image registry", "default": ""})
        );
        assert_eq!(
            p["global"]["properties"]["storageClass"],
            json!({"type": "string", "nullable": true, "description": "Global StorageClass", "default": ""})
        );
        // Skipped: typed, not described, and no default to pin into each
        // app's release.
        assert_eq!(
            p["global"]["properties"]["internal"],
            json!({"type": "string"})
        );
        assert_eq!(
            p["auth"]["properties"]["existingSecret"],
            json!({"type": "string", "nullable": true, "description": "Name of an existing secret"})
        );
        assert_eq!(
            p["users"]["items"]["properties"]["name"]["description"],
            "Name of the first user"
        );
        assert_eq!(
            p["users"]["items"]["properties"]["roles"]["description"],
            "Roles of each user"
        );
        assert!(p["replicaCount"].get("description").is_none());
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].pointer, "/missing/key");
        assert!(
            out.warnings[0]
                .message
                .starts_with("line 13: @param names a key"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn helm_docs_comments_describe_the_key_below() {
        let out = infer(
            r#"
# -- Number of replicas
replicaCount: 1
image:
  # -- Image repository
  # (without the registry)
  repository: nginx
  # A plain comment is not a description
  tag: latest

  # -- Separated by a blank line: ignored
  # @default -- annotations are skipped

pullPolicy: Always
script: |
  # -- not a comment, part of the block
  key: value
list:
- # -- item name
  name: a
  # -- item value
  value: 1
# -- After a block scalar
after: true
"#,
        );
        let p = &out.schema["properties"];
        assert_eq!(p["replicaCount"]["description"], "Number of replicas");
        assert_eq!(
            p["image"]["properties"]["repository"]["description"],
            "Image repository (without the registry)"
        );
        assert!(p["image"]["properties"]["tag"].get("description").is_none());
        assert!(p["pullPolicy"].get("description").is_none());
        assert!(p["script"].get("description").is_none());
        assert_eq!(
            p["script"]["default"],
            "# -- not a comment, part of the block\nkey: value\n"
        );
        assert_eq!(
            p["list"]["items"]["properties"]["name"]["description"],
            "item name"
        );
        assert_eq!(
            p["list"]["items"]["properties"]["value"]["description"],
            "item value"
        );
        assert_eq!(p["after"]["description"], "After a block scalar");
        // @param wins over helm-docs.
        let both = infer("## @param a From param\n# -- From helm-docs\na: 1\n");
        assert_eq!(both.schema["properties"]["a"]["description"], "From param");
    }

    #[test]
    fn cozyvalues_gen_comments_describe_keys_and_typedef_fields() {
        let out = infer(
            r#"
## @typedef {struct} Resources - Explicit CPU and memory configuration.
## @field {quantity} [cpu] - CPU available.
## @field {quantity} [memory] - Memory (RAM) available.

## @typedef {struct} User - A user.
## @field {string} [password] - Password for the user.
## @field {Resources} [resources]="{}" - Per-user resources.

## @enum {string} Preset - Sizing preset.
## @value small

## @param {int} replicas - Number of replicas.
replicas: 2
## @param {Resources} [resources] - Resources of each replica.
resources:
  cpu: 1
## @param {Preset} preset="small" - Sizing preset.
preset: small
## @param {map[string]User} users - Users configuration map.
users:
  alice:
    password: x
    resources:
      memory: 1Gi
"#,
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        let p = &out.schema["properties"];
        assert_eq!(p["replicas"]["description"], "Number of replicas.");
        assert_eq!(p["resources"]["description"], "Resources of each replica.");
        assert_eq!(
            p["resources"]["properties"]["cpu"]["description"],
            "CPU available."
        );
        assert_eq!(p["preset"]["description"], "Sizing preset.");
        // A map's entries are described by its value type, the values
        // being the default.
        let alice = &p["users"]["additionalProperties"]["properties"];
        assert_eq!(
            p["users"]["default"],
            json!({"alice": {"password": "x", "resources": {"memory": "1Gi"}}})
        );
        assert_eq!(alice["password"]["description"], "Password for the user.");
        assert_eq!(alice["resources"]["description"], "Per-user resources.");
        assert_eq!(
            alice["resources"]["properties"]["memory"]["description"],
            "Memory (RAM) available."
        );
    }
}
