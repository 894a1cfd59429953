//! Validation, pruning and defaulting of objects against a structural schema,
//! the way kube-apiserver treats custom resources.
//!
//! A [`CompiledSchema`] is built once per kind (patterns are compiled then)
//! and applied to many objects:
//!
//! 1. [`CompiledSchema::apply_defaults`] prunes unknown fields (where
//!    `x-kubernetes-preserve-unknown-fields` does not keep them) and drops
//!    `null`s of non-nullable fields without a default, then applies
//!    defaults to absent fields of present objects, recursing into the
//!    values it inserted. Kubernetes prunes silently; the pruned paths are
//!    returned so callers can warn.
//! 2. [`CompiledSchema::validate`] reports **every** violation as a
//!    [`FieldError`] with kube-apiserver's field path, cause
//!    ([`FieldErrorKind::reason`]) and message ([`FieldError::message`]),
//!    following kube-openapi's validators (including their quirks: a string
//!    reports only the first of maxLength/minLength/pattern, `2.0` is an
//!    integer, bounds on integers compare as integers).
//!
//! [`CompiledSchema::default_and_validate`] does both;
//! [`CompiledSchema::default_and_validate_update`] ratchets as
//! kube-apiserver's `CRDValidationRatcheting` does: the errors of a value
//! equal to its old one (properties and map keys correlate by name, `map`
//! list items by their keys, other list items not at all) are dropped, and
//! a CEL rule without `oldSelf` failing on such a value (or, uncorrelated,
//! its nearest correlated ancestor) is a warning ([`Outcome::ratcheted`]).
//! Field paths use `.`
//! for properties and map (`additionalProperties`) keys and `[i]` for list
//! items, as kube-openapi and kube-apiserver's pruning write them; CEL rule
//! errors write map keys as `[key]`, as kube-apiserver's CEL validation
//! does. Errors kube-openapi raises without a field name (a number outside
//! what its type and format hold) are at `<nil>` with an empty value, the
//! path in their message. Errors are sorted by path (indices numerically),
//! keeping kube-openapi's order within one path.
//!
//! One file per pass over the compiled tree, each an `impl CompiledSchema`
//! block of its own:
//!
//! * `compile`: the schema JSON turned into a flat tree of nodes (types,
//!   bounds, compiled patterns, property lookup tables);
//! * `defaults`: pruning and defaulting (and the check of a schema's own
//!   `default`s);
//! * `check`: kube-openapi's validators over an object, with `numbers` for
//!   the numeric ones (Go's int64/float64 view of a JSON number);
//! * `fits`: whether the defaulting pass would change a JSON text, checked
//!   over its tokens (what a read checks before pruning a stored value);
//! * `field_error`: the errors, their field paths and kube-apiserver's
//!   message text.
//!
//! * `rules`: the CEL rules (`x-kubernetes-validations`, compiled in
//!   `compile` by `schema::cel`), run on the object and, on update, its old
//!   version.
//!
//! Deviations from kube-apiserver, all deliberate: errors of
//! `allOf`/`anyOf`/`oneOf`/`not` are reported at the node's path (Kubernetes
//! reports them at the object root with an empty field); `null` is accepted
//! by a nullable field that has an `enum`; an integer value is compared
//! exactly with a fractional `minimum`/`maximum`/`multipleOf` (kube-openapi
//! truncates the bound to an integer first, accepting `0` for `minimum: 0.5`
//! and rejecting every integer for `multipleOf: 0.25`); the `metadata` of
//! `x-kubernetes-embedded-resource` objects is kept but not checked; CEL
//! rules see no `apiVersion`/`kind`/`metadata` of embedded resources; the
//! branches of `allOf`/`anyOf`/`oneOf`/`not` are not correlated with old
//! values below the node (the node itself is).

mod check;
mod compile;
mod defaults;
pub(crate) mod field_error;
mod fits;
mod numbers;
mod rules;

use serde_json::Value;

pub use self::compile::SchemaError;
pub(super) use self::defaults::check_default;
pub use self::field_error::{FieldError, FieldErrorKind};

use self::compile::Node;
use self::field_error::cmp_paths;

/// What [`CompiledSchema::default_and_validate`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Every validation error, sorted by field path.
    pub errors: Vec<FieldError>,
    /// Paths of unknown fields that were pruned (removed), sorted like
    /// `errors`; Kubernetes drops these silently, callers may warn.
    pub pruned: Vec<String>,
    /// On update, the CEL rule failures ratcheted to warnings (the rule does
    /// not use `oldSelf` and the value it ran on is unchanged), as
    /// kube-apiserver sends them.
    pub ratcheted: Vec<FieldError>,
}

/// A structural schema prepared for fast pruning, defaulting and
/// validation. Build it once per kind with [`CompiledSchema::new`].
#[derive(Debug)]
pub struct CompiledSchema {
    nodes: Vec<Node>,
    /// While compiling: `x-kubernetes-validations` that do not compile,
    /// gathered so that every one is said at once.
    rule_errors: Vec<SchemaError>,
    /// While compiling: the pointer of the nearest list above whose items
    /// are not correlatable with their old values (not a `map` list), where
    /// no transition rule may be (kube-apiserver's rule).
    uncorrelatable_within: Option<String>,
}

impl CompiledSchema {
    /// Compiles `schema` (a structural schema, e.g. the output of
    /// `to_structural`). Patterns are compiled here; a pattern that
    /// does not compile, or a keyword of the wrong JSON type, is an error
    /// pointing into `schema`. Unknown keywords are ignored; use
    /// `check_structural` to check that a schema is structural.
    pub fn new(schema: &Value) -> Result<CompiledSchema, SchemaError> {
        Self::new_saying_all(schema).map_err(|mut errors| errors.swap_remove(0))
    }

    /// [`CompiledSchema::new`], failing with every validation rule that
    /// does not compile (a node's children before the node) rather than
    /// the first, and the error that stopped the compilation, if any, last.
    pub fn new_saying_all(schema: &Value) -> Result<CompiledSchema, Vec<SchemaError>> {
        let mut c = CompiledSchema {
            nodes: Vec::new(),
            rule_errors: Vec::new(),
            uncorrelatable_within: None,
        };
        let stopped = c.compile(schema, String::new()).err();
        let mut errors = std::mem::take(&mut c.rule_errors);
        errors.extend(stopped);
        if errors.is_empty() {
            Ok(c)
        } else {
            Err(errors)
        }
    }

    fn node(&self, id: u32) -> &Node {
        &self.nodes[id as usize]
    }

    /// Prunes, defaults, then validates `value`, which sits at `root_field`
    /// (e.g. `"spec"`) in the object, as on create; see the module
    /// documentation.
    pub fn default_and_validate(&self, value: &mut Value, root_field: &str) -> Outcome {
        self.default_and_validate_update(value, None, root_field)
    }

    /// [`CompiledSchema::default_and_validate`] for an update from `old`
    /// (the stored value at `root_field`; `None` on create): transition
    /// rules compare with it.
    ///
    /// Like kube-apiserver, the CEL rules only run when the schema checks
    /// found nothing that makes them meaningless (a wrong type, an
    /// unsupported value, a missing field, too long or too many); otherwise
    /// one error at `<nil>` says they were not checked.
    pub fn default_and_validate_update(
        &self,
        value: &mut Value,
        old: Option<&Value>,
        root_field: &str,
    ) -> Outcome {
        let pruned = self.apply_defaults(value, root_field);
        let mut errors = self.validate_update(value, old, root_field);
        let mut ratcheted = Vec::new();
        if self.has_rules() {
            let blocking = errors.iter().any(|e| {
                matches!(
                    e.kind,
                    FieldErrorKind::NotSupported
                        | FieldErrorKind::Required
                        | FieldErrorKind::TooLong
                        | FieldErrorKind::TooMany
                        | FieldErrorKind::TypeInvalid
                )
            });
            if blocking {
                errors.push(FieldError {
                    field: "<nil>".into(),
                    kind: FieldErrorKind::Invalid,
                    bad_value: Some(Value::Null),
                    detail: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
                });
            } else {
                let (failed, warned) = self.run_rules(value, old, root_field);
                errors.extend(failed);
                ratcheted = warned;
            }
        }
        Outcome {
            errors,
            pruned,
            ratcheted,
        }
    }

    /// Prunes unknown fields and non-nullable `null`s without defaults, and
    /// applies defaults, as kube-apiserver does when decoding a custom
    /// resource. Returns the paths of the pruned unknown fields.
    pub(crate) fn apply_defaults(&self, value: &mut Value, root_field: &str) -> Vec<String> {
        let mut path = String::with_capacity(64);
        path.push_str(root_field);
        let mut pruned = Vec::new();
        self.normalize(0, value, &mut path, &mut pruned);
        if pruned.len() > 1 {
            pruned.sort_by(|a, b| cmp_paths(a, b));
        }
        pruned
    }

    /// Validates `value` (which sits at `root_field`) without changing it,
    /// returning every error, sorted by field path.
    pub fn validate(&self, value: &Value, root_field: &str) -> Vec<FieldError> {
        self.validate_update(value, None, root_field)
    }

    /// [`CompiledSchema::validate`] for an update from `old`: errors of
    /// values equal to their old ones are dropped (ratcheting, see
    /// [`CompiledSchema::check`]).
    pub fn validate_update(
        &self,
        value: &Value,
        old: Option<&Value>,
        root_field: &str,
    ) -> Vec<FieldError> {
        let mut path = String::with_capacity(64);
        path.push_str(root_field);
        let mut errs = Vec::new();
        self.check(0, value, old, &mut path, &mut errs);
        if errs.len() > 1 {
            errs.sort_by(|a, b| cmp_paths(a.order_path(), b.order_path()));
        }
        errs
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn compiled(schema: Value) -> CompiledSchema {
        CompiledSchema::new(&schema).expect("schema compiles")
    }

    /// Defaults and validates; returns the value, `Display`ed errors and
    /// pruned paths.
    pub(super) fn run(schema: Value, mut value: Value) -> (Value, Vec<String>, Vec<String>) {
        let out = compiled(schema).default_and_validate(&mut value, "spec");
        let errs = out.errors.iter().map(ToString::to_string).collect();
        (value, errs, out.pruned)
    }

    pub(super) fn errors(schema: Value, value: Value) -> Vec<String> {
        run(schema, value).1
    }

    pub(super) fn one(schema: Value, value: Value) -> FieldError {
        let mut v = value;
        let mut out = compiled(schema).default_and_validate(&mut v, "spec");
        assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
        out.errors.remove(0)
    }

    pub(super) fn replicas_schema() -> Value {
        json!({"type": "object", "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 10}
        }})
    }

    #[test]
    fn compiled_schemas_are_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CompiledSchema>();
        assert_send_sync::<FieldError>();
        assert_send_sync::<SchemaError>();
    }

    #[test]
    fn updates_ratchet_unchanged_values() {
        let s = compiled(json!({"type": "object", "properties": {
            "size": {"type": "integer", "maximum": 10},
            "note": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 1}},
            "limits": {"type": "object", "properties": {"cpu": {"type": "integer"}},
                       "x-kubernetes-validations": [{"rule": "self.cpu < 5"}]}
        }}));
        let old = json!({"size": 50, "note": "a", "tags": ["ab"], "limits": {"cpu": 9}});
        let update = |new: Value| {
            let mut new = new;
            let out = s.default_and_validate_update(&mut new, Some(&old), "spec");
            let errors: Vec<String> = out.errors.iter().map(|e| e.field.clone()).collect();
            let warned: Vec<String> = out.ratcheted.iter().map(ToString::to_string).collect();
            (errors, warned)
        };
        let warning = "spec.limits: Invalid value: failed rule: self.cpu < 5".to_owned();
        // Another field changes: the unchanged invalid ones keep quiet and
        // the rule on unchanged limits warns.
        let changed_note = json!({"size": 50, "note": "b", "tags": ["ab"], "limits": {"cpu": 9}});
        assert_eq!(update(changed_note), (vec![], vec![warning.clone()]));
        // A changed value is judged; an atomic list's items have no old
        // values, so a changed list judges them all (too long: the rules
        // are not run, as kube-apiserver says at `<nil>`).
        let changed = json!({"size": 60, "note": "a", "tags": ["ab", "c"], "limits": {"cpu": 9}});
        let judged = ["spec.size", "spec.tags[0]", "<nil>"]
            .map(str::to_owned)
            .to_vec();
        assert_eq!(update(changed), (judged, vec![]));
        // On create, nothing is ratcheted.
        let mut created = old.clone();
        let out = s.default_and_validate(&mut created, "spec");
        assert_eq!(out.errors.len(), 3, "{:?}", out.errors);
        // A changed ruled value fails its rule.
        let ruled = json!({"size": 50, "note": "a", "tags": ["ab"], "limits": {"cpu": 8}});
        assert_eq!(update(ruled), (vec!["spec.limits".to_owned()], vec![]));
    }

    #[test]
    fn root_field_may_be_empty() {
        let s = replicas_schema();
        let errs = compiled(s).validate(&json!({"replicas": -1}), "");
        assert_eq!(
            errs[0].to_string(),
            "replicas: Invalid value: -1: replicas in body should be greater than or equal to 0"
        );
    }
}
