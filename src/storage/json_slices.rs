//! JSON read as borrowed slices of its text and written back from them:
//! the tools with which the cache's kept HelmReleases ([`super::kept_text`])
//! and their apps ([`super::app_text`]) are made straight from upstream's
//! text, without building a `serde_json::Value` of it (a parse that
//! allocates every key, string and container, and an encoding of it all
//! again).
//!
//! - [`entries`] visits an object's members as `(key, raw value)`, the
//!   values unparsed slices of the text;
//! - [`raw_str`] reads a raw value as a string (borrowed when unescaped);
//! - [`ObjectWriter`] writes an object member by member, raw values as
//!   they are.
//!
//! Raw values are written as upstream wrote them: kube-apiserver writes
//! compact JSON, and escapes `<`, `>` and `&` in strings as `\u003c`,
//! `\u003e` and `\u0026`, which any JSON reader reads as the characters.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// What the members of a JSON object are read into, one member at a time
/// in one pass over the text: `member` takes the value of `key` from `map`
/// (as a raw slice, through a seed of its own, or skipped), and must take
/// it.
pub(crate) trait Members<'de> {
    /// Reads the value of `key` from `map`.
    fn member<A: MapAccess<'de>>(
        &mut self,
        key: Cow<'de, str>,
        map: &mut A,
    ) -> Result<(), A::Error>;
}

/// Reads the JSON object `text` into `members` in one pass. Fails when
/// `text` is not a JSON object (or has text after it).
pub(crate) fn read_object<'de>(
    text: &'de str,
    members: &mut impl Members<'de>,
) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.deserialize_map(ObjectOf(members))?;
    deserializer.end()
}

/// Visits the members of the JSON object `object` in order: `each` gets
/// each key and its value as an unparsed slice of `object`. Fails when
/// `object` is not a JSON object (or has text after it).
pub(crate) fn entries<'a>(
    object: &'a str,
    each: impl FnMut(Cow<'a, str>, &'a RawValue),
) -> Result<(), serde_json::Error> {
    read_object(object, &mut Each(each))
}

/// [`Members`] that hands each member to a closure as a raw slice.
struct Each<F>(F);

impl<'a, F: FnMut(Cow<'a, str>, &'a RawValue)> Members<'a> for Each<F> {
    fn member<A: MapAccess<'a>>(&mut self, key: Cow<'a, str>, map: &mut A) -> Result<(), A::Error> {
        let value: &'a RawValue = map.next_value()?;
        (self.0)(key, value);
        Ok(())
    }
}

/// A seed that reads an object's members into `M`: `true` for an object,
/// `false` for `null`, an error for anything else.
pub(crate) struct ObjectOf<'m, M>(pub(crate) &'m mut M);

impl<'de, M: Members<'de>> DeserializeSeed<'de> for ObjectOf<'_, M> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, M: Members<'de>> Visitor<'de> for ObjectOf<'_, M> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while let Some(BorrowedKey(key)) = map.next_key()? {
            self.0.member(key, &mut map)?;
        }
        Ok(true)
    }
}

/// A map key, borrowed from the text unless it has escapes.
pub(crate) struct BorrowedKey<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for BorrowedKey<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = BorrowedKey<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(BorrowedKey(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(BorrowedKey(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(BorrowedKey(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The string `raw` holds, or `None` when it is not a string: borrowed
/// from the text when it has no escapes.
pub(crate) fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// Whether `raw` is a JSON object.
pub(crate) fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// Writes a JSON object member by member into `out`: `{` when made (or,
/// [`ObjectWriter::deferred`], at the first member), commas between
/// members, `}` on [`ObjectWriter::end`].
pub(crate) struct ObjectWriter<'o> {
    out: &'o mut Vec<u8>,
    open: bool,
    empty: bool,
}

impl<'o> ObjectWriter<'o> {
    /// Starts an object.
    pub(crate) fn new(out: &'o mut Vec<u8>) -> ObjectWriter<'o> {
        out.push(b'{');
        ObjectWriter {
            out,
            open: true,
            empty: true,
        }
    }

    /// An object not started yet: a value that may turn out to be `null`
    /// ([`ObjectWriter::null`]).
    pub(crate) fn deferred(out: &'o mut Vec<u8>) -> ObjectWriter<'o> {
        ObjectWriter {
            out,
            open: false,
            empty: true,
        }
    }

    /// Writes `key` and its colon; the value is the caller's to write next,
    /// into the buffer returned.
    pub(crate) fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.open {
            self.out.push(b'{');
            self.open = true;
        } else if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        write_str(self.out, key);
        self.out.push(b':');
        self.out
    }

    /// A member whose value is raw JSON.
    pub(crate) fn raw(&mut self, key: &str, value: &RawValue) {
        self.key(key).extend_from_slice(value.get().as_bytes());
    }

    /// A member whose value is a string.
    pub(crate) fn str(&mut self, key: &str, value: &str) {
        let out = self.key(key);
        write_str(out, value);
    }

    /// Ends the object.
    pub(crate) fn end(self) {
        if !self.open {
            self.out.push(b'{');
        }
        self.out.push(b'}');
    }

    /// Writes `null` in place of a deferred object that has no members.
    pub(crate) fn null(self) {
        debug_assert!(!self.open, "an object is started");
        self.out.extend_from_slice(b"null");
    }
}

/// `value` as a JSON string, escaped as serde_json escapes it.
pub(crate) fn write_str(out: &mut Vec<u8>, value: &str) {
    if value.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    } else {
        // Writing a str into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_borrowed_slices_in_order() {
        let text = r#"{"a": {"b": [1, 2]}, "c\"d": "e\nf", "g": null, "a": 3}"#;
        let mut seen = Vec::new();
        entries(text, |k, v| seen.push((k, v.get()))).unwrap();
        assert_eq!(
            seen,
            [
                (Cow::Borrowed("a"), r#"{"b": [1, 2]}"#),
                (Cow::Owned("c\"d".to_owned()), r#""e\nf""#),
                (Cow::Borrowed("g"), "null"),
                (Cow::Borrowed("a"), "3"),
            ]
        );
        assert!(matches!(&seen[0].0, Cow::Borrowed(_)));
        for refused in ["[]", "3", r#""x""#, "{} {}", "{", r#"{"a"}"#] {
            assert!(entries(refused, |_, _| {}).is_err(), "{refused}");
        }
    }

    #[test]
    fn strings_read_from_raw_values() {
        let raw = |t: &str| serde_json::from_str::<Box<RawValue>>(t).unwrap();
        assert_eq!(raw_str(&raw(r#""plain""#)).as_deref(), Some("plain"));
        assert!(matches!(
            raw_str(&raw(r#""plain""#)),
            Some(Cow::Borrowed(_))
        ));
        assert_eq!(raw_str(&raw(r#""a\u003cb\"""#)).as_deref(), Some("a<b\""));
        assert_eq!(raw_str(&raw("3")), None);
        assert_eq!(raw_str(&raw("null")), None);
        assert!(is_object(&raw(r#"{"a":1}"#)) && !is_object(&raw("[1]")));
    }

    #[test]
    fn objects_are_written_compactly_and_escaped_as_serde_json_escapes() {
        let mut out = Vec::new();
        let mut object = ObjectWriter::new(&mut out);
        object.str("a\"b", "tab\there é");
        object.raw(
            "c",
            &serde_json::from_str::<Box<RawValue>>("[1,{}]").unwrap(),
        );
        let nested = object.key("d");
        ObjectWriter::new(nested).end();
        ObjectWriter::deferred(object.key("e")).end();
        ObjectWriter::deferred(object.key("f")).null();
        let mut deferred = ObjectWriter::deferred(object.key("g"));
        deferred.str("h", "i");
        deferred.str("j", "k");
        deferred.end();
        object.end();
        let text = String::from_utf8(out).unwrap();
        let expected = serde_json::json!({"a\"b": "tab\there é", "c": [1, {}], "d": {},
            "e": {}, "f": null, "g": {"h": "i", "j": "k"}});
        assert_eq!(text, expected.to_string());
    }
}
