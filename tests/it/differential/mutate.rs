//! Mutations of a valid object, chosen from the schema at a random place in
//! it: wrong types, nulls, removed (required or defaulted) fields, numbers
//! at, below and above their bounds (exclusive too) and beyond int64, bad
//! enum values (including what YAML 1.1 would read as booleans), pattern
//! misses, strings at and past `maxLength` in multi-byte characters, huge
//! strings, int-or-string values of other types, unknown fields, empty
//! objects (defaults at depth), map keys that need escaping, too many or too
//! few items and properties, duplicate items, and arbitrary JSON under
//! preserve-unknown-fields.

use serde_json::{Value, json};

use super::cases::Draw;
use super::generate::{self, flag};

/// One step of a path into the object.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    /// A property or map key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// A place a mutation can change: present in the object, or an absent
/// property of a present object.
struct Site<'s> {
    path: Vec<Seg>,
    schema: &'s Value,
    present: bool,
}

/// What a mutation does at its site.
enum Op {
    Set(Value),
    Remove,
    /// Sets a key of the object at the site.
    SetChild(String, Value),
}

/// The field path of `path` under `spec`, as kube-apiserver writes it.
pub fn field_path(path: &[Seg]) -> String {
    let mut out = String::from("spec");
    for seg in path {
        match seg {
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn sites<'s>(schema: &'s Value, value: &Value) -> Vec<Site<'s>> {
    let mut out = Vec::new();
    walk(schema, Some(value), &mut Vec::new(), &mut out);
    out
}

fn walk<'s>(
    schema: &'s Value,
    value: Option<&Value>,
    path: &mut Vec<Seg>,
    out: &mut Vec<Site<'s>>,
) {
    out.push(Site {
        path: path.clone(),
        schema,
        present: value.is_some(),
    });
    let Some(value) = value else { return };
    match value {
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(props) = props {
                for (k, sub) in props {
                    path.push(Seg::Key(k.clone()));
                    walk(sub, m.get(k), path, out);
                    path.pop();
                }
            }
            if let Some(ap @ Value::Object(_)) = schema.get("additionalProperties") {
                for (k, v) in m {
                    if props.is_some_and(|p| p.contains_key(k)) {
                        continue;
                    }
                    path.push(Seg::Key(k.clone()));
                    walk(ap, Some(v), path, out);
                    path.pop();
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk(sub, Some(v), path, out);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

fn get<'v>(value: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get(k),
        Seg::Index(i) => v.get(i),
    })
}

fn get_mut<'v>(value: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get_mut(k),
        Seg::Index(i) => v.get_mut(i),
    })
}

fn apply(value: &mut Value, path: &[Seg], op: Op) {
    match op {
        Op::SetChild(k, v) => {
            if let Some(Value::Object(m)) = get_mut(value, path) {
                m.insert(k, v);
            }
        }
        Op::Set(v) => match path.split_last() {
            None => *value = v,
            Some((last, parent)) => match (get_mut(value, parent), last) {
                (Some(Value::Object(m)), Seg::Key(k)) => {
                    m.insert(k.clone(), v);
                }
                (Some(Value::Array(a)), Seg::Index(i)) if *i < a.len() => a[*i] = v,
                _ => {}
            },
        },
        Op::Remove => match path.split_last() {
            None => *value = json!({}),
            Some((last, parent)) => match (get_mut(value, parent), last) {
                (Some(Value::Object(m)), Seg::Key(k)) => {
                    m.shift_remove(k);
                }
                (Some(Value::Array(a)), Seg::Index(i)) if *i < a.len() => {
                    a.remove(*i);
                }
                _ => {}
            },
        },
    }
}

/// Applies one random mutation to `value` (valid against `schema`) and
/// returns what it did, e.g. `spec.replicas: maximum+1`.
pub fn mutate(schema: &Value, value: &mut Value, draw: &mut Draw) -> String {
    let all = sites(schema, value);
    let site = &all[draw.below(all.len())];
    let here = get(value, &site.path).cloned();
    let mut options = candidates(site, here.as_ref(), draw);
    let (label, op) = options.swap_remove(draw.below(options.len()));
    apply(value, &site.path, op);
    format!("{}: {label}", field_path(&site.path))
}

fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9e15 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

fn candidates(site: &Site<'_>, here: Option<&Value>, draw: &mut Draw) -> Vec<(String, Op)> {
    let s = site.schema;
    let t = s.get("type").and_then(Value::as_str).unwrap_or("");
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    let mut c: Vec<(String, Op)> = Vec::new();
    let mut set = |label: &str, v: Value| c.push((label.to_owned(), Op::Set(v)));

    if !site.path.is_empty() {
        set("null", Value::Null);
        let wrong = [
            json!("text"),
            json!(7),
            json!(1.5),
            json!(true),
            json!([]),
            json!(["a"]),
            json!({}),
            json!({"a": 1}),
        ];
        let w = wrong[draw.below(wrong.len())].clone();
        set("another type", w);
    }

    if matches!(t, "integer" | "number") || int_or_string {
        for key in ["minimum", "maximum"] {
            if let Some(b) = s.get(key).and_then(Value::as_f64) {
                set(key, num(b));
                set(&format!("{key}-1"), num(b - 1.0));
                set(&format!("{key}+1"), num(b + 1.0));
                set(&format!("{key}-0.5"), num(b - 0.5));
                set(&format!("{key}+0.5"), num(b + 0.5));
            }
        }
        if let Some(m) = s.get("multipleOf").and_then(Value::as_f64) {
            set("multipleOf+1", num(m + 1.0));
            set("multipleOf*3", num(m * 3.0));
            set("multipleOf/2", num(m / 2.0));
        }
        set("fraction", json!(2.5));
        set("integral float", json!(3.0));
        set("1e20", json!(1e20));
        set("int64 max", json!(i64::MAX));
        set("int64 min", json!(i64::MIN));
        set("uint64 max", json!(u64::MAX));
        set("zero", json!(0));
        set("minus one", json!(-1));
        set("-0.0", json!(-0.0));
    }

    if t == "string" || int_or_string || (t.is_empty() && s.get("pattern").is_some()) {
        set("empty string", json!(""));
        set("space", json!(" "));
        set("bad value", json!("Bad Value!"));
        match s.get("maxLength").and_then(Value::as_u64) {
            Some(max) => {
                let max = max as usize;
                set("maxLength ASCII", json!("x".repeat(max)));
                set("maxLength+1 ASCII", json!("x".repeat(max + 1)));
                set("maxLength two-byte", json!("é".repeat(max)));
                set("maxLength+1 two-byte", json!("é".repeat(max + 1)));
                set("maxLength four-byte", json!("\u{1F600}".repeat(max)));
            }
            None => set("huge string", json!("y".repeat(70_000))),
        }
        if let Some(min) = s
            .get("minLength")
            .and_then(Value::as_u64)
            .filter(|m| *m > 0)
        {
            set("minLength-1", json!("x".repeat(min as usize - 1)));
        }
        if s.get("pattern").is_some() {
            set("pattern miss", json!("no match \u{1F4A5}"));
            if let Some(Value::String(ok)) = here {
                set("pattern miss (suffix)", json!(format!("{ok} !")));
            }
        }
        if let Some(f) = s.get("format").and_then(Value::as_str) {
            set("bad format", json!(format!("not a {f}")));
        }
        if int_or_string {
            set("percent", json!("50%"));
            set("boolean", json!(true));
            set("unit", json!("1gb"));
            set("numeric string", json!("0"));
        }
    }

    if let Some(Value::Array(values)) = s.get("enum") {
        set("not in enum", json!("not-in-enum"));
        if let Some(Value::String(first)) = values.first() {
            set("enum upper-cased", json!(first.to_uppercase()));
            if let Ok(n) = first.parse::<i64>() {
                set("enum as number", json!(n));
            }
            if matches!(
                first.as_str(),
                "on" | "off" | "yes" | "no" | "true" | "false"
            ) {
                set(
                    "enum as YAML 1.1 boolean",
                    json!(first == "on" || first == "yes"),
                );
            }
        }
    }

    if t == "boolean" {
        set("boolean as string", json!("true"));
        set("boolean as number", json!(1));
    }

    if t == "array" {
        let items = s.get("items").cloned().unwrap_or(Value::Null);
        let one = draw.value_or(generate::valid(&items), json!("item"));
        let max = s.get("maxItems").and_then(Value::as_u64);
        set("empty list", json!([]));
        set("duplicate items", json!([one.clone(), one.clone()]));
        set("wrong item type", json!([{"a": [1]}]));
        set("null item", json!([null]));
        if let Some(max) = max {
            set(
                "maxItems+1",
                Value::Array(vec![one.clone(); max as usize + 1]),
            );
        }
    }

    if t == "object" || here.is_some_and(Value::is_object) {
        set("empty object", json!({}));
        if site.present && here.is_some_and(Value::is_object) {
            let unknown = if draw.below(2) == 0 {
                "unknownField"
            } else {
                "zz"
            };
            c.push((
                "unknown field".into(),
                Op::SetChild(unknown.into(), json!(1)),
            ));
            c.push((
                "unknown nested field".into(),
                Op::SetChild("extra".into(), json!({"nested": {"deep": [1, "x", null]}})),
            ));
            if let Some(ap @ Value::Object(_)) = s.get("additionalProperties") {
                let long = "x".repeat(300);
                let keys = [
                    "a.b",
                    "[0]",
                    "with space",
                    "ünï",
                    "a/b",
                    "q\"uote",
                    "",
                    &long,
                ];
                let key = keys[draw.below(keys.len())].to_owned();
                let v = draw.value_or(generate::valid(ap), json!({}));
                c.push(("odd map key".into(), Op::SetChild(key, v.clone())));
                if let Some(max) = s.get("maxProperties").and_then(Value::as_u64) {
                    let mut m = here.and_then(Value::as_object).cloned().unwrap_or_default();
                    for i in 0..=max {
                        m.insert(format!("k{i}"), v.clone());
                    }
                    c.push(("maxProperties+1".into(), Op::Set(Value::Object(m))));
                }
            }
            if flag(s, "x-kubernetes-preserve-unknown-fields") {
                let junk = draw.value_or(generate::junk(), json!({"k": [1]}));
                c.push((
                    "kept unknown field".into(),
                    Op::SetChild("kept".into(), junk),
                ));
            }
        }
    }

    if site.present && !site.path.is_empty() {
        c.push(("removed".into(), Op::Remove));
    }
    if c.is_empty() {
        c.push(("empty object".into(), Op::Set(json!({}))));
    }
    c
}
