//! How Go's `fmt` prints a decoded JSON value as Kubernetes holds one
//! (`interface{}` holding `map[string]interface {}`, `[]interface {}`,
//! `string`, `int64` or `float64`, `bool`, or `nil`): `%T`, `%v` and `%#v`,
//! and the same of structured-merge-diff's `*valueUnstructured` around it
//! (`&{…}`, `&value.valueUnstructured{Value:…}`), which its typing errors
//! print (`.spec.external: expected boolean, got &{yes}`).
//!
//! Integers print as `int64`s, other numbers as `float64`s (`%v`: `'g'`
//! with shortest digits). Maps print their keys sorted, as `fmt` does.

use std::fmt::Write as _;

use serde_json::Value;

use super::float::format_g;
use super::quote::write_quoted;

/// `%T` of the value.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// `%v` of the value held in an `interface{}` (`map[a:1]`, `[x y]`).
pub fn v(v: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, v);
    out
}

/// `%v` of structured-merge-diff's value around `v`: `&{…}`.
pub fn value_v(v: &Value) -> String {
    let mut out = String::from("&{");
    write_v(&mut out, v);
    out.push('}');
    out
}

/// `%#v` of structured-merge-diff's value around `v`.
pub fn value_sharp_v(v: &Value) -> String {
    let mut out = String::from("&value.valueUnstructured{Value:");
    write_sharp_v(&mut out, v);
    out.push('}');
    out
}

fn number(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i.to_string(),
        (None, Some(u), _) => u.to_string(),
        (_, _, Some(f)) => format_g(f),
        _ => n.to_string(),
    }
}

fn sorted(m: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = m.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// `%v` of the value.
fn write_v(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push_str("map[");
            for (i, (k, item)) in sorted(m).into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, item);
            }
            out.push(']');
        }
    }
}

/// `%#v` of the value held in an `interface{}`.
fn write_sharp_v(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("interface {}(nil)"),
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => write_quoted(out, s),
        Value::Array(items) => {
            out.push_str("[]interface {}{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_sharp_v(out, item);
            }
            out.push('}');
        }
        Value::Object(m) => {
            out.push_str("map[string]interface {}{");
            for (i, (k, item)) in sorted(m).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_quoted(out, k);
                out.push(':');
                write_sharp_v(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Rows as Go 1.26 prints them (`fmt.Sprintf` of the decoded value,
    /// and kube-apiserver 1.36's answers to applies with these values).
    #[test]
    fn prints_as_go_fmt_does() {
        for (v, t, plain, sharp) in [
            (
                json!("yes"),
                "string",
                "&{yes}",
                r#"&value.valueUnstructured{Value:"yes"}"#,
            ),
            (
                json!(true),
                "bool",
                "&{true}",
                "&value.valueUnstructured{Value:true}",
            ),
            (
                json!(3),
                "int64",
                "&{3}",
                "&value.valueUnstructured{Value:3}",
            ),
            (
                json!(2.5),
                "float64",
                "&{2.5}",
                "&value.valueUnstructured{Value:2.5}",
            ),
            (
                json!(1e6),
                "float64",
                "&{1e+06}",
                "&value.valueUnstructured{Value:1e+06}",
            ),
            (
                json!([1, "a"]),
                "[]interface {}",
                "&{[1 a]}",
                r#"&value.valueUnstructured{Value:[]interface {}{1, "a"}}"#,
            ),
            (
                json!({"b": [true], "a": 1}),
                "map[string]interface {}",
                "&{map[a:1 b:[true]]}",
                r#"&value.valueUnstructured{Value:map[string]interface {}{"a":1, "b":[]interface {}{true}}}"#,
            ),
            (
                json!({"a": null}),
                "map[string]interface {}",
                "&{map[a:<nil>]}",
                r#"&value.valueUnstructured{Value:map[string]interface {}{"a":interface {}(nil)}}"#,
            ),
        ] {
            assert_eq!(type_name(&v), t, "{v}");
            assert_eq!(value_v(&v), plain, "{v}");
            assert_eq!(value_sharp_v(&v), sharp, "{v}");
        }
    }
}
