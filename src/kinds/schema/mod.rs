//! Kind schemas: everything that turns a Helm chart's values schema into a
//! Kubernetes *structural* OpenAPI v3 schema and applies it to objects.
//!
//! * `from_json_schema` turns a chart's `values.schema.json` (JSON Schema
//!   draft-4 to 2020-12) into a structural schema, reporting what could not
//!   be carried over as `Issue`s that point into the input.
//! * `infer` builds a structural schema from a chart's `values.yaml` when
//!   the chart ships no schema, taking descriptions from Bitnami
//!   readme-generator (`## @param`) and helm-docs (`# --`) comments.
//! * `structural_check` checks that a schema loaded from a file is
//!   structural.
//! * `validate` compiles a structural schema once per kind and then prunes,
//!   defaults and validates objects the way kube-apiserver does for custom
//!   resources, with kube-apiserver's field paths, causes and messages.
//! * `cel` compiles and evaluates CEL validation rules
//!   (`x-kubernetes-validations`) for `validate`.
//!
//! Shared by them: `Issue` (`issue`), the type of a schema node
//! (`node_type`), the formats Kubernetes checks (`formats`) and RE2-style
//! patterns (`pattern`).
//!
//! The module relies on serde_json's `preserve_order` feature: property order
//! in converted and inferred schemas follows the input, so output is
//! deterministic.

mod cel;
mod from_json_schema;
mod infer;
mod structural_check;
mod validate;
mod values_over_schema;

mod formats;
mod issue;
mod node_type;
mod pattern;

pub(crate) use self::from_json_schema::to_structural;
pub(crate) use self::infer::{
    describe_given_schema, infer_from_values, values_as_helm_reads, without_skipped,
};
pub(crate) use self::structural_check::{DEFAULT_UNCHECKED, check_structural};
pub use self::validate::{CompiledSchema, FieldError, FieldErrorKind, Outcome, SchemaError};
pub(crate) use self::values_over_schema::apply as apply_values_over_schema;
