//! An app's `metadata.labels`, read from its encoded JSON (a kept
//! [`super::helm_release::AppView`]) without reading the rest of it: a label
//! selector over 5,000 cached apps asks this of every one of them, once for
//! the consistency check and once for the page.
//!
//! The reader stops as soon as it has the labels, or has passed `metadata`
//! without finding them: a view's JSON puts `metadata` before `spec`, and in
//! it `labels` before `annotations` and `managedFields`, so what is read is
//! the first hundred bytes or so, not the whole app (parsing it with a
//! derived `Deserialize` skipped through every field, which was most of the
//! cost of a label-selected list). Stopping is an error the reader raises
//! itself once it has its answer.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The error the reader stops with once it has its answer.
const DONE: &str = "labels read";

/// The labels of the app encoded in `json`; empty when it has none (or is
/// not an object).
pub(crate) fn read(json: &str) -> Map<String, Value> {
    let mut labels = None;
    let mut deserializer = serde_json::Deserializer::from_str(json);
    // Err(DONE) is the early stop; any other error leaves no labels.
    let _ = deserializer.deserialize_map(Find {
        path: &["metadata", "labels"],
        found: &mut labels,
    });
    labels.unwrap_or_default()
}

/// Whether a map key is `wanted`, read without allocating.
struct KeyIs(&'static str);

impl<'de> DeserializeSeed<'de> for KeyIs {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyIs {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// Reads an object up to the field at `path` (its first key here, the rest
/// below), skipping the fields before it: the last key's value goes to
/// `found`, and the reader stops there, or at the end of the object that
/// should have held it.
struct Find<'a> {
    path: &'static [&'static str],
    found: &'a mut Option<Map<String, Value>>,
}

impl<'de> DeserializeSeed<'de> for Find<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Find<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((key, below)) = self.path.split_first() else {
            return Ok(());
        };
        while let Some(is_key) = map.next_key_seed(KeyIs(key))? {
            if !is_key {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            if below.is_empty() {
                *self.found = map.next_value()?;
            } else {
                map.next_value_seed(Find {
                    path: below,
                    found: self.found,
                })?;
            }
            return Err(de::Error::custom(DONE));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What a derived reader of the whole JSON finds.
    fn whole(json: &str) -> Map<String, Value> {
        serde_json::from_str::<Value>(json)
            .ok()
            .and_then(|v| v.pointer("/metadata/labels").cloned())
            .and_then(|l| l.as_object().cloned())
            .unwrap_or_default()
    }

    #[test]
    fn reads_the_labels_wherever_they_are() {
        let cases = [
            json!({"apiVersion": "v", "kind": "K", "metadata": {"name": "a", "labels": {"team": "red", "x/y": "1"}, "managedFields": [{"manager": "m"}]}, "spec": {"labels": {"no": "no"}}}),
            // Labels last in metadata, metadata after spec, escapes in keys.
            json!({"spec": {"metadata": {"labels": {"no": "no"}}}, "metadata": {"annotations": {"a": "b"}, "name": "a\"b", "labels": {"q\"uote": "v"}}}),
            // No labels: spec's are not the app's.
            json!({"metadata": {"name": "a"}, "spec": {"labels": {"no": "no"}}}),
            json!({"metadata": {"name": "a", "labels": null}}),
            json!({"metadata": {"name": "a", "labels": {}}}),
            json!({"kind": "K"}),
            json!({}),
        ];
        for case in cases {
            let text = case.to_string();
            assert_eq!(read(&text), whole(&text), "{text}");
        }
        assert_eq!(
            read(&cases_first_labels()),
            json!({"team": "red"}).as_object().cloned().unwrap()
        );
        for bad in [
            "",
            "[]",
            "\"x\"",
            "{\"metadata\": [1]}",
            "{\"metadata\": {\"labels\": [1]}}",
            "{",
        ] {
            assert!(read(bad).is_empty(), "{bad}");
        }
    }

    /// The reader stops after the labels: what follows them is not read.
    fn cases_first_labels() -> String {
        r#"{"metadata":{"labels":{"team":"red"},"managedFields":this is not JSON"#.to_owned()
    }
}
