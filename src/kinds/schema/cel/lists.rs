//! Kubernetes' CEL lists library (`k8s.io/apiserver/pkg/cel/library`
//! `Lists`): the list members `isSorted`, `sum`, `min`, `max`, `indexOf`
//! and `lastIndexOf`.

use std::cmp::Ordering;

use cel::common::traits::Iterable;
use cel::common::types::{CelBool, CelDouble, CelInt, CelUInt, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

type Args<'b, 'v> = Vec<CowVal<'b, 'v>>;
type Ret<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn items<'b, 'v>(
    function: &str,
    list: &'b (dyn Val + 'v),
) -> Result<Vec<&'b (dyn Val + 'v)>, ExecutionError> {
    let it: &'b (dyn Iterable + 'v) = list
        .as_iterable()
        .ok_or_else(|| ExecutionError::function_error(function, "receiver is not a list"))?;
    let mut iter = it.iter();
    let mut out = Vec::new();
    while let Some(v) = iter.next() {
        out.push(v);
    }
    Ok(out)
}

fn compare(function: &str, a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    a.as_comparer()
        .ok_or_else(|| {
            ExecutionError::function_error(
                function,
                format!("values of type {} are not comparable", a.get_type().name()),
            )
        })?
        .compare(b)
}

fn one<'a, 'b, 'v>(args: &'a Args<'b, 'v>, n: usize) -> Result<&'a CowVal<'b, 'v>, ExecutionError> {
    if args.len() != n {
        return Err(ExecutionError::invalid_argument_count(n, args.len()));
    }
    Ok(&args[0])
}

fn is_sorted<'b, 'v>(args: Args<'b, 'v>) -> Ret<'b, 'v> {
    let list = one(&args, 1)?;
    let xs = items("isSorted", list.as_ref())?;
    for w in xs.windows(2) {
        if compare("isSorted", w[0], w[1])? == Ordering::Greater {
            return Ok(CowVal::owned(CelBool::from(false)));
        }
    }
    Ok(CowVal::owned(CelBool::from(true)))
}

fn sum<'b, 'v>(args: Args<'b, 'v>) -> Ret<'b, 'v> {
    let list = one(&args, 1)?;
    let xs = items("sum", list.as_ref())?;
    let overflow = || ExecutionError::function_error("sum", "integer overflow");
    let Some(first) = xs.first() else {
        return Ok(CowVal::owned(CelInt::from(0i64)));
    };
    if first.downcast_ref::<CelInt>().is_some() {
        let mut acc: i64 = 0;
        for x in &xs {
            let v = x.downcast_ref::<CelInt>().ok_or_else(|| mixed("sum"))?;
            acc = acc.checked_add(*v.inner()).ok_or_else(overflow)?;
        }
        return Ok(CowVal::owned(CelInt::from(acc)));
    }
    if first.downcast_ref::<CelUInt>().is_some() {
        let mut acc: u64 = 0;
        for x in &xs {
            let v = x.downcast_ref::<CelUInt>().ok_or_else(|| mixed("sum"))?;
            acc = acc.checked_add(*v.inner()).ok_or_else(overflow)?;
        }
        return Ok(CowVal::owned(CelUInt::from(acc)));
    }
    if first.downcast_ref::<CelDouble>().is_some() {
        let mut acc: f64 = 0.0;
        for x in &xs {
            let v = x.downcast_ref::<CelDouble>().ok_or_else(|| mixed("sum"))?;
            acc += *v.inner();
        }
        return Ok(CowVal::owned(CelDouble::from(acc)));
    }
    Err(ExecutionError::function_error(
        "sum",
        format!("cannot sum values of type {}", first.get_type().name()),
    ))
}

fn mixed(function: &str) -> ExecutionError {
    ExecutionError::function_error(function, "list elements are of different types")
}

fn extreme<'b, 'v>(function: &str, args: Args<'b, 'v>, want: Ordering) -> Ret<'b, 'v> {
    let list = one(&args, 1)?;
    let xs = items(function, list.as_ref())?;
    let Some(mut best) = xs.first().copied() else {
        return Err(ExecutionError::function_error(
            function,
            format!("{function}() on an empty list"),
        ));
    };
    for x in xs.iter().skip(1) {
        if compare(function, *x, best)? == want {
            best = *x;
        }
    }
    Ok(CowVal::Owned(best.clone_as_boxed()))
}

fn min<'b, 'v>(args: Args<'b, 'v>) -> Ret<'b, 'v> {
    extreme("min", args, Ordering::Less)
}

fn max<'b, 'v>(args: Args<'b, 'v>) -> Ret<'b, 'v> {
    extreme("max", args, Ordering::Greater)
}

fn position<'b, 'v>(function: &str, args: Args<'b, 'v>, last: bool) -> Ret<'b, 'v> {
    if args.len() != 2 {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    }
    let xs = items(function, args[0].as_ref())?;
    let needle = args[1].as_ref();
    let found = if last {
        xs.iter().rposition(|x| x.equals(needle))
    } else {
        xs.iter().position(|x| x.equals(needle))
    };
    let idx = found.map_or(-1, |i| i64::try_from(i).unwrap_or(i64::MAX));
    Ok(CowVal::owned(CelInt::from(idx)))
}

fn index_of<'b, 'v>(args: Args<'b, 'v>) -> Ret<'b, 'v> {
    position("indexOf", args, false)
}

fn last_index_of<'b, 'v>(args: Args<'b, 'v>) -> Ret<'b, 'v> {
    position("lastIndexOf", args, true)
}

/// Registers the library on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}
