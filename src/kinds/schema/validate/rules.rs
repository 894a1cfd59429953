//! The rules pass: walks an object (and, on update, its old version) along
//! the compiled tree and runs each node's CEL rules (`x-kubernetes-validations`)
//! as kube-apiserver does: `null`s are not validated; old values follow
//! properties and map keys, and map-list items by their keys (other list
//! items have no old value); `allOf` branches' rules run on the same value;
//! the request shares one cost budget. The CEL side lives in
//! `schema::cel`; `compile` supplies it the schema ([`NodeRef`]).

use serde_json::Value;

use super::super::cel;
use super::CompiledSchema;
use super::compile::{Additional, ListType, NodeRef};
use super::field_error::{FieldError, push_cel_key, push_field, push_index};

impl CompiledSchema {
    /// Whether the schema has any rules.
    pub(super) fn has_rules(&self) -> bool {
        self.nodes.first().is_some_and(|n| n.rules_below)
    }

    /// Runs the rules of node `id` and below on `v` (old value `old`) at
    /// `path`. Returns `false` when the budget ran out.
    pub(super) fn check_rules(
        &self,
        id: u32,
        v: &Value,
        old: Option<&Value>,
        path: &mut String,
        budget: &mut i64,
        errs: &mut Vec<FieldError>,
    ) -> bool {
        let n = self.node(id);
        if !n.rules_below || v.is_null() {
            return true;
        }
        let old = old.filter(|o| !o.is_null());
        if let Some(rules) = &n.rules
            && !rules.evaluate(v, old, NodeRef { schema: self, id }, path, budget, errs)
        {
            return false;
        }
        for &b in n.all_of.iter() {
            if !self.check_rules(b, v, old, path, budget, errs) {
                return false;
            }
        }
        let len = path.len();
        match v {
            Value::Object(obj) => {
                let old_obj = old.and_then(Value::as_object);
                for (k, child) in obj {
                    let (child_id, is_prop) = match n.prop(k) {
                        Some(p) => (p.id, true),
                        None => match n.additional {
                            Additional::Schema(a) => (a, false),
                            _ => continue,
                        },
                    };
                    if is_prop {
                        push_field(path, k);
                    } else {
                        push_cel_key(path, k);
                    }
                    let old_child = old_obj.and_then(|o| o.get(k.as_str()));
                    let ok = self.check_rules(child_id, child, old_child, path, budget, errs);
                    path.truncate(len);
                    if !ok {
                        return false;
                    }
                }
            }
            Value::Array(items) => {
                let Some(item_id) = n.items else {
                    return true;
                };
                let old_items = old.and_then(Value::as_array);
                for (i, item) in items.iter().enumerate() {
                    let old_item = match (&n.list_type, old_items) {
                        (ListType::Map(keys), Some(olds)) => olds.iter().find(|o| {
                            keys.iter()
                                .all(|k| o.get(k.as_str()) == item.get(k.as_str()))
                        }),
                        _ => None,
                    };
                    push_index(path, i);
                    let ok = self.check_rules(item_id, item, old_item, path, budget, errs);
                    path.truncate(len);
                    if !ok {
                        return false;
                    }
                }
            }
            _ => {}
        }
        true
    }

    /// Runs every rule on `value` (at `root_field`; `old` on update).
    pub(super) fn run_rules(
        &self,
        value: &Value,
        old: Option<&Value>,
        root_field: &str,
    ) -> Vec<FieldError> {
        let mut path = String::with_capacity(64);
        path.push_str(root_field);
        let mut errs = Vec::new();
        let mut budget = cel::RUNTIME_BUDGET;
        self.check_rules(0, value, old, &mut path, &mut budget, &mut errs);
        errs
    }
}
