//! Junctors: `anyOf`/`oneOf` branches folded into the node where they can be
//! (constants into an `enum`, a `null` branch into `nullable`, type-only
//! branches into a type union), and what cannot be folded (`anyOf`, `oneOf`,
//! `not`, `if`/`then`/`else`, `dependentRequired`) kept as Kubernetes value
//! validations, lifting properties that only branches declare into the
//! node, or dropped with a warning.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::super::issue::push_pointer;
use super::collect::{Acc, Deferred, type_set};
use super::{ANNOTATIONS, Converter, Expanded, Part};

/// How a branch of `anyOf`/`oneOf` looks.
enum Branch<'a> {
    Null,
    Never,
    Always,
    Enum(Vec<Value>),
    Types(Vec<String>),
    /// One type plus validations that only apply to values of that type
    /// (`{type: string, pattern: ..}`): they can sit on the node itself,
    /// where they leave values of the other branches' types alone.
    Checked(String, Part<'a>),
    Other,
}

/// Keywords that only constrain strings.
const STRING_CHECKS: &[&str] = &["pattern", "minLength", "maxLength", "format"];
/// Keywords that only constrain numbers.
const NUMBER_CHECKS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "format",
];

impl<'a> Converter<'a> {
    fn classify(&self, b: &'a Value, ptr: &str) -> Branch<'a> {
        let mut b = b;
        let mut ptr = ptr.to_string();
        // Follow plain `$ref`s a few levels.
        for _ in 0..8 {
            match b {
                Value::Bool(true) => return Branch::Always,
                Value::Bool(false) => return Branch::Never,
                Value::Object(m) => {
                    let significant: Vec<&String> = m
                        .keys()
                        .filter(|k| !ANNOTATIONS.contains(&k.as_str()))
                        .collect();
                    if significant.len() == 1 && significant[0] == "$ref" {
                        match m["$ref"].as_str().map(|r| self.resolve(r)) {
                            Some(Ok((p, t))) => {
                                b = t;
                                ptr = p;
                                continue;
                            }
                            _ => return Branch::Other,
                        }
                    }
                    if significant.is_empty() {
                        return Branch::Always;
                    }
                    let only = |allowed: &[&str]| {
                        significant.iter().all(|k| allowed.contains(&k.as_str()))
                    };
                    let types = match m.get("type") {
                        None => None,
                        Some(t) => match type_set(t) {
                            Some(s) => Some(s),
                            None => return Branch::Other,
                        },
                    };
                    let values: Option<Vec<Value>> = match (m.get("const"), m.get("enum")) {
                        (Some(c), _) => Some(vec![c.clone()]),
                        (None, Some(Value::Array(e))) => Some(e.clone()),
                        _ => None,
                    };
                    if only(&["type", "const", "enum"]) {
                        if let Some(values) = values {
                            if values.iter().all(Value::is_null) && !values.is_empty() {
                                return Branch::Null;
                            }
                            return Branch::Enum(values);
                        }
                        if let Some(t) = types {
                            if t.len() == 1 && t.contains("null") {
                                return Branch::Null;
                            }
                            return Branch::Types(t.into_iter().collect());
                        }
                    }
                    if let Some(t) = types
                        && t.len() == 1
                        && let Some(ty) = t.into_iter().next()
                    {
                        let checks: &[&str] = match ty.as_str() {
                            "string" => STRING_CHECKS,
                            "integer" | "number" => NUMBER_CHECKS,
                            _ => &[],
                        };
                        if significant
                            .iter()
                            .all(|k| k.as_str() == "type" || checks.contains(&k.as_str()))
                        {
                            return Branch::Checked(ty, Part { map: m, ptr });
                        }
                    }
                    return Branch::Other;
                }
                _ => return Branch::Other,
            }
        }
        Branch::Other
    }

    pub(super) fn fold_union(
        &mut self,
        one_of: bool,
        branches: &'a [Value],
        jp: String,
        ex: &mut Expanded<'a>,
        acc: &mut Acc<'a>,
        stack_len: usize,
    ) {
        let mut rest: Vec<(&'a Value, String)> = Vec::new();
        let mut kinds = Vec::new();
        let mut saw_null = false;
        let mut always = false;
        for (i, b) in branches.iter().enumerate() {
            let bp = push_pointer(&jp, &i.to_string());
            match self.classify(b, &bp) {
                Branch::Null => saw_null = true,
                Branch::Never => {}
                Branch::Always => {
                    always = true;
                    rest.push((b, bp));
                    kinds.push(Branch::Always);
                }
                k => {
                    rest.push((b, bp));
                    kinds.push(k);
                }
            }
        }
        if saw_null {
            acc.nullable = true;
        }
        if always && !one_of {
            // anyOf with an always-true branch constrains nothing.
            return;
        }
        match rest.len() {
            0 => {
                if saw_null {
                    acc.union_types
                        .push((BTreeSet::from(["null".to_string()]), jp));
                }
                return;
            }
            1 => {
                let (b, bp) = rest.remove(0);
                self.expand(b, bp, ex, stack_len);
                return;
            }
            _ => {}
        }
        if kinds.iter().all(|k| matches!(k, Branch::Enum(_))) {
            let mut values: Vec<Value> = Vec::new();
            for k in kinds {
                if let Branch::Enum(vs) = k {
                    for v in vs {
                        if v.is_null() {
                            acc.nullable = true;
                        } else if !values.contains(&v) {
                            values.push(v);
                        }
                    }
                }
            }
            acc.union_enums.push((values, jp));
            return;
        }
        if kinds
            .iter()
            .all(|k| matches!(k, Branch::Types(_) | Branch::Checked(..)))
            && checked_types_are_distinct(&kinds)
        {
            let mut set = BTreeSet::new();
            for k in kinds {
                match k {
                    Branch::Types(ts) => set.extend(ts),
                    Branch::Checked(t, part) => {
                        self.hoist_branch_checks(&t, &part, acc);
                        set.insert(t);
                    }
                    _ => {}
                }
            }
            if saw_null {
                set.insert("null".to_string());
            }
            acc.union_types.push((set, jp));
            return;
        }
        // Branches that each name one scalar type still give the node its
        // type (a union of them), whatever else they constrain.
        let scalar_types: Option<Vec<String>> =
            rest.iter().map(|(b, _)| self.scalar_type_of(b)).collect();
        if let Some(types) = scalar_types {
            let mut set: BTreeSet<String> = types.iter().cloned().collect();
            if set.len() == 1 {
                // One type: the branches' other keywords are value
                // validations of that type, kept as such.
                acc.union_types.push((set, jp.clone()));
                acc.deferred.push(Deferred::Union {
                    one_of,
                    branches: rest,
                    ptr: jp,
                });
                return;
            }
            let distinct = checked_types_are_distinct(&kinds);
            for ((_, bp), k) in rest.iter().zip(kinds) {
                match k {
                    Branch::Checked(t, part) if distinct => {
                        self.hoist_branch_checks(&t, &part, acc);
                    }
                    Branch::Types(_) => {}
                    _ => self.warn(
                        bp,
                        "this branch's constraints cannot be expressed next to the other branches' types (they \
                         would apply to every value); dropped, the type is kept",
                    ),
                }
            }
            if saw_null {
                set.insert("null".to_string());
            }
            acc.union_types.push((set, jp));
            return;
        }
        acc.deferred.push(Deferred::Union {
            one_of,
            branches: rest,
            ptr: jp,
        });
    }

    /// The one scalar type (`string`, `integer`, `number`, `boolean`) a
    /// branch declares, following plain `$ref`s.
    fn scalar_type_of(&self, b: &'a Value) -> Option<String> {
        let mut m = b.as_object()?;
        for _ in 0..8 {
            match m.get("$ref").and_then(Value::as_str) {
                Some(r) if !m.contains_key("type") => {
                    m = self.resolve(r).ok()?.1.as_object()?;
                }
                _ => break,
            }
        }
        let set = type_set(m.get("type")?)?;
        let mut declared = set.into_iter().filter(|t| t != "null");
        let only = declared.next()?;
        let scalar = matches!(only.as_str(), "string" | "integer" | "number" | "boolean");
        (scalar && declared.next().is_none()).then_some(only)
    }

    /// Moves the type-specific validations of a [`Branch::Checked`] branch
    /// onto the node. They constrain only values of the branch's type, so
    /// on the node they still leave the other branches' values alone.
    fn hoist_branch_checks(&mut self, ty: &str, part: &Part<'a>, acc: &mut Acc<'a>) {
        let mut branch = Acc::default();
        let mut unknown = Vec::new();
        self.collect(part, &mut branch, &mut unknown);
        if ty == "string" {
            acc.patterns.append(&mut branch.patterns);
            if let Some(n) = branch.min_length {
                acc.min_length = Some(acc.min_length.map_or(n, |m| m.max(n)));
            }
            if let Some(n) = branch.max_length {
                acc.max_length = Some(acc.max_length.map_or(n, |m| m.min(n)));
            }
            if acc.format.is_none() {
                acc.format = branch.format;
            }
        } else {
            acc.tighten_bounds(branch.lower, branch.upper);
            if acc.multiple_of.is_none() {
                acc.multiple_of = branch.multiple_of;
            }
        }
    }

    pub(super) fn junctors(&mut self, acc: &mut Acc<'a>, out: &mut Map<String, Value>) {
        let mut all_of: Vec<Value> = match acc.extensions.remove("allOf") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        let mut any_of: Option<Vec<Value>> = None;
        let mut one_of: Option<Vec<Value>> = None;
        let mut not: Option<Value> = None;
        for d in std::mem::take(&mut acc.deferred) {
            match d {
                Deferred::Union { one_of: is_one, branches, ptr } => {
                    let Some((list, lossy)) = self.union_validations(&branches, out, &ptr) else {
                        continue;
                    };
                    let word = if is_one { "oneOf" } else { "anyOf" };
                    let as_one = is_one && !lossy;
                    if lossy {
                        self.warn(
                            &ptr,
                            format!(
                                "{word} branches lost `additionalProperties: false`{}",
                                if is_one { "; relaxed to anyOf so that valid values are not rejected" } else { "" }
                            ),
                        );
                    }
                    let slot = if as_one { &mut one_of } else { &mut any_of };
                    if slot.is_none() {
                        *slot = Some(list);
                    } else {
                        let key = if as_one { "oneOf" } else { "anyOf" };
                        let mut m = Map::new();
                        m.insert(key.into(), Value::Array(list));
                        all_of.push(Value::Object(m));
                    }
                }
                Deferred::Not(v, ptr) => match self.value_validation(vec![(v, ptr.clone())], out) {
                    Ok((m, false)) => {
                        if not.is_none() {
                            not = Some(Value::Object(m));
                        } else {
                            let mut w = Map::new();
                            w.insert("not".into(), Value::Object(m));
                            all_of.push(Value::Object(w));
                        }
                    }
                    Ok((_, true)) => self.warn(
                        &ptr,
                        "not dropped: its schema relies on additionalProperties: false, which Kubernetes cannot express",
                    ),
                    Err(why) => self.warn(&ptr, format!("not dropped: {why}")),
                },
                Deferred::IfThenElse { cond, then, otherwise, ptr } => {
                    let ip = push_pointer(&ptr, "if");
                    let cond_v = self.value_validation(vec![(cond, ip.clone())], out);
                    let then_v = then.map(|t| self.value_validation(vec![(t, push_pointer(&ptr, "then"))], out));
                    let else_v = otherwise.map(|e| self.value_validation(vec![(e, push_pointer(&ptr, "else"))], out));
                    let failure = match (&cond_v, &then_v, &else_v) {
                        (Err(w), _, _) | (_, Some(Err(w)), _) | (_, _, Some(Err(w))) => Some(w.clone()),
                        (Ok((_, true)), _, _) => Some("its `if` relies on additionalProperties: false".to_string()),
                        _ => None,
                    };
                    if let Some(why) = failure {
                        self.warn(
                            &ip,
                            format!("if/then/else cannot be expressed in a structural schema and was dropped: {why}"),
                        );
                        continue;
                    }
                    let (Ok((c, _)), then_m, else_m) = (cond_v, then_v, else_v) else { continue };
                    let then_m = then_m.and_then(Result::ok).map(|(m, _)| m);
                    let else_m = else_m.and_then(Result::ok).map(|(m, _)| m);
                    if then_m.is_none() && else_m.is_none() {
                        continue;
                    }
                    let c = Value::Object(c);
                    let not_c = serde_json::json!({ "not": c.clone() });
                    let branch = |first: Value, second: Option<Map<String, Value>>| match second {
                        Some(s) => serde_json::json!({ "allOf": [first, Value::Object(s)] }),
                        None => first,
                    };
                    let list = vec![branch(c, then_m), branch(not_c, else_m)];
                    self.warn(
                        &ip,
                        "if/then/else is expressed as an equivalent anyOf; its error message is less specific",
                    );
                    if any_of.is_none() {
                        any_of = Some(list);
                    } else {
                        all_of.push(serde_json::json!({ "anyOf": list }));
                    }
                }
            }
        }
        if !all_of.is_empty() {
            out.insert("allOf".into(), Value::Array(all_of));
        }
        if let Some(a) = any_of {
            out.insert("anyOf".into(), Value::Array(a));
        }
        if let Some(o) = one_of {
            out.insert("oneOf".into(), Value::Array(o));
        }
        if let Some(n) = not {
            out.insert("not".into(), n);
        }
    }

    /// Turns `anyOf`/`oneOf` branches into value validations, lifting
    /// properties only the branches declare into the node when needed.
    /// `None` when the junctor had to be dropped.
    fn union_validations(
        &mut self,
        branches: &[(&'a Value, String)],
        out: &mut Map<String, Value>,
        ptr: &str,
    ) -> Option<(Vec<Value>, bool)> {
        let attempt =
            |this: &mut Self, out: &Map<String, Value>| -> Result<(Vec<Value>, bool), String> {
                let mut list = Vec::new();
                let mut lossy = false;
                for (b, bp) in branches {
                    let (m, l) = this.value_validation(vec![(*b, bp.clone())], out)?;
                    lossy |= l;
                    list.push(Value::Object(m));
                }
                Ok((list, lossy))
            };
        let first_try = {
            let mut probe = Converter {
                root: self.root,
                root_id: self.root_id,
                warnings: Vec::new(),
                errors: Vec::new(),
                ref_stack: self.ref_stack.clone(),
                nodes: self.nodes,
            };
            attempt(&mut probe, out)
        };
        let why = match first_try {
            Ok(r) => {
                return Some(attempt(self, out).unwrap_or(r));
            }
            Err(why) => why,
        };
        // Lift properties declared only in branches into the node; not into
        // a map (`additionalProperties`), which Kubernetes does not let
        // declare properties as well.
        let is_object = out.get("type").and_then(Value::as_str) == Some("object")
            && !out.contains_key("additionalProperties");
        if is_object {
            let mut lifted = Vec::new();
            for (b, bp) in branches {
                let mut ex = Expanded::default();
                let stack_len = self.ref_stack.len();
                self.expand(b, bp.clone(), &mut ex, stack_len);
                self.ref_stack.truncate(stack_len);
                for part in ex.parts {
                    if let Some(Value::Object(pm)) = part.map.get("properties") {
                        let pp = push_pointer(&part.ptr, "properties");
                        for (name, sub) in pm {
                            let known = out.get("properties").and_then(|p| p.get(name)).is_some();
                            if known || lifted.contains(name) {
                                continue;
                            }
                            if let Some(m) =
                                self.convert_sources(vec![(sub, push_pointer(&pp, name))])
                            {
                                let props = out
                                    .entry("properties")
                                    .or_insert_with(|| Value::Object(Map::new()));
                                if let Value::Object(props) = props {
                                    props.insert(
                                        name.clone(),
                                        Value::Object(strip_value_validations(m)),
                                    );
                                }
                                lifted.push(name.clone());
                            }
                        }
                    }
                }
            }
            if !lifted.is_empty() {
                if out.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
                    && out
                        .get("properties")
                        .and_then(Value::as_object)
                        .map(Map::len)
                        == Some(lifted.len())
                {
                    out.remove("x-kubernetes-preserve-unknown-fields");
                    // It has properties now: the warning that it had none,
                    // and kept whatever it held, no longer holds.
                    let node = ptr.rsplit_once('/').map_or("", |(node, _)| node);
                    self.warnings.retain(|w| {
                        w.pointer != node
                            || !w.message.starts_with("type object without properties")
                    });
                }
                match attempt(self, out) {
                    Ok(r) => {
                        self.warn(
                            ptr,
                            format!(
                                "properties {} declared only in branches were lifted into the object; the branches remain as value validations",
                                lifted.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
                            ),
                        );
                        return Some(r);
                    }
                    Err(why) => {
                        self.warn(
                            ptr,
                            format!(
                                "dropped: {why}; the properties of its branches were kept without their branch-specific validations"
                            ),
                        );
                        return None;
                    }
                }
            }
        }
        self.warn(ptr, format!("dropped: {why}"));
        None
    }
}

/// Whether no type appears in two branches when one of them has checks
/// (`[{type: string, pattern: a}, {type: string, pattern: b}]` would turn
/// an "or" into an "and" if both patterns moved onto the node).
fn checked_types_are_distinct(kinds: &[Branch<'_>]) -> bool {
    let mut seen: Vec<&str> = Vec::new();
    let mut checked: Vec<&str> = Vec::new();
    for k in kinds {
        match k {
            Branch::Types(ts) => seen.extend(ts.iter().map(String::as_str)),
            Branch::Checked(t, _) => {
                seen.push(t);
                checked.push(t);
            }
            _ => {}
        }
    }
    checked
        .iter()
        .all(|t| seen.iter().filter(|s| *s == t).count() == 1)
}

/// Drops value validations (keeps the structure) from a lifted property.
fn strip_value_validations(mut m: Map<String, Value>) -> Map<String, Value> {
    for k in [
        "enum",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "required",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "default",
    ] {
        m.remove(k);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::super::super::validate::CompiledSchema;
    use super::super::tests::{conv, has_warning, prop, spec};
    use serde_json::json;

    /// Found by the `schema_convert` fuzz target: keywords of a kept branch
    /// were copied without a type check, giving a schema that is not
    /// structural (`maxItems: ["a"]`).
    #[test]
    fn branches_with_wrongly_typed_keywords_are_dropped_not_copied() {
        for bad in [
            json!({"maxItems": ["a", "b"]}),
            json!({"minLength": -1}),
            json!({"required": "enabled"}),
            json!({"format": 1}),
            json!({"multipleOf": 0}),
            json!({"enum": "x"}),
        ] {
            let c = conv(spec(json!({
                "backup": {"type": "object", "properties": {"enabled": {"type": "boolean"}},
                    "anyOf": [{"required": ["enabled"]}, {"allOf": [{"required": ["enabled"]}, bad.clone()]}]}
            })));
            assert!(c.is_ok(), "{bad}: {:?}", c.errors);
            let problems = super::super::super::structural_check::check_structural(&c.schema);
            assert!(problems.is_empty(), "{bad}: {problems:?}\n{}", c.schema);
        }
    }

    /// Found by the `schema_convert` fuzz target: properties only branches
    /// declare were lifted into a map (`additionalProperties`), which
    /// Kubernetes does not let declare properties too.
    #[test]
    fn branch_properties_are_not_lifted_into_a_map() {
        let c = conv(spec(json!({
            "databases": {"type": "object", "additionalProperties": {"type": "object",
                    "properties": {"owner": {"type": "string"}}},
                "anyOf": [{"properties": {"enabled": {"enum": [true]}}, "required": ["enabled"]},
                          {"not": {"required": ["enabled"]}}]}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        let databases = prop(&c, "databases");
        assert!(databases.get("properties").is_none(), "{databases}");
        assert!(
            databases.get("additionalProperties").is_some(),
            "{databases}"
        );
        let problems = super::super::super::structural_check::check_structural(&c.schema);
        assert!(problems.is_empty(), "{problems:?}\n{}", c.schema);
        assert!(has_warning(&c, "/properties/databases/anyOf", "dropped"));
    }

    #[test]
    fn one_of_constants_collapse_into_an_enum() {
        let c = conv(spec(json!({
            "size": {"oneOf": [
                {"const": "small", "title": "Small"},
                {"const": "medium"},
                {"enum": ["large", "small"]}
            ], "default": "medium"},
            "level": {"type": "integer", "anyOf": [{"const": 1}, {"const": 2}, {"type": "null"}]}
        })));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "size"),
            json!({"type": "string", "enum": ["small", "medium", "large"], "default": "medium"})
        );
        assert_eq!(
            prop(&c, "level"),
            json!({"type": "integer", "nullable": true, "enum": [1, 2]})
        );
    }

    #[test]
    fn nullable_unions() {
        let c = conv(json!({
            "type": "object",
            "$defs": {"res": {"type": "object", "properties": {"cpu": {"type": "string"}}}},
            "properties": {
                "a": {"oneOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]},
                "b": {"anyOf": [{"$ref": "#/$defs/res"}, {"type": "null"}], "description": "resources"},
                "c": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
            }
        }));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "a"),
            json!({"type": "string", "nullable": true, "maxLength": 5})
        );
        assert_eq!(
            prop(&c, "b"),
            json!({"type": "object", "nullable": true, "description": "resources",
                   "properties": {"cpu": {"type": "string"}}})
        );
        assert_eq!(
            prop(&c, "c"),
            json!({"x-kubernetes-int-or-string": true, "nullable": true})
        );
    }

    /// How Kubernetes quantities are usually written: int-or-string with a
    /// pattern on the string branch, often behind a `$ref` that has its own
    /// description and default.
    #[test]
    fn int_or_string_keeps_branch_checks() {
        let q = "^[0-9]+(\\.[0-9]+)?(m|Ki|Mi|Gi)?$";
        let c = conv(json!({
            "type": "object",
            "$defs": {"quantity": {"anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": q, "maxLength": 20}
            ]}},
            "properties": {
                "cpu": {"$ref": "#/$defs/quantity", "description": "CPU", "default": "500m"},
                "memory": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": q}], "default": 1024},
                "nodeLevel": {"pattern": q, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "twoPatterns": {"anyOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "^b"}]},
                "withEnum": {"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["auto"]}]}
            }
        }));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "cpu"),
            json!({"x-kubernetes-int-or-string": true, "description": "CPU", "minimum": 0,
                   "maxLength": 20, "pattern": q, "default": "500m"})
        );
        assert_eq!(
            prop(&c, "memory"),
            json!({"x-kubernetes-int-or-string": true, "pattern": q, "default": 1024})
        );
        assert_eq!(
            prop(&c, "nodeLevel"),
            json!({"x-kubernetes-int-or-string": true, "pattern": q})
        );
        // Two patterns for one type would become an "and": they stay an
        // "or" of value validations on a string.
        assert_eq!(
            prop(&c, "twoPatterns"),
            json!({"type": "string", "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]})
        );
        // An enum on one branch would refuse the other's values: the type
        // stays int-or-string and only the enum is lost, with a warning.
        assert_eq!(
            prop(&c, "withEnum"),
            json!({"x-kubernetes-int-or-string": true})
        );
        assert!(has_warning(
            &c,
            "/properties/withEnum/anyOf/1",
            "this branch's constraints cannot be expressed next to the other branches' types"
        ));
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        for ok in [
            json!({"cpu": 2}),
            json!({"cpu": "250m"}),
            json!({"memory": "1Gi"}),
        ] {
            assert!(v.validate(&ok, "spec").is_empty(), "{ok}");
        }
        for bad in [
            json!({"cpu": -1}),
            json!({"cpu": "lots"}),
            json!({"memory": "1 GB"}),
            json!({"memory": true}),
        ] {
            assert!(!v.validate(&bad, "spec").is_empty(), "{bad}");
        }
    }

    #[test]
    fn value_validation_junctors_are_kept() {
        let c = conv(spec(json!({"auth": {
            "type": "object",
            "properties": {"password": {"type": "string"}, "secretRef": {"type": "string"}},
            "oneOf": [
                {"required": ["password"], "description": "inline"},
                {"required": ["secretRef"]}
            ],
            "not": {"required": ["password", "secretRef"]}
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "auth"),
            json!({"type": "object",
                   "properties": {"password": {"type": "string"}, "secretRef": {"type": "string"}},
                   "oneOf": [{"required": ["password"]}, {"required": ["secretRef"]}],
                   "not": {"required": ["password", "secretRef"]}})
        );
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        assert_eq!(
            v.validate(&json!({"auth": {}}), "spec")[0].to_string(),
            r#"spec.auth: Invalid value: "": "spec.auth" must validate one and only one schema (oneOf). Found none valid"#
        );
    }

    #[test]
    fn branch_properties_are_lifted() {
        let c = conv(spec(json!({"backup": {
            "type": "object",
            "properties": {"kind": {"type": "string"}},
            "oneOf": [
                {"properties": {"kind": {"const": "s3"}, "bucket": {"type": "string"}}, "required": ["bucket"]},
                {"properties": {"kind": {"const": "pvc"}, "size": {"type": "string", "pattern": "^[0-9]+Gi$"}}, "required": ["size"]}
            ]
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "backup"),
            json!({"type": "object",
            "properties": {"kind": {"type": "string"}, "bucket": {"type": "string"}, "size": {"type": "string"}},
            "oneOf": [
                {"properties": {"kind": {"enum": ["s3"]}, "bucket": {}}, "required": ["bucket"]},
                {"properties": {"kind": {"enum": ["pvc"]}, "size": {"pattern": "^[0-9]+Gi$"}}, "required": ["size"]}
            ]})
        );
        assert!(has_warning(&c, "/properties/backup/oneOf", "lifted"));
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        assert!(
            v.validate(&json!({"backup": {"kind": "s3", "bucket": "b"}}), "spec")
                .is_empty()
        );
        assert!(
            !v.validate(&json!({"backup": {"kind": "s3", "size": "1Gi"}}), "spec")
                .is_empty()
        );
    }

    #[test]
    fn closed_one_of_branches_relax_to_any_of() {
        let c = conv(spec(json!({"source": {
            "oneOf": [
                {"type": "object", "properties": {"git": {"type": "string"}}, "required": ["git"], "additionalProperties": false},
                {"type": "object", "properties": {"oci": {"type": "string"}}, "required": ["oci"], "additionalProperties": false}
            ]
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "source"),
            json!({"type": "object",
                "properties": {"git": {"type": "string"}, "oci": {"type": "string"}},
                "anyOf": [{"properties": {"git": {}}, "required": ["git"]},
                          {"properties": {"oci": {}}, "required": ["oci"]}]})
        );
        assert!(has_warning(
            &c,
            "/properties/source/oneOf",
            "relaxed to anyOf"
        ));
        assert!(has_warning(&c, "/properties/source/oneOf", "lifted"));
        // A `not` that relies on a closed object cannot be kept.
        let n = conv(spec(json!({"x": {
            "type": "object", "properties": {"a": {"type": "string"}},
            "not": {"properties": {"a": {"const": "b"}}, "additionalProperties": false}
        }})));
        assert!(prop(&n, "x").get("not").is_none());
        assert!(has_warning(&n, "/properties/x/not", "not dropped"));
    }

    #[test]
    fn inexpressible_junctors_are_dropped_with_pointer() {
        let c = conv(spec(json!({"value": {
            "anyOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string"}}]
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "value"),
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert!(
            has_warning(&c, "/properties/value/anyOf", "dropped"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn if_then_else() {
        let c = conv(spec(json!({"ingress": {
            "type": "object",
            "properties": {"enabled": {"type": "boolean"}, "host": {"type": "string"}},
            "if": {"properties": {"enabled": {"const": true}}},
            "then": {"required": ["host"]}
        }})));
        assert!(c.is_ok(), "{:?}", c.errors);
        assert_eq!(
            prop(&c, "ingress")["anyOf"],
            json!([
                {"allOf": [{"properties": {"enabled": {"enum": [true]}}}, {"required": ["host"]}]},
                {"not": {"properties": {"enabled": {"enum": [true]}}}}
            ])
        );
        let v = CompiledSchema::new(&c.schema).expect("compiles");
        assert!(
            v.validate(&json!({"ingress": {"enabled": false}}), "spec")
                .is_empty()
        );
        assert!(
            v.validate(&json!({"ingress": {"enabled": true, "host": "h"}}), "spec")
                .is_empty()
        );
        assert!(
            !v.validate(&json!({"ingress": {"enabled": true}}), "spec")
                .is_empty()
        );

        let dropped = conv(spec(json!({"ingress": {
            "type": "object",
            "properties": {"enabled": {"type": "boolean"}},
            "if": {"properties": {"enabled": {"const": true}}},
            "then": {"properties": {"tls": {"type": "object"}}, "required": ["tls"]},
            "else": {"maxProperties": 1}
        }})));
        assert!(dropped.is_ok(), "{:?}", dropped.errors);
        assert!(prop(&dropped, "ingress").get("anyOf").is_none());
        assert!(has_warning(
            &dropped,
            "/properties/ingress/if",
            "if/then/else cannot be expressed in a structural schema and was dropped"
        ));
    }
}
