//! The defaulting pass: pruning of unknown fields and of non-nullable
//! `null`s, and defaults applied to absent fields, as kube-apiserver does when
//! it decodes a custom resource; also the check of a schema's own `default`
//! values, which kube-apiserver prunes without defaulting first.

use serde_json::Value;

use super::compile::{Additional, NONE, bit, is_meta_field};
use super::field_error::{FieldError, push_field, push_index, push_key};
use super::{CompiledSchema, SchemaError};

impl CompiledSchema {
    /// Prunes and defaults `v` against node `id`, which sits at `path`.
    pub(super) fn normalize(
        &self,
        id: u32,
        v: &mut Value,
        path: &mut String,
        pruned: &mut Vec<String>,
    ) {
        let n = self.node(id);
        match v {
            Value::Object(obj) => {
                let base = path.len();
                let preserve = n.preserve_unknown;
                let mut seen = 0u64;
                // One pass: prune unknown fields (under additionalProperties
                // without a schema: everything inside the values), drop or
                // default non-nullable nulls, recurse into the rest.
                obj.retain(|k, child| {
                    if n.embedded && is_meta_field(k) {
                        return true;
                    }
                    if let Some(p) = n.prop(k) {
                        seen |= bit(p.default_idx);
                        if !self.null_to_default(p.id, child) {
                            return false;
                        }
                        push_field(path, k);
                        self.normalize(p.id, child, path, pruned);
                        path.truncate(base);
                        return true;
                    }
                    match n.additional {
                        Additional::Schema(a) => {
                            if !self.null_to_default(a, child) {
                                return false;
                            }
                            push_key(path, k);
                            self.normalize(a, child, path, pruned);
                            path.truncate(base);
                            true
                        }
                        Additional::Allow | Additional::Deny => {
                            push_key(path, k);
                            prune_everything(child, path, pruned);
                            path.truncate(base);
                            true
                        }
                        Additional::Absent if preserve => true,
                        Additional::Absent => {
                            push_field(path, k);
                            pruned.push(path.clone());
                            path.truncate(base);
                            false
                        }
                    }
                });
                for (i, (name, p)) in n.defaults.iter().enumerate() {
                    let i = u16::try_from(i).unwrap_or(NONE);
                    if seen & bit(i) != 0 || (i >= 64 && obj.contains_key(name.as_ref())) {
                        continue;
                    }
                    let Some(default) = &self.node(*p).default else {
                        continue;
                    };
                    let slot = obj.entry(name.as_ref()).or_insert_with(|| default.clone());
                    push_field(path, name);
                    self.normalize(*p, slot, path, pruned);
                    path.truncate(base);
                }
            }
            Value::Array(items) => {
                let Some(item) = n.items else { return };
                let inode = self.node(item);
                let base = path.len();
                for (i, child) in items.iter_mut().enumerate() {
                    if child.is_null()
                        && !inode.nullable
                        && let Some(d) = &inode.default
                    {
                        *child = d.clone();
                    }
                    push_index(path, i);
                    self.normalize(item, child, path, pruned);
                    path.truncate(base);
                }
            }
            _ => {}
        }
    }

    /// Handles a `null` under a non-nullable schema: replaced by the default
    /// if there is one, otherwise to be removed (returns false).
    fn null_to_default(&self, id: u32, v: &mut Value) -> bool {
        if !v.is_null() {
            return true;
        }
        let n = self.node(id);
        if n.nullable {
            return true;
        }
        match &n.default {
            Some(d) => {
                *v = d.clone();
                true
            }
            None => false,
        }
    }

    /// Pruning only (no defaults), as Kubernetes checks defaults.
    fn prune_only(&self, id: u32, v: &mut Value, path: &mut String, pruned: &mut Vec<String>) {
        let n = self.node(id);
        let base = path.len();
        match v {
            Value::Object(obj) => {
                obj.retain(|k, child| {
                    if (n.embedded && is_meta_field(k)) || n.prop(k).is_some() {
                        return true;
                    }
                    match n.additional {
                        Additional::Absent if !n.preserve_unknown => {
                            push_field(path, k);
                            pruned.push(path.clone());
                            path.truncate(base);
                            false
                        }
                        Additional::Allow | Additional::Deny => {
                            push_key(path, k);
                            prune_everything(child, path, pruned);
                            path.truncate(base);
                            true
                        }
                        _ => true,
                    }
                });
                for (k, child) in obj.iter_mut() {
                    if n.embedded && is_meta_field(k) {
                        continue;
                    }
                    if let Some(p) = n.prop(k) {
                        push_field(path, k);
                        self.prune_only(p.id, child, path, pruned);
                    } else if let Additional::Schema(a) = n.additional {
                        push_key(path, k);
                        self.prune_only(a, child, path, pruned);
                    }
                    path.truncate(base);
                }
            }
            Value::Array(items) => {
                if let Some(item) = n.items {
                    for (i, child) in items.iter_mut().enumerate() {
                        push_index(path, i);
                        self.prune_only(item, child, path, pruned);
                        path.truncate(base);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Under `additionalProperties` without a schema Kubernetes keeps the key but
/// prunes every field inside its value.
fn prune_everything(v: &mut Value, path: &mut String, pruned: &mut Vec<String>) {
    let base = path.len();
    match v {
        Value::Object(obj) => {
            for k in obj.keys() {
                push_field(path, k);
                pruned.push(path.clone());
                path.truncate(base);
            }
            obj.clear();
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                push_index(path, i);
                prune_everything(child, path, pruned);
                path.truncate(base);
            }
        }
        _ => {}
    }
}

/// Validates and prunes `default` against the schema node it belongs to.
/// Returns the pruned default (if pruning changed it) and the validation
/// errors of the default after its nested defaults were applied.
pub(in crate::kinds::schema) fn check_default(
    node: &Value,
    default: &Value,
) -> Result<(Option<Value>, Vec<FieldError>), SchemaError> {
    let compiled = CompiledSchema::new(node)?;
    let mut pruned = default.clone();
    let mut unknown = Vec::new();
    compiled.prune_only(0, &mut pruned, &mut String::from("default"), &mut unknown);
    let mut defaulted = pruned.clone();
    compiled.apply_defaults(&mut defaulted, "default");
    let errors = compiled.validate(&defaulted, "default");
    Ok(((!unknown.is_empty()).then_some(pruned), errors))
}

#[cfg(test)]
mod tests {
    use super::super::tests::run;
    use serde_json::json;

    #[test]
    fn pruning_is_reported_and_preserve_unknown_fields_keeps_data() {
        let s = json!({"type": "object", "properties": {
            "db": {"type": "object", "properties": {"host": {"type": "string"}}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                      "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "users": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "free": {"x-kubernetes-preserve-unknown-fields": true},
            "res": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "properties": {"spec": {"type": "object"}}}
        }});
        let (v, errs, pruned) = run(
            s,
            json!({
                "db": {"host": "h", "port": 5432},
                "extra": {"anything": [1, 2], "known": {"a": "x", "b": "gone"}},
                "users": [{"name": "a", "age": 3}],
                "free": [1, "two", {"three": 3}],
                "res": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}},
                "unknownTop": true
            }),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(
            pruned,
            [
                "spec.db.port",
                "spec.extra.known.b",
                "spec.res.data",
                "spec.unknownTop",
                "spec.users[0].age",
            ]
        );
        assert_eq!(
            v,
            json!({
                "db": {"host": "h"},
                "extra": {"anything": [1, 2], "known": {"a": "x"}},
                "users": [{"name": "a"}],
                "free": [1, "two", {"three": 3}],
                "res": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
            })
        );
    }

    /// Found by the differential test against kube-apiserver: pruned fields
    /// under a map key are reported as `spec.users.a.b.extra`, not
    /// `spec.users[a.b].extra`.
    #[test]
    fn pruned_paths_under_map_keys_are_dotted() {
        let s = json!({"type": "object", "properties": {
            "users": {"type": "object", "additionalProperties": {
                "type": "object", "properties": {"role": {"type": "string"}}
            }}
        }});
        let (v, errs, pruned) = run(
            s,
            json!({"users": {"a.b": {"role": "x", "extra": {"nested": 1}}, "c": {"more": true}}}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(pruned, ["spec.users.a.b.extra", "spec.users.c.more"]);
        assert_eq!(v, json!({"users": {"a.b": {"role": "x"}, "c": {}}}));
    }

    #[test]
    fn defaults_apply_recursively_like_kube_apiserver() {
        let s = json!({"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 1},
            "storage": {"type": "object", "default": {}, "properties": {
                "size": {"type": "string", "default": "10Gi"},
                "class": {"type": "string"},
                "backup": {"type": "object", "default": {"enabled": false}, "properties": {
                    "enabled": {"type": "boolean"},
                    "schedule": {"type": "string", "default": "0 2 * * *"}
                }}
            }},
            "mode": {"type": "string", "default": "no"},
            "note": {"type": "string", "nullable": true, "default": "x"},
            "gone": {"type": "string"},
            "users": {"type": "array", "items": {"type": "object", "properties": {
                "role": {"type": "string", "default": "viewer"}, "name": {"type": "string"}
            }}},
            "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "on"}}
        }});
        let (v, errs, pruned) = run(
            s,
            json!({"mode": null, "note": null, "gone": null, "users": [{"name": "a"}, {"name": "b", "role": "admin"}],
                   "labels": {"a": null, "b": "off"}}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert!(pruned.is_empty());
        assert_eq!(
            v,
            json!({
                "mode": "no",
                "note": null,
                "users": [{"name": "a", "role": "viewer"}, {"name": "b", "role": "admin"}],
                "labels": {"a": "on", "b": "off"},
                "replicas": 1,
                "storage": {"size": "10Gi", "backup": {"enabled": false, "schedule": "0 2 * * *"}}
            })
        );
    }
}
