//! `fieldSelector`: [`FieldSelector::parse`] follows k8s.io/apimachinery
//! `fields.ParseSelector` (terms split on unescaped commas, `=`, `==`, `!=`,
//! `\,` `\=` `\\` escapes, no whitespace trimming) and then, like
//! kube-apiserver's custom-resource converter, accepts only `metadata.name`
//! and `metadata.namespace` (`field label not supported: spec.x`).

/// A field selector operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `=` or `==`.
    Eq,
    /// `!=`.
    NotEq,
}

impl Op {
    fn matches(self, wanted: &str, actual: &str) -> bool {
        match self {
            Op::Eq => wanted == actual,
            Op::NotEq => wanted != actual,
        }
    }
}

/// A parsed field selector over the fields every kind supports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FieldSelector {
    /// The `metadata.name` requirement.
    pub name: Option<(Op, String)>,
    /// The `metadata.namespace` requirement.
    pub namespace: Option<(Op, String)>,
}

/// `fields.UnescapeValue`.
fn unescape_field_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                other => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{other}"
                    ));
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_owned());
    }
    Ok(out)
}

/// `fields.splitTerms`: commas not preceded by a backslash separate terms.
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// `fields.splitTerm`: the first `!=`, `==` or `=` splits the term.
fn split_term(term: &str) -> Option<(&str, Op, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (text, op) in [("!=", Op::NotEq), ("==", Op::Eq), ("=", Op::Eq)] {
            if let Some(rhs) = rest.strip_prefix(text) {
                return Some((&term[..i], op, rhs));
            }
        }
    }
    None
}

impl FieldSelector {
    /// Parses `fieldSelector`. Only `metadata.name` and `metadata.namespace`
    /// are known; anything else is `field label not supported: <field>`. Two
    /// different requirements on the same field are refused (kube-apiserver
    /// would AND them; nothing sends that).
    pub(crate) fn parse(selector: &str) -> Result<FieldSelector, String> {
        let mut parts = split_terms(selector);
        parts.sort_unstable();
        let mut terms = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                ));
            };
            terms.push((lhs, op, unescape_field_value(rhs)?));
        }
        let mut out = FieldSelector::default();
        for (lhs, op, value) in terms {
            let slot = match lhs {
                "metadata.name" => &mut out.name,
                "metadata.namespace" => &mut out.namespace,
                other => return Err(format!("field label not supported: {other}")),
            };
            match slot {
                Some(existing) if *existing != (op, value.clone()) => {
                    return Err(format!(
                        "field selector: only one requirement per field is supported: {lhs}"
                    ));
                }
                _ => *slot = Some((op, value)),
            }
        }
        Ok(out)
    }

    /// Whether an object named `name` in `namespace` is selected.
    pub(crate) fn matches(&self, name: &str, namespace: &str) -> bool {
        self.name
            .as_ref()
            .is_none_or(|(op, wanted)| op.matches(wanted, name))
            && self
                .namespace
                .as_ref()
                .is_none_or(|(op, wanted)| op.matches(wanted, namespace))
    }

    /// The name an equality on `metadata.name` pins, which kube-apiserver puts
    /// into the authorization attributes of a list or watch.
    pub(crate) fn exact_name(&self) -> Option<&str> {
        match &self.name {
            Some((Op::Eq, name)) => Some(name),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_selectors() {
        let f = FieldSelector::parse("metadata.name=pg1").unwrap();
        assert_eq!(f.name, Some((Op::Eq, "pg1".into())));
        assert_eq!(f.exact_name(), Some("pg1"));
        assert!(f.matches("pg1", "ns"));
        assert!(!f.matches("pg2", "ns"));

        let f = FieldSelector::parse("metadata.namespace==ns1,metadata.name!=pg1").unwrap();
        assert_eq!(f.exact_name(), None);
        assert!(f.matches("pg2", "ns1"));
        assert!(!f.matches("pg1", "ns1"));
        assert!(!f.matches("pg2", "ns2"));

        let f = FieldSelector::parse("").unwrap();
        assert!(f == FieldSelector::default() && f.matches("a", "b"));
        assert_eq!(
            FieldSelector::parse(",,").unwrap(),
            FieldSelector::default()
        );

        let f = FieldSelector::parse(r"metadata.name=a\,b\=c\\d").unwrap();
        assert_eq!(f.exact_name(), Some(r"a,b=c\d"));
        // The same requirement twice is fine.
        assert!(FieldSelector::parse("metadata.name=a,metadata.name=a").is_ok());
    }

    #[test]
    fn field_selector_errors() {
        let cases = [
            ("spec.x=1", "field label not supported: spec.x"),
            (
                "metadata.name = x",
                "field label not supported: metadata.name ",
            ),
            (
                "status.phase=Running,metadata.name=a",
                "field label not supported: status.phase",
            ),
            (
                "metadata.name",
                "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
            ),
            (
                r"metadata.name=a\x",
                r"invalid field selector: invalid escape sequence: \x",
            ),
            (
                r"metadata.name=a\",
                r"invalid field selector: invalid escape sequence: \",
            ),
            (
                "metadata.name=a=b",
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                "metadata.name=a,metadata.name=b",
                "field selector: only one requirement per field is supported: metadata.name",
            ),
        ];
        for (s, expected) in cases {
            assert_eq!(FieldSelector::parse(s).unwrap_err(), expected, "{s}");
        }
    }
}
