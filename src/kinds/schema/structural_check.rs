//! The structural-schema check: whether a schema (one loaded from a
//! definition file, or one this module produced) is a Kubernetes structural
//! schema usable as a kind's `spec`, with every violation reported as an
//! [`Issue`] that points into the schema.

use serde_json::{Map, Value};

use super::issue::{Issue, push_pointer};
use super::node_type::TYPE_NAMES;
use super::pattern;
use super::validate::check_default;

/// Keywords a structural schema node may carry.
const STRUCTURAL_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "default",
    "example",
    "externalDocs",
    "nullable",
    "enum",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "multipleOf",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "properties",
    "additionalProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// Checks that `schema` is a Kubernetes structural schema usable as a kind's
/// `spec`: the root is `type: object`; every node has a `type` (or
/// `x-kubernetes-int-or-string` / `x-kubernetes-preserve-unknown-fields`);
/// no keyword outside OpenAPI v3's Kubernetes subset (`$ref`, `definitions`,
/// `patternProperties`, `dependencies`, `if`, `const`, tuple `items`, ...)
/// appears; `properties` and `additionalProperties` are not combined;
/// `allOf`/`anyOf`/`oneOf`/`not` hold only value validations on fields the
/// structural part declares; extensions are consistent; patterns compile;
/// defaults are valid and pruned. Returns every problem found (none when
/// the schema is structural), with JSON pointers into `schema`.
pub(crate) fn check_structural(schema: &Value) -> Vec<Issue> {
    let mut issues = Vec::new();
    match schema {
        Value::Object(m) => {
            match m.get("type") {
                Some(Value::String(t)) if t == "object" => {}
                Some(Value::String(t)) => issues.push(Issue::new(
                    "/type",
                    format!("must be object at the root, not {t:?}"),
                )),
                _ => issues.push(Issue::new("/type", "must be object at the root")),
            }
            if m.get("nullable") == Some(&Value::Bool(true)) {
                issues.push(Issue::new("/nullable", "cannot be true at the root"));
            }
            structural_node(schema, "", &mut issues);
        }
        _ => issues.push(Issue::new("", "schema must be a JSON object")),
    }
    issues.sort();
    issues.dedup();
    issues
}

fn structural_node(v: &Value, ptr: &str, issues: &mut Vec<Issue>) {
    let Value::Object(m) = v else {
        issues.push(Issue::new(ptr, "must be a schema object"));
        return;
    };
    let kw = |k: &str| push_pointer(ptr, k);
    common_keywords(m, ptr, issues);
    for k in m.keys() {
        if !STRUCTURAL_KEYWORDS.contains(&k.as_str()) {
            issues.push(Issue::new(kw(k), forbidden_keyword_message(k)));
        }
    }
    let ty = m.get("type").and_then(Value::as_str).unwrap_or("");
    let int_or_string = m.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    let preserve = m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    let embedded = m.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
    match m.get("type") {
        None => {}
        Some(Value::String(t)) if t == "null" => issues.push(Issue::new(
            kw("type"),
            "type cannot be set to null, use nullable as an alternative",
        )),
        Some(Value::String(t)) if TYPE_NAMES.contains(&t.as_str()) => {}
        Some(Value::String(t)) => issues.push(Issue::new(
            kw("type"),
            format!(
                "unsupported type {t:?}: must be one of {}",
                TYPE_NAMES.join(", ")
            ),
        )),
        Some(Value::Array(_)) => issues.push(Issue::new(
            kw("type"),
            "must be a single type; use nullable or x-kubernetes-int-or-string for unions",
        )),
        Some(_) => issues.push(Issue::new(kw("type"), "must be a string")),
    }
    if ty.is_empty() && !int_or_string && !preserve {
        issues.push(Issue::new(
            kw("type"),
            "must not be empty (set a type, x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields)",
        ));
    }
    if int_or_string {
        if !ty.is_empty() {
            issues.push(Issue::new(
                kw("type"),
                "must be empty if x-kubernetes-int-or-string is true",
            ));
        }
        if preserve {
            issues.push(Issue::new(
                kw("x-kubernetes-preserve-unknown-fields"),
                "must be false if x-kubernetes-int-or-string is true",
            ));
        }
        if embedded {
            issues.push(Issue::new(
                kw("x-kubernetes-embedded-resource"),
                "must be false if x-kubernetes-int-or-string is true",
            ));
        }
    }
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        issues.push(Issue::new(
            kw("x-kubernetes-preserve-unknown-fields"),
            "must be true or undefined",
        ));
    }
    if embedded {
        if ty != "object" {
            issues.push(Issue::new(
                kw("type"),
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        }
        if m.contains_key("additionalProperties") {
            issues.push(Issue::new(
                kw("additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            ));
        }
        if !preserve
            && m.get("properties")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
        {
            issues.push(Issue::new(
                kw("properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            ));
        }
    }
    if m.get("uniqueItems") == Some(&Value::Bool(true)) {
        issues.push(Issue::new(
            kw("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic (use x-kubernetes-list-type: set)",
        ));
    }
    let has_props = m
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    match m.get("additionalProperties") {
        Some(Value::Bool(true)) | None => {}
        Some(_) if has_props => issues.push(Issue::new(
            kw("additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        )),
        Some(Value::Bool(false)) => {}
        Some(a @ Value::Object(_)) => structural_node(a, &kw("additionalProperties"), issues),
        Some(_) => issues.push(Issue::new(
            kw("additionalProperties"),
            "must be a boolean or a schema",
        )),
    }
    if let Some(p) = m.get("properties") {
        match p {
            Value::Object(pm) => {
                let pp = kw("properties");
                for (name, sub) in pm {
                    structural_node(sub, &push_pointer(&pp, name), issues);
                }
            }
            _ => issues.push(Issue::new(kw("properties"), "must be an object")),
        }
    }
    match m.get("items") {
        None => {
            if ty == "array" {
                issues.push(Issue::new(kw("items"), "must be specified for type array"));
            }
        }
        Some(Value::Array(_)) => issues.push(Issue::new(
            kw("items"),
            "items must be a schema object and not an array",
        )),
        Some(i) => structural_node(i, &kw("items"), issues),
    }
    list_and_map_types(m, ptr, ty, issues);
    // Junctors hold value validations only.
    for j in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = m.get(j) {
            match list {
                Value::Array(branches) => {
                    let jp = kw(j);
                    for (i, b) in branches.iter().enumerate() {
                        let bp = push_pointer(&jp, &i.to_string());
                        let int_or_string_pattern = int_or_string
                            && is_int_or_string_branch(b)
                            && (j == "anyOf"
                                || (j == "allOf" && i == 0 && b.get("anyOf").is_some()));
                        if !int_or_string_pattern {
                            nested_value_validation(b, &bp, Some(v), issues);
                        }
                    }
                }
                _ => issues.push(Issue::new(kw(j), "must be an array of schemas")),
            }
        }
    }
    if let Some(n) = m.get("not") {
        nested_value_validation(n, &kw("not"), Some(v), issues);
    }
    if let Some(d) = m.get("default") {
        default_issues(v, d, ptr, issues);
    }
}

fn is_int_or_string_branch(b: &Value) -> bool {
    let types = |x: &Value| x.get("type").and_then(Value::as_str).map(str::to_string);
    match b {
        Value::Object(m) if m.len() == 1 && m.contains_key("type") => {
            matches!(types(b).as_deref(), Some("integer" | "string"))
        }
        Value::Object(m) => m.get("anyOf").and_then(Value::as_array).is_some_and(|a| {
            a.len() == 2
                && types(&a[0]).as_deref() == Some("integer")
                && types(&a[1]).as_deref() == Some("string")
        }),
        _ => false,
    }
}

fn forbidden_keyword_message(k: &str) -> String {
    match k {
        "$ref" => "$ref is not supported".into(),
        "definitions" | "$defs" => format!("{k} is not supported"),
        "id" | "$id" => "id is not supported".into(),
        "$schema" => "$schema is not supported".into(),
        "patternProperties" => "patternProperties is not supported".into(),
        "dependencies" => "dependencies is not supported".into(),
        "additionalItems" => "additionalItems is not supported".into(),
        "const" => "const is not supported (use enum with one value)".into(),
        _ => format!("unknown or unsupported keyword {k:?}"),
    }
}

fn common_keywords(m: &Map<String, Value>, ptr: &str, issues: &mut Vec<Issue>) {
    let kw = |k: &str| push_pointer(ptr, k);
    for k in [
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "maxProperties",
        "minProperties",
    ] {
        if let Some(x) = m.get(k)
            && x.as_i64().is_none_or(|i| i < 0)
        {
            issues.push(Issue::new(kw(k), "must be a non-negative integer"));
        }
    }
    for k in ["maximum", "minimum", "multipleOf"] {
        if let Some(x) = m.get(k)
            && !x.is_number()
        {
            issues.push(Issue::new(kw(k), "must be a number"));
        }
    }
    if let Some(x) = m.get("multipleOf")
        && x.as_f64().is_some_and(|f| f <= 0.0)
    {
        issues.push(Issue::new(kw("multipleOf"), "must be greater than 0"));
    }
    for k in [
        "exclusiveMaximum",
        "exclusiveMinimum",
        "nullable",
        "uniqueItems",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if let Some(x) = m.get(k)
            && !x.is_boolean()
        {
            issues.push(Issue::new(kw(k), "must be a boolean"));
        }
    }
    for k in ["title", "description", "format"] {
        if let Some(x) = m.get(k)
            && !x.is_string()
        {
            issues.push(Issue::new(kw(k), "must be a string"));
        }
    }
    if let Some(x) = m.get("enum")
        && !x.is_array()
    {
        issues.push(Issue::new(kw("enum"), "must be an array"));
    }
    if let Some(x) = m.get("required")
        && !x.as_array().is_some_and(|a| a.iter().all(Value::is_string))
    {
        issues.push(Issue::new(kw("required"), "must be an array of strings"));
    }
    if let Some(p) = m.get("pattern") {
        match p {
            Value::String(s) => {
                if let Err(e) = pattern::compile(s) {
                    issues.push(Issue::new(
                        kw("pattern"),
                        format!("must be a valid regular expression, but isn't: {e}"),
                    ));
                }
            }
            _ => issues.push(Issue::new(kw("pattern"), "must be a string")),
        }
    }
}

fn list_and_map_types(m: &Map<String, Value>, ptr: &str, ty: &str, issues: &mut Vec<Issue>) {
    let kw = |k: &str| push_pointer(ptr, k);
    if let Some(mt) = m.get("x-kubernetes-map-type") {
        if ty != "object" {
            issues.push(Issue::new(
                kw("type"),
                "must be object if x-kubernetes-map-type is specified",
            ));
        }
        if !matches!(mt.as_str(), Some("atomic" | "granular")) {
            issues.push(Issue::new(
                kw("x-kubernetes-map-type"),
                "supported values: \"atomic\", \"granular\"",
            ));
        }
    }
    let list_type = m.get("x-kubernetes-list-type");
    if let Some(lt) = list_type {
        if ty != "array" {
            issues.push(Issue::new(
                kw("type"),
                "must be array if x-kubernetes-list-type is specified",
            ));
        }
        match lt.as_str() {
            Some("atomic") => {}
            Some("set") => {
                if let Some(Value::Object(items)) = m.get("items") {
                    // Unset counts as not atomic where the items are of
                    // that shape (an object's map type, a list's list
                    // type), as kube-apiserver judges it.
                    let item_type = items.get("type").and_then(Value::as_str);
                    let non_atomic =
                        |k: &str, shape: &str| match items.get(k).and_then(Value::as_str) {
                            Some(s) => s != "atomic",
                            None => item_type == Some(shape),
                        };
                    if non_atomic("x-kubernetes-list-type", "array") {
                        issues.push(Issue::new(
                            push_pointer(&kw("items"), "x-kubernetes-list-type"),
                            "must be atomic as item of a list with x-kubernetes-list-type=set",
                        ));
                    }
                    if non_atomic("x-kubernetes-map-type", "object") {
                        issues.push(Issue::new(
                            push_pointer(&kw("items"), "x-kubernetes-map-type"),
                            "must be atomic as item of a list with x-kubernetes-list-type=set",
                        ));
                    }
                    if items.get("nullable") == Some(&Value::Bool(true)) {
                        issues.push(Issue::new(
                            push_pointer(&kw("items"), "nullable"),
                            "cannot be nullable when x-kubernetes-list-type is set",
                        ));
                    }
                }
            }
            Some("map") => {
                let keys: Vec<&str> = m
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if keys.is_empty() {
                    issues.push(Issue::new(
                        kw("x-kubernetes-list-map-keys"),
                        "must not be empty if x-kubernetes-list-type is map",
                    ));
                }
                let item_props = m
                    .get("items")
                    .and_then(|i| i.get("properties"))
                    .and_then(Value::as_object);
                if m.get("items")
                    .and_then(|i| i.get("type"))
                    .and_then(Value::as_str)
                    != Some("object")
                {
                    issues.push(Issue::new(
                        push_pointer(&kw("items"), "type"),
                        "must be object if parent array's x-kubernetes-list-type is map",
                    ));
                }
                let mut seen = std::collections::BTreeSet::new();
                for key in &keys {
                    let Some(prop) = item_props.and_then(|p| p.get(*key)) else {
                        issues.push(Issue::new(
                            kw("x-kubernetes-list-map-keys"),
                            "entries must all be names of item properties",
                        ));
                        break;
                    };
                    if matches!(
                        prop.get("type").and_then(Value::as_str),
                        Some("array" | "object")
                    ) {
                        let ptr = push_pointer(&push_pointer(&kw("items"), "properties"), key);
                        issues.push(Issue::new(
                            push_pointer(&ptr, "type"),
                            "must be a scalar type if parent array's x-kubernetes-list-type is map",
                        ));
                    }
                    if !seen.insert(*key) {
                        issues.push(Issue::new(
                            kw("x-kubernetes-list-map-keys"),
                            "must not contain duplicate entries",
                        ));
                        break;
                    }
                }
            }
            _ => issues.push(Issue::new(
                kw("x-kubernetes-list-type"),
                "supported values: \"atomic\", \"set\", \"map\"",
            )),
        }
    }
    if m.contains_key("x-kubernetes-list-map-keys")
        && list_type.and_then(Value::as_str) != Some("map")
    {
        issues.push(Issue::new(
            kw("x-kubernetes-list-type"),
            "must be map if x-kubernetes-list-map-keys is non-empty",
        ));
    }
}

/// Checks a schema under `allOf`/`anyOf`/`oneOf`/`not`: value validations
/// only, on properties/items the structural counterpart declares.
fn nested_value_validation(
    v: &Value,
    ptr: &str,
    structural: Option<&Value>,
    issues: &mut Vec<Issue>,
) {
    let Value::Object(m) = v else {
        issues.push(Issue::new(ptr, "must be a schema object"));
        return;
    };
    let kw = |k: &str| push_pointer(ptr, k);
    common_keywords(m, ptr, issues);
    for (k, x) in m {
        match k.as_str() {
            "type" => issues.push(Issue::new(kw(k), "must be empty to be structural")),
            "additionalProperties" => {
                issues.push(Issue::new(kw(k), "must be undefined to be structural"));
            }
            "default" => issues.push(Issue::new(kw(k), "must be undefined to be structural")),
            "title" | "description" => {
                issues.push(Issue::new(kw(k), "must be empty to be structural"));
            }
            "nullable" if x == &Value::Bool(true) => {
                issues.push(Issue::new(kw(k), "must be false to be structural"));
            }
            "x-kubernetes-preserve-unknown-fields"
            | "x-kubernetes-embedded-resource"
            | "x-kubernetes-int-or-string"
            | "x-kubernetes-list-type"
            | "x-kubernetes-list-map-keys"
            | "x-kubernetes-map-type"
            | "x-kubernetes-validations" => {
                issues.push(Issue::new(kw(k), "must be undefined to be structural"));
            }
            "uniqueItems" if x == &Value::Bool(true) => issues.push(Issue::new(
                kw(k),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )),
            "properties" => {
                let Value::Object(pm) = x else { continue };
                let pp = kw(k);
                for (name, sub) in pm {
                    let sp = push_pointer(&pp, name);
                    let counterpart = structural
                        .and_then(|s| s.get("properties"))
                        .and_then(|p| p.get(name));
                    if name == "metadata" {
                        issues.push(Issue::new(&sp, "must not be specified in a nested context"));
                    }
                    if counterpart.is_none() {
                        issues.push(Issue::new(
                            &sp,
                            "must also be specified in the structural part of the schema (outside allOf/anyOf/oneOf/not)",
                        ));
                    }
                    nested_value_validation(sub, &sp, counterpart, issues);
                }
            }
            "items" => {
                let counterpart = structural.and_then(|s| s.get("items"));
                if counterpart.is_none() {
                    issues.push(Issue::new(
                        kw(k),
                        "must also be specified in the structural part of the schema",
                    ));
                }
                nested_value_validation(x, &kw(k), counterpart, issues);
            }
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(branches) = x {
                    for (i, b) in branches.iter().enumerate() {
                        nested_value_validation(
                            b,
                            &push_pointer(&kw(k), &i.to_string()),
                            structural,
                            issues,
                        );
                    }
                }
            }
            "not" => nested_value_validation(x, &kw(k), structural, issues),
            other if !STRUCTURAL_KEYWORDS.contains(&other) => {
                issues.push(Issue::new(kw(other), forbidden_keyword_message(other)));
            }
            _ => {}
        }
    }
}

/// How an issue about a default the schema around it cannot check (a rule
/// or pattern there does not compile) begins: the compiler's own errors say
/// the cause, each at its place.
pub(crate) const DEFAULT_UNCHECKED: &str = "cannot check the default";

fn default_issues(node: &Value, default: &Value, ptr: &str, issues: &mut Vec<Issue>) {
    if default.is_null() {
        return;
    }
    let dp = push_pointer(ptr, "default");
    match check_default(node, default) {
        Ok((pruned, errors)) => {
            if pruned.is_some() {
                issues.push(Issue::new(&dp, "must not have unknown fields"));
            }
            for e in errors {
                issues.push(Issue::new(&dp, e.to_string()));
            }
        }
        Err(e) => issues.push(Issue::new(&dp, format!("{DEFAULT_UNCHECKED}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structural_schemas_pass() {
        let s = json!({"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true},
            "free": {"x-kubernetes-preserve-unknown-fields": true},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "auth": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                     "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
            "ios": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "size": {"type": "string", "default": "1Gi", "pattern": "^[0-9]+Gi$"}
        }});
        assert_eq!(check_structural(&s), Vec::<Issue>::new());
    }

    /// kube-apiserver's list-type checks: a set's object (or list) items
    /// must say they are atomic — unset is not enough — and a map list's
    /// keys must be distinct scalar properties of its items.
    #[test]
    fn set_items_must_be_atomic_and_map_keys_distinct_scalars() {
        let s = json!({"type": "object", "properties": {
            "objset": {"type": "array", "x-kubernetes-list-type": "set",
                       "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "listset": {"type": "array", "x-kubernetes-list-type": "set",
                        "items": {"type": "array", "items": {"type": "string"}}},
            "okset": {"type": "array", "x-kubernetes-list-type": "set",
                      "items": {"type": "object", "x-kubernetes-map-type": "atomic",
                                "properties": {"a": {"type": "string"}}}},
            "objkey": {"type": "array", "x-kubernetes-list-type": "map",
                       "x-kubernetes-list-map-keys": ["o"],
                       "items": {"type": "object", "required": ["o"], "properties": {
                           "o": {"type": "object", "properties": {"x": {"type": "string"}}}}}},
            "twice": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["k", "k"],
                      "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}}}
        }});
        let issues: Vec<String> = check_structural(&s)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            issues,
            [
                "/properties/listset/items/x-kubernetes-list-type: must be atomic as item of a list with x-kubernetes-list-type=set",
                "/properties/objkey/items/properties/o/type: must be a scalar type if parent array's x-kubernetes-list-type is map",
                "/properties/objset/items/x-kubernetes-map-type: must be atomic as item of a list with x-kubernetes-list-type=set",
                "/properties/twice/x-kubernetes-list-map-keys: must not contain duplicate entries",
            ]
        );
    }

    #[test]
    fn every_violation_is_reported() {
        let s = json!({"type": "object", "$schema": "x", "properties": {
            "untyped": {"description": "no type"},
            "nulls": {"type": ["string", "null"]},
            "list": {"type": "array"},
            "tuple": {"type": "array", "items": [{"type": "string"}]},
            "both": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "uniq": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "ref": {"$ref": "#/definitions/x"},
            "ios": {"type": "string", "x-kubernetes-int-or-string": true},
            "junctor": {"type": "object", "properties": {"a": {"type": "string"}},
                        "anyOf": [{"type": "object", "description": "d", "properties": {"z": {}}}]},
            "badpat": {"type": "string", "pattern": "(?=x)"},
            "baddefault": {"type": "integer", "default": "one"},
            "prunedefault": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"b": 1}},
            "cond": {"type": "string", "if": {}, "const": "x"}
        }});
        let issues: Vec<String> = check_structural(&s)
            .iter()
            .map(ToString::to_string)
            .collect();
        let expect = [
            "/$schema: $schema is not supported",
            "/properties/untyped/type: must not be empty",
            "/properties/nulls/type: must be a single type",
            "/properties/list/items: must be specified for type array",
            "/properties/tuple/items: items must be a schema object and not an array",
            "/properties/both/additionalProperties: additionalProperties and properties are mutual exclusive",
            "/properties/uniq/uniqueItems: uniqueItems cannot be set to true",
            "/properties/ref/$ref: $ref is not supported",
            "/properties/ios/type: must be empty if x-kubernetes-int-or-string is true",
            "/properties/junctor/anyOf/0/type: must be empty to be structural",
            "/properties/junctor/anyOf/0/description: must be empty to be structural",
            "/properties/junctor/anyOf/0/properties/z: must also be specified in the structural part",
            "/properties/badpat/pattern: must be a valid regular expression",
            r#"/properties/baddefault/default: default: Invalid value: "string": default in body must be of type integer: "string""#,
            "/properties/prunedefault/default: must not have unknown fields",
            r#"/properties/cond/if: unknown or unsupported keyword "if""#,
            "/properties/cond/const: const is not supported",
        ];
        for e in expect {
            assert!(
                issues.iter().any(|i| i.starts_with(e)),
                "missing {e:?} in {issues:#?}"
            );
        }
        assert_eq!(
            check_structural(&json!({"type": "string"}))[0].to_string(),
            r#"/type: must be object at the root, not "string""#
        );
    }
}
