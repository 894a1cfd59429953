//! The assemble pass: the structural node written out from the collected
//! keywords and the decided type, in canonical key order: keywords for the
//! type (numbers, strings, arrays with their items, objects with their
//! properties, `additionalProperties` and `patternProperties`), extensions,
//! the junctors kept as value validations, and the default, checked against
//! the finished node.

use serde_json::{Map, Number, Value};

use super::super::issue::push_pointer;
use super::super::node_type::NodeType;
use super::super::validate::check_default;
use super::super::{formats, pattern};
use super::collect::{Acc, insert_bound};
use super::{Converter, preserve_map};

impl<'a> Converter<'a> {
    pub(super) fn assemble(&mut self, mut acc: Acc<'a>, node_ptr: &str) -> Map<String, Value> {
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
        let ty = match self.decide_type(&mut acc, node_ptr) {
            Some(k) => k,
            None => {
                let k = self.infer_type(&acc, enum_values.as_deref(), node_ptr);
                // Not worth a warning when the field asks for any value itself.
                if k == NodeType::Any && !node_ptr.is_empty() && !acc.preserve {
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
        if let Some(name) = ty.name() {
            out.insert("type".into(), name.into());
        }
        if ty == NodeType::IntOrString {
            out.insert("x-kubernetes-int-or-string".into(), true.into());
        }
        if acc.nullable {
            out.insert("nullable".into(), true.into());
        }
        if let Some(t) = acc.title.take() {
            out.insert("title".into(), t);
        }
        let description = acc.description.take();
        match (description, acc.option_source.take()) {
            (d, Some(source)) => {
                let hint = format!("Choices: the Cozystack dashboard's {source:?} options.");
                let text = match d.as_ref().and_then(Value::as_str) {
                    Some(d) if !d.is_empty() => format!("{} {hint}", d.trim_end()),
                    _ => hint,
                };
                out.insert("description".into(), text.into());
            }
            (Some(d), None) => {
                out.insert("description".into(), d);
            }
            (None, None) => {}
        }
        if let Some((f, fp)) = acc.format.take() {
            let keep = match ty {
                NodeType::Integer => formats::is_numeric_format("integer", &f),
                NodeType::Number => formats::is_numeric_format("number", &f),
                k if k.has_strings() => true,
                _ => false,
            };
            if keep {
                if ty.has_strings() && formats::lookup(&f).is_none() {
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
        if ty.has_numbers() {
            self.numeric_keywords(&mut acc, ty, &mut out);
        }
        if ty.has_strings() {
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
        if ty.has_arrays() {
            self.array_keywords(&mut acc, ty, &mut out);
        }
        // Keywords for other types have no effect in JSON Schema either, so
        // dropping them loses nothing.
        if ty.has_objects() {
            self.object_keywords(&mut acc, ty, &mut out, node_ptr);
        }
        if ty == NodeType::Any {
            out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        }
        if acc.embedded && ty == NodeType::Object {
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

    fn numeric_keywords(&mut self, acc: &mut Acc<'a>, ty: NodeType, out: &mut Map<String, Value>) {
        let integer = ty == NodeType::Integer;
        for (bound, lower) in [(acc.lower.take(), true), (acc.upper.take(), false)] {
            if let Some((n, excl)) = bound {
                let bound = if integer {
                    integral_bound(&n, excl, lower)
                } else {
                    (n, excl)
                };
                insert_bound(out, bound, lower);
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

    fn array_keywords(&mut self, acc: &mut Acc<'a>, ty: NodeType, out: &mut Map<String, Value>) {
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
        if ty == NodeType::Array || items_schema.is_some() {
            let mut items = items_schema.unwrap_or_else(preserve_map);
            if let Some(up) = acc.unique.take() {
                let nullable = items.get("nullable") == Some(&Value::Bool(true));
                if ty != NodeType::Array {
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

    fn object_keywords(
        &mut self,
        acc: &mut Acc<'a>,
        ty: NodeType,
        out: &mut Map<String, Value>,
        node_ptr: &str,
    ) {
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
        } else if ty == NodeType::Object && !has_props && !acc.embedded {
            // An object without declared fields: keep whatever it holds,
            // and say so unless the schema asked for exactly that.
            if !acc.preserve {
                self.warn(
                    node_ptr,
                    "type object without properties: its keys and values are kept but not checked (x-kubernetes-preserve-unknown-fields)",
                );
            }
            preserve = true;
        }
        if preserve && ty == NodeType::Object {
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
        let d = match check_default(&node, &d) {
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
                d
            }
            Err(e) => {
                self.warn(
                    dp,
                    format!("the default could not be checked ({e}); kept as is"),
                );
                d
            }
        };
        // `default` follows the node's header keywords.
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
    use super::super::super::issue::Issue;
    use super::super::super::validate::CompiledSchema;
    use super::super::tests::{conv, has_warning, prop, spec};
    use serde_json::json;

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
        // A typed object without properties is widened too, and says so;
        // one that asks for preserve-unknown-fields itself is not warned about.
        assert!(has_warning(
            &c,
            "/properties/obj",
            "type object without properties: its keys and values are kept but not checked"
        ));
        assert_eq!(c.warnings.len(), 4, "{:?}", c.warnings);
        let asked = conv(spec(json!({
            "bag": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "quantity": {"pattern": "^[0-9]+m?$", "x-kubernetes-preserve-unknown-fields": true}
        })));
        assert!(asked.warnings.is_empty(), "{:?}", asked.warnings);
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
}
