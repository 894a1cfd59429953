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
//!   declared fields `type: object` + preserve-unknown-fields;
//! * `type: [x, "null"]` becomes `nullable: true`; `[integer, string]`
//!   becomes `x-kubernetes-int-or-string: true`; other unions become a
//!   typeless preserve-unknown-fields node (warning);
//! * `$ref` (`#/$defs/..`, `#/definitions/..`, any in-document pointer,
//!   `$anchor`s) is inlined; `allOf` is merged into the node (properties and
//!   `required` unioned, bounds tightened, conflicts warned);
//! * `anyOf`/`oneOf` of constants collapse into one `enum`; a `null` branch
//!   becomes `nullable`; branches that are only types become a type union;
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

use std::collections::BTreeSet;

use serde_json::{Map, Number, Value};

use super::validate::check_default;
use super::{Issue, formats, json_type_of, pattern, push_pointer};

/// The result of [`to_structural`].
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
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
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Converts a JSON Schema (a chart's `values.schema.json`) into a Kubernetes
/// structural schema for a kind's `spec`; see the module documentation.
pub fn to_structural(schema: &Value) -> Conversion {
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

const REF_KEYWORDS: &[&str] = &["$ref", "$recursiveRef", "$dynamicRef"];

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
    IntOrString,
    /// No type: any value (`x-kubernetes-preserve-unknown-fields`).
    Any,
}

impl Kind {
    fn from_name(t: &str) -> Option<Kind> {
        Some(match t {
            "object" => Kind::Object,
            "array" => Kind::Array,
            "string" => Kind::String,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "boolean" => Kind::Boolean,
            _ => return None,
        })
    }

    fn name(self) -> Option<&'static str> {
        Some(match self {
            Kind::Object => "object",
            Kind::Array => "array",
            Kind::String => "string",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Boolean => "boolean",
            Kind::IntOrString | Kind::Any => return None,
        })
    }

    fn has_strings(self) -> bool {
        matches!(self, Kind::String | Kind::IntOrString | Kind::Any)
    }
    fn has_numbers(self) -> bool {
        matches!(
            self,
            Kind::Integer | Kind::Number | Kind::IntOrString | Kind::Any
        )
    }
    fn has_arrays(self) -> bool {
        matches!(self, Kind::Array | Kind::Any)
    }
    fn has_objects(self) -> bool {
        matches!(self, Kind::Object | Kind::Any)
    }
}

/// A lower or upper numeric bound: value and exclusiveness.
type Bound = (Number, bool);

/// A junctor that could not be folded into the structural part.
enum Deferred<'a> {
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

/// How a branch of `anyOf`/`oneOf` looks.
enum Branch {
    Null,
    Never,
    Always,
    Enum(Vec<Value>),
    Types(Vec<String>),
    Other,
}

/// Everything collected from a node's parts.
#[derive(Default)]
struct Acc<'a> {
    types: Vec<(BTreeSet<String>, String)>,
    nullable: bool,
    title: Option<Value>,
    description: Option<Value>,
    default: Option<(Value, String)>,
    example: Option<Value>,
    enums: Vec<(Vec<Value>, String)>,
    format: Option<(String, String)>,
    patterns: Vec<(String, String)>,
    lower: Option<Bound>,
    upper: Option<Bound>,
    multiple_of: Option<(Number, String)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    required: Vec<String>,
    props: Vec<(String, Vec<(&'a Value, String)>)>,
    additional: Vec<(&'a Value, String)>,
    pattern_props: Vec<(String, &'a Value, String)>,
    items: Vec<(&'a Value, String)>,
    tuples: Vec<(&'a [Value], String)>,
    additional_items: Vec<(&'a Value, String)>,
    unique: Option<String>,
    dep_required: Vec<(String, Vec<String>, String)>,
    deny_additional: Option<String>,
    preserve: bool,
    int_or_string: bool,
    embedded: bool,
    extensions: Map<String, Value>,
    deferred: Vec<Deferred<'a>>,
    union_enums: Vec<(Vec<Value>, String)>,
    union_types: Vec<(BTreeSet<String>, String)>,
}

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
            }
        }
        if out.remove("nullable").is_some() {
            self.warn("", "nullable is not allowed at the root; dropped");
        }
        Value::Object(out)
    }

    // -- $ref resolution and expansion ------------------------------------

    fn resolve(&self, r: &str) -> Result<(String, &'a Value), String> {
        let mut reference = r;
        if let Some(id) = self.root_id
            && let Some(rest) = r.strip_prefix(id)
            && (rest.is_empty() || rest.starts_with('#'))
        {
            reference = rest;
        }
        if reference.is_empty() {
            return Ok((String::new(), self.root));
        }
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(format!(
                "external $ref {r:?} is not supported: inline the referenced schema"
            ));
        };
        let fragment = percent_decode(fragment);
        if fragment.is_empty() {
            return Ok((String::new(), self.root));
        }
        if fragment.starts_with('/') {
            return match self.root.pointer(&fragment) {
                Some(v) => Ok((fragment, v)),
                None => Err(format!("unresolvable $ref {r:?}: nothing at {fragment}")),
            };
        }
        find_anchor(self.root, &fragment, String::new())
            .ok_or_else(|| format!("unresolvable $ref {r:?}: no $anchor {fragment:?}"))
    }

    /// Adds the schema objects making up `v` (following `$ref` and `allOf`)
    /// to `ex`; pushes expanded `$ref` targets on the ref stack.
    fn expand(&mut self, v: &'a Value, ptr: String, ex: &mut Expanded<'a>, node_stack: usize) {
        let m = match v {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                ex.never.get_or_insert(ptr);
                return;
            }
            Value::Object(m) => m,
            other => {
                self.error(
                    &ptr,
                    format!(
                        "a schema must be an object or a boolean, not {}",
                        json_type_of(other)
                    ),
                );
                return;
            }
        };
        ex.parts.push(Part {
            map: m,
            ptr: ptr.clone(),
        });
        for key in REF_KEYWORDS {
            let Some(r) = m.get(*key) else { continue };
            let kp = push_pointer(&ptr, key);
            let Some(r) = r.as_str() else {
                self.error(&kp, "must be a string");
                continue;
            };
            match self.resolve(r) {
                Ok((target, tv)) => {
                    if let Some(pos) = self.ref_stack.iter().position(|(t, _)| *t == target) {
                        if pos >= node_stack {
                            // Same target twice within one node: no-op.
                            continue;
                        }
                        let mut chain: Vec<String> = self.ref_stack[pos..]
                            .iter()
                            .map(|(t, _)| format!("#{t}"))
                            .collect();
                        chain.push(format!("#{target}"));
                        self.error(
                            &kp,
                            format!(
                                "cyclic $ref: {} (a structural schema must be finite)",
                                chain.join(" -> ")
                            ),
                        );
                        continue;
                    }
                    self.ref_stack.push((target.clone(), kp));
                    self.expand(tv, target, ex, node_stack);
                }
                Err(msg) => self.error(&kp, msg),
            }
        }
        if let Some(all) = m.get("allOf") {
            let ap = push_pointer(&ptr, "allOf");
            match all {
                Value::Array(branches) => {
                    for (i, b) in branches.iter().enumerate() {
                        self.expand(b, push_pointer(&ap, &i.to_string()), ex, node_stack);
                    }
                }
                _ => self.warn(&ap, "allOf must be an array; dropped"),
            }
        }
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

    // -- building one node -------------------------------------------------

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

    fn classify(&self, b: &'a Value) -> Branch {
        let mut b = b;
        // Follow plain `$ref`s a few levels.
        for _ in 0..8 {
            match b {
                Value::Bool(true) => return Branch::Always,
                Value::Bool(false) => return Branch::Never,
                Value::Object(m) => {
                    let significant: Vec<&String> = m
                        .keys()
                        .filter(|k| !ANNOTATIONS.contains(&k.as_str()))
                        .collect();
                    if significant.len() == 1 && significant[0] == "$ref" {
                        match m["$ref"].as_str().map(|r| self.resolve(r)) {
                            Some(Ok((_, t))) => {
                                b = t;
                                continue;
                            }
                            _ => return Branch::Other,
                        }
                    }
                    if significant.is_empty() {
                        return Branch::Always;
                    }
                    let only = |allowed: &[&str]| {
                        significant.iter().all(|k| allowed.contains(&k.as_str()))
                    };
                    let types = match m.get("type") {
                        None => None,
                        Some(t) => match type_set(t) {
                            Some(s) => Some(s),
                            None => return Branch::Other,
                        },
                    };
                    let values: Option<Vec<Value>> = match (m.get("const"), m.get("enum")) {
                        (Some(c), _) => Some(vec![c.clone()]),
                        (None, Some(Value::Array(e))) => Some(e.clone()),
                        _ => None,
                    };
                    if only(&["type", "const", "enum"]) {
                        if let Some(values) = values {
                            if values.iter().all(Value::is_null) && !values.is_empty() {
                                return Branch::Null;
                            }
                            return Branch::Enum(values);
                        }
                        if let Some(t) = types {
                            if t.len() == 1 && t.contains("null") {
                                return Branch::Null;
                            }
                            return Branch::Types(t.into_iter().collect());
                        }
                    }
                    return Branch::Other;
                }
                _ => return Branch::Other,
            }
        }
        Branch::Other
    }

    fn fold_union(
        &mut self,
        one_of: bool,
        branches: &'a [Value],
        jp: String,
        ex: &mut Expanded<'a>,
        acc: &mut Acc<'a>,
        stack_len: usize,
    ) {
        let mut rest: Vec<(&'a Value, String)> = Vec::new();
        let mut kinds = Vec::new();
        let mut saw_null = false;
        let mut always = false;
        for (i, b) in branches.iter().enumerate() {
            let bp = push_pointer(&jp, &i.to_string());
            match self.classify(b) {
                Branch::Null => saw_null = true,
                Branch::Never => {}
                Branch::Always => {
                    always = true;
                    rest.push((b, bp));
                    kinds.push(Branch::Always);
                }
                k => {
                    rest.push((b, bp));
                    kinds.push(k);
                }
            }
        }
        if saw_null {
            acc.nullable = true;
        }
        if always && !one_of {
            // anyOf with an always-true branch constrains nothing.
            return;
        }
        match rest.len() {
            0 => {
                if saw_null {
                    acc.union_types
                        .push((BTreeSet::from(["null".to_string()]), jp));
                }
                return;
            }
            1 => {
                let (b, bp) = rest.remove(0);
                self.expand(b, bp, ex, stack_len);
                return;
            }
            _ => {}
        }
        if kinds.iter().all(|k| matches!(k, Branch::Enum(_))) {
            let mut values: Vec<Value> = Vec::new();
            for k in kinds {
                if let Branch::Enum(vs) = k {
                    for v in vs {
                        if v.is_null() {
                            acc.nullable = true;
                        } else if !values.contains(&v) {
                            values.push(v);
                        }
                    }
                }
            }
            acc.union_enums.push((values, jp));
            return;
        }
        if kinds.iter().all(|k| matches!(k, Branch::Types(_))) {
            let mut set = BTreeSet::new();
            for k in kinds {
                if let Branch::Types(ts) = k {
                    set.extend(ts);
                }
            }
            if saw_null {
                set.insert("null".to_string());
            }
            acc.union_types.push((set, jp));
            return;
        }
        acc.deferred.push(Deferred::Union {
            one_of,
            branches: rest,
            ptr: jp,
        });
    }

    fn collect(&mut self, part: &Part<'a>, acc: &mut Acc<'a>, unknown: &mut Vec<String>) {
        let m = part.map;
        let kw = |k: &str| push_pointer(&part.ptr, k);
        // Numeric bounds need sibling keywords (draft-4 booleans).
        let (lower, upper) = bounds_of(m);
        if let Some(b) = lower {
            acc.lower = Some(stricter(acc.lower.take(), b, true));
        }
        if let Some(b) = upper {
            acc.upper = Some(stricter(acc.upper.take(), b, false));
        }
        for (k, v) in m {
            match k.as_str() {
                "$schema" | "$id" | "id" | "$comment" | "$anchor" | "$dynamicAnchor"
                | "$recursiveAnchor" | "$vocabulary" | "$defs" | "definitions" | "examples"
                | "deprecated" | "$ref" | "$recursiveRef" | "$dynamicRef" | "allOf" | "anyOf"
                | "oneOf" | "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum"
                | "then" | "else" | "minContains" | "maxContains" => {}
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
                "type" => match type_set(v) {
                    Some(set) => acc.types.push((set, kw(k))),
                    None => self.warn(&kw(k), "type must be a type name or a list of them; dropped"),
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

    /// Decides the node's kind from explicit and union types.
    fn decide_kind(&mut self, acc: &mut Acc<'a>, node_ptr: &str) -> Option<Kind> {
        if acc.int_or_string {
            return Some(Kind::IntOrString);
        }
        let mut all: Vec<(BTreeSet<String>, String)> = acc.types.clone();
        all.extend(acc.union_types.iter().cloned());
        let mut allowed: Option<(BTreeSet<String>, String)> = None;
        for (set, p) in all {
            if set.is_empty() {
                continue;
            }
            allowed = Some(match allowed {
                None => (set, p),
                Some((cur, cp)) => {
                    let inter = intersect_types(&cur, &set);
                    if inter.is_empty() {
                        self.warn(
                            &p,
                            format!(
                                "type {} conflicts with {}: no value could match; keeping the first",
                                join_types(&set),
                                join_types(&cur)
                            ),
                        );
                        (cur, cp)
                    } else {
                        (inter, cp)
                    }
                }
            });
        }
        let (mut set, p) = allowed?;
        if set.remove("null") {
            acc.nullable = true;
        }
        if set.contains("number") {
            set.remove("integer");
        }
        let names: Vec<&str> = set.iter().map(String::as_str).collect();
        Some(match names.as_slice() {
            [] => {
                self.warn(
                    &p,
                    "type null alone cannot be expressed; the field accepts any value (nullable, x-kubernetes-preserve-unknown-fields)",
                );
                Kind::Any
            }
            [one] => match Kind::from_name(one) {
                Some(k) => k,
                None => {
                    self.warn(
                        &p,
                        format!("unknown type {one:?}; the field accepts any value"),
                    );
                    Kind::Any
                }
            },
            ["integer", "string"] => Kind::IntOrString,
            _ => {
                self.warn(
                    if p.is_empty() { node_ptr } else { &p },
                    format!(
                        "type union {} cannot be expressed in a structural schema; the field accepts any value (x-kubernetes-preserve-unknown-fields)",
                        join_types(&set)
                    ),
                );
                Kind::Any
            }
        })
    }

    /// Infers a kind for a node without `type`.
    fn infer_kind(&mut self, acc: &Acc<'a>, enum_values: Option<&[Value]>, node_ptr: &str) -> Kind {
        if !acc.props.is_empty()
            || !acc.additional.is_empty()
            || !acc.pattern_props.is_empty()
            || !acc.required.is_empty()
            || acc.min_properties.is_some()
            || acc.max_properties.is_some()
            || !acc.dep_required.is_empty()
            || acc.embedded
        {
            return Kind::Object;
        }
        if !acc.items.is_empty()
            || !acc.tuples.is_empty()
            || acc.min_items.is_some()
            || acc.max_items.is_some()
            || acc.unique.is_some()
        {
            return Kind::Array;
        }
        // A union whose branches all describe objects makes an object.
        let object_like = |b: &Value| -> bool {
            let Some(m) = b.as_object() else { return false };
            let m = match m
                .get("$ref")
                .and_then(Value::as_str)
                .map(|r| self.resolve(r))
            {
                Some(Ok((_, Value::Object(t)))) => t,
                _ => m,
            };
            m.get("type").and_then(Value::as_str) == Some("object")
                || m.contains_key("properties")
                || m.contains_key("required")
                || m.contains_key("additionalProperties")
        };
        if acc.deferred.iter().any(|d| match d {
            Deferred::Union { branches, .. } => branches.iter().all(|(b, _)| object_like(b)),
            _ => false,
        }) {
            return Kind::Object;
        }
        let from_values = |vals: &[&Value]| -> Option<Kind> {
            let mut kinds = BTreeSet::new();
            for v in vals {
                if !v.is_null() {
                    kinds.insert(json_type_of(v));
                }
            }
            if kinds.contains("number") {
                kinds.remove("integer");
            }
            match kinds.iter().next() {
                Some(t) if kinds.len() == 1 => Kind::from_name(t),
                _ => None,
            }
        };
        if let Some(vals) = enum_values {
            // All members share one type: the enum allows nothing else, so
            // the inferred type loses nothing.
            let refs: Vec<&Value> = vals.iter().collect();
            if let Some(k) = from_values(&refs) {
                return k;
            }
        }
        if let Some((d, _)) = &acc.default
            && let Some(k) = from_values(&[d])
        {
            self.warn(
                node_ptr,
                format!(
                    "no type given; inferred {} from the default",
                    k.name().unwrap_or("")
                ),
            );
            return k;
        }
        let keyword_kind =
            if acc.min_length.is_some() || acc.max_length.is_some() || !acc.patterns.is_empty() {
                Some(Kind::String)
            } else if acc.lower.is_some() || acc.upper.is_some() || acc.multiple_of.is_some() {
                Some(Kind::Number)
            } else {
                match acc.format.as_ref().map(|(f, _)| f.as_str()) {
                    Some("int32" | "int64") => Some(Kind::Integer),
                    Some("float" | "double") => Some(Kind::Number),
                    Some(f) if formats::lookup(f).is_some() => Some(Kind::String),
                    _ => None,
                }
            };
        if let Some(k) = keyword_kind {
            self.warn(
                node_ptr,
                format!(
                    "no type given; inferred {} from its validation keywords",
                    k.name().unwrap_or("")
                ),
            );
            return k;
        }
        Kind::Any
    }

    fn assemble(&mut self, mut acc: Acc<'a>, node_ptr: &str) -> Map<String, Value> {
        // enum: intersection of every enum/const, and of union enums.
        let mut enum_values: Option<Vec<Value>> = None;
        let all_enums: Vec<(Vec<Value>, String)> = acc
            .enums
            .iter()
            .chain(acc.union_enums.iter())
            .cloned()
            .collect();
        for (vals, p) in all_enums {
            enum_values = Some(match enum_values {
                None => vals,
                Some(cur) => {
                    let inter: Vec<Value> =
                        cur.iter().filter(|v| vals.contains(v)).cloned().collect();
                    if inter.is_empty() {
                        self.warn(&p, "enum/const conflicts with another: no value could match; keeping the first");
                        cur
                    } else {
                        inter
                    }
                }
            });
        }
        let kind = match self.decide_kind(&mut acc, node_ptr) {
            Some(k) => k,
            None => {
                let k = self.infer_kind(&acc, enum_values.as_deref(), node_ptr);
                if k == Kind::Any && !node_ptr.is_empty() {
                    self.warn(
                        node_ptr,
                        "no type given: the field accepts any value (x-kubernetes-preserve-unknown-fields)",
                    );
                }
                k
            }
        };
        if let Some(vals) = &mut enum_values
            && vals.iter().any(Value::is_null)
        {
            vals.retain(|v| !v.is_null());
            if acc.types.is_empty() || acc.nullable {
                acc.nullable = true;
            }
        }

        let mut out = Map::new();
        if let Some(name) = kind.name() {
            out.insert("type".into(), name.into());
        }
        if kind == Kind::IntOrString {
            out.insert("x-kubernetes-int-or-string".into(), true.into());
        }
        if acc.nullable {
            out.insert("nullable".into(), true.into());
        }
        if let Some(t) = acc.title.take() {
            out.insert("title".into(), t);
        }
        if let Some(d) = acc.description.take() {
            out.insert("description".into(), d);
        }
        if let Some((f, fp)) = acc.format.take() {
            let keep = match kind {
                Kind::Integer => formats::is_numeric_format("integer", &f),
                Kind::Number => formats::is_numeric_format("number", &f),
                k if k.has_strings() => true,
                _ => false,
            };
            if keep {
                if kind.has_strings() && formats::lookup(&f).is_none() {
                    self.warn(&fp, format!("format {f:?} is not validated by Kubernetes"));
                }
                out.insert("format".into(), f.into());
            }
        }
        if let Some(vals) = enum_values {
            if vals.is_empty() {
                self.warn(node_ptr, "enum allows only null; dropped");
            } else {
                out.insert("enum".into(), Value::Array(vals));
            }
        }
        let default = acc.default.take();
        if let Some(e) = acc.example.take() {
            out.insert("example".into(), e);
        }
        if kind.has_numbers() {
            self.numeric_keywords(&mut acc, kind, &mut out);
        }
        if kind.has_strings() {
            if let Some(n) = acc.min_length {
                out.insert("minLength".into(), n.into());
            }
            if let Some(n) = acc.max_length {
                out.insert("maxLength".into(), n.into());
            }
            let patterns = std::mem::take(&mut acc.patterns);
            for (p, pp) in patterns {
                if out.contains_key("pattern") {
                    if out["pattern"] != Value::String(p.clone()) {
                        self.warn(
                            &pp,
                            "a second pattern cannot be combined with the first; dropped",
                        );
                    }
                    continue;
                }
                match pattern::compile(&p) {
                    Ok(_) => {
                        out.insert("pattern".into(), p.into());
                    }
                    Err(e) => self.warn(
                        &pp,
                        format!("pattern is not a valid RE2 regular expression ({e}); dropped"),
                    ),
                }
            }
        }
        if kind.has_arrays() {
            self.array_keywords(&mut acc, kind, &mut out);
        }
        // Keywords for other types have no effect in JSON Schema either, so
        // dropping them loses nothing.
        if kind.has_objects() {
            self.object_keywords(&mut acc, kind, &mut out);
        }
        if kind == Kind::Any {
            out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        }
        if acc.embedded && kind == Kind::Object {
            out.insert("x-kubernetes-embedded-resource".into(), true.into());
        }
        for (k, v) in std::mem::take(&mut acc.extensions) {
            out.insert(k, v);
        }
        self.junctors(&mut acc, &mut out);
        if let Some((d, dp)) = default {
            self.attach_default(&mut out, d, &dp);
        }
        out
    }

    fn numeric_keywords(&mut self, acc: &mut Acc<'a>, kind: Kind, out: &mut Map<String, Value>) {
        let integer = kind == Kind::Integer;
        if let Some((n, excl)) = acc.lower.take() {
            let (n, excl) = if integer {
                integral_bound(&n, excl, true)
            } else {
                (n, excl)
            };
            out.insert("minimum".into(), Value::Number(n));
            if excl {
                out.insert("exclusiveMinimum".into(), true.into());
            }
        }
        if let Some((n, excl)) = acc.upper.take() {
            let (n, excl) = if integer {
                integral_bound(&n, excl, false)
            } else {
                (n, excl)
            };
            out.insert("maximum".into(), Value::Number(n));
            if excl {
                out.insert("exclusiveMaximum".into(), true.into());
            }
        }
        if let Some((n, mp)) = acc.multiple_of.take() {
            let f = n.as_f64().unwrap_or(1.0);
            if integer && f.fract() != 0.0 {
                let inverse = 1.0 / f;
                if (inverse - inverse.round()).abs() > 1e-9 {
                    self.warn(
                        &mp,
                        "a fractional multipleOf on an integer cannot be checked by Kubernetes; dropped",
                    );
                }
                // Otherwise every integer is a multiple: nothing is lost.
            } else {
                out.insert("multipleOf".into(), Value::Number(n));
            }
        }
    }

    fn array_keywords(&mut self, acc: &mut Acc<'a>, kind: Kind, out: &mut Map<String, Value>) {
        let mut max_items = acc.max_items;
        let mut items_schema: Option<Map<String, Value>> = None;
        let items_sources: Vec<(&'a Value, String)> = std::mem::take(&mut acc.items);
        let tuples = std::mem::take(&mut acc.tuples);
        let mut tuple_rest: Vec<(&'a Value, String)> = std::mem::take(&mut acc.additional_items);
        if tuples.is_empty() {
            // additionalItems only applies next to a tuple.
            tuple_rest.clear();
            if !items_sources.is_empty() {
                match self.convert_sources(items_sources) {
                    Some(m) => items_schema = Some(m),
                    None => {
                        max_items = Some(0);
                    }
                }
            }
        } else {
            // Tuple form: positional schemas, plus what applies after them
            // (2020-12 `items` next to `prefixItems`, or `additionalItems`).
            tuple_rest.extend(items_sources);
            let (list, tp) = &tuples[0];
            if tuples.len() > 1 {
                self.warn(
                    &tuples[1].1,
                    "a second tuple definition cannot be combined; dropped",
                );
            }
            let mut converted: Vec<Option<Map<String, Value>>> = Vec::new();
            for (i, s) in list.iter().enumerate() {
                converted.push(self.convert_sources(vec![(s, push_pointer(tp, &i.to_string()))]));
            }
            let mut rest_schema: Option<Option<Map<String, Value>>> = None;
            for (v, p) in tuple_rest {
                match v {
                    Value::Bool(false) => {
                        let n = converted.len() as u64;
                        max_items = Some(max_items.map_or(n, |m| m.min(n)));
                    }
                    Value::Bool(true) => {}
                    _ => rest_schema = Some(self.convert_sources(vec![(v, p)])),
                }
            }
            let mut all: Vec<Map<String, Value>> = converted.into_iter().flatten().collect();
            if let Some(Some(r)) = rest_schema {
                all.push(r);
            }
            let first = all.first().cloned();
            if let Some(f) = first {
                if all.iter().all(|m| *m == f) {
                    items_schema = Some(f);
                } else {
                    self.warn(
                        tp,
                        "tuple items with different schemas cannot be expressed; items accept any value",
                    );
                }
            }
        }
        if kind == Kind::Array || items_schema.is_some() {
            let mut items = items_schema.unwrap_or_else(preserve_map);
            if let Some(up) = acc.unique.take() {
                let nullable = items.get("nullable") == Some(&Value::Bool(true));
                if kind != Kind::Array {
                    self.warn(
                        &up,
                        "uniqueItems: true is forbidden in Kubernetes and x-kubernetes-list-type: set needs a field that is only a list; dropped",
                    );
                } else if nullable {
                    self.warn(
                        &up,
                        "uniqueItems: true is forbidden in Kubernetes and cannot become x-kubernetes-list-type: set for nullable items; dropped",
                    );
                } else {
                    match items.get("type").and_then(Value::as_str) {
                        Some("object") => {
                            items.insert("x-kubernetes-map-type".into(), "atomic".into());
                        }
                        Some("array") => {
                            items.insert("x-kubernetes-list-type".into(), "atomic".into());
                        }
                        _ => {}
                    }
                    acc.extensions
                        .entry("x-kubernetes-list-type".to_string())
                        .or_insert_with(|| "set".into());
                    self.warn(
                        &up,
                        "uniqueItems: true is forbidden in Kubernetes; converted to x-kubernetes-list-type: set (duplicates are rejected as FieldValueDuplicate)",
                    );
                }
            }
            if let Some(n) = acc.min_items {
                out.insert("minItems".into(), n.into());
            }
            if let Some(n) = max_items {
                out.insert("maxItems".into(), n.into());
            }
            out.insert("items".into(), Value::Object(items));
        } else {
            if let Some(n) = acc.min_items {
                out.insert("minItems".into(), n.into());
            }
            if let Some(n) = max_items {
                out.insert("maxItems".into(), n.into());
            }
        }
    }

    fn object_keywords(&mut self, acc: &mut Acc<'a>, kind: Kind, out: &mut Map<String, Value>) {
        if let Some(n) = acc.min_properties {
            out.insert("minProperties".into(), n.into());
        }
        if let Some(n) = acc.max_properties {
            out.insert("maxProperties".into(), n.into());
        }
        let mut props = Map::new();
        for (name, sources) in std::mem::take(&mut acc.props) {
            let first_ptr = sources[0].1.clone();
            match self.convert_sources(sources) {
                Some(m) => {
                    props.insert(name, Value::Object(m));
                }
                None => self.warn(
                    &first_ptr,
                    format!(
                        "property {name:?} is forbidden (`false` schema), which Kubernetes cannot express; dropped, so such a value is pruned instead of rejected"
                    ),
                ),
            }
        }
        let has_props = !props.is_empty();
        if has_props {
            out.insert("properties".into(), Value::Object(props));
        }
        if !acc.required.is_empty() {
            out.insert(
                "required".into(),
                Value::Array(acc.required.drain(..).map(Value::String).collect()),
            );
        }
        // additionalProperties / patternProperties.
        let mut allow = false;
        let mut schemas: Vec<(&'a Value, String)> = Vec::new();
        for (v, p) in std::mem::take(&mut acc.additional) {
            match v {
                Value::Bool(true) => allow = true,
                Value::Bool(false) => {
                    acc.deny_additional.get_or_insert(p);
                }
                Value::Object(_) => schemas.push((v, p)),
                _ => self.warn(
                    &p,
                    "additionalProperties must be a boolean or a schema; dropped",
                ),
            }
        }
        let pattern_props = std::mem::take(&mut acc.pattern_props);
        let mut preserve = acc.preserve || allow;
        if !schemas.is_empty() {
            let sp = schemas[0].1.clone();
            if has_props {
                preserve = true;
                self.warn(
                    &sp,
                    "additionalProperties with a schema cannot be combined with properties in Kubernetes; other keys are kept but not validated (x-kubernetes-preserve-unknown-fields)",
                );
            } else if let Some(m) = self.convert_sources(schemas) {
                out.insert("additionalProperties".into(), Value::Object(m));
                if let Some((_, _, pp)) = pattern_props.first() {
                    self.warn(pp, "patternProperties next to additionalProperties cannot be expressed; dropped");
                }
            } else {
                self.warn(
                    &sp,
                    "additionalProperties: false schema; dropped (unknown fields are pruned)",
                );
            }
        } else if !pattern_props.is_empty() {
            let pp = pattern_props[0].2.clone();
            let mut converted = Vec::new();
            for (_, sub, p) in &pattern_props {
                converted.push(self.convert_sources(vec![(*sub, p.clone())]));
            }
            let patterns: Vec<String> = pattern_props
                .iter()
                .map(|(p, _, _)| format!("{p:?}"))
                .collect();
            let same = converted.iter().all(|c| *c == converted[0]);
            match (&converted[0], has_props || !same) {
                (Some(m), false) => {
                    out.insert("additionalProperties".into(), Value::Object(m.clone()));
                    self.warn(
                        &pp,
                        format!(
                            "patternProperties became additionalProperties: the key pattern {} is not enforced",
                            patterns.join(", ")
                        ),
                    );
                }
                _ => {
                    preserve = true;
                    self.warn(
                        &pp,
                        format!(
                            "patternProperties {} cannot be expressed here; such keys are kept but not validated (x-kubernetes-preserve-unknown-fields)",
                            patterns.join(", ")
                        ),
                    );
                }
            }
        } else if let Some(dp) = acc.deny_additional.take() {
            self.warn(
                &dp,
                "additionalProperties: false dropped: structural schemas prune unknown fields (reported as warnings) instead of rejecting them",
            );
        } else if kind == Kind::Object && !has_props && !acc.embedded {
            // An object without declared fields: keep whatever it holds.
            preserve = true;
        }
        if preserve && kind == Kind::Object {
            out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        }
        if !acc.dep_required.is_empty() {
            for (name, list, p) in std::mem::take(&mut acc.dep_required) {
                if list.is_empty() {
                    continue;
                }
                let alt = serde_json::json!({
                    "anyOf": [
                        {"not": {"required": [name]}},
                        {"required": list},
                    ]
                });
                self.warn(
                    &p,
                    "dependentRequired is expressed as anyOf [not required, required]; its error message is less specific",
                );
                if let Value::Object(m) = alt {
                    acc.extensions
                        .entry("allOf".to_string())
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Some(Value::Array(a)) = acc.extensions.get_mut("allOf") {
                        a.push(Value::Object(m));
                    }
                }
            }
        }
    }

    fn attach_default(&mut self, out: &mut Map<String, Value>, d: Value, dp: &str) {
        if d.is_null() {
            // Kubernetes treats `default: null` as no default; for a
            // nullable field nothing is lost.
            if out.get("nullable") != Some(&Value::Bool(true)) {
                self.warn(dp, "default null has no effect in Kubernetes; dropped");
            }
            return;
        }
        let node = Value::Object(out.clone());
        match check_default(&node, &d) {
            Ok((pruned, errors)) => {
                let d = match pruned {
                    Some(p) => {
                        self.warn(
                            dp,
                            "the default has fields the schema does not declare; they were pruned",
                        );
                        p
                    }
                    None => d,
                };
                if !errors.is_empty() {
                    let msgs: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    self.error(dp, format!("invalid default: {}", msgs.join("; ")));
                }
                insert_after(
                    out,
                    "default",
                    d,
                    &[
                        "enum",
                        "format",
                        "description",
                        "title",
                        "nullable",
                        "x-kubernetes-int-or-string",
                        "type",
                    ],
                );
            }
            Err(e) => {
                self.warn(
                    dp,
                    format!("the default could not be checked ({e}); kept as is"),
                );
                insert_after(
                    out,
                    "default",
                    d,
                    &[
                        "enum",
                        "format",
                        "description",
                        "title",
                        "nullable",
                        "x-kubernetes-int-or-string",
                        "type",
                    ],
                );
            }
        }
    }

    // -- junctors kept as value validations ----------------------------------

    fn junctors(&mut self, acc: &mut Acc<'a>, out: &mut Map<String, Value>) {
        let mut all_of: Vec<Value> = match acc.extensions.remove("allOf") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        let mut any_of: Option<Vec<Value>> = None;
        let mut one_of: Option<Vec<Value>> = None;
        let mut not: Option<Value> = None;
        for d in std::mem::take(&mut acc.deferred) {
            match d {
                Deferred::Union { one_of: is_one, branches, ptr } => {
                    let Some((list, lossy)) = self.union_validations(&branches, out, &ptr) else {
                        continue;
                    };
                    let word = if is_one { "oneOf" } else { "anyOf" };
                    let as_one = is_one && !lossy;
                    if lossy {
                        self.warn(
                            &ptr,
                            format!(
                                "{word} branches lost `additionalProperties: false`{}",
                                if is_one { "; relaxed to anyOf so that valid values are not rejected" } else { "" }
                            ),
                        );
                    }
                    let slot = if as_one { &mut one_of } else { &mut any_of };
                    if slot.is_none() {
                        *slot = Some(list);
                    } else {
                        let key = if as_one { "oneOf" } else { "anyOf" };
                        let mut m = Map::new();
                        m.insert(key.into(), Value::Array(list));
                        all_of.push(Value::Object(m));
                    }
                }
                Deferred::Not(v, ptr) => match self.value_validation(vec![(v, ptr.clone())], out) {
                    Ok((m, false)) => {
                        if not.is_none() {
                            not = Some(Value::Object(m));
                        } else {
                            let mut w = Map::new();
                            w.insert("not".into(), Value::Object(m));
                            all_of.push(Value::Object(w));
                        }
                    }
                    Ok((_, true)) => self.warn(
                        &ptr,
                        "not dropped: its schema relies on additionalProperties: false, which Kubernetes cannot express",
                    ),
                    Err(why) => self.warn(&ptr, format!("not dropped: {why}")),
                },
                Deferred::IfThenElse { cond, then, otherwise, ptr } => {
                    let ip = push_pointer(&ptr, "if");
                    let cond_v = self.value_validation(vec![(cond, ip.clone())], out);
                    let then_v = then.map(|t| self.value_validation(vec![(t, push_pointer(&ptr, "then"))], out));
                    let else_v = otherwise.map(|e| self.value_validation(vec![(e, push_pointer(&ptr, "else"))], out));
                    let failure = match (&cond_v, &then_v, &else_v) {
                        (Err(w), _, _) | (_, Some(Err(w)), _) | (_, _, Some(Err(w))) => Some(w.clone()),
                        (Ok((_, true)), _, _) => Some("its `if` relies on additionalProperties: false".to_string()),
                        _ => None,
                    };
                    if let Some(why) = failure {
                        self.warn(
                            &ip,
                            format!("if/then/else cannot be expressed in a structural schema and was dropped: {why}"),
                        );
                        continue;
                    }
                    let (Ok((c, _)), then_m, else_m) = (cond_v, then_v, else_v) else { continue };
                    let then_m = then_m.and_then(Result::ok).map(|(m, _)| m);
                    let else_m = else_m.and_then(Result::ok).map(|(m, _)| m);
                    if then_m.is_none() && else_m.is_none() {
                        continue;
                    }
                    let c = Value::Object(c);
                    let not_c = serde_json::json!({ "not": c.clone() });
                    let branch = |first: Value, second: Option<Map<String, Value>>| match second {
                        Some(s) => serde_json::json!({ "allOf": [first, Value::Object(s)] }),
                        None => first,
                    };
                    let list = vec![branch(c, then_m), branch(not_c, else_m)];
                    self.warn(
                        &ip,
                        "if/then/else is expressed as an equivalent anyOf; its error message is less specific",
                    );
                    if any_of.is_none() {
                        any_of = Some(list);
                    } else {
                        all_of.push(serde_json::json!({ "anyOf": list }));
                    }
                }
            }
        }
        if !all_of.is_empty() {
            out.insert("allOf".into(), Value::Array(all_of));
        }
        if let Some(a) = any_of {
            out.insert("anyOf".into(), Value::Array(a));
        }
        if let Some(o) = one_of {
            out.insert("oneOf".into(), Value::Array(o));
        }
        if let Some(n) = not {
            out.insert("not".into(), n);
        }
    }

    /// Turns `anyOf`/`oneOf` branches into value validations, lifting
    /// properties only the branches declare into the node when needed.
    /// `None` when the junctor had to be dropped.
    fn union_validations(
        &mut self,
        branches: &[(&'a Value, String)],
        out: &mut Map<String, Value>,
        ptr: &str,
    ) -> Option<(Vec<Value>, bool)> {
        let attempt =
            |this: &mut Self, out: &Map<String, Value>| -> Result<(Vec<Value>, bool), String> {
                let mut list = Vec::new();
                let mut lossy = false;
                for (b, bp) in branches {
                    let (m, l) = this.value_validation(vec![(*b, bp.clone())], out)?;
                    lossy |= l;
                    list.push(Value::Object(m));
                }
                Ok((list, lossy))
            };
        let first_try = {
            let mut probe = Converter {
                root: self.root,
                root_id: self.root_id,
                warnings: Vec::new(),
                errors: Vec::new(),
                ref_stack: self.ref_stack.clone(),
                nodes: self.nodes,
            };
            attempt(&mut probe, out)
        };
        let why = match first_try {
            Ok(r) => {
                return Some(attempt(self, out).unwrap_or(r));
            }
            Err(why) => why,
        };
        // Lift properties declared only in branches into the node.
        let is_object = out.get("type").and_then(Value::as_str) == Some("object");
        if is_object {
            let mut lifted = Vec::new();
            for (b, bp) in branches {
                let mut ex = Expanded::default();
                let stack_len = self.ref_stack.len();
                self.expand(b, bp.clone(), &mut ex, stack_len);
                self.ref_stack.truncate(stack_len);
                for part in ex.parts {
                    if let Some(Value::Object(pm)) = part.map.get("properties") {
                        let pp = push_pointer(&part.ptr, "properties");
                        for (name, sub) in pm {
                            let known = out.get("properties").and_then(|p| p.get(name)).is_some();
                            if known || lifted.contains(name) {
                                continue;
                            }
                            if let Some(m) =
                                self.convert_sources(vec![(sub, push_pointer(&pp, name))])
                            {
                                let props = out
                                    .entry("properties")
                                    .or_insert_with(|| Value::Object(Map::new()));
                                if let Value::Object(props) = props {
                                    props.insert(
                                        name.clone(),
                                        Value::Object(strip_value_validations(m)),
                                    );
                                }
                                lifted.push(name.clone());
                            }
                        }
                    }
                }
            }
            if !lifted.is_empty() {
                if out.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
                    && out
                        .get("properties")
                        .and_then(Value::as_object)
                        .map(Map::len)
                        == Some(lifted.len())
                {
                    out.remove("x-kubernetes-preserve-unknown-fields");
                }
                match attempt(self, out) {
                    Ok(r) => {
                        self.warn(
                            ptr,
                            format!(
                                "properties {} declared only in branches were lifted into the object; the branches remain as value validations",
                                lifted.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
                            ),
                        );
                        return Some(r);
                    }
                    Err(why) => {
                        self.warn(
                            ptr,
                            format!(
                                "dropped: {why}; the properties of its branches were kept without their branch-specific validations"
                            ),
                        );
                        return None;
                    }
                }
            }
        }
        self.warn(ptr, format!("dropped: {why}"));
        None
    }

    /// Converts a schema under a junctor into a Kubernetes value validation
    /// (no types, defaults, descriptions or structure of its own) against
    /// the structural node `structural`. The flag tells that
    /// `additionalProperties: false` was dropped on the way.
    fn value_validation(
        &mut self,
        sources: Vec<(&'a Value, String)>,
        structural: &Map<String, Value>,
    ) -> Result<(Map<String, Value>, bool), String> {
        let stack_len = self.ref_stack.len();
        let mut ex = Expanded::default();
        for (v, p) in sources {
            self.expand(v, p, &mut ex, stack_len);
        }
        let result = self.value_validation_parts(&ex, structural);
        self.ref_stack.truncate(stack_len);
        result
    }

    fn value_validation_parts(
        &mut self,
        ex: &Expanded<'a>,
        structural: &Map<String, Value>,
    ) -> Result<(Map<String, Value>, bool), String> {
        if ex.never.is_some() {
            let mut m = Map::new();
            m.insert("not".into(), Value::Object(Map::new()));
            return Ok((m, false));
        }
        let s_type = structural.get("type").and_then(Value::as_str);
        let s_int_or_string = structural.contains_key("x-kubernetes-int-or-string");
        let mut pieces: Vec<Map<String, Value>> = Vec::new();
        let mut lossy = false;
        for part in &ex.parts {
            let mut m = Map::new();
            let (lower, upper) = bounds_of(part.map);
            for (k, v) in part.map {
                match k.as_str() {
                    k if ANNOTATIONS.contains(&k) || REF_KEYWORDS.contains(&k) => {}
                    "allOf" | "nullable" | "minimum" | "maximum" | "exclusiveMinimum"
                    | "exclusiveMaximum" => {}
                    "type" => {
                        let set = type_set(v).ok_or("a branch has an invalid type")?;
                        let mut names: BTreeSet<String> = set;
                        names.remove("null");
                        let ok = match (s_type, names.len()) {
                            (_, 0) => true,
                            (Some(t), 1) => {
                                names.contains(t) || (t == "integer" && names.contains("number"))
                            }
                            (None, 2) if s_int_or_string => {
                                names.contains("integer") && names.contains("string")
                            }
                            _ => false,
                        };
                        if !ok {
                            return Err(format!(
                                "a branch declares type {} where the field is {}",
                                join_types(&names),
                                s_type.unwrap_or(if s_int_or_string {
                                    "int-or-string"
                                } else {
                                    "untyped"
                                })
                            ));
                        }
                    }
                    "enum" => {
                        m.insert("enum".into(), v.clone());
                    }
                    "const" => {
                        m.insert("enum".into(), Value::Array(vec![v.clone()]));
                    }
                    "format" | "multipleOf" | "minLength" | "maxLength" | "minItems"
                    | "maxItems" | "minProperties" | "maxProperties" | "required" => {
                        m.insert(k.clone(), v.clone());
                    }
                    "pattern" => {
                        let p = v.as_str().ok_or("a branch has a non-string pattern")?;
                        pattern::compile(p)
                            .map_err(|e| format!("a branch has an invalid pattern: {e}"))?;
                        m.insert(k.clone(), v.clone());
                    }
                    "uniqueItems" if v == &Value::Bool(true) => {
                        return Err("a branch uses uniqueItems".into());
                    }
                    "properties" => {
                        let pm = v.as_object().ok_or("a branch has non-object properties")?;
                        let pp = push_pointer(&part.ptr, "properties");
                        let mut props = Map::new();
                        for (name, sub) in pm {
                            let Some(Value::Object(child)) =
                                structural.get("properties").and_then(|p| p.get(name))
                            else {
                                return Err(format!(
                                    "a branch declares property {name:?}, which the object does not declare"
                                ));
                            };
                            let child = child.clone();
                            let (cm, l) = self
                                .value_validation(vec![(sub, push_pointer(&pp, name))], &child)?;
                            lossy |= l;
                            props.insert(name.clone(), Value::Object(cm));
                        }
                        if !props.is_empty() {
                            m.insert("properties".into(), Value::Object(props));
                        }
                    }
                    "items" => {
                        if v.is_array() {
                            return Err("a branch uses tuple items".into());
                        }
                        let Some(Value::Object(child)) = structural.get("items") else {
                            return Err(
                                "a branch declares items on a field that is not a list".into()
                            );
                        };
                        let child = child.clone();
                        let (cm, l) = self.value_validation(
                            vec![(v, push_pointer(&part.ptr, "items"))],
                            &child,
                        )?;
                        lossy |= l;
                        if !cm.is_empty() {
                            m.insert("items".into(), Value::Object(cm));
                        }
                    }
                    "additionalProperties" | "unevaluatedProperties" => match v {
                        Value::Bool(true) => {}
                        Value::Bool(false) => lossy = true,
                        _ => return Err(format!("a branch declares {k} with a schema")),
                    },
                    "anyOf" | "oneOf" => {
                        let list = v.as_array().ok_or("a branch has a malformed junctor")?;
                        let jp = push_pointer(&part.ptr, k);
                        let mut out_list = Vec::new();
                        for (i, b) in list.iter().enumerate() {
                            let (bm, l) = self.value_validation(
                                vec![(b, push_pointer(&jp, &i.to_string()))],
                                structural,
                            )?;
                            lossy |= l;
                            out_list.push(Value::Object(bm));
                        }
                        if lossy && k == "oneOf" {
                            m.insert("anyOf".into(), Value::Array(out_list));
                        } else {
                            m.insert(k.clone(), Value::Array(out_list));
                        }
                    }
                    "not" => {
                        let (nm, l) = self.value_validation(
                            vec![(v, push_pointer(&part.ptr, "not"))],
                            structural,
                        )?;
                        if l {
                            return Err("a nested not relies on additionalProperties: false".into());
                        }
                        m.insert("not".into(), Value::Object(nm));
                    }
                    k if k.starts_with("x-kubernetes-") => {
                        return Err(format!("a branch uses {k}"));
                    }
                    "if" | "then" | "else" | "dependencies" | "dependentRequired"
                    | "dependentSchemas" | "patternProperties" | "propertyNames" | "contains"
                    | "prefixItems" | "additionalItems" | "unevaluatedItems" => {
                        return Err(format!("a branch uses {k}"));
                    }
                    _ => {}
                }
            }
            if let Some((n, excl)) = lower {
                m.insert("minimum".into(), Value::Number(n));
                if excl {
                    m.insert("exclusiveMinimum".into(), true.into());
                }
            }
            if let Some((n, excl)) = upper {
                m.insert("maximum".into(), Value::Number(n));
                if excl {
                    m.insert("exclusiveMaximum".into(), true.into());
                }
            }
            if !m.is_empty() {
                pieces.push(m);
            }
        }
        let merged = match pieces.len() {
            0 => Map::new(),
            1 => pieces.remove(0),
            _ => {
                let clash = pieces.iter().enumerate().any(|(i, a)| {
                    pieces[i + 1..]
                        .iter()
                        .any(|b| a.keys().any(|k| b.contains_key(k)))
                });
                if clash {
                    let mut m = Map::new();
                    m.insert(
                        "allOf".into(),
                        Value::Array(pieces.into_iter().map(Value::Object).collect()),
                    );
                    m
                } else {
                    pieces.into_iter().flatten().collect()
                }
            }
        };
        Ok((merged, lossy))
    }
}

fn preserve_map() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    m
}

/// Inserts `key` right after the last of `after` present in `m` (keeps the
/// canonical key order for keys added late).
fn insert_after(m: &mut Map<String, Value>, key: &str, value: Value, after: &[&str]) {
    let mut out = Map::new();
    let anchor = after
        .iter()
        .find(|k| m.contains_key(**k))
        .map(|k| k.to_string());
    let mut placed = false;
    if anchor.is_none() {
        out.insert(key.to_string(), value.clone());
        placed = true;
    }
    for (k, v) in std::mem::take(m) {
        let is_anchor = anchor.as_deref() == Some(k.as_str());
        out.insert(k, v);
        if is_anchor && !placed {
            out.insert(key.to_string(), value.clone());
            placed = true;
        }
    }
    *m = out;
}

/// Drops value validations (keeps the structure) from a lifted property.
fn strip_value_validations(mut m: Map<String, Value>) -> Map<String, Value> {
    for k in [
        "enum",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "required",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "default",
    ] {
        m.remove(k);
    }
    m
}

fn find_anchor<'v>(v: &'v Value, name: &str, ptr: String) -> Option<(String, &'v Value)> {
    match v {
        Value::Object(m) => {
            let hit = m.get("$anchor").and_then(Value::as_str) == Some(name)
                || m.get("$id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.strip_prefix('#') == Some(name));
            if hit {
                return Some((ptr, v));
            }
            m.iter()
                .find_map(|(k, c)| find_anchor(c, name, push_pointer(&ptr, k)))
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, c)| find_anchor(c, name, push_pointer(&ptr, &i.to_string()))),
        _ => None,
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len() + 1
            && let Some(h) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(h);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

fn type_set(v: &Value) -> Option<BTreeSet<String>> {
    match v {
        Value::String(s) => Some(BTreeSet::from([s.clone()])),
        Value::Array(a) => a.iter().map(|t| t.as_str().map(str::to_string)).collect(),
        _ => None,
    }
}

fn join_types(set: &BTreeSet<String>) -> String {
    format!("[{}]", set.iter().cloned().collect::<Vec<_>>().join(", "))
}

/// Type intersection where `number` includes `integer`.
fn intersect_types(a: &BTreeSet<String>, b: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for t in a {
        if b.contains(t) {
            out.insert(t.clone());
        } else if (t == "number" && b.contains("integer"))
            || (t == "integer" && b.contains("number"))
        {
            out.insert("integer".to_string());
        }
    }
    out
}

fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        _ => None,
    }
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
fn bounds_of(m: &Map<String, Value>) -> (Option<Bound>, Option<Bound>) {
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

fn stricter(cur: Option<Bound>, new: Bound, lower: bool) -> Bound {
    let Some(cur) = cur else { return new };
    let (a, b) = (cur.0.as_f64().unwrap_or(0.0), new.0.as_f64().unwrap_or(0.0));
    if a == b {
        return (cur.0, cur.1 || new.1);
    }
    let new_wins = if lower { b > a } else { b < a };
    if new_wins { new } else { cur }
}

/// Bounds on an integer: a fractional bound becomes the nearest integer
/// inside it (inclusive), as Kubernetes compares integers against
/// truncated bounds.
fn integral_bound(n: &Number, excl: bool, lower: bool) -> (Number, bool) {
    let f = n.as_f64().unwrap_or(0.0);
    if n.is_i64() || n.is_u64() || f.fract() == 0.0 && f.abs() < 9.0e15 {
        if !(n.is_i64() || n.is_u64()) {
            return (Number::from(f as i64), excl);
        }
        return (n.clone(), excl);
    }
    let v = if lower { f.ceil() } else { f.floor() };
    (Number::from(v as i64), false)
}

#[cfg(test)]
mod tests {
    use super::super::validate::{CompiledSchema, validate_schema};
    use super::*;
    use serde_json::json;

    /// Converts and checks that a usable result is a structural schema.
    fn conv(input: Value) -> Conversion {
        let c = to_structural(&input);
        if c.is_ok() {
            assert_eq!(
                validate_schema(&c.schema),
                Vec::<Issue>::new(),
                "output is not structural: {:#}",
                c.schema
            );
        }
        c
    }

    fn spec(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    fn prop(c: &Conversion, name: &str) -> Value {
        c.schema["properties"][name].clone()
    }

    fn has_warning(c: &Conversion, pointer: &str, needle: &str) -> bool {
        c.warnings
            .iter()
            .any(|w| w.pointer == pointer && w.message.contains(needle))
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
    fn type_unions() {
        let c = conv(spec(json!({
            "name": {"type": ["string", "null"]},
            "port": {"type": ["integer", "string"]},
            "port2": {"type": ["string", "null", "integer"]},
            "num": {"type": ["integer", "number"]},
            "mixed": {"type": ["string", "boolean"], "maxLength": 3}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "name"),
            json!({"type": "string", "nullable": true})
        );
        assert_eq!(
            prop(&c, "port"),
            json!({"x-kubernetes-int-or-string": true})
        );
        assert_eq!(
            prop(&c, "port2"),
            json!({"x-kubernetes-int-or-string": true, "nullable": true})
        );
        assert_eq!(prop(&c, "num"), json!({"type": "number"}));
        assert_eq!(
            prop(&c, "mixed"),
            json!({"maxLength": 3, "x-kubernetes-preserve-unknown-fields": true})
        );
        assert!(has_warning(
            &c,
            "/properties/mixed/type",
            "[boolean, string] cannot be expressed"
        ));
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    }

    #[test]
    fn free_form_nodes() {
        let c = conv(spec(json!({
            "anything": {},
            "alsoAnything": true,
            "obj": {"type": "object"},
            "list": {"type": "array"},
            "described": {"description": "whatever you like"}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "anything"),
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            prop(&c, "alsoAnything"),
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            prop(&c, "obj"),
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            prop(&c, "list"),
            json!({"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": true}})
        );
        assert_eq!(
            prop(&c, "described"),
            json!({"description": "whatever you like", "x-kubernetes-preserve-unknown-fields": true})
        );
        for p in ["anything", "alsoAnything", "described"] {
            assert!(
                has_warning(
                    &c,
                    &format!("/properties/{p}"),
                    "no type given: the field accepts any value"
                ),
                "{p}: {:?}",
                c.warnings
            );
        }
        assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
    }

    #[test]
    fn types_are_inferred() {
        let c = conv(json!({"properties": {
            "a": {"properties": {"x": {"type": "string"}}},
            "b": {"items": {"type": "string"}},
            "c": {"enum": ["x", "y"]},
            "d": {"const": 3},
            "e": {"default": true},
            "f": {"maxLength": 3},
            "g": {"enum": [1, "one"]}
        }}));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(c.schema["type"], "object");
        assert_eq!(prop(&c, "a")["type"], "object");
        assert_eq!(prop(&c, "b")["type"], "array");
        assert_eq!(prop(&c, "c"), json!({"type": "string", "enum": ["x", "y"]}));
        assert_eq!(prop(&c, "d"), json!({"type": "integer", "enum": [3]}));
        assert_eq!(prop(&c, "e"), json!({"type": "boolean", "default": true}));
        assert_eq!(prop(&c, "f"), json!({"type": "string", "maxLength": 3}));
        assert_eq!(
            prop(&c, "g"),
            json!({"enum": [1, "one"], "x-kubernetes-preserve-unknown-fields": true})
        );
        assert!(!has_warning(&c, "/properties/c", "inferred"));
        assert!(has_warning(
            &c,
            "/properties/e",
            "inferred boolean from the default"
        ));
        assert!(has_warning(
            &c,
            "/properties/f",
            "inferred string from its validation keywords"
        ));
        assert!(has_warning(&c, "", "root has no type") || c.schema["type"] == "object");
    }

    #[test]
    fn refs_are_inlined_with_sibling_overrides() {
        let c = conv(json!({
            "type": "object",
            "$defs": {
                "size": {"type": "string", "pattern": "^[0-9]+Gi$", "description": "a size"}
            },
            "definitions": {
                "storage": {"type": "object", "properties": {"size": {"$ref": "#/$defs/size"}}},
                "a/b": {"type": "boolean"},
                "n": {"$anchor": "small", "type": "integer", "maximum": 3}
            },
            "properties": {
                "data": {"$ref": "#/definitions/storage"},
                "logs": {"$ref": "#/definitions/storage", "description": "log storage"},
                "escaped": {"$ref": "#/definitions/a~1b"},
                "byAnchor": {"$ref": "#small"},
                "encoded": {"$ref": "#/definitions/a%7E1b"}
            }
        }));
        assert!(c.is_ok(), "{:?}", c.errors);
        let size = json!({"type": "string", "description": "a size", "pattern": "^[0-9]+Gi$"});
        assert_eq!(
            prop(&c, "data"),
            json!({"type": "object", "properties": {"size": size}})
        );
        assert_eq!(prop(&c, "logs")["description"], "log storage");
        assert_eq!(prop(&c, "logs")["properties"]["size"], size);
        assert_eq!(prop(&c, "escaped"), json!({"type": "boolean"}));
        assert_eq!(prop(&c, "encoded"), json!({"type": "boolean"}));
        assert_eq!(
            prop(&c, "byAnchor"),
            json!({"type": "integer", "maximum": 3})
        );
        // Problems inside a definition point at the definition.
        let bad = conv(json!({
            "type": "object",
            "$defs": {"x": {"type": "string", "readOnly": true}},
            "properties": {"a": {"$ref": "#/$defs/x"}}
        }));
        assert!(has_warning(&bad, "/$defs/x/readOnly", "readOnly"));
    }

    #[test]
    fn ref_cycles_are_errors_naming_the_cycle() {
        let c = conv(json!({
            "type": "object",
            "$defs": {"node": {"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            }}},
            "properties": {"tree": {"$ref": "#/$defs/node"}}
        }));
        assert!(!c.is_ok());
        assert_eq!(c.errors.len(), 1, "{:?}", c.errors);
        let e = &c.errors[0];
        assert_eq!(e.pointer, "/$defs/node/properties/children/items/$ref");
        assert!(
            e.message
                .contains("cyclic $ref: #/$defs/node -> #/$defs/node"),
            "{}",
            e.message
        );
        let self_ref = conv(json!({"type": "object", "properties": {"me": {"$ref": "#"}}}));
        assert_eq!(self_ref.errors[0].pointer, "/properties/me/$ref");
        assert!(self_ref.errors[0].message.contains("cyclic $ref: # -> #"));
    }

    #[test]
    fn external_and_dangling_refs_are_errors() {
        let c = conv(spec(json!({
            "ext": {"$ref": "https://example.com/other.json#/defs/x"},
            "rel": {"$ref": "other.json"},
            "missing": {"$ref": "#/$defs/nope"}
        })));
        let ptrs: Vec<&str> = c.errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(
            ptrs,
            [
                "/properties/ext/$ref",
                "/properties/rel/$ref",
                "/properties/missing/$ref"
            ]
        );
        assert!(c.errors[0].message.contains("external $ref"));
        assert!(c.errors[2].message.contains("unresolvable"));
        // A ref through the document's own $id is internal.
        let own = conv(json!({"$id": "https://x.test/s.json", "type": "object",
            "$defs": {"b": {"type": "boolean"}},
            "properties": {"f": {"$ref": "https://x.test/s.json#/$defs/b"}}}));
        assert!(own.is_ok(), "{:?}", own.errors);
        assert_eq!(prop(&own, "f"), json!({"type": "boolean"}));
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

    #[test]
    fn all_of_is_merged() {
        let c = conv(json!({
            "type": "object",
            "$defs": {"base": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "maxLength": 20}
            }}},
            "properties": {"app": {
                "allOf": [
                    {"$ref": "#/$defs/base"},
                    {"properties": {"name": {"maxLength": 10, "pattern": "^[a-z]+$"}, "port": {"type": "integer"}}, "required": ["port"]},
                    {"properties": {"port": {"type": "string"}}}
                ]
            }}
        }));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "app"),
            json!({"type": "object", "properties": {
                "name": {"type": "string", "maxLength": 10, "pattern": "^[a-z]+$"},
                "port": {"type": "integer"}
            }, "required": ["name", "port"]})
        );
        assert!(has_warning(
            &c,
            "/properties/app/allOf/2/properties/port/type",
            "conflicts with [integer]"
        ));
    }

    #[test]
    fn one_of_constants_collapse_into_an_enum() {
        let c = conv(spec(json!({
            "size": {"oneOf": [
                {"const": "small", "title": "Small"},
                {"const": "medium"},
                {"enum": ["large", "small"]}
            ], "default": "medium"},
            "level": {"type": "integer", "anyOf": [{"const": 1}, {"const": 2}, {"type": "null"}]}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "size"),
            json!({"type": "string", "enum": ["small", "medium", "large"], "default": "medium"})
        );
        assert_eq!(
            prop(&c, "level"),
            json!({"type": "integer", "nullable": true, "enum": [1, 2]})
        );
    }

    #[test]
    fn nullable_unions() {
        let c = conv(json!({
            "type": "object",
            "$defs": {"res": {"type": "object", "properties": {"cpu": {"type": "string"}}}},
            "properties": {
                "a": {"oneOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]},
                "b": {"anyOf": [{"$ref": "#/$defs/res"}, {"type": "null"}], "description": "resources"},
                "c": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
            }
        }));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "a"),
            json!({"type": "string", "nullable": true, "maxLength": 5})
        );
        assert_eq!(
            prop(&c, "b"),
            json!({"type": "object", "nullable": true, "description": "resources",
                   "properties": {"cpu": {"type": "string"}}})
        );
        assert_eq!(
            prop(&c, "c"),
            json!({"x-kubernetes-int-or-string": true, "nullable": true})
        );
    }

    #[test]
    fn value_validation_junctors_are_kept() {
        let c = conv(spec(json!({"auth": {
            "type": "object",
            "properties": {"password": {"type": "string"}, "secretRef": {"type": "string"}},
            "oneOf": [
                {"required": ["password"], "description": "inline"},
                {"required": ["secretRef"]}
            ],
            "not": {"required": ["password", "secretRef"]}
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "auth"),
            json!({"type": "object",
                   "properties": {"password": {"type": "string"}, "secretRef": {"type": "string"}},
                   "oneOf": [{"required": ["password"]}, {"required": ["secretRef"]}],
                   "not": {"required": ["password", "secretRef"]}})
        );
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        assert_eq!(
            v.validate(&json!({"auth": {}}), "spec")[0].to_string(),
            r#"spec.auth: Invalid value: "": "spec.auth" must validate one and only one schema (oneOf). Found none valid"#
        );
    }

    #[test]
    fn branch_properties_are_lifted() {
        let c = conv(spec(json!({"backup": {
            "type": "object",
            "properties": {"kind": {"type": "string"}},
            "oneOf": [
                {"properties": {"kind": {"const": "s3"}, "bucket": {"type": "string"}}, "required": ["bucket"]},
                {"properties": {"kind": {"const": "pvc"}, "size": {"type": "string", "pattern": "^[0-9]+Gi$"}}, "required": ["size"]}
            ]
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "backup"),
            json!({"type": "object",
            "properties": {"kind": {"type": "string"}, "bucket": {"type": "string"}, "size": {"type": "string"}},
            "oneOf": [
                {"properties": {"kind": {"enum": ["s3"]}, "bucket": {}}, "required": ["bucket"]},
                {"properties": {"kind": {"enum": ["pvc"]}, "size": {"pattern": "^[0-9]+Gi$"}}, "required": ["size"]}
            ]})
        );
        assert!(has_warning(&c, "/properties/backup/oneOf", "lifted"));
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        assert!(
            v.validate(&json!({"backup": {"kind": "s3", "bucket": "b"}}), "spec")
                .is_empty()
        );
        assert!(
            !v.validate(&json!({"backup": {"kind": "s3", "size": "1Gi"}}), "spec")
                .is_empty()
        );
    }

    #[test]
    fn closed_one_of_branches_relax_to_any_of() {
        let c = conv(spec(json!({"source": {
            "oneOf": [
                {"type": "object", "properties": {"git": {"type": "string"}}, "required": ["git"], "additionalProperties": false},
                {"type": "object", "properties": {"oci": {"type": "string"}}, "required": ["oci"], "additionalProperties": false}
            ]
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "source"),
            json!({"type": "object",
                "properties": {"git": {"type": "string"}, "oci": {"type": "string"}},
                "anyOf": [{"properties": {"git": {}}, "required": ["git"]},
                          {"properties": {"oci": {}}, "required": ["oci"]}]})
        );
        assert!(has_warning(
            &c,
            "/properties/source/oneOf",
            "relaxed to anyOf"
        ));
        assert!(has_warning(&c, "/properties/source/oneOf", "lifted"));
        // A `not` that relies on a closed object cannot be kept.
        let n = conv(spec(json!({"x": {
            "type": "object", "properties": {"a": {"type": "string"}},
            "not": {"properties": {"a": {"const": "b"}}, "additionalProperties": false}
        }})));
        assert!(prop(&n, "x").get("not").is_none());
        assert!(has_warning(&n, "/properties/x/not", "not dropped"));
    }

    #[test]
    fn inexpressible_junctors_are_dropped_with_pointer() {
        let c = conv(spec(json!({"value": {
            "anyOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string"}}]
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "value"),
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert!(
            has_warning(&c, "/properties/value/anyOf", "dropped"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn if_then_else() {
        let c = conv(spec(json!({"ingress": {
            "type": "object",
            "properties": {"enabled": {"type": "boolean"}, "host": {"type": "string"}},
            "if": {"properties": {"enabled": {"const": true}}},
            "then": {"required": ["host"]}
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "ingress")["anyOf"],
            json!([
                {"allOf": [{"properties": {"enabled": {"enum": [true]}}}, {"required": ["host"]}]},
                {"not": {"properties": {"enabled": {"enum": [true]}}}}
            ])
        );
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        assert!(
            v.validate(&json!({"ingress": {"enabled": false}}), "spec")
                .is_empty()
        );
        assert!(
            v.validate(&json!({"ingress": {"enabled": true, "host": "h"}}), "spec")
                .is_empty()
        );
        assert!(
            !v.validate(&json!({"ingress": {"enabled": true}}), "spec")
                .is_empty()
        );

        let dropped = conv(spec(json!({"ingress": {
            "type": "object",
            "properties": {"enabled": {"type": "boolean"}},
            "if": {"properties": {"enabled": {"const": true}}},
            "then": {"properties": {"tls": {"type": "object"}}, "required": ["tls"]},
            "else": {"maxProperties": 1}
        }})));
        assert!(dropped.is_ok(), "{:?}", dropped.errors);
        assert!(prop(&dropped, "ingress").get("anyOf").is_none());
        assert!(has_warning(
            &dropped,
            "/properties/ingress/if",
            "if/then/else cannot be expressed in a structural schema and was dropped"
        ));
    }

    #[test]
    fn pattern_properties() {
        let c = conv(spec(json!({
            "labels": {"type": "object", "patternProperties": {"^[a-z]+$": {"type": "string"}}},
            "mixed": {"type": "object", "patternProperties": {"^a": {"type": "string"}, "^b": {"type": "integer"}}},
            "withProps": {"type": "object", "properties": {"x": {"type": "string"}}, "patternProperties": {"^y": {"type": "string"}}}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "labels"),
            json!({"type": "object", "additionalProperties": {"type": "string"}})
        );
        assert!(has_warning(
            &c,
            "/properties/labels/patternProperties/^[a-z]+$",
            "key pattern \"^[a-z]+$\" is not enforced"
        ));
        assert_eq!(
            prop(&c, "mixed"),
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        );
        assert!(has_warning(
            &c,
            "/properties/mixed/patternProperties/^a",
            "cannot be expressed"
        ));
        assert_eq!(
            prop(&c, "withProps"),
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "x-kubernetes-preserve-unknown-fields": true})
        );
    }

    #[test]
    fn additional_properties() {
        let c = conv(spec(json!({
            "closed": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false},
            "open": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true},
            "map": {"type": "object", "additionalProperties": {"type": "integer"}},
            "both": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
            "uneval": {"type": "object", "properties": {"a": {"type": "string"}}, "unevaluatedProperties": false}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "closed"),
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        );
        assert!(has_warning(
            &c,
            "/properties/closed/additionalProperties",
            "additionalProperties: false dropped"
        ));
        assert_eq!(
            prop(&c, "open"),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            prop(&c, "map"),
            json!({"type": "object", "additionalProperties": {"type": "integer"}})
        );
        assert_eq!(
            prop(&c, "both"),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-preserve-unknown-fields": true})
        );
        assert!(has_warning(
            &c,
            "/properties/both/additionalProperties",
            "cannot be combined"
        ));
        assert!(has_warning(
            &c,
            "/properties/uneval/unevaluatedProperties",
            "dropped"
        ));
    }

    #[test]
    fn arrays() {
        let c = conv(spec(json!({
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "objs": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}, "uniqueItems": true},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "string"}], "additionalItems": false},
            "pair2020": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
            "empty": {"type": "array", "items": false},
            "has": {"type": "array", "items": {"type": "string"}, "contains": {"const": "x"}}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "tags"),
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"})
        );
        assert!(has_warning(
            &c,
            "/properties/tags/uniqueItems",
            "x-kubernetes-list-type: set"
        ));
        assert_eq!(prop(&c, "objs")["items"]["x-kubernetes-map-type"], "atomic");
        assert_eq!(
            prop(&c, "pair"),
            json!({"type": "array", "maxItems": 2, "items": {"type": "string"}})
        );
        assert_eq!(
            prop(&c, "pair2020"),
            json!({"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": true}})
        );
        assert!(has_warning(
            &c,
            "/properties/pair2020/prefixItems",
            "tuple items"
        ));
        assert_eq!(
            prop(&c, "empty"),
            json!({"type": "array", "maxItems": 0, "items": {"x-kubernetes-preserve-unknown-fields": true}})
        );
        assert!(has_warning(&c, "/properties/has/contains", "dropped"));
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        assert_eq!(
            v.validate(&json!({"tags": ["a", "a"]}), "spec")[0].to_string(),
            r#"spec.tags[1]: Duplicate value: "a""#
        );
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
        assert_eq!(c.warnings.len(), 6, "{:#?}", c.warnings);
    }

    #[test]
    fn dependent_required_becomes_value_validation() {
        let c = conv(spec(json!({"tls": {
            "type": "object",
            "properties": {"cert": {"type": "string"}, "key": {"type": "string"}},
            "dependentRequired": {"cert": ["key"]}
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "tls")["allOf"],
            json!([{"anyOf": [{"not": {"required": ["cert"]}}, {"required": ["key"]}]}])
        );
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        assert!(v.validate(&json!({"tls": {"key": "k"}}), "spec").is_empty());
        assert!(
            !v.validate(&json!({"tls": {"cert": "c"}}), "spec")
                .is_empty()
        );
    }

    #[test]
    fn defaults_are_validated() {
        let c = conv(spec(json!({
            "replicas": {"type": "integer", "minimum": 1, "default": 0},
            "mode": {"type": "string", "enum": ["a", "b"], "default": "c"},
            "ok": {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}, "required": ["a"], "default": {}},
            "extra": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}},
            "nothing": {"type": "string", "default": null}
        })));
        assert_eq!(
            c.errors,
            [
                Issue::new(
                    "/properties/replicas/default",
                    "invalid default: default: Invalid value: 0: default in body should be greater than or equal to 1"
                ),
                Issue::new(
                    "/properties/mode/default",
                    r#"invalid default: default: Unsupported value: "c": supported values: "a", "b""#
                ),
            ]
        );
        assert_eq!(prop(&c, "extra")["default"], json!({"a": "x"}));
        assert!(has_warning(&c, "/properties/extra/default", "pruned"));
        assert!(prop(&c, "nothing").get("default").is_none());
        assert!(has_warning(&c, "/properties/nothing/default", "no effect"));
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
        assert!(errs.is_valid(), "{:?}", errs.errors);
        assert_eq!(obj["p0"], "no");
        assert_eq!(obj["p4"], "~");
        assert_eq!(obj["viaConst"], "off");
        assert!(!v.validate(&json!({"p0": false}), "spec").is_empty());
    }

    #[test]
    fn snapshot_bitnami_like_schema() {
        let input: Value = serde_json::from_str(include_str!("testdata/bitnami-like.schema.json"))
            .expect("fixture is JSON");
        let expected: Value =
            serde_json::from_str(include_str!("testdata/bitnami-like.structural.json"))
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
            ]
        );
        // The output, key order included, is deterministic.
        let again: Value = serde_json::from_str(include_str!("testdata/bitnami-like.schema.json"))
            .expect("fixture is JSON");
        assert_eq!(
            serde_json::to_string(&to_structural(&again).schema).ok(),
            serde_json::to_string(&c.schema).ok()
        );
    }

    #[test]
    fn conversion_is_idempotent_on_structural_schemas() {
        let input: Value = serde_json::from_str(include_str!("testdata/bitnami-like.schema.json"))
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
