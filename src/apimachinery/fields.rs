//! `fieldSelector`: [`FieldSelector::parse`] follows k8s.io/apimachinery
//! `fields.ParseSelector` (terms split on unescaped commas, `=`, `==`, `!=`,
//! `\,` `\=` `\\` escapes, no whitespace trimming) and then, like
//! kube-apiserver's custom-resource converter, accepts only `metadata.name`
//! and `metadata.namespace` (`field label not supported: spec.x`); a
//! Namespace's ([`FieldSelector::parse_for_namespaces`]) are `metadata.name`
//! and `status.phase`, as kube-apiserver's Namespace conversion.

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

/// A field every kind supports in a selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// `metadata.name`.
    Name,
    /// `metadata.namespace`.
    Namespace,
    /// `status.phase` (a Namespace's).
    Phase,
}

/// The fields a custom resource's selector may name.
const CUSTOM_RESOURCE_FIELDS: [Field; 2] = [Field::Name, Field::Namespace];
/// The fields a Namespace's selector may name.
const NAMESPACE_FIELDS: [Field; 2] = [Field::Name, Field::Phase];

impl Field {
    /// The field's label in a selector.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Field::Name => "metadata.name",
            Field::Namespace => "metadata.namespace",
            Field::Phase => "status.phase",
        }
    }
}

/// One term of a field selector: `<field> <op> <value>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    /// The field the term is on.
    pub field: Field,
    /// How the field's value compares.
    pub op: Op,
    /// The (unescaped) value.
    pub value: String,
}

/// A parsed field selector over the fields every kind supports: its terms,
/// all of which must hold (as `fields.andTerm`), in the order
/// `fields.ParseSelector` leaves them (sorted by their text), so that
/// `metadata.name=a,metadata.name!=b` selects `a` and
/// `metadata.name=a,metadata.name=b` nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FieldSelector {
    requirements: Vec<Requirement>,
}

impl FieldSelector {
    /// Parses `fieldSelector`. Only `metadata.name` and `metadata.namespace`
    /// are known; anything else is `field label not supported: <field>`,
    /// the first such term (in sorted order) named, as kube-apiserver's
    /// custom-resource field label conversion answers.
    pub(crate) fn parse(selector: &str) -> Result<FieldSelector, String> {
        FieldSelector::parse_with(selector, &CUSTOM_RESOURCE_FIELDS)
    }

    /// Parses a Namespace list's or watch's `fieldSelector`:
    /// `metadata.name` and `status.phase`.
    pub(crate) fn parse_for_namespaces(selector: &str) -> Result<FieldSelector, String> {
        FieldSelector::parse_with(selector, &NAMESPACE_FIELDS)
    }

    fn parse_with(selector: &str, known: &[Field]) -> Result<FieldSelector, String> {
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
        let requirements = terms
            .into_iter()
            .map(|(lhs, op, value)| {
                let Some(field) = known.iter().copied().find(|f| f.label() == lhs) else {
                    return Err(format!("field label not supported: {lhs}"));
                };
                Ok(Requirement { field, op, value })
            })
            .collect::<Result<_, String>>()?;
        Ok(FieldSelector { requirements })
    }

    /// The selector `metadata.name=<name>`: what kube-apiserver makes of the
    /// name of a watch of one object (`/watch/…/<plural>/<name>`).
    fn name(name: &str) -> FieldSelector {
        FieldSelector {
            requirements: vec![Requirement {
                field: Field::Name,
                op: Op::Eq,
                value: name.to_owned(),
            }],
        }
    }

    /// The selector of a watch of the one object `name` (its path names
    /// it): `self` where it is empty (then `metadata.name=<name>`) or pins
    /// that name, else kube-apiserver's 400 text.
    pub(crate) fn for_name(self, name: &str) -> Result<FieldSelector, &'static str> {
        if self.requirements.is_empty() {
            Ok(FieldSelector::name(name))
        } else if self.exact_name() == Some(name) {
            Ok(self)
        } else {
            Err("fieldSelector metadata.name doesn't match requested name")
        }
    }

    /// The terms, in the selector's (sorted) order.
    pub(crate) fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether an object named `name` in `namespace` is selected: every
    /// term holds.
    pub(crate) fn matches(&self, name: &str, namespace: &str) -> bool {
        self.matches_fields(|field| match field {
            Field::Name => name,
            Field::Namespace => namespace,
            Field::Phase => "",
        })
    }

    /// Whether a Namespace object is selected (its name and `status.phase`).
    pub(crate) fn matches_namespace(&self, ns: &serde_json::Value) -> bool {
        let text = |pointer: &str| {
            ns.pointer(pointer)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
        };
        self.matches_fields(|field| match field {
            Field::Name => text("/metadata/name"),
            Field::Namespace => "",
            Field::Phase => text("/status/phase"),
        })
    }

    /// Whether every term holds of the values `value_of` gives.
    fn matches_fields<'a>(&self, value_of: impl Fn(Field) -> &'a str) -> bool {
        self.requirements
            .iter()
            .all(|r| r.op.matches(&r.value, value_of(r.field)))
    }

    /// The name an equality on `metadata.name` pins (the first such term,
    /// as `fields.Selector.RequiresExactMatch`), which kube-apiserver puts
    /// into the authorization attributes of a list or watch. Other terms
    /// may still exclude that object: [`FieldSelector::matches`] decides.
    pub(crate) fn exact_name(&self) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.field == Field::Name && r.op == Op::Eq)
            .map(|r| r.value.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_watch_takes_its_name_or_a_selector_pinning_it() {
        let empty = FieldSelector::parse("").unwrap();
        assert_eq!(empty.for_name("a").unwrap().exact_name(), Some("a"));
        let same = FieldSelector::parse("metadata.name=a,metadata.namespace=x").unwrap();
        assert_eq!(same.clone().for_name("a"), Ok(same));
        for other in [
            "metadata.name=b",
            "metadata.namespace=x",
            "metadata.name!=a",
        ] {
            assert_eq!(
                FieldSelector::parse(other).unwrap().for_name("a"),
                Err("fieldSelector metadata.name doesn't match requested name"),
                "{other}"
            );
        }
    }

    #[test]
    fn namespaces_select_by_name_and_phase_only() {
        let active = serde_json::json!({"metadata": {"name": "a"}, "status": {"phase": "Active"}});
        let f = FieldSelector::parse_for_namespaces("status.phase=Active,metadata.name=a").unwrap();
        assert!(f.matches_namespace(&active));
        let f = FieldSelector::parse_for_namespaces("status.phase!=Active").unwrap();
        assert!(!f.matches_namespace(&active));
        assert_eq!(
            FieldSelector::parse_for_namespaces("metadata.namespace=x"),
            Err("field label not supported: metadata.namespace".to_owned())
        );
        assert_eq!(
            FieldSelector::parse("status.phase=Active"),
            Err("field label not supported: status.phase".to_owned())
        );
    }

    #[test]
    fn field_selectors() {
        let f = FieldSelector::parse("metadata.name=pg1").unwrap();
        assert_eq!(
            f.requirements(),
            [Requirement {
                field: Field::Name,
                op: Op::Eq,
                value: "pg1".into()
            }]
        );
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
        // The same requirement twice is fine; all terms must hold.
        assert!(FieldSelector::parse("metadata.name=a,metadata.name=a").is_ok());
        let f = FieldSelector::parse("metadata.name=a,metadata.name!=b").unwrap();
        assert!(f.matches("a", "ns") && !f.matches("b", "ns"));
        let f = FieldSelector::parse("metadata.name=b,metadata.name=a").unwrap();
        assert!(!f.matches("a", "ns") && !f.matches("b", "ns"));
        // The first equality in sorted order, as RequiresExactMatch.
        assert_eq!(f.exact_name(), Some("a"));
        let f = FieldSelector::parse("metadata.name!=b,metadata.name==c").unwrap();
        assert_eq!(f.exact_name(), Some("c"));
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
        ];
        for (s, expected) in cases {
            assert_eq!(FieldSelector::parse(s).unwrap_err(), expected, "{s}");
        }
    }
}
