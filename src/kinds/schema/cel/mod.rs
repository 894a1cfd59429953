//! CEL validation rules (`x-kubernetes-validations`), compiled once per kind
//! and evaluated per request the way kube-apiserver does for custom
//! resources (`k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel`).
//!
//! * `env`: the CEL environment (standard library, strings extension,
//!   Kubernetes' quantity, URL, lists and regex libraries in `quantity`,
//!   `url`, `lists`, `regex`);
//! * `rule`: one rule compiled and checked (unknown identifiers and
//!   functions, `reason`, `fieldPath`, `optionalOldSelf`, static cost);
//! * `value`: objects as CEL values, typed by their schema;
//! * `cost`: the cost model behind the static limit and the runtime budget.
//!
//! [`Rules::evaluate`] runs a node's rules against a value (and its old
//! value on update): transition rules (those using `oldSelf`) are skipped
//! when there is no old value unless `optionalOldSelf` is set, in which case
//! `oldSelf` is an optional. A failing rule becomes a [`FieldError`] with
//! kube-apiserver's message (`failed rule: <rule>`, the `message`, or the
//! `messageExpression`'s result), path (`fieldPath` appended) and cause
//! (`reason`).
//!
//! Limits, as kube-apiserver's `celconfig`: a rule whose static estimate
//! exceeds [`STATIC_COST_LIMIT`] is refused at load; per request, a rule's
//! cost for the actual object may not exceed [`PER_CALL_LIMIT`], and all of a
//! request's rules share [`RUNTIME_BUDGET`]. kube-apiserver meters cost while
//! evaluating; the CEL crate does not, so the cost is computed from the
//! object's sizes before a rule runs (see `cost`).

mod cost;
mod env;
mod escaping;
mod lists;
mod quantity;
mod regex;
mod rule;
mod types;
mod url;
mod value;

use cel::Context;
use cel::common::types::CelOptional;
use serde_json::Value;

use super::validate::field_error::{FieldError, FieldErrorKind};

use self::rule::{Reason, Rule};
pub(crate) use self::value::{Shape, ShapeKind};

/// kube-apiserver's `StaticEstimatedCostLimit`: the most a rule may cost
/// for the largest object its schema allows.
pub(crate) const STATIC_COST_LIMIT: u64 = 10_000_000;
/// kube-apiserver's `PerCallLimit`: the most one rule may cost on a request.
pub(crate) const PER_CALL_LIMIT: u64 = 1_000_000;
/// kube-apiserver's `RuntimeCELCostBudget`: what all rules of one request
/// may cost together.
pub(crate) const RUNTIME_BUDGET: i64 = 10_000_000;
/// The longest `message` (and evaluated `messageExpression`) allowed.
const MAX_MESSAGE_LEN: usize = 5 * 1024;

/// A rule that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleError {
    /// JSON pointer to the offending key of the rule.
    pub(crate) pointer: String,
    /// What is wrong.
    pub(crate) message: String,
}

/// The compiled rules of one schema node.
#[derive(Debug)]
pub(crate) struct Rules {
    rules: Box<[Rule]>,
    uses_old_self: bool,
}

impl Rules {
    /// Compiles the `x-kubernetes-validations` array `v`, at `ptr`, of a
    /// node shaped `shape`.
    pub(crate) fn compile<S: Shape>(v: &Value, ptr: &str, shape: S) -> Result<Rules, RuleError> {
        let Value::Array(entries) = v else {
            return Err(RuleError {
                pointer: ptr.to_string(),
                message: "must be an array of validation rules".into(),
            });
        };
        let mut rules = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let p = format!("{ptr}/{i}");
            rules.push(rule::compile(entry, &p, shape)?);
        }
        let uses_old_self = rules.iter().any(|r| r.uses_old_self);
        Ok(Rules {
            rules: rules.into_boxed_slice(),
            uses_old_self,
        })
    }

    /// The index of the first transition rule (one that uses `oldSelf`).
    pub(crate) fn first_transition_rule(&self) -> Option<usize> {
        self.rules.iter().position(|r| r.uses_old_self)
    }

    /// Evaluates the rules against `value` (old value `old`), which sits at
    /// `path`, charging `budget`. Returns `false` when the budget ran out:
    /// no further rules may run.
    pub(crate) fn evaluate<S: Shape>(
        &self,
        value: &Value,
        old: Option<&Value>,
        shape: S,
        path: &str,
        budget: &mut i64,
        out: &mut Ratchet<'_>,
    ) -> bool {
        let type_name = shape.type_name();
        let invalid = |detail: String| FieldError {
            field: path.to_string(),
            kind: FieldErrorKind::Invalid,
            bad_value: Some(Value::String(type_name.to_string())),
            detail,
        };
        if *budget <= 0 {
            out.errors.push(invalid(
                "validation failed due to running out of cost budget, no further validation rules will be run".into(),
            ));
            return false;
        }
        let mut ctx = Context::with_env(env::env().clone());
        ctx.add_variable_as_val("self", value::to_val(value, Some(shape)));
        if let Some(old) = old.filter(|_| self.uses_old_self) {
            ctx.add_variable_as_val("oldSelf", value::to_val(old, Some(shape)));
        }
        for rule in &self.rules {
            if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
                continue;
            }
            let cost = cost::estimate_actual(&rule.program, value, old);
            if cost > PER_CALL_LIMIT {
                out.errors.push(invalid(format!(
                    "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                    rule.error_string()
                )));
                *budget = -1;
                return false;
            }
            if i64::try_from(cost).unwrap_or(i64::MAX) > *budget {
                out.errors.push(invalid(
                    "validation failed due to running out of cost budget, no further validation rules will be run".into(),
                ));
                *budget = -1;
                return false;
            }
            *budget -= i64::try_from(cost).unwrap_or(i64::MAX);
            let result = if rule.optional_old_self {
                let mut inner = ctx.new_inner_scope();
                let opt = match old {
                    Some(o) => CelOptional::of(value::to_val(o, Some(shape))),
                    None => CelOptional::none(),
                };
                inner.add_variable_as_val("oldSelf", Box::new(opt));
                rule.program.execute(&inner)
            } else {
                rule.program.execute(&ctx)
            };
            match result {
                Ok(cel::Value::Bool(true)) => {}
                Ok(cel::Value::Bool(false)) => {
                    let failed = failure(rule, &ctx, value, path);
                    // Ratcheting: a rule without oldSelf failing on a
                    // value its update left as it was only warns.
                    if !rule.uses_old_self && out.unchanged() {
                        out.warnings.push(failed);
                    } else {
                        out.errors.push(failed);
                    }
                }
                Ok(other) => out.errors.push(invalid(format!(
                    "rule evaluated to {}, not a bool, evaluating rule: {}",
                    other.type_of(),
                    rule.error_string()
                ))),
                Err(e) => {
                    let detail = match &e {
                        cel::ExecutionError::NoSuchOverload(_) => format!(
                            "'no such overload: {e}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                            rule.error_string()
                        ),
                        cel::ExecutionError::NoSuchKey(k) => {
                            format!("no such key: {k} evaluating rule: {}", rule.error_string())
                        }
                        _ => format!("{e} evaluating rule: {}", rule.error_string()),
                    };
                    out.errors.push(invalid(detail));
                }
            }
        }
        true
    }
}

/// Whether a failing rule only warns, as kube-apiserver's
/// `CRDValidationRatcheting` decides: on update, when the value the rule
/// runs on — or, where it has no old value to correlate with (an item of a
/// list that is not a `map` list), its nearest ancestor that has one — is
/// equal to its old value. Failures go to `errors`, the ratcheted ones to
/// `warnings`.
pub(crate) struct Ratchet<'a> {
    /// The nearest correlated (new, old) values, `None` on create.
    correlated: Option<(&'a Value, &'a Value)>,
    /// Whether they are equal, once asked.
    equal: Option<bool>,
    /// The failures.
    pub errors: &'a mut Vec<FieldError>,
    /// The ratcheted failures.
    pub warnings: &'a mut Vec<FieldError>,
}

impl<'a> Ratchet<'a> {
    /// For the value correlated as `correlated`.
    pub(crate) fn new(
        correlated: Option<(&'a Value, &'a Value)>,
        errors: &'a mut Vec<FieldError>,
        warnings: &'a mut Vec<FieldError>,
    ) -> Ratchet<'a> {
        Ratchet {
            correlated,
            equal: None,
            errors,
            warnings,
        }
    }

    fn unchanged(&mut self) -> bool {
        let correlated = self.correlated;
        *self
            .equal
            .get_or_insert_with(|| correlated.is_some_and(|(new, old)| new == old))
    }
}

/// The error for `rule` having evaluated to false on `value` at `path`.
fn failure(rule: &Rule, ctx: &Context<'_, '_>, value: &Value, path: &str) -> FieldError {
    let mut field = path.to_string();
    if let Some(fp) = &rule.field_path {
        if !field.is_empty() {
            field.push('.');
        }
        field.push_str(fp);
    }
    let detail = rule
        .message_expression
        .as_ref()
        .and_then(|(p, _)| message_from_expression(p, ctx))
        .unwrap_or_else(|| match &rule.message {
            Some(m) => m.to_string(),
            None => format!("failed rule: {}", rule.source),
        });
    // Objects and lists are not shown, scalars are.
    let shown = match value {
        Value::Object(_) | Value::Array(_) => None,
        v => Some(v.clone()),
    };
    let (kind, bad_value, detail) = match rule.reason {
        None | Some(Reason::Invalid) => (FieldErrorKind::Invalid, shown, detail),
        Some(Reason::Forbidden) => (FieldErrorKind::Forbidden, None, detail),
        Some(Reason::Required) => (FieldErrorKind::Required, None, detail),
        Some(Reason::Duplicate) => (FieldErrorKind::Duplicate, shown, String::new()),
    };
    FieldError {
        field,
        kind,
        bad_value,
        detail,
    }
}

/// A `messageExpression`'s message, or `None` (fall back to `message`) when
/// it fails or is not a usable message, as kube-apiserver does.
fn message_from_expression(p: &cel::Program, ctx: &Context<'_, '_>) -> Option<String> {
    match p.execute(ctx) {
        Ok(cel::Value::String(s)) => {
            let s = s.trim();
            (!s.is_empty() && !s.contains('\n') && s.len() <= MAX_MESSAGE_LEN)
                .then(|| s.to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
