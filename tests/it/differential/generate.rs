//! Valid objects for a structural schema, as proptest strategies built from
//! the schema at run time: types, enums, patterns (generated from the
//! regular expression), formats, length, item and property bounds, numeric
//! bounds and `multipleOf`, nullable fields, int-or-string, maps
//! (`additionalProperties`), sets, and arbitrary JSON where
//! `x-kubernetes-preserve-unknown-fields` keeps it. Optional properties are
//! left out now and then, so defaults apply at every depth.
//!
//! "Valid" means valid against the structural part of the schema; `allOf`,
//! `anyOf`, `oneOf` and `not` are not solved, so some generated objects are
//! refused (by both servers, when they agree).

use proptest::prelude::*;
use proptest::{collection, option, sample};
use serde_json::{Map, Number, Value};

/// How deep objects nest before the generator stops adding optional fields.
const MAX_DEPTH: usize = 8;

/// Whether `key` is `true` in `schema`.
pub fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A strategy for values valid against `schema`.
pub fn valid(schema: &Value) -> BoxedStrategy<Value> {
    node(schema, 0)
}

fn node(s: &Value, depth: usize) -> BoxedStrategy<Value> {
    let base = typed(s, depth);
    if flag(s, "nullable") {
        prop_oneof![9 => base, 1 => Just(Value::Null)].boxed()
    } else {
        base
    }
}

fn typed(s: &Value, depth: usize) -> BoxedStrategy<Value> {
    if let Some(Value::Array(values)) = s.get("enum")
        && !values.is_empty()
    {
        return sample::select(values.clone()).boxed();
    }
    if flag(s, "x-kubernetes-int-or-string") {
        return prop_oneof![integer(s), string(s)].boxed();
    }
    match s.get("type").and_then(Value::as_str) {
        Some("object") => object(s, depth),
        Some("array") => array(s, depth),
        Some("string") => string(s),
        Some("integer") => integer(s),
        Some("number") => number(s),
        Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
        _ if s.get("pattern").is_some() => prop_oneof![string(s), junk()].boxed(),
        _ => junk(),
    }
}

/// Arbitrary JSON, a few levels deep (what preserve-unknown-fields keeps).
pub fn junk() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z0-9 ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            collection::btree_map("[a-z][a-zA-Z0-9]{0,6}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

fn usize_of(s: &Value, key: &str) -> Option<usize> {
    s.get(key).and_then(Value::as_u64).map(|n| n as usize)
}

fn object(s: &Value, depth: usize) -> BoxedStrategy<Value> {
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    if let Some(Value::Object(props)) = s.get("properties") {
        for (name, sub) in props {
            let key = name.clone();
            let value = node(sub, depth + 1).prop_map(move |v| (key.clone(), v));
            if required.contains(&name.as_str()) {
                fields.push(value.prop_map(Some).boxed());
            } else if depth < MAX_DEPTH {
                fields.push(option::weighted(0.6, value).boxed());
            }
        }
    }
    let min = usize_of(s, "minProperties").unwrap_or(0);
    let max = usize_of(s, "maxProperties").unwrap_or(min + 3).min(min + 3);
    let extra: BoxedStrategy<Vec<(String, Value)>> = match s.get("additionalProperties") {
        Some(sub @ Value::Object(_)) if depth < MAX_DEPTH || min > 0 => {
            collection::btree_map(map_key(), node(sub, depth + 1), min..=max.max(min))
                .prop_map(|m| m.into_iter().collect())
                .boxed()
        }
        _ if flag(s, "x-kubernetes-preserve-unknown-fields") && depth < MAX_DEPTH => {
            collection::vec(("x[a-z]{1,6}", junk()), 0..2).boxed()
        }
        _ => Just(Vec::new()).boxed(),
    };
    (fields, extra)
        .prop_map(|(fields, extra)| {
            let mut m = Map::new();
            for (k, v) in extra {
                m.insert(k, v);
            }
            for (k, v) in fields.into_iter().flatten() {
                m.insert(k, v);
            }
            Value::Object(m)
        })
        .boxed()
}

/// Keys of maps: mostly ordinary, sometimes ones that need care in field
/// paths (dots, brackets, spaces, non-ASCII).
fn map_key() -> BoxedStrategy<String> {
    prop_oneof![
        8 => "[a-z][a-z0-9-]{0,8}",
        1 => sample::select(vec!["a.b", "[0]", "with space", "ünï", "a/b", "q\"uote", "UPPER"])
            .prop_map(str::to_owned),
    ]
    .boxed()
}

fn array(s: &Value, depth: usize) -> BoxedStrategy<Value> {
    let items = s.get("items").cloned().unwrap_or(Value::Null);
    let min = usize_of(s, "minItems").unwrap_or(0);
    let max = usize_of(s, "maxItems").unwrap_or(min + 3).min(min + 3);
    let set = flag(s, "uniqueItems")
        || s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("set");
    let keys: Vec<String> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|k| {
            k.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let len = if depth < MAX_DEPTH {
        min..=max.max(min)
    } else {
        min..=min
    };
    collection::vec(node(&items, depth + 1), len)
        .prop_map(move |mut v| {
            if set {
                let mut seen = Vec::new();
                v.retain(|x| {
                    let fresh = !seen.contains(x);
                    seen.push(x.clone());
                    fresh
                });
            }
            if !keys.is_empty() {
                let mut seen = Vec::new();
                v.retain(|x| {
                    let key: Vec<Option<&Value>> = keys.iter().map(|k| x.get(k)).collect();
                    let fresh = !seen.contains(&format!("{key:?}"));
                    seen.push(format!("{key:?}"));
                    fresh
                });
            }
            Value::Array(v)
        })
        .boxed()
}

/// Strings the formats kube-apiserver checks accept.
fn format_examples(format: &str) -> Option<Vec<&'static str>> {
    Some(match format {
        "date-time" => vec!["2024-01-02T03:04:05Z", "2026-12-01T19:00:00.5+02:00"],
        "date" => vec!["2024-01-02", "1999-12-31"],
        "uri" => vec!["https://example.com/a", "s3://bucket/path"],
        "email" => vec!["a@example.com"],
        "hostname" => vec!["example.com", "db-1"],
        "ipv4" => vec!["10.0.0.1"],
        "ipv6" => vec!["::1", "fe80::1"],
        "uuid" => vec!["123e4567-e89b-12d3-a456-426614174000"],
        "byte" => vec!["aGVsbG8=", ""],
        "duration" => vec!["1h", "30s"],
        _ => return None,
    })
}

fn string(s: &Value) -> BoxedStrategy<Value> {
    let min = usize_of(s, "minLength").unwrap_or(0);
    let max = usize_of(s, "maxLength").unwrap_or(min + 12);
    if let Some(examples) = s
        .get("format")
        .and_then(Value::as_str)
        .and_then(format_examples)
    {
        return sample::select(examples)
            .prop_map(|e| Value::String(e.to_owned()))
            .boxed();
    }
    if let Some(pattern) = s.get("pattern").and_then(Value::as_str)
        && let Some(strategy) = pattern_strategy(pattern)
    {
        return strategy
            .prop_map(move |mut text| {
                // Keep within the bounds (a pattern's strings rarely meet them).
                if text.chars().count() > max {
                    text = text.chars().take(max).collect();
                }
                Value::String(text)
            })
            .boxed();
    }
    let hi = max.min(min + 16).max(min);
    let regex = |class: &str| {
        proptest::string::string_regex(&format!("[{class}]{{{min},{hi}}}")).expect("regex")
    };
    prop_oneof![
        6 => regex("a-zA-Z0-9._-"),
        1 => regex("a-zé€ \u{1F600}"),
    ]
    .prop_map(Value::String)
    .boxed()
}

/// Strings matching `pattern` (RE2 syntax, as Kubernetes uses): its leading
/// `^` and trailing `$` are dropped, as proptest generates no anchors; a
/// pattern it cannot generate from gets no strategy.
fn pattern_strategy(pattern: &str) -> Option<BoxedStrategy<String>> {
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    let body = if body.ends_with('$') && !body.ends_with("\\$") {
        &body[..body.len() - 1]
    } else {
        body
    };
    let strategy = proptest::string::string_regex(body).ok()?;
    let check = regex::Regex::new(pattern).ok()?;
    Some(
        strategy
            .prop_filter("matches the anchored pattern", move |s| check.is_match(s))
            .boxed(),
    )
}

fn bound(s: &Value, key: &str) -> Option<f64> {
    s.get(key).and_then(Value::as_f64)
}

fn integer(s: &Value) -> BoxedStrategy<Value> {
    let mut lo = bound(s, "minimum").map(f64::ceil);
    let mut hi = bound(s, "maximum").map(f64::floor);
    if flag(s, "exclusiveMinimum") {
        lo = lo.map(|l| l + 1.0);
    }
    if flag(s, "exclusiveMaximum") {
        hi = hi.map(|h| h - 1.0);
    }
    let (lo, hi) = match (lo, hi) {
        (Some(l), Some(h)) => (l, h),
        (Some(l), None) => (l, l + 1000.0),
        (None, Some(h)) => (h - 1000.0, h),
        (None, None) => (-1000.0, 1000.0),
    };
    let (lo, hi) = (lo as i64, (hi as i64).max(lo as i64));
    match s
        .get("multipleOf")
        .and_then(Value::as_i64)
        .filter(|m| *m > 0)
    {
        Some(m) => {
            let (a, b) = ((lo + m - 1).div_euclid(m), hi.div_euclid(m));
            (a..=b.max(a)).prop_map(move |k| Value::from(k * m)).boxed()
        }
        None => (lo..=hi).prop_map(Value::from).boxed(),
    }
}

fn number(s: &Value) -> BoxedStrategy<Value> {
    let lo = bound(s, "minimum").unwrap_or(-1000.0);
    let hi = bound(s, "maximum").unwrap_or(lo + 1000.0).max(lo);
    let ints = integer(s);
    let floats = (lo..=hi)
        .prop_filter("within exclusive bounds", move |f| *f > lo && *f < hi)
        .prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number));
    if s.get("multipleOf").is_some() || hi - lo < 1e-6 {
        ints
    } else {
        prop_oneof![ints, floats].boxed()
    }
}
