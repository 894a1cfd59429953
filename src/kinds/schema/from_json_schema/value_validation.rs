//! Value validations: a schema under `anyOf`/`oneOf`/`allOf`/`not`/`if`
//! rewritten as Kubernetes allows it there, with no type, default,
//! description or structure of its own, only checks on the fields that the
//! structural node declares. A branch that needs more is refused with the
//! reason, for the caller to warn about.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::super::issue::push_pointer;
use super::super::pattern;
use super::collect::{bounds_of, insert_bound, type_set};
use super::refs::REF_KEYWORDS;
use super::typing::join_types;
use super::{ANNOTATIONS, Converter, Expanded};

impl<'a> Converter<'a> {
    /// Converts a schema under a junctor into a Kubernetes value validation
    /// (no types, defaults, descriptions or structure of its own) against
    /// the structural node `structural`. The flag tells that
    /// `additionalProperties: false` was dropped on the way.
    pub(super) fn value_validation(
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
                        if !v.is_array() {
                            return Err("a branch has a non-array enum".into());
                        }
                        m.insert("enum".into(), v.clone());
                    }
                    "const" => {
                        m.insert("enum".into(), Value::Array(vec![v.clone()]));
                    }
                    "format" | "multipleOf" | "minLength" | "maxLength" | "minItems"
                    | "maxItems" | "minProperties" | "maxProperties" | "required" => {
                        // Copied as is, so checked as the structural check
                        // will check them.
                        let ok = match k.as_str() {
                            "format" => v.is_string(),
                            "multipleOf" => v.as_f64().is_some_and(|f| f > 0.0),
                            "required" => {
                                v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
                            }
                            _ => v.as_i64().is_some_and(|i| i >= 0),
                        };
                        if !ok {
                            return Err(format!("a branch has an invalid {k}: {v}"));
                        }
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
            if let Some(b) = lower {
                insert_bound(&mut m, b, true);
            }
            if let Some(b) = upper {
                insert_bound(&mut m, b, false);
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
