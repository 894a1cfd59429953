//! Fuzz targets of the kind schemas: JSON Schema → structural conversion
//! and validation + defaulting.

use serde_json::Value;

use crate::kinds::schema::{CompiledSchema, check_structural, to_structural};

/// `schema_convert`: the input is a chart's `values.schema.json`.
///
/// Asserts that a conversion without errors is usable, as `kinds scaffold`
/// relies on: the schema is structural (a kind definition holding it
/// loads) and compiles for validation.
pub fn schema_convert(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let conversion = to_structural(&input);
    for issue in conversion.errors.iter().chain(&conversion.warnings) {
        let _ = issue.to_string();
    }
    if !conversion.is_ok() {
        return;
    }
    let problems = check_structural(&conversion.schema);
    assert!(
        problems.is_empty(),
        "a converted schema is not structural: {problems:?}\nschema: {}",
        conversion.schema
    );
    if let Err(e) = CompiledSchema::new(&conversion.schema) {
        panic!(
            "a converted schema does not compile: {e}\nschema: {}",
            conversion.schema
        );
    }
}

/// `validate`: the input is a JSON array `[schema, object]` or `[schema,
/// object, old]`, where `schema` is a structural schema or the name of an
/// example kind (`"postgres"`, `"redis"`, `"bucket"`) standing for its
/// schema. The object is pruned, defaulted and validated as `spec` of a
/// create (or of an update from `old`, which runs transition rules).
pub fn validate(data: &[u8]) {
    let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (schema, mut object, old) = match items.as_slice() {
        [s, o] => (s, o.clone(), None),
        [s, o, old] => (s, o.clone(), Some(old)),
        _ => return,
    };
    let schema = match schema {
        Value::String(name) => match super::example_schema(name) {
            Some(s) => s,
            None => return,
        },
        s => s,
    };
    let Ok(compiled) = CompiledSchema::new(schema) else {
        return;
    };
    let outcome = compiled.default_and_validate_update(&mut object, old, "spec");
    for e in &outcome.errors {
        let _ = e.to_string();
    }
    // What was defaulted can be validated again and encoded.
    let _ = compiled.validate(&object, "spec");
    let _ = serde_json::to_vec(&object).expect("a defaulted object encodes");
}
