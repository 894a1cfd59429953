//! The collect pass: every keyword of the schema objects that make up one
//! node, read into one accumulator ([`Acc`]): bounds tightened, `required`
//! and properties unioned, conflicts and unsupported keywords warned about,
//! junctors that need the finished node deferred.

use std::collections::BTreeSet;

use serde_json::{Map, Number, Value};

use super::super::issue::push_pointer;
use super::{Converter, Part};

/// A lower or upper numeric bound: value and exclusiveness.
pub(super) type Bound = (Number, bool);

/// A junctor that could not be folded into the structural part.
pub(super) enum Deferred<'a> {
    Union {
        one_of: bool,
        branches: Vec<(&'a Value, String)>,
        ptr: String,
    },
    Not(&'a Value, String),
    IfThenElse {
        cond: &'a Value,
        then: Option<&'a Value>,
        otherwise: Option<&'a Value>,
        ptr: String,
    },
}

/// Everything collected from a node's parts.
#[derive(Default)]
pub(super) struct Acc<'a> {
    pub(super) types: Vec<(BTreeSet<String>, String)>,
    pub(super) nullable: bool,
    pub(super) title: Option<Value>,
    pub(super) description: Option<Value>,
    /// The `source` of Cozystack's `x-cozystack-options` (a dashboard
    /// dropdown filled at run time from the cluster's `Option` objects).
    pub(super) option_source: Option<String>,
    pub(super) default: Option<(Value, String)>,
    pub(super) example: Option<Value>,
    pub(super) enums: Vec<(Vec<Value>, String)>,
    pub(super) format: Option<(String, String)>,
    pub(super) patterns: Vec<(String, String)>,
    pub(super) lower: Option<Bound>,
    pub(super) upper: Option<Bound>,
    pub(super) multiple_of: Option<(Number, String)>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) min_properties: Option<u64>,
    pub(super) max_properties: Option<u64>,
    pub(super) required: Vec<String>,
    pub(super) props: Vec<(String, Vec<(&'a Value, String)>)>,
    pub(super) additional: Vec<(&'a Value, String)>,
    pub(super) pattern_props: Vec<(String, &'a Value, String)>,
    pub(super) items: Vec<(&'a Value, String)>,
    pub(super) tuples: Vec<(&'a [Value], String)>,
    pub(super) additional_items: Vec<(&'a Value, String)>,
    pub(super) unique: Option<String>,
    pub(super) dep_required: Vec<(String, Vec<String>, String)>,
    pub(super) deny_additional: Option<String>,
    pub(super) preserve: bool,
    pub(super) int_or_string: bool,
    pub(super) embedded: bool,
    pub(super) extensions: Map<String, Value>,
    pub(super) deferred: Vec<Deferred<'a>>,
    pub(super) union_enums: Vec<(Vec<Value>, String)>,
    pub(super) union_types: Vec<(BTreeSet<String>, String)>,
}

impl Acc<'_> {
    /// Tightens the numeric bounds with another lower and upper bound.
    pub(super) fn tighten_bounds(&mut self, lower: Option<Bound>, upper: Option<Bound>) {
        if let Some(b) = lower {
            self.lower = Some(stricter(self.lower.take(), b, true));
        }
        if let Some(b) = upper {
            self.upper = Some(stricter(self.upper.take(), b, false));
        }
    }
}

impl<'a> Converter<'a> {
    pub(super) fn collect(
        &mut self,
        part: &Part<'a>,
        acc: &mut Acc<'a>,
        unknown: &mut Vec<String>,
    ) {
        let m = part.map;
        let kw = |k: &str| push_pointer(&part.ptr, k);
        // Numeric bounds need sibling keywords (draft-4 booleans).
        let (lower, upper) = bounds_of(m);
        acc.tighten_bounds(lower, upper);
        for (k, v) in m {
            match k.as_str() {
                "$schema" | "$id" | "id" | "$comment" | "$anchor" | "$dynamicAnchor"
                | "$recursiveAnchor" | "$vocabulary" | "$defs" | "definitions" | "examples"
                | "deprecated" | "$ref" | "$recursiveRef" | "$dynamicRef" | "allOf" | "anyOf"
                | "oneOf" | "then" | "else" | "minContains" | "maxContains" => {}
                // Read by `bounds_of` above; a bound of another type was
                // dropped there without a word.
                "minimum" | "maximum" => {
                    if !v.is_number() {
                        self.warn(&kw(k), format!("{k} must be a number; dropped"));
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    if !v.is_number() && !v.is_boolean() {
                        self.warn(
                            &kw(k),
                            format!("{k} must be a number (draft 4: a boolean); dropped"),
                        );
                    }
                }
                "readOnly" | "writeOnly" => {
                    if v == &Value::Bool(true) {
                        self.warn(&kw(k), format!("{k} is not supported by Kubernetes; dropped"));
                    }
                }
                "title" | "description" => {
                    if !v.is_string() {
                        self.warn(&kw(k), format!("{k} must be a string; dropped"));
                    } else {
                        let slot = if k == "title" {
                            &mut acc.title
                        } else {
                            &mut acc.description
                        };
                        slot.get_or_insert_with(|| v.clone());
                    }
                }
                "default" => match &acc.default {
                    None => acc.default = Some((v.clone(), kw(k))),
                    Some((d, _)) if d == v => {}
                    Some(_) => self.warn(&kw(k), "conflicting default ignored; the first one is kept"),
                },
                "example" => {
                    acc.example.get_or_insert_with(|| v.clone());
                }
                // Helm checks a chart's schema against JSON Schema's own
                // before it checks values, and refuses one that fails.
                "type" => match type_set(v) {
                    Some(set) => match set.iter().find(|t| !JSON_TYPES.contains(&t.as_str())) {
                        Some(unknown) => self.error(
                            &kw(k),
                            format!(
                                "unknown type {unknown:?}: JSON Schema's types are {} (Helm refuses this schema)",
                                JSON_TYPES.join(", ")
                            ),
                        ),
                        None => acc.types.push((set, kw(k))),
                    },
                    None => self.error(
                        &kw(k),
                        "type must be a type name or a non-empty list of them (Helm refuses this schema)",
                    ),
                },
                "nullable" => {
                    if v == &Value::Bool(true) {
                        acc.nullable = true;
                    }
                }
                "enum" => match v {
                    Value::Array(a) => acc.enums.push((a.clone(), kw(k))),
                    _ => self.warn(&kw(k), "enum must be an array; dropped"),
                },
                "const" => acc.enums.push((vec![v.clone()], kw(k))),
                "format" => match v.as_str() {
                    Some(f) => match &acc.format {
                        None => acc.format = Some((f.to_string(), kw(k))),
                        Some((g, _)) if g == f => {}
                        Some((g, _)) => {
                            let msg = format!("conflicting format {f:?} dropped (keeping {g:?})");
                            self.warn(&kw(k), msg);
                        }
                    },
                    None => self.warn(&kw(k), "format must be a string; dropped"),
                },
                "pattern" => match v.as_str() {
                    Some(p) => acc.patterns.push((p.to_string(), kw(k))),
                    None => self.warn(&kw(k), "pattern must be a string; dropped"),
                },
                "multipleOf" => match v {
                    Value::Number(n) if n.as_f64().is_some_and(|f| f > 0.0) => match &acc.multiple_of {
                        None => acc.multiple_of = Some((n.clone(), kw(k))),
                        Some((prev, _)) => {
                            if let (Some(a), Some(b)) = (prev.as_u64(), n.as_u64()) {
                                acc.multiple_of = Some((Number::from(lcm(a, b)), kw(k)));
                            } else if prev != n {
                                self.warn(&kw(k), "a second multipleOf cannot be combined; dropped");
                            }
                        }
                    },
                    _ => self.warn(&kw(k), "multipleOf must be a number greater than 0; dropped"),
                },
                "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
                | "maxProperties" => match count(v) {
                    Some(c) => {
                        let (slot, is_min) = match k.as_str() {
                            "minLength" => (&mut acc.min_length, true),
                            "maxLength" => (&mut acc.max_length, false),
                            "minItems" => (&mut acc.min_items, true),
                            "maxItems" => (&mut acc.max_items, false),
                            "minProperties" => (&mut acc.min_properties, true),
                            _ => (&mut acc.max_properties, false),
                        };
                        *slot = Some(match *slot {
                            None => c,
                            Some(p) if is_min => p.max(c),
                            Some(p) => p.min(c),
                        });
                    }
                    None => self.warn(&kw(k), format!("{k} must be a non-negative integer; dropped")),
                },
                "required" => match v {
                    Value::Array(a) if a.iter().all(Value::is_string) => {
                        for r in a.iter().filter_map(Value::as_str) {
                            if !acc.required.iter().any(|x| x == r) {
                                acc.required.push(r.to_string());
                            }
                        }
                    }
                    Value::Bool(_) => self.warn(
                        &kw(k),
                        "draft-3 boolean `required` is not supported; list the field in its parent's required instead",
                    ),
                    _ => self.warn(&kw(k), "required must be an array of strings; dropped"),
                },
                "properties" => match v {
                    Value::Object(pm) => {
                        let pp = kw(k);
                        for (name, sub) in pm {
                            let src = (sub, push_pointer(&pp, name));
                            match acc.props.iter_mut().find(|(n, _)| n == name) {
                                Some((_, list)) => list.push(src),
                                None => acc.props.push((name.clone(), vec![src])),
                            }
                        }
                    }
                    _ => self.warn(&kw(k), "properties must be an object; dropped"),
                },
                "additionalProperties" => acc.additional.push((v, kw(k))),
                "unevaluatedProperties" => match v {
                    Value::Bool(false) => {
                        acc.deny_additional.get_or_insert(kw(k));
                    }
                    Value::Bool(true) => {}
                    _ => self.warn(
                        &kw(k),
                        "unevaluatedProperties is not supported by Kubernetes; dropped (unknown fields are pruned)",
                    ),
                },
                "patternProperties" => match v {
                    Value::Object(pm) => {
                        let pp = kw(k);
                        for (pat, sub) in pm {
                            acc.pattern_props
                                .push((pat.clone(), sub, push_pointer(&pp, pat)));
                        }
                    }
                    _ => self.warn(&kw(k), "patternProperties must be an object; dropped"),
                },
                "items" => match v {
                    Value::Array(a) => acc.tuples.push((a.as_slice(), kw(k))),
                    _ => acc.items.push((v, kw(k))),
                },
                "prefixItems" => match v {
                    Value::Array(a) => acc.tuples.push((a.as_slice(), kw(k))),
                    _ => self.warn(&kw(k), "prefixItems must be an array; dropped"),
                },
                "additionalItems" => acc.additional_items.push((v, kw(k))),
                "uniqueItems" => {
                    if v == &Value::Bool(true) {
                        acc.unique.get_or_insert(kw(k));
                    }
                }
                "contains" => self.warn(
                    &kw(k),
                    "contains (and minContains/maxContains) cannot be expressed in a structural schema; dropped",
                ),
                "unevaluatedItems" => self.warn(
                    &kw(k),
                    "unevaluatedItems is not supported by Kubernetes; dropped",
                ),
                "propertyNames" => self.warn(
                    &kw(k),
                    "propertyNames cannot be expressed in a structural schema; key names are not validated",
                ),
                "dependencies" | "dependentRequired" => match v {
                    Value::Object(deps) => {
                        let dp = kw(k);
                        for (name, dep) in deps {
                            match dep {
                                Value::Array(a) if a.iter().all(Value::is_string) => {
                                    let list = a.iter().filter_map(Value::as_str).map(str::to_string).collect();
                                    acc.dep_required.push((name.clone(), list, push_pointer(&dp, name)));
                                }
                                _ => self.warn(
                                    &push_pointer(&dp, name),
                                    "schema dependencies cannot be expressed in a structural schema; dropped",
                                ),
                            }
                        }
                    }
                    _ => self.warn(&kw(k), format!("{k} must be an object; dropped")),
                },
                "dependentSchemas" => self.warn(
                    &kw(k),
                    "dependentSchemas cannot be expressed in a structural schema; dropped",
                ),
                "if" => acc.deferred.push(Deferred::IfThenElse {
                    cond: v,
                    then: m.get("then"),
                    otherwise: m.get("else"),
                    ptr: part.ptr.clone(),
                }),
                "not" => acc.deferred.push(Deferred::Not(v, kw(k))),
                "x-kubernetes-preserve-unknown-fields" => {
                    if v == &Value::Bool(true) {
                        acc.preserve = true;
                    }
                }
                "x-kubernetes-int-or-string" => {
                    if v == &Value::Bool(true) {
                        acc.int_or_string = true;
                    }
                }
                "x-kubernetes-embedded-resource" => {
                    if v == &Value::Bool(true) {
                        acc.embedded = true;
                    }
                }
                // Cozystack's dashboard hint: `{source: storageclass}` names
                // a list of choices the cluster computes at run time. Not a
                // validation (the choices change), so it becomes a line of
                // documentation, quietly.
                "x-cozystack-options" => {
                    if let Some(source) = v.get("source").and_then(Value::as_str) {
                        acc.option_source.get_or_insert_with(|| source.to_string());
                    }
                }
                "x-kubernetes-list-type"
                | "x-kubernetes-list-map-keys"
                | "x-kubernetes-map-type"
                | "x-kubernetes-validations" => {
                    acc.extensions.entry(k.clone()).or_insert_with(|| v.clone());
                }
                other => unknown.push(format!("{other:?}")),
            }
        }
    }
}

/// JSON Schema's type names.
const JSON_TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

pub(super) fn type_set(v: &Value) -> Option<BTreeSet<String>> {
    match v {
        Value::String(s) => Some(BTreeSet::from([s.clone()])),
        Value::Array(a) if !a.is_empty() => {
            a.iter().map(|t| t.as_str().map(str::to_string)).collect()
        }
        _ => None,
    }
}

/// A length or count keyword's value: a non-negative integer, at most
/// `i64::MAX` (Kubernetes keeps these as int64). A larger one means the same
/// as `i64::MAX` (no string, array or object is that long), so it is clamped.
fn count(v: &Value) -> Option<u64> {
    let count = match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        _ => None,
    };
    count.map(|c| c.min(i64::MAX.unsigned_abs()))
}

fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    if a == 0 || b == 0 {
        return a.max(b);
    }
    a / gcd(a, b) * b
}

/// The lower and upper bounds a schema object sets, in OpenAPI v3.0 form:
/// draft-4 `exclusiveMinimum: true` qualifies `minimum`; draft-6+
/// `exclusiveMinimum: 5` is its own (exclusive) bound.
pub(super) fn bounds_of(m: &Map<String, Value>) -> (Option<Bound>, Option<Bound>) {
    let one = |value_key: &str, excl_key: &str, lower: bool| -> Option<Bound> {
        let mut best: Option<Bound> = None;
        let excl_flag = m.get(excl_key) == Some(&Value::Bool(true));
        if let Some(Value::Number(n)) = m.get(value_key) {
            best = Some((n.clone(), excl_flag));
        }
        if let Some(Value::Number(n)) = m.get(excl_key) {
            best = Some(stricter(best, (n.clone(), true), lower));
        }
        best
    };
    (
        one("minimum", "exclusiveMinimum", true),
        one("maximum", "exclusiveMaximum", false),
    )
}

/// Writes a lower (`minimum`) or upper (`maximum`) bound in OpenAPI v3.0
/// form: exclusiveness as `exclusiveMinimum`/`exclusiveMaximum: true`.
pub(super) fn insert_bound(out: &mut Map<String, Value>, (n, excl): Bound, lower: bool) {
    let (key, excl_key) = if lower {
        ("minimum", "exclusiveMinimum")
    } else {
        ("maximum", "exclusiveMaximum")
    };
    out.insert(key.into(), Value::Number(n));
    if excl {
        out.insert(excl_key.into(), true.into());
    }
}

fn stricter(cur: Option<Bound>, new: Bound, lower: bool) -> Bound {
    let Some(cur) = cur else { return new };
    let (a, b) = (cur.0.as_f64().unwrap_or(0.0), new.0.as_f64().unwrap_or(0.0));
    if a == b {
        return (cur.0, cur.1 || new.1);
    }
    let new_wins = if lower { b > a } else { b < a };
    if new_wins { new } else { cur }
}

#[cfg(test)]
mod tests {
    use super::super::super::validate::CompiledSchema;
    use super::super::tests::{conv, has_warning, prop, spec};
    use serde_json::json;

    #[test]
    fn exclusive_bounds_become_openapi_booleans() {
        let c = conv(spec(json!({
            "d6": {"type": "number", "exclusiveMinimum": 5, "exclusiveMaximum": 10},
            "d4": {"type": "number", "minimum": 5, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": false},
            "both": {"type": "number", "minimum": 7, "exclusiveMinimum": 5, "maximum": 9, "exclusiveMaximum": 9},
            "int": {"type": "integer", "minimum": 0.5, "maximum": 9.5, "multipleOf": 0.5}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "d6"),
            json!({"type": "number", "minimum": 5, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true})
        );
        assert_eq!(
            prop(&c, "d4"),
            json!({"type": "number", "minimum": 5, "exclusiveMinimum": true, "maximum": 10})
        );
        assert_eq!(
            prop(&c, "both"),
            json!({"type": "number", "minimum": 7, "maximum": 9, "exclusiveMaximum": true})
        );
        assert_eq!(
            prop(&c, "int"),
            json!({"type": "integer", "minimum": 1, "maximum": 9})
        );
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        let errs = v.validate(&json!({"d6": 5}), "spec");
        assert_eq!(
            errs[0].to_string(),
            "spec.d6: Invalid value: 5: spec.d6 in body should be greater than 5"
        );
    }

    /// A bound that is not a number is dropped with a warning (it went
    /// without a word; Helm refuses such a schema).
    #[test]
    fn bounds_of_another_type_are_warned_of() {
        let c = conv(spec(json!({
            "replicas": {"type": "integer", "minimum": "one", "maximum": 9},
            "ratio": {"type": "number", "exclusiveMaximum": "1", "exclusiveMinimum": true, "minimum": 0}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "replicas"),
            json!({"type": "integer", "maximum": 9})
        );
        assert!(has_warning(
            &c,
            "/properties/replicas/minimum",
            "minimum must be a number; dropped"
        ));
        assert!(has_warning(
            &c,
            "/properties/ratio/exclusiveMaximum",
            "exclusiveMaximum must be a number (draft 4: a boolean); dropped"
        ));
        assert_eq!(
            prop(&c, "ratio"),
            json!({"type": "number", "minimum": 0, "exclusiveMinimum": true})
        );
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    }

    /// Cozystack's `x-cozystack-options` names a dashboard dropdown's source:
    /// kept as documentation, without a warning.
    #[test]
    fn cozystack_options_become_documentation_quietly() {
        let c = conv(spec(json!({
            "storageClass": {"type": "string", "description": "StorageClass used to store the data.",
                              "x-cozystack-options": {"source": "storageclass"}},
            "gpu": {"type": "string", "x-cozystack-options": {"source": "gpu"}},
            "odd": {"type": "string", "x-cozystack-options": "whatever"}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(
            prop(&c, "storageClass"),
            json!({"type": "string", "description": "StorageClass used to store the data. Choices: the Cozystack dashboard's \"storageclass\" options."})
        );
        assert_eq!(
            prop(&c, "gpu"),
            json!({"type": "string", "description": "Choices: the Cozystack dashboard's \"gpu\" options."})
        );
        assert_eq!(prop(&c, "odd"), json!({"type": "string"}));
    }

    #[test]
    fn dropped_keywords_warn_and_annotations_go_silently() {
        let c = conv(spec(json!({
            "id": {"type": "string", "readOnly": true, "$comment": "x", "examples": ["a"], "deprecated": true},
            "keys": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
            "dep": {"type": "object", "properties": {"a": {"type": "string"}}, "dependentSchemas": {"a": {"required": ["b"]}}},
            "ui": {"type": "string", "x-ui-widget": "textarea", "form": true},
            "fmt": {"type": "string", "format": "uri-reference"},
            "f": false
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(prop(&c, "id"), json!({"type": "string"}));
        assert!(has_warning(
            &c,
            "/properties/id/readOnly",
            "readOnly is not supported"
        ));
        assert!(has_warning(
            &c,
            "/properties/keys/propertyNames",
            "key names are not validated"
        ));
        assert!(has_warning(
            &c,
            "/properties/dep/dependentSchemas",
            "dropped"
        ));
        assert!(has_warning(
            &c,
            "/properties/ui",
            "\"x-ui-widget\", \"form\""
        ));
        assert!(has_warning(
            &c,
            "/properties/fmt/format",
            "not validated by Kubernetes"
        ));
        assert!(has_warning(&c, "/properties/f", "\"f\" is forbidden"));
        assert!(c.schema["properties"].get("f").is_none());
        assert!(has_warning(&c, "/properties/keys", "without properties"));
        assert_eq!(c.warnings.len(), 7, "{:#?}", c.warnings);
    }
}
