//! Property names as CEL field names, the way kube-apiserver exposes an
//! object's declared properties to validation rules
//! (`k8s.io/apiserver/pkg/cel/escaping.go`): a name of the form
//! `[a-zA-Z_.-/][a-zA-Z0-9_.-/]*` is selectable with `__` written as
//! `__underscores__`, `.` as `__dot__`, `-` as `__dash__` and `/` as
//! `__slash__`, and a name that is a CEL reserved word (`namespace`, `in`,
//! `if`, …) as `__namespace__`; any other name (a leading digit, another
//! character) cannot be selected. Map keys (`additionalProperties`) are
//! not escaped.

use std::borrow::Cow;

/// CEL's reserved words, which kube-apiserver escapes whole.
const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Property `name` as a CEL field name; `None` when it cannot be one.
pub(crate) fn escape(name: &str) -> Option<Cow<'_, str>> {
    let first = name.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(Cow::Owned(format!("__{name}__")));
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if name.chars().all(plain) && !name.contains("__") {
        return Some(Cow::Borrowed(name));
    }
    let mut out = String::with_capacity(name.len() + 16);
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = after;
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if plain(c) => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(Cow::Owned(out))
}

/// The property a CEL field name `field` selects: the name whose
/// [`escape`] is exactly `field` (so `a__b` selects nothing, while
/// `a__underscores__b` selects `a__b`); `None` when no name escapes to it.
pub(crate) fn unescape(field: &str) -> Option<Cow<'_, str>> {
    if !field.contains("__") {
        return (escape(field).as_deref() == Some(field)).then_some(Cow::Borrowed(field));
    }
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while !rest.is_empty() {
        let sequence = rest.strip_prefix("__").and_then(|after| {
            let end = after.find("__")?;
            let word = &after[..end];
            (!word.is_empty() && !word.contains('_')).then_some((word, &after[end + 2..]))
        });
        match sequence {
            Some(("underscores", after)) => {
                out.push_str("__");
                rest = after;
            }
            Some(("dot", after)) => {
                out.push('.');
                rest = after;
            }
            Some(("dash", after)) => {
                out.push('-');
                rest = after;
            }
            Some(("slash", after)) => {
                out.push('/');
                rest = after;
            }
            Some((word, "")) if out.is_empty() && RESERVED.contains(&word) => {
                out.push_str(word);
                rest = "";
            }
            Some(_) => return None,
            None => {
                let c = rest.chars().next()?;
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    // Only a name that escapes back to `field` is selected by it.
    (escape(&out).as_deref() == Some(field)).then_some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_escape_as_kube_apiserver_escapes_them() {
        let cases = [
            ("replicas", Some("replicas")),
            ("a_b", Some("a_b")),
            ("_x", Some("_x")),
            ("a__b", Some("a__underscores__b")),
            (
                "innodb-buffer-pool",
                Some("innodb__dash__buffer__dash__pool"),
            ),
            (
                "app.kubernetes.io/part-of",
                Some("app__dot__kubernetes__dot__io__slash__part__dash__of"),
            ),
            ("namespace", Some("__namespace__")),
            ("in", Some("__in__")),
            ("-x", Some("__dash__x")),
            ("1st", None),
            ("", None),
            ("a b", None),
            ("ключ", None),
        ];
        for (name, escaped) in cases {
            assert_eq!(escape(name).as_deref(), escaped, "{name:?}");
            if let Some(escaped) = escaped {
                assert_eq!(unescape(escaped).as_deref(), Some(name), "{escaped:?}");
            }
        }
    }

    #[test]
    fn only_the_escaped_form_selects_a_name_that_needs_it() {
        // Raw forms that kube-apiserver refuses.
        assert_eq!(unescape("a__b"), None);
        assert_eq!(unescape("namespace"), None);
        assert_eq!(unescape("__bogus__"), None);
        assert_eq!(unescape("x__namespace__"), None);
        // Plain names select themselves.
        assert_eq!(unescape("replicas").as_deref(), Some("replicas"));
        assert_eq!(unescape("__dash__").as_deref(), Some("-"));
    }
}
