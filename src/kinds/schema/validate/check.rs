//! The validation pass: kube-openapi's validators over an object (type,
//! `allOf`/`anyOf`/`oneOf`/`not`, strings and formats, lists, sets and map
//! lists, `enum`, objects and `required`), reporting every failure with
//! kube-apiserver's path and message. Numbers are checked in `numbers`.

use serde_json::{Map, Value};

use crate::golang::{self, quote as go_quote};

use super::super::formats;
use super::super::node_type::NodeType;
use super::CompiledSchema;
use super::compile::{Additional, ListType, NONE, Node, bit, is_meta_field};
use super::field_error::{FieldError, FieldErrorKind, push_field, push_index, push_key};
use super::numbers::{Num, check_number, is_json_integer};

impl CompiledSchema {
    /// Checks `v` against node `id`, which sits at `path`. On update, `old`
    /// is its old value where it correlates (kube-apiserver's
    /// `CRDValidationRatcheting`): every error of a node equal to its old
    /// value, its children's included, is dropped.
    pub(super) fn check(
        &self,
        id: u32,
        v: &Value,
        old: Option<&Value>,
        path: &mut String,
        errs: &mut Vec<FieldError>,
    ) {
        let before = errs.len();
        self.check_node(id, v, old, path, errs);
        // Equal as Go's reflect.DeepEqual finds them (an integer is not a
        // float).
        if errs.len() > before && old.is_some_and(|old| old == v) {
            errs.truncate(before);
        }
    }

    fn check_node(
        &self,
        id: u32,
        v: &Value,
        old: Option<&Value>,
        path: &mut String,
        errs: &mut Vec<FieldError>,
    ) {
        let n = self.node(id);
        // typeValidator
        if let Some((type_name, found)) = type_mismatch(n, v) {
            errs.push(FieldError::new(
                path,
                FieldErrorKind::TypeInvalid,
                Some(Value::String(found.to_string())),
                format!(
                    "{} in body must be of type {}: {}",
                    path,
                    type_name,
                    go_quote(found)
                ),
            ));
        }
        if v.is_null() {
            if !n.nullable {
                self.check_enum(n, v, path, errs);
            }
            return;
        }
        // schemaPropsValidator
        if !(n.all_of.is_empty() && n.any_of.is_empty() && n.one_of.is_empty() && n.not.is_none()) {
            self.check_junctors(n, v, path, errs);
        }
        match v {
            Value::String(s) => self.check_string(n, s, path, errs),
            Value::Number(num) => check_number(n, num, path, errs),
            Value::Array(items) => self.check_array(n, items, old, path, errs),
            _ => {}
        }
        self.check_enum(n, v, path, errs);
        if let Value::Object(obj) = v {
            self.check_object(n, obj, old.and_then(Value::as_object), path, errs);
        }
    }

    fn check_junctors(&self, n: &Node, v: &Value, path: &mut String, errs: &mut Vec<FieldError>) {
        let junctor_error = |path: &str, msg: String| {
            FieldError::new(
                path,
                FieldErrorKind::Invalid,
                Some(Value::String(String::new())),
                msg,
            )
        };
        if !n.any_of.is_empty() {
            let mut best: Option<Vec<FieldError>> = None;
            let mut ok = false;
            for &b in n.any_of.iter() {
                let mut tmp = Vec::new();
                self.check(b, v, None, path, &mut tmp);
                if tmp.is_empty() {
                    ok = true;
                    break;
                }
                if best.as_ref().is_none_or(|x| tmp.len() < x.len()) {
                    best = Some(tmp);
                }
            }
            if !ok {
                errs.push(junctor_error(
                    path,
                    format!(
                        "{} must validate at least one schema (anyOf)",
                        go_quote(path)
                    ),
                ));
                errs.extend(best.unwrap_or_default());
            }
        }
        if !n.one_of.is_empty() {
            let mut best: Option<Vec<FieldError>> = None;
            let mut validated = 0usize;
            for &b in n.one_of.iter() {
                let mut tmp = Vec::new();
                self.check(b, v, None, path, &mut tmp);
                if tmp.is_empty() {
                    validated += 1;
                    best = None;
                } else if validated == 0 && best.as_ref().is_none_or(|x| tmp.len() < x.len()) {
                    best = Some(tmp);
                }
            }
            if validated != 1 {
                let extra = if validated == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {validated} valid alternatives")
                };
                errs.push(junctor_error(
                    path,
                    format!(
                        "{} must validate one and only one schema (oneOf). {extra}",
                        go_quote(path)
                    ),
                ));
                errs.extend(best.unwrap_or_default());
            }
        }
        if !n.all_of.is_empty() {
            let mut validated = 0usize;
            for &b in n.all_of.iter() {
                let before = errs.len();
                self.check(b, v, None, path, errs);
                if errs.len() == before {
                    validated += 1;
                }
            }
            if validated != n.all_of.len() {
                let extra = if validated == 0 {
                    ". None validated"
                } else {
                    ""
                };
                errs.push(junctor_error(
                    path,
                    format!(
                        "{} must validate all the schemas (allOf){extra}",
                        go_quote(path)
                    ),
                ));
            }
        }
        if let Some(b) = n.not {
            let mut tmp = Vec::new();
            self.check(b, v, None, path, &mut tmp);
            if tmp.is_empty() {
                errs.push(junctor_error(
                    path,
                    format!("{} must not validate the schema (not)", go_quote(path)),
                ));
            }
        }
    }

    fn check_string(&self, n: &Node, s: &str, path: &str, errs: &mut Vec<FieldError>) {
        // stringValidator: the first failing check only.
        let len = || i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
        let bad = || Some(Value::String(s.to_string()));
        if let Some(max) = n.max_length
            && len() > max
        {
            let unit = if max == 1 { "byte" } else { "bytes" };
            errs.push(FieldError::new(
                path,
                FieldErrorKind::TooLong,
                None,
                format!("may not be more than {max} {unit}"),
            ));
        } else if let Some(min) = n.min_length
            && len() < min
        {
            errs.push(FieldError::new(
                path,
                FieldErrorKind::Invalid,
                bad(),
                format!("{path} in body should be at least {min} chars long"),
            ));
        } else if let Some((re, src)) = &n.pattern
            && !re.is_match(s)
        {
            errs.push(FieldError::new(
                path,
                FieldErrorKind::Invalid,
                bad(),
                format!("{path} in body should match '{src}'"),
            ));
        }
        // formatValidator
        if let Some(f) = n.string_format
            && !formats::check(f, s)
        {
            errs.push(FieldError::new(
                path,
                FieldErrorKind::TypeInvalid,
                bad(),
                format!(
                    "{path} in body must be of type {}: {}",
                    n.format,
                    go_quote(s)
                ),
            ));
        }
    }

    fn check_array(
        &self,
        n: &Node,
        items: &[Value],
        old: Option<&Value>,
        path: &mut String,
        errs: &mut Vec<FieldError>,
    ) {
        if let Some(item) = n.items {
            let base = path.len();
            for (i, child) in items.iter().enumerate() {
                push_index(path, i);
                let old_item = correlated_item(&n.list_type, child, old);
                self.check(item, child, old_item, path, errs);
                path.truncate(base);
            }
        }
        let size = items.len() as i64;
        check_size(path, size, n.min_items, n.max_items, "items", errs);
        match &n.list_type {
            ListType::Atomic => {}
            ListType::Set => {
                for i in duplicate_indices(items, set_equal) {
                    let mut p = path.clone();
                    push_index(&mut p, i);
                    errs.push(FieldError::new(
                        &p,
                        FieldErrorKind::Duplicate,
                        Some(items[i].clone()),
                        String::new(),
                    ));
                }
            }
            ListType::Map(keys) => self.check_list_map(keys, items, path, errs),
        }
    }

    fn check_list_map(
        &self,
        keys: &[String],
        items: &[Value],
        path: &str,
        errs: &mut Vec<FieldError>,
    ) {
        for (i, x) in items.iter().enumerate() {
            if !(x.is_null() || x.is_object()) {
                let mut p = path.to_string();
                push_index(&mut p, i);
                errs.push(FieldError::new(
                    &p,
                    FieldErrorKind::Invalid,
                    Some(x.clone()),
                    "must be an object for an array of list-type map".to_string(),
                ));
                return;
            }
        }
        let key_of = |x: &Value| -> Value {
            let mut key = Map::new();
            if let Value::Object(o) = x {
                for k in keys {
                    if let Some(v) = o.get(k) {
                        key.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(key)
        };
        if items.len() <= 1 {
            return;
        }
        let key_values: Vec<Value> = items.iter().map(key_of).collect();
        for i in duplicate_indices(&key_values, json_equal) {
            let mut p = path.to_string();
            push_index(&mut p, i);
            errs.push(FieldError::new(
                &p,
                FieldErrorKind::Duplicate,
                Some(key_values[i].clone()),
                String::new(),
            ));
        }
    }

    fn check_enum(&self, n: &Node, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
        let Some(values) = &n.enum_values else { return };
        if values.is_empty() || (!v.is_null() && values.iter().any(|e| json_equal(e, v))) {
            return;
        }
        let supported: Vec<String> = values
            .iter()
            .map(|e| match e {
                Value::String(s) => go_quote(s),
                other => go_quote(&golang::marshal(other)),
            })
            .collect();
        errs.push(FieldError::new(
            path,
            FieldErrorKind::NotSupported,
            Some(v.clone()),
            format!("supported values: {}", supported.join(", ")),
        ));
    }

    fn check_object(
        &self,
        n: &Node,
        obj: &Map<String, Value>,
        old: Option<&Map<String, Value>>,
        path: &mut String,
        errs: &mut Vec<FieldError>,
    ) {
        check_size(
            path,
            obj.len() as i64,
            n.min_properties,
            n.max_properties,
            "properties",
            errs,
        );
        let base = path.len();
        let mut seen_required = 0u64;
        for (k, child) in obj {
            if n.embedded && is_meta_field(k) {
                continue;
            }
            if let Some(p) = n.prop(k) {
                seen_required |= bit(p.required_idx);
                push_field(path, k);
                self.check(p.id, child, old.and_then(|o| o.get(k)), path, errs);
                path.truncate(base);
                continue;
            }
            match n.additional {
                Additional::Schema(a) => {
                    push_key(path, k);
                    self.check(a, child, old.and_then(|o| o.get(k)), path, errs);
                    path.truncate(base);
                }
                Additional::Deny => {
                    let mut shown = path.clone();
                    push_field(&mut shown, k);
                    errs.push(FieldError::new(
                        path,
                        FieldErrorKind::Invalid,
                        Some(Value::String(k.clone())),
                        format!("{shown} in body is a forbidden property"),
                    ));
                }
                Additional::Absent | Additional::Allow => {}
            }
        }
        for (i, name) in n.required.iter().enumerate() {
            let i = u16::try_from(i).unwrap_or(NONE);
            if seen_required & bit(i) != 0 {
                continue;
            }
            // Declared required properties with an index below 64 were
            // tracked above; anything else needs a lookup.
            let tracked = i < 64 && n.prop(name).is_some_and(|p| p.required_idx == i);
            if tracked || !obj.contains_key(name.as_ref()) {
                let mut p = path.clone();
                push_field(&mut p, name);
                errs.push(FieldError::new(
                    &p,
                    FieldErrorKind::Required,
                    None,
                    String::new(),
                ));
            }
        }
    }
}

/// `minItems`/`maxItems` of a list, or `minProperties`/`maxProperties` of
/// an object (`what`: `items` or `properties`), with kube-openapi's messages
/// (a map's excess is counted in items too).
fn check_size(
    path: &str,
    size: i64,
    min: Option<i64>,
    max: Option<i64>,
    what: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(min) = min
        && size < min
    {
        errs.push(FieldError::new(
            path,
            FieldErrorKind::Invalid,
            Some(Value::from(size)),
            format!("{path} in body should have at least {min} {what}"),
        ));
    }
    if let Some(max) = max
        && size > max
    {
        let unit = if max == 1 { "item" } else { "items" };
        errs.push(FieldError::new(
            path,
            FieldErrorKind::TooMany,
            Some(Value::from(size)),
            format!("must have at most {max} {unit}"),
        ));
    }
}

/// kube-openapi's type check; returns the expected type name and the name of
/// what was found when the value does not fit.
fn type_mismatch<'n>(n: &'n Node, v: &Value) -> Option<(&'n str, &'static str)> {
    if n.ty == NodeType::Any {
        return None;
    }
    let type_name = n.ty.message_name();
    let (found, go_format) = match v {
        Value::Null => {
            return (!n.nullable).then_some((type_name, "null"));
        }
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(num) => match Num::from(num) {
            Num::I(_) => ("integer", "int64"),
            Num::F(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
    };
    let is_float_int = match v {
        Value::Number(num) => match Num::from(num) {
            Num::F(f) => is_json_integer(f) && n.ty.contains("integer"),
            Num::I(_) => false,
        },
        _ => false,
    };
    let is_int_float = found == "integer" && n.ty.contains("number");
    let str_or_slice = matches!(v, Value::String(_) | Value::Array(_));
    let format: &str = &n.format;
    if !(str_or_slice
        || format.is_empty()
        || n.ty.contains(found)
        || go_format == format
        || is_float_int
        || is_int_float)
    {
        // kube-openapi names the format (any it supports: the others were
        // stripped at compile time) and Go's format of the value, empty for
        // booleans and objects: `must be of type uri: "int64"`.
        return Some((format, go_format));
    }
    if str_or_slice && !(n.ty == NodeType::Integer || n.ty == NodeType::Number || format.is_empty())
    {
        return None;
    }
    (!(n.ty.contains(found) || is_float_int || is_int_float)).then_some((type_name, found))
}

/// The old value of list item `item` where kube-apiserver correlates one:
/// in a `map` list, the old item with the same keys; items of other lists
/// have none.
pub(super) fn correlated_item<'a>(
    list_type: &ListType,
    item: &Value,
    old: Option<&'a Value>,
) -> Option<&'a Value> {
    let ListType::Map(keys) = list_type else {
        return None;
    };
    old.and_then(Value::as_array)?.iter().find(|o| {
        keys.iter()
            .all(|k| o.get(k.as_str()) == item.get(k.as_str()))
    })
}

/// Equality of enum members and list-map keys: numbers by value, objects
/// regardless of key order.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (Num::from(x), Num::from(y)) {
            (Num::I(i), Num::I(j)) => i == j,
            (p, q) => p.as_f64() == q.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| json_equal(p, q)))
        }
        _ => a == b,
    }
}

/// Equality of `x-kubernetes-list-type: set` members: Go interface equality
/// for scalars (an integer never equals a float), JSON text for compounds.
fn set_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (Num::from(x), Num::from(y)) {
            (Num::I(i), Num::I(j)) => i == j,
            (Num::F(p), Num::F(q)) => p == q,
            _ => false,
        },
        (Value::Array(_) | Value::Object(_), _) => json_equal(a, b),
        _ => a == b,
    }
}

/// Indices where a value is seen for the second time (Kubernetes reports
/// each duplicated value once).
fn duplicate_indices(items: &[Value], eq: fn(&Value, &Value) -> bool) -> Vec<usize> {
    let mut out = Vec::new();
    if items.len() <= 1 {
        return out;
    }
    for i in 1..items.len() {
        let seen = items[..i].iter().filter(|p| eq(p, &items[i])).count();
        if seen == 1 {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::FieldErrorKind;
    use super::super::tests::{errors, one, replicas_schema, run};
    use serde_json::json;

    #[test]
    fn type_errors_match_kube_apiserver() {
        let e = one(replicas_schema(), json!({"replicas": "string"}));
        assert_eq!(e.field, "spec.replicas");
        assert_eq!(e.kind, FieldErrorKind::TypeInvalid);
        assert_eq!(e.kind.reason(), "FieldValueTypeInvalid");
        assert_eq!(e.bad_value, Some(json!("string")));
        assert_eq!(
            e.message(),
            r#"Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        );
        assert_eq!(
            e.to_string(),
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        );
        let e = one(
            json!({"type": "object", "properties": {"on": {"type": "boolean"}}}),
            json!({"on": {"a": 1}}),
        );
        assert_eq!(
            e.to_string(),
            r#"spec.on: Invalid value: "object": spec.on in body must be of type boolean: "object""#
        );
    }

    #[test]
    fn enum_is_not_supported_with_quoted_values() {
        let s = json!({"type": "object", "properties": {
            "size": {"type": "string", "enum": ["small", "medium"]},
            "level": {"type": "integer", "enum": [1, 2]}
        }});
        let e = one(s.clone(), json!({"size": "big"}));
        assert_eq!(e.kind, FieldErrorKind::NotSupported);
        assert_eq!(e.kind.reason(), "FieldValueNotSupported");
        assert_eq!(
            e.to_string(),
            r#"spec.size: Unsupported value: "big": supported values: "small", "medium""#
        );
        assert_eq!(
            errors(s.clone(), json!({"level": 3})),
            [r#"spec.level: Unsupported value: 3: supported values: "1", "2""#]
        );
        // Numerically equal members match.
        assert!(errors(s, json!({"level": 2.0})).is_empty());
    }

    #[test]
    fn required_and_nested_paths() {
        let s = json!({"type": "object", "required": ["storage"], "properties": {
            "storage": {"type": "object", "required": ["size"], "properties": {
                "size": {"type": "string"}, "class": {"type": "string"}
            }},
            "users": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "minLength": 1}
            }}}
        }});
        let e = one(s.clone(), json!({"storage": {"class": "fast"}}));
        assert_eq!(e.field, "spec.storage.size");
        assert_eq!(e.kind, FieldErrorKind::Required);
        assert_eq!(e.kind.reason(), "FieldValueRequired");
        assert_eq!(e.bad_value, None);
        assert_eq!(e.to_string(), "spec.storage.size: Required value");
        assert_eq!(
            errors(s.clone(), json!({})),
            ["spec.storage: Required value"]
        );
        let errs = errors(
            s,
            json!({"storage": {"size": "1Gi"}, "users": [{"name": "a"}, {"name": "b"}, {}, {"name": ""}]}),
        );
        assert_eq!(
            errs,
            [
                "spec.users[2].name: Required value",
                r#"spec.users[3].name: Invalid value: "": spec.users[3].name in body should be at least 1 chars long"#,
            ]
        );
    }

    #[test]
    fn strings_report_the_first_failure_and_count_code_points() {
        let s = json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 3, "minLength": 2, "pattern": "^[a-z]+$"},
            "one": {"type": "string", "maxLength": 1}
        }});
        let e = one(s.clone(), json!({"name": "abcd"}));
        assert_eq!(e.kind, FieldErrorKind::TooLong);
        assert_eq!(e.kind.reason(), "FieldValueTooLong");
        assert_eq!(
            e.to_string(),
            "spec.name: Too long: may not be more than 3 bytes"
        );
        assert_eq!(
            errors(s.clone(), json!({"one": "ab"})),
            ["spec.one: Too long: may not be more than 1 byte"]
        );
        // Three code points (six bytes) fit maxLength 3 and fail the pattern.
        assert_eq!(
            errors(s.clone(), json!({"name": "äöü"})),
            [r#"spec.name: Invalid value: "äöü": spec.name in body should match '^[a-z]+$'"#]
        );
        assert_eq!(
            errors(s, json!({"name": "a"})),
            [r#"spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long"#]
        );
    }

    /// Found by the differential test against kube-apiserver: a value of
    /// another JSON type for a string with a (supported) format is reported
    /// with the format's name and Go's format of the value.
    #[test]
    fn wrong_types_for_formatted_strings_name_the_format() {
        let s = json!({"type": "object", "properties": {
            "url": {"type": "string", "format": "uri"},
            "custom": {"type": "string", "format": "my-own-format"}
        }});
        assert_eq!(
            errors(s.clone(), json!({"url": 7})),
            [r#"spec.url: Invalid value: "int64": spec.url in body must be of type uri: "int64""#]
        );
        assert_eq!(
            errors(s.clone(), json!({"url": 1.5})),
            [
                r#"spec.url: Invalid value: "float64": spec.url in body must be of type uri: "float64""#
            ]
        );
        assert_eq!(
            errors(s.clone(), json!({"url": {}})),
            [r#"spec.url: Invalid value: "": spec.url in body must be of type uri: """#]
        );
        assert_eq!(
            errors(s.clone(), json!({"url": true})),
            [r#"spec.url: Invalid value: "": spec.url in body must be of type uri: """#]
        );
        // kube-openapi skips the type check of a list for a formatted string.
        assert!(errors(s.clone(), json!({"url": ["a"]})).is_empty());
        // An unsupported format is stripped: a plain string's errors.
        assert_eq!(
            errors(s, json!({"custom": 7})),
            [
                r#"spec.custom: Invalid value: "integer": spec.custom in body must be of type string: "integer""#
            ]
        );
    }

    #[test]
    fn formats_are_type_errors() {
        let s = json!({"type": "object", "properties": {
            "when": {"type": "string", "format": "date-time"},
            "ip": {"type": "string", "format": "ipv4"},
            "secret": {"type": "string", "format": "password"},
            "custom": {"type": "string", "format": "my-own-format"},
            "ratio": {"type": "number", "format": "float"}
        }});
        let e = one(s.clone(), json!({"when": "yesterday"}));
        assert_eq!(e.kind, FieldErrorKind::TypeInvalid);
        assert_eq!(
            e.to_string(),
            r#"spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday""#
        );
        assert!(
            errors(
                s.clone(),
                json!({"when": "2024-01-02T03:04:05Z", "ip": "10.0.0.1", "secret": "x", "custom": "anything", "ratio": 0.5})
            )
            .is_empty()
        );
        assert_eq!(
            errors(s.clone(), json!({"ip": "999.1.1.1"})),
            [
                r#"spec.ip: Invalid value: "999.1.1.1": spec.ip in body must be of type ipv4: "999.1.1.1""#
            ]
        );
        assert_eq!(
            errors(s, json!({"ratio": 1e39})),
            [
                r#"<nil>: Invalid value: "": Checked value must be of type number with format float in spec.ratio"#
            ]
        );
    }

    #[test]
    fn list_sizes_and_sets() {
        let s = json!({"type": "object", "properties": {
            "tags": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "string"},
                     "x-kubernetes-list-type": "set"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}
        }});
        let e = one(s.clone(), json!({"tags": ["a", "b", "c", "d"]}));
        assert_eq!(e.kind, FieldErrorKind::TooMany);
        assert_eq!(e.kind.reason(), "FieldValueTooMany");
        assert_eq!(
            e.to_string(),
            "spec.tags: Too many: 4: must have at most 3 items"
        );
        assert_eq!(
            errors(s.clone(), json!({"tags": ["a"]})),
            ["spec.tags: Invalid value: 1: spec.tags in body should have at least 2 items"]
        );
        let e = one(s.clone(), json!({"tags": ["a", "b", "a"]}));
        assert_eq!(e.kind, FieldErrorKind::Duplicate);
        assert_eq!(e.kind.reason(), "FieldValueDuplicate");
        assert_eq!(e.to_string(), r#"spec.tags[2]: Duplicate value: "a""#);
        assert_eq!(
            errors(
                s,
                json!({"ports": [{"name": "http", "port": 80}, {"name": "https"}, {"name": "http", "port": 8080}]})
            ),
            [r#"spec.ports[2]: Duplicate value: {"name":"http"}"#]
        );
    }

    #[test]
    fn map_keys_are_dotted_as_kube_openapi_writes_them() {
        let s = json!({"type": "object", "properties": {
            "labels": {"type": "object", "maxProperties": 2, "additionalProperties": {"type": "string", "maxLength": 5}},
            "strict": {"type": "object", "additionalProperties": false},
            "sized": {"type": "object", "minProperties": 1, "x-kubernetes-preserve-unknown-fields": true}
        }});
        let errs = errors(
            s.clone(),
            json!({"labels": {"foo": "toolong", "bar": 1, "baz": "ok"}}),
        );
        assert_eq!(
            errs,
            [
                "spec.labels: Too many: 3: must have at most 2 items",
                r#"spec.labels.bar: Invalid value: "integer": spec.labels.bar in body must be of type string: "integer""#,
                "spec.labels.foo: Too long: may not be more than 5 bytes",
            ]
        );
        assert_eq!(
            errors(s.clone(), json!({"strict": {"x": 1}})),
            [r#"spec.strict: Invalid value: "x": spec.strict.x in body is a forbidden property"#]
        );
        assert_eq!(
            errors(s, json!({"sized": {}})),
            ["spec.sized: Invalid value: 0: spec.sized in body should have at least 1 properties"]
        );
    }

    #[test]
    fn int_or_string_and_nullable() {
        let s = json!({"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true},
            "note": {"type": "string", "nullable": true},
            "list": {"type": "array", "items": {"type": "string"}},
            "choice": {"type": "string", "nullable": true, "enum": ["a"]}
        }});
        assert!(errors(s.clone(), json!({"port": 80})).is_empty());
        assert!(errors(s.clone(), json!({"port": "http"})).is_empty());
        assert_eq!(
            errors(s.clone(), json!({"port": true})),
            [
                r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#
            ]
        );
        let (v, errs, _) = run(s.clone(), json!({"note": null, "choice": null}));
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(v, json!({"note": null, "choice": null}));
        assert_eq!(
            errors(s, json!({"list": ["a", null]})),
            [
                r#"spec.list[1]: Invalid value: "null": spec.list[1] in body must be of type string: "null""#
            ]
        );
    }

    #[test]
    fn every_error_is_reported_in_path_order() {
        let s = json!({"type": "object", "required": ["a"], "properties": {
            "list": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "b": {"type": "string"},
            "a": {"type": "string"}
        }});
        let mut list = vec![json!(1); 12];
        list[2] = json!(-1);
        list[10] = json!(-5);
        let errs = errors(s, json!({"list": list, "b": 3}));
        assert_eq!(
            errs,
            [
                "spec.a: Required value",
                r#"spec.b: Invalid value: "integer": spec.b in body must be of type string: "integer""#,
                "spec.list[2]: Invalid value: -1: spec.list[2] in body should be greater than or equal to 0",
                "spec.list[10]: Invalid value: -5: spec.list[10] in body should be greater than or equal to 0",
            ]
        );
    }

    #[test]
    fn junctors_report_kube_openapi_messages() {
        let s = json!({"type": "object", "properties": {
            "auth": {"type": "object", "properties": {
                "password": {"type": "string"}, "secretRef": {"type": "string"}
            }, "oneOf": [{"required": ["password"]}, {"required": ["secretRef"]}]},
            "n": {"type": "integer", "not": {"enum": [7]},
                  "anyOf": [{"minimum": 100}, {"maximum": 10}]}
        }});
        assert!(errors(s.clone(), json!({"auth": {"password": "x"}})).is_empty());
        assert_eq!(
            errors(
                s.clone(),
                json!({"auth": {"password": "x", "secretRef": "y"}})
            ),
            [
                r#"spec.auth: Invalid value: "": "spec.auth" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
            ]
        );
        assert_eq!(
            errors(s.clone(), json!({"auth": {}})),
            [
                r#"spec.auth: Invalid value: "": "spec.auth" must validate one and only one schema (oneOf). Found none valid"#,
                "spec.auth.password: Required value",
            ]
        );
        assert_eq!(
            errors(s.clone(), json!({"n": 50})),
            [
                r#"spec.n: Invalid value: "": "spec.n" must validate at least one schema (anyOf)"#,
                "spec.n: Invalid value: 50: spec.n in body should be greater than or equal to 100",
            ]
        );
        assert_eq!(
            errors(s, json!({"n": 7})),
            [r#"spec.n: Invalid value: "": "spec.n" must not validate the schema (not)"#]
        );
    }
}
