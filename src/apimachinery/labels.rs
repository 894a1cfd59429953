//! `labelSelector`: [`LabelSelector::parse`] is a port of
//! k8s.io/apimachinery `labels.Parse`: the same lexer and recursive-descent
//! parser (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
//! `a>1`, `a<1`, comma-separated, whitespace tolerant), the same key/value
//! validation and the same error texts, so a bad selector gets
//! kube-apiserver's 400 message, e.g.
//! `unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`.

use std::fmt;

use serde_json::{Map, Value};

use crate::golang::{go_syntax_list, quote as go_quote};

/// A label selector operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operator {
    /// `in (…)`.
    In,
    /// `notin (…)`.
    NotIn,
    /// `=`.
    Equals,
    /// `==`.
    DoubleEquals,
    /// `!=`.
    NotEquals,
    /// `key` alone.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `>` (integer values).
    GreaterThan,
    /// `<` (integer values).
    LessThan,
}

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub operator: Operator,
    /// The values, sorted and deduplicated (empty for Exists/DoesNotExist).
    pub values: Vec<String>,
}

impl Requirement {
    fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = labels
            .and_then(|l| l.get(&self.key))
            .and_then(Value::as_str);
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => value.is_some_and(has),
            Operator::NotIn | Operator::NotEquals => !value.is_some_and(has),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(label), [wanted]) = (value, self.values.as_slice()) else {
                    return false;
                };
                match (label.parse::<i64>(), wanted.parse::<i64>()) {
                    (Ok(l), Ok(w)) if self.operator == Operator::GreaterThan => l > w,
                    (Ok(l), Ok(w)) => l < w,
                    _ => false,
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let values = self.values.join(",");
        match self.operator {
            Operator::Exists | Operator::DoesNotExist => Ok(()),
            Operator::Equals => write!(f, "={values}"),
            Operator::DoubleEquals => write!(f, "=={values}"),
            Operator::NotEquals => write!(f, "!={values}"),
            Operator::GreaterThan => write!(f, ">{values}"),
            Operator::LessThan => write!(f, "<{values}"),
            Operator::In => write!(f, " in ({values})"),
            Operator::NotIn => write!(f, " notin ({values})"),
        }
    }
}

/// A parsed label selector: requirements ANDed, sorted by key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses `labelSelector` with kube-apiserver's grammar and messages.
    pub(crate) fn parse(selector: &str) -> Result<LabelSelector, String> {
        let tokens = lex_all(selector);
        let mut parser = Parser {
            tokens,
            position: 0,
        };
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Whether the selector selects everything.
    pub(crate) fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether an object with `labels` (its `metadata.labels`) is selected.
    pub(crate) fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// The requirements, sorted by key (for authorization attributes).
    pub(crate) fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// The same selector over labels stored with `prefix` before each key
    /// (what selects `a=b` selects `<prefix>a=b` there), or `None` when a
    /// prefixed key is not a valid label key, so that no server would
    /// accept the selector.
    pub(crate) fn with_key_prefix(&self, prefix: &str) -> Option<LabelSelector> {
        let requirements = self
            .requirements
            .iter()
            .map(|r| {
                let key = format!("{prefix}{}", r.key);
                label_key_problems(&key)
                    .is_empty()
                    .then(|| Requirement { key, ..r.clone() })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(LabelSelector { requirements })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Error,
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        ")" => Tok::ClosedPar,
        "," => Tok::Comma,
        "!" => Tok::DoesNotExist,
        "==" => Tok::DoubleEquals,
        "=" => Tok::Equals,
        ">" => Tok::GreaterThan,
        "in" => Tok::In,
        "<" => Tok::LessThan,
        "!=" => Tok::NotEquals,
        "notin" => Tok::NotIn,
        "(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// The whole token stream, ending with `End`, as the Go parser scans it.
fn lex_all(s: &str) -> Vec<(Tok, String)> {
    let bytes = s.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < bytes.len() && is_whitespace(bytes[pos]) {
            pos += 1;
        }
        if pos >= bytes.len() {
            out.push((Tok::End, String::new()));
            return out;
        }
        if is_special(bytes[pos]) {
            let start = pos;
            let mut last: Option<(Tok, usize)> = None;
            while pos < bytes.len() && is_special(bytes[pos]) {
                let candidate = &s[start..=pos];
                if let Some(tok) = keyword(candidate) {
                    last = Some((tok, pos + 1));
                } else if last.is_some() {
                    break;
                }
                pos += 1;
            }
            match last {
                Some((tok, end)) => {
                    out.push((tok, s[start..end].to_owned()));
                    pos = end;
                }
                None => out.push((
                    Tok::Error,
                    format!("error expected: keyword found '{}'", &s[start..pos]),
                )),
            }
        } else {
            let start = pos;
            while pos < bytes.len() && !is_special(bytes[pos]) && !is_whitespace(bytes[pos]) {
                pos += 1;
            }
            let text = &s[start..pos];
            let tok = keyword(text).unwrap_or(Tok::Identifier);
            out.push((tok, text.to_owned()));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    tokens: Vec<(Tok, String)>,
    position: usize,
}

impl Parser {
    fn at(&self, i: usize, context: Context) -> (Tok, String) {
        let (tok, lit) = self
            .tokens
            .get(i)
            .cloned()
            .unwrap_or((Tok::End, String::new()));
        let tok = match (context, tok) {
            (Context::Values, Tok::In | Tok::NotIn) => Tok::Identifier,
            (_, t) => t,
        };
        (tok, lit)
    }

    fn lookahead(&self, context: Context) -> (Tok, String) {
        self.at(self.position, context)
    }

    fn consume(&mut self, context: Context) -> (Tok, String) {
        let item = self.at(self.position, context);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Tok::End => return Ok(requirements),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = operator {
            return new_requirement(key, op, Vec::new());
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(key, operator, values)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut tok, mut literal) = self.consume(Context::Values);
        if tok == Tok::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (tok, literal) = self.consume(Context::Values);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        if let Some(err) = validate_label_key(&literal, "<nil>") {
            return Err(err);
        }
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Tok::End | Tok::Comma) && operator != Some(Operator::DoesNotExist) {
            operator = Some(Operator::Exists);
        }
        Ok((literal, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Tok::In => Operator::In,
            Tok::Equals => Operator::Equals,
            Tok::DoubleEquals => Operator::DoubleEquals,
            Tok::GreaterThan => Operator::GreaterThan,
            Tok::LessThan => Operator::LessThan,
            Tok::NotIn => Operator::NotIn,
            Tok::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let values = self.parse_identifiers_list()?;
                let (tok, _) = self.consume(Context::Values);
                if tok != Tok::ClosedPar {
                    // Upstream reports the token that opened the list here.
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Tok::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut values = Vec::new();
        let insert = |values: &mut Vec<String>, v: String| {
            if !values.contains(&v) {
                values.push(v);
            }
        };
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Tok::Identifier => {
                    insert(&mut values, lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if values.is_empty() {
                        insert(&mut values, String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Tok::ClosedPar {
                        insert(&mut values, String::new());
                        return Ok(values);
                    }
                    if tok2 == Tok::Comma {
                        insert(&mut values, String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if matches!(tok, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Tok::Identifier {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// `labels.NewRequirement`: values sorted, checked per operator and as label
/// values; errors aggregated like `field.ErrorList.ToAggregate`.
fn new_requirement(
    key: String,
    operator: Operator,
    mut values: Vec<String>,
) -> Result<Requirement, String> {
    values.sort();
    values.dedup();
    let mut errs: Vec<String> = Vec::new();
    if let Some(err) = validate_label_key(&key, "key") {
        errs.push(err);
    }
    match operator {
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals if values.len() != 1 => {
            errs.push(format!(
                "values: Invalid value: {}: exact-match compatibility requires one single value",
                go_syntax_list(&values)
            ));
        }
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errs.push(format!(
                    "values: Invalid value: {}: for 'Gt', 'Lt' operators, exactly one value is required",
                    go_syntax_list(&values)
                ));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(format!(
                        "values[{i}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                        go_quote(v)
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let problems = label_value_problems(v);
        if !problems.is_empty() {
            errs.push(format!(
                "values[{i}][{key}]: Invalid value: {}: {}",
                go_quote(v),
                problems.join("; ")
            ));
        }
    }
    let mut unique: Vec<String> = Vec::new();
    for e in errs {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    match unique.len() {
        0 => Ok(Requirement {
            key,
            operator,
            values,
        }),
        1 => Err(unique.remove(0)),
        _ => Err(format!("[{}]", unique.join(", "))),
    }
}

const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
pub(crate) const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
pub(crate) const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// apimachinery's `RegexError`.
pub(crate) fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(e);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

pub(crate) fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
pub(crate) fn is_qualified_name(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    match b {
        [] => false,
        [only] => alnum(*only),
        [first, middle @ .., last] => {
            alnum(*first)
                && alnum(*last)
                && middle
                    .iter()
                    .all(|&c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))
        }
    }
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
pub(crate) fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            let ok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
            match b {
                [] => false,
                [only] => ok(*only),
                [first, middle @ .., last] => {
                    ok(*first) && ok(*last) && middle.iter().all(|&c| ok(c) || c == b'-')
                }
            }
        })
}

/// `content.IsLabelKey`.
pub(crate) fn label_key_problems(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                if prefix.len() > 253 {
                    errs.push(format!("prefix part {}", max_len_error(253)));
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(
                            DNS1123_SUBDOMAIN_ERR,
                            DNS1123_SUBDOMAIN_FMT,
                            &["example.com"]
                        )
                    ));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_ERR, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_ERR,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `content.IsLabelValue`.
pub(crate) fn label_value_problems(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !value.is_empty() && !is_qualified_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// A `field.Invalid` error for a bad key, as `<path>: Invalid value: …`.
fn validate_label_key(key: &str, path: &str) -> Option<String> {
    let problems = label_key_problems(key);
    (!problems.is_empty()).then(|| {
        format!(
            "{path}: Invalid value: {}: {}",
            go_quote(key),
            problems.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn sel(s: &str) -> LabelSelector {
        LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn a_prefixed_selector_selects_the_prefixed_labels() {
        const PREFIX: &str = "apps.cozystack.io-";
        let selector = sel("team in (a,b),!gone,tier!=db,example.com/owner,n>3");
        let prefixed = selector.with_key_prefix(PREFIX).expect("valid keys");
        // Parses back as kube-apiserver would read it from a query.
        assert_eq!(sel(&prefixed.to_string()), prefixed);
        assert_eq!(
            prefixed.to_string(),
            "apps.cozystack.io-example.com/owner,!apps.cozystack.io-gone,apps.cozystack.io-n>3,\
             apps.cozystack.io-team in (a,b),apps.cozystack.io-tier!=db"
        );
        let cases = [
            json!({"team": "a", "example.com/owner": "x", "n": "4"}),
            json!({"team": "b", "example.com/owner": "x", "n": "4", "tier": "db"}),
            json!({"team": "a", "example.com/owner": "x", "n": "4", "gone": "1"}),
            json!({"team": "c", "example.com/owner": "x", "n": "9"}),
            json!({"team": "a", "n": "4"}),
            json!({}),
        ];
        for case in cases {
            let stored: Map<String, Value> = labels(case.clone())
                .into_iter()
                .map(|(k, v)| (format!("{PREFIX}{k}"), v))
                .collect();
            assert_eq!(
                prefixed.matches(Some(&stored)),
                selector.matches(Some(&labels(case.clone()))),
                "{case}"
            );
        }
        // A key the prefix makes too long is no label key anywhere.
        let long = format!("{}=x", "k".repeat(50));
        assert!(sel(&long).with_key_prefix(PREFIX).is_none());
        assert!(sel("").with_key_prefix(PREFIX).unwrap().is_empty());
    }

    #[test]
    fn parses_every_form() {
        let l = labels(json!({"app": "pg", "tier": "db", "n": "5", "in": "x"}));
        let cases = [
            ("", true),
            ("   ", true),
            ("app=pg", true),
            ("app==pg", true),
            ("app!=pg", false),
            ("app!=redis", true),
            ("app in (pg, redis)", true),
            ("app in (redis)", false),
            ("app notin (redis)", true),
            ("app notin (pg)", false),
            ("missing notin (pg)", true),
            ("missing!=pg", true),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("app=pg,tier=db", true),
            ("app=pg, tier=web", false),
            ("  app = pg ,  tier in(db)  ", true),
            ("n>4", true),
            ("n<5", false),
            ("missing>1", false),
            ("in in (x)", true),
            ("app in (pg,,x)", true),
            ("app=", false),
            ("app in ()", false),
        ];
        for (s, expected) in cases {
            assert_eq!(sel(s).matches(Some(&l)), expected, "{s}");
        }
        assert!(sel("").is_empty());
        assert!(!sel("a").is_empty());
        assert!(sel("!a").matches(None));
        assert!(!sel("a").matches(None));
        assert!(sel("a=").matches(Some(&labels(json!({"a": ""})))));
    }

    #[test]
    fn requirements_are_sorted_and_printable() {
        let s = sel("z=1,a in (y,x,x),!b");
        assert_eq!(s.to_string(), "a in (x,y),!b,z=1");
        assert_eq!(s.requirements()[0].values, ["x", "y"]);
    }

    #[test]
    fn parse_errors_match_upstream() {
        let cases = [
            (
                "a b",
                "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
            ),
            ("a=b,", "found '', expected: identifier after ','"),
            (
                ",a",
                "found ',', expected: !, identifier, or 'end of string'",
            ),
            ("a=b c", "found 'c', expected: ',' or 'end of string'"),
            (
                "a in b",
                "unable to parse requirement: found 'b' expected: '('",
            ),
            (
                "a in (b c)",
                "unable to parse requirement: found 'c', expected: ',' or ')'",
            ),
            (
                "a in (=)",
                "unable to parse requirement: found '=', expected: ',', ')' or identifier",
            ),
            (
                "a in (b",
                "unable to parse requirement: found '', expected: ',' or ')'",
            ),
            (
                "a=(",
                "unable to parse requirement: found '(', expected: identifier",
            ),
            (
                "!=a",
                "found '!=', expected: !, identifier, or 'end of string'",
            ),
            (
                "!",
                "unable to parse requirement: found '', expected: identifier",
            ),
            (
                "k@y=v",
                "unable to parse requirement: <nil>: Invalid value: \"k@y\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
            (
                "Example.com/a=b",
                "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
            (
                "a/b/c",
                "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            ),
            (
                "a=-b",
                "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
            (
                "a>x",
                "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
        ];
        for (s, expected) in cases {
            assert_eq!(LabelSelector::parse(s).unwrap_err(), expected, "{s}");
        }
        let long = "v".repeat(64);
        let err = LabelSelector::parse(&format!("a={long}")).unwrap_err();
        assert!(err.contains("must be no more than 63 bytes"), "{err}");
        let err = LabelSelector::parse("a in (-x,-y)").unwrap_err();
        assert!(
            err.starts_with("unable to parse requirement: [values[0][a]: Invalid value: \"-x\""),
            "{err}"
        );
    }
}
