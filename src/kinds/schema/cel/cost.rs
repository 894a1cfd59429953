//! The cost of a rule, in the spirit of cel-go's cost model that
//! kube-apiserver uses: one unit per node evaluated, comprehensions
//! multiplied by the size of what they range over, string functions charged
//! by the length of their input (a tenth of a unit per character), list
//! functions and `in` by the list's size.
//!
//! The CEL crate evaluates without metering, so the same model is applied
//! twice: at load, with the sizes the schema allows (`maxItems`,
//! `maxLength`, `maxProperties`; unbounded ones as large as a 3 MiB request
//! allows), giving the static estimate that is checked against the per-rule
//! limit; and per request *before* running a rule, with the sizes of the
//! actual object, giving the cost charged against the per-call limit and
//! the request's budget. A rule is never started if its cost for the actual
//! object exceeds what is left.

use cel::Program;
use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use serde_json::Value;

use super::value::Shape;

/// How large an unbounded string can be: kube-apiserver's 3 MiB request
/// limit.
const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;
/// How many elements an unbounded list or map can have: the request limit
/// over the smallest serialized element (a digit and a comma).
const MAX_UNBOUNDED_ITEMS: u64 = MAX_REQUEST_BYTES / 2;

/// Sizes of the values an expression reaches from `self`.
trait Sizes: Clone {
    /// The size (characters of a string, entries of a list or map) of the
    /// largest value this stands for.
    fn size(&self) -> u64;
    /// The value of field `name`.
    fn field(&self, name: &str) -> Self;
    /// The values of the items (list elements, map values).
    fn items(&self) -> Self;
    /// A value the model knows nothing about (a function's result).
    fn unknown(&self) -> Self;
    /// A value of a known size (a literal).
    fn fixed(&self, size: u64) -> Self;
    /// A value whose size the estimate cannot bound at all: a conversion's
    /// result (`string(self.count)`), which cel-go's estimator gives no
    /// size, so that joining it to another string costs without end.
    fn unbounded(&self) -> Self;
}

/// Sizes the schema allows.
#[derive(Clone, Copy)]
enum Bounds<S: Shape> {
    Node(Option<S>),
    Fixed(u64),
}

impl<S: Shape> Sizes for Bounds<S> {
    fn size(&self) -> u64 {
        match self {
            Bounds::Fixed(n) => *n,
            Bounds::Node(Some(s)) if s.is_scalar() => 1,
            Bounds::Node(Some(s)) => s.max_size().unwrap_or_else(|| {
                if s.is_string() {
                    MAX_REQUEST_BYTES
                } else {
                    MAX_UNBOUNDED_ITEMS
                }
            }),
            Bounds::Node(None) => MAX_REQUEST_BYTES,
        }
    }
    fn field(&self, name: &str) -> Self {
        match self {
            Bounds::Node(s) => Bounds::Node(s.and_then(|s| s.cel_field(name))),
            Bounds::Fixed(_) => Bounds::Node(None),
        }
    }
    fn items(&self) -> Self {
        match self {
            Bounds::Node(s) => Bounds::Node(s.and_then(Shape::items)),
            Bounds::Fixed(_) => Bounds::Node(None),
        }
    }
    fn unknown(&self) -> Self {
        Bounds::Node(None)
    }
    fn fixed(&self, size: u64) -> Self {
        Bounds::Fixed(size)
    }
    fn unbounded(&self) -> Self {
        Bounds::Fixed(u64::MAX)
    }
}

/// Sizes of an actual object: every value a path reaches (all elements for
/// a list), and for anything else the size of the whole object.
#[derive(Clone)]
struct Actual<'a> {
    values: Vec<&'a Value>,
    fixed: Option<u64>,
    whole: u64,
}

impl Sizes for Actual<'_> {
    fn size(&self) -> u64 {
        if let Some(n) = self.fixed {
            return n;
        }
        if self.values.is_empty() {
            return self.whole;
        }
        self.values
            .iter()
            .map(|v| match v {
                Value::String(s) => s.chars().count() as u64,
                Value::Array(a) => a.len() as u64,
                Value::Object(m) => m.len() as u64,
                _ => 1,
            })
            .max()
            .unwrap_or(0)
    }
    fn field(&self, name: &str) -> Self {
        Actual {
            values: self
                .values
                .iter()
                .filter_map(|v| {
                    v.get(name).or_else(|| {
                        let raw = super::escaping::unescape(name)?;
                        v.get(raw.as_ref())
                    })
                })
                .collect(),
            fixed: None,
            whole: self.whole,
        }
    }
    fn items(&self) -> Self {
        let mut values = Vec::new();
        for v in &self.values {
            match v {
                Value::Array(a) => values.extend(a.iter()),
                Value::Object(m) => values.extend(m.values()),
                _ => {}
            }
        }
        Actual {
            values,
            fixed: None,
            whole: self.whole,
        }
    }
    fn unknown(&self) -> Self {
        Actual {
            values: Vec::new(),
            fixed: None,
            whole: self.whole,
        }
    }
    // What a request's own values cost is measured, not estimated.
    fn unbounded(&self) -> Self {
        self.unknown()
    }
    fn fixed(&self, size: u64) -> Self {
        Actual {
            values: Vec::new(),
            fixed: Some(size),
            whole: self.whole,
        }
    }
}

/// The total size of `v`: characters of its strings plus entries.
fn weight(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.len() as u64,
        Value::Array(a) => a.len() as u64 + a.iter().map(weight).sum::<u64>(),
        Value::Object(m) => {
            m.len() as u64
                + m.iter()
                    .map(|(k, v)| k.len() as u64 + weight(v))
                    .sum::<u64>()
        }
        _ => 1,
    }
}

/// The cost of `program` for the largest object `shape` allows.
pub(super) fn estimate_static<S: Shape>(program: &Program, shape: S) -> u64 {
    let root = Bounds::Node(Some(shape));
    cost(program.expression(), &root, &mut Vec::new()).0
}

/// The cost of `program` for `value` (and `old`, for `oldSelf`).
pub(super) fn estimate_actual(program: &Program, value: &Value, old: Option<&Value>) -> u64 {
    let mut values = vec![value];
    values.extend(old);
    let whole = values.iter().map(|v| weight(v)).max().unwrap_or(1);
    let root = Actual {
        values,
        fixed: None,
        whole,
    };
    cost(program.expression(), &root, &mut Vec::new()).0
}

/// Cost and result sizes of `e`; `scope` binds comprehension variables.
fn cost<'e, Z: Sizes>(e: &'e IdedExpr, root: &Z, scope: &mut Vec<(&'e str, Z)>) -> (u64, Z) {
    match &e.expr {
        Expr::Unspecified => (0, root.unknown()),
        Expr::Literal(LiteralValue::String(s)) => (0, root.fixed(s.len() as u64)),
        Expr::Literal(_) => (0, root.fixed(1)),
        Expr::Ident(name) => {
            if let Some((_, z)) = scope.iter().rev().find(|(n, _)| *n == name) {
                return (1, z.clone());
            }
            if name == "self" || name == "oldSelf" {
                return (1, root.clone());
            }
            (1, root.unknown())
        }
        Expr::Select(s) => {
            let (c, z) = cost(&s.operand, root, scope);
            (c.saturating_add(1), z.field(&s.field))
        }
        Expr::List(l) => {
            let c = l
                .elements
                .iter()
                .map(|x| cost(x, root, scope).0)
                .fold(10u64, u64::saturating_add);
            (c, root.fixed(l.elements.len() as u64))
        }
        Expr::Map(m) => {
            let mut c = 30u64;
            for entry in &m.entries {
                if let EntryExpr::MapEntry(me) = &entry.expr {
                    c = c
                        .saturating_add(cost(&me.key, root, scope).0)
                        .saturating_add(cost(&me.value, root, scope).0);
                } else if let EntryExpr::StructField(f) = &entry.expr {
                    c = c.saturating_add(cost(&f.value, root, scope).0);
                }
            }
            (c, root.fixed(m.entries.len() as u64))
        }
        Expr::Struct(_) => (40, root.unknown()),
        Expr::Comprehension(c) => {
            let (range_cost, range) = cost(&c.iter_range, root, scope);
            let (init_cost, _) = cost(&c.accu_init, root, scope);
            let n = range.size();
            let depth = scope.len();
            scope.push((&c.iter_var, range.items()));
            if let Some(v2) = &c.iter_var2 {
                scope.push((v2, range.items()));
            }
            scope.push((&c.accu_var, root.unknown()));
            let body = cost(&c.loop_cond, root, scope)
                .0
                .saturating_add(cost(&c.loop_step, root, scope).0);
            let (result_cost, result) = cost(&c.result, root, scope);
            scope.truncate(depth);
            let total = range_cost
                .saturating_add(init_cost)
                .saturating_add(n.saturating_mul(body))
                .saturating_add(result_cost);
            (total, result)
        }
        Expr::Call(call) => {
            let mut total = 1u64;
            let mut sizes = Vec::with_capacity(call.args.len() + 1);
            if let Some(t) = &call.target {
                let (c, z) = cost(t, root, scope);
                total = total.saturating_add(c);
                sizes.push(z);
            }
            for a in &call.args {
                let (c, z) = cost(a, root, scope);
                total = total.saturating_add(c);
                sizes.push(z);
            }
            let size = |i: usize| sizes.get(i).map_or(0, Sizes::size);
            let tenth = |n: u64| n.div_ceil(10);
            let name = call.func_name.as_str();
            let extra = match name {
                // Linear in the receiver's characters.
                "contains" | "startsWith" | "endsWith" | "lowerAscii" | "upperAscii" | "trim"
                | "replace" | "split" | "substring" | "charAt" | "indexOf" | "lastIndexOf"
                | "quantity" | "isQuantity" | "url" | "isURL" | "string" | "reverse" => {
                    tenth(size(0))
                }
                // Regular expressions: characters times the pattern's.
                "matches" | "find" | "findAll" => tenth(size(0)).saturating_mul(1 + tenth(size(1))),
                "sum" | "min" | "max" | "isSorted" | "join" => size(0),
                "@in" => size(1),
                "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" => tenth(size(0).min(size(1))),
                "_+_" => tenth(size(0).saturating_add(size(1))),
                _ => 0,
            };
            let result = match name {
                // Concatenation: as long as both together.
                "_+_" => root.fixed(size(0).saturating_add(size(1))),
                "string" => root.unbounded(),
                "_[_]" => match call.args.get(1).map(|a| &a.expr) {
                    Some(Expr::Literal(LiteralValue::String(k))) => sizes[0].field(k),
                    _ => sizes.first().map_or_else(|| root.unknown(), Sizes::items),
                },
                _ => root.unknown(),
            };
            (total.saturating_add(extra), result)
        }
    }
}
