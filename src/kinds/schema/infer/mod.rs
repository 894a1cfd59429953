//! Inference of a structural schema from a chart's `values.yaml`, for charts
//! that ship no `values.schema.json`.
//!
//! Types and defaults come from the values as Helm reads them (go-yaml
//! through sigs.k8s.io/yaml), which serde-saphyr reproduces for plain
//! (unquoted) scalars when told to read YAML 1.1 octals: `yes`, `no`, `on`,
//! `off`, `y`, `n` (any case) become booleans, `~` and `null` become null,
//! `1.0` and `1e3` numbers, `0644` and `0o644` the integer 420 (go-yaml
//! reads a leading 0 and Go's `0o`, `0x` and `0b` prefixes), `08` the
//! number 8 (not octal, so go-yaml falls back to a float), `1_000` the
//! integer 1000. Quoted scalars always stay strings. A whole number
//! written as an integer is `type: integer`; one beyond the int64 range of
//! a Kubernetes integer (go-yaml's uint64, or its float64 beyond that) is
//! the float64 Helm ends up with, `type: number`, so that no default fails
//! its own schema. One spelling differs: go-yaml reads `0X1F` (capital
//! prefix) as 31, serde-saphyr as a string.
//!
//! * a mapping becomes `type: object` with its keys as properties and
//!   `default: {}` (so that Kubernetes defaulting recreates the nested
//!   defaults when the parent is omitted); an empty mapping becomes a
//!   free-form object (`x-kubernetes-preserve-unknown-fields`);
//! * a scalar becomes its type with the value as `default`;
//! * `null` becomes `nullable: true` + `x-kubernetes-preserve-unknown-fields`
//!   (no type: the chart did not say);
//! * a list becomes `type: array` whose `items` are inferred from the
//!   elements (object elements merged: properties unioned; integer and
//!   string mixed become int-or-string; other mixes become free-form), with
//!   the list as default; an empty list has free-form items. Nothing inside
//!   `items` has a default.
//!
//! Descriptions come from Bitnami readme-generator comments, `## @param
//! path.to.key [modifiers] Description` (anywhere in the file; `list[0].key`
//! and `list[].key` address list items; the `nullable`, `string`, `object`
//! and `array` modifiers refine a `null` value's schema), and from helm-docs
//! comments, `# -- Description` (continued on following `#` lines) directly
//! above a key. `@param` wins when both describe a key. A `@skip` key
//! keeps its type but gets no default; `@section` and `@extra` lines are
//! ignored. For a chart that ships a schema, [`describe_given_schema`] and
//! [`without_skipped`] read the same comments: descriptions where the
//! schema has none, and no default laid from a `@skip` key.
//!
//! Cozystack's cozyvalues-gen form, `## @param {type} name=default -
//! Description`, gives its key a schema built from the type rather than
//! inferred from the value (`typed`): `{quantity}` accepts `10` and
//! `"500m"`, `@enum`/`@value` become an `enum`, a `@typedef`'s `@field`s
//! the properties of a typed object (also through `map[string]T` and
//! `[]T`), and the value stays the default when it fits the type.
//!
//! This file infers types and defaults from the parsed values; the
//! descriptions and cozyvalues-gen types come from the comments of the same
//! text, which `comments` finds and `descriptions` applies to the inferred
//! schema.

mod comments;
mod descriptions;

pub(crate) use self::descriptions::{describe_given_schema, without_skipped};
mod typed;

use serde_json::{Map, Value};

use super::issue::{Issue, push_pointer};
use super::node_type::json_type_of;

/// The result of [`infer_from_values`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inferred {
    /// The structural schema for the kind's `spec`.
    pub schema: Value,
    /// Things worth a look, with JSON pointers into the values document
    /// (e.g. a `## @param` naming a key that does not exist).
    pub warnings: Vec<Issue>,
}

/// Why [`infer_from_values`] could not read `values.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum InferError {
    /// The YAML is malformed. `line` and `column` are 1-based (0 when the
    /// parser did not know the location).
    #[error("values.yaml:{line}:{column}: {message}")]
    Yaml {
        /// 1-based line of the problem.
        line: u64,
        /// 1-based column of the problem.
        column: u64,
        /// The parser's explanation.
        message: String,
    },
    /// The document is not a mapping (e.g. a list or a scalar).
    #[error("values.yaml: the top level must be a mapping of values, not {found}")]
    NotAMapping {
        /// The JSON type found instead.
        found: &'static str,
    },
}

/// Infers a structural schema (with defaults and descriptions) from the text
/// of a chart's `values.yaml`; see the module documentation.
pub(crate) fn infer_from_values(values_yaml: &str) -> Result<Inferred, InferError> {
    let mut warnings = Vec::new();
    let mut values: Value = if is_blank_yaml(values_yaml) {
        Value::Null
    } else {
        parse(values_yaml, &mut warnings)?
    };
    as_helm_reads(&mut values);
    let mut schema = match &values {
        Value::Object(m) if !m.is_empty() => {
            let mut out = Map::new();
            out.insert("type".into(), "object".into());
            let mut props = Map::new();
            for (k, v) in m {
                let node = infer_node(v, &push_pointer("", k), false, &mut warnings);
                props.insert(k.clone(), Value::Object(node));
            }
            out.insert("properties".into(), Value::Object(props));
            out
        }
        Value::Object(_) | Value::Null => {
            warnings.push(Issue::new(
                "",
                "values.yaml defines no values; the spec accepts any fields (x-kubernetes-preserve-unknown-fields)",
            ));
            let mut out = Map::new();
            out.insert("type".into(), "object".into());
            out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
            out
        }
        other => {
            return Err(InferError::NotAMapping {
                found: json_type_of(other),
            });
        }
    };
    descriptions::apply(values_yaml, &values, &mut schema, &mut warnings);
    untyped_nulls(&schema, "", &mut warnings);
    Ok(Inferred {
        schema: Value::Object(schema),
        warnings,
    })
}

/// The values of a chart's `values.yaml` as Helm reads them (see the module
/// documentation; `null` for a blank file), with what reading it warned.
pub(crate) fn values_as_helm_reads(values_yaml: &str) -> Result<(Value, Vec<Issue>), InferError> {
    let mut warnings = Vec::new();
    let mut values = if is_blank_yaml(values_yaml) {
        Value::Null
    } else {
        parse(values_yaml, &mut warnings)?
    };
    as_helm_reads(&mut values);
    Ok((values, warnings))
}

/// A warning for each key whose value is `null` and that no comment typed:
/// the field accepts any value (`storageClass: 42` included).
fn untyped_nulls(node: &Map<String, Value>, ptr: &str, warnings: &mut Vec<Issue>) {
    let Some(Value::Object(props)) = node.get("properties") else {
        return;
    };
    for (key, child) in props {
        let Value::Object(child) = child else {
            continue;
        };
        let at = push_pointer(ptr, key);
        let untyped = child.get("nullable") == Some(&Value::Bool(true))
            && !child.contains_key("type")
            && !child.contains_key("x-kubernetes-int-or-string");
        if untyped {
            warnings.push(Issue::new(
                at,
                "null in values.yaml and no type in a comment: the field accepts any value; type it \
                 (`## @param {string} …`, or a `[string]` modifier)",
            ));
        } else {
            untyped_nulls(child, &at, warnings);
        }
    }
}

fn is_blank_yaml(s: &str) -> bool {
    s.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---" || t == "..."
    })
}

fn parse_options(duplicate_keys: serde_saphyr::DuplicateKeyPolicy) -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    // Comments are read from the text by `scan_comments`; asking the parser
    // for them only trips its look-ahead budget on heavily commented files.
    options.emit_comments = false;
    options.duplicate_keys = duplicate_keys;
    // go-yaml resolves plain integers with Go's strconv.ParseInt(s, 0, 64):
    // a leading 0 is octal (file modes such as `0644`).
    options.legacy_octal_numbers = true;
    options
}

/// Integers beyond int64 as Helm holds them: go-yaml gives a uint64, which
/// sigs.k8s.io/yaml's JSON round trip turns into a float64; a Kubernetes
/// integer is an int64, so such a value can only be a `number`.
fn as_helm_reads(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_u64() && !n.is_i64() => {
            if let Some(f) = n.as_f64().and_then(serde_json::Number::from_f64) {
                *n = f;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_helm_reads),
        Value::Object(map) => map.values_mut().for_each(as_helm_reads),
        _ => {}
    }
}

/// Parses strictly; a document that only fails because of repeated keys is
/// read again with the last value winning, as Helm (go-yaml) does, and the
/// repetition becomes a warning.
fn parse(src: &str, warnings: &mut Vec<Issue>) -> Result<Value, InferError> {
    use serde_saphyr::DuplicateKeyPolicy;
    match serde_saphyr::from_str_with_options(src, parse_options(DuplicateKeyPolicy::Error)) {
        Ok(v) => Ok(v),
        Err(strict) => {
            let strict = yaml_error(strict);
            match serde_saphyr::from_str_with_options(
                src,
                parse_options(DuplicateKeyPolicy::LastWins),
            ) {
                Ok(v) => {
                    if let InferError::Yaml {
                        line,
                        column,
                        message,
                    } = &strict
                    {
                        warnings.push(Issue::new(
                            "",
                            format!(
                                "line {line}:{column}: {message}; the last value wins, as in Helm"
                            ),
                        ));
                    }
                    Ok(v)
                }
                Err(_) => Err(strict),
            }
        }
    }
}

fn yaml_error(e: serde_saphyr::Error) -> InferError {
    let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
    let message = crate::kinds::yaml_message::yaml_message(&e);
    InferError::Yaml {
        line,
        column,
        message,
    }
}

fn scalar(ty: &str, default: Option<&Value>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), ty.into());
    if let Some(d) = default {
        m.insert("default".into(), d.clone());
    }
    m
}

fn free_form() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    m
}

fn infer_node(
    v: &Value,
    ptr: &str,
    in_items: bool,
    warnings: &mut Vec<Issue>,
) -> Map<String, Value> {
    let default = (!in_items).then_some(v);
    match v {
        Value::Null => {
            let mut m = Map::new();
            m.insert("nullable".into(), true.into());
            m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
            m
        }
        Value::Bool(_) => scalar("boolean", default),
        Value::Number(n) if n.is_i64() || n.is_u64() => scalar("integer", default),
        Value::Number(_) => scalar("number", default),
        Value::String(_) => scalar("string", default),
        Value::Array(items) => {
            let mut item_schema: Option<Map<String, Value>> = None;
            for (i, item) in items.iter().enumerate() {
                let s = infer_node(item, &push_pointer(ptr, &i.to_string()), true, warnings);
                item_schema = Some(match item_schema {
                    None => s,
                    Some(prev) => merge(prev, s, ptr, warnings),
                });
            }
            let mut m = scalar("array", None);
            m.insert(
                "items".into(),
                Value::Object(item_schema.unwrap_or_else(free_form)),
            );
            if let Some(d) = default {
                m.insert("default".into(), d.clone());
            }
            m
        }
        // Keys such as `app.kubernetes.io/part-of` name labels or
        // annotations, not the fields of a fixed object: a map of strings,
        // whose keys are the user's to choose.
        Value::Object(obj)
            if obj.keys().any(|k| k.contains('/')) && obj.values().all(Value::is_string) =>
        {
            let mut m = scalar("object", None);
            m.insert(
                "additionalProperties".into(),
                Value::Object(scalar("string", None)),
            );
            if let Some(d) = default {
                m.insert("default".into(), d.clone());
            }
            m
        }
        Value::Object(obj) => {
            let mut m = scalar("object", None);
            if obj.is_empty() {
                m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
            } else {
                let mut props = Map::new();
                for (k, child) in obj {
                    let node = infer_node(child, &push_pointer(ptr, k), in_items, warnings);
                    props.insert(k.clone(), Value::Object(node));
                }
                m.insert("properties".into(), Value::Object(props));
            }
            if !in_items {
                m.insert("default".into(), Value::Object(Map::new()));
            }
            m
        }
    }
}

fn type_of(m: &Map<String, Value>) -> &str {
    if m.contains_key("x-kubernetes-int-or-string") {
        return "int-or-string";
    }
    m.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Merges the schemas of two list elements.
fn merge(
    mut a: Map<String, Value>,
    b: Map<String, Value>,
    ptr: &str,
    warnings: &mut Vec<Issue>,
) -> Map<String, Value> {
    let nullable = |m: &Map<String, Value>| m.get("nullable") == Some(&Value::Bool(true));
    let untyped_null = |m: &Map<String, Value>| nullable(m) && type_of(m).is_empty();
    if untyped_null(&b) {
        a.insert("nullable".into(), true.into());
        return a;
    }
    if untyped_null(&a) {
        let mut b = b;
        b.insert("nullable".into(), true.into());
        return b;
    }
    let (ta, tb) = (type_of(&a).to_string(), type_of(&b).to_string());
    let either_nullable = nullable(&a) || nullable(&b);
    let mut out = match (ta.as_str(), tb.as_str()) {
        (x, y) if x == y && x == "object" => {
            let mut props = match a.remove("properties") {
                Some(Value::Object(p)) => p,
                _ => Map::new(),
            };
            if let Some(Value::Object(bp)) = b.get("properties") {
                for (k, v) in bp {
                    let Value::Object(vm) = v else { continue };
                    let merged = match props.remove(k) {
                        Some(Value::Object(existing)) => {
                            merge(existing, vm.clone(), &push_pointer(ptr, k), warnings)
                        }
                        _ => vm.clone(),
                    };
                    props.insert(k.clone(), Value::Object(merged));
                }
            }
            let free = a.contains_key("x-kubernetes-preserve-unknown-fields")
                || b.contains_key("x-kubernetes-preserve-unknown-fields");
            let mut m = scalar("object", None);
            if !props.is_empty() {
                m.insert("properties".into(), Value::Object(props));
            }
            if free && m.get("properties").is_none() {
                m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
            }
            m
        }
        (x, y) if x == y && x == "array" => {
            let ia = match a.remove("items") {
                Some(Value::Object(i)) => i,
                _ => free_form(),
            };
            let ib = match b.get("items") {
                Some(Value::Object(i)) => i.clone(),
                _ => free_form(),
            };
            let mut m = scalar("array", None);
            m.insert("items".into(), Value::Object(merge(ia, ib, ptr, warnings)));
            m
        }
        (x, y) if x == y => a.clone(),
        ("integer", "number") | ("number", "integer") => scalar("number", None),
        ("integer", "string")
        | ("string", "integer")
        | ("int-or-string", "integer" | "string")
        | ("integer" | "string", "int-or-string") => {
            let mut m = Map::new();
            m.insert("x-kubernetes-int-or-string".into(), true.into());
            m
        }
        ("", _) | (_, "") => free_form(),
        _ => {
            warnings.push(Issue::new(
                ptr,
                format!("list elements mix {ta} and {tb}; their items accept any value"),
            ));
            free_form()
        }
    };
    if either_nullable {
        let mut m = Map::new();
        for (k, v) in std::mem::take(&mut out) {
            m.insert(k.clone(), v);
            if k == "type" || k == "x-kubernetes-int-or-string" {
                m.insert("nullable".into(), true.into());
            }
        }
        if !m.contains_key("nullable") {
            m.insert("nullable".into(), true.into());
        }
        out = m;
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::structural_check::check_structural;
    use super::super::validate::CompiledSchema;
    use super::*;
    use serde_json::json;

    pub(super) fn infer(src: &str) -> Inferred {
        let out = infer_from_values(src).expect("infers");
        assert_eq!(
            check_structural(&out.schema),
            Vec::<Issue>::new(),
            "not structural: {:#}",
            out.schema
        );
        out
    }

    #[test]
    fn types_and_defaults() {
        let out = infer(
            r#"
replicaCount: 1
ratio: 0.5
name: app
enabled: false
nothing: null
empty: {}
list: []
image:
  repository: nginx
  tag: "1.25"
ports: [80, 443]
"#,
        );
        // Only the null has no type to go by.
        let said: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "/nothing: null in values.yaml and no type in a comment: the field accepts any value; type it \
              (`## @param {string} …`, or a `[string]` modifier)"
            ]
        );
        assert_eq!(
            out.schema,
            json!({"type": "object", "properties": {
                "replicaCount": {"type": "integer", "default": 1},
                "ratio": {"type": "number", "default": 0.5},
                "name": {"type": "string", "default": "app"},
                "enabled": {"type": "boolean", "default": false},
                "nothing": {"nullable": true, "x-kubernetes-preserve-unknown-fields": true},
                "empty": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {}},
                "list": {"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": true}, "default": []},
                "image": {"type": "object", "properties": {
                    "repository": {"type": "string", "default": "nginx"},
                    "tag": {"type": "string", "default": "1.25"}
                }, "default": {}},
                "ports": {"type": "array", "items": {"type": "integer"}, "default": [80, 443]}
            }})
        );
    }

    #[test]
    fn defaults_recreate_the_values() {
        let src = "a:\n  b:\n    c: 1\n    d: [x]\n  e: \"no\"\nf: true\n";
        let out = infer(src);
        let compiled = CompiledSchema::new(&out.schema).expect("compiles");
        let mut spec = json!({});
        let res = compiled.default_and_validate(&mut spec, "spec");
        assert!(res.errors.is_empty(), "{:?}", res.errors);
        let values: Value = serde_saphyr::from_str(src).expect("parses");
        assert_eq!(spec, values);
    }

    #[test]
    fn label_like_keys_make_a_map_of_strings() {
        let out =
            infer("podLabels:\n  app.kubernetes.io/part-of: shop\nsettings:\n  log.level: info\n");
        let p = &out.schema["properties"];
        assert_eq!(
            p["podLabels"],
            json!({"type": "object", "additionalProperties": {"type": "string"},
                   "default": {"app.kubernetes.io/part-of": "shop"}})
        );
        // Dots alone are a fixed object's keys (Helm charts nest with them).
        assert_eq!(p["settings"]["properties"]["log.level"]["default"], "info");
    }

    #[test]
    fn yaml_scalars_follow_serde_saphyr_and_quotes_keep_strings() {
        // Plain yes/no/on/off/y/n are YAML 1.1 booleans, as in Helm; `~` is
        // null; quoted scalars stay strings.
        let out = infer(
            r#"
plainYes: yes
plainNo: no
plainOn: on
plainOff: off
plainY: y
tilde: ~
plainFloat: 1.0
quotedYes: "yes"
quotedNo: 'no'
quotedOn: "on"
quotedOff: "off"
quotedTilde: "~"
quotedNull: "null"
quotedFloat: "1.0"
"#,
        );
        let p = &out.schema["properties"];
        for k in ["plainYes", "plainOn", "plainY"] {
            assert_eq!(p[k], json!({"type": "boolean", "default": true}), "{k}");
        }
        for k in ["plainNo", "plainOff"] {
            assert_eq!(p[k], json!({"type": "boolean", "default": false}), "{k}");
        }
        assert_eq!(
            p["tilde"],
            json!({"nullable": true, "x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(p["plainFloat"], json!({"type": "number", "default": 1.0}));
        for (k, v) in [
            ("quotedYes", "yes"),
            ("quotedNo", "no"),
            ("quotedOn", "on"),
            ("quotedOff", "off"),
            ("quotedTilde", "~"),
            ("quotedNull", "null"),
            ("quotedFloat", "1.0"),
        ] {
            assert_eq!(p[k], json!({"type": "string", "default": v}), "{k}");
        }
        // And they survive a YAML round trip of the schema.
        let yaml = serde_saphyr::to_string(&out.schema).expect("serializes");
        let back: Value = serde_saphyr::from_str(&yaml).expect("parses");
        assert_eq!(back, out.schema);
    }

    #[test]
    fn numbers_as_helm_reads_them() {
        // What go-yaml (through sigs.k8s.io/yaml) makes of these spellings:
        // a leading 0 is octal, Go's prefixes are read, and an integer
        // beyond int64 ends up a float64.
        let out = infer(
            r#"
## @param defaultMode Mode of the mounted config files
defaultMode: 0644
execMode: 0755
explicitOctal: 0o644
negativeOctal: -0644
notOctal: 08
zero: 0
hex: 0x1F
binary: 0b101
plus: +5
underscored: 1_000
scientific: 1e3
int64Max: 9223372036854775807
int64Min: -9223372036854775808
## @param maxBytes Retention in bytes
maxBytes: 18446744073709551615
huge: 123456789012345678901234567890
modes: [0644, 0600]
"#,
        );
        let p = &out.schema["properties"];
        let int = |v: i64| json!({"type": "integer", "default": v});
        assert_eq!(
            p["defaultMode"],
            json!({"type": "integer", "default": 420, "description": "Mode of the mounted config files"})
        );
        assert_eq!(p["execMode"], int(493));
        assert_eq!(p["explicitOctal"], int(420));
        assert_eq!(p["negativeOctal"], int(-420));
        assert_eq!(p["notOctal"], json!({"type": "number", "default": 8.0}));
        assert_eq!(p["zero"], int(0));
        assert_eq!(p["hex"], int(31));
        assert_eq!(p["binary"], int(5));
        assert_eq!(p["plus"], int(5));
        assert_eq!(p["underscored"], int(1000));
        assert_eq!(
            p["scientific"],
            json!({"type": "number", "default": 1000.0})
        );
        assert_eq!(p["int64Max"], int(i64::MAX));
        assert_eq!(p["int64Min"], int(i64::MIN));
        assert_eq!(
            p["maxBytes"],
            json!({"type": "number", "default": 18446744073709551615.0, "description": "Retention in bytes"})
        );
        assert_eq!(
            p["huge"],
            json!({"type": "number", "default": 123456789012345678901234567890.0})
        );
        assert_eq!(
            p["modes"],
            json!({"type": "array", "items": {"type": "integer"}, "default": [420, 384]})
        );
        // Every default passes the schema it sits in (`infer` checks the
        // schema is structural, defaults included); so does an empty spec.
        let compiled = CompiledSchema::new(&out.schema).expect("compiles");
        let mut spec = json!({});
        let res = compiled.default_and_validate(&mut spec, "spec");
        assert!(res.errors.is_empty(), "{:?}", res.errors);
        assert_eq!(spec["defaultMode"], 420);
    }

    #[test]
    fn lists_merge_their_elements() {
        let out = infer(
            r#"
users:
  - name: alice
    admin: true
  - name: bob
    email: bob@example.com
ports: [80, "http"]
mixed: [1, {a: 1}]
nullable: [a, null]
nested: [[1], [2, 3]]
"#,
        );
        let p = &out.schema["properties"];
        assert_eq!(
            p["users"]["items"],
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "admin": {"type": "boolean"},
                "email": {"type": "string"}
            }})
        );
        assert_eq!(p["users"]["default"][1]["name"], "bob");
        assert_eq!(
            p["ports"]["items"],
            json!({"x-kubernetes-int-or-string": true})
        );
        assert_eq!(
            p["mixed"]["items"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            p["nullable"]["items"],
            json!({"type": "string", "nullable": true})
        );
        assert_eq!(
            p["nested"]["items"],
            json!({"type": "array", "items": {"type": "integer"}})
        );
        assert_eq!(
            out.warnings,
            [Issue::new(
                "/mixed",
                "list elements mix integer and object; their items accept any value"
            )]
        );
    }

    #[test]
    fn malformed_yaml_reports_line_and_column() {
        let err = infer_from_values("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        let InferError::Yaml {
            line,
            column,
            message,
        } = &err
        else {
            panic!("unexpected {err:?}");
        };
        assert_eq!((*line, *column), (3, 2));
        assert!(!message.is_empty());
        assert!(!message.contains('\n'));
        assert!(err.to_string().starts_with("values.yaml:3:2: "), "{err}");
        let err = infer_from_values("a: b\n  c: d\n").unwrap_err();
        assert!(
            matches!(
                err,
                InferError::Yaml {
                    line: 2,
                    column: 4,
                    ..
                }
            ),
            "{err:?}"
        );
        // Repeated keys are accepted with the last value winning, as in
        // Helm, with a warning.
        let dup = infer("a: 1\nb: x\na: 2\n");
        assert_eq!(dup.schema["properties"]["a"]["default"], 2);
        assert_eq!(dup.warnings.len(), 1);
        assert_eq!(
            dup.warnings[0].message,
            "line 3:1: the key `a` appears twice in the same mapping; the last value wins, as in Helm"
        );
    }

    #[test]
    fn top_level_must_be_a_mapping() {
        assert_eq!(
            infer_from_values("- a\n- b\n").unwrap_err(),
            InferError::NotAMapping { found: "array" }
        );
        assert_eq!(
            infer_from_values("just text").unwrap_err().to_string(),
            "values.yaml: the top level must be a mapping of values, not string"
        );
        for empty in ["", "# only comments\n", "---\n", "{}"] {
            let out = infer(empty);
            assert_eq!(
                out.schema,
                json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
                "{empty:?}"
            );
            assert_eq!(out.warnings.len(), 1);
        }
    }
}
