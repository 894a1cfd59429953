//! Kind schemas: everything that turns a Helm chart's values schema into a
//! Kubernetes *structural* OpenAPI v3 schema and applies it to objects.
//!
//! * [`convert`] turns a chart's `values.schema.json` (JSON Schema draft-4 to
//!   2020-12) into a structural schema, reporting what could not be carried
//!   over as [`Issue`]s that point into the input.
//! * [`infer`] builds a structural schema from a chart's `values.yaml` when
//!   the chart ships no schema, taking descriptions from Bitnami
//!   readme-generator (`## @param`) and helm-docs (`# --`) comments.
//! * [`validate`] compiles a structural schema once per kind and then prunes,
//!   defaults and validates objects the way kube-apiserver does for custom
//!   resources, with kube-apiserver's field paths, causes and messages. It
//!   also checks that a schema loaded from a file is structural.
//!
//! The module relies on serde_json's `preserve_order` feature: property order
//! in converted and inferred schemas follows the input, so output is
//! deterministic.

pub mod convert;
pub mod infer;
pub mod validate;

mod formats;
mod pattern;

pub use self::convert::{Conversion, to_structural};
pub use self::infer::{InferError, Inferred, infer_from_values};
pub use self::validate::{
    CompiledSchema, FieldError, FieldErrorKind, Outcome, SchemaError, validate_schema,
};

use std::fmt;

/// A problem found in a schema, located by a JSON pointer (RFC 6901) into the
/// document that was examined: for [`to_structural`] that is the input JSON
/// Schema, e.g. `/properties/storage/properties/size`; the empty pointer is
/// the document root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Issue {
    /// JSON pointer to the offending node or keyword.
    pub pointer: String,
    /// What is wrong, or what was lost or changed.
    pub message: String,
}

impl Issue {
    /// Builds an issue from a pointer and a message.
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "(root): {}", self.message)
        } else {
            write!(f, "{}: {}", self.pointer, self.message)
        }
    }
}

/// Appends one reference token to a JSON pointer, escaping `~` and `/`.
fn push_pointer(base: &str, token: &str) -> String {
    let mut out = String::with_capacity(base.len() + token.len() + 1);
    out.push_str(base);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// The JSON type name of a value, as JSON Schema spells it (`integer` for
/// numbers without a fractional part that fit in 64 bits).
fn json_type_of(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
