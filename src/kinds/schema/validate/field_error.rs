//! Validation errors as kube-apiserver reports them: [`FieldError`] with its
//! cause ([`FieldErrorKind`]), the message text (bad values printed the way
//! Go prints them), and field paths: how they are built (`.name`, `[i]`,
//! `[key]`) and the order errors are sorted in.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use crate::golang::{self, format_g as go_float, quote as go_quote};

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
    /// Path of the offending field, e.g. `spec.users[2].name`,
    /// `spec.labels.foo` (a map key; `spec.labels[foo]` in CEL rule errors)
    /// or `<nil>` (kube-openapi errors that name no field).
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
    pub(super) fn new(
        field: &str,
        kind: FieldErrorKind,
        bad_value: Option<Value>,
        detail: String,
    ) -> Self {
        Self {
            field: field.to_string(),
            kind,
            bad_value,
            detail,
        }
    }

    /// The path this error sorts by: its field, or for one of
    /// kube-openapi's errors that name no field (`<nil>`), the path its
    /// message names (`… in spec.replicas`), so that it follows that
    /// field's own errors (kube-openapi raises it after the type check).
    pub(super) fn order_path(&self) -> &str {
        match self.detail.rfind(" in ") {
            Some(i) if self.field == "<nil>" => &self.detail[i + 4..],
            _ => &self.field,
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

/// Appends `.name` (or `name` at the root) to a field path.
pub(super) fn push_field(path: &mut String, name: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
}

/// Appends `[i]` to a field path.
pub(super) fn push_index(path: &mut String, i: usize) {
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

/// Appends `.key` (a map key) to a field path, as kube-openapi's validators
/// and kube-apiserver's pruning write it (`spec.users.alice.role`).
pub(super) fn push_key(path: &mut String, key: &str) {
    path.push('.');
    path.push_str(key);
}

/// Appends `[key]` (a map key) to a field path, as kube-apiserver's CEL
/// validation writes it (`field.Path.Key`).
pub(super) fn push_cel_key(path: &mut String, key: &str) {
    path.push('[');
    path.push_str(key);
    path.push(']');
}

/// Orders field paths segment by segment, list indices numerically.
pub(super) fn cmp_paths(a: &str, b: &str) -> Ordering {
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
        // An int64 when it fits, else a float64, as Go decoded it.
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => go_quote(s),
        other => golang::marshal(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
