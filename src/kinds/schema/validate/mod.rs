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
//! [`CompiledSchema::default_and_validate`] does both. Field paths use `.`
//! for properties, `[i]` for list items and `[key]` for map
//! (`additionalProperties`) keys. Errors are sorted by path (indices
//! numerically), keeping kube-openapi's order within one path.
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
//! rules see no `apiVersion`/`kind`/`metadata` of embedded resources, and
//! errors of unchanged fields are not ratcheted to warnings on update
//! (kube-apiserver's `CRDValidationRatcheting`).

mod check;
mod compile;
mod defaults;
mod field_error;
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
}

/// A structural schema prepared for fast pruning, defaulting and
/// validation. Build it once per kind with [`CompiledSchema::new`].
#[derive(Debug)]
pub struct CompiledSchema {
    nodes: Vec<Node>,
}

impl CompiledSchema {
    /// Compiles `schema` (a structural schema, e.g. the output of
    /// `to_structural`). Patterns are compiled here; a pattern that
    /// does not compile, or a keyword of the wrong JSON type, is an error
    /// pointing into `schema`. Unknown keywords are ignored; use
    /// `check_structural` to check that a schema is structural.
    pub fn new(schema: &Value) -> Result<CompiledSchema, SchemaError> {
        let mut c = CompiledSchema { nodes: Vec::new() };
        c.compile(schema, String::new())?;
        Ok(c)
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
        let mut errors = self.validate(value, root_field);
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
                errors.extend(self.run_rules(value, old, root_field));
            }
        }
        Outcome { errors, pruned }
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
        let mut path = String::with_capacity(64);
        path.push_str(root_field);
        let mut errs = Vec::new();
        self.check(0, value, &mut path, &mut errs);
        if errs.len() > 1 {
            errs.sort_by(|a, b| cmp_paths(&a.field, &b.field));
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
    fn root_field_may_be_empty() {
        let s = replicas_schema();
        let errs = compiled(s).validate(&json!({"replicas": -1}), "");
        assert_eq!(
            errs[0].to_string(),
            "replicas: Invalid value: -1: replicas in body should be greater than or equal to 0"
        );
    }

    /// Validation throughput: `cargo test --release -- --ignored --nocapture bench`.
    #[test]
    #[ignore = "benchmark"]
    fn bench_validate_100k_objects() {
        let schema = json!({"type": "object", "required": ["replicas"], "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 100, "default": 1},
            "image": {"type": "object", "default": {}, "properties": {
                "repository": {"type": "string", "pattern": "^[a-z0-9./-]+$", "default": "nginx"},
                "tag": {"type": "string", "default": "latest"},
                "pullPolicy": {"type": "string", "enum": ["Always", "IfNotPresent", "Never"], "default": "IfNotPresent"}
            }},
            "resources": {"type": "object", "properties": {
                "limits": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}},
                "requests": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}}
            }},
            "storage": {"type": "object", "properties": {
                "size": {"type": "string", "pattern": "^[0-9]+(Mi|Gi|Ti)$"},
                "class": {"type": "string", "nullable": true}
            }},
            "users": {"type": "array", "maxItems": 50, "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 63},
                "roles": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
            }}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "ingress": {"type": "object", "properties": {
                "enabled": {"type": "boolean", "default": false},
                "host": {"type": "string", "format": "hostname"}
            }}
        }});
        let compiled = CompiledSchema::new(&schema).expect("compiles");
        let object = json!({
            "replicas": 3,
            "image": {"repository": "registry.example.com/app", "tag": "1.2.3"},
            "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": 1}},
            "storage": {"size": "10Gi", "class": null},
            "users": [{"name": "alice", "roles": ["admin", "dev"]}, {"name": "bob", "roles": ["dev"]}],
            "labels": {"team": "a", "tier": "backend"},
            "ingress": {"enabled": true, "host": "app.example.com"}
        });
        let n = 100_000;
        // Best of three rounds, as the machine may be shared.
        let best = |f: &mut dyn FnMut() -> usize| {
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    assert_eq!(f(), 0, "the benchmark object must be valid");
                    start.elapsed()
                })
                .min()
                .unwrap_or_default()
        };
        let full = best(&mut || {
            (0..n)
                .map(|_| {
                    let mut v = object.clone();
                    compiled.default_and_validate(&mut v, "spec").errors.len()
                })
                .sum()
        });
        let clone_only = best(&mut || {
            (0..n)
                .map(|_| {
                    std::hint::black_box(object.clone())
                        .as_object()
                        .map_or(1, |_| 0)
                })
                .sum()
        });
        let validate_only = best(&mut || {
            (0..n)
                .map(|_| compiled.validate(&object, "spec").len())
                .sum()
        });
        let per_sec = |d: std::time::Duration| n as f64 / d.as_secs_f64();
        println!(
            "default_and_validate (incl. cloning the input): {n} objects in {full:?}: {:.0} objects/s",
            per_sec(full)
        );
        println!("  of which cloning and dropping the input: {clone_only:?}");
        println!(
            "validate only: {n} objects in {validate_only:?}: {:.0} objects/s",
            per_sec(validate_only)
        );
    }
}
