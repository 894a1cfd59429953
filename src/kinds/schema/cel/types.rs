//! A conservative type check of a rule, for what kube-apiserver's CEL type
//! checker refuses when a CRD is created and that would otherwise load here
//! and fail every request it checks: a rule that evaluates to something
//! other than a bool (or a `messageExpression` to something other than a
//! string), an operator applied to operands of types it has no overload for
//! (`self.enabled == "yes"` on a boolean), and a field selected on a scalar
//! (`self.foo` on an integer). Types come from literals, the schema (through
//! `self`, `oldSelf` and field selection) and the results of operators and
//! well-known functions; anything else is unknown (`dyn`), and nothing
//! unknown is ever reported: this check may miss an error, never invent
//! one. Numbers of different types and `null` are never called mismatched.

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use super::value::{Shape, ShapeKind};

/// What the check knows of an expression's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    Bool,
    Int,
    UInt,
    Double,
    String,
    Bytes,
    Null,
    List,
    Map,
    /// Not known.
    Dyn,
}

impl Ty {
    /// CEL's name for the type, as its errors write it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::UInt => "uint",
            Ty::Double => "double",
            Ty::String => "string",
            Ty::Bytes => "bytes",
            Ty::Null => "null_type",
            Ty::List => "list",
            Ty::Map => "map",
            Ty::Dyn => "dyn",
        }
    }

    fn is_number(self) -> bool {
        matches!(self, Ty::Int | Ty::UInt | Ty::Double)
    }

    fn is_scalar(self) -> bool {
        matches!(
            self,
            Ty::Bool | Ty::Int | Ty::UInt | Ty::Double | Ty::String | Ty::Bytes
        )
    }
}

/// Two known types that no overload of an equality or ordering takes
/// together.
fn mismatched(a: Ty, b: Ty) -> bool {
    a != b
        && a != Ty::Dyn
        && b != Ty::Dyn
        && a != Ty::Null
        && b != Ty::Null
        && !(a.is_number() && b.is_number())
}

fn of_shape<S: Shape>(shape: Option<S>) -> Ty {
    let Some(s) = shape else { return Ty::Dyn };
    match s.kind() {
        ShapeKind::Integer => return Ty::Int,
        ShapeKind::Number => return Ty::Double,
        ShapeKind::Other => {}
    }
    match s.type_name() {
        "string" => Ty::String,
        "boolean" => Ty::Bool,
        "array" => Ty::List,
        "object" => Ty::Map,
        _ => Ty::Dyn,
    }
}

/// The type check of one expression over a node shaped `root`.
pub(super) struct TypeCheck<S> {
    root: S,
    /// What it found: the expression's id and the problem, in CEL's words.
    pub(super) problems: Vec<(u64, String)>,
}

impl<S: Shape> TypeCheck<S> {
    pub(super) fn new(root: S) -> Self {
        TypeCheck {
            root,
            problems: Vec::new(),
        }
    }

    /// The type of `e` (and its schema node when it is a path from `self`),
    /// noting the problems met on the way. `shadowed`: comprehension
    /// variables in scope.
    pub(super) fn infer<'e>(
        &mut self,
        e: &'e IdedExpr,
        shadowed: &mut Vec<&'e str>,
    ) -> (Ty, Option<S>) {
        match &e.expr {
            Expr::Literal(l) => (
                match l {
                    LiteralValue::Boolean(_) => Ty::Bool,
                    LiteralValue::Bytes(_) => Ty::Bytes,
                    LiteralValue::Double(_) => Ty::Double,
                    LiteralValue::Int(_) => Ty::Int,
                    LiteralValue::Null => Ty::Null,
                    LiteralValue::String(_) => Ty::String,
                    LiteralValue::UInt(_) => Ty::UInt,
                },
                None,
            ),
            Expr::Ident(name) => {
                let name = name.as_str();
                if (name == "self" || name == "oldSelf") && !shadowed.contains(&name) {
                    (of_shape(Some(self.root)), Some(self.root))
                } else {
                    (Ty::Dyn, None)
                }
            }
            Expr::Select(sel) => {
                let (operand, node) = self.infer(&sel.operand, shadowed);
                if sel.test {
                    return (Ty::Bool, None);
                }
                if operand.is_scalar() {
                    self.problems.push((
                        e.id,
                        format!("type '{}' does not support field selection", operand.name()),
                    ));
                    return (Ty::Dyn, None);
                }
                let child = node.and_then(|n| n.cel_field(&sel.field));
                (of_shape(child), child)
            }
            Expr::List(l) => {
                for x in &l.elements {
                    self.infer(x, shadowed);
                }
                (Ty::List, None)
            }
            Expr::Map(_) => (Ty::Map, None),
            Expr::Comprehension(c) => {
                self.infer(&c.iter_range, shadowed);
                let (accu, _) = self.infer(&c.accu_init, shadowed);
                let depth = shadowed.len();
                shadowed.push(&c.iter_var);
                if let Some(v2) = &c.iter_var2 {
                    shadowed.push(v2);
                }
                shadowed.push(&c.accu_var);
                self.infer(&c.loop_cond, shadowed);
                self.infer(&c.loop_step, shadowed);
                let result = match &c.result.expr {
                    // all, exists: the accumulator, a bool from the start;
                    // map, filter: a list.
                    Expr::Ident(v) if *v == c.accu_var => accu,
                    _ => self.infer(&c.result, shadowed).0,
                };
                shadowed.truncate(depth);
                (result, None)
            }
            Expr::Call(call) => {
                let target = call.target.as_deref().map(|t| self.infer(t, shadowed).0);
                let args: Vec<Ty> = call
                    .args
                    .iter()
                    .map(|a| self.infer(a, shadowed).0)
                    .collect();
                (self.call(e.id, &call.func_name, target, &args), None)
            }
            Expr::Unspecified | Expr::Struct(_) => (Ty::Dyn, None),
        }
    }

    /// The type of a call of `name`, noting an operator applied to types it
    /// has no overload for.
    fn call(&mut self, id: u64, name: &str, target: Option<Ty>, args: &[Ty]) -> Ty {
        let no_overload = |problems: &mut Vec<(u64, String)>| {
            let types: Vec<&str> = args.iter().map(|t| t.name()).collect();
            problems.push((
                id,
                format!(
                    "found no matching overload for '{name}' applied to '({})'",
                    types.join(", ")
                ),
            ));
        };
        match (name, args) {
            ("_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_", [a, b]) => {
                if mismatched(*a, *b) {
                    no_overload(&mut self.problems);
                }
                Ty::Bool
            }
            ("_&&_" | "_||_", [a, b]) => {
                if [a, b].iter().any(|t| **t != Ty::Bool && **t != Ty::Dyn) {
                    no_overload(&mut self.problems);
                }
                Ty::Bool
            }
            ("!_", [a]) => {
                if *a != Ty::Bool && *a != Ty::Dyn {
                    no_overload(&mut self.problems);
                }
                Ty::Bool
            }
            // `+` adds numbers and joins strings, bytes and lists.
            ("_+_", [a, b]) => {
                if mismatched(*a, *b) {
                    no_overload(&mut self.problems);
                    return Ty::Dyn;
                }
                if a == b { *a } else { Ty::Dyn }
            }
            ("_-_" | "_*_" | "_/_" | "_%_", [a, b]) => {
                let known_non_number = |t: Ty| t != Ty::Dyn && !t.is_number();
                if known_non_number(*a) || known_non_number(*b) || mismatched(*a, *b) {
                    no_overload(&mut self.problems);
                    return Ty::Dyn;
                }
                if a == b { *a } else { Ty::Dyn }
            }
            ("@in", _) => Ty::Bool,
            ("size", _) => Ty::Int,
            (
                "matches" | "startsWith" | "endsWith" | "contains" | "isSorted" | "exists" | "all"
                | "exists_one" | "hasValue",
                _,
            ) => Ty::Bool,
            ("string", _) if target.is_none() => Ty::String,
            ("int", _) if target.is_none() => Ty::Int,
            ("double", _) if target.is_none() => Ty::Double,
            ("lowerAscii" | "upperAscii" | "trim" | "replace" | "substring" | "join", _)
                if target.is_some() =>
            {
                Ty::String
            }
            _ => Ty::Dyn,
        }
    }
}
