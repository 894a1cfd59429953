//! The CEL environment rules are compiled and run in: CEL's standard
//! library with optional values, cel-go's strings extension (`charAt`,
//! `indexOf`, `lowerAscii`, `split`, `join`, ...), and Kubernetes' quantity,
//! URL, lists and regex libraries. Built once per process; rules share it.

use std::sync::{Arc, LazyLock};

use cel::Env;

use super::{lists, quantity, regex, url};

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    let added = env
        .add_extension(cel::extensions::strings)
        .and_then(|()| quantity::library(&mut env))
        .and_then(|()| url::library(&mut env))
        .and_then(|()| lists::library(&mut env))
        .and_then(|()| regex::library(&mut env));
    // The libraries are fixed at build time: a clash is a programming error
    // that every test catches.
    if let Err(e) = added {
        panic!("CEL libraries clash: {e}");
    }
    Arc::new(env)
});

/// The shared environment.
pub(super) fn env() -> &'static Arc<Env> {
    &ENV
}

/// Functions (and member functions) the environment declares, by name: what
/// a rule may call. Operators (`_+_`, `@in`, ...) are not listed.
pub(super) const FUNCTIONS: &[&str] = &[
    // standard library
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "dyn",
    "type",
    "duration",
    "timestamp",
    "getDate",
    "getDayOfMonth",
    "getDayOfWeek",
    "getDayOfYear",
    "getFullYear",
    "getHours",
    "getMilliseconds",
    "getMinutes",
    "getMonth",
    "getSeconds",
    "optional.of",
    "optional.ofNonZeroValue",
    "optional.none",
    "hasValue",
    "value",
    "or",
    "orValue",
    // strings extension
    "charAt",
    "indexOf",
    "lastIndexOf",
    "join",
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "split",
    "substring",
    "format",
    "strings.quote",
    "reverse",
    // Kubernetes quantity
    "quantity",
    "isQuantity",
    "sign",
    "isInteger",
    "asInteger",
    "asApproximateFloat",
    "add",
    "sub",
    "isLessThan",
    "isGreaterThan",
    "compareTo",
    // Kubernetes URLs
    "url",
    "isURL",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    // Kubernetes lists
    "isSorted",
    "sum",
    "min",
    "max",
    // Kubernetes regex
    "find",
    "findAll",
];

/// Namespaces of namespaced functions (`optional.of`).
pub(super) const NAMESPACES: &[&str] = &["optional", "strings"];

/// Type names an expression may use as values (`type(x) == string`).
pub(super) const TYPE_NAMES: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "duration",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "timestamp",
    "type",
    "uint",
    "optional_type",
];
