//! Go's JSON text for a `serde_json::Value`, byte for byte, in the two
//! encoders Kubernetes prints with:
//!
//! - [`Dialect::EncodingJson`]: Go's `encoding/json` `Marshal` (Go 1.22 and
//!   later), used for `field.Error` values, enum lists, the
//!   `last-applied-configuration` annotation, managedFields manager keys and
//!   kubectl's JSONPath output;
//! - [`Dialect::JsonIter`]: json-iterator v1.1.12 with
//!   `ConfigCompatibleWithStandardLibrary`, which structured-merge-diff uses
//!   for the `k:`/`v:` keys of `FieldsV1`.
//!
//! Both sort object keys, escape `<`, `>`, `&`, U+2028 and U+2029 as
//! `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`, and print numbers the
//! way Go holds them after decoding JSON into `interface{}` (Kubernetes'
//! unstructured decoding): `int64` when the number is an integer that fits,
//! else `float64`. They differ in two places: `encoding/json` writes `\b`
//! and `\f` where json-iterator writes `\u0008` and `\u000c`, and
//! `encoding/json` shortens `1e-07` to `1e-7` where json-iterator does not.
//! Invalid UTF-8, which Go replaces with `\ufffd`, cannot occur in a Rust
//! string.

use std::fmt::Write as _;

use serde_json::{Number, Value};

use super::float;

/// Which Go JSON encoder to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Go's `encoding/json` (`json.Marshal`).
    EncodingJson,
    /// json-iterator v1.1.12, `ConfigCompatibleWithStandardLibrary`.
    JsonIter,
}

/// Go's name of a JSON value's type in `encoding/json`'s errors (`json:
/// cannot unmarshal bool into …`).
pub fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Rewrites every float in `value` that holds an integer as that integer:
/// the number kube-apiserver stores for it. It decodes a custom resource's
/// `3.0` into a `float64` and `encoding/json` writes that back as `3`, so a
/// typed Go client reads it into an `int32` field, where `3.0` fails to
/// decode. Floats beyond `u64` stay as they are (Go would write their
/// digits; `serde_json` cannot hold them as integers), and so does `-0.0`,
/// which Go writes as `-0`.
pub fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && !(f == 0.0 && f.is_sign_negative())
            {
                // The bounds are exactly representable: -2^63 and 2^64.
                if (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
                    *n = Number::from(f as i64);
                } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
                    *n = Number::from(f as u64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(integral_floats_as_integers),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Go's `json.Marshal(v)` of a decoded JSON value.
pub fn marshal(v: &Value) -> String {
    Dialect::EncodingJson.marshal(v)
}

impl Dialect {
    /// The whole value as this encoder writes it.
    pub fn marshal(self, v: &Value) -> String {
        let mut out = String::new();
        self.write_value(&mut out, v);
        out
    }

    /// Appends `v` to `out`.
    pub fn write_value(self, out: &mut String, v: &Value) {
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => self.write_number(out, n),
            Value::String(s) => self.write_string(out, s),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write_value(out, item);
                }
                out.push(']');
            }
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                out.push('{');
                for (i, (key, value)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write_string(out, key);
                    out.push(':');
                    self.write_value(out, value);
                }
                out.push('}');
            }
        }
    }

    /// Appends a number as Go holds it after decoding: `int64` digits, or a
    /// `float64` in this encoder's float format.
    pub fn write_number(self, out: &mut String, n: &Number) {
        if let Some(i) = n.as_i64() {
            let _ = write!(out, "{i}");
            return;
        }
        let f = n.as_f64().unwrap_or(0.0);
        match self {
            Dialect::EncodingJson => out.push_str(&float::format_json(f)),
            Dialect::JsonIter => out.push_str(&float::format_e_or_f(f, 1e21)),
        }
    }

    /// Appends a JSON string with HTML-safe escaping.
    pub fn write_string(self, out: &mut String, s: &str) {
        out.push('"');
        for c in s.chars() {
            match c {
                '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                '\u{8}' if self == Dialect::EncodingJson => out.push_str("\\b"),
                '\u{c}' if self == Dialect::EncodingJson => out.push_str("\\f"),
                c => write_basic_escape(out, c),
            }
        }
        out.push('"');
    }
}

/// Go's `json.MarshalIndent(v, "", indent)` of a decoded JSON value:
/// [`marshal`]'s text with each element of a non-empty object or array on a
/// line of its own, indented by `indent` per level, and a space after each
/// key's colon (`json.Indent`; `{}` and `[]` stay as they are).
pub fn marshal_indent(v: &Value, indent: &str) -> String {
    let compact = marshal(v);
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = compact.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(indent);
        }
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(close);
                    chars.next();
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c => out.push(c),
        }
    }
    out
}

/// json-iterator's `Stream.WriteString`, which structured-merge-diff uses
/// for the field names of a `k:` key: no HTML escaping, and only `"`, `\`,
/// `\n`, `\r`, `\t` and other C0 controls escaped.
pub fn write_jsoniter_plain_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        write_basic_escape(out, c);
    }
    out.push('"');
}

/// The escapes every Go JSON encoder shares: `\"`, `\\`, `\n`, `\r`, `\t`,
/// and `\u00XX` for the rest of C0.
fn write_basic_escape(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c < ' ' => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integral_floats_become_the_integers_go_writes_for_them() {
        let mut v: Value = serde_json::from_str(
            r#"{"a": 3.0, "b": [1e0, -2.0, 2.5, 1e-7, 0.0, -0.0], "c": {"d": 1e19, "e": 1e20},
                "f": -9223372036854775808.0, "g": 7, "h": "3.0", "i": null, "j": true}"#,
        )
        .unwrap();
        integral_floats_as_integers(&mut v);
        assert_eq!(
            v.to_string(),
            r#"{"a":3,"b":[1,-2,2.5,1e-7,0,-0.0],"c":{"d":10000000000000000000,"e":1e+20},"f":-9223372036854775808,"g":7,"h":"3.0","i":null,"j":true}"#
        );
        // What Go writes for each, where it is an integer: the same digits.
        for f in [3.0, 1.0, -2.0, 0.0, 1e19] {
            assert_eq!(float::format_json(f), {
                let mut n = Value::from(f);
                integral_floats_as_integers(&mut n);
                n.to_string()
            });
        }
    }

    /// `encodeStringTests` and `TestHTMLEscape` from golang/go
    /// `src/encoding/json/encode_test.go` (Go 1.22+: `\b` and `\f`), sorted
    /// map keys per `json.Marshal`'s doc, and json-iterator v1.1.12's
    /// `writeStringSlowPathWithHTMLEscaped` (`\u0008`, `\u000c`) and
    /// `WriteFloat64` (no `e-09` clean-up) for the other dialect.
    #[test]
    fn marshal_matches_go() {
        let mut controls = String::new();
        for b in 0u8..0x20 {
            controls.push(char::from(b));
        }
        let rows: Vec<(Value, &str, &str)> = vec![
            (
                json!(controls),
                r#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#,
                r#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\t\n\u000b\u000c\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#,
            ),
            (
                json!({"M": "<html>foo &\u{2028} \u{2029}</html>"}),
                r#"{"M":"\u003chtml\u003efoo \u0026\u2028 \u2029\u003c/html\u003e"}"#,
                r#"{"M":"\u003chtml\u003efoo \u0026\u2028 \u2029\u003c/html\u003e"}"#,
            ),
            (
                json!({"b": [1, 2.5, true, null], "a": "\"\\", "A": {}}),
                r#"{"A":{},"a":"\"\\","b":[1,2.5,true,null]}"#,
                r#"{"A":{},"a":"\"\\","b":[1,2.5,true,null]}"#,
            ),
            // DEL is in encoding/json's safe set.
            (json!("\u{7f}"), "\"\u{7f}\"", "\"\u{7f}\""),
            (json!(1e-7), "1e-7", "1e-07"),
            (json!(1.5e21), "1.5e+21", "1.5e+21"),
            (json!(1.0), "1", "1"),
            (
                json!(-9223372036854775808i64),
                "-9223372036854775808",
                "-9223372036854775808",
            ),
            // Beyond int64 Go decodes a float64.
            (
                json!(18446744073709551615u64),
                "18446744073709552000",
                "18446744073709552000",
            ),
        ];
        for (value, go, jsoniter) in &rows {
            assert_eq!(marshal(value), *go, "json.Marshal({value})");
            assert_eq!(
                Dialect::JsonIter.marshal(value),
                *jsoniter,
                "jsoniter({value})"
            );
        }
    }

    /// `json.MarshalIndent(v, "", "    ")` as Go 1.25 prints it.
    #[test]
    fn marshal_indent_matches_go() {
        let value = json!({"b": [1, {}, [], {"y": "a:b,c{"}], "a": "<"});
        assert_eq!(
            marshal_indent(&value, "    "),
            "{\n    \"a\": \"\\u003c\",\n    \"b\": [\n        1,\n        {},\n        [],\n        {\n            \"y\": \"a:b,c{\"\n        }\n    ]\n}"
        );
        assert_eq!(marshal_indent(&json!([]), "    "), "[]");
        assert_eq!(marshal_indent(&json!("\\\""), "    "), "\"\\\\\\\"\"");
    }

    #[test]
    fn jsoniter_plain_string_skips_html_escaping() {
        let mut out = String::new();
        write_jsoniter_plain_string(&mut out, "a<b>&\u{8}\"\n\u{2028}");
        assert_eq!(out, "\"a<b>&\\u0008\\\"\\n\u{2028}\"");
    }
}
