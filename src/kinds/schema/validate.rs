//! Validation, pruning and defaulting of objects against a structural schema,
//! the way kube-apiserver treats custom resources; and [`validate_schema`],
//! the check that a schema *is* structural.
//!
//! A [`CompiledSchema`] is built once per kind (patterns are compiled then)
//! and applied to many objects:
//!
//! 1. [`CompiledSchema::apply_defaults`] prunes unknown fields (where
//!    `x-kubernetes-preserve-unknown-fields` does not keep them) and drops
//!    `null`s of non-nullable fields without a default, then applies
//!    defaults to absent fields of present objects, recursing into the
//!    values it inserted. Kubernetes prunes silently; the pruned paths are
//!    returned so callers can warn.
//! 2. [`CompiledSchema::validate`] reports **every** violation as a
//!    [`FieldError`] with kube-apiserver's field path, cause
//!    ([`FieldErrorKind::reason`]) and message ([`FieldError::message`]),
//!    following kube-openapi's validators (including their quirks: a string
//!    reports only the first of maxLength/minLength/pattern, `2.0` is an
//!    integer, bounds on integers compare as integers).
//!
//! [`CompiledSchema::default_and_validate`] does both. Field paths use `.`
//! for properties, `[i]` for list items and `[key]` for map
//! (`additionalProperties`) keys. Errors are sorted by path (indices
//! numerically), keeping kube-openapi's order within one path.
//!
//! Deviations from kube-apiserver, all deliberate: errors of
//! `allOf`/`anyOf`/`oneOf`/`not` are reported at the node's path (Kubernetes
//! reports them at the object root with an empty field); `null` is accepted
//! by a nullable field that has an `enum`; an integer value is compared
//! exactly with a fractional `minimum`/`maximum`/`multipleOf` (kube-openapi
//! truncates the bound to an integer first, accepting `0` for `minimum: 0.5`
//! and rejecting every integer for `multipleOf: 0.25`); the `metadata` of
//! `x-kubernetes-embedded-resource` objects is kept but not checked; CEL
//! rules (`x-kubernetes-validations`) are not evaluated.

use std::cmp::Ordering;
use std::fmt;

use regex::Regex;
use serde_json::{Map, Value};

use crate::golang::{self, format_g as go_float, quote as go_quote};

use super::formats::{self, StringFormat};
use super::{Issue, pattern, push_pointer};

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
    /// A keyword whose value has the wrong JSON type or range.
    #[error("{pointer}: {message}")]
    Malformed {
        /// JSON pointer to the offending keyword.
        pointer: String,
        /// What is wrong with it.
        message: String,
    },
}

/// The cause of a [`FieldError`], as Kubernetes' `metav1.CauseType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    /// A required field is missing (`FieldValueRequired`).
    Required,
    /// A value is malformed or out of bounds (`FieldValueInvalid`).
    Invalid,
    /// A value is not one of the enumerated ones (`FieldValueNotSupported`).
    NotSupported,
    /// A value repeats in a set or map list (`FieldValueDuplicate`).
    Duplicate,
    /// A string is longer than `maxLength` (`FieldValueTooLong`).
    TooLong,
    /// A list or map has too many entries (`FieldValueTooMany`).
    TooMany,
    /// A value is not allowed here (`FieldValueForbidden`).
    Forbidden,
    /// A value has the wrong type or format (`FieldValueTypeInvalid`).
    TypeInvalid,
}

impl FieldErrorKind {
    /// The Kubernetes cause type string, e.g. `FieldValueRequired`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Duplicate => "FieldValueDuplicate",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::Forbidden => "FieldValueForbidden",
            Self::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The leading words of the message, e.g. `Required value`.
    fn label(self) -> &'static str {
        match self {
            Self::Required => "Required value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Duplicate => "Duplicate value",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::Forbidden => "Forbidden",
        }
    }
}

/// One validation failure, shaped like k8s.io/apimachinery's `field.Error`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Path of the offending field, e.g. `spec.users[2].name` or
    /// `spec.labels[foo]`.
    pub field: String,
    /// The cause.
    pub kind: FieldErrorKind,
    /// The offending value (for `TooMany` and size errors: the count), when
    /// the message shows one.
    pub bad_value: Option<Value>,
    /// The explanation after the value, e.g. `spec.replicas in body should be
    /// greater than or equal to 0`; may be empty.
    pub detail: String,
}

impl FieldError {
    fn new(field: &str, kind: FieldErrorKind, bad_value: Option<Value>, detail: String) -> Self {
        Self {
            field: field.to_string(),
            kind,
            bad_value,
            detail,
        }
    }

    /// kube-apiserver's message for this error without the field, e.g.
    /// `Invalid value: -1: spec.replicas in body should be greater than or
    /// equal to 0` or `Unsupported value: "big": supported values: "small",
    /// "medium"`.
    pub fn message(&self) -> String {
        let mut s = String::from(self.kind.label());
        match self.kind {
            FieldErrorKind::Required | FieldErrorKind::Forbidden | FieldErrorKind::TooLong => {}
            _ => {
                if let Some(v) = &self.bad_value {
                    s.push_str(": ");
                    s.push_str(&go_value(v));
                }
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message())
    }
}

impl std::error::Error for FieldError {}

/// What [`CompiledSchema::default_and_validate`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Every validation error, sorted by field path.
    pub errors: Vec<FieldError>,
    /// Paths of unknown fields that were pruned (removed), sorted like
    /// `errors`; Kubernetes drops these silently, callers may warn.
    pub pruned: Vec<String>,
}

impl Outcome {
    /// Whether the object is valid.
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Any,
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
    IntOrString,
}

impl Ty {
    fn message_name(self) -> &'static str {
        match self {
            Ty::Any => "",
            Ty::Object => "object",
            Ty::Array => "array",
            Ty::String => "string",
            Ty::Integer => "integer",
            Ty::Number => "number",
            Ty::Boolean => "boolean",
            Ty::IntOrString => "integer,string",
        }
    }

    fn contains(self, json_type: &str) -> bool {
        match self {
            Ty::IntOrString => json_type == "integer" || json_type == "string",
            other => other.message_name() == json_type,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Additional {
    Absent,
    Allow,
    Deny,
    Schema(u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ListType {
    Atomic,
    Set,
    Map(Box<[String]>),
}

#[derive(Debug)]
struct Node {
    ty: Ty,
    nullable: bool,
    preserve_unknown: bool,
    embedded: bool,
    /// The format kept by Kubernetes for this type (empty if none).
    format: Box<str>,
    string_format: Option<StringFormat>,
    enum_values: Option<Box<[Value]>>,
    default: Option<Value>,
    minimum: Option<f64>,
    exclusive_minimum: bool,
    maximum: Option<f64>,
    exclusive_maximum: bool,
    multiple_of: Option<f64>,
    min_length: Option<i64>,
    max_length: Option<i64>,
    pattern: Option<(Regex, Box<str>)>,
    items: Option<u32>,
    min_items: Option<i64>,
    max_items: Option<i64>,
    list_type: ListType,
    /// Properties sorted by [`len_first`], for lookups.
    props: Box<[Prop]>,
    /// Properties with a default, in declaration order.
    defaults: Box<[(Box<str>, u32)]>,
    additional: Additional,
    required: Box<[Box<str>]>,
    min_properties: Option<i64>,
    max_properties: Option<i64>,
    all_of: Box<[u32]>,
    any_of: Box<[u32]>,
    one_of: Box<[u32]>,
    not: Option<u32>,
}

/// A declared property, with its position in `defaults` and `required`
/// (`NONE` if absent) so that one pass over an object's keys can tell which
/// defaults to insert and which required fields are missing.
#[derive(Debug)]
struct Prop {
    name: Box<str>,
    id: u32,
    default_idx: u16,
    required_idx: u16,
}

const NONE: u16 = u16::MAX;

/// Bit `i` of a 64-bit "seen" mask (indices past 63 are looked up instead).
fn bit(i: u16) -> u64 {
    if i < 64 { 1u64 << i } else { 0 }
}

impl Node {
    fn prop(&self, name: &str) -> Option<&Prop> {
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

impl Node {}

/// A structural schema prepared for fast pruning, defaulting and
/// validation. Build it once per kind with [`CompiledSchema::new`].
#[derive(Debug)]
pub struct CompiledSchema {
    nodes: Vec<Node>,
}

impl CompiledSchema {
    /// Compiles `schema` (a structural schema, e.g. the output of
    /// [`super::to_structural`]). Patterns are compiled here; a pattern that
    /// does not compile, or a keyword of the wrong JSON type, is an error
    /// pointing into `schema`. Unknown keywords are ignored; use
    /// [`validate_schema`] to check that a schema is structural.
    pub fn new(schema: &Value) -> Result<CompiledSchema, SchemaError> {
        let mut c = CompiledSchema { nodes: Vec::new() };
        c.compile(schema, String::new())?;
        Ok(c)
    }

    fn compile(&mut self, v: &Value, ptr: String) -> Result<u32, SchemaError> {
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
            Ty::IntOrString
        } else {
            match m.get("type") {
                None | Some(Value::Null) => Ty::Any,
                Some(Value::String(t)) => match t.as_str() {
                    "object" => Ty::Object,
                    "array" => Ty::Array,
                    "string" => Ty::String,
                    "integer" => Ty::Integer,
                    "number" => Ty::Number,
                    "boolean" => Ty::Boolean,
                    "" => Ty::Any,
                    _ => return Err(malformed(&kw("type"), "unsupported type")),
                },
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
            Ty::Any | Ty::String | Ty::IntOrString => match formats::lookup(format_name) {
                Some(f) => (format_name.into(), Some(f)),
                None => ("".into(), None),
            },
            Ty::Integer if formats::is_numeric_format("integer", format_name) => {
                (format_name.into(), None)
            }
            Ty::Number if formats::is_numeric_format("number", format_name) => {
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
        };
        self.nodes.push(node);

        // Children.
        let items = match m.get("items") {
            None | Some(Value::Null) => None,
            Some(v @ (Value::Object(_) | Value::Bool(true))) => Some(self.compile(v, kw("items"))?),
            Some(_) => return Err(malformed(&kw("items"), "must be a schema object")),
        };
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
        let node = &mut self.nodes[id as usize];
        node.items = items;
        node.props = props.into_boxed_slice();
        node.defaults = defaults.into_boxed_slice();
        node.additional = additional;
        node.all_of = all_of;
        node.any_of = any_of;
        node.one_of = one_of;
        node.not = not;
        Ok(id)
    }

    fn node(&self, id: u32) -> &Node {
        &self.nodes[id as usize]
    }

    /// Prunes, defaults, then validates `value`, which sits at `root_field`
    /// (e.g. `"spec"`) in the object; see the module documentation.
    pub fn default_and_validate(&self, value: &mut Value, root_field: &str) -> Outcome {
        let pruned = self.apply_defaults(value, root_field);
        let errors = self.validate(value, root_field);
        Outcome { errors, pruned }
    }

    /// Prunes unknown fields and non-nullable `null`s without defaults, and
    /// applies defaults, as kube-apiserver does when decoding a custom
    /// resource. Returns the paths of the pruned unknown fields.
    pub fn apply_defaults(&self, value: &mut Value, root_field: &str) -> Vec<String> {
        let mut path = String::with_capacity(64);
        path.push_str(root_field);
        let mut pruned = Vec::new();
        self.normalize(0, value, &mut path, &mut pruned);
        if pruned.len() > 1 {
            pruned.sort_by(|a, b| cmp_paths(a, b));
        }
        pruned
    }

    /// Validates `value` (which sits at `root_field`) without changing it,
    /// returning every error, sorted by field path.
    pub fn validate(&self, value: &Value, root_field: &str) -> Vec<FieldError> {
        let mut path = String::with_capacity(64);
        path.push_str(root_field);
        let mut errs = Vec::new();
        self.check(0, value, &mut path, &mut errs);
        if errs.len() > 1 {
            errs.sort_by(|a, b| cmp_paths(&a.field, &b.field));
        }
        errs
    }

    fn normalize(&self, id: u32, v: &mut Value, path: &mut String, pruned: &mut Vec<String>) {
        let n = self.node(id);
        match v {
            Value::Object(obj) => {
                let base = path.len();
                let preserve = n.preserve_unknown;
                let mut seen = 0u64;
                // One pass: prune unknown fields (under additionalProperties
                // without a schema: everything inside the values), drop or
                // default non-nullable nulls, recurse into the rest.
                obj.retain(|k, child| {
                    if n.embedded && is_meta_field(k) {
                        return true;
                    }
                    if let Some(p) = n.prop(k) {
                        seen |= bit(p.default_idx);
                        if !self.null_to_default(p.id, child) {
                            return false;
                        }
                        push_field(path, k);
                        self.normalize(p.id, child, path, pruned);
                        path.truncate(base);
                        return true;
                    }
                    match n.additional {
                        Additional::Schema(a) => {
                            if !self.null_to_default(a, child) {
                                return false;
                            }
                            push_key(path, k);
                            self.normalize(a, child, path, pruned);
                            path.truncate(base);
                            true
                        }
                        Additional::Allow | Additional::Deny => {
                            push_key(path, k);
                            prune_everything(child, path, pruned);
                            path.truncate(base);
                            true
                        }
                        Additional::Absent if preserve => true,
                        Additional::Absent => {
                            push_field(path, k);
                            pruned.push(path.clone());
                            path.truncate(base);
                            false
                        }
                    }
                });
                for (i, (name, p)) in n.defaults.iter().enumerate() {
                    let i = u16::try_from(i).unwrap_or(NONE);
                    if seen & bit(i) != 0 || (i >= 64 && obj.contains_key(name.as_ref())) {
                        continue;
                    }
                    let Some(default) = &self.node(*p).default else {
                        continue;
                    };
                    let slot = obj.entry(name.as_ref()).or_insert_with(|| default.clone());
                    push_field(path, name);
                    self.normalize(*p, slot, path, pruned);
                    path.truncate(base);
                }
            }
            Value::Array(items) => {
                let Some(item) = n.items else { return };
                let inode = self.node(item);
                let base = path.len();
                for (i, child) in items.iter_mut().enumerate() {
                    if child.is_null()
                        && !inode.nullable
                        && let Some(d) = &inode.default
                    {
                        *child = d.clone();
                    }
                    push_index(path, i);
                    self.normalize(item, child, path, pruned);
                    path.truncate(base);
                }
            }
            _ => {}
        }
    }

    /// Handles a `null` under a non-nullable schema: replaced by the default
    /// if there is one, otherwise to be removed (returns false).
    fn null_to_default(&self, id: u32, v: &mut Value) -> bool {
        if !v.is_null() {
            return true;
        }
        let n = self.node(id);
        if n.nullable {
            return true;
        }
        match &n.default {
            Some(d) => {
                *v = d.clone();
                true
            }
            None => false,
        }
    }

    fn check(&self, id: u32, v: &Value, path: &mut String, errs: &mut Vec<FieldError>) {
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
            Value::Number(num) => self.check_number(n, num, path, errs),
            Value::Array(items) => self.check_array(n, items, path, errs),
            _ => {}
        }
        self.check_enum(n, v, path, errs);
        if let Value::Object(obj) = v {
            self.check_object(n, obj, path, errs);
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
                self.check(b, v, path, &mut tmp);
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
                self.check(b, v, path, &mut tmp);
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
                self.check(b, v, path, errs);
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
            self.check(b, v, path, &mut tmp);
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

    fn check_number(
        &self,
        n: &Node,
        num: &serde_json::Number,
        path: &str,
        errs: &mut Vec<FieldError>,
    ) {
        let val = Num::from(num);
        let type_name = match n.ty {
            Ty::Integer => "integer",
            Ty::Number => "number",
            _ => "",
        };
        let format: &str = if type_name.is_empty() { "" } else { &n.format };
        let range_error = |prefix: &str| {
            let what = if format.is_empty() {
                format!("{prefix} value must be of type {type_name} (default format) in {path}")
            } else {
                format!("{prefix} value must be of type {type_name} with format {format} in {path}")
            };
            FieldError::new(path, FieldErrorKind::Invalid, Some(num_value(num)), what)
        };
        if !in_range(val, type_name, format) {
            errs.push(range_error("Checked"));
        }
        let bad = || Some(num_value(num));
        if let Some(factor) = n.multiple_of {
            let native = in_range(Num::F(factor), type_name, format);
            if !native {
                errs.push(range_error("MultipleOf"));
            }
            let fail = match val {
                Num::I(i) if native && factor.fract() == 0.0 => {
                    let f = factor as i64;
                    if f <= 0 {
                        Some(Err(f.to_string()))
                    } else {
                        (i % f != 0).then(|| Ok(f.to_string()))
                    }
                }
                _ => {
                    if factor <= 0.0 {
                        Some(Err(go_float(factor)))
                    } else {
                        let data = val.as_f64();
                        let mult = if factor < 1.0 {
                            1.0 / factor * data
                        } else {
                            data / factor
                        };
                        (!is_json_integer(mult)).then(|| Ok(go_float(factor)))
                    }
                }
            };
            match fail {
                Some(Ok(shown)) => errs.push(FieldError::new(
                    path,
                    FieldErrorKind::Invalid,
                    bad(),
                    format!("{path} in body should be a multiple of {shown}"),
                )),
                Some(Err(shown)) => errs.push(FieldError::new(
                    path,
                    FieldErrorKind::Invalid,
                    Some(serde_json::json!(factor)),
                    format!("factor MultipleOf declared for {path} must be positive: {shown}"),
                )),
                None => {}
            }
        }
        if let Some(min) = n.minimum {
            let native = in_range(Num::F(min), type_name, format);
            if !native {
                errs.push(range_error("Minimum boundary"));
            }
            let excl = n.exclusive_minimum;
            let (fails, shown) = match val {
                Num::I(i) if native && min.fract() == 0.0 => {
                    let m = min as i64;
                    ((!excl && i < m) || (excl && i <= m), m.to_string())
                }
                _ => {
                    let d = val.as_f64();
                    ((!excl && d < min) || (excl && d <= min), go_float(min))
                }
            };
            if fails {
                let op = if excl {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                errs.push(FieldError::new(
                    path,
                    FieldErrorKind::Invalid,
                    bad(),
                    format!("{path} in body should be {op} {shown}"),
                ));
            }
        }
        if let Some(max) = n.maximum {
            let native = in_range(Num::F(max), type_name, format);
            if !native {
                errs.push(range_error("Maximum boundary"));
            }
            let excl = n.exclusive_maximum;
            let (fails, shown) = match val {
                Num::I(i) if native && max.fract() == 0.0 => {
                    let m = max as i64;
                    ((!excl && i > m) || (excl && i >= m), m.to_string())
                }
                _ => {
                    let d = val.as_f64();
                    ((!excl && d > max) || (excl && d >= max), go_float(max))
                }
            };
            if fails {
                let op = if excl {
                    "less than"
                } else {
                    "less than or equal to"
                };
                errs.push(FieldError::new(
                    path,
                    FieldErrorKind::Invalid,
                    bad(),
                    format!("{path} in body should be {op} {shown}"),
                ));
            }
        }
    }

    fn check_array(
        &self,
        n: &Node,
        items: &[Value],
        path: &mut String,
        errs: &mut Vec<FieldError>,
    ) {
        if let Some(item) = n.items {
            let base = path.len();
            for (i, child) in items.iter().enumerate() {
                push_index(path, i);
                self.check(item, child, path, errs);
                path.truncate(base);
            }
        }
        let size = items.len() as i64;
        if let Some(min) = n.min_items
            && size < min
        {
            errs.push(FieldError::new(
                path,
                FieldErrorKind::Invalid,
                Some(Value::from(size)),
                format!("{path} in body should have at least {min} items"),
            ));
        }
        if let Some(max) = n.max_items
            && size > max
        {
            errs.push(FieldError::new(
                path,
                FieldErrorKind::TooMany,
                Some(Value::from(size)),
                too_many_detail(max),
            ));
        }
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
        path: &mut String,
        errs: &mut Vec<FieldError>,
    ) {
        let size = obj.len() as i64;
        if let Some(min) = n.min_properties
            && size < min
        {
            errs.push(FieldError::new(
                path,
                FieldErrorKind::Invalid,
                Some(Value::from(size)),
                format!("{path} in body should have at least {min} properties"),
            ));
        }
        if let Some(max) = n.max_properties
            && size > max
        {
            errs.push(FieldError::new(
                path,
                FieldErrorKind::TooMany,
                Some(Value::from(size)),
                too_many_detail(max),
            ));
        }
        let base = path.len();
        let mut seen_required = 0u64;
        for (k, child) in obj {
            if n.embedded && is_meta_field(k) {
                continue;
            }
            if let Some(p) = n.prop(k) {
                seen_required |= bit(p.required_idx);
                push_field(path, k);
                self.check(p.id, child, path, errs);
                path.truncate(base);
                continue;
            }
            match n.additional {
                Additional::Schema(a) => {
                    push_key(path, k);
                    self.check(a, child, path, errs);
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

fn too_many_detail(max: i64) -> String {
    let unit = if max == 1 { "item" } else { "items" };
    format!("must have at most {max} {unit}")
}

fn is_meta_field(k: &str) -> bool {
    matches!(k, "apiVersion" | "kind" | "metadata")
}

/// Under `additionalProperties` without a schema Kubernetes keeps the key but
/// prunes every field inside its value.
fn prune_everything(v: &mut Value, path: &mut String, pruned: &mut Vec<String>) {
    let base = path.len();
    match v {
        Value::Object(obj) => {
            for k in obj.keys() {
                push_field(path, k);
                pruned.push(path.clone());
                path.truncate(base);
            }
            obj.clear();
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                push_index(path, i);
                prune_everything(child, path, pruned);
                path.truncate(base);
            }
        }
        _ => {}
    }
}

fn push_field(path: &mut String, name: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
}

fn push_index(path: &mut String, i: usize) {
    // Hot path: avoid the formatting machinery.
    let mut digits = [0u8; 20];
    let mut n = i;
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    path.push('[');
    for &d in &digits[start..] {
        path.push(char::from(d));
    }
    path.push(']');
}

fn push_key(path: &mut String, key: &str) {
    path.push('[');
    path.push_str(key);
    path.push(']');
}

/// A JSON number as Go's decoder sees it: `int64` when it is an integer that
/// fits, `float64` otherwise.
#[derive(Debug, Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

impl Num {
    fn from(n: &serde_json::Number) -> Num {
        match n.as_i64() {
            Some(i) => Num::I(i),
            None => Num::F(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
}

fn num_value(n: &serde_json::Number) -> Value {
    Value::Number(n.clone())
}

/// kube-openapi's `IsValueValidAgainstRange`.
fn in_range(val: Num, type_name: &str, format: &str) -> bool {
    match type_name {
        "integer" => {
            let as_int = match val {
                Num::I(i) => Some(i),
                // strconv.FormatFloat(f, 'f', -1) then ParseInt.
                Num::F(f) if f.fract() == 0.0 && f.abs() < 9.223_372_036_854_775e18 => {
                    Some(f as i64)
                }
                Num::F(_) => None,
            };
            match (as_int, format) {
                (None, _) => false,
                (Some(i), "int32") => i32::try_from(i).is_ok(),
                (Some(_), _) => true,
            }
        }
        _ if format == "float" => val.as_f64().abs() <= f64::from(f32::MAX),
        _ => true,
    }
}

/// go-openapi/swag's `IsFloat64AJSONInteger`.
fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_992.0; // 2^53
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let g = f.trunc();
    if f == g {
        return true;
    }
    let diff = (f - g).abs();
    if g == 0.0 {
        return false;
    }
    diff / (f.abs() + g.abs()) < 1e-9
}

/// kube-openapi's type check; returns the expected type name and the name of
/// what was found when the value does not fit.
fn type_mismatch(n: &Node, v: &Value) -> Option<(&'static str, &'static str)> {
    if n.ty == Ty::Any {
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
        // kube-openapi names the format and Go's number kind here.
        let fmt_name: &'static str = match format {
            "int32" => "int32",
            "int64" => "int64",
            "float" => "float",
            "double" => "double",
            _ => return Some((type_name, found)),
        };
        return Some((fmt_name, go_format));
    }
    if str_or_slice && !(n.ty == Ty::Integer || n.ty == Ty::Number || format.is_empty()) {
        return None;
    }
    (!(n.ty.contains(found) || is_float_int || is_int_float)).then_some((type_name, found))
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

/// Orders field paths segment by segment, list indices numerically.
fn cmp_paths(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (PathSegments(a), PathSegments(b));
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (p.parse::<u64>(), q.parse::<u64>()) {
                    (Ok(i), Ok(j)) => i.cmp(&j),
                    _ => p.cmp(q),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

struct PathSegments<'a>(&'a str);

impl<'a> Iterator for PathSegments<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let s = self.0.strip_prefix('.').unwrap_or(self.0);
        if s.is_empty() {
            return None;
        }
        if let Some(rest) = s.strip_prefix('[') {
            let end = rest.find(']').unwrap_or(rest.len());
            self.0 = rest.get(end + 1..).unwrap_or("");
            return Some(&rest[..end]);
        }
        let end = s.find(['.', '[']).unwrap_or(s.len());
        self.0 = &s[end..];
        Some(&s[..end])
    }
}

/// A bad value as `field.Error` prints it: numbers and booleans with `%v`,
/// strings with `%q`, everything else as Go's `json.Marshal`.
fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match Num::from(n) {
            Num::I(i) => i.to_string(),
            Num::F(f) => go_float(f),
        },
        Value::String(s) => go_quote(s),
        other => golang::marshal(other),
    }
}

/// Validates and prunes `default` against the schema node it belongs to.
/// Returns the pruned default (if pruning changed it) and the validation
/// errors of the default after its nested defaults were applied.
pub(super) fn check_default(
    node: &Value,
    default: &Value,
) -> Result<(Option<Value>, Vec<FieldError>), SchemaError> {
    let compiled = CompiledSchema::new(node)?;
    let mut pruned = default.clone();
    let mut unknown = Vec::new();
    compiled.prune_only(0, &mut pruned, &mut String::from("default"), &mut unknown);
    let mut defaulted = pruned.clone();
    compiled.apply_defaults(&mut defaulted, "default");
    let errors = compiled.validate(&defaulted, "default");
    Ok(((!unknown.is_empty()).then_some(pruned), errors))
}

impl CompiledSchema {
    /// Pruning only (no defaults), as Kubernetes checks defaults.
    fn prune_only(&self, id: u32, v: &mut Value, path: &mut String, pruned: &mut Vec<String>) {
        let n = self.node(id);
        let base = path.len();
        match v {
            Value::Object(obj) => {
                obj.retain(|k, child| {
                    if (n.embedded && is_meta_field(k)) || n.prop(k).is_some() {
                        return true;
                    }
                    match n.additional {
                        Additional::Absent if !n.preserve_unknown => {
                            push_field(path, k);
                            pruned.push(path.clone());
                            path.truncate(base);
                            false
                        }
                        Additional::Allow | Additional::Deny => {
                            push_key(path, k);
                            prune_everything(child, path, pruned);
                            path.truncate(base);
                            true
                        }
                        _ => true,
                    }
                });
                for (k, child) in obj.iter_mut() {
                    if n.embedded && is_meta_field(k) {
                        continue;
                    }
                    if let Some(p) = n.prop(k) {
                        push_field(path, k);
                        self.prune_only(p.id, child, path, pruned);
                    } else if let Additional::Schema(a) = n.additional {
                        push_key(path, k);
                        self.prune_only(a, child, path, pruned);
                    }
                    path.truncate(base);
                }
            }
            Value::Array(items) => {
                if let Some(item) = n.items {
                    for (i, child) in items.iter_mut().enumerate() {
                        push_index(path, i);
                        self.prune_only(item, child, path, pruned);
                        path.truncate(base);
                    }
                }
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------
// Structural schema checks
// ---------------------------------------------------------------------------

const TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean"];

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
pub fn validate_schema(schema: &Value) -> Vec<Issue> {
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
        Some(Value::String(t)) if TYPES.contains(&t.as_str()) => {}
        Some(Value::String(t)) => issues.push(Issue::new(
            kw("type"),
            format!(
                "unsupported type {t:?}: must be one of {}",
                TYPES.join(", ")
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
                    let non_atomic = |k: &str| {
                        items
                            .get(k)
                            .and_then(Value::as_str)
                            .is_some_and(|s| s != "atomic")
                    };
                    if non_atomic("x-kubernetes-list-type") {
                        issues.push(Issue::new(
                            push_pointer(&kw("items"), "x-kubernetes-list-type"),
                            "must be atomic as item of a list with x-kubernetes-list-type=set",
                        ));
                    }
                    if non_atomic("x-kubernetes-map-type") {
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
                if !keys
                    .iter()
                    .all(|k| item_props.is_some_and(|p| p.contains_key(*k)))
                {
                    issues.push(Issue::new(
                        kw("x-kubernetes-list-map-keys"),
                        "entries must all be names of item properties",
                    ));
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
        Err(e) => issues.push(Issue::new(&dp, format!("cannot check the default: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compiled(schema: Value) -> CompiledSchema {
        CompiledSchema::new(&schema).expect("schema compiles")
    }

    /// Defaults and validates; returns the value, `Display`ed errors and
    /// pruned paths.
    fn run(schema: Value, mut value: Value) -> (Value, Vec<String>, Vec<String>) {
        let out = compiled(schema).default_and_validate(&mut value, "spec");
        let errs = out.errors.iter().map(ToString::to_string).collect();
        (value, errs, out.pruned)
    }

    fn errors(schema: Value, value: Value) -> Vec<String> {
        run(schema, value).1
    }

    fn one(schema: Value, value: Value) -> FieldError {
        let mut v = value;
        let mut out = compiled(schema).default_and_validate(&mut v, "spec");
        assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
        out.errors.remove(0)
    }

    fn replicas_schema() -> Value {
        json!({"type": "object", "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 10}
        }})
    }

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
    fn bounds_use_kubernetes_wording() {
        let e = one(replicas_schema(), json!({"replicas": -1}));
        assert_eq!(e.kind, FieldErrorKind::Invalid);
        assert_eq!(e.kind.reason(), "FieldValueInvalid");
        assert_eq!(
            e.to_string(),
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
        );
        assert_eq!(
            errors(replicas_schema(), json!({"replicas": 11})),
            [
                "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
            ]
        );
        let excl = json!({"type": "object", "properties": {"ratio": {
            "type": "number", "minimum": 0, "exclusiveMinimum": true,
            "maximum": 1.5, "exclusiveMaximum": true, "multipleOf": 0.25
        }}});
        assert_eq!(
            errors(excl.clone(), json!({"ratio": 0})),
            ["spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"]
        );
        assert_eq!(
            errors(excl.clone(), json!({"ratio": 1.5})),
            ["spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5"]
        );
        assert_eq!(
            errors(excl.clone(), json!({"ratio": 0.3})),
            ["spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.25"]
        );
        assert!(errors(excl, json!({"ratio": 0.75})).is_empty());
        let mult =
            json!({"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 3}}});
        assert_eq!(
            errors(mult, json!({"n": 7})),
            ["spec.n: Invalid value: 7: spec.n in body should be a multiple of 3"]
        );
    }

    #[test]
    fn integers_follow_kubernetes_json_rules() {
        // 2.0 is an integer, as Kubernetes' JSON decoding and kube-openapi see it.
        assert!(errors(replicas_schema(), json!({"replicas": 2.0})).is_empty());
        // 2.5 fails the type check and the int64 range check.
        assert_eq!(
            errors(replicas_schema(), json!({"replicas": 2.5})),
            [
                r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#,
                "spec.replicas: Invalid value: 2.5: Checked value must be of type integer (default format) in spec.replicas",
            ]
        );
        let i32s = json!({"type": "object", "properties": {"port": {"type": "integer", "format": "int32"}}});
        assert_eq!(
            errors(i32s.clone(), json!({"port": 3_000_000_000_i64})),
            [
                "spec.port: Invalid value: 3000000000: Checked value must be of type integer with format int32 in spec.port"
            ]
        );
        assert!(errors(i32s, json!({"port": 8080})).is_empty());
        // Numbers accept integers.
        let num = json!({"type": "object", "properties": {"x": {"type": "number"}}});
        assert!(errors(num, json!({"x": 3})).is_empty());
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
                "spec.ratio: Invalid value: 1e+39: Checked value must be of type number with format float in spec.ratio"
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
    fn maps_use_bracketed_keys() {
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
                r#"spec.labels[bar]: Invalid value: "integer": spec.labels[bar] in body must be of type string: "integer""#,
                "spec.labels[foo]: Too long: may not be more than 5 bytes",
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
    fn pruning_is_reported_and_preserve_unknown_fields_keeps_data() {
        let s = json!({"type": "object", "properties": {
            "db": {"type": "object", "properties": {"host": {"type": "string"}}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                      "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "users": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "free": {"x-kubernetes-preserve-unknown-fields": true},
            "res": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "properties": {"spec": {"type": "object"}}}
        }});
        let (v, errs, pruned) = run(
            s,
            json!({
                "db": {"host": "h", "port": 5432},
                "extra": {"anything": [1, 2], "known": {"a": "x", "b": "gone"}},
                "users": [{"name": "a", "age": 3}],
                "free": [1, "two", {"three": 3}],
                "res": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}},
                "unknownTop": true
            }),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(
            pruned,
            [
                "spec.db.port",
                "spec.extra.known.b",
                "spec.res.data",
                "spec.unknownTop",
                "spec.users[0].age",
            ]
        );
        assert_eq!(
            v,
            json!({
                "db": {"host": "h"},
                "extra": {"anything": [1, 2], "known": {"a": "x"}},
                "users": [{"name": "a"}],
                "free": [1, "two", {"three": 3}],
                "res": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
            })
        );
    }

    #[test]
    fn defaults_apply_recursively_like_kube_apiserver() {
        let s = json!({"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 1},
            "storage": {"type": "object", "default": {}, "properties": {
                "size": {"type": "string", "default": "10Gi"},
                "class": {"type": "string"},
                "backup": {"type": "object", "default": {"enabled": false}, "properties": {
                    "enabled": {"type": "boolean"},
                    "schedule": {"type": "string", "default": "0 2 * * *"}
                }}
            }},
            "mode": {"type": "string", "default": "no"},
            "note": {"type": "string", "nullable": true, "default": "x"},
            "gone": {"type": "string"},
            "users": {"type": "array", "items": {"type": "object", "properties": {
                "role": {"type": "string", "default": "viewer"}, "name": {"type": "string"}
            }}},
            "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "on"}}
        }});
        let (v, errs, pruned) = run(
            s,
            json!({"mode": null, "note": null, "gone": null, "users": [{"name": "a"}, {"name": "b", "role": "admin"}],
                   "labels": {"a": null, "b": "off"}}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert!(pruned.is_empty());
        assert_eq!(
            v,
            json!({
                "mode": "no",
                "note": null,
                "users": [{"name": "a", "role": "viewer"}, {"name": "b", "role": "admin"}],
                "labels": {"a": "on", "b": "off"},
                "replicas": 1,
                "storage": {"size": "10Gi", "backup": {"enabled": false, "schedule": "0 2 * * *"}}
            })
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

    #[test]
    fn message_rendering_follows_go() {
        assert_eq!(
            go_value(&json!({"b": 1, "a": "<x>", "c": 1.0})),
            r#"{"a":"\u003cx\u003e","b":1,"c":1}"#
        );
        assert_eq!(go_value(&json!(1e6)), "1e+06");
        assert_eq!(go_value(&json!("a\nb")), r#""a\nb""#);
        let e = FieldError {
            field: "spec.x".into(),
            kind: FieldErrorKind::Forbidden,
            bad_value: Some(json!("ignored")),
            detail: "may not be set".into(),
        };
        assert_eq!(e.to_string(), "spec.x: Forbidden: may not be set");
        assert_eq!(cmp_paths("spec.a[10]", "spec.a[9]"), Ordering::Greater);
        assert_eq!(cmp_paths("spec.a", "spec.a.b"), Ordering::Less);
        assert_eq!(cmp_paths("spec.m[b]", "spec.m[a]"), Ordering::Greater);
    }

    /// kube-openapi formats a float bound with `%v` (`ExceedsMaximum` and
    /// friends in `pkg/validation/errors/schema.go`), so 1e6 <= |x| < 1e21
    /// prints in `e` notation; an integer value against an integral bound
    /// goes through `MaximumInt` and prints plain digits. Checked against
    /// kube-apiserver v1.36 with a CRD of the same schema (tests/it/api.rs
    /// `number_bound_messages_match_kube_apiserver`).
    #[test]
    fn number_bound_messages_use_go_float_format() {
        let schema = json!({"type": "object", "properties": {
            "big": {"type": "number", "maximum": 1000000},
            "small": {"type": "number", "minimum": 0.00001},
            "excl": {"type": "number", "maximum": 2500000, "exclusiveMaximum": true},
            "step": {"type": "number", "multipleOf": 0.5},
            "int": {"type": "number", "maximum": 1000000}
        }});
        let errs = errors(
            schema,
            json!({
                "big": 1500000.5,
                "small": 0.000001,
                "excl": 2500000.0,
                "step": 1000000.25,
                "int": 2000000
            }),
        );
        assert_eq!(
            errs,
            [
                "spec.big: Invalid value: 1.5000005e+06: spec.big in body should be less than or equal to 1e+06",
                "spec.excl: Invalid value: 2.5e+06: spec.excl in body should be less than 2.5e+06",
                "spec.int: Invalid value: 2000000: spec.int in body should be less than or equal to 1000000",
                "spec.small: Invalid value: 1e-06: spec.small in body should be greater than or equal to 1e-05",
                "spec.step: Invalid value: 1.00000025e+06: spec.step in body should be a multiple of 0.5",
            ]
        );
    }

    #[test]
    fn compiled_schemas_are_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CompiledSchema>();
        assert_send_sync::<FieldError>();
        assert_send_sync::<SchemaError>();
    }

    #[test]
    fn root_field_may_be_empty() {
        let s = replicas_schema();
        let errs = compiled(s).validate(&json!({"replicas": -1}), "");
        assert_eq!(
            errs[0].to_string(),
            "replicas: Invalid value: -1: replicas in body should be greater than or equal to 0"
        );
    }

    #[test]
    fn validate_schema_accepts_structural_schemas() {
        let s = json!({"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true},
            "free": {"x-kubernetes-preserve-unknown-fields": true},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "auth": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                     "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
            "ios": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "size": {"type": "string", "default": "1Gi", "pattern": "^[0-9]+Gi$"}
        }});
        assert_eq!(validate_schema(&s), Vec::<Issue>::new());
    }

    #[test]
    fn validate_schema_reports_every_violation() {
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
        let issues: Vec<String> = validate_schema(&s)
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
            validate_schema(&json!({"type": "string"}))[0].to_string(),
            r#"/type: must be object at the root, not "string""#
        );
    }

    /// Validation throughput: `cargo test --release -- --ignored --nocapture bench`.
    #[test]
    #[ignore = "benchmark"]
    fn bench_validate_100k_objects() {
        let schema = json!({"type": "object", "required": ["replicas"], "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 100, "default": 1},
            "image": {"type": "object", "default": {}, "properties": {
                "repository": {"type": "string", "pattern": "^[a-z0-9./-]+$", "default": "nginx"},
                "tag": {"type": "string", "default": "latest"},
                "pullPolicy": {"type": "string", "enum": ["Always", "IfNotPresent", "Never"], "default": "IfNotPresent"}
            }},
            "resources": {"type": "object", "properties": {
                "limits": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}},
                "requests": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}}
            }},
            "storage": {"type": "object", "properties": {
                "size": {"type": "string", "pattern": "^[0-9]+(Mi|Gi|Ti)$"},
                "class": {"type": "string", "nullable": true}
            }},
            "users": {"type": "array", "maxItems": 50, "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 63},
                "roles": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
            }}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "ingress": {"type": "object", "properties": {
                "enabled": {"type": "boolean", "default": false},
                "host": {"type": "string", "format": "hostname"}
            }}
        }});
        let compiled = CompiledSchema::new(&schema).expect("compiles");
        let object = json!({
            "replicas": 3,
            "image": {"repository": "registry.example.com/app", "tag": "1.2.3"},
            "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": 1}},
            "storage": {"size": "10Gi", "class": null},
            "users": [{"name": "alice", "roles": ["admin", "dev"]}, {"name": "bob", "roles": ["dev"]}],
            "labels": {"team": "a", "tier": "backend"},
            "ingress": {"enabled": true, "host": "app.example.com"}
        });
        let n = 100_000;
        // Best of three rounds, as the machine may be shared.
        let best = |f: &mut dyn FnMut() -> usize| {
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    assert_eq!(f(), 0, "the benchmark object must be valid");
                    start.elapsed()
                })
                .min()
                .unwrap_or_default()
        };
        let full = best(&mut || {
            (0..n)
                .map(|_| {
                    let mut v = object.clone();
                    compiled.default_and_validate(&mut v, "spec").errors.len()
                })
                .sum()
        });
        let clone_only = best(&mut || {
            (0..n)
                .map(|_| {
                    std::hint::black_box(object.clone())
                        .as_object()
                        .map_or(1, |_| 0)
                })
                .sum()
        });
        let validate_only = best(&mut || {
            (0..n)
                .map(|_| compiled.validate(&object, "spec").len())
                .sum()
        });
        let per_sec = |d: std::time::Duration| n as f64 / d.as_secs_f64();
        println!(
            "default_and_validate (incl. cloning the input): {n} objects in {full:?}: {:.0} objects/s",
            per_sec(full)
        );
        println!("  of which cloning and dropping the input: {clone_only:?}");
        println!(
            "validate only: {n} objects in {validate_only:?}: {:.0} objects/s",
            per_sec(validate_only)
        );
    }
}
