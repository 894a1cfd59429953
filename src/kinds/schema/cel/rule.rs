//! Compiling one `x-kubernetes-validations` entry: its keys read and
//! checked (`rule`, `message`, `messageExpression`, `reason`, `fieldPath`,
//! `optionalOldSelf`), its expressions parsed, and every identifier and
//! function checked against the environment, since the CEL crate has no
//! type checker: a rule naming an unknown variable or function fails here,
//! when the kind loads, rather than on each request.

use cel::Program;
use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use serde_json::Value;

use super::cost;
use super::env::{FUNCTIONS, NAMESPACES, TYPE_NAMES, env};
use super::types::{Ty, TypeCheck};
use super::value::Shape;
use super::{MAX_MESSAGE_LEN, RuleError, STATIC_COST_LIMIT};
use crate::kinds::schema::issue::push_pointer;

/// `reason`: the cause a failing rule is reported with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

/// A compiled rule.
#[derive(Debug)]
pub(crate) struct Rule {
    /// The rule as written, trimmed.
    pub(super) source: Box<str>,
    pub(super) program: Program,
    pub(super) message: Option<Box<str>>,
    pub(super) message_expression: Option<(Program, Box<str>)>,
    pub(super) reason: Option<Reason>,
    /// The normalized `fieldPath` (`.a['b.c']` becomes `a.b.c`... see
    /// [`parse_field_path`]), appended to the node's path on failure.
    pub(super) field_path: Option<Box<str>>,
    pub(super) uses_old_self: bool,
    pub(super) optional_old_self: bool,
}

impl Rule {
    /// kube-apiserver's `ruleErrorString`: the message if any, else the rule.
    pub(super) fn error_string(&self) -> &str {
        self.message.as_deref().unwrap_or(&self.source)
    }
}

/// Compiles the entry at `ptr` for a node shaped `shape`.
pub(super) fn compile<S: Shape>(entry: &Value, ptr: &str, shape: S) -> Result<Rule, RuleError> {
    let err = |key: &str, message: String| RuleError {
        pointer: if key.is_empty() {
            ptr.to_string()
        } else {
            push_pointer(ptr, key)
        },
        message,
    };
    let Value::Object(m) = entry else {
        return Err(err("", "a validation rule must be an object".into()));
    };
    let string = |key: &str| -> Result<Option<&str>, RuleError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(err(key, "must be a string".into())),
        }
    };
    let source = string("rule")?.unwrap_or_default().trim();
    if source.is_empty() {
        return Err(err("rule", "Required value: rule is not specified".into()));
    }
    let message = match string("message")? {
        None => None,
        Some(msg) => {
            let msg = msg.trim();
            if msg.is_empty() {
                return Err(err(
                    "message",
                    "Required value: message must be non-empty if specified".into(),
                ));
            }
            if msg.contains('\n') {
                return Err(err(
                    "message",
                    "Invalid value: message must not contain line breaks".into(),
                ));
            }
            if msg.len() > MAX_MESSAGE_LEN {
                return Err(err(
                    "message",
                    format!("Too long: may not be more than {MAX_MESSAGE_LEN} bytes"),
                ));
            }
            Some(Box::<str>::from(msg))
        }
    };
    let reason = match string("reason")? {
        None => None,
        Some("FieldValueInvalid") => Some(Reason::Invalid),
        Some("FieldValueForbidden") => Some(Reason::Forbidden),
        Some("FieldValueRequired") => Some(Reason::Required),
        Some("FieldValueDuplicate") => Some(Reason::Duplicate),
        Some(other) => {
            return Err(err(
                "reason",
                format!(
                    "Unsupported value: {other:?}: supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""
                ),
            ));
        }
    };
    let field_path = match string("fieldPath")? {
        None => None,
        Some(p) => Some(
            parse_field_path(p, shape)
                .map_err(|e| err("fieldPath", format!("Invalid value: {p:?}: {e}")))?
                .into_boxed_str(),
        ),
    };
    let optional_old_self = match m.get("optionalOldSelf") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(err("optionalOldSelf", "must be a boolean".into())),
    };

    let program = parse(source, shape, Ty::Bool)
        .map_err(|e| err("rule", format!("compilation failed: {e}")))?;
    let uses_old_self = program.references().has_variable("oldSelf");
    if optional_old_self && !uses_old_self {
        return Err(err(
            "optionalOldSelf",
            "Invalid value: true: may not be set if rule does not use oldSelf".into(),
        ));
    }
    let message_expression = match string("messageExpression")? {
        None => None,
        Some(src) if src.trim().is_empty() => {
            return Err(err(
                "messageExpression",
                "Required value: messageExpression must be non-empty if specified".into(),
            ));
        }
        Some(src) => {
            let p = parse(src, shape, Ty::String).map_err(|e| {
                err(
                    "messageExpression",
                    format!("messageExpression compilation failed: {e}"),
                )
            })?;
            Some((p, Box::<str>::from(src)))
        }
    };
    let rule = Rule {
        source: source.into(),
        program,
        message,
        message_expression,
        reason,
        field_path,
        uses_old_self,
        optional_old_self,
    };
    // kube-apiserver refuses a rule (or message expression) whose estimated
    // cost, for the largest object the schema allows, exceeds the limit.
    let mut programs = vec![("rule", "rule", &rule.program)];
    if let Some((p, _)) = &rule.message_expression {
        programs.push(("messageExpression", "messageExpression", p));
    }
    for (key, what, program) in programs {
        let estimate = cost::estimate_static(program, shape);
        if estimate > STATIC_COST_LIMIT {
            let factor = estimate as f64 / STATIC_COST_LIMIT as f64;
            // As kube-apiserver says it: beyond 100x the figure means
            // nothing (an unbounded size makes it 10^11x).
            let factor = if factor > 100.0 {
                "more than 100x".to_owned()
            } else {
                format!("{}x", crate::golang::format_g(factor))
            };
            return Err(err(
                key,
                format!(
                    "Forbidden: estimated {what} cost exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
                ),
            ));
        }
    }
    Ok(rule)
}

/// Parses and checks one expression, which must evaluate to `want` (a
/// rule to a bool, a message expression to a string).
fn parse<S: Shape>(src: &str, shape: S, want: Ty) -> Result<Program, String> {
    let program = env().compile(src).map_err(|e| {
        e.to_string()
            .lines()
            .filter(|l| l.starts_with("ERROR"))
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    let mut scope = vec!["self", "oldSelf"];
    let mut checker = Checker {
        program: &program,
        root: shape,
        problems: Vec::new(),
    };
    checker.check(program.expression(), &mut scope);
    if !checker.problems.is_empty() {
        return Err(checker.problems.join("; "));
    }
    let mut types = TypeCheck::new(shape);
    let (ty, _) = types.infer(program.expression(), &mut Vec::new());
    for (id, problem) in std::mem::take(&mut types.problems) {
        checker.report(id, &problem);
    }
    if !checker.problems.is_empty() {
        return Err(checker.problems.join("; "));
    }
    if ty != want && ty != Ty::Dyn {
        return Err(match want {
            Ty::String => "messageExpression must evaluate to a string".to_owned(),
            _ => "cel expression must evaluate to a bool".to_owned(),
        });
    }
    Ok(program)
}

/// Finds identifiers and functions the environment does not declare, and
/// fields of `self` (and `oldSelf`) that the schema does not declare.
struct Checker<'p, S> {
    program: &'p Program,
    root: S,
    problems: Vec<String>,
}

impl<S: Shape> Checker<'_, S> {
    fn report(&mut self, id: u64, what: &str) {
        let info = self.program.source_info();
        let at = info
            .offset_for(id)
            .map(|(start, _)| position(&info.source, start))
            .unwrap_or((1, 1));
        self.problems
            .push(format!("ERROR: <input>:{}:{}: {what}", at.0, at.1));
    }

    /// Checks `e`; returns its schema node when it is a path from `self`.
    fn check<'e>(&mut self, e: &'e IdedExpr, scope: &mut Vec<&'e str>) -> Option<S> {
        match &e.expr {
            Expr::Unspecified | Expr::Literal(_) => None,
            Expr::Ident(name) => {
                let name = name.as_str();
                let shadowed = scope[2..].contains(&name);
                if (name == "self" || name == "oldSelf") && !shadowed {
                    return Some(self.root);
                }
                if !name.starts_with('@') && !scope.contains(&name) && !TYPE_NAMES.contains(&name) {
                    self.report(
                        e.id,
                        &format!("undeclared reference to '{name}' (in container '')"),
                    );
                }
                None
            }
            Expr::Call(call) => {
                let name = call.func_name.as_str();
                let is_operator = name.starts_with(['_', '@', '!', '-']);
                let mut target = call.target.as_deref();
                let mut full = name.to_string();
                if let Some(IdedExpr {
                    expr: Expr::Ident(ns),
                    ..
                }) = target
                    && NAMESPACES.contains(&ns.as_str())
                    && !scope.contains(&ns.as_str())
                {
                    full = format!("{ns}.{name}");
                    target = None;
                }
                if !is_operator && !FUNCTIONS.contains(&full.as_str()) {
                    self.report(
                        e.id,
                        &format!("undeclared reference to '{full}' (in container '')"),
                    );
                }
                if let Some(t) = target {
                    self.check(t, scope);
                }
                for a in &call.args {
                    self.check(a, scope);
                }
                None
            }
            Expr::Comprehension(c) => {
                self.check(&c.iter_range, scope);
                self.check(&c.accu_init, scope);
                let depth = scope.len();
                scope.push(&c.iter_var);
                if let Some(v2) = &c.iter_var2 {
                    scope.push(v2);
                }
                scope.push(&c.accu_var);
                self.check(&c.loop_cond, scope);
                self.check(&c.loop_step, scope);
                self.check(&c.result, scope);
                scope.truncate(depth);
                None
            }
            Expr::List(l) => {
                for x in &l.elements {
                    self.check(x, scope);
                }
                None
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    match &entry.expr {
                        EntryExpr::StructField(f) => {
                            self.check(&f.value, scope);
                        }
                        EntryExpr::MapEntry(me) => {
                            self.check(&me.key, scope);
                            self.check(&me.value, scope);
                        }
                    }
                }
                None
            }
            Expr::Select(sel) => {
                let node = self.check(&sel.operand, scope)?;
                let field = node.cel_field(&sel.field);
                if field.is_none() && node.is_closed_object() {
                    self.report(e.id, &format!("undefined field '{}'", sel.field));
                }
                field
            }
            Expr::Struct(st) => {
                self.report(
                    e.id,
                    &format!(
                        "undeclared reference to '{}' (in container '')",
                        st.type_name
                    ),
                );
                None
            }
        }
    }
}

/// 1-based line and column of char offset `offset` in `src`.
fn position(src: &str, offset: u32) -> (usize, usize) {
    let mut line = 1;
    let mut col = 1;
    for (i, c) in src.chars().enumerate() {
        if i as u64 >= u64::from(offset) {
            break;
        }
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    (line, col)
}

/// Parses a rule's `fieldPath` (`.a.b`, `.a['b.c']`, `.list[0]` is not
/// allowed) against the schema, returning it as a field path suffix
/// (`a.b`, `a.b.c`): kube-apiserver's `ValidFieldPath`.
fn parse_field_path<S: Shape>(path: &str, shape: S) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = path;
    let mut node = Some(shape);
    if rest.is_empty() {
        return Err("fieldPath must not be empty".into());
    }
    while !rest.is_empty() {
        let name: String;
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return Err("fieldPath must not contain empty segments".into());
            }
            name = r[..end].to_string();
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']").ok_or("fieldPath has an unterminated ['")?;
            name = r[..end].replace("\\'", "'").replace("\\\\", "\\");
            rest = &r[end + 2..];
        } else {
            return Err("fieldPath must start each segment with '.' or \"['\"".into());
        }
        let child = node.and_then(|n| n.field(&name));
        if child.is_none() {
            return Err(format!(
                "does not refer to a valid field: {name:?} is not in the schema"
            ));
        }
        node = child;
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(&name);
    }
    Ok(out)
}
