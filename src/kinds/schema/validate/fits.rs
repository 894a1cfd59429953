//! Whether the defaulting pass would change a JSON text: the check a read
//! makes before pruning and defaulting a stored value, so that the common
//! value, already pruned and defaulted when it was written, is only
//! scanned — no `serde_json::Value` is built, nothing is allocated but for
//! keys with escapes.
//!
//! It follows [`CompiledSchema::normalize`] decision for decision over the
//! text's tokens; where following it would cost more (an object with more
//! than 64 defaulted properties) it answers "changes", which only sends the
//! value the slow, exact way.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::CompiledSchema;
use super::compile::{Additional, bit, is_meta_field};

impl CompiledSchema {
    /// Whether [`CompiledSchema::apply_defaults`] would leave the JSON text
    /// `json` as it is: no unknown field to prune, no `null` to drop or
    /// default, no absent field with a default. False when it would change
    /// it, or when unsure (text that is not JSON, unless the schema keeps
    /// whatever it holds).
    pub fn fits(&self, json: &str) -> bool {
        let root = self.node(0);
        if root.preserve_unknown
            && root.props.is_empty()
            && root.items.is_none()
            && matches!(root.additional, Additional::Absent)
        {
            // Keeps whatever it holds (`x-kubernetes-preserve-unknown-fields`
            // and nothing else): nothing to scan.
            return true;
        }
        let mut de = serde_json::Deserializer::from_str(json);
        let check = Check {
            schema: self,
            id: 0,
            slot: Slot::Root,
        };
        check.deserialize(&mut de).is_ok()
    }
}

/// Where a value sits, which decides what a `null` there becomes.
#[derive(Clone, Copy)]
enum Slot {
    /// The value checked: a `null` stays.
    Root,
    /// A property, or a value under `additionalProperties`: a non-nullable
    /// `null` is defaulted or dropped.
    Field,
    /// A list item: a non-nullable `null` is defaulted if there is a default.
    Item,
}

/// The check of one value against node `id`; fails (with a throwaway
/// error) as soon as the pass would change something.
#[derive(Clone, Copy)]
struct Check<'s> {
    schema: &'s CompiledSchema,
    id: u32,
    slot: Slot,
}

fn changes<E: de::Error>() -> E {
    E::custom("changed by pruning or defaulting")
}

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
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

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        let n = self.schema.node(self.id);
        let changed = match self.slot {
            Slot::Root => false,
            Slot::Field => !n.nullable,
            Slot::Item => !n.nullable && n.default.is_some(),
        };
        if changed { Err(changes()) } else { Ok(()) }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        match self.schema.node(self.id).items {
            Some(item) => {
                let check = Check {
                    id: item,
                    slot: Slot::Item,
                    ..self
                };
                while seq.next_element_seed(check)?.is_some() {}
            }
            None => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let n = self.schema.node(self.id);
        if n.defaults.len() > 64 {
            return Err(changes());
        }
        let mut seen = 0u64;
        while let Some(key) = map.next_key_seed(Key)? {
            if n.embedded && is_meta_field(&key) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            if let Some(p) = n.prop(&key) {
                seen |= bit(p.default_idx);
                map.next_value_seed(Check {
                    id: p.id,
                    slot: Slot::Field,
                    ..self
                })?;
                continue;
            }
            match n.additional {
                Additional::Schema(a) => map.next_value_seed(Check {
                    id: a,
                    slot: Slot::Field,
                    ..self
                })?,
                Additional::Allow | Additional::Deny => map.next_value_seed(Emptied)?,
                Additional::Absent if n.preserve_unknown => {
                    map.next_value::<IgnoredAny>()?;
                }
                Additional::Absent => return Err(changes()),
            }
        }
        let defaulted =
            n.defaults.iter().enumerate().any(|(i, (_, p))| {
                seen & bit(i as u16) == 0 && self.schema.node(*p).default.is_some()
            });
        if defaulted { Err(changes()) } else { Ok(()) }
    }
}

/// A key, borrowed from the text unless it has escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
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

/// A value under `additionalProperties` without a schema, whose objects the
/// pass empties: it changes if any object in it has a field.
struct Emptied;

impl<'de> DeserializeSeed<'de> for Emptied {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Emptied {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
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

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Emptied)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        match map.next_key::<IgnoredAny>()? {
            Some(_) => Err(changes()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::tests::compiled;

    /// `fits` agrees with whether `apply_defaults` changes `value`.
    fn agrees(schema: &Value, value: Value) -> bool {
        let compiled = compiled(schema.clone());
        let mut defaulted = value.clone();
        compiled.apply_defaults(&mut defaulted, "spec");
        let fits = compiled.fits(&value.to_string());
        assert_eq!(fits, defaulted == value, "{value} → {defaulted}");
        fits
    }

    #[test]
    fn fits_where_the_pass_changes_nothing() {
        let schema = json!({"type": "object", "properties": {
            "size": {"type": "integer"},
            "shape": {"type": "string", "default": "round"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "opaque": {"type": "object", "additionalProperties": true},
            "list": {"type": "array", "items": {"type": "object", "properties": {
                "port": {"type": "integer", "default": 80}, "name": {"type": "string"}}}},
            "maybe": {"type": "string", "nullable": true},
            "pod": {"type": "object", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true},
        }});
        assert!(agrees(&schema, json!({"shape": "square"})));
        assert!(agrees(
            &schema,
            json!({"shape": "round", "size": 1, "labels": {"a": "b"},
                "free": {"any": {"thing": [1, null]}}, "opaque": {"k": [1, [2]], "e": {}},
                "list": [{"port": 1}, {"port": 2, "name": "x"}], "maybe": null,
                "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}})
        ));
        assert!(agrees(&schema, json!("not an object")));
        assert!(agrees(&schema, Value::Null));
    }

    #[test]
    fn does_not_fit_where_the_pass_changes_something() {
        let schema = json!({"type": "object", "properties": {
            "size": {"type": "integer"},
            "shape": {"type": "string", "default": "round"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "opaque": {"type": "object", "additionalProperties": true},
            "list": {"type": "array", "items": {"type": "object", "properties": {
                "port": {"type": "integer", "default": 80}}}},
            "names": {"type": "array", "items": {"type": "string", "default": "x"}},
        }});
        for value in [
            json!({}),
            json!({"shape": "round", "color": "red"}),
            json!({"shape": "round", "size": null}),
            json!({"shape": "round", "labels": {"a": null}}),
            json!({"shape": "round", "opaque": {"k": {"nested": 1}}}),
            json!({"shape": "round", "opaque": {"k": [{"nested": 1}]}}),
            json!({"shape": "round", "list": [{"port": 1}, {}]}),
            json!({"shape": "round", "list": [{"port": 1, "extra": true}]}),
            json!({"shape": "round", "names": ["a", null]}),
        ] {
            assert!(!agrees(&schema, value));
        }
        assert!(!compiled(schema).fits("{\"shape\": "), "not JSON: unsure");
    }

    /// JSON values whose keys are mostly the schema's below.
    fn arbitrary_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-2i64..3).prop_map(Value::from),
            "[ab]{0,2}".prop_map(Value::from),
        ];
        let keys = "size|shape|labels|free|opaque|list|names|maybe|pod|port|metadata|x";
        leaf.prop_recursive(4, 32, 5, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map(keys, inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// `fits` is exactly whether the pass changes the value.
        #[test]
        fn fits_is_whether_the_pass_changes_the_value(value in arbitrary_value()) {
            let schema = json!({"type": "object", "properties": {
                "size": {"type": "integer"},
                "shape": {"type": "string", "default": "round"},
                "labels": {"type": "object", "additionalProperties": {"type": "string", "nullable": true}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {"size": {"type": "integer", "default": 1}}},
                "opaque": {"type": "object", "additionalProperties": true},
                "list": {"type": "array", "items": {"type": "object", "properties": {
                    "port": {"type": "integer", "default": 80}, "x": {"type": "string"}}}},
                "names": {"type": "array", "items": {"type": "string", "default": "a"}},
                "maybe": {"type": "object", "nullable": true, "properties": {"x": {"type": "string"}}},
                "pod": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "properties": {"x": {"type": "string"}}},
            }});
            agrees(&schema, value);
        }
    }

    #[test]
    fn a_schema_that_keeps_everything_fits_without_a_scan() {
        let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        assert!(agrees(
            &schema,
            json!({"any": {"thing": [null, {}]}, "x": null})
        ));
        assert!(compiled(schema).fits("not even JSON"));
    }
}
