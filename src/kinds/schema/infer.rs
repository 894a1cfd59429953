//! Inference of a structural schema from a chart's `values.yaml`, for charts
//! that ship no `values.schema.json`.
//!
//! Types and defaults come from the values as serde-saphyr reads them.
//! serde-saphyr follows YAML 1.1 for plain (unquoted) scalars the way Helm
//! does (Helm reads values with go-yaml through sigs.k8s.io/yaml): `yes`,
//! `no`, `on`, `off`, `y`, `n` (any case) become booleans, `~` and `null`
//! become null, `1.0` a number. Quoted scalars always stay strings. The
//! inferred type is whatever serde-saphyr produced.
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
//! above a key. Cozystack's cozyvalues-gen form, `## @param {type} name -
//! Description`, is understood too, and the `## @field` lines of a `##
//! @typedef` named by a parameter's type (also through `map[string]T` and
//! `[]T`) describe its children. `@param` wins when both describe a key.
//! `@skip`, `@section`, `@extra`, `@enum` and `@value` lines are ignored.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Issue, json_type_of, push_pointer};

/// The result of [`infer_from_values`].
#[derive(Debug, Clone, PartialEq)]
pub struct Inferred {
    /// The structural schema for the kind's `spec`.
    pub schema: Value,
    /// Things worth a look, with JSON pointers into the values document
    /// (e.g. a `## @param` naming a key that does not exist).
    pub warnings: Vec<Issue>,
}

/// Why [`infer_from_values`] could not read `values.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
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
pub fn infer_from_values(values_yaml: &str) -> Result<Inferred, InferError> {
    let mut warnings = Vec::new();
    let values: Value = if is_blank_yaml(values_yaml) {
        Value::Null
    } else {
        parse(values_yaml, &mut warnings)?
    };
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
    apply_docs(values_yaml, &mut schema, &mut warnings);
    Ok(Inferred {
        schema: Value::Object(schema),
        warnings,
    })
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
    options
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
    use serde_saphyr::MessageFormatter as _;
    let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
    let inner = e.without_snippet();
    let raw = serde_saphyr::DefaultMessageFormatter.format_message(inner);
    let message: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
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

// -- descriptions ------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Seg {
    Key(String),
    Items,
}

struct Doc {
    text: String,
    modifiers: Vec<String>,
    line: usize,
    /// cozyvalues-gen type (`{T}`), whose `@typedef` fields describe the
    /// children.
    type_name: Option<String>,
}

/// A `## @field {type} name - description` line of a cozyvalues-gen
/// `@typedef`.
struct Field {
    name: String,
    type_name: String,
    text: String,
}

/// Everything `scan_comments` finds.
#[derive(Default)]
struct Comments {
    params: Docs,
    helm_docs: Docs,
    typedefs: HashMap<String, Vec<Field>>,
    current_typedef: Option<String>,
}

fn apply_docs(src: &str, schema: &mut Map<String, Value>, warnings: &mut Vec<Issue>) {
    let Comments {
        params,
        helm_docs,
        typedefs,
        ..
    } = scan_comments(src);
    let mut done: HashMap<Vec<Seg>, usize> = HashMap::new();
    for (path, doc) in params {
        if let Some(prev) = done.get(&path) {
            warnings.push(Issue::new(
                display_pointer(&path),
                format!(
                    "line {}: @param repeats the description from line {prev}; ignored",
                    doc.line
                ),
            ));
            continue;
        }
        match lookup(schema, &path) {
            Some(node) => {
                apply_modifiers(node, &doc.modifiers);
                if !doc.text.is_empty() {
                    set_description(node, &doc.text);
                }
                if let Some(t) = &doc.type_name {
                    describe_fields(node, t, &typedefs, 0);
                }
                done.insert(path, doc.line);
            }
            None => warnings.push(Issue::new(
                display_pointer(&path),
                format!(
                    "line {}: @param names a key that values.yaml does not define",
                    doc.line
                ),
            )),
        }
    }
    for (path, doc) in helm_docs {
        if done.contains_key(&path) || doc.text.is_empty() {
            continue;
        }
        if let Some(node) = lookup(schema, &path) {
            set_description(node, &doc.text);
        }
    }
}

/// Describes the children of `node` from the cozyvalues-gen type `t`:
/// a `@typedef` name, `map[string]T` (every entry) or `[]T` (the items).
fn describe_fields(
    node: &mut Map<String, Value>,
    t: &str,
    typedefs: &HashMap<String, Vec<Field>>,
    depth: usize,
) {
    if depth > 16 {
        return;
    }
    let t = t.trim_start_matches('*');
    if let Some(inner) = t.strip_prefix("map[string]") {
        if let Some(Value::Object(props)) = node.get_mut("properties") {
            for v in props.values_mut() {
                if let Value::Object(child) = v {
                    describe_fields(child, inner, typedefs, depth + 1);
                }
            }
        }
        if let Some(Value::Object(child)) = node.get_mut("additionalProperties") {
            describe_fields(child, inner, typedefs, depth + 1);
        }
        return;
    }
    if let Some(inner) = t.strip_prefix("[]") {
        if let Some(Value::Object(child)) = node.get_mut("items") {
            describe_fields(child, inner, typedefs, depth + 1);
        }
        return;
    }
    let Some(fields) = typedefs.get(t) else {
        return;
    };
    for f in fields {
        let Some(Value::Object(child)) =
            node.get_mut("properties").and_then(|p| p.get_mut(&f.name))
        else {
            continue;
        };
        if !f.text.is_empty() && !child.contains_key("description") {
            set_description(child, &f.text);
        }
        describe_fields(child, &f.type_name, typedefs, depth + 1);
    }
}

fn display_pointer(path: &[Seg]) -> String {
    let mut p = String::new();
    for s in path {
        p = match s {
            Seg::Key(k) => push_pointer(&p, k),
            Seg::Items => push_pointer(&p, "0"),
        };
    }
    p
}

fn lookup<'m>(
    root: &'m mut Map<String, Value>,
    path: &[Seg],
) -> Option<&'m mut Map<String, Value>> {
    let mut node = root;
    for seg in path {
        let next = match seg {
            Seg::Key(k) => node.get_mut("properties")?.as_object_mut()?.get_mut(k)?,
            Seg::Items => node.get_mut("items")?,
        };
        node = next.as_object_mut()?;
    }
    Some(node)
}

fn set_description(node: &mut Map<String, Value>, text: &str) {
    let mut out = Map::new();
    let mut placed = false;
    for (k, v) in std::mem::take(node) {
        let after_header = matches!(
            k.as_str(),
            "type" | "nullable" | "x-kubernetes-int-or-string"
        );
        if !after_header && !placed && k != "description" {
            out.insert("description".into(), text.into());
            placed = true;
        }
        if k != "description" {
            out.insert(k, v);
        }
    }
    if !placed {
        out.insert("description".into(), text.into());
    }
    *node = out;
}

fn apply_modifiers(node: &mut Map<String, Value>, modifiers: &[String]) {
    let is_null_node =
        node.get("nullable") == Some(&Value::Bool(true)) && !node.contains_key("type");
    for m in modifiers {
        match m.as_str() {
            "nullable" if !node.contains_key("nullable") => {
                let mut out = Map::new();
                for (k, v) in std::mem::take(node) {
                    let is_type = k == "type";
                    out.insert(k, v);
                    if is_type {
                        out.insert("nullable".into(), true.into());
                    }
                }
                out.entry("nullable").or_insert(Value::Bool(true));
                *node = out;
            }
            "string" | "object" | "array" if is_null_node => {
                let mut out = Map::new();
                out.insert("type".into(), m.as_str().into());
                out.insert("nullable".into(), true.into());
                match m.as_str() {
                    "object" => {
                        out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
                    }
                    "array" => {
                        out.insert("items".into(), Value::Object(free_form()));
                    }
                    _ => {}
                }
                *node = out;
            }
            _ => {}
        }
    }
}

/// Parses a readme-generator key path such as `a.b`, `list[0].name` or
/// `list[].name` (`\.` is a literal dot).
fn parse_param_path(p: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut cur = String::new();
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'.') => {
                cur.push('.');
                chars.next();
            }
            '.' => {
                if !cur.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut cur)));
                }
            }
            '[' => {
                if !cur.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut cur)));
                }
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                }
                segs.push(Seg::Items);
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        segs.push(Seg::Key(cur));
    }
    segs
}

type Docs = Vec<(Vec<Seg>, Doc)>;

/// Finds `## @param` lines and `# --` comments (with the key path they sit
/// above) in the YAML text.
fn scan_comments(src: &str) -> Comments {
    let mut found = Comments::default();
    // (indent, path, is a list-item marker)
    let mut stack: Vec<(usize, Vec<Seg>, bool)> = Vec::new();
    let mut pending: Option<(String, usize)> = None;
    let mut block_scalar: Option<usize> = None;
    for (i, raw) in src.lines().enumerate() {
        let lineno = i + 1;
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        let trimmed = raw.trim();
        if let Some(bi) = block_scalar {
            if trimmed.is_empty() || indent > bi {
                continue;
            }
            block_scalar = None;
        }
        if trimmed.is_empty() {
            pending = None;
            continue;
        }
        if trimmed.starts_with('#') {
            comment(trimmed, lineno, &mut pending, &mut found);
            continue;
        }
        if trimmed == "---" || trimmed == "..." || trimmed.starts_with('%') {
            pending = None;
            continue;
        }
        // Strip list-item dashes ("- ", possibly repeated).
        let mut content = trimmed;
        let mut dash_indents = Vec::new();
        let mut col = indent;
        while let Some(rest) = content.strip_prefix('-') {
            if !(rest.is_empty() || rest.starts_with(' ')) {
                break;
            }
            dash_indents.push(col);
            let r = rest.trim_start_matches(' ');
            col += content.len() - r.len();
            content = r;
        }
        for &d in &dash_indents {
            while let Some((ti, _, items)) = stack.last() {
                if *ti > d || (*ti == d && *items) {
                    stack.pop();
                } else {
                    break;
                }
            }
            let mut path = stack.last().map(|(_, p, _)| p.clone()).unwrap_or_default();
            path.push(Seg::Items);
            stack.push((d, path, true));
        }
        if content.starts_with('#') {
            // "- # -- text": a comment after a list dash.
            comment(content, lineno, &mut pending, &mut found);
            continue;
        }
        let Some((key, rest)) = split_key(content) else {
            pending = None;
            continue;
        };
        while let Some((ti, _, _)) = stack.last() {
            if *ti >= col {
                stack.pop();
            } else {
                break;
            }
        }
        let mut path = stack.last().map(|(_, p, _)| p.clone()).unwrap_or_default();
        path.push(Seg::Key(key));
        if let Some((text, line)) = pending.take() {
            found.helm_docs.push((
                path.clone(),
                Doc {
                    text,
                    modifiers: Vec::new(),
                    line,
                    type_name: None,
                },
            ));
        }
        let value = rest.trim_start();
        if value.starts_with('|') || value.starts_with('>') {
            block_scalar = Some(col);
        }
        stack.push((col, path, false));
    }
    found
}

/// Handles one comment: collects `## @param` lines, starts (`# --`) or
/// continues a helm-docs description.
fn comment(
    trimmed: &str,
    lineno: usize,
    pending: &mut Option<(String, usize)>,
    found: &mut Comments,
) {
    let body = trimmed.trim_start_matches('#').trim();
    if let Some(rest) = body.strip_prefix('@') {
        let (directive, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let rest = rest.trim();
        match directive {
            "param" => {
                if let Some((type_name, name, text)) = split_typed(rest) {
                    // cozyvalues-gen: `@param {type} name - description`.
                    let (modifiers, text) = split_modifiers(text);
                    found.params.push((
                        parse_param_path(name),
                        Doc {
                            text: text.to_string(),
                            modifiers,
                            line: lineno,
                            type_name: Some(type_name.to_string()),
                        },
                    ));
                    return;
                }
                let (path, text) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let (modifiers, text) = split_modifiers(text.trim());
                if !path.is_empty() {
                    found.params.push((
                        parse_param_path(path),
                        Doc {
                            text: text.to_string(),
                            modifiers,
                            line: lineno,
                            type_name: None,
                        },
                    ));
                }
            }
            "typedef" => {
                found.current_typedef = split_typed(rest).map(|(_, name, _)| name.to_string());
                if let Some(name) = &found.current_typedef {
                    found.typedefs.entry(name.clone()).or_default();
                }
            }
            "field" => {
                if let (Some(td), Some((type_name, name, text))) =
                    (&found.current_typedef, split_typed(rest))
                {
                    found.typedefs.entry(td.clone()).or_default().push(Field {
                        name: name.to_string(),
                        type_name: type_name.to_string(),
                        text: text.to_string(),
                    });
                }
            }
            "section" | "enum" | "param-section" => found.current_typedef = None,
            _ => {}
        }
        return;
    }
    if let Some(rest) = trimmed.strip_prefix("# --") {
        *pending = Some((rest.trim().to_string(), lineno));
    } else if let Some((text, _)) = pending.as_mut()
        && !body.is_empty()
    {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(body);
    }
}

/// Splits cozyvalues-gen `{type} name - description`, where the name may be
/// written `[name]` (optional) and followed by `=default`.
fn split_typed(rest: &str) -> Option<(&str, &str, &str)> {
    let inner = rest.strip_prefix('{')?;
    let close = inner.find('}')?;
    let type_name = inner[..close].trim();
    let after = inner[close + 1..].trim_start();
    let (name_part, text) = match after.find(" - ") {
        Some(i) => (&after[..i], after[i + 3..].trim()),
        None => (after.trim_end(), ""),
    };
    let name_part = name_part.trim();
    let name = match name_part.strip_prefix('[') {
        Some(r) => r.split(']').next().unwrap_or(""),
        None => name_part.split('=').next().unwrap_or(""),
    };
    let name = name.trim();
    (!name.is_empty()).then_some((type_name, name, text))
}

/// Splits leading `[mod1, mod2]` modifiers off a readme-generator description.
fn split_modifiers(text: &str) -> (Vec<String>, &str) {
    if let Some(rest) = text.strip_prefix('[')
        && let Some(end) = rest.find(']')
    {
        let mods = rest[..end]
            .split(',')
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .collect();
        return (mods, rest[end + 1..].trim());
    }
    (Vec::new(), text)
}

/// The key of a `key: value` line, if it is one.
fn split_key(content: &str) -> Option<(String, &str)> {
    let (key, after) = if let Some(rest) = content.strip_prefix('"') {
        let mut end = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let end = end?;
        let raw = &rest[..end];
        let key = serde_json::from_str::<String>(&format!("\"{raw}\""))
            .unwrap_or_else(|_| raw.to_string());
        (key, &rest[end + 1..])
    } else if let Some(rest) = content.strip_prefix('\'') {
        let mut i = 0;
        let b = rest.as_bytes();
        let end = loop {
            match b.get(i) {
                None => return None,
                Some(b'\'') if b.get(i + 1) == Some(&b'\'') => i += 2,
                Some(b'\'') => break i,
                Some(_) => i += 1,
            }
        };
        (rest[..end].replace("''", "'"), &rest[end + 1..])
    } else {
        if content.starts_with(['[', '{', '#', '&', '*', '!', '|', '>', '%', '@', '`', '?']) {
            return None;
        }
        let bytes = content.as_bytes();
        let pos = (0..bytes.len()).find(|&i| {
            bytes[i] == b':'
                && (i + 1 == bytes.len() || bytes[i + 1] == b' ' || bytes[i + 1] == b'\t')
        })?;
        let key = content[..pos].trim_end();
        if key.contains(" #") {
            return None;
        }
        (key.to_string(), &content[pos..])
    };
    let after = after.trim_start();
    let rest = after.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, rest))
}

#[cfg(test)]
mod tests {
    use super::super::validate::{CompiledSchema, validate_schema};
    use super::*;
    use serde_json::json;

    fn infer(src: &str) -> Inferred {
        let out = infer_from_values(src).expect("infers");
        assert_eq!(
            validate_schema(&out.schema),
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
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
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
        assert!(res.is_valid(), "{:?}", res.errors);
        let values: Value = serde_saphyr::from_str(src).expect("parses");
        assert_eq!(spec, values);
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
    fn bitnami_params_describe_keys() {
        let out = infer(
            r#"
## @section Global parameters
## @param global.imageRegistry Global Docker image registry
## @param global.storageClass [nullable] Global StorageClass
## @skip global.internal
global:
  imageRegistry: ""
  storageClass: ""
  internal: x
## @param auth.existingSecret [string, nullable] Name of an existing secret
## @param users[0].name Name of the first user
## @param users[].roles Roles of each user
## @param missing.key This key does not exist
## @param replicaCount
auth:
  existingSecret:
users:
  - name: admin
    roles: [a]
replicaCount: 1
"#,
        );
        let p = &out.schema["properties"];
        assert_eq!(
            p["global"]["properties"]["imageRegistry"],
            json!({"type": "string", "description": "Global Docker image registry", "default": ""})
        );
        assert_eq!(
            p["global"]["properties"]["storageClass"],
            json!({"type": "string", "nullable": true, "description": "Global StorageClass", "default": ""})
        );
        assert!(
            p["global"]["properties"]["internal"]
                .get("description")
                .is_none()
        );
        assert_eq!(
            p["auth"]["properties"]["existingSecret"],
            json!({"type": "string", "nullable": true, "description": "Name of an existing secret"})
        );
        assert_eq!(
            p["users"]["items"]["properties"]["name"]["description"],
            "Name of the first user"
        );
        assert_eq!(
            p["users"]["items"]["properties"]["roles"]["description"],
            "Roles of each user"
        );
        assert!(p["replicaCount"].get("description").is_none());
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].pointer, "/missing/key");
        assert!(
            out.warnings[0]
                .message
                .starts_with("line 13: @param names a key"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn helm_docs_comments_describe_the_key_below() {
        let out = infer(
            r#"
# -- Number of replicas
replicaCount: 1
image:
  # -- Image repository
  # (without the registry)
  repository: nginx
  # A plain comment is not a description
  tag: latest

  # -- Separated by a blank line: ignored
  # @default -- annotations are skipped

pullPolicy: Always
script: |
  # -- not a comment, part of the block
  key: value
list:
- # -- item name
  name: a
  # -- item value
  value: 1
# -- After a block scalar
after: true
"#,
        );
        let p = &out.schema["properties"];
        assert_eq!(p["replicaCount"]["description"], "Number of replicas");
        assert_eq!(
            p["image"]["properties"]["repository"]["description"],
            "Image repository (without the registry)"
        );
        assert!(p["image"]["properties"]["tag"].get("description").is_none());
        assert!(p["pullPolicy"].get("description").is_none());
        assert!(p["script"].get("description").is_none());
        assert_eq!(
            p["script"]["default"],
            "# -- not a comment, part of the block\nkey: value\n"
        );
        assert_eq!(
            p["list"]["items"]["properties"]["name"]["description"],
            "item name"
        );
        assert_eq!(
            p["list"]["items"]["properties"]["value"]["description"],
            "item value"
        );
        assert_eq!(p["after"]["description"], "After a block scalar");
        // @param wins over helm-docs.
        let both = infer("## @param a From param\n# -- From helm-docs\na: 1\n");
        assert_eq!(both.schema["properties"]["a"]["description"], "From param");
    }

    #[test]
    fn cozyvalues_gen_comments_describe_keys_and_typedef_fields() {
        let out = infer(
            r#"
## @typedef {struct} Resources - Explicit CPU and memory configuration.
## @field {quantity} [cpu] - CPU available.
## @field {quantity} [memory] - Memory (RAM) available.

## @typedef {struct} User - A user.
## @field {string} [password] - Password for the user.
## @field {Resources} [resources]="{}" - Per-user resources.

## @enum {string} Preset - Sizing preset.
## @value small

## @param {int} replicas - Number of replicas.
replicas: 2
## @param {Resources} [resources] - Resources of each replica.
resources:
  cpu: 1
## @param {Preset} preset="small" - Sizing preset.
preset: small
## @param {map[string]User} users - Users configuration map.
users:
  alice:
    password: x
    resources:
      memory: 1Gi
"#,
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        let p = &out.schema["properties"];
        assert_eq!(p["replicas"]["description"], "Number of replicas.");
        assert_eq!(p["resources"]["description"], "Resources of each replica.");
        assert_eq!(
            p["resources"]["properties"]["cpu"]["description"],
            "CPU available."
        );
        assert_eq!(p["preset"]["description"], "Sizing preset.");
        let alice = &p["users"]["properties"]["alice"]["properties"];
        assert_eq!(alice["password"]["description"], "Password for the user.");
        assert_eq!(alice["resources"]["description"], "Per-user resources.");
        assert_eq!(
            alice["resources"]["properties"]["memory"]["description"],
            "Memory (RAM) available."
        );
        assert_eq!(
            split_typed("{string} [evictionHardMemory]=\"7%\" - Hard threshold."),
            Some(("string", "evictionHardMemory", "Hard threshold."))
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
        assert!(
            dup.warnings[0]
                .message
                .starts_with("line 3:1: duplicate mapping key"),
            "{:?}",
            dup.warnings
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

    #[test]
    fn param_paths() {
        assert_eq!(
            parse_param_path("a.b[0].c"),
            [
                Seg::Key("a".into()),
                Seg::Key("b".into()),
                Seg::Items,
                Seg::Key("c".into())
            ]
        );
        assert_eq!(
            parse_param_path("a[].c"),
            [Seg::Key("a".into()), Seg::Items, Seg::Key("c".into())]
        );
        assert_eq!(
            parse_param_path(r"annotations.prometheus\.io/scrape"),
            [
                Seg::Key("annotations".into()),
                Seg::Key("prometheus.io/scrape".into())
            ]
        );
        assert_eq!(
            split_key("\"quoted: key\": 1").map(|(k, _)| k),
            Some("quoted: key".into())
        );
        assert_eq!(split_key("'it''s': 1").map(|(k, _)| k), Some("it's".into()));
        assert_eq!(
            split_key("url: http://x").map(|(k, _)| k),
            Some("url".into())
        );
        assert_eq!(split_key("just a scalar"), None);
    }
}
