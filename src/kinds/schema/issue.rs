//! [`Issue`], a problem found in a schema and located by a JSON pointer into
//! it, and the building of such pointers.

use std::fmt;

/// A problem found in a schema, located by a JSON pointer (RFC 6901) into the
/// document that was examined: for [`super::to_structural`] that is the input
/// JSON Schema, e.g. `/properties/storage/properties/size`; the empty pointer
/// is the document root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Issue {
    /// JSON pointer to the offending node or keyword.
    pub pointer: String,
    /// What is wrong, or what was lost or changed.
    pub message: String,
}

impl Issue {
    /// Builds an issue from a pointer and a message.
    pub(crate) fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "(root): {}", self.message)
        } else {
            write!(f, "{}: {}", self.pointer, self.message)
        }
    }
}

/// Appends one reference token to a JSON pointer, escaping `~` and `/`.
pub(super) fn push_pointer(base: &str, token: &str) -> String {
    let mut out = String::with_capacity(base.len() + token.len() + 1);
    out.push_str(base);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_and_issues_name_the_root() {
        assert_eq!(push_pointer("", "a/b~c"), "/a~1b~0c");
        assert_eq!(push_pointer("/properties", "x"), "/properties/x");
        assert_eq!(Issue::new("", "bad").to_string(), "(root): bad");
        assert_eq!(Issue::new("/type", "bad").to_string(), "/type: bad");
    }
}
