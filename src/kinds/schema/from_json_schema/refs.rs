//! `$ref` resolution and expansion: a node's schema becomes the list of
//! schema objects that make it up, following `$ref` (in-document pointers,
//! `$anchor`s, the root's `$id`) and `allOf`, with `$ref` cycles reported
//! as errors that name the cycle.

use serde_json::Value;

use super::super::issue::push_pointer;
use super::super::node_type::json_type_of;
use super::{Converter, Expanded, Part};

pub(super) const REF_KEYWORDS: &[&str] = &["$ref", "$recursiveRef", "$dynamicRef"];

impl<'a> Converter<'a> {
    pub(super) fn resolve(&self, r: &str) -> Result<(String, &'a Value), String> {
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
    pub(super) fn expand(
        &mut self,
        v: &'a Value,
        ptr: String,
        ex: &mut Expanded<'a>,
        node_stack: usize,
    ) {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{conv, has_warning, prop, spec};
    use serde_json::json;

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
}
