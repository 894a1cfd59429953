//! Fuzz target of what the cache keeps of upstream's JSON text: made
//! straight from the text ([`Stored::from_text`], [`Stored::from_answer`],
//! [`Stored::from_delete_answer`]) it must be what parsing the text into a
//! `Value` first keeps.

use serde_json::Value;

use crate::storage::cache::{Key, Stored};
use crate::storage::helm_release::{self, KIND_LABEL};
use crate::storage::release_json::Release;

/// `kept_text`: the input is any text, read as upstream's JSON of a
/// HelmRelease (a write's answer, a watch event's object, a list item).
/// Neither way of keeping it may panic. Where parsing it as a [`Release`]
/// succeeds, and its keys are unique (kube-apiserver never repeats one; a
/// `Value` keeps the last of them, the text keeps them all) and it has an
/// `apiVersion` where it has a `kind`:
///
/// - keeping it from the text succeeds, with the same key, resourceVersion
///   and kind label, and parses to what keeping the parsed value keeps;
/// - the app view made while reading a write's answer is the one a read
///   of the kept object makes, and both are what converting the parsed value
///   gives;
/// - read as a delete's answer, it is kept alike and found to be a release
///   (a `spec`) and held (finalizers) exactly where the parsed value is.
pub fn kept_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let served = super::example_served();
    let kind = &served.resolved;
    let from_text = Stored::from_text(text);
    let answered = Stored::from_answer(text, served);
    assert_eq!(
        from_text.is_ok(),
        answered.is_ok(),
        "an answer and an event of the same text are kept alike"
    );
    let deleted = Stored::from_delete_answer(text, served);
    assert_eq!(
        from_text.is_ok(),
        deleted.is_ok(),
        "a delete's answer and an event of the same text are kept alike"
    );
    let Ok(Release(parsed)) = serde_json::from_str::<Release>(text) else {
        return;
    };
    if !crate::apiserver::duplicate_fields::find(data).is_empty() {
        return;
    }
    let Ok(original) = serde_json::from_str::<Value>(text) else {
        // An escape no string can hold (a lone surrogate) in a field both
        // ways skip (managedFields): no `Value` to compare with.
        assert!(
            from_text.is_ok(),
            "a release that parses is kept from its text"
        );
        return;
    };
    if original.get("kind").is_some() && original.get("apiVersion").is_none() {
        return; // the value's way overwrites the kind, the text's keeps it
    }
    let (key, kept) = from_text.expect("a release that parses is kept from its text");
    let deleted = deleted.expect("kept");
    assert_eq!(deleted.key, key);
    assert_eq!(*deleted.stored.json(), *kept.json());
    assert_eq!(deleted.is_release, original.get("spec").is_some());
    let held = original
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    assert_eq!(deleted.held, held, "finalizers read from the text");
    let by_value = Stored::new(&parsed);
    assert_eq!(key, Key::of(&parsed));
    assert_eq!(kept.resource_version(), by_value.resource_version());
    assert_eq!(kept.kind_label(), by_value.kind_label());
    assert_eq!(
        kept.kind_label(),
        parsed
            .pointer("/metadata/labels")
            .and_then(|l| l.get(KIND_LABEL))
            .and_then(Value::as_str)
    );
    // The parsed release is what the value's way keeps. Floats compare to
    // 12 digits: serde_json reads some one unit in the last place off, so
    // where either way encodes and parses a value once more (the value's
    // way everywhere, the text's for a `spec` that is not an object) the
    // second reading can differ from the first.
    assert_eq!(
        floats_rounded(kept.value()),
        floats_rounded(parsed.clone()),
        "kept from the text is not kept from the value"
    );

    let (_, answer) = answered.expect("kept");
    let view = answer.app_view(served).map(|v| v.json.clone());
    let read = kept.app_view(served).map(|v| v.json.clone());
    assert_eq!(view, read, "the answer's view is not the one a read makes");
    let converted = helm_release::app_view(kind, &parsed).map(|v| v.json.clone());
    // Floats to 12 digits, as above.
    let parse = |json: &Option<Box<str>>| {
        json.as_deref()
            .map(|j| floats_rounded(serde_json::from_str::<Value>(j).expect("a view is JSON")))
    };
    assert_eq!(
        parse(&view),
        parse(&converted),
        "the view made from the text is not the parsed value's"
    );
}

/// `value` with every float written as a string of 12 significant digits.
fn floats_rounded(value: Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => {
            Value::String(format!("{:.11e}", n.as_f64().unwrap_or(0.0)))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(floats_rounded).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, floats_rounded(v)))
                .collect(),
        ),
        other => other,
    }
}
