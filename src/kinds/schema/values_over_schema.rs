//! A chart's `values.yaml` over its `values.schema.json`. Helm validates
//! the schema against the *merged* values — `values.yaml` first, the
//! user's on top — so a key the schema marks `required` without a default
//! is satisfied by `values.yaml`, and a key the schema does not declare is
//! still a value of the chart. A kind's schema sees only what the user
//! sends; so that it accepts what Helm accepts:
//!
//! * each `values.yaml` value becomes the `default` of the schema node at
//!   its path when that node has none and the value passes the node's own
//!   validation (an object above a new default gets `default: {}`, so that
//!   defaulting reaches it when the user leaves the object out); one that
//!   fails it is said, not used — Helm would refuse the chart's own values;
//! * a key the schema does not declare, where it keeps no unknown fields, is
//!   said: the structural schema prunes it, so apps cannot set it;
//! * a value that differs from the schema's own `default` is said: the
//!   default stays, and apps get it, where Helm (which applies no schema
//!   defaults) installs the chart with `values.yaml`'s.

use serde_json::{Map, Value};

use super::issue::{Issue, push_pointer};
use super::validate::CompiledSchema;

/// Lays `values` (a chart's `values.yaml`, as Helm reads it) over the
/// structural `schema` converted from its `values.schema.json`; what it
/// could not use, as issues pointing into `values.yaml`.
pub(crate) fn apply(schema: &mut Value, values: &Value) -> Vec<Issue> {
    let mut issues = Vec::new();
    if let (Value::Object(node), Value::Object(values)) = (schema, values) {
        walk(node, values, "", &mut issues);
    }
    issues
}

/// Lays `values` over the object `node` at `ptr`; whether a default was
/// added at or below it.
fn walk(
    node: &mut Map<String, Value>,
    values: &Map<String, Value>,
    ptr: &str,
    issues: &mut Vec<Issue>,
) -> bool {
    let keeps_unknown = node.get("x-kubernetes-preserve-unknown-fields")
        == Some(&Value::Bool(true))
        || matches!(
            node.get("additionalProperties"),
            Some(Value::Object(_) | Value::Bool(true))
        );
    let closed = node.get("additionalProperties") == Some(&Value::Bool(false));
    let mut added = false;
    let Some(Value::Object(props)) = node.get_mut("properties") else {
        return false;
    };
    for (key, value) in values {
        // `null` sets nothing (Helm's merge drops it).
        if value.is_null() {
            continue;
        }
        let at = push_pointer(ptr, key);
        let Some(Value::Object(child)) = props.get_mut(key) else {
            if !keeps_unknown {
                issues.push(Issue::new(
                    at,
                    if closed {
                        "set in values.yaml, but values.schema.json forbids it (additionalProperties: false); Helm refuses these values too"
                    } else {
                        "set in values.yaml but not declared in values.schema.json: the kind's structural schema drops it, so apps cannot set it; declare it in values.schema.json"
                    },
                ));
            }
            continue;
        };
        let nested = child.contains_key("properties");
        match value {
            Value::Object(inner) if nested => {
                if walk(child, inner, &at, issues) {
                    child
                        .entry("default")
                        .or_insert_with(|| Value::Object(Map::new()));
                    added = true;
                }
            }
            // The schema's own default stays (its author chose it), but Helm
            // never applies a schema's defaults: said when they differ.
            _ if child.contains_key("default") => {
                if let Some(default) = child.get("default").filter(|d| *d != value) {
                    issues.push(Issue::new(
                        at,
                        format!(
                            "values.yaml sets {} where values.schema.json's default is {}: apps of the kind get \
                             the schema's default, the chart installed with Helm gets values.yaml's; make them agree",
                            crate::golang::json::marshal(value),
                            crate::golang::json::marshal(default)
                        ),
                    ));
                }
            }
            _ => match fits(child, value) {
                Ok(()) => {
                    child.insert("default".into(), value.clone());
                    added = true;
                }
                Err(why) => issues.push(Issue::new(
                    at,
                    format!(
                        "the values.yaml value does not pass values.schema.json ({why}); not made its default (Helm refuses the chart's own values)"
                    ),
                )),
            },
        }
    }
    added
}

/// Whether `value` passes the schema node `node` (defaulted and validated
/// as the server would); why not.
fn fits(node: &Map<String, Value>, value: &Value) -> Result<(), String> {
    let compiled = CompiledSchema::new(&Value::Object(node.clone())).map_err(|e| e.to_string())?;
    let mut value = value.clone();
    let outcome = compiled.default_and_validate(&mut value, "value");
    match outcome.errors.first() {
        None => Ok(()),
        Some(first) => Err(first.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_become_the_defaults_the_schema_lacks() {
        let mut schema = json!({"type": "object", "required": ["mode", "replicas"], "properties": {
            "mode": {"type": "string", "enum": ["fast", "safe"]},
            "replicas": {"type": "integer", "default": 1},
            "resources": {"type": "object", "properties": {
                "cpu": {"x-kubernetes-int-or-string": true},
                "memory": {"type": "string"}}},
            "extra": {"type": "object", "additionalProperties": {"type": "string"}},
            "bad": {"type": "integer"}
        }});
        let values = json!({
            "mode": "safe", "replicas": 3,
            "resources": {"cpu": "500m", "memory": "1Gi"},
            "extra": {"a": "b"},
            "bad": "two",
            "onlyInValues": "hello",
            "nothing": null
        });
        let issues: Vec<String> = apply(&mut schema, &values)
            .iter()
            .map(ToString::to_string)
            .collect();
        let p = &schema["properties"];
        assert_eq!(p["mode"]["default"], "safe");
        // A default of the schema's own wins.
        assert_eq!(p["replicas"]["default"], 1);
        assert_eq!(p["resources"]["default"], json!({}));
        assert_eq!(p["resources"]["properties"]["cpu"]["default"], "500m");
        assert_eq!(p["extra"]["default"], json!({"a": "b"}));
        assert!(p["bad"].get("default").is_none());
        assert_eq!(issues.len(), 3, "{issues:?}");
        assert_eq!(
            issues[0],
            "/replicas: values.yaml sets 3 where values.schema.json's default is 1: apps of the kind get the \
             schema's default, the chart installed with Helm gets values.yaml's; make them agree"
        );
        assert!(
            issues[1].starts_with("/bad: the values.yaml value does not pass"),
            "{issues:?}"
        );
        assert!(
            issues[2].starts_with("/onlyInValues: set in values.yaml but not declared"),
            "{issues:?}"
        );
        // Defaulted as the server defaults, the required keys are there.
        let compiled = CompiledSchema::new(&schema).unwrap();
        let mut spec = json!({});
        let outcome = compiled.default_and_validate(&mut spec, "spec");
        assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
        assert_eq!(spec["mode"], "safe");
    }
}
