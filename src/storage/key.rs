//! The watch cache's key of an object: its namespace and name, in one
//! shared string.
//!
//! The cache's map is persistent: a snapshot shares its B-tree nodes, and
//! the next change after it copies the leaf it touches, every key of the
//! leaf with it. With two `String`s per key that copy was two allocations
//! (and later two frees) for each of up to 64 keys, on every watch event —
//! the largest part of applying one. This key is one reference-counted
//! block: a copy is a count. A lookup borrows the key's text
//! ([`Key::text`], one allocation) instead of building a key.
//!
//! The text is `namespace`, a NUL, then `name`. A namespace holds no NUL
//! (it is a DNS label; [`Key::new`] is never given one from a client, see
//! the continue tokens in `apiserver/handlers/read.rs`), and NUL is below
//! every other byte, so the text orders exactly as the pair `(namespace,
//! name)` does, and a lookup by text ([`std::borrow::Borrow<str>`]) agrees
//! with the map's order.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// Where namespace and name meet in a key's text.
const SEPARATOR: char = '\0';

/// `(namespace, name)` of a kept object (namespace empty when it has none).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(Arc<str>);

impl Default for Key {
    /// No namespace, no name: the least key.
    fn default() -> Key {
        Key::new("", "")
    }
}

impl Key {
    /// The key of `namespace/name`.
    pub fn new(namespace: &str, name: &str) -> Key {
        Key(Key::text(namespace, name).into())
    }

    /// The key of an object, from its `metadata`.
    pub fn of(object: &Value) -> Key {
        let text = |p: &str| {
            object
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        Key::new(text("/metadata/namespace"), text("/metadata/name"))
    }

    /// The text a key of `namespace/name` holds: what a lookup borrows.
    pub fn text(namespace: &str, name: &str) -> String {
        let mut text = String::with_capacity(namespace.len() + 1 + name.len());
        text.push_str(namespace);
        text.push(SEPARATOR);
        text.push_str(name);
        text
    }

    /// The least text of `namespace`'s keys: a range from it starts at the
    /// namespace's first object.
    pub fn namespace_start(namespace: &str) -> String {
        Key::text(namespace, "")
    }

    /// The least text above every key of `namespace`: a range from it
    /// starts at the next namespace's first object.
    pub fn namespace_end(namespace: &str) -> String {
        let mut text = Key::namespace_start(namespace);
        text.pop();
        text.push('\u{1}');
        text
    }

    /// The object's namespace (empty when it has none).
    pub fn namespace(&self) -> &str {
        self.parts().0
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.parts().1
    }

    /// The key's text (see [`Key::text`]).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Namespace and name.
    pub fn parts(&self) -> (&str, &str) {
        self.0.split_once(SEPARATOR).unwrap_or(("", &self.0))
    }
}

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (namespace, name) = self.parts();
        write!(f, "{namespace:?}/{name:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_order_as_namespace_then_name() {
        let pairs = [
            ("", "z"),
            ("a", ""),
            ("a", "b"),
            ("a", "b-c"),
            ("a-b", "a"),
            ("ab", "a"),
            ("b", "a"),
        ];
        for (i, a) in pairs.iter().enumerate() {
            for b in &pairs[i..] {
                assert_eq!(
                    Key::new(a.0, a.1).cmp(&Key::new(b.0, b.1)),
                    a.cmp(b),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn parts_and_namespace_bounds() {
        let key = Key::of(&json!({"metadata": {"namespace": "team-a", "name": "db"}}));
        assert_eq!(key.parts(), ("team-a", "db"));
        assert_eq!((key.namespace(), key.name()), ("team-a", "db"));
        let cluster = Key::of(&json!({"metadata": {"name": "n"}}));
        assert_eq!(cluster.parts(), ("", "n"));
        let text: &str = key.borrow();
        assert!(Key::namespace_start("team-a").as_str() <= text);
        assert!(text < Key::namespace_end("team-a").as_str());
        // A longer namespace sharing the prefix sorts after the end bound.
        assert!(Key::new("team-ab", "a").0.as_ref() >= Key::namespace_end("team-a").as_str());
        assert!(Key::new("team-a", "").0.as_ref() < Key::namespace_end("team-a").as_str());
        assert_eq!(format!("{key:?}"), "\"team-a\"/\"db\"");
    }
}
