//! Kubernetes' CEL regex library (`k8s.io/apiserver/pkg/cel/library`
//! `Regex`): `find` and `findAll` on strings. Patterns are RE2 syntax, as
//! CEL's own `matches`; the `regex` crate accepts the same language.

use cel::common::types::{CelInt, CelList, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};
use regex::Regex;

fn compile(function: &str, pattern: &str) -> Result<Regex, ExecutionError> {
    Regex::new(pattern).map_err(|e| {
        ExecutionError::function_error(function, format!("invalid regular expression: {e}"))
    })
}

fn find(s: &CelString<'_>, pattern: &CelString<'_>) -> Result<CelString<'static>, ExecutionError> {
    let re = compile("find", pattern)?;
    Ok(re
        .find(s)
        .map(|m| m.as_str().to_string())
        .unwrap_or_default()
        .into())
}

fn find_all_n(
    s: &CelString<'_>,
    pattern: &CelString<'_>,
    n: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    let re = compile("findAll", pattern)?;
    // Go's FindAllString: a negative limit means all matches.
    let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
    let found: Vec<Box<dyn Val>> = re
        .find_iter(s)
        .take(limit)
        .map(|m| Box::new(CelString::from(m.as_str().to_string())) as Box<dyn Val>)
        .collect();
    Ok(CelList::from(found))
}

fn find_all(
    s: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelList<'static>, ExecutionError> {
    find_all_n(s, pattern, &CelInt::from(-1i64))
}

/// Registers the library on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>,
        name = "findAll")?;
    cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>,
        name = "findAll")?;
    Ok(())
}
