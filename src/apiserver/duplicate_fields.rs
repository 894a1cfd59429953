//! Duplicate keys in a JSON request body, found as sigs.k8s.io/json's strict
//! decoder finds them: kube-apiserver refuses them under
//! `fieldValidation=Strict` (`strict decoding error: duplicate field
//! "metadata.name"`) and warns under `Warn`, where the last value wins.
//! (`serde_json::Value` keeps the last value silently, so the body is walked
//! once more, without building anything.) A YAML body's are found over the
//! YAML parser's events and said in Go's yaml.v2 words, with their lines
//! ([`in_yaml`]), as kube-apiserver's strict YAML decoding says them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::{self, Write as _};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Maps with at most this many keys are checked by a scan of the keys met
/// so far, larger ones through a hash set.
const SCAN_KEYS: usize = 16;

/// The paths (`spec.users[0].name`) of keys that repeat in `body`, in the
/// order met; empty when the body is not JSON (the decoder says why).
pub(crate) fn find(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut path = String::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    let walked = Walk {
        path: &mut path,
        found: &mut found,
    }
    .deserialize(&mut de);
    if walked.is_err() {
        return Vec::new();
    }
    found
}

/// Keys that repeat in one mapping of a YAML body (a create or update
/// sent as `application/yaml`), in Go's yaml.v2 words, which
/// kube-apiserver's strict YAML decoding reports: `line 5: key "name"
/// already set in map`, at the repeated key's line, in the order met.
/// Empty when the body is not YAML (the decoder says why).
pub(crate) fn in_yaml(body: &[u8]) -> Vec<String> {
    use granit_parser::{Event, Parser};
    /// A mapping's keys met so far, and whether a key comes next.
    enum Frame {
        Map { keys: Vec<String>, key_next: bool },
        Seq,
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    // A value ends: the mapping it is in expects a key again.
    let value_done = |stack: &mut Vec<Frame>| {
        if let Some(Frame::Map { key_next, .. }) = stack.last_mut() {
            *key_next = true;
        }
    };
    for next in Parser::new_from_str(text) {
        let Ok((event, span)) = next else {
            return Vec::new();
        };
        match event {
            Event::Scalar(value, ..) => match stack.last_mut() {
                Some(Frame::Map { keys, key_next }) if *key_next => {
                    let key = value.into_owned();
                    if keys.contains(&key) {
                        found.push(format!(
                            "line {}: key {} already set in map",
                            span.start.line(),
                            crate::golang::quote(&key)
                        ));
                    } else {
                        keys.push(key);
                    }
                    *key_next = false;
                }
                _ => value_done(&mut stack),
            },
            Event::Alias(_) => value_done(&mut stack),
            Event::MappingStart(..) => stack.push(Frame::Map {
                keys: Vec::new(),
                key_next: true,
            }),
            Event::SequenceStart(..) => stack.push(Frame::Seq),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                value_done(&mut stack);
            }
            _ => {}
        }
    }
    found
}

/// One value of the walk. `path` is the path to it, grown and cut back as
/// the walk goes in and out, so that a path is only copied when it names a
/// duplicate.
struct Walk<'a> {
    path: &'a mut String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// A key, borrowed from the body unless it has escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_owned()))
    }
}

/// The keys of one map met so far.
enum Seen<'de> {
    Few(Vec<Cow<'de, str>>),
    Many(HashSet<Cow<'de, str>>),
}

impl<'de> Seen<'de> {
    /// Adds `key`; false when it was there already.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        match self {
            Seen::Few(keys) if keys.contains(&key) => false,
            Seen::Few(keys) if keys.len() < SCAN_KEYS => {
                keys.push(key);
                true
            }
            Seen::Few(keys) => {
                let mut set: HashSet<_> = keys.drain(..).collect();
                set.insert(key);
                *self = Seen::Many(set);
                true
            }
            Seen::Many(set) => set.insert(key),
        }
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = Seen::Few(Vec::new());
        let outer = self.path.len();
        while let Some(key) = map.next_key_seed(Key)? {
            if outer > 0 {
                self.path.push('.');
            }
            self.path.push_str(&key);
            if !seen.insert(key) {
                self.found.push(self.path.clone());
            }
            map.next_value_seed(Walk {
                path: &mut *self.path,
                found: &mut *self.found,
            })?;
            self.path.truncate(outer);
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let outer = self.path.len();
        for i in 0usize.. {
            let _ = write!(self.path, "[{i}]");
            let walk = Walk {
                path: &mut *self.path,
                found: &mut *self.found,
            };
            let more = seq.next_element_seed(walk)?.is_some();
            self.path.truncate(outer);
            if !more {
                break;
            }
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{find, in_yaml};

    /// As Go's yaml.v2 reports them (kube-apiserver's strict YAML decoding).
    #[test]
    fn finds_repeated_keys_in_yaml_with_their_lines() {
        let body = b"kind: Postgres\nkind: Redis\nmetadata:\n  name: a\n  name: b\nspec:\n  users:\n  - n: 1\n    n: 2\n  x: {a: 1, a: 2}\n";
        assert_eq!(
            in_yaml(body),
            [
                r#"line 2: key "kind" already set in map"#,
                r#"line 5: key "name" already set in map"#,
                r#"line 9: key "n" already set in map"#,
                r#"line 10: key "a" already set in map"#,
            ]
        );
        assert!(in_yaml(b"a:\n  b: 1\nc:\n  b: 1\nd: [b, b]\n").is_empty());
        assert!(in_yaml(b"a: [1\n").is_empty());
    }

    #[test]
    fn finds_repeated_keys_at_any_depth() {
        let body = br#"{"metadata":{"name":"a","name":"b"},"spec":{"users":[{"n":1,"n":2}],"x":{}},"spec":{}}"#;
        assert_eq!(find(body), ["metadata.name", "spec.users[0].n", "spec"]);
        assert!(find(br#"{"a":{"b":1},"c":{"b":1},"d":[{"b":1},{"b":2}]}"#).is_empty());
        assert!(find(b"{not json").is_empty());
        // Escaped spellings of one key are the same key.
        assert_eq!(find(br#"{"a":1,"\u0061":2}"#), ["a"]);
        // Past the keys scanned one by one.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let body = format!(r#"{{"m":{{{},"k3":0,"k39":1}}}}"#, many.join(","));
        assert_eq!(find(body.as_bytes()), ["m.k3", "m.k39"]);
        assert_eq!(find(br#"[{"a":1},{"b":[{"c":1,"c":2}]}]"#), ["[1].b[0].c"]);
    }
}
