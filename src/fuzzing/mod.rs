//! The bodies of the coverage-guided fuzz targets in `fuzz/`, one plain
//! function per target taking the fuzzer's bytes, so that the libFuzzer
//! targets (nightly, `cargo fuzz`) and the stable regression test
//! (`tests/fuzz_replay.rs`, which replays the committed corpora and
//! `fuzz/regressions/`) run exactly the same code.
//!
//! Each function returns normally for every input the code under test
//! handles correctly, *including* inputs it rejects with an error; it
//! panics when the code under test panics or when one of the properties
//! asserted here does not hold (a merge patch applied twice changes
//! nothing, an app survives the round trip through its HelmRelease, ...).
//!
//! Input formats are plain text so seeds can be written by hand; the
//! module of each target documents its own. Not a public API: hidden from
//! the documentation and free to change.

mod chart;
mod helm_release;
mod kept_text;
mod kubeconfig;
mod patch;
mod request;
mod schema;
mod selectors;

pub use self::chart::chart_archive;
pub use self::helm_release::helm_release;
pub use self::kept_text::kept_text;
pub use self::kubeconfig::kubeconfig;
pub use self::patch::{apply, json_patch, merge_patch};
pub use self::request::{negotiate, request_info};
pub use self::schema::{schema_convert, validate};
pub use self::selectors::{field_selector, jsonpath, label_selector};

/// A fuzz target body.
pub type Target = fn(&[u8]);

/// Every target, by the name of its `fuzz/fuzz_targets/<name>.rs` file and
/// corpus directory.
pub const TARGETS: &[(&str, Target)] = &[
    ("schema_convert", schema_convert),
    ("validate", validate),
    ("json_patch", json_patch),
    ("merge_patch", merge_patch),
    ("apply", apply),
    ("label_selector", label_selector),
    ("field_selector", field_selector),
    ("jsonpath", jsonpath),
    ("request_info", request_info),
    ("negotiate", negotiate),
    ("chart_archive", chart_archive),
    ("kubeconfig", kubeconfig),
    ("helm_release", helm_release),
    ("kept_text", kept_text),
];

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Splits `data` at its first newline: the line (without the newline) and
/// the rest. Without a newline the whole input is the line.
fn split_line(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// `data` as text, invalid UTF-8 replaced (the HTTP layer hands the code
/// under test `&str`s, never raw bytes).
fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// The example kinds (`examples/kinds`), loaded once: their schemas seed
/// the schema and patch targets and Postgres is the kind of the
/// HelmRelease round trip.
fn example_kinds() -> &'static [crate::kinds::definition::ResolvedKind] {
    static KINDS: std::sync::OnceLock<Vec<crate::kinds::definition::ResolvedKind>> =
        std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        [
            (
                "postgres",
                include_str!("../../examples/kinds/postgres.yaml"),
            ),
            ("redis", include_str!("../../examples/kinds/redis.yaml")),
            ("bucket", include_str!("../../examples/kinds/bucket.yaml")),
        ]
        .into_iter()
        .flat_map(|(name, text)| {
            crate::kinds::load::load_text(text, name)
                .expect("the example kinds load")
                .kinds
        })
        .collect()
    })
}

/// The first example kind (Postgres) served with a schema that keeps every
/// value as it is: the conversion targets compare the cache's app views with
/// the plain conversion, which does not prune by the schema.
fn example_served() -> &'static crate::kinds::registry::ServedKind {
    static SERVED: std::sync::OnceLock<crate::kinds::registry::ServedKind> =
        std::sync::OnceLock::new();
    SERVED.get_or_init(|| {
        let schema =
            serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        crate::kinds::registry::ServedKind::new(
            example_kinds()[0].clone(),
            crate::kinds::schema::CompiledSchema::new(&schema).expect("the schema compiles"),
        )
    })
}

/// The `openAPISchema` of the example kind whose lower-case kind is
/// `name`.
fn example_schema(name: &str) -> Option<&'static serde_json::Value> {
    example_kinds()
        .iter()
        .find(|k| k.definition.kind.eq_ignore_ascii_case(name))
        .map(|k| &k.definition.open_api_schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_named_uniquely_and_found() {
        for (name, _) in TARGETS {
            assert!(target(name).is_some());
            assert_eq!(TARGETS.iter().filter(|(n, _)| n == name).count(), 1);
        }
        assert!(target("nope").is_none());
    }

    #[test]
    fn lines_split_at_the_first_newline() {
        assert_eq!(split_line(b"a\nb\nc"), (&b"a"[..], &b"b\nc"[..]));
        assert_eq!(split_line(b"abc"), (&b"abc"[..], &b""[..]));
    }

    #[test]
    fn example_kinds_have_schemas() {
        for name in ["postgres", "redis", "bucket"] {
            assert!(
                example_schema(name).is_some_and(|s| s.is_object()),
                "{name}"
            );
        }
    }
}
