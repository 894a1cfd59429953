//! Field paths and field sets, and their `FieldsV1` encoding, as in
//! sigs.k8s.io/structured-merge-diff `fieldpath`.
//!
//! A [`Set`] is a trie of [`PathElement`]s: *members* are paths owned as
//! such, *children* hold deeper paths. `FieldsV1` writes it as nested JSON
//! objects keyed by serialized path elements (`f:name`, `k:{"name":"a"}`,
//! `v:"x"`, `i:0`), with `"."` marking a node that is both a member and a
//! parent. Ordering, serialization and the human-readable path form follow
//! the Go code byte for byte where it matters to clients (managedFields
//! output and conflict messages):
//!
//! - elements sort field < key < value < index, fields bytewise, values
//!   numbers < strings < booleans < lists < maps < null;
//! - keys are encoded the way structured-merge-diff's json-iterator does
//!   ([`Dialect::JsonIter`]: sorted object keys, `<`, `>`, `&`, U+2028 and
//!   U+2029 escaped in values, `k:` field names written plainly);
//! - paths print as `.spec.list[name="a"].x`, values quoted like Go's `%q`.
//!
//! One deliberate difference: an integer and a float compare by exact
//! numeric value (Go converts the integer to `float64`), which keeps the
//! ordering total for integers beyond 2^53.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt::{self, Write as _};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Number, Value};

use crate::golang::{self, Dialect, json};

/// A field's name in a path: kept inline up to 24 bytes, as nearly every
/// field name is, so building paths and sets of them allocates per set
/// node, not per name.
pub(crate) type FieldName = compact_str::CompactString;

/// One step of a field path.
#[derive(Debug, Clone)]
pub(crate) enum PathElement {
    /// A field of a map (`f:`).
    Field(FieldName),
    /// An item of an associative list, by its key fields sorted by name
    /// (`k:`).
    Key(Vec<(String, Value)>),
    /// An item of a set, by value (`v:`).
    Value(Value),
    /// An item of a list, by position (`i:`): read from managedFields, and
    /// named in an applied configuration's errors (`.extensions[0]`).
    Index(i64),
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The `FieldsV1` key for this element.
    pub(crate) fn serialize(&self) -> String {
        let mut out = String::new();
        self.write_key(&mut out);
        out
    }

    /// Appends the `FieldsV1` key for this element to `out`.
    fn write_key(&self, out: &mut String) {
        match self {
            PathElement::Field(name) => {
                out.push_str("f:");
                out.push_str(name);
            }
            PathElement::Key(fields) => {
                out.push_str("k:{");
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    json::write_jsoniter_plain_string(out, name);
                    out.push(':');
                    Dialect::JsonIter.write_value(out, value);
                }
                out.push('}');
            }
            PathElement::Value(value) => {
                out.push_str("v:");
                Dialect::JsonIter.write_value(out, value);
            }
            PathElement::Index(i) => {
                let _ = write!(out, "i:{i}");
            }
        }
    }

    /// Parses a `FieldsV1` key. `Ok(None)` is an element type this code
    /// does not know, which is skipped as structured-merge-diff does.
    pub(crate) fn deserialize(s: &str) -> Result<Option<PathElement>, String> {
        let b = s.as_bytes();
        if b.len() < 2 {
            return Err(format!("key must be 2 characters long: {s}"));
        }
        if b[1] != b':' {
            return Err(format!("missing colon: {s}"));
        }
        // b[1] is ASCII, so b[0] is a whole character and 2 is a boundary.
        let rest = &s[2..];
        match b[0] {
            b'f' => Ok(Some(PathElement::Field(FieldName::new(rest)))),
            b'v' => serde_json::from_str::<Value>(rest)
                .map(|v| Some(PathElement::Value(v)))
                .map_err(|e| format!("parsing key as path element {s}: {e}")),
            b'k' => {
                let map = serde_json::from_str::<Map<String, Value>>(rest)
                    .map_err(|e| format!("parsing key as path element {s}: {e}"))?;
                let mut fields: Vec<(String, Value)> = map.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(Some(PathElement::Key(fields)))
            }
            b'i' => rest
                .parse::<i64>()
                .map(|i| Some(PathElement::Index(i)))
                .map_err(|e| format!("parsing key as path element {s}: {e}")),
            _ => Ok(None),
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.as_bytes().cmp(b.as_bytes()),
            (PathElement::Key(a), PathElement::Key(b)) => compare_field_lists(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                f.write_str("[")?;
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{name}={}", go_value_string(value))?;
                }
                f.write_str("]")
            }
            PathElement::Value(value) => write!(f, "[={}]", go_value_string(value)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A field path, printed like structured-merge-diff's `Path.String()`.
pub(crate) struct PathDisplay<'a>(pub(crate) &'a [PathElement]);

impl fmt::Display for PathDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for pe in self.0 {
            write!(f, "{pe}")?;
        }
        Ok(())
    }
}

/// A set of field paths.
///
/// Each level keeps its members and its children in sorted `Vec`s, not in
/// B-trees: a level holds a handful of elements, so a binary search finds
/// one as fast, and a `Vec` allocates exactly its elements where a B-tree
/// allocates a node for eleven (a managedFields update allocated 145 times
/// and 29 KB with B-trees, 81 times and 16 KB now, inline field names
/// included;
/// `benches/write_stages.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Set {
    /// Sorted, without duplicates.
    members: Vec<PathElement>,
    /// Sorted by element, without duplicates; a child may be empty.
    children: Vec<(PathElement, Set)>,
}

impl Set {
    /// The empty set.
    pub(crate) fn new() -> Set {
        Set::default()
    }

    /// A set of the given paths.
    pub(crate) fn from_paths<'a>(paths: impl IntoIterator<Item = &'a [PathElement]>) -> Set {
        let mut s = Set::new();
        for p in paths {
            s.insert(p);
        }
        s
    }

    fn child_index(&self, pe: &PathElement) -> Result<usize, usize> {
        self.children.binary_search_by(|(c, _)| c.cmp(pe))
    }

    fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.child_index(pe).ok().map(|i| &self.children[i].1)
    }

    /// The child at `pe`, added empty if missing.
    fn child_entry(&mut self, pe: &PathElement) -> &mut Set {
        let i = match self.child_index(pe) {
            Ok(i) => i,
            Err(i) => {
                self.children.insert(i, (pe.clone(), Set::new()));
                i
            }
        };
        &mut self.children[i].1
    }

    /// Adds the member `pe` at this level, cloned only when missing.
    fn add_member(&mut self, pe: &PathElement) {
        if let Err(i) = self.members.binary_search(pe) {
            self.members.insert(i, pe.clone());
        }
    }

    /// Adds a path (not its parents). The empty path is the whole object,
    /// which nobody owns, and is ignored.
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => self.add_member(last),
            [first, rest @ ..] => self.child_entry(first).insert(rest),
        }
    }

    /// Adds `path` and, under it, the paths of `below` (relative to
    /// `path`; at the root, `below` itself): one descent for a whole
    /// subtree, where [`Set::insert`] takes one per path.
    pub(crate) fn insert_with_below(&mut self, path: &[PathElement], below: Set) {
        match path {
            [] => self.absorb(below),
            [last] => self.add_with_below(last.clone(), below),
            [first, rest @ ..] => self.child_entry(first).insert_with_below(rest, below),
        }
    }

    /// Adds the member `pe` at this level, with the paths of `below` under
    /// it: a set built level by level, bottom up.
    pub(crate) fn add_with_below(&mut self, pe: PathElement, below: Set) {
        if !below.members.is_empty() || !below.children.is_empty() {
            self.child_entry(&pe).absorb(below);
        }
        // [`Set::add_member`], but taking `pe` rather than a clone of it.
        if let Err(i) = self.members.binary_search(&pe) {
            self.members.insert(i, pe);
        }
    }

    /// Whether the path is a member.
    pub(crate) fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.has_member(last),
            [first, rest @ ..] => self.child(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether the set has no paths at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.iter().all(|(_, c)| c.is_empty())
    }

    /// The paths below `pe`, without the prefix; empty if none.
    pub(crate) fn with_prefix(&self, pe: &PathElement) -> Option<&Set> {
        self.child(pe).filter(|c| !c.is_empty())
    }

    /// The member elements at this level.
    pub(crate) fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The child subsets at this level.
    pub(crate) fn children(&self) -> impl Iterator<Item = (&PathElement, &Set)> {
        self.children.iter().map(|(pe, c)| (pe, c))
    }

    /// Whether `pe` is a member at this level.
    pub(crate) fn has_member(&self, pe: &PathElement) -> bool {
        self.members.binary_search(pe).is_ok()
    }

    /// Paths in either set.
    pub(crate) fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.union_with(other);
        out
    }

    /// Adds the paths of `other` ([`Set::union`] in place).
    pub(crate) fn union_with(&mut self, other: &Set) {
        for pe in &other.members {
            self.add_member(pe);
        }
        for (pe, child) in &other.children {
            match self.child_index(pe) {
                Ok(i) => self.children[i].1.union_with(child),
                Err(i) => self.children.insert(i, (pe.clone(), child.clone())),
            }
        }
    }

    /// Adds the paths of `other`, taking them over whole when this set is
    /// empty.
    pub(crate) fn absorb(&mut self, other: Set) {
        if self.members.is_empty() && self.children.is_empty() {
            *self = other;
        } else {
            self.union_with(&other);
        }
    }

    /// Removes the paths of `other` ([`Set::difference`] in place).
    pub(crate) fn subtract(&mut self, other: &Set) {
        if !other.members.is_empty() {
            self.members.retain(|pe| !other.has_member(pe));
        }
        if !other.children.is_empty() {
            self.children
                .retain_mut(|(pe, child)| match other.child(pe) {
                    Some(theirs) => {
                        child.subtract(theirs);
                        !child.is_empty()
                    }
                    None => true,
                });
        }
    }

    /// Removes the paths of `other` and everything below its members
    /// ([`Set::recursive_difference`] in place).
    pub(crate) fn subtract_recursive(&mut self, other: &Set) {
        if !other.members.is_empty() {
            self.members.retain(|pe| !other.has_member(pe));
        }
        self.children.retain_mut(|(pe, child)| {
            if other.has_member(pe) {
                return false;
            }
            match other.child(pe) {
                Some(theirs) => {
                    child.subtract_recursive(theirs);
                    !child.is_empty()
                }
                None => true,
            }
        });
    }

    /// Paths in both sets.
    pub(crate) fn intersection(&self, other: &Set) -> Set {
        let members = self
            .members
            .iter()
            .filter(|pe| other.has_member(pe))
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, child)| {
                let i = child.intersection(other.child(pe)?);
                (!i.is_empty()).then(|| (pe.clone(), i))
            })
            .collect();
        Set { members, children }
    }

    /// Paths in `self` but not in `other`; a parent minus its child keeps
    /// the parent (structured-merge-diff's `Difference`).
    pub(crate) fn difference(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.subtract(other);
        out
    }

    /// Like [`Set::difference`], but a member of `other` also removes
    /// everything below it.
    pub(crate) fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.subtract_recursive(other);
        out
    }

    /// Every member path, members of a level before the levels below it,
    /// as structured-merge-diff's `Iterate` does.
    pub(crate) fn paths(&self) -> Vec<Vec<PathElement>> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.collect_paths(&mut prefix, &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
        for pe in &self.members {
            let mut p = prefix.clone();
            p.push(pe.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The `FieldsV1` JSON of the set.
    pub(crate) fn to_fields_v1(&self) -> Value {
        Value::Object(self.fields_v1_contents(false))
    }

    fn fields_v1_contents(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".to_string(), Value::Object(Map::new()));
        }
        for (pe, child, is_member) in self.fields_v1_levels() {
            let contents = child.map_or_else(Map::new, |c| c.fields_v1_contents(is_member));
            out.insert(pe.serialize(), Value::Object(contents));
        }
        out
    }

    /// The `FieldsV1` JSON of the set as something to serialize: the text
    /// of [`Set::to_fields_v1`] without building its `Value` first.
    pub(crate) fn fields_v1(&self) -> FieldsV1<'_> {
        FieldsV1 {
            set: self,
            include_self: false,
        }
    }

    /// The elements of this level, members and children merged, in element
    /// order (as Go emits them), each with its subset if non-empty and
    /// whether it is a member; elements that are neither are skipped.
    fn fields_v1_levels(&self) -> impl Iterator<Item = (&PathElement, Option<&Set>, bool)> {
        // Both are in element order: merged, not sorted again.
        let mut members = self.members.iter().peekable();
        let mut children = self.children().peekable();
        std::iter::from_fn(move || {
            loop {
                let (pe, child, is_member) = match (members.peek(), children.peek()) {
                    (None, None) => return None,
                    (Some(m), Some((c, _))) if m > c => {
                        let (pe, child) = children.next()?;
                        (pe, Some(child), false)
                    }
                    (Some(m), Some((c, _))) if m == c => {
                        let (pe, child) = children.next()?;
                        members.next();
                        (pe, Some(child), true)
                    }
                    (Some(_), _) => (members.next()?, None, true),
                    (None, Some(_)) => {
                        let (pe, child) = children.next()?;
                        (pe, Some(child), false)
                    }
                };
                let child = child.filter(|c| !c.is_empty());
                if child.is_some() || is_member {
                    return Some((pe, child, is_member));
                }
            }
        })
    }

    /// Reads `FieldsV1` JSON.
    pub(crate) fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let Value::Object(map) = v else {
            return Err("FieldsV1 must be a JSON object".to_string());
        };
        Ok(read_fields_v1(map)?.0.unwrap_or_default())
    }
}

/// A set's `FieldsV1` JSON, serialized straight from the set
/// ([`Set::fields_v1`]).
pub(crate) struct FieldsV1<'a> {
    set: &'a Set,
    /// Whether the set's node is itself a member (written as `"."`).
    include_self: bool,
}

impl Serialize for FieldsV1<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if self.include_self && !self.set.is_empty() {
            map.serialize_entry(".", &Empty)?;
        }
        // One key buffer for the level, not one string per key.
        let mut key = String::new();
        for (pe, child, is_member) in self.set.fields_v1_levels() {
            key.clear();
            pe.write_key(&mut key);
            match child {
                Some(set) => map.serialize_entry(
                    &key,
                    &FieldsV1 {
                        set,
                        include_self: is_member,
                    },
                )?,
                None => map.serialize_entry(&key, &Empty)?,
            }
        }
        map.end()
    }
}

/// `{}`.
struct Empty;

impl Serialize for Empty {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_map(Some(0))?.end()
    }
}

/// structured-merge-diff's `readIterV1`: the children of a node, and
/// whether the node itself is a member (an empty object, or one with `"."`).
fn read_fields_v1(map: &Map<String, Value>) -> Result<(Option<Set>, bool), String> {
    let mut children: Option<Set> = None;
    let mut is_member = false;
    for (key, value) in map {
        if key == "." {
            is_member = true;
            continue;
        }
        let Some(pe) = PathElement::deserialize(key)? else {
            continue;
        };
        let Value::Object(inner) = value else {
            return Err(format!("expected an object at {key}"));
        };
        let (grandchildren, child_is_member) = read_fields_v1(inner)?;
        if child_is_member {
            children.get_or_insert_with(Set::new).add_member(&pe);
        }
        if let Some(g) = grandchildren {
            children
                .get_or_insert_with(Set::new)
                .child_entry(&pe)
                .absorb(g);
        }
    }
    if children.is_none() {
        is_member = true;
    }
    Ok((children, is_member))
}

/// Ordering of key field lists: by name, then value, shorter first.
fn compare_field_lists(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let c =
            x.0.as_bytes()
                .cmp(y.0.as_bytes())
                .then_with(|| compare_values(&x.1, &y.1));
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        // Go decodes integers that do not fit int64 as float64.
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

fn compare_int_float(i: i64, f: f64) -> Ordering {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() {
        return Ordering::Less;
    }
    if f >= TWO_63 {
        return Ordering::Less;
    }
    if f < -TWO_63 {
        return Ordering::Greater;
    }
    let t = f.trunc();
    // In range and integral, so the conversion is exact.
    let ti = t as i64;
    i.cmp(&ti).then_with(|| {
        if f > t {
            Ordering::Less
        } else if f < t {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    })
}

fn compare_numbers(a: &Number, b: &Number) -> Ordering {
    match (num(a), num(b)) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        (Num::Float(x), Num::Float(y)) => x.total_cmp(&y),
        (Num::Int(x), Num::Float(y)) => compare_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => compare_int_float(y, x).reverse(),
    }
}

fn value_rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

/// structured-merge-diff's total order of values.
pub(crate) fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y),
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => compare_maps(x, y),
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => value_rank(a).cmp(&value_rank(b)),
    }
}

/// `MapCompareUsing` with lexical key order.
fn compare_maps(a: &Map<String, Value>, b: &Map<String, Value>) -> Ordering {
    if a.is_empty() && b.is_empty() {
        return Ordering::Equal;
    }
    let keys: BTreeSet<&str> = a.keys().chain(b.keys()).map(String::as_str).collect();
    for (i, key) in keys.into_iter().enumerate() {
        let c = if i == a.len() {
            Ordering::Less
        } else if i == b.len() {
            Ordering::Greater
        } else {
            match (a.get(key), b.get(key)) {
                (None, _) => Ordering::Greater,
                (_, None) => Ordering::Less,
                (Some(x), Some(y)) => compare_values(x, y),
            }
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

/// Value equality as structured-merge-diff sees it (`1` equals `1.0`):
/// [`compare_values`] finding them equal, without ordering map keys.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y) == Ordering::Equal,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Null, Value::Null) => true,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, p)| y.get(key).is_some_and(|q| values_equal(p, q)))
        }
        _ => false,
    }
}

/// structured-merge-diff's `value.ToString`.
fn go_value_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match num(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => golang::format_g(f),
        },
        Value::String(s) => golang::quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_value_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", go_value_string(v)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(s: &str) -> PathElement {
        PathElement::Field(s.into())
    }

    fn key(name: &str, v: Value) -> PathElement {
        PathElement::Key(vec![(name.to_string(), v)])
    }

    #[test]
    fn fields_v1_round_trip() {
        let fields = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:list": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}},
                "f:replicas": {},
                "f:set": {"v:\"x\"": {}, "v:1": {}}
            }
        });
        let set = Set::from_fields_v1(&fields).unwrap();
        assert!(set.has(&[field("spec"), field("replicas")]));
        assert!(set.has(&[field("metadata"), field("labels")]));
        assert!(set.has(&[field("metadata"), field("labels"), field("app")]));
        assert!(!set.has(&[field("metadata")]));
        assert!(set.has(&[field("spec"), field("list"), key("name", json!("a"))]));
        assert!(set.has(&[field("spec"), field("set"), PathElement::Value(json!("x"))]));
        // Serialized in element order: numbers before strings for values.
        let out = set.to_fields_v1();
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:list":{"k:{\"name\":\"a\"}":{".":{},"f:name":{}}},"f:replicas":{},"f:set":{"v:1":{},"v:\"x\"":{}}}}"#
        );
        assert_eq!(Set::from_fields_v1(&out).unwrap(), set);
    }

    #[test]
    fn fields_v1_unknown_and_bad_keys() {
        // Unknown element types are dropped; a node left without children
        // is a member.
        let set = Set::from_fields_v1(&json!({"f:a": {"z:zz": {}}})).unwrap();
        assert!(set.has(&[field("a")]));
        assert!(Set::from_fields_v1(&json!({"x": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"fa": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"k:{": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"f:a": 1})).is_err());
        assert!(Set::from_fields_v1(&json!([])).is_err());
        // Multi-byte first character: no panic.
        assert!(Set::from_fields_v1(&json!({"é:": {}})).is_err());
        assert_eq!(Set::from_fields_v1(&json!({})).unwrap(), Set::new());
    }

    #[test]
    fn key_serialization_matches_go() {
        let pe = PathElement::Key(vec![
            ("name".to_string(), json!("a<b")),
            ("port".to_string(), json!(80)),
        ]);
        assert_eq!(pe.serialize(), r#"k:{"name":"a\u003cb","port":80}"#);
        assert_eq!(pe.to_string(), r#"[name="a<b",port=80]"#);
        let parsed = PathElement::deserialize(r#"k:{"port":80,"name":"a<b"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(parsed, pe);
        assert_eq!(PathElement::Value(json!("x")).to_string(), r#"[="x"]"#);
        assert_eq!(
            PathElement::Value(json!({"b": 1, "a": [true]})).serialize(),
            r#"v:{"a":[true],"b":1}"#
        );
        assert_eq!(PathElement::Index(3).serialize(), "i:3");
        assert_eq!(PathElement::Value(json!(1.5e21)).serialize(), "v:1.5e+21");
        // json-iterator, as kube-apiserver writes them (tests/it/go_text.rs).
        assert_eq!(PathElement::Value(json!(1e-7)).serialize(), "v:1e-07");
        assert_eq!(
            key("name", json!("a<\u{8}")).serialize(),
            r#"k:{"name":"a\u003c\u0008"}"#
        );
        assert_eq!(PathElement::Value(json!(0.25)).serialize(), "v:0.25");
        assert_eq!(PathElement::Value(json!(1e6)).to_string(), "[=1e+06]");
        assert_eq!(PathElement::Value(json!(150.5)).to_string(), "[=150.5]");
    }

    #[test]
    fn ordering_follows_smd() {
        assert!(field("b") < key("a", json!(1)));
        assert!(key("a", json!(1)) < PathElement::Value(json!(0)));
        assert!(PathElement::Value(json!(0)) < PathElement::Index(0));
        assert!(compare_values(&json!(1), &json!("a")).is_lt());
        assert!(compare_values(&json!("a"), &json!(true)).is_lt());
        assert!(compare_values(&json!(true), &json!([])).is_lt());
        assert!(compare_values(&json!([]), &json!({})).is_lt());
        assert!(compare_values(&json!({}), &json!(null)).is_lt());
        assert!(values_equal(&json!(1), &json!(1.0)));
        assert!(compare_values(&json!(1), &json!(1.5)).is_lt());
        assert!(compare_values(&json!(2), &json!(1.5)).is_gt());
        assert!(compare_values(&json!(i64::MAX), &json!(9.3e18)).is_lt());
        assert!(compare_values(&json!({"a": 1}), &json!({"a": 1, "b": 1})).is_lt());
    }

    #[test]
    fn set_operations() {
        let a = Set::from_paths([
            &[field("a")][..],
            &[field("b"), field("c")][..],
            &[field("b"), field("d")][..],
        ]);
        let b = Set::from_paths([&[field("b")][..], &[field("b"), field("c")][..]]);
        let d = a.difference(&b);
        assert_eq!(
            d,
            Set::from_paths([&[field("a")][..], &[field("b"), field("d")][..]])
        );
        let rd = a.recursive_difference(&b);
        assert_eq!(rd, Set::from_paths([&[field("a")][..]]));
        let i = a.intersection(&b);
        assert_eq!(i, Set::from_paths([&[field("b"), field("c")][..]]));
        let u = a.union(&b);
        assert!(u.has(&[field("b")]) && u.has(&[field("b"), field("d")]));
        let paths: Vec<String> = u
            .paths()
            .iter()
            .map(|p| PathDisplay(p).to_string())
            .collect();
        assert_eq!(paths, vec![".a", ".b", ".b.c", ".b.d"]);
    }

    /// Sets of up to eight paths of depth one to three over a small
    /// alphabet, so that the sets share prefixes and members.
    fn arbitrary_set() -> impl proptest::strategy::Strategy<Value = Set> {
        use proptest::prelude::*;
        let element = prop_oneof![
            (0u8..3).prop_map(|i| field(&format!("f{i}"))),
            (0u8..2).prop_map(|i| key("name", json!(format!("k{i}")))),
            (0u8..2).prop_map(|i| PathElement::Value(json!(i))),
        ];
        proptest::collection::vec(proptest::collection::vec(element, 1..4), 0..8)
            .prop_map(|paths| Set::from_paths(paths.iter().map(Vec::as_slice)))
    }

    /// JSON values of every type, nested, with numbers that are equal as
    /// integers and floats.
    fn arbitrary_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-2i64..3).prop_map(Value::from),
            (-2i64..3).prop_map(|i| Value::from(i as f64)),
            Just(json!(0.5)),
            "[ab]{0,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map("[abc]", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Equality is the total order's.
        #[test]
        fn equality_is_the_orders(a in arbitrary_value(), b in arbitrary_value()) {
            proptest::prop_assert_eq!(values_equal(&a, &b), compare_values(&a, &b).is_eq());
            proptest::prop_assert!(values_equal(&a, &a));
        }

        /// The serialized `FieldsV1` is the text of the built one.
        #[test]
        fn serialized_fields_v1_is_the_built_ones_text(a in arbitrary_set()) {
            proptest::prop_assert_eq!(
                serde_json::to_string(&a.fields_v1()).unwrap(),
                a.to_fields_v1().to_string()
            );
        }

        /// A level lists every member and non-empty child once, in
        /// element order, the way Go emits them.
        #[test]
        fn levels_are_members_and_children_in_order(a in arbitrary_set(), b in arbitrary_set()) {
            let mut s = a.clone();
            s.subtract(&b); // leaves emptied children behind
            let levels: Vec<_> = s.fields_v1_levels().collect();
            let mut expected: Vec<&PathElement> = s.members.iter().collect();
            expected.extend(
                s.children
                    .iter()
                    .filter(|(pe, c)| !c.is_empty() && !s.members.contains(pe))
                    .map(|(pe, _)| pe),
            );
            expected.sort();
            let listed: Vec<&PathElement> = levels.iter().map(|(pe, _, _)| *pe).collect();
            proptest::prop_assert_eq!(listed, expected);
            for (pe, child, is_member) in levels {
                proptest::prop_assert_eq!(is_member, s.members.contains(pe));
                proptest::prop_assert_eq!(child, s.child(pe).filter(|c| !c.is_empty()));
            }
        }

        /// Every operation is the same operation on the sets' paths, as
        /// a set of whole paths: union, intersection and difference as
        /// such, and a recursive difference also drops the paths below a
        /// member of the other set. The result's levels stay sorted and
        /// free of duplicates, and `absorb` is `union`.
        #[test]
        fn operations_are_those_on_the_sets_of_paths(a in arbitrary_set(), b in arbitrary_set()) {
            use std::collections::BTreeSet;
            let paths = |s: &Set| -> BTreeSet<Vec<PathElement>> {
                assert_sorted_and_unique(s);
                s.paths().into_iter().collect()
            };
            let (pa, pb) = (paths(&a), paths(&b));
            proptest::prop_assert_eq!(paths(&a.union(&b)), pa.union(&pb).cloned().collect());
            proptest::prop_assert_eq!(
                paths(&a.intersection(&b)),
                pa.intersection(&pb).cloned().collect()
            );
            proptest::prop_assert_eq!(
                paths(&a.difference(&b)),
                pa.difference(&pb).cloned().collect()
            );
            let below_b = |p: &Vec<PathElement>| (1..=p.len()).any(|n| pb.contains(&p[..n]));
            proptest::prop_assert_eq!(
                paths(&a.recursive_difference(&b)),
                pa.iter().filter(|p| !below_b(p)).cloned().collect()
            );
            for p in pa.union(&pb) {
                proptest::prop_assert_eq!(a.has(p), pa.contains(p));
            }
            let mut absorbed = a.clone();
            absorbed.absorb(b.clone());
            proptest::prop_assert_eq!(&absorbed, &a.union(&b));
        }
    }

    /// Each level's members and children are in element order, once each.
    fn assert_sorted_and_unique(s: &Set) {
        assert!(s.members.windows(2).all(|w| w[0] < w[1]), "{s:?}");
        assert!(s.children.windows(2).all(|w| w[0].0 < w[1].0), "{s:?}");
        for (_, child) in &s.children {
            assert_sorted_and_unique(child);
        }
    }
}
