//! The compile pass: a structural schema's JSON turned into the flat tree of
//! [`Node`]s that the other passes walk. Types, formats, bounds and list
//! types are read once; patterns are compiled; properties are sorted for
//! lookup and carry their positions among the node's defaults and required
//! fields.

use std::cmp::Ordering;

use regex::Regex;
use serde_json::{Map, Value};

use super::super::formats::{self, StringFormat};
use super::super::issue::push_pointer;
use super::super::node_type::NodeType;
use super::super::pattern;
use super::CompiledSchema;
use crate::kinds::schema::cel::{Rules, Shape, ShapeKind};

/// A schema that [`CompiledSchema::new`] cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A `pattern` that does not compile as an RE2 regular expression.
    #[error("{pointer}: invalid regular expression {pattern:?}: {message}")]
    InvalidPattern {
        /// JSON pointer to the `pattern` keyword.
        pointer: String,
        /// The pattern as written.
        pattern: String,
        /// Why it does not compile.
        message: String,
    },
    /// An `x-kubernetes-validations` rule that does not compile.
    #[error("{pointer}: {message}")]
    InvalidRule {
        /// JSON pointer to the rule's offending key.
        pointer: String,
        /// Why it does not compile.
        message: String,
    },
    /// A keyword whose value has the wrong JSON type or range.
    #[error("{pointer}: {message}")]
    Malformed {
        /// JSON pointer to the offending keyword.
        pointer: String,
        /// What is wrong with it.
        message: String,
    },
}

impl SchemaError {
    /// The JSON pointer of the keyword it is about.
    pub fn pointer(&self) -> &str {
        match self {
            SchemaError::InvalidPattern { pointer, .. }
            | SchemaError::InvalidRule { pointer, .. }
            | SchemaError::Malformed { pointer, .. } => pointer,
        }
    }
}

/// What a node says about keys its `properties` do not declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Additional {
    /// No `additionalProperties`: unknown keys are pruned (unless
    /// `x-kubernetes-preserve-unknown-fields` keeps them).
    Absent,
    /// `additionalProperties: true`.
    Allow,
    /// `additionalProperties: false`.
    Deny,
    /// A schema for the values of every key (the node's id).
    Schema(u32),
}

/// `x-kubernetes-list-type`, with the key fields of a map list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ListType {
    Atomic,
    Set,
    Map(Box<[String]>),
}

/// One compiled schema node; children are referred to by their index in
/// [`CompiledSchema`]'s node list.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) ty: NodeType,
    pub(super) nullable: bool,
    pub(super) preserve_unknown: bool,
    pub(super) embedded: bool,
    /// The format kept by Kubernetes for this type (empty if none).
    pub(super) format: Box<str>,
    pub(super) string_format: Option<StringFormat>,
    pub(super) enum_values: Option<Box<[Value]>>,
    pub(super) default: Option<Value>,
    pub(super) minimum: Option<f64>,
    pub(super) exclusive_minimum: bool,
    pub(super) maximum: Option<f64>,
    pub(super) exclusive_maximum: bool,
    pub(super) multiple_of: Option<f64>,
    pub(super) min_length: Option<i64>,
    pub(super) max_length: Option<i64>,
    pub(super) pattern: Option<(Regex, Box<str>)>,
    pub(super) items: Option<u32>,
    pub(super) min_items: Option<i64>,
    pub(super) max_items: Option<i64>,
    pub(super) list_type: ListType,
    /// Properties sorted by [`len_first`], for lookups.
    pub(super) props: Box<[Prop]>,
    /// Properties with a default, in declaration order.
    pub(super) defaults: Box<[(Box<str>, u32)]>,
    pub(super) additional: Additional,
    pub(super) required: Box<[Box<str>]>,
    pub(super) min_properties: Option<i64>,
    pub(super) max_properties: Option<i64>,
    pub(super) all_of: Box<[u32]>,
    pub(super) any_of: Box<[u32]>,
    pub(super) one_of: Box<[u32]>,
    pub(super) not: Option<u32>,
    /// `x-kubernetes-validations`, compiled.
    pub(super) rules: Option<Box<Rules>>,
    /// Whether this node or one below it (or in its `allOf`) has rules.
    pub(super) rules_below: bool,
}

/// A declared property, with its position in `defaults` and `required`
/// (`NONE` if absent) so that one pass over an object's keys can tell which
/// defaults to insert and which required fields are missing.
#[derive(Debug)]
pub(super) struct Prop {
    pub(super) name: Box<str>,
    pub(super) id: u32,
    pub(super) default_idx: u16,
    pub(super) required_idx: u16,
}

/// No position: the property has no default, or is not required.
pub(super) const NONE: u16 = u16::MAX;

/// Bit `i` of a 64-bit "seen" mask (indices past 63 are looked up instead).
pub(super) fn bit(i: u16) -> u64 {
    if i < 64 { 1u64 << i } else { 0 }
}

impl Node {
    /// The declared property `name`.
    pub(super) fn prop(&self, name: &str) -> Option<&Prop> {
        if self.props.len() <= 8 {
            return self
                .props
                .iter()
                .find(|p| p.name.len() == name.len() && p.name.as_bytes() == name.as_bytes());
        }
        self.props
            .binary_search_by(|p| len_first(&p.name, name))
            .ok()
            .map(|i| &self.props[i])
    }
}

/// Orders names by length, then bytes: most lookups are decided by the
/// length alone.
fn len_first(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// The fields of an embedded resource that its schema need not declare.
pub(super) fn is_meta_field(k: &str) -> bool {
    matches!(k, "apiVersion" | "kind" | "metadata")
}

impl CompiledSchema {
    /// Compiles the node at `v` (and its children), returning its id.
    pub(super) fn compile(&mut self, v: &Value, ptr: String) -> Result<u32, SchemaError> {
        let malformed = |p: &str, msg: &str| SchemaError::Malformed {
            pointer: p.to_string(),
            message: msg.to_string(),
        };
        let empty = Map::new();
        let m = match v {
            Value::Object(m) => m,
            Value::Bool(true) => &empty,
            _ => return Err(malformed(&ptr, "a schema must be a JSON object")),
        };
        let id = u32::try_from(self.nodes.len())
            .map_err(|_| malformed(&ptr, "schema has too many nodes"))?;
        let kw = |k: &str| push_pointer(&ptr, k);
        let get_bool = |k: &str| -> Result<bool, SchemaError> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(malformed(&kw(k), "must be a boolean")),
            }
        };
        let get_num = |k: &str| -> Result<Option<f64>, SchemaError> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => Ok(n.as_f64()),
                Some(_) => Err(malformed(&kw(k), "must be a number")),
            }
        };
        let get_count = |k: &str| -> Result<Option<i64>, SchemaError> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => match n.as_i64() {
                    Some(i) if i >= 0 => Ok(Some(i)),
                    _ => Err(malformed(&kw(k), "must be a non-negative integer")),
                },
                Some(_) => Err(malformed(&kw(k), "must be a non-negative integer")),
            }
        };
        let int_or_string = get_bool("x-kubernetes-int-or-string")?;
        let ty = if int_or_string {
            NodeType::IntOrString
        } else {
            match m.get("type") {
                None | Some(Value::Null) => NodeType::Any,
                Some(Value::String(t)) if t.is_empty() => NodeType::Any,
                Some(Value::String(t)) => NodeType::from_name(t)
                    .ok_or_else(|| malformed(&kw("type"), "unsupported type"))?,
                Some(_) => return Err(malformed(&kw("type"), "must be a string")),
            }
        };
        let format_name = match m.get("format") {
            None | Some(Value::Null) => "",
            Some(Value::String(f)) => f.as_str(),
            Some(_) => return Err(malformed(&kw("format"), "must be a string")),
        };
        // Kubernetes strips formats it does not support for the type.
        let (format, string_format): (Box<str>, Option<StringFormat>) = match ty {
            NodeType::Any | NodeType::String | NodeType::IntOrString => {
                match formats::lookup(format_name) {
                    Some(f) => (format_name.into(), Some(f)),
                    None => ("".into(), None),
                }
            }
            NodeType::Integer if formats::is_numeric_format("integer", format_name) => {
                (format_name.into(), None)
            }
            NodeType::Number if formats::is_numeric_format("number", format_name) => {
                (format_name.into(), None)
            }
            _ => ("".into(), None),
        };
        let enum_values = match m.get("enum") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(a.clone().into_boxed_slice()),
            Some(_) => return Err(malformed(&kw("enum"), "must be an array")),
        };
        let default = match m.get("default") {
            None | Some(Value::Null) => None,
            Some(d) => Some(d.clone()),
        };
        let pattern = match m.get("pattern") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => match pattern::compile(p) {
                Ok(re) => Some((re, p.as_str().into())),
                Err(message) => {
                    return Err(SchemaError::InvalidPattern {
                        pointer: kw("pattern"),
                        pattern: p.clone(),
                        message,
                    });
                }
            },
            Some(_) => return Err(malformed(&kw("pattern"), "must be a string")),
        };
        let list_type = match m.get("x-kubernetes-list-type") {
            Some(Value::String(s)) if s == "set" => ListType::Set,
            Some(Value::String(s)) if s == "map" => {
                let keys = match m.get("x-kubernetes-list-map-keys") {
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|k| k.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            malformed(&kw("x-kubernetes-list-map-keys"), "must be strings")
                        })?,
                    _ => Vec::new(),
                };
                ListType::Map(keys.into_boxed_slice())
            }
            _ => ListType::Atomic,
        };
        let required = match m.get("required") {
            None | Some(Value::Null) => Box::default(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|k| k.as_str().map(Box::<str>::from))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| malformed(&kw("required"), "must be an array of strings"))?
                .into_boxed_slice(),
            Some(_) => return Err(malformed(&kw("required"), "must be an array of strings")),
        };
        let node = Node {
            ty,
            nullable: get_bool("nullable")?,
            preserve_unknown: get_bool("x-kubernetes-preserve-unknown-fields")?,
            embedded: get_bool("x-kubernetes-embedded-resource")?,
            format,
            string_format,
            enum_values,
            default,
            minimum: get_num("minimum")?,
            exclusive_minimum: get_bool("exclusiveMinimum")?,
            maximum: get_num("maximum")?,
            exclusive_maximum: get_bool("exclusiveMaximum")?,
            multiple_of: get_num("multipleOf")?,
            min_length: get_count("minLength")?,
            max_length: get_count("maxLength")?,
            pattern,
            items: None,
            min_items: get_count("minItems")?,
            max_items: get_count("maxItems")?,
            list_type,
            props: Box::default(),
            defaults: Box::default(),
            additional: Additional::Absent,
            required,
            min_properties: get_count("minProperties")?,
            max_properties: get_count("maxProperties")?,
            all_of: Box::default(),
            any_of: Box::default(),
            one_of: Box::default(),
            not: None,
            rules: None,
            rules_below: false,
        };
        self.nodes.push(node);

        // Children. Only a map list's items are correlated with their old
        // values (by key): below any other list's, no transition rule.
        let outer = self.uncorrelatable_within.clone();
        if outer.is_none() && !matches!(self.nodes[id as usize].list_type, ListType::Map(_)) {
            self.uncorrelatable_within = Some(ptr.clone());
        }
        let items = match m.get("items") {
            None | Some(Value::Null) => Ok(None),
            Some(v @ (Value::Object(_) | Value::Bool(true))) => {
                self.compile(v, kw("items")).map(Some)
            }
            Some(_) => Err(malformed(&kw("items"), "must be a schema object")),
        };
        self.uncorrelatable_within = outer;
        let items = items?;
        let mut props = Vec::new();
        let mut defaults = Vec::new();
        match m.get("properties") {
            None | Some(Value::Null) => {}
            Some(Value::Object(pm)) => {
                let pp = kw("properties");
                let required = &self.nodes[id as usize].required;
                let required_idx: Vec<u16> = pm
                    .keys()
                    .map(|name| {
                        required
                            .iter()
                            .position(|r| r.as_ref() == name)
                            .and_then(|i| u16::try_from(i).ok())
                            .unwrap_or(NONE)
                    })
                    .collect();
                for ((name, sub), required_idx) in pm.iter().zip(required_idx) {
                    let child = self.compile(sub, push_pointer(&pp, name))?;
                    let mut default_idx = NONE;
                    if self.nodes[child as usize].default.is_some() {
                        default_idx = u16::try_from(defaults.len()).unwrap_or(NONE);
                        defaults.push((Box::<str>::from(name.as_str()), child));
                    }
                    props.push(Prop {
                        name: name.as_str().into(),
                        id: child,
                        default_idx,
                        required_idx,
                    });
                }
            }
            Some(_) => return Err(malformed(&kw("properties"), "must be an object")),
        }
        props.sort_by(|a, b| len_first(&a.name, &b.name));
        let additional = match m.get("additionalProperties") {
            None | Some(Value::Null) => Additional::Absent,
            Some(Value::Bool(true)) => Additional::Allow,
            Some(Value::Bool(false)) => Additional::Deny,
            Some(v @ Value::Object(_)) => {
                Additional::Schema(self.compile(v, kw("additionalProperties"))?)
            }
            Some(_) => {
                return Err(malformed(
                    &kw("additionalProperties"),
                    "must be a boolean or a schema",
                ));
            }
        };
        let mut junctor = |k: &str| -> Result<Box<[u32]>, SchemaError> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(Box::default()),
                Some(Value::Array(a)) => {
                    let base = kw(k);
                    let mut out = Vec::with_capacity(a.len());
                    for (i, b) in a.iter().enumerate() {
                        out.push(self.compile(b, push_pointer(&base, &i.to_string()))?);
                    }
                    Ok(out.into_boxed_slice())
                }
                Some(_) => Err(malformed(&kw(k), "must be an array of schemas")),
            }
        };
        let all_of = junctor("allOf")?;
        let any_of = junctor("anyOf")?;
        let one_of = junctor("oneOf")?;
        let not = match m.get("not") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.compile(v, kw("not"))?),
        };
        let children_have_rules = items
            .iter()
            .chain(props.iter().map(|p| &p.id))
            .chain(match &additional {
                Additional::Schema(a) => Some(a),
                _ => None,
            })
            .chain(all_of.iter())
            .any(|c| self.nodes[*c as usize].rules_below);
        let node = &mut self.nodes[id as usize];
        node.items = items;
        node.props = props.into_boxed_slice();
        node.defaults = defaults.into_boxed_slice();
        node.additional = additional;
        node.all_of = all_of;
        node.any_of = any_of;
        node.one_of = one_of;
        node.not = not;
        // A rule that does not compile is noted and the compilation goes
        // on, so that every such rule is said at once
        // ([`CompiledSchema::new_saying_all`]); the schema is not used.
        let rules = match self.node_rules(m.get("x-kubernetes-validations"), id, &kw) {
            Ok(rules) => rules,
            Err(e) => {
                self.rule_errors.push(e);
                None
            }
        };
        let node = &mut self.nodes[id as usize];
        node.rules_below = rules.is_some() || children_have_rules;
        node.rules = rules;
        Ok(id)
    }

    /// The compiled `x-kubernetes-validations` (`validations`) of node `id`.
    fn node_rules(
        &self,
        validations: Option<&Value>,
        id: u32,
        kw: &dyn Fn(&str) -> String,
    ) -> Result<Option<Box<Rules>>, SchemaError> {
        Ok(match validations {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) if a.is_empty() => None,
            Some(_) if (NodeRef { schema: self, id }).is_untyped() => {
                return Err(SchemaError::InvalidRule {
                    pointer: kw("x-kubernetes-validations"),
                    message: "failed to construct type information for x-kubernetes-validations rules: unable \
                              to convert structural schema to CEL declarations (kube-apiserver gives a node without \
                              a type no CEL type: give it a type, or x-kubernetes-int-or-string)"
                        .into(),
                });
            }
            Some(v) => {
                let shape = NodeRef { schema: self, id };
                let rules =
                    Rules::compile(v, &kw("x-kubernetes-validations"), shape).map_err(|e| {
                        SchemaError::InvalidRule {
                            pointer: e.pointer,
                            message: e.message,
                        }
                    })?;
                if let (Some(i), Some(list)) =
                    (rules.first_transition_rule(), &self.uncorrelatable_within)
                {
                    return Err(SchemaError::InvalidRule {
                        pointer: format!("{}/{i}/rule", kw("x-kubernetes-validations")),
                        message: format!(
                            "oldSelf cannot be used on the uncorrelatable portion of the schema within {}",
                            if list.is_empty() { "/" } else { list.as_str() }
                        ),
                    });
                }
                Some(Box::new(rules))
            }
        })
    }
}

/// A node of a compiled schema, as CEL sees it.
#[derive(Clone, Copy)]
pub(super) struct NodeRef<'a> {
    pub(super) schema: &'a CompiledSchema,
    pub(super) id: u32,
}

impl Shape for NodeRef<'_> {
    fn kind(self) -> ShapeKind {
        match self.schema.node(self.id).ty {
            NodeType::Integer => ShapeKind::Integer,
            NodeType::Number => ShapeKind::Number,
            _ => ShapeKind::Other,
        }
    }

    fn field(self, name: &str) -> Option<Self> {
        let n = self.schema.node(self.id);
        let id = match n.prop(name) {
            Some(p) => p.id,
            None => match n.additional {
                Additional::Schema(id) => id,
                _ => return None,
            },
        };
        Some(NodeRef { id, ..self })
    }

    fn items(self) -> Option<Self> {
        let n = self.schema.node(self.id);
        match (n.items, n.additional) {
            (Some(id), _) | (None, Additional::Schema(id)) => Some(NodeRef { id, ..self }),
            _ => None,
        }
    }

    fn max_size(self) -> Option<u64> {
        let n = self.schema.node(self.id);
        let m = match n.ty {
            NodeType::String => n.max_length,
            NodeType::Array => n.max_items,
            NodeType::Object => n.max_properties,
            _ => None,
        };
        m.and_then(|m| u64::try_from(m).ok())
    }

    fn is_string(self) -> bool {
        matches!(
            self.schema.node(self.id).ty,
            NodeType::String | NodeType::IntOrString | NodeType::Any
        )
    }

    fn is_closed_object(self) -> bool {
        let n = self.schema.node(self.id);
        n.ty == NodeType::Object
            && !n.preserve_unknown
            && !n.embedded
            && matches!(n.additional, Additional::Absent | Additional::Deny)
    }

    fn is_scalar(self) -> bool {
        matches!(
            self.schema.node(self.id).ty,
            NodeType::Integer | NodeType::Number | NodeType::Boolean
        )
    }

    fn type_name(self) -> &'static str {
        self.schema.node(self.id).ty.name().unwrap_or("")
    }

    /// As kube-apiserver's `SchemaDeclType`: a node without a type, or a
    /// list of them, or a map of them, has no CEL type.
    fn is_untyped(self) -> bool {
        let n = self.schema.node(self.id);
        match (n.ty, n.items, n.additional) {
            (NodeType::Any, _, _) => true,
            (NodeType::Array, Some(id), _) => NodeRef { id, ..self }.is_untyped(),
            (NodeType::Object, _, Additional::Schema(id)) if n.props.is_empty() => {
                NodeRef { id, ..self }.is_untyped()
            }
            _ => false,
        }
    }

    fn escapes_field_names(self) -> bool {
        let n = self.schema.node(self.id);
        n.ty == NodeType::Object && !n.props.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::super::CompiledSchema;
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_patterns_and_malformed_keywords_are_schema_errors() {
        let err = CompiledSchema::new(&json!({"type": "object", "properties": {
            "name": {"type": "string", "pattern": "^(?!x)"}
        }}))
        .unwrap_err();
        match &err {
            SchemaError::InvalidPattern {
                pointer, pattern, ..
            } => {
                assert_eq!(pointer, "/properties/name/pattern");
                assert_eq!(pattern, "^(?!x)");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(
            err.to_string()
                .starts_with("/properties/name/pattern: invalid regular expression")
        );
        let err = CompiledSchema::new(&json!({"type": "object", "properties": {
            "a": {"type": "string", "maxLength": "5"}
        }}))
        .unwrap_err();
        assert_eq!(
            err,
            SchemaError::Malformed {
                pointer: "/properties/a/maxLength".into(),
                message: "must be a non-negative integer".into()
            }
        );
    }
}
