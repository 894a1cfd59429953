//! The typing pass: a node's type decided from its `type` keywords and the
//! types of folded unions (intersected, `null` becoming `nullable`,
//! `[integer, string]` becoming int-or-string), or inferred when no type is
//! given (from properties, items, enum members, the default or validation
//! keywords), warning where that narrows what JSON Schema accepted.

use std::collections::BTreeSet;

use serde_json::Value;

use super::super::formats;
use super::super::node_type::{NodeType, json_type_of};
use super::Converter;
use super::collect::{Acc, Deferred};

impl<'a> Converter<'a> {
    /// Decides the node's type from explicit and union types.
    pub(super) fn decide_type(&mut self, acc: &mut Acc<'a>, node_ptr: &str) -> Option<NodeType> {
        if acc.int_or_string {
            return Some(NodeType::IntOrString);
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
                NodeType::Any
            }
            [one] => match NodeType::from_name(one) {
                Some(k) => k,
                None => {
                    self.warn(
                        &p,
                        format!("unknown type {one:?}; the field accepts any value"),
                    );
                    NodeType::Any
                }
            },
            ["integer", "string"] => NodeType::IntOrString,
            _ => {
                self.warn(
                    if p.is_empty() { node_ptr } else { &p },
                    format!(
                        "type union {} cannot be expressed in a structural schema; the field accepts any value (x-kubernetes-preserve-unknown-fields)",
                        join_types(&set)
                    ),
                );
                NodeType::Any
            }
        })
    }

    /// Infers a type for a node without `type`.
    pub(super) fn infer_type(
        &mut self,
        acc: &Acc<'a>,
        enum_values: Option<&[Value]>,
        node_ptr: &str,
    ) -> NodeType {
        if !acc.props.is_empty()
            || !acc.additional.is_empty()
            || !acc.pattern_props.is_empty()
            || !acc.required.is_empty()
            || acc.min_properties.is_some()
            || acc.max_properties.is_some()
            || !acc.dep_required.is_empty()
            || acc.embedded
        {
            return NodeType::Object;
        }
        if !acc.items.is_empty()
            || !acc.tuples.is_empty()
            || acc.min_items.is_some()
            || acc.max_items.is_some()
            || acc.unique.is_some()
        {
            return NodeType::Array;
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
            return NodeType::Object;
        }
        let from_values = |vals: &[&Value]| -> Option<NodeType> {
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
                Some(t) if kinds.len() == 1 => NodeType::from_name(t),
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
        // A field without a type that asks for any value itself
        // (`x-kubernetes-preserve-unknown-fields`, as this converter writes
        // a union such as a quantity's `[string, number]`) keeps any value:
        // its keywords constrain the values of their type only, as in a
        // CRD, and its default takes no type for the field.
        if acc.preserve {
            return NodeType::Any;
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
        let keyword_type =
            if acc.min_length.is_some() || acc.max_length.is_some() || !acc.patterns.is_empty() {
                Some(NodeType::String)
            } else if acc.lower.is_some() || acc.upper.is_some() || acc.multiple_of.is_some() {
                Some(NodeType::Number)
            } else {
                match acc.format.as_ref().map(|(f, _)| f.as_str()) {
                    Some("int32" | "int64") => Some(NodeType::Integer),
                    Some("float" | "double") => Some(NodeType::Number),
                    Some(f) if formats::lookup(f).is_some() => Some(NodeType::String),
                    _ => None,
                }
            };
        if let Some(k) = keyword_type {
            self.warn(
                node_ptr,
                format!(
                    "no type given; inferred {} from its validation keywords",
                    k.name().unwrap_or("")
                ),
            );
            return k;
        }
        NodeType::Any
    }
}

pub(super) fn join_types(set: &BTreeSet<String>) -> String {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{conv, has_warning, prop, spec};
    use serde_json::json;

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
    fn types_are_inferred() {
        let c = conv(json!({"properties": {
            "a": {"properties": {"x": {"type": "string"}}},
            "b": {"items": {"type": "string"}},
            "c": {"enum": ["x", "y"]},
            "d": {"const": 3},
            "e": {"default": true},
            "f": {"maxLength": 3},
            "g": {"enum": [1, "one"]},
            "h": {"pattern": "^[0-9]+m?$", "x-kubernetes-preserve-unknown-fields": true},
            "i": {"default": "1", "x-kubernetes-preserve-unknown-fields": true}
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
        // Any value, as it asks: the pattern holds for strings only.
        assert_eq!(
            prop(&c, "h"),
            json!({"pattern": "^[0-9]+m?$", "x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            prop(&c, "i"),
            json!({"default": "1", "x-kubernetes-preserve-unknown-fields": true})
        );
        for field in ["c", "h", "i"] {
            assert!(
                !has_warning(&c, &format!("/properties/{field}"), "inferred"),
                "{field}"
            );
        }
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
}
