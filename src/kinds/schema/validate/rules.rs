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
use super::check::correlated_item;
use super::compile::{Additional, NodeRef};
use super::field_error::{FieldError, push_cel_key, push_field, push_index};

impl CompiledSchema {
    /// Whether the schema has any rules.
    pub(super) fn has_rules(&self) -> bool {
        self.nodes.first().is_some_and(|n| n.rules_below)
    }

    /// Runs the rules of node `id` and below on `v` (old value `old`) at
    /// `run.path`. `above` is the nearest ancestor's correlated (new, old)
    /// values, for ratcheting where `v` has no old value. Returns `false`
    /// when the budget ran out.
    pub(super) fn check_rules<'v>(
        &self,
        id: u32,
        v: &'v Value,
        old: Option<&'v Value>,
        above: Option<(&'v Value, &'v Value)>,
        run: &mut RuleRun,
    ) -> bool {
        let n = self.node(id);
        if !n.rules_below || v.is_null() {
            return true;
        }
        let correlated = old.map(|o| (v, o)).or(above);
        let old = old.filter(|o| !o.is_null());
        if let Some(rules) = &n.rules {
            let mut out = cel::Ratchet::new(correlated, &mut run.errors, &mut run.warnings);
            let shape = NodeRef { schema: self, id };
            if !rules.evaluate(v, old, shape, &run.path, &mut run.budget, &mut out) {
                return false;
            }
        }
        for &b in n.all_of.iter() {
            if !self.check_rules(b, v, old, correlated, run) {
                return false;
            }
        }
        let len = run.path.len();
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
                        push_field(&mut run.path, k);
                    } else {
                        push_cel_key(&mut run.path, k);
                    }
                    let old_child = old_obj.and_then(|o| o.get(k.as_str()));
                    let ok = self.check_rules(child_id, child, old_child, correlated, run);
                    run.path.truncate(len);
                    if !ok {
                        return false;
                    }
                }
            }
            Value::Array(items) => {
                let Some(item_id) = n.items else {
                    return true;
                };
                for (i, item) in items.iter().enumerate() {
                    let old_item = correlated_item(&n.list_type, item, old);
                    push_index(&mut run.path, i);
                    let ok = self.check_rules(item_id, item, old_item, correlated, run);
                    run.path.truncate(len);
                    if !ok {
                        return false;
                    }
                }
            }
            _ => {}
        }
        true
    }

    /// Runs every rule on `value` (at `root_field`; `old` on update): the
    /// failures, and those ratcheted to warnings.
    pub(super) fn run_rules(
        &self,
        value: &Value,
        old: Option<&Value>,
        root_field: &str,
    ) -> (Vec<FieldError>, Vec<FieldError>) {
        let mut run = RuleRun {
            path: String::with_capacity(64),
            budget: cel::RUNTIME_BUDGET,
            errors: Vec::new(),
            warnings: Vec::new(),
        };
        run.path.push_str(root_field);
        self.check_rules(0, value, old, None, &mut run);
        (run.errors, run.warnings)
    }
}

/// One run of the rules over an object: where it is, the cost budget left,
/// what failed and what was ratcheted to warnings.
pub(super) struct RuleRun {
    path: String,
    budget: i64,
    errors: Vec<FieldError>,
    warnings: Vec<FieldError>,
}
