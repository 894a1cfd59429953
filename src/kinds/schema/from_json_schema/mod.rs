//! Conversion of a Helm chart's `values.schema.json` (JSON Schema draft-4
//! to 2020-12) into a Kubernetes structural OpenAPI v3 schema, as
//! k8s.io/apiextensions-apiserver requires for a custom resource's `spec`.
//!
//! [`to_structural`] keeps everything Kubernetes can express and reports
//! the rest: **errors** when the result is not usable (a `$ref` cycle, an
//! unresolvable or external `$ref`, a non-object root, an invalid default),
//! **warnings** when something was lost or changed. Each [`Issue`] carries a
//! JSON pointer into the *input*; problems inside a `$ref`erenced definition
//! point at the definition.
//!
//! What happens to each construct:
//!
//! * every node gets a `type` (inferred from `properties`/`items`, then from
//!   `enum`/`const`/`default` values and type-specific keywords, warning
//!   when that narrows what JSON Schema accepted); a node that may be
//!   anything becomes `{"x-kubernetes-preserve-unknown-fields": true}`
//!   (Kubernetes allows that without a type; warning), an object without
//!   declared fields `type: object` + preserve-unknown-fields (warning unless
//!   the input asked for preserve-unknown-fields itself);
//! * `type: [x, "null"]` becomes `nullable: true`; `[integer, string]`
//!   becomes `x-kubernetes-int-or-string: true`; other unions become a
//!   typeless preserve-unknown-fields node (warning);
//! * `$ref` (`#/$defs/..`, `#/definitions/..`, any in-document pointer,
//!   `$anchor`s) is inlined; `allOf` is merged into the node (properties and
//!   `required` unioned, bounds tightened, conflicts warned);
//! * `anyOf`/`oneOf` of constants collapse into one `enum`; a `null` branch
//!   becomes `nullable`; branches that are only types become a type union,
//!   and validations that apply to one branch's type only (`pattern` on the
//!   string branch of a quantity, `minimum` on its integer branch) move onto
//!   the node, where they leave the other types' values alone; branches
//!   that each declare one scalar type give the node the union of those
//!   types (one type: the rest stays an `anyOf` of value validations;
//!   several: constraints that cannot move onto the node are dropped with a
//!   warning on their branch);
//!   branches that are pure value validations (e.g. `required` variants) are
//!   kept as Kubernetes allows them; properties that only appear in branches
//!   are lifted into the node; anything else is dropped with a warning;
//!   `not` and `if`/`then`/`else` are kept as value validations when
//!   possible (`if`/`then`/`else` as an equivalent `anyOf`);
//!   `dependentRequired` becomes `anyOf: [{not: {required: [k]}}, {required:
//!   [...]}]`;
//! * draft-6 numeric `exclusiveMinimum: 5` becomes `minimum: 5,
//!   exclusiveMinimum: true`; `const` becomes a one-value `enum`;
//!   `uniqueItems: true` becomes `x-kubernetes-list-type: set`;
//! * `additionalProperties: true` becomes preserve-unknown-fields;
//!   `additionalProperties: false` is dropped (Kubernetes prunes unknown
//!   fields instead of rejecting them); a schema-valued one is kept unless
//!   `properties` is present; a single `patternProperties` becomes
//!   `additionalProperties` (key pattern not enforced);
//! * `$schema`, `$id`, `$comment`, `$defs`, `examples` are dropped silently;
//!   `readOnly`/`writeOnly`, `contains`, `propertyNames`,
//!   `dependentSchemas`, `unevaluated*` and unknown keywords with a warning;
//! * defaults are kept and validated with [`super::validate`]; unknown fields
//!   in a default are pruned (warning); an invalid default is an error.
//!
//! The input is JSON, so strings stay strings: nothing here reinterprets
//! `"no"`, `"on"`, `"~"` or `"1.0"`. Output key order is canonical and
//! property order follows the input (serde_json `preserve_order`).
//!
//! The conversion runs node by node, top-down. For each node, `refs`
//! expands `$ref` and `allOf` into the schema objects that make it up;
//! `junctors` folds the `anyOf`/`oneOf` branches it can; `collect` reads
//! every keyword of those objects into one accumulator; `typing` decides the
//! node's type; `assemble` writes the structural node (converting children
//! on the way), and `junctors` with `value_validation` turns what is left
//! of `anyOf`/`oneOf`/`not`/`if` into value validations.

mod assemble;
mod collect;
mod junctors;
mod refs;
mod typing;
mod value_validation;

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::issue::{Issue, push_pointer};
use super::node_type::json_type_of;

use self::collect::Acc;

/// The result of [`to_structural`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Conversion {
    /// The structural schema (always produced, but only usable when
    /// `errors` is empty).
    pub schema: Value,
    /// Things that were lost or changed on the way.
    pub warnings: Vec<Issue>,
    /// Problems that make `schema` unusable.
    pub errors: Vec<Issue>,
}

impl Conversion {
    /// Whether the schema is usable (no errors).
    pub(crate) fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Converts a JSON Schema (a chart's `values.schema.json`) into a Kubernetes
/// structural schema for a kind's `spec`; see the module documentation.
pub(crate) fn to_structural(schema: &Value) -> Conversion {
    let mut c = Converter {
        root: schema,
        root_id: schema.get("$id").and_then(Value::as_str),
        warnings: Vec::new(),
        errors: Vec::new(),
        ref_stack: Vec::new(),
        nodes: 0,
    };
    let out = c.convert_root();
    Conversion {
        schema: out,
        warnings: dedup(c.warnings),
        errors: dedup(c.errors),
    }
}

fn dedup(issues: Vec<Issue>) -> Vec<Issue> {
    let mut seen = BTreeSet::new();
    issues
        .into_iter()
        .filter(|i| seen.insert((i.pointer.clone(), i.message.clone())))
        .collect()
}

/// Guards against exponential `$ref` expansion.
const MAX_NODES: usize = 50_000;

/// Keywords that only annotate and carry no validation.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "$comment",
    "examples",
    "example",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$id",
    "id",
    "$schema",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
    "$vocabulary",
    "$defs",
    "definitions",
];

/// One schema object contributing to a node, with its input pointer.
#[derive(Clone)]
struct Part<'a> {
    map: &'a Map<String, Value>,
    ptr: String,
}

/// A node's contributing schema objects after `$ref` and `allOf` expansion.
#[derive(Default)]
struct Expanded<'a> {
    parts: Vec<Part<'a>>,
    /// Pointer of a `false` schema among them: the node accepts nothing.
    never: Option<String>,
}

/// The conversion of one schema: the input, what was found on the way, and
/// the state that guards `$ref` expansion.
struct Converter<'a> {
    root: &'a Value,
    root_id: Option<&'a str>,
    warnings: Vec<Issue>,
    errors: Vec<Issue>,
    /// `$ref` targets being expanded on the current path, with the pointer
    /// of the `$ref` that entered them.
    ref_stack: Vec<(String, String)>,
    nodes: usize,
}

impl<'a> Converter<'a> {
    fn warn(&mut self, ptr: &str, msg: impl Into<String>) {
        self.warnings.push(Issue::new(ptr, msg));
    }

    fn error(&mut self, ptr: &str, msg: impl Into<String>) {
        self.errors.push(Issue::new(ptr, msg));
    }

    fn convert_root(&mut self) -> Value {
        if !matches!(self.root, Value::Object(_) | Value::Bool(_)) {
            self.error(
                "",
                format!(
                    "the schema root must be a JSON object, not {}",
                    json_type_of(self.root)
                ),
            );
            return serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        }
        self.ref_stack.push((String::new(), String::new()));
        let converted = self.convert_sources(vec![(self.root, String::new())]);
        let mut out = match converted {
            Some(m) => m,
            None => {
                self.error("", "the schema root is `false`: no value would be valid");
                let mut m = Map::new();
                m.insert("type".into(), "object".into());
                m
            }
        };
        let ty = out.get("type").and_then(Value::as_str).map(str::to_string);
        match ty.as_deref() {
            Some("object") => {}
            Some(other) => self.error(
                "",
                format!("the schema root must be of type object, not {other}"),
            ),
            None if out.contains_key("x-kubernetes-int-or-string") => {
                self.error(
                    "",
                    "the schema root must be of type object, not int-or-string",
                );
            }
            None => {
                self.warn(
                    "",
                    "the schema root has no type; using type object with x-kubernetes-preserve-unknown-fields",
                );
                let mut m = Map::new();
                m.insert("type".into(), "object".into());
                m.extend(out);
                out = m;
                // A typeless root may carry any default; an object root only
                // an object one.
                if out.get("default").is_some_and(|d| !d.is_object()) {
                    out.remove("default");
                    self.warn("", "the schema root's default is not an object; dropped");
                }
            }
        }
        if out.remove("nullable").is_some() {
            self.warn("", "nullable is not allowed at the root; dropped");
        }
        Value::Object(out)
    }

    /// Converts the schema made of `sources` (usually one). `None` means the
    /// node accepts no value (`false`).
    fn convert_sources(&mut self, sources: Vec<(&'a Value, String)>) -> Option<Map<String, Value>> {
        let node_ptr = sources.first().map(|(_, p)| p.clone()).unwrap_or_default();
        self.nodes += 1;
        if self.nodes == MAX_NODES {
            self.error(
                &node_ptr,
                format!(
                    "the schema expands to more than {MAX_NODES} nodes ($ref fan-out); giving up"
                ),
            );
        }
        if self.nodes >= MAX_NODES {
            return Some(preserve_map());
        }
        let stack_len = self.ref_stack.len();
        let mut ex = Expanded::default();
        for (v, p) in sources {
            self.expand(v, p, &mut ex, stack_len);
        }
        let out = if ex.never.is_some() {
            None
        } else {
            Some(self.build(ex, &node_ptr, stack_len))
        };
        self.ref_stack.truncate(stack_len);
        out
    }

    /// Builds one node from its expanded parts.
    fn build(
        &mut self,
        mut ex: Expanded<'a>,
        node_ptr: &str,
        stack_len: usize,
    ) -> Map<String, Value> {
        let mut acc = Acc::default();
        // anyOf/oneOf folding may add parts, so walk by index.
        let mut i = 0;
        while i < ex.parts.len() {
            let part = ex.parts[i].clone();
            for key in ["anyOf", "oneOf"] {
                if let Some(v) = part.map.get(key) {
                    let jp = push_pointer(&part.ptr, key);
                    match v {
                        Value::Array(branches) => {
                            self.fold_union(
                                key == "oneOf",
                                branches,
                                jp,
                                &mut ex,
                                &mut acc,
                                stack_len,
                            );
                        }
                        _ => self.warn(&jp, format!("{key} must be an array; dropped")),
                    }
                }
            }
            i += 1;
        }
        if let Some(p) = ex.never.take() {
            self.warn(
                &p,
                "a `false` schema inside anyOf/oneOf/allOf cannot be expressed; ignored",
            );
        }
        let mut unknown = Vec::new();
        for part in &ex.parts {
            self.collect(part, &mut acc, &mut unknown);
        }
        if !unknown.is_empty() {
            self.warn(
                node_ptr,
                format!("unsupported keywords dropped: {}", unknown.join(", ")),
            );
        }
        self.assemble(acc, node_ptr)
    }
}

fn preserve_map() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    m
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::structural_check::check_structural;
    use super::super::validate::CompiledSchema;
    use super::*;
    use serde_json::json;

    /// Converts and checks that a usable result is a structural schema.
    pub(super) fn conv(input: Value) -> Conversion {
        let c = to_structural(&input);
        if c.is_ok() {
            assert_eq!(
                check_structural(&c.schema),
                Vec::<Issue>::new(),
                "output is not structural: {:#}",
                c.schema
            );
        }
        c
    }

    pub(super) fn spec(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    pub(super) fn prop(c: &Conversion, name: &str) -> Value {
        c.schema["properties"][name].clone()
    }

    pub(super) fn has_warning(c: &Conversion, pointer: &str, needle: &str) -> bool {
        c.warnings
            .iter()
            .any(|w| w.pointer == pointer && w.message.contains(needle))
    }

    /// An object whose properties only its `oneOf` branches declare gets
    /// them lifted, and is then not an object "without properties" kept
    /// unchecked: that warning went out with the lifting.
    #[test]
    fn properties_lifted_from_branches_leave_no_warning_of_none() {
        let c = conv(
            json!({"type": "object", "properties": {"auth": {"type": "object", "oneOf": [
                {"properties": {"type": {"const": "password"}, "password": {"type": "string"}}, "required": ["password"]},
                {"properties": {"type": {"const": "token"}, "token": {"type": "string"}}, "required": ["token"]}
            ]}}}),
        );
        assert!(c.is_ok(), "{:?}", c.errors);
        let auth = &c.schema["properties"]["auth"];
        assert!(auth["properties"]["password"].is_object(), "{auth}");
        assert!(
            auth.get("x-kubernetes-preserve-unknown-fields").is_none(),
            "{auth}"
        );
        let warnings: Vec<String> = c.warnings.iter().map(ToString::to_string).collect();
        assert!(
            !warnings.iter().any(|w| w.contains("without properties")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("/properties/auth/oneOf: properties")),
            "{warnings:?}"
        );
    }

    #[test]
    fn keeps_plain_structure_and_property_order() {
        let c = conv(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$id": "https://example.com/values.schema.json",
            "$comment": "internal",
            "title": "Values",
            "type": "object",
            "properties": {
                "zeta": {"type": "string", "description": "last letter", "examples": ["z"], "example": "z"},
                "alpha": {"type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 1},
                "mid": {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3},
                "obj": {"type": "object", "properties": {"b": {"type": "number"}, "a": {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^x"}}, "required": ["a"]}
            }
        }));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(
            c.schema,
            json!({"type": "object", "title": "Values", "properties": {
                "zeta": {"type": "string", "description": "last letter", "example": "z"},
                "alpha": {"type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 1},
                "mid": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "boolean"}},
                "obj": {"type": "object", "properties": {"b": {"type": "number"}, "a": {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^x"}}, "required": ["a"]}
            }})
        );
        let text = serde_json::to_string(&c.schema).expect("serializes");
        let order: Vec<usize> = ["\"zeta\"", "\"alpha\"", "\"mid\"", "\"obj\""]
            .iter()
            .map(|k| text.find(k).expect("key present"))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert!(text.find("\"b\"") < text.find("\"a\""));
    }

    #[test]
    fn an_unknown_type_is_refused_as_helm_refuses_it() {
        // Found by fuzzing (an unknown type made the root typeless, and the
        // object type it then got did not fit its default); Helm refuses
        // such a schema, and so does the conversion now.
        let c = to_structural(&json!({"type": "obeger", "default": 2, "minimum": 1}));
        assert_eq!(
            c.errors[0],
            Issue::new(
                "/type",
                "unknown type \"obeger\": JSON Schema's types are array, boolean, integer, null, number, \
                 object, string (Helm refuses this schema)"
            )
        );
        let c = to_structural(&json!({"type": "object", "properties": {
            "a": {"type": ["strin", "null"]}, "b": {"type": 5}, "c": {"type": []}}}));
        let errors: Vec<&str> = c.errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(
            errors,
            [
                "/properties/a/type",
                "/properties/b/type",
                "/properties/c/type"
            ],
            "{:?}",
            c.errors
        );
        let kept = to_structural(&json!({"default": {"a": 1}}));
        assert_eq!(kept.schema["default"], json!({"a": 1}));
    }

    #[test]
    fn lengths_beyond_int64_are_clamped_to_it() {
        // Found by fuzzing: 3e83 (and u64::MAX) passed through, and
        // Kubernetes keeps these keywords as int64.
        let c = to_structural(&json!({"type": "object", "properties": {
            "x": {"type": "string", "maxLength": 3e83, "minLength": 18446744073709551615u64},
            "y": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        }}));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(c.schema["properties"]["x"]["maxLength"], json!(i64::MAX));
        assert_eq!(c.schema["properties"]["x"]["minLength"], json!(i64::MAX));
        assert_eq!(c.schema["properties"]["y"]["maxItems"], json!(5));
        assert!(crate::kinds::schema::check_structural(&c.schema).is_empty());
    }

    #[test]
    fn root_must_be_an_object() {
        for bad in [json!([1]), json!("x"), json!(null)] {
            let c = to_structural(&bad);
            assert!(!c.is_ok());
            assert_eq!(c.errors[0].pointer, "");
        }
        let c = to_structural(&json!({"type": "string"}));
        assert_eq!(
            c.errors[0].message,
            "the schema root must be of type object, not string"
        );
        let c = conv(json!({"properties": {"a": {"type": "string"}}}));
        assert!(c.is_ok());
        assert_eq!(c.schema["type"], "object");
        let c = conv(json!({}));
        assert_eq!(
            c.schema,
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        );
        let c = conv(json!({"type": ["object", "null"], "properties": {}}));
        assert!(has_warning(&c, "", "nullable is not allowed at the root"));
        assert!(c.schema.get("nullable").is_none());
    }

    /// Strings that YAML 1.1 would read as booleans, null or numbers.
    const TRICKY: [&str; 9] = ["no", "yes", "on", "off", "~", "null", "1.0", "y", "NO"];

    #[test]
    fn tricky_strings_survive_conversion_and_yaml_round_trips() {
        let values: Vec<Value> = TRICKY.iter().map(|s| json!(s)).collect();
        let mut props = Map::new();
        for (i, s) in TRICKY.iter().enumerate() {
            props.insert(
                format!("p{i}"),
                json!({"type": "string", "enum": values, "default": s}),
            );
        }
        props.insert(
            "viaConst".into(),
            json!({"oneOf": [{"const": "on"}, {"const": "off"}], "default": "off"}),
        );
        let c = conv(json!({"type": "object", "properties": props}));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "viaConst"),
            json!({"type": "string", "enum": ["on", "off"], "default": "off"})
        );
        let yaml = serde_saphyr::to_string(&c.schema).expect("serializes");
        let back: Value = serde_saphyr::from_str(&yaml).expect("parses");
        assert_eq!(back, c.schema, "{yaml}");
        for (i, s) in TRICKY.iter().enumerate() {
            let p = &back["properties"][format!("p{i}")];
            assert_eq!(p["default"], json!(s));
            assert_eq!(p["enum"], Value::Array(values.clone()));
            assert!(
                p["enum"]
                    .as_array()
                    .is_some_and(|a| a.iter().all(Value::is_string))
            );
        }
        // The round-tripped schema still accepts exactly those strings.
        let v = CompiledSchema::new(&back).expect("compiles");
        let mut obj = json!({});
        let errs = v.default_and_validate(&mut obj, "spec");
        assert!(errs.errors.is_empty(), "{:?}", errs.errors);
        assert_eq!(obj["p0"], "no");
        assert_eq!(obj["p4"], "~");
        assert_eq!(obj["viaConst"], "off");
        assert!(!v.validate(&json!({"p0": false}), "spec").is_empty());
    }

    #[test]
    fn snapshot_bitnami_like_schema() {
        let input: Value =
            serde_json::from_str(include_str!("../testdata/bitnami-like.schema.json"))
                .expect("fixture is JSON");
        let expected: Value =
            serde_json::from_str(include_str!("../testdata/bitnami-like.structural.json"))
                .expect("expected output is JSON");
        let c = conv(input);
        assert!(c.is_ok(), "{:#?}", c.errors);
        assert_eq!(
            c.schema,
            expected,
            "actual:\n{}",
            serde_json::to_string_pretty(&c.schema).unwrap_or_default()
        );
        let warnings: Vec<String> = c.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "/properties/auth/properties/existingSecret/readOnly: readOnly is not supported by Kubernetes; dropped",
                "/$defs/resources/additionalProperties: additionalProperties: false dropped: structural schemas prune unknown fields (reported as warnings) instead of rejecting them",
                "/properties/service/properties/annotations/patternProperties/^[a-z0-9.~1-]+$: patternProperties became additionalProperties: the key pattern \"^[a-z0-9./-]+$\" is not enforced",
                "/properties/extraEnv/uniqueItems: uniqueItems: true is forbidden in Kubernetes; converted to x-kubernetes-list-type: set (duplicates are rejected as FieldValueDuplicate)",
                "/properties/metrics: type object without properties: its keys and values are kept but not checked (x-kubernetes-preserve-unknown-fields)",
            ]
        );
        // The output, key order included, is deterministic.
        let again: Value =
            serde_json::from_str(include_str!("../testdata/bitnami-like.schema.json"))
                .expect("fixture is JSON");
        assert_eq!(
            serde_json::to_string(&to_structural(&again).schema).ok(),
            serde_json::to_string(&c.schema).ok()
        );
    }

    #[test]
    fn conversion_is_idempotent_on_structural_schemas() {
        let input: Value =
            serde_json::from_str(include_str!("../testdata/bitnami-like.schema.json"))
                .expect("fixture is JSON");
        let once = conv(input).schema;
        let twice = conv(once.clone());
        assert_eq!(twice.schema, once);
        assert!(twice.warnings.is_empty(), "{:?}", twice.warnings);
    }

    #[test]
    fn expansion_is_bounded() {
        // Each level references the previous one twice: 2^30 nodes.
        let mut defs = Map::new();
        defs.insert("l0".into(), json!({"type": "string"}));
        for i in 1..30 {
            defs.insert(
                format!("l{i}"),
                json!({"type": "object", "properties": {
                    "a": {"$ref": format!("#/$defs/l{}", i - 1)},
                    "b": {"$ref": format!("#/$defs/l{}", i - 1)}
                }}),
            );
        }
        let c = to_structural(
            &json!({"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/l29"}}}),
        );
        assert!(c.errors.iter().any(|e| e.message.contains("more than")));
    }
}
