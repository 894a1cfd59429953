//! kubectl's `-o jsonpath=TEMPLATE` over the JSON document a command would
//! print with `-o json`, as client-go's `util/jsonpath` renders templates:
//! text is printed as written; each `{expression}` prints every value it
//! selects ([`crate::apimachinery::jsonpath`]), separated by spaces, strings
//! raw and objects as JSON; `{"\n"}` prints a string literal;
//! `{range EXPR}…{end}` renders its body once for each value selected, with
//! expressions inside relative to that value. Missing keys print nothing,
//! as kubectl's default `--allow-missing-template-keys` has it.

use serde_json::Value;

use crate::apimachinery::jsonpath::{self, JsonPath, MissingKeys};
use crate::golang;

/// One part of a parsed template.
#[derive(Debug)]
enum Piece {
    /// Text outside braces, or a string literal inside them.
    Text(String),
    /// `{expression}`.
    Values(JsonPath),
    /// `{range expression}` … `{end}`.
    Range(JsonPath, Vec<Piece>),
}

/// A parsed `-o jsonpath` template.
#[derive(Debug)]
pub struct Template {
    pieces: Vec<Piece>,
    missing: MissingKeys,
}

impl Template {
    /// Parses `text`; the error says what is wrong, as kubectl's does
    /// after `error parsing jsonpath <template>, `.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut stack: Vec<(Option<JsonPath>, Vec<Piece>)> = vec![(None, Vec::new())];
        let mut rest = text;
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                push(&mut stack, Piece::Text(rest.to_owned()));
                break;
            };
            if open > 0 {
                push(&mut stack, Piece::Text(rest[..open].to_owned()));
            }
            let inner_start = open + 1;
            let close = closing_brace(&rest[inner_start..])
                .ok_or_else(|| format!("unclosed action: {}", &rest[open..]))?;
            let inner = rest[inner_start..inner_start + close].trim();
            rest = &rest[inner_start + close + 1..];
            if inner == "end" {
                let (Some(path), body) = stack.pop().expect("the root stays") else {
                    return Err("not in range, nothing to end".to_owned());
                };
                push(&mut stack, Piece::Range(path, body));
            } else if let Some(expr) = inner.strip_prefix("range ") {
                stack.push((Some(JsonPath::parse(expr.trim())?), Vec::new()));
            } else if inner.starts_with('"') {
                push(&mut stack, Piece::Text(unquote(inner)?));
            } else {
                push(&mut stack, Piece::Values(JsonPath::parse(inner)?));
            }
        }
        if stack.len() > 1 {
            return Err("unclosed range: missing {end}".to_owned());
        }
        let (_, pieces) = stack.pop().expect("the root");
        Ok(Template {
            pieces,
            missing: MissingKeys::Allow,
        })
    }

    /// The template rendered over `data`; an error is an expression that
    /// cannot be evaluated there (an index out of range, …).
    pub fn render(&self, data: &Value) -> Result<String, String> {
        let mut out = String::new();
        render(&self.pieces, data, self.missing, &mut out)?;
        Ok(out)
    }
}

impl Template {
    /// The template with `--allow-missing-template-keys=false`
    /// (`allow: false`): a field that selects nothing fails the template
    /// (`nope is not found`) instead of printing nothing.
    pub fn allowing_missing_keys(self, allow: bool) -> Template {
        let missing = if allow {
            MissingKeys::Allow
        } else {
            MissingKeys::Error
        };
        Template { missing, ..self }
    }

    /// The template rendered over `data` as `-o jsonpath-as-json` prints it
    /// (client-go's `EnableJSONOutput`): what each piece selects (a text's
    /// own string, each `{expression}`'s values, the pieces of each pass of
    /// a `{range}`) as one JSON array, indented by four spaces as Go's
    /// `json.MarshalIndent` writes it, on lines of its own.
    pub fn render_as_json(&self, data: &Value) -> Result<String, String> {
        let mut groups = Vec::new();
        collect_groups(&self.pieces, data, self.missing, &mut groups)?;
        let mut out = String::new();
        for group in groups {
            out.push_str(&golang::marshal_indent(&Value::Array(group), "    "));
            out.push('\n');
        }
        Ok(out)
    }
}

fn collect_groups(
    pieces: &[Piece],
    data: &Value,
    missing: MissingKeys,
    groups: &mut Vec<Vec<Value>>,
) -> Result<(), String> {
    for piece in pieces {
        match piece {
            Piece::Text(text) => groups.push(vec![Value::String(text.clone())]),
            Piece::Values(path) => groups.push(
                path.find_with(data, missing)?
                    .into_iter()
                    .cloned()
                    .collect(),
            ),
            Piece::Range(path, body) => {
                for value in path.find_with(data, missing)? {
                    collect_groups(body, value, missing, groups)?;
                }
            }
        }
    }
    Ok(())
}

fn push(stack: &mut [(Option<JsonPath>, Vec<Piece>)], piece: Piece) {
    if let Some((_, pieces)) = stack.last_mut() {
        pieces.push(piece);
    }
}

fn render(
    pieces: &[Piece],
    data: &Value,
    missing: MissingKeys,
    out: &mut String,
) -> Result<(), String> {
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Values(path) => {
                let values = path.find_with(data, missing)?;
                let texts: Vec<String> = values.into_iter().map(jsonpath::to_text).collect();
                out.push_str(&texts.join(" "));
            }
            Piece::Range(path, body) => {
                for value in path.find_with(data, missing)? {
                    render(body, value, missing, out)?;
                }
            }
        }
    }
    Ok(())
}

/// Where the `}` closing an action opened just before `text` is: the first
/// one outside quotes and brackets.
fn closing_brace(text: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            '}' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// A Go double-quoted string literal's value, as `strconv.Unquote` reads
/// it: `\a \b \f \n \r \t \v \\ \"`, `\xHH`, `\uHHHH`, `\UHHHHHHHH` and
/// octal `\NNN`.
fn unquote(literal: &str) -> Result<String, String> {
    let invalid = || format!("invalid string literal {literal}");
    let body = literal
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .ok_or_else(invalid)?;
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\u{b}'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            // A byte: kept only where it is a character on its own.
            Some('x') => out.push(
                char::from_u32(hex(&mut chars, 2).ok_or_else(invalid)?)
                    .filter(char::is_ascii)
                    .ok_or_else(invalid)?,
            ),
            Some('u') => out
                .push(char::from_u32(hex(&mut chars, 4).ok_or_else(invalid)?).ok_or_else(invalid)?),
            Some('U') => out
                .push(char::from_u32(hex(&mut chars, 8).ok_or_else(invalid)?).ok_or_else(invalid)?),
            Some(d @ '0'..='7') => {
                let mut value = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let next = chars
                        .next()
                        .and_then(|c| c.to_digit(8))
                        .ok_or_else(invalid)?;
                    value = value * 8 + next;
                }
                out.push(
                    char::from_u32(value)
                        .filter(char::is_ascii)
                        .ok_or_else(invalid)?,
                );
            }
            _ => return Err(invalid()),
        }
    }
    Ok(out)
}

/// The value of the next `n` hexadecimal digits of `chars`.
fn hex(chars: &mut impl Iterator<Item = char>, n: usize) -> Option<u32> {
    let digits: String = chars.take(n).collect();
    if digits.len() != n {
        return None;
    }
    u32::from_str_radix(&digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds() -> Value {
        json!({"apiVersion": "v1", "kind": "List", "items": [
            {"kind": "Postgres", "plural": "postgreses", "shortNames": ["pg"], "replicas": 3},
            {"kind": "Redis", "plural": "redises", "shortNames": [], "ratio": 0.5},
        ]})
    }

    fn render(template: &str) -> Result<String, String> {
        Template::parse(template)?.render(&kinds())
    }

    #[test]
    fn renders_as_kubectl_does() {
        assert_eq!(render("{.items[*].plural}").unwrap(), "postgreses redises");
        assert_eq!(
            render(r#"{range .items[*]}{.kind}{"\t"}{.plural}{"\n"}{end}"#).unwrap(),
            "Postgres\tpostgreses\nRedis\tredises\n"
        );
        assert_eq!(
            render("kinds: {.items[0].kind}!").unwrap(),
            "kinds: Postgres!"
        );
        assert_eq!(
            render("{.items[0].shortNames} {.items[0].replicas} {.items[1].ratio}").unwrap(),
            r#"["pg"] 3 0.5"#
        );
        // Missing keys print nothing; filters select.
        assert_eq!(render("[{.items[*].nope}]").unwrap(), "[]");
        assert_eq!(
            render(r#"{.items[?(@.kind=="Redis")].plural}"#).unwrap(),
            "redises"
        );
        assert_eq!(render("no braces").unwrap(), "no braces");
    }

    #[test]
    fn bad_templates_say_why() {
        assert!(render("{.items[5].kind}").is_err(), "index out of range");
        assert_eq!(
            Template::parse("{.items[*].kind").unwrap_err(),
            "unclosed action: {.items[*].kind"
        );
        assert_eq!(
            Template::parse("{end}").unwrap_err(),
            "not in range, nothing to end"
        );
        assert_eq!(
            Template::parse("{range .items[*]}{.kind}").unwrap_err(),
            "unclosed range: missing {end}"
        );
        assert!(
            Template::parse(r#"{"\q"}"#)
                .unwrap_err()
                .contains("invalid string literal")
        );
        assert!(Template::parse(r#"{"\x4"}"#).is_err());
    }

    #[test]
    fn string_literals_read_as_go_reads_them() {
        assert_eq!(
            render(r#"{"\u00e9\x41\101\a\"\\"}"#).unwrap(),
            "\u{e9}AA\u{7}\"\\"
        );
    }
}
