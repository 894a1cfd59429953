//! The JSONPath subset kube-apiserver evaluates for printer columns: a port of
//! the parser and evaluator of k8s.io/client-go `util/jsonpath` as used by the
//! custom-resource table convertor (`AllowMissingKeys(true)`), including its
//! quirks.
//!
//! Supported: fields (`.status.version`, escaped dots `.a\.b`, `['key']`),
//! `.*` (object values in key order, array elements), `..field` (recursive
//! descent), indexes and slices (`[0]`, `[-1]`, `[1:3]`, `[::2]`, `[*]`),
//! unions (`[0,2]`), and filters (`[?(@.type=="Ready")]`, `[?(@.x)]`,
//! `==`, `!=`, `<`, `>`, `<=`, `>=` against strings, numbers, booleans or
//! other `@` paths). An optional surrounding `{…}` is accepted.
//!
//! Evaluation follows Go's reflection-based semantics: a missing key yields no
//! result (not an error), an index out of range is an error, and filter
//! comparisons between different kinds never match — so a JSON integer never
//! equals a numeric literal (client-go compares `int64` with `float64`), while
//! `!=` between different kinds always matches.

use std::cmp::Ordering;

use serde_json::Value;

use crate::golang;

/// Whether a field that selects nothing is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MissingKeys {
    /// It selects nothing (client-go's `AllowMissingKeys(true)`).
    Allow,
    /// `<field> is not found`.
    Error,
}

/// A parsed JSONPath expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JsonPath {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Param {
    value: i64,
    known: bool,
    derived: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// A map key; empty selects the input itself.
    Field(String),
    Wildcard,
    Recursive,
    Array([Param; 3]),
    Union(Vec<Vec<Node>>),
    Filter(Box<Filter>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum FilterOp {
    Exists,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Operand {
    Path(Vec<Node>),
    Literal(Literal),
}

/// Literals as client-go types them; integers become `float64` before any
/// comparison (`evalOperator`), so they are stored as floats.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Str(String),
    Float(f64),
    Bool(bool),
}

#[derive(Debug, Clone, PartialEq)]
struct Filter {
    left: Operand,
    op: FilterOp,
    right: Operand,
}

impl JsonPath {
    /// Parses an expression such as `.status.conditions[?(@.type=="Ready")].status`.
    pub(crate) fn parse(expr: &str) -> Result<JsonPath, String> {
        let trimmed = expr.trim();
        let body = trimmed
            .strip_prefix('{')
            .and_then(|s| s.strip_suffix('}'))
            .unwrap_or(trimmed);
        let chars: Vec<char> = body.chars().collect();
        let mut parser = PathParser { chars, pos: 0 };
        let nodes = parser.parse_nodes()?;
        Ok(JsonPath { nodes })
    }

    /// Every value the expression selects in `data`, in order. An error means
    /// the expression cannot be evaluated on this data (an index out of
    /// range, indexing a non-array, …); kube-apiserver shows such cells empty.
    pub(crate) fn find<'a>(&self, data: &'a Value) -> Result<Vec<&'a Value>, String> {
        self.find_with(data, MissingKeys::Allow)
    }

    /// [`JsonPath::find`], where a field that selects nothing is an error
    /// (`<field> is not found`) with `MissingKeys::Error`, as client-go's
    /// JSONPath with `AllowMissingKeys(false)` (kubectl's
    /// `--allow-missing-template-keys=false`) has it.
    pub(crate) fn find_with<'a>(
        &self,
        data: &'a Value,
        missing: MissingKeys,
    ) -> Result<Vec<&'a Value>, String> {
        eval_list(&self.nodes, vec![data], missing).map_err(|(_, e)| e)
    }
}

struct PathParser {
    chars: Vec<char>,
    pos: usize,
}

fn is_terminator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
}

impl PathParser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn rest_starts_with(&self, prefix: &str) -> bool {
        (self.pos..)
            .zip(prefix.chars())
            .all(|(i, c)| self.chars.get(i) == Some(&c))
    }

    fn parse_nodes(&mut self) -> Result<Vec<Node>, String> {
        let mut nodes = Vec::new();
        while let Some(c) = self.peek() {
            if self.rest_starts_with("[?(") {
                nodes.push(self.parse_filter()?);
                continue;
            }
            if self.rest_starts_with("..") {
                if nodes.last() == Some(&Node::Recursive) {
                    return Err("invalid multiple recursive descent".to_owned());
                }
                self.pos += 2;
                nodes.push(Node::Recursive);
                if self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    nodes.push(self.parse_field());
                }
                continue;
            }
            match c {
                c if c.is_whitespace() => self.pos += 1,
                '@' | '$' => self.pos += 1,
                '.' => {
                    self.pos += 1;
                    nodes.push(self.parse_field());
                }
                '[' => nodes.extend(self.parse_array()?),
                other => {
                    return Err(format!(
                        "unrecognized character in action: {}",
                        golang::unicode_sharp(other)
                    ));
                }
            }
        }
        Ok(nodes)
    }

    fn parse_field(&mut self) -> Node {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c == '\\' {
                self.pos += 1;
                if let Some(next) = self.peek() {
                    name.push(next);
                    self.pos += 1;
                }
                continue;
            }
            if is_terminator(c) {
                break;
            }
            name.push(c);
            self.pos += 1;
        }
        if name == "*" {
            Node::Wildcard
        } else {
            Node::Field(name)
        }
    }

    /// `[…]` up to the first `]`: a union, a quoted key or a slice.
    fn parse_array(&mut self) -> Result<Vec<Node>, String> {
        let start = self.pos + 1;
        let mut end = start;
        while end < self.chars.len() && self.chars[end] != ']' {
            if self.chars[end] == '\n' {
                return Err("unterminated array".to_owned());
            }
            end += 1;
        }
        if end >= self.chars.len() {
            return Err("unterminated array".to_owned());
        }
        self.pos = end + 1;
        let text: String = self.chars[start..end].iter().collect();
        parse_array_text(&text)
    }

    fn parse_filter(&mut self) -> Result<Node, String> {
        self.pos += 3;
        let start = self.pos;
        let mut begin = false;
        let mut ended = false;
        let mut pair = '"';
        loop {
            let Some(c) = self.peek() else {
                return Err("unterminated filter".to_owned());
            };
            self.pos += 1;
            match c {
                '\n' => return Err("unterminated filter".to_owned()),
                '"' | '\'' => {
                    if !begin {
                        begin = true;
                        pair = c;
                        continue;
                    }
                    let escaped = self.pos >= 2 && self.chars[self.pos - 2] == '\\';
                    if !escaped && c == pair {
                        ended = true;
                    }
                }
                ')' if begin == ended => break,
                _ => {}
            }
        }
        if self.peek() != Some(']') {
            return Err("unclosed array expect ]".to_owned());
        }
        self.pos += 1;
        let text: String = self.chars[start..self.pos - 2].iter().collect();
        // `^([^!<>=]+)([!<>=]+)(.+?)$`
        let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=');
        let split = text.find(is_op).filter(|&i| i > 0);
        let filter = match split {
            None => Filter {
                left: parse_operand(&text)?,
                op: FilterOp::Exists,
                right: Operand::Path(Vec::new()),
            },
            Some(i) => {
                let after = &text[i..];
                let op_len = after.find(|c: char| !is_op(c)).unwrap_or(after.len());
                let (op_text, right) = after.split_at(op_len);
                if right.is_empty() {
                    Filter {
                        left: parse_operand(&text)?,
                        op: FilterOp::Exists,
                        right: Operand::Path(Vec::new()),
                    }
                } else {
                    let op = match op_text {
                        "==" => FilterOp::Eq,
                        "!=" => FilterOp::Ne,
                        "<" => FilterOp::Lt,
                        ">" => FilterOp::Gt,
                        "<=" => FilterOp::Le,
                        ">=" => FilterOp::Ge,
                        other => return Err(format!("unrecognized filter operator {other}")),
                    };
                    Filter {
                        left: parse_operand(&text[..i])?,
                        op,
                        right: parse_operand(right)?,
                    }
                }
            }
        };
        Ok(Node::Filter(Box::new(filter)))
    }
}

fn parse_array_text(text: &str) -> Result<Vec<Node>, String> {
    let text = if text == "*" { ":" } else { text };
    if text.contains(',') {
        let mut union = Vec::new();
        for part in text.split(',') {
            union.push(parse_array_text(part.trim_matches(' '))?);
        }
        return Ok(vec![Node::Union(union)]);
    }
    if let Some(key) = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .filter(|k| !k.contains('\''))
    {
        // client-go re-parses `['k']` as `.k`, so dots still separate fields.
        let mut parser = PathParser {
            chars: format!(".{key}").chars().collect(),
            pos: 0,
        };
        return parser.parse_nodes();
    }
    let parts: Vec<&str> = text.split(':').collect();
    let well_formed = parts.len() <= 3
        && parts.iter().all(|p| {
            let digits = p.strip_prefix('-').unwrap_or(p);
            digits.chars().all(|c| c.is_ascii_digit())
        });
    if !well_formed {
        return Err(format!("invalid array index {text}"));
    }
    let number = |s: &str| {
        s.parse::<i64>()
            .map_err(|_| format!("array index {s} is not a number"))
    };
    let unknown = Param {
        value: 0,
        known: false,
        derived: false,
    };
    let mut params = [unknown; 3];
    if !parts[0].is_empty() {
        params[0] = Param {
            value: number(parts[0])?,
            known: true,
            derived: false,
        };
    }
    match parts.get(1) {
        Some(p) if !p.is_empty() => {
            params[1] = Param {
                value: number(p)?,
                known: true,
                derived: false,
            }
        }
        Some(_) => {}
        None => {
            params[1] = Param {
                value: params[0].value + 1,
                known: true,
                derived: true,
            }
        }
    }
    if let Some(p) = parts.get(2).filter(|p| !p.is_empty()) {
        params[2] = Param {
            value: number(p)?,
            known: true,
            derived: false,
        };
    }
    Ok(vec![Node::Array(params)])
}

/// One side of a filter: a quoted string, a number, a boolean or a path.
fn parse_operand(text: &str) -> Result<Operand, String> {
    let t = text.trim();
    if let Some(quote) = t.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let inner = t
            .strip_prefix(quote)
            .and_then(|s| s.strip_suffix(quote))
            .ok_or_else(|| format!("unterminated quoted string {t}"))?;
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some(other) => out.push(other),
                None => return Err(format!("unquote string {t} error invalid syntax")),
            }
        }
        return Ok(Operand::Literal(Literal::Str(out)));
    }
    if t.starts_with(['-', '+']) || t.starts_with(|c: char| c.is_ascii_digit()) {
        let value: f64 = t.parse().map_err(|_| format!("cannot parse number {t}"))?;
        return Ok(Operand::Literal(Literal::Float(value)));
    }
    match t {
        "true" => return Ok(Operand::Literal(Literal::Bool(true))),
        "false" => return Ok(Operand::Literal(Literal::Bool(false))),
        _ => {}
    }
    let mut parser = PathParser {
        chars: t.chars().collect(),
        pos: 0,
    };
    Ok(Operand::Path(parser.parse_nodes()?))
}

type EvalResult<'a> = Result<Vec<&'a Value>, (Vec<&'a Value>, String)>;

/// Evaluates `nodes` in turn; on error returns what the failing node
/// returned with it, as client-go's `evalList` does (filters use that
/// partial result): its input, or nothing for a field not found.
fn eval_list<'a>(nodes: &[Node], input: Vec<&'a Value>, missing: MissingKeys) -> EvalResult<'a> {
    let mut current = input;
    for node in nodes {
        let had_input = !current.is_empty();
        current = match eval_node(node, &current, missing) {
            Ok(next) => next,
            Err(e) => return Err((current, e)),
        };
        // client-go's `evalField`: no input, no output; else nothing found
        // is an error when missing keys are.
        if let Node::Field(name) = node
            && !name.is_empty()
            && had_input
            && current.is_empty()
            && missing == MissingKeys::Error
        {
            return Err((current, format!("{name} is not found")));
        }
    }
    Ok(current)
}

/// Object values in key order, or array elements (Go's `iterHelper`).
fn children(v: &Value) -> Option<Vec<&Value>> {
    match v {
        Value::Array(a) => Some(a.iter().collect()),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Some(keys.into_iter().filter_map(|k| m.get(k)).collect())
        }
        _ => None,
    }
}

fn eval_node<'a>(
    node: &Node,
    input: &[&'a Value],
    missing: MissingKeys,
) -> Result<Vec<&'a Value>, String> {
    let mut out = Vec::new();
    match node {
        Node::Field(name) if name.is_empty() => out.extend_from_slice(input),
        Node::Field(name) => {
            for v in input {
                if let Value::Object(m) = v
                    && let Some(x) = m.get(name)
                {
                    out.push(x);
                }
            }
        }
        Node::Wildcard => {
            for v in input {
                if let Some(c) = children(v) {
                    out.extend(c);
                }
            }
        }
        Node::Recursive => recursive(input, &mut out),
        Node::Array(params) => {
            for v in input {
                if v.is_null() {
                    continue;
                }
                let Value::Array(items) = v else {
                    return Err(format!("{} is not array or slice", type_name(v)));
                };
                let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
                let mut p = *params;
                if !p[0].known {
                    p[0].value = 0;
                }
                if p[0].value < 0 {
                    p[0].value += len;
                }
                if !p[1].known {
                    p[1].value = len;
                }
                if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
                    p[1].value += len;
                }
                let (start, end) = (p[0].value, p[1].value);
                if start == end {
                    // client-go returns here, skipping any further inputs.
                    return Ok(out);
                }
                if start >= len || start < 0 {
                    return Err(format!(
                        "array index out of bounds: index {start}, length {len}"
                    ));
                }
                if end > len || end < 0 {
                    return Err(format!(
                        "array index out of bounds: index {}, length {len}",
                        end - 1
                    ));
                }
                if start > end {
                    return Err(format!(
                        "starting index {start} is greater than ending index {end}"
                    ));
                }
                let step = if p[2].known {
                    if p[2].value <= 0 {
                        return Err("step must be > 0".to_owned());
                    }
                    usize::try_from(p[2].value).unwrap_or(usize::MAX)
                } else {
                    1
                };
                let (s, e) = (
                    usize::try_from(start).unwrap_or(0),
                    usize::try_from(end).unwrap_or(0),
                );
                out.extend(items[s..e].iter().step_by(step));
            }
        }
        Node::Union(lists) => {
            for list in lists {
                out.extend(eval_list(list, input.to_vec(), missing).map_err(|(_, e)| e)?);
            }
        }
        Node::Filter(filter) => {
            for v in input {
                let elements = children(v).unwrap_or_else(|| vec![*v]);
                for element in elements {
                    // client-go's `evalFilter` reads what the left side
                    // selected before its error for `exists`; a comparison
                    // fails with it where missing keys are errors.
                    let lefts = match operand_values(&filter.left, element, missing) {
                        Ok(values) => values,
                        Err((_, e))
                            if missing == MissingKeys::Error && filter.op != FilterOp::Exists =>
                        {
                            return Err(e);
                        }
                        Err((values, _)) => values,
                    };
                    let rights =
                        operand_values(&filter.right, element, missing).map_err(|(_, e)| e)?;
                    match lefts.len() {
                        0 => continue,
                        1 => {}
                        _ => return Err("can only compare one element at a time".to_owned()),
                    }
                    if filter.op == FilterOp::Exists {
                        out.push(element);
                        continue;
                    }
                    match rights.len() {
                        0 => continue,
                        1 => {}
                        _ => return Err("can only compare one element at a time".to_owned()),
                    }
                    if compare(filter.op, &lefts[0], &rights[0]) {
                        out.push(element);
                    }
                }
            }
        }
    }
    Ok(out)
}

fn recursive<'a>(input: &[&'a Value], out: &mut Vec<&'a Value>) {
    for v in input {
        if let Some(c) = children(v).filter(|c| !c.is_empty()) {
            out.push(v);
            recursive(&c, out);
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// A filter operand's value: a reference into the data or a literal.
#[derive(Debug, Clone)]
enum Operandi<'a> {
    Data(&'a Value),
    Lit(&'a Literal),
}

fn operand_values<'a>(
    operand: &'a Operand,
    element: &'a Value,
    missing: MissingKeys,
) -> Result<Vec<Operandi<'a>>, (Vec<Operandi<'a>>, String)> {
    match operand {
        Operand::Literal(l) => Ok(vec![Operandi::Lit(l)]),
        Operand::Path(nodes) => match eval_list(nodes, vec![element], missing) {
            Ok(values) => Ok(values.into_iter().map(Operandi::Data).collect()),
            Err((values, e)) => Err((values.into_iter().map(Operandi::Data).collect(), e)),
        },
    }
}

/// Go `text/template`'s `basicKind` of a value.
#[derive(Debug, Clone, PartialEq)]
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'a str),
}

fn basic<'a>(v: &Operandi<'a>) -> Option<Basic<'a>> {
    Some(match v {
        Operandi::Lit(Literal::Str(s)) => Basic::Str(s),
        Operandi::Lit(Literal::Float(f)) => Basic::Float(*f),
        Operandi::Lit(Literal::Bool(b)) => Basic::Bool(*b),
        Operandi::Data(Value::Bool(b)) => Basic::Bool(*b),
        Operandi::Data(Value::String(s)) => Basic::Str(s),
        Operandi::Data(Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                Basic::Int(i)
            } else if let Some(u) = n.as_u64() {
                Basic::Uint(u)
            } else {
                Basic::Float(n.as_f64()?)
            }
        }
        Operandi::Data(_) => return None,
    })
}

/// `template.Equal`: `(result, comparison error)`.
fn go_equal(a: &Operandi<'_>, b: &Operandi<'_>) -> (bool, bool) {
    let (Some(x), Some(y)) = (basic(a), basic(b)) else {
        return (false, true);
    };
    match (x, y) {
        (Basic::Bool(x), Basic::Bool(y)) => (x == y, false),
        (Basic::Int(x), Basic::Int(y)) => (x == y, false),
        (Basic::Uint(x), Basic::Uint(y)) => (x == y, false),
        (Basic::Float(x), Basic::Float(y)) => (x == y, false),
        (Basic::Str(x), Basic::Str(y)) => (x == y, false),
        (Basic::Int(x), Basic::Uint(y)) => (u64::try_from(x).is_ok_and(|x| x == y), false),
        (Basic::Uint(x), Basic::Int(y)) => (u64::try_from(y).is_ok_and(|y| x == y), false),
        _ => (false, true),
    }
}

/// `template.Less`: `(result, comparison error)`.
fn go_less(a: &Operandi<'_>, b: &Operandi<'_>) -> (bool, bool) {
    let (Some(x), Some(y)) = (basic(a), basic(b)) else {
        return (false, true);
    };
    match (x, y) {
        (Basic::Int(x), Basic::Int(y)) => (x < y, false),
        (Basic::Uint(x), Basic::Uint(y)) => (x < y, false),
        (Basic::Float(x), Basic::Float(y)) => (x.partial_cmp(&y) == Some(Ordering::Less), false),
        (Basic::Str(x), Basic::Str(y)) => (x < y, false),
        (Basic::Int(x), Basic::Uint(y)) => (u64::try_from(x).map_or(true, |x| x < y), false),
        (Basic::Uint(x), Basic::Int(y)) => (u64::try_from(y).is_ok_and(|y| x < y), false),
        _ => (false, true),
    }
}

/// client-go's `evalOperator`: comparison errors are ignored and the result
/// the template function returned alongside is used.
fn compare(op: FilterOp, a: &Operandi<'_>, b: &Operandi<'_>) -> bool {
    let less_equal = || {
        let (lt, err) = go_less(a, b);
        if lt || err { (lt, err) } else { go_equal(a, b) }
    };
    match op {
        FilterOp::Exists => true,
        FilterOp::Eq => go_equal(a, b).0,
        FilterOp::Ne => !go_equal(a, b).0,
        FilterOp::Lt => go_less(a, b).0,
        FilterOp::Le => less_equal().0,
        FilterOp::Gt => {
            let (le, err) = less_equal();
            !err && !le
        }
        FilterOp::Ge => {
            let (lt, err) = go_less(a, b);
            !err && !lt
        }
    }
}

/// How client-go's `PrintResults` prints one value: strings raw, maps and
/// arrays as JSON, numbers and booleans as Go's `fmt.Print`, null as
/// `<no value>`.
pub(crate) fn to_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<no value>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            // Go decodes any other number as a float64.
            None => golang::format_g(n.as_f64().unwrap_or(0.0)),
        },
        Value::Array(_) | Value::Object(_) => golang::marshal(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object() -> Value {
        json!({
            "metadata": {"name": "pg", "labels": {"app.kubernetes.io/name": "postgres", "tier": "db"}},
            "spec": {
                "replicas": 3,
                "ratio": 2.5,
                "items": [{"name": "a", "n": 1}, {"name": "b", "n": 2}, {"name": "c", "n": 3}],
                "empty": [],
                "weights": [{"w": 0.5, "id": "x"}, {"w": 1.5, "id": "y"}],
                "nothing": null,
            },
            "status": {
                "version": "17.2",
                "conditions": [
                    {"type": "Released", "status": "True", "message": "installed"},
                    {"type": "Ready", "status": "False", "message": "waiting"}
                ]
            }
        })
    }

    fn find(expr: &str) -> Result<Vec<Value>, String> {
        let path = JsonPath::parse(expr)?;
        let data = object();
        path.find(&data)
            .map(|values| values.into_iter().cloned().collect())
    }

    /// client-go with `AllowMissingKeys(false)`: a field that selects
    /// nothing from some input fails; nothing in, nothing out; a filter's
    /// existence test reads the failure as "absent".
    #[test]
    fn missing_keys_can_be_errors() {
        let data = object();
        let strict = |expr: &str| -> Result<Vec<Value>, String> {
            JsonPath::parse(expr)?
                .find_with(&data, MissingKeys::Error)
                .map(|v| v.into_iter().cloned().collect())
        };
        assert_eq!(
            strict(".status.missing"),
            Err("missing is not found".to_owned())
        );
        assert_eq!(
            strict(".spec.items[*].n"),
            Ok(vec![json!(1), json!(2), json!(3)])
        );
        assert_eq!(strict(".spec.empty[*].n"), Ok(vec![]));
        assert_eq!(strict(".spec.weights[?(@.x)].id"), Ok(vec![]));
        assert_eq!(
            strict(".spec.weights[?(@.x==1)].id"),
            Err("x is not found".to_owned())
        );
    }

    #[test]
    fn fields_and_missing_keys() {
        assert_eq!(find(".status.version").unwrap(), [json!("17.2")]);
        assert_eq!(find("{.status.version}").unwrap(), [json!("17.2")]);
        assert_eq!(find("$.spec.replicas").unwrap(), [json!(3)]);
        assert_eq!(find(".status.missing").unwrap(), Vec::<Value>::new());
        assert_eq!(find(".nope.deeper.still").unwrap(), Vec::<Value>::new());
        assert_eq!(find(".spec.nothing").unwrap(), [Value::Null]);
        assert_eq!(find(".spec.nothing.x").unwrap(), Vec::<Value>::new());
        assert_eq!(find(".spec.items.name").unwrap(), Vec::<Value>::new());
        assert_eq!(
            find(r".metadata.labels.app\.kubernetes\.io/name").unwrap(),
            [json!("postgres")]
        );
        assert_eq!(find(".metadata['name']").unwrap(), [json!("pg")]);
    }

    #[test]
    fn indexes_slices_wildcards() {
        assert_eq!(find(".spec.items[0].name").unwrap(), [json!("a")]);
        assert_eq!(find(".spec.items[-1].name").unwrap(), [json!("c")]);
        assert_eq!(
            find(".spec.items[*].name").unwrap(),
            [json!("a"), json!("b"), json!("c")]
        );
        assert_eq!(
            find(".spec.items[1:].name").unwrap(),
            [json!("b"), json!("c")]
        );
        assert_eq!(
            find(".spec.items[::2].name").unwrap(),
            [json!("a"), json!("c")]
        );
        assert_eq!(
            find(".spec.items[0,2].name").unwrap(),
            [json!("a"), json!("c")]
        );
        assert_eq!(
            find(".metadata.labels.*").unwrap(),
            [json!("postgres"), json!("db")]
        );
        assert!(find(".spec.items[5].name").is_err());
        assert!(find(".spec.empty[0]").is_err());
        assert!(find(".spec.replicas[0]").is_err());
        assert!(find(".metadata.labels[*]").is_err());
        assert_eq!(find(".spec.nothing[0]").unwrap(), Vec::<Value>::new());
        assert_eq!(
            find("..name").unwrap(),
            [json!("pg"), json!("a"), json!("b"), json!("c")]
        );
    }

    #[test]
    fn filters() {
        assert_eq!(
            find(r#".status.conditions[?(@.type=="Ready")].status"#).unwrap(),
            [json!("False")]
        );
        assert_eq!(
            find(r#".status.conditions[?(@.type == 'Released')].message"#).unwrap(),
            [json!("installed")]
        );
        assert_eq!(
            find(r#".status.conditions[?(@.type!="Ready")].type"#).unwrap(),
            [json!("Released")]
        );
        assert_eq!(
            find(".status.conditions[?(@.message)].type").unwrap().len(),
            2
        );
        assert_eq!(
            find(".spec.items[?(@.missing)].name").unwrap(),
            Vec::<Value>::new()
        );
        assert_eq!(
            find(r#".spec.items[?(@.name>"a")].name"#).unwrap(),
            [json!("b"), json!("c")]
        );
        // client-go compares int64 with float64: never equal, always unequal.
        assert_eq!(
            find(".spec.items[?(@.n==2)].name").unwrap(),
            Vec::<Value>::new()
        );
        assert_eq!(find(".spec.items[?(@.n!=2)].name").unwrap().len(), 3);
        assert_eq!(
            find(".spec.items[?(@.n<2)].name").unwrap(),
            Vec::<Value>::new()
        );
        assert_eq!(find(".spec.weights[?(@.w==1.5)].id").unwrap(), [json!("y")]);
        assert_eq!(find(".spec.weights[?(@.w>1)].id").unwrap(), [json!("y")]);
        assert_eq!(find(".spec.weights[?(@.w<=0.5)].id").unwrap(), [json!("x")]);
        // A filter on an object filters its values (in key order).
        assert_eq!(find(".spec[?(@.id)]").unwrap().len(), 0);
        assert_eq!(
            find(".status[?(@.type)].type").unwrap(),
            Vec::<Value>::new()
        );
        assert_eq!(
            find(".status.conditions[?(@.status==true)].type").unwrap(),
            Vec::<Value>::new()
        );
        assert_eq!(find(".spec.items[?(@.n==@.n)].name").unwrap().len(), 3);
    }

    #[test]
    fn parse_errors() {
        for bad in [
            ".a[",
            ".a[x]",
            ".a[?(@.b==\"c\"",
            ".a[?(@.b=\"c\")]",
            ".a[1:2:3:4]",
            ".a....b",
            ".a[?(@.b==\"c)]",
        ] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn text_rendering() {
        assert_eq!(to_text(&json!("x")), "x");
        assert_eq!(to_text(&json!(3)), "3");
        assert_eq!(to_text(&json!(2.5)), "2.5");
        assert_eq!(to_text(&json!(1e6)), "1e+06");
        assert_eq!(to_text(&json!(123456.0)), "123456");
        assert_eq!(to_text(&json!(0.00001)), "1e-05");
        assert_eq!(to_text(&json!(true)), "true");
        assert_eq!(to_text(&Value::Null), "<no value>");
        assert_eq!(
            to_text(&json!({"b": 1, "a": "<x>"})),
            r#"{"a":"\u003cx\u003e","b":1}"#
        );
        assert_eq!(to_text(&json!([1, "a"])), r#"[1,"a"]"#);
    }
}
