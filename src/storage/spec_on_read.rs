//! An app's spec as a read shows it: its HelmRelease's `spec.values`,
//! pruned and defaulted by the kind's schema as served now.
//!
//! kube-apiserver does this to a custom resource as it reads it from etcd:
//! the storage codec apiextensions-apiserver sets up for a CRD prunes
//! unknown fields (`unstructuredSchemaCoercer`, `structuralpruning.Prune`)
//! and then applies defaults, and nothing is written back. So after a
//! kind's schema drops a field a read no longer shows it, a field defaulted
//! since shows its default, and the stored values are left as they are
//! (the dropped field comes back if the schema brings it back).
//!
//! Writes store values already pruned and defaulted, so most values fit:
//! [`CompiledSchema::fits`] scans their text without building a `Value`,
//! and only values that do not fit are parsed, pruned and defaulted.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::kinds::schema::CompiledSchema;

/// The spec a read shows of the stored `values` (`None`: absent, shown as
/// `{}`), when it differs from them; `None` when the values are shown as
/// they are (they fit the schema, or are not JSON a `Value` holds).
pub(super) fn normalized(
    schema: &CompiledSchema,
    values: Option<&RawValue>,
) -> Option<Box<RawValue>> {
    let text = values.map_or("{}", RawValue::get);
    if schema.fits(text) {
        return None;
    }
    let mut spec: Value = serde_json::from_str(text).ok()?;
    schema.apply_defaults(&mut spec, "spec");
    serde_json::value::to_raw_value(&spec).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> CompiledSchema {
        CompiledSchema::new(&json!({"type": "object", "properties": {
            "size": {"type": "integer"},
            "shape": {"type": "string", "default": "round"},
        }}))
        .unwrap()
    }

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn values_that_fit_are_shown_as_they_are() {
        assert!(normalized(&schema(), Some(&raw(r#"{"size":1,"shape":"square"}"#))).is_none());
    }

    #[test]
    fn dropped_fields_are_pruned_and_new_defaults_applied() {
        let shown = normalized(&schema(), Some(&raw(r#"{"size":1,"color":"red"}"#))).unwrap();
        assert_eq!(shown.get(), r#"{"size":1,"shape":"round"}"#);
        let shown = normalized(&schema(), None).unwrap();
        assert_eq!(shown.get(), r#"{"shape":"round"}"#);
    }
}
