//! Duplicate keys in a JSON request body, found as sigs.k8s.io/json's strict
//! decoder finds them: kube-apiserver refuses them under
//! `fieldValidation=Strict` (`strict decoding error: duplicate field
//! "metadata.name"`) and warns under `Warn`, where the last value wins.
//! (`serde_json::Value` keeps the last value silently, so the body is walked
//! once more, without building anything.)

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The paths (`spec.users[0].name`) of keys that repeat in `body`, in the
/// order met; empty when the body is not JSON (the decoder says why).
pub(crate) fn find(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    let walked = Walk {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut de);
    if walked.is_err() {
        return Vec::new();
    }
    found
}

struct Walk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if !seen.insert(key) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Walk {
                path,
                found: self.found,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let path = format!("{}[{i}]", self.path);
            let walk = Walk {
                path,
                found: self.found,
            };
            if seq.next_element_seed(walk)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
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
    use super::find;

    #[test]
    fn finds_repeated_keys_at_any_depth() {
        let body = br#"{"metadata":{"name":"a","name":"b"},"spec":{"users":[{"n":1,"n":2}],"x":{}},"spec":{}}"#;
        assert_eq!(find(body), ["metadata.name", "spec.users[0].n", "spec"]);
        assert!(find(br#"{"a":{"b":1},"c":{"b":1},"d":[{"b":1},{"b":2}]}"#).is_empty());
        assert!(find(b"{not json").is_empty());
        // Escaped spellings of one key are the same key.
        assert_eq!(find(br#"{"a":1,"\u0061":2}"#), ["a"]);
    }
}
