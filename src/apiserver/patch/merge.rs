//! Structured merge over JSON values: the walks of structured-merge-diff's
//! `typed` package, ported one to one.
//!
//! - [`to_field_set`]: the fields a value sets (`ToFieldSet`);
//! - [`merge`]: a configuration merged into a live value, the
//!   configuration winning (`Merge` with `ruleKeepRHS`);
//! - [`compare`]: what changed between two values (`Compare`);
//! - [`remove_items`]: a value without the given fields (`RemoveItems`);
//! - [`ensure_named_fields_are_members`] and [`reconcile_with_schema`]:
//!   field-set adjustments used by the updater.
//!
//! Lists follow their list type: atomic lists (the default) are leaves,
//! `set` items are matched by value and `map` items by their key fields.
//! Maps are granular unless atomic. Empty or null collections on both sides
//! are leaves, which keeps the empty/null distinction.
//!
//! A live list whose items cannot be keyed (an item missing every key
//! field, a map in a set, ...) is treated as atomic here; structured-merge-
//! diff refuses such objects. An applied configuration is checked first by
//! [`validate_config`], which rejects what structured-merge-diff rejects.
//! Where structured-merge-diff leaves a `null` behind after removing every
//! field of a map or every item of a list, the field is dropped instead;
//! kube-apiserver's defaulting drops such nulls right after, for fields
//! that are not nullable.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldpath::{FieldName, PathDisplay, PathElement, Set, values_equal};
use super::merge_types::{ListInfo, ListType, MapType, Node};

static NULL: Value = Value::Null;

/// What a value is, for the walks: the schema aspect that applies to it.
enum Shape<'s> {
    Scalar,
    List(ListInfo<'s>),
    Map(MapType<'s>),
}

impl Shape<'_> {
    fn kind(&self) -> u8 {
        match self {
            Shape::Scalar => 0,
            Shape::List(_) => 1,
            Shape::Map(_) => 2,
        }
    }
}

/// The shape of `v` at `node`. A `null` takes the shape of `other` (nulls
/// do not pick a type in structured-merge-diff); a value the schema cannot
/// hold is a leaf.
fn shape_of<'s>(node: Node<'s>, v: &Value, other: Option<&Value>) -> Shape<'s> {
    match v {
        Value::Object(_) => node.map().map_or(Shape::Scalar, Shape::Map),
        Value::Array(_) => node.list().map_or(Shape::Scalar, Shape::List),
        Value::Null => match other {
            Some(o) if !o.is_null() => shape_of(node, o, None),
            _ => Shape::Scalar,
        },
        _ => Shape::Scalar,
    }
}

/// The path element of a list item, or why there is none.
pub(crate) fn item_element(info: &ListInfo<'_>, item: &Value) -> Result<PathElement, String> {
    match &info.list_type {
        ListType::Atomic => Err("invalid indexing of non-associative list".to_string()),
        ListType::Map(keys) => {
            let Value::Object(m) = item else {
                return Err(if item.is_null() {
                    "associative list with keys may not have a null element".to_string()
                } else {
                    "associative list with keys may not have non-map elements".to_string()
                });
            };
            let mut fields = Vec::new();
            for key in keys {
                if let Some(v) = m.get(*key) {
                    fields.push(((*key).to_string(), v.clone()));
                } else if let Some(d) = info.element.key_default(key) {
                    fields.push(((*key).to_string(), d.clone()));
                }
            }
            if fields.is_empty() {
                return Err(format!(
                    "associative list with keys has an element that omits all key fields {} (and doesn't have default values for any key fields)",
                    crate::golang::quote_list(keys)
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
        ListType::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".to_string())
            }
            Value::Array(_) => {
                Err("not supported: associative list with lists as elements".to_string())
            }
            Value::Null => Err(
                "associative list without keys has an element that's an explicit null".to_string(),
            ),
            v => Ok(PathElement::Value(v.clone())),
        },
    }
}

/// Path elements of all items, or `None` if the list is atomic or has an
/// item that cannot be keyed.
fn item_elements(info: &ListInfo<'_>, items: &[Value]) -> Option<Vec<PathElement>> {
    if info.list_type == ListType::Atomic {
        return None;
    }
    items.iter().map(|i| item_element(info, i).ok()).collect()
}

fn with(path: &[PathElement], pe: &PathElement) -> Vec<PathElement> {
    let mut p = path.to_vec();
    p.push(pe.clone());
    p
}

/// Checks an applied configuration the way structured-merge-diff validates
/// it: associative list items must be keyable and unique, a map the
/// schema closes takes no key it does not declare (`.spec.sepc: field not
/// declared in schema`; the first such key of a map ends its walk, as
/// structured-merge-diff stops iterating a map there), and a value must
/// have its node's type (`.spec.replicas: expected numeric (int or float),
/// got string`).
pub(crate) fn validate_config(node: Node<'_>, v: &Value) -> Result<(), String> {
    let mut errors = Vec::new();
    validate_walk(node, v, false, &mut Vec::new(), &mut errors);
    match errors.len() {
        0 => Ok(()),
        1 => Ok(()).and(Err(errors.remove(0))),
        _ => {
            let mut msg = "errors:".to_string();
            for e in errors {
                msg.push_str("\n  ");
                msg.push_str(&e);
            }
            Err(msg)
        }
    }
}

fn validate_walk(
    node: Node<'_>,
    v: &Value,
    preserved: bool,
    path: &mut Vec<PathElement>,
    errors: &mut Vec<String>,
) {
    let prefix = |path: &[PathElement]| {
        if path.is_empty() {
            String::new()
        } else {
            format!("{}: ", PathDisplay(path))
        }
    };
    let preserved = preserved || node.preserves_unknown_fields();
    match (shape_of(node, v, None), v) {
        (Shape::List(info), Value::Array(items)) => {
            if info.list_type == ListType::Atomic {
                // Items by position (`.extensions[0]`), checked all the same.
                for (i, item) in (0_i64..).zip(items) {
                    path.push(PathElement::Index(i));
                    validate_walk(info.element, item, preserved, path, errors);
                    path.pop();
                }
                return;
            }
            let mut seen = BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                match item_element(&info, item) {
                    Err(e) => errors.push(format!("{}element {i}: {e}", prefix(path))),
                    Ok(pe) => {
                        if seen.contains(&pe) {
                            errors.push(format!("{}duplicate entries for key {pe}", prefix(path)));
                            continue;
                        }
                        path.push(pe.clone());
                        validate_walk(info.element, item, preserved, path, errors);
                        path.pop();
                        seen.insert(pe);
                    }
                }
            }
        }
        (Shape::Map(mt), Value::Object(m)) => {
            if mt.atomic {
                return;
            }
            let closed = mt.closed(preserved);
            for (k, child) in m {
                path.push(PathElement::Field(FieldName::new(k)));
                if closed && !mt.is_named_field(k) {
                    errors.push(format!("{}field not declared in schema", prefix(path)));
                    path.pop();
                    break;
                }
                validate_walk(mt.checked_field(k), child, preserved, path, errors);
                path.pop();
            }
        }
        _ => {
            if let Some(e) = type_error(node, v) {
                errors.push(format!("{}{e}", prefix(path)));
            }
        }
    }
}

/// structured-merge-diff's refusal of a value its schema node types
/// otherwise (`mapValue`, `listValue`, `validateScalar`), worded as Go
/// prints it: `expected map, got &{[1]}`, `expected numeric (int or
/// float), got string`. `null` fits every type; a node without a `type`
/// takes anything here.
fn type_error(node: Node<'_>, v: &Value) -> Option<String> {
    use crate::golang::unstructured::{type_name, value_sharp_v, value_v};
    Some(match (node.declared_type()?, v) {
        (_, Value::Null)
        | ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("integer" | "number", Value::Number(_)) => return None,
        ("object", _) => format!("expected map, got {}", value_v(v)),
        ("array", _) => format!("expected list, got {}", value_v(v)),
        ("string", _) => format!("expected string, got {}", value_sharp_v(v)),
        ("boolean", _) => format!("expected boolean, got {}", value_v(v)),
        ("integer" | "number", _) => {
            format!("expected numeric (int or float), got {}", type_name(v))
        }
        _ => return None,
    })
}

/// The fields `v` sets (`ToFieldSet`).
pub(crate) fn to_field_set(node: Node<'_>, v: &Value) -> Set {
    let mut set = Set::new();
    field_set_walk(node, v, &mut Vec::new(), &mut set);
    set
}

fn field_set_walk(node: Node<'_>, v: &Value, path: &mut Vec<PathElement>, set: &mut Set) {
    match (shape_of(node, v, None), v) {
        (Shape::List(info), Value::Array(items)) => {
            let Some(pes) = item_elements(&info, items) else {
                set.insert(path);
                return;
            };
            let mut seen = BTreeSet::new();
            let mut duplicates = BTreeSet::new();
            for pe in &pes {
                if seen.contains(pe) {
                    if duplicates.insert(pe.clone()) {
                        set.insert(&with(path, pe));
                    }
                } else {
                    seen.insert(pe.clone());
                }
            }
            for (pe, item) in pes.iter().zip(items) {
                if duplicates.contains(pe) {
                    continue;
                }
                path.push(pe.clone());
                field_set_walk(info.element, item, path, set);
                set.insert(path);
                path.pop();
            }
        }
        (Shape::Map(mt), Value::Object(m)) => {
            if mt.atomic {
                set.insert(path);
                return;
            }
            for (k, child) in m {
                path.push(PathElement::Field(FieldName::new(k)));
                field_set_walk(mt.field(k), child, path, set);
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !mt.is_named_field(k) {
                    set.insert(path);
                }
                path.pop();
            }
        }
        _ => set.insert(path),
    }
}

/// `rhs` merged into `lhs`, `rhs` winning (`Merge`). `None` when neither
/// side leaves anything.
pub(crate) fn merge(node: Node<'_>, lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    let shape = match (lhs, rhs) {
        (_, Some(r)) => shape_of(node, r, lhs),
        (Some(l), None) => shape_of(node, l, None),
        (None, None) => return None,
    };
    let leaf = || rhs.or(lhs).cloned();
    match shape {
        Shape::Scalar => leaf(),
        Shape::List(info) => {
            let l = lhs.and_then(Value::as_array);
            let r = rhs.and_then(Value::as_array);
            let empty = l.is_none_or(Vec::is_empty) && r.is_none_or(Vec::is_empty);
            if empty {
                return leaf();
            }
            let lp = match l {
                Some(items) => item_elements(&info, items),
                None => Some(Vec::new()),
            };
            let rp = match r {
                Some(items) => item_elements(&info, items),
                None => Some(Vec::new()),
            };
            let (Some(lp), Some(rp)) = (lp, rp) else {
                return leaf();
            };
            let out = merge_list_items(
                &info,
                l.map_or(&[][..], Vec::as_slice),
                &lp,
                r.map_or(&[][..], Vec::as_slice),
                &rp,
            );
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Shape::Map(mt) => {
            let l = lhs.and_then(Value::as_object);
            let r = rhs.and_then(Value::as_object);
            let empty = l.is_none_or(Map::is_empty) && r.is_none_or(Map::is_empty);
            if mt.atomic || empty {
                return leaf();
            }
            let mut out = Map::new();
            let keys = l.into_iter().flat_map(Map::keys).chain(
                r.into_iter()
                    .flat_map(Map::keys)
                    .filter(|k| l.is_none_or(|l| !l.contains_key(*k))),
            );
            for k in keys {
                let merged = merge(
                    mt.field(k),
                    l.and_then(|l| l.get(k)),
                    r.and_then(|r| r.get(k)),
                );
                if let Some(v) = merged {
                    out.insert(k.clone(), v);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// `visitListItems` of the merging walker: items keep the live order, new
/// items go where the configuration puts them relative to shared ones.
fn merge_list_items(
    info: &ListInfo<'_>,
    lhs: &[Value],
    lhs_pes: &[PathElement],
    rhs: &[Value],
    rhs_pes: &[PathElement],
) -> Vec<Value> {
    let mut observed_rhs: BTreeMap<&PathElement, &Value> = BTreeMap::new();
    for (pe, item) in rhs_pes.iter().zip(rhs) {
        observed_rhs.entry(pe).or_insert(item);
    }
    // Live duplicates are not merged with the configuration: they stand
    // for `null`.
    let mut observed_lhs: BTreeMap<&PathElement, &Value> = BTreeMap::new();
    for (pe, item) in lhs_pes.iter().zip(lhs) {
        observed_lhs
            .entry(pe)
            .and_modify(|v| *v = &NULL)
            .or_insert(item);
    }
    let shared: Vec<&PathElement> = rhs_pes
        .iter()
        .filter(|pe| observed_lhs.contains_key(pe))
        .collect();
    let mut shared = shared.into_iter();
    let mut next_shared = shared.next();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::new();
    let push = |out: &mut Vec<Value>, l: Option<&Value>, r: Option<&Value>| {
        if let Some(v) = merge(info.element, l, r) {
            out.push(v);
        }
    };
    let (mut li, mut ri) = (0, 0);
    while li < lhs_pes.len() || ri < rhs_pes.len() {
        if li < lhs_pes.len() && ri < rhs_pes.len() {
            let pe = &lhs_pes[li];
            if *pe == rhs_pes[ri] {
                merged_rhs.insert(pe);
                push(
                    &mut out,
                    observed_lhs.get(pe).copied(),
                    observed_rhs.get(pe).copied(),
                );
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs_pes.len() {
            let pe = &lhs_pes[li];
            if !observed_rhs.contains_key(pe) {
                push(&mut out, Some(&lhs[li]), None);
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rhs_pes.len() {
            let pe = &rhs_pes[ri];
            merged_rhs.insert(pe);
            push(
                &mut out,
                observed_lhs.get(pe).copied(),
                observed_rhs.get(pe).copied(),
            );
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared.next();
            }
        }
    }
    out
}

/// What changed from `lhs` to `rhs`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Comparison {
    /// Fields present before and gone now.
    pub(crate) removed: Set,
    /// Fields whose value changed.
    pub(crate) modified: Set,
    /// Fields absent before and present now.
    pub(crate) added: Set,
}

impl Comparison {
    /// Whether nothing changed.
    #[cfg(test)]
    pub(crate) fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }

    /// The comparison without `fields` and everything below them.
    pub(crate) fn exclude(mut self, fields: &Set) -> Comparison {
        self.removed.subtract_recursive(fields);
        self.modified.subtract_recursive(fields);
        self.added.subtract_recursive(fields);
        self
    }
}

/// Compares two values (`Compare`).
pub(crate) fn compare(node: Node<'_>, lhs: &Value, rhs: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_walk(node, &mut Vec::new(), Some(lhs), Some(rhs), &mut c);
    c
}

fn compare_walk(
    node: Node<'_>,
    path: &mut Vec<PathElement>,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    out: &mut Comparison,
) {
    if let (Some(l), Some(r)) = (lhs, rhs)
        && values_equal(l, r)
    {
        // Nothing below changed (the walk would find every leaf equal).
        return;
    }
    compare_changed(node, path, lhs, rhs, out);
}

/// [`compare_walk`] of two sides known not to be equal.
fn compare_changed(
    node: Node<'_>,
    path: &mut Vec<PathElement>,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    out: &mut Comparison,
) {
    if let (None, Some(whole)) | (Some(whole), None) = (lhs, rhs) {
        // A field added or removed whole: it and every path below it,
        // built level by level and added in one descent.
        let paths = if lhs.is_none() {
            &mut out.added
        } else {
            &mut out.removed
        };
        paths.insert_with_below(path, paths_below(node, whole));
        return;
    }
    let ls = lhs.map(|l| shape_of(node, l, rhs));
    let rs = rhs.map(|r| shape_of(node, r, lhs));
    let mut in_leaf = false;
    match (ls, rs) {
        (None, None) => return,
        (Some(a), Some(b)) if a.kind() != b.kind() => {
            let mut other_leaf = false;
            compare_shape(a, path, lhs, rhs, &mut other_leaf, out);
            compare_shape(b, path, lhs, rhs, &mut in_leaf, out);
        }
        (_, Some(s)) | (Some(s), None) => compare_shape(s, path, lhs, rhs, &mut in_leaf, out),
    }
    if !in_leaf {
        if lhs.is_none() {
            out.added.insert(path);
        } else if rhs.is_none() {
            out.removed.insert(path);
        }
    }
}

/// Every path below `v` at `node` (relative to it), as [`compare`] reports
/// them when `v` is added or removed whole: each field of a granular map,
/// each item of an associative list with the paths below it (an item whose
/// key repeats only itself), nothing below a leaf, an atomic value or an
/// empty one.
fn paths_below(node: Node<'_>, v: &Value) -> Set {
    let mut set = Set::new();
    match (shape_of(node, v, None), v) {
        (Shape::Map(mt), Value::Object(m)) if !mt.atomic => {
            for (k, child) in m {
                // Nothing is below a scalar, whatever its schema: only
                // maps and lists look theirs up.
                let below = if child.is_object() || child.is_array() {
                    paths_below(mt.field(k), child)
                } else {
                    Set::new()
                };
                set.add_with_below(PathElement::Field(FieldName::new(k)), below);
            }
        }
        (Shape::List(info), Value::Array(items)) if !items.is_empty() => {
            let Some(pes) = item_elements(&info, items) else {
                return set;
            };
            let mut seen: BTreeMap<&PathElement, usize> = BTreeMap::new();
            for pe in &pes {
                *seen.entry(pe).or_default() += 1;
            }
            for (pe, item) in pes.iter().zip(items) {
                match seen.get(pe) {
                    Some(1) => set.add_with_below(pe.clone(), paths_below(info.element, item)),
                    Some(_) if !set.has_member(pe) => set.add_with_below(pe.clone(), Set::new()),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    set
}

fn compare_leaf(
    path: &[PathElement],
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    in_leaf: &mut bool,
    out: &mut Comparison,
) {
    if *in_leaf {
        return;
    }
    *in_leaf = true;
    match (lhs, rhs) {
        (None, _) => out.added.insert(path),
        (_, None) => out.removed.insert(path),
        (Some(l), Some(r)) => {
            if !values_equal(l, r) {
                out.modified.insert(path);
            }
        }
    }
}

fn compare_shape(
    shape: Shape<'_>,
    path: &mut Vec<PathElement>,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    in_leaf: &mut bool,
    out: &mut Comparison,
) {
    match shape {
        Shape::Scalar => compare_leaf(path, lhs, rhs, in_leaf, out),
        Shape::List(info) => {
            let l = lhs.and_then(Value::as_array);
            let r = rhs.and_then(Value::as_array);
            let empty = l.is_none_or(Vec::is_empty) && r.is_none_or(Vec::is_empty);
            if empty {
                return compare_leaf(path, lhs, rhs, in_leaf, out);
            }
            let lp = l.map_or(Some(Vec::new()), |items| item_elements(&info, items));
            let rp = r.map_or(Some(Vec::new()), |items| item_elements(&info, items));
            let (Some(lp), Some(rp)) = (lp, rp) else {
                return compare_leaf(path, lhs, rhs, in_leaf, out);
            };
            compare_list_items(
                &info,
                path,
                l.map_or(&[][..], Vec::as_slice),
                &lp,
                r.map_or(&[][..], Vec::as_slice),
                &rp,
                out,
            );
        }
        Shape::Map(mt) => {
            let l = lhs.and_then(Value::as_object);
            let r = rhs.and_then(Value::as_object);
            let empty = l.is_none_or(Map::is_empty) && r.is_none_or(Map::is_empty);
            if mt.atomic || empty {
                return compare_leaf(path, lhs, rhs, in_leaf, out);
            }
            // Every key once (the sets built are ordered whatever the walk's
            // order). While both sides list the same keys in the same order,
            // as when a client sends back the object it read, the keys are
            // paired without a lookup; from the first that differs, the left
            // side's rest are looked up on the right, then the right side's
            // rest that the left lacks are added. (A key past the paired
            // prefix on one side cannot be in the other's prefix: the prefixes
            // hold the same keys, and keys are unique.)
            let no_fields = Map::new();
            let (lm, rm) = (l.unwrap_or(&no_fields), r.unwrap_or(&no_fields));
            let paired = lm
                .iter()
                .zip(rm.iter())
                .take_while(|((lk, _), (rk, _))| lk == rk)
                .count();
            let mut visit = |k: &String, lv: Option<&Value>, rv: Option<&Value>| {
                // Checked before the path is extended, so an equal field costs
                // no copy of its name; not checked again below.
                if let (Some(a), Some(b)) = (lv, rv)
                    && values_equal(a, b)
                {
                    return;
                }
                path.push(PathElement::Field(FieldName::new(k)));
                compare_changed(mt.field(k), path, lv, rv, out);
                path.pop();
            };
            for ((k, lv), (_, rv)) in lm.iter().zip(rm.iter()).take(paired) {
                visit(k, Some(lv), Some(rv));
            }
            for (k, lv) in lm.iter().skip(paired) {
                visit(k, Some(lv), rm.get(k));
            }
            for (k, rv) in rm.iter().skip(paired) {
                if !lm.contains_key(k) {
                    visit(k, None, Some(rv));
                }
            }
        }
    }
}

fn compare_list_items(
    info: &ListInfo<'_>,
    path: &mut Vec<PathElement>,
    lhs: &[Value],
    lhs_pes: &[PathElement],
    rhs: &[Value],
    rhs_pes: &[PathElement],
    out: &mut Comparison,
) {
    let mut order: Vec<&PathElement> = Vec::new();
    let mut l_values: BTreeMap<&PathElement, Vec<&Value>> = BTreeMap::new();
    for (pe, item) in lhs_pes.iter().zip(lhs) {
        let e = l_values.entry(pe).or_default();
        if e.is_empty() {
            order.push(pe);
        }
        e.push(item);
    }
    let mut r_values: BTreeMap<&PathElement, Vec<&Value>> = BTreeMap::new();
    for (pe, item) in rhs_pes.iter().zip(rhs) {
        let e = r_values.entry(pe).or_default();
        if e.is_empty() && !l_values.contains_key(pe) {
            order.push(pe);
        }
        e.push(item);
    }
    for pe in order {
        let l = l_values.get(pe).map_or(&[][..], Vec::as_slice);
        let r = r_values.get(pe).map_or(&[][..], Vec::as_slice);
        path.push(pe.clone());
        match (l.len(), r.len()) {
            (0, 0) => {}
            (0 | 1, 0 | 1) => {
                compare_walk(
                    info.element,
                    path,
                    l.first().copied(),
                    r.first().copied(),
                    out,
                );
            }
            (ln, rn) if ln >= 2 && rn >= 2 => {
                let equal = ln == rn && l.iter().zip(r).all(|(a, b)| values_equal(a, b));
                if !equal {
                    out.modified.insert(path);
                }
            }
            (ln, _) if ln >= 2 => {
                if let Some(first) = r.first() {
                    compare_walk(info.element, path, None, Some(first), out);
                }
                out.removed.insert(path);
            }
            _ => {
                if let Some(first) = l.first() {
                    compare_walk(info.element, path, Some(first), None, out);
                }
                out.added.insert(path);
            }
        }
        path.pop();
    }
}

/// `v` without the fields in `remove` (`RemoveItems`). A collection that
/// nothing is left of is `null`, kept in its parent (a map's key, a list's
/// item) as structured-merge-diff keeps it: the apply's prune reads the
/// field as still there (the defaulting pass drops or defaults such a null
/// afterwards, as kube-apiserver's does).
pub(crate) fn remove_items(node: Node<'_>, v: &Value, remove: &Set) -> Value {
    match (shape_of(node, v, None), v) {
        (Shape::List(info), Value::Array(items)) => {
            let Some(pes) = item_elements(&info, items) else {
                return Value::Null;
            };
            let mut out = Vec::new();
            for (pe, item) in pes.iter().zip(items) {
                if remove.has(std::slice::from_ref(pe)) {
                    continue;
                }
                match remove.with_prefix(pe) {
                    Some(sub) => out.push(remove_items(info.element, item, sub)),
                    None => out.push(item.clone()),
                }
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Array(out)
            }
        }
        (Shape::Map(mt), Value::Object(m)) => {
            if mt.atomic || m.is_empty() {
                return Value::Null;
            }
            let mut out = Map::new();
            for (k, child) in m {
                let pe = PathElement::Field(FieldName::new(k));
                if remove.has_member(&pe) {
                    continue;
                }
                let kept = match remove.with_prefix(&pe) {
                    Some(sub) => remove_items(mt.field(k), child, sub),
                    None => child.clone(),
                };
                out.insert(k.clone(), kept);
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Object(out)
            }
        }
        _ => v.clone(),
    }
}

/// The set plus every named field that has members below it
/// (`EnsureNamedFieldsAreMembers`).
pub(crate) fn ensure_named_fields_are_members(node: Node<'_>, set: &Set) -> Set {
    let mut out = Set::new();
    ensure_walk(node, set, &mut Vec::new(), &mut out);
    out
}

fn ensure_walk(node: Node<'_>, set: &Set, path: &mut Vec<PathElement>, out: &mut Set) {
    let map = node.map();
    let list = node.list();
    for pe in set.members() {
        out.insert(&with(path, pe));
    }
    for (pe, child) in set.children() {
        let child_node = match pe {
            PathElement::Field(name) => match map {
                Some(mt) => {
                    if mt.is_named_field(name) {
                        out.insert(&with(path, pe));
                    }
                    mt.field(name)
                }
                None => Node::Nothing,
            },
            PathElement::Key(_) => list.as_ref().map_or(Node::Nothing, |l| l.element),
            _ => Node::Nothing,
        };
        path.push(pe.clone());
        ensure_walk(child_node, child, path, out);
        path.pop();
    }
}

/// Adjusts a field set to schema changes since it was recorded: fields
/// owned below what is now an atomic list or map collapse into the atomic
/// field (`ReconcileFieldSetWithSchema`). `None` if nothing changes.
pub(crate) fn reconcile_with_schema(node: Node<'_>, set: &Set) -> Option<Set> {
    let mut to_remove = Set::new();
    reconcile_walk(node, Some(set), false, &mut Vec::new(), &mut to_remove);
    if to_remove.is_empty() {
        return None;
    }
    Some(set.recursive_difference(&to_remove).union(&to_remove))
}

fn reconcile_walk(
    node: Node<'_>,
    set: Option<&Set>,
    is_atomic: bool,
    path: &mut Vec<PathElement>,
    to_remove: &mut Set,
) {
    // Without a value, structured-merge-diff resolves a node to its map
    // aspect first, then scalar, then list.
    if let Some(mt) = node.map() {
        if node.is_deduced_map() {
            return;
        }
        if !is_atomic && mt.atomic {
            if set.is_some_and(|s| !s.is_empty()) {
                to_remove.insert(path);
            }
            return;
        }
        if let Some(set) = set {
            reconcile_items(set, path, to_remove, |pe| match pe {
                PathElement::Field(name) => mt.field(name),
                _ => mt.element(),
            });
        }
    } else if node.scalar() {
    } else if let Some(info) = node.list() {
        if !is_atomic && info.list_type == ListType::Atomic {
            to_remove.insert(path);
            return;
        }
        if let Some(set) = set {
            reconcile_items(set, path, to_remove, |_| info.element);
        }
    }
}

fn reconcile_items<'s>(
    set: &Set,
    path: &mut Vec<PathElement>,
    to_remove: &mut Set,
    child_node: impl Fn(&PathElement) -> Node<'s>,
) {
    let mut visit = |pe: &PathElement, is_member: bool| {
        let children = set.with_prefix(pe);
        let atomic = is_member && children.is_none();
        path.push(pe.clone());
        reconcile_walk(child_node(pe), children, atomic, path, to_remove);
        path.pop();
    };
    for (pe, _) in set.children() {
        if !set.has_member(pe) {
            visit(pe, false);
        }
    }
    for pe in set.members() {
        visit(pe, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "list": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"}, "v": {"type": "integer"}
                    }}
                },
                "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "atomic": {"type": "array", "items": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }
        })
    }

    fn fields(node: Node<'_>, v: &Value) -> Value {
        to_field_set(node, v).to_fields_v1()
    }

    #[test]
    fn field_set_of_an_object() {
        let s = schema();
        let obj = json!({
            "apiVersion": "a/v1", "kind": "K",
            "metadata": {"name": "x", "labels": {"app": "y"}, "finalizers": ["f"]},
            "spec": {"replicas": 1, "list": [{"name": "a", "v": 1}], "set": ["x"],
                     "atomic": ["p"], "free": {"deep": {"k": 1}}}
        });
        assert_eq!(
            fields(Node::root(&s), &obj),
            json!({
                "f:apiVersion": {}, "f:kind": {},
                "f:metadata": {"f:finalizers": {"v:\"f\"": {}}, "f:labels": {"f:app": {}}, "f:name": {}},
                "f:spec": {
                    "f:atomic": {},
                    "f:free": {"f:deep": {".": {}, "f:k": {}}},
                    "f:list": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:v": {}}},
                    "f:replicas": {},
                    "f:set": {"v:\"x\"": {}}
                }
            })
        );
    }

    #[test]
    fn merge_associative_list_keeps_live_order() {
        let s = schema();
        let n = Node::Schema(&s);
        let live = json!({"list": [{"name": "a", "v": 1}, {"name": "b", "v": 2}]});
        let cfg = json!({"list": [{"name": "c", "v": 3}, {"name": "a", "v": 9}]});
        let merged = merge(n, Some(&live), Some(&cfg)).unwrap();
        assert_eq!(
            merged,
            json!({"list": [{"name": "c", "v": 3}, {"name": "a", "v": 9}, {"name": "b", "v": 2}]})
        );
        let cfg = json!({"atomic": ["z"], "set": ["b", "a"]});
        let live = json!({"atomic": ["x", "y"], "set": ["a", "c"]});
        let merged = merge(n, Some(&live), Some(&cfg)).unwrap();
        assert_eq!(merged, json!({"atomic": ["z"], "set": ["b", "a", "c"]}));
    }

    #[test]
    fn compare_reports_changes() {
        let s = schema();
        let n = Node::Schema(&s);
        let a = json!({"replicas": 1, "list": [{"name": "a", "v": 1}], "set": ["x"]});
        let b =
            json!({"replicas": 2, "list": [{"name": "a", "v": 1}, {"name": "b"}], "atomic": []});
        let c = compare(n, &a, &b);
        assert_eq!(c.modified.to_fields_v1(), json!({"f:replicas": {}}));
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:atomic": {}, "f:list": {"k:{\"name\":\"b\"}": {".": {}, "f:name": {}}}})
        );
        assert_eq!(
            c.removed.to_fields_v1(),
            json!({"f:set": {".": {}, "v:\"x\"": {}}})
        );
        assert!(compare(n, &a, &a).is_same());
        assert!(compare(n, &json!({"replicas": 1}), &json!({"replicas": 1.0})).is_same());
    }

    #[test]
    fn compare_does_not_depend_on_key_order() {
        let s = schema();
        let n = Node::Schema(&s);
        // The same keys in the same order, then in another order, then with a
        // shared prefix whose rest differs (one side's rest holds the other's
        // keys too), each against the fields compared one by one.
        let a = json!({"replicas": 1, "atomic": [1], "set": ["x"], "gone": 1, "x": {"y": 1}});
        let orders = [
            json!({"replicas": 2, "atomic": [1], "set": ["x"], "x": {"y": 2}, "new": 1}),
            json!({"new": 1, "x": {"y": 2}, "set": ["x"], "atomic": [1], "replicas": 2}),
            json!({"replicas": 2, "atomic": [1], "x": {"y": 2}, "new": 1, "set": ["x"]}),
        ];
        for b in &orders {
            for (l, r) in [(&a, b), (b, &a)] {
                let c = compare(n, l, r);
                let mut fields: Vec<_> = l
                    .as_object()
                    .unwrap()
                    .keys()
                    .chain(r.as_object().unwrap().keys())
                    .collect();
                fields.sort();
                fields.dedup();
                let mut expected = Comparison::default();
                for f in fields {
                    let one = |v: &Value| v.get(f).map(|v| json!({f: v})).unwrap_or(json!({}));
                    let part = compare(n, &one(l), &one(r));
                    expected.modified.union_with(&part.modified);
                    expected.added.union_with(&part.added);
                    expected.removed.union_with(&part.removed);
                }
                assert_eq!(c.modified, expected.modified, "{l} -> {r}");
                assert_eq!(c.added, expected.added, "{l} -> {r}");
                assert_eq!(c.removed, expected.removed, "{l} -> {r}");
                assert_eq!(
                    c.added.to_fields_v1(),
                    if l == &a {
                        json!({"f:new": {}})
                    } else {
                        json!({"f:gone": {}})
                    }
                );
            }
        }
    }

    #[test]
    fn remove_items_leaves_emptied_collections_null() {
        let s = schema();
        let n = Node::Schema(&s);
        let v =
            json!({"replicas": 1, "list": [{"name": "a"}, {"name": "b", "v": 2}], "set": ["x"]});
        let rm = Set::from_fields_v1(&json!({
            "f:list": {"k:{\"name\":\"a\"}": {}, "k:{\"name\":\"b\"}": {"f:v": {}}},
            "f:set": {"v:\"x\"": {}}
        }))
        .unwrap();
        assert_eq!(
            remove_items(n, &v, &rm),
            json!({"replicas": 1, "list": [{"name": "b"}], "set": null})
        );
    }

    /// Every path of `v` as [`compare`] reports a value added whole, one
    /// [`Set::insert`] per path: the model [`paths_below`] is checked
    /// against.
    fn every_path(node: Node<'_>, v: &Value, path: &mut Vec<PathElement>, set: &mut Set) {
        set.insert(path);
        match (shape_of(node, v, None), v) {
            (Shape::Map(mt), Value::Object(m)) if !mt.atomic => {
                for (k, child) in m {
                    path.push(PathElement::Field(FieldName::new(k)));
                    every_path(mt.field(k), child, path, set);
                    path.pop();
                }
            }
            (Shape::List(info), Value::Array(items)) => {
                let pes = item_elements(&info, items).unwrap_or_default();
                for (pe, item) in pes.iter().zip(items) {
                    path.push(pe.clone());
                    if pes.iter().filter(|p| *p == pe).count() == 1 {
                        every_path(info.element, item, path, set);
                    } else {
                        set.insert(path);
                    }
                    path.pop();
                }
            }
            _ => {}
        }
    }

    /// Specs over [`schema`]'s fields and others, nested, with list items
    /// whose keys repeat, are missing or are not maps.
    fn arbitrary_spec() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::collection::{btree_map, vec};
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            (0i64..3).prop_map(Value::from),
            "[ab]{0,1}".prop_map(Value::from),
        ];
        // Items from small pools, so that keys repeat.
        let item = prop_oneof![
            (0i64..2).prop_map(Value::from),
            (0i64..3, proptest::option::of(0i64..2)).prop_map(|(name, v)| match v {
                Some(v) => json!({"name": name, "v": v}),
                None => json!({"name": name}),
            }),
        ];
        let items = vec(item, 2..5).prop_map(Value::from);
        let any = leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                vec(inner.clone(), 0..4).prop_map(Value::from),
                btree_map("(name|v|a)", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        btree_map(
            "(replicas|list|set|atomic|free|other)",
            prop_oneof![any, items],
            0..5,
        )
        .prop_map(|m| Value::Object(m.into_iter().collect()))
    }

    proptest::proptest! {
        /// A spec added or removed whole reports every path of it, built
        /// level by level as one per path would build it.
        #[test]
        fn whole_values_report_every_path(spec in arbitrary_spec()) {
            let s = schema();
            let n = Node::Schema(&s);
            let mut expected = Set::new();
            every_path(n, &spec, &mut vec![PathElement::Field("spec".into())], &mut expected);
            let root = Node::root(&s);
            let (empty, object) = (json!({}), json!({"spec": spec}));
            proptest::prop_assert_eq!(&compare(root, &empty, &object).added, &expected);
            proptest::prop_assert_eq!(&compare(root, &object, &empty).removed, &expected);
        }
    }

    #[test]
    fn invalid_configs() {
        let s = schema();
        let n = Node::Schema(&s);
        assert_eq!(
            validate_config(n, &json!({"list": [{"name": "a"}, {"name": "a"}]})).unwrap_err(),
            ".list: duplicate entries for key [name=\"a\"]"
        );
        let e = validate_config(n, &json!({"list": [{"v": 1}], "set": [{"a": 1}]})).unwrap_err();
        assert!(e.starts_with("errors:\n  .list: element 0: associative list with keys has an element that omits all key fields [\"name\"]"), "{e}");
        assert!(e.contains(
            ".set: element 0: associative list without keys has an element that's a map type"
        ));
        assert!(validate_config(n, &json!({"list": [{"name": "a"}], "set": ["a"]})).is_ok());
        // Values of another type than their node's, as structured-merge-diff words it.
        for (config, error) in [
            (
                json!({"replicas": "x"}),
                ".replicas: expected numeric (int or float), got string",
            ),
            (
                json!({"set": ["a", 1]}),
                ".set[=1]: expected string, got &value.valueUnstructured{Value:1}",
            ),
            (json!({"list": "x"}), ".list: expected list, got &{x}"),
            (
                json!({"list": [{"name": "a", "v": true}]}),
                ".list[name=\"a\"].v: expected numeric (int or float), got bool",
            ),
            (
                json!({"atomic": ["a", {"a": 1}]}),
                ".atomic[1]: expected string, got &value.valueUnstructured{Value:map[string]interface {}{\"a\":1}}",
            ),
        ] {
            assert_eq!(validate_config(n, &config).unwrap_err(), error, "{config}");
        }
        assert!(
            validate_config(
                n,
                &json!({"replicas": 2.5, "free": {"x": [1]}, "list": null})
            )
            .is_ok()
        );
    }

    #[test]
    fn live_duplicates_are_tolerated() {
        let s = schema();
        let n = Node::Schema(&s);
        let live = json!({"list": [{"name": "a", "v": 1}, {"name": "a", "v": 2}]});
        assert_eq!(
            fields(n, &live),
            json!({"f:list": {"k:{\"name\":\"a\"}": {}}})
        );
        let merged = merge(
            n,
            Some(&live),
            Some(&json!({"list": [{"name": "a", "v": 3}]})),
        )
        .unwrap();
        assert_eq!(merged, json!({"list": [{"name": "a", "v": 3}]}));
        // An unkeyable live list is atomic.
        let bad = json!({"list": [{"v": 1}]});
        assert_eq!(fields(n, &bad), json!({"f:list": {}}));
    }

    #[test]
    fn reconcile_collapses_into_atomic() {
        let s = schema();
        let n = Node::Schema(&s);
        let set =
            Set::from_fields_v1(&json!({"f:atomic": {"v:\"x\"": {}}, "f:replicas": {}})).unwrap();
        let r = reconcile_with_schema(n, &set).unwrap();
        assert_eq!(r.to_fields_v1(), json!({"f:atomic": {}, "f:replicas": {}}));
        let ok =
            Set::from_fields_v1(&json!({"f:atomic": {}, "f:list": {"k:{\"name\":\"a\"}": {}}}))
                .unwrap();
        assert!(reconcile_with_schema(n, &ok).is_none());
    }
}
