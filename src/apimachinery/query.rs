//! Query parameters as kube-apiserver reads them: percent-decoded, `+` as a
//! space, the first value of a repeated key winning for a single-valued
//! option (Go's `Query().Get`, and the parameter codec's `(*in)[0]`), every
//! value kept for a list-valued one ([`Query::all`]: `dryRun` is a
//! `[]string`), and boolean flags as its codec reads a bool ([`flag`]).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::ops::Deref;

/// Decoded query parameters: derefs to the first value of each key (as
/// Go's `Query().Get`); [`Query::all`] gives every value of a key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    first: HashMap<String, String>,
    /// The values after the first of each repeated key (none for most
    /// requests).
    later: HashMap<String, Vec<String>>,
}

impl Query {
    /// No parameters.
    pub fn new() -> Query {
        Query::default()
    }

    /// Every value of `key`, in the order given (empty when absent).
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.first
            .get(key)
            .map(String::as_str)
            .into_iter()
            .chain(
                self.later
                    .get(key)
                    .into_iter()
                    .flatten()
                    .map(String::as_str),
            )
            .collect()
    }
}

impl Deref for Query {
    type Target = HashMap<String, String>;

    fn deref(&self) -> &Self::Target {
        &self.first
    }
}

/// Decodes a query string.
pub fn parse_query(query: Option<&str>) -> Query {
    let mut out = Query::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, value) = (percent_decode(k), percent_decode(v));
        match out.first.entry(key) {
            Entry::Occupied(first) => out
                .later
                .entry(first.key().clone())
                .or_default()
                .push(value),
            Entry::Vacant(first) => {
                first.insert(value);
            }
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a query flag is true the way kube-apiserver's parameter codec
/// reads a bool (apimachinery's `Convert_Slice_string_To_bool`): present
/// with any value but `0` and `false` (in any case), the empty value
/// included (`?watch`).
pub fn flag(query: &Query, key: &str) -> bool {
    query
        .get(key)
        .is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let q = parse_query(Some(
            "labelSelector=app%3Dweb%2Ctier+in+%28a%29&limit=500&x",
        ));
        assert_eq!(q["labelSelector"], "app=web,tier in (a)");
        assert_eq!(q["limit"], "500");
        assert_eq!(q["x"], "");
        // A repeated key: the first value, as Go's `Values.Get`.
        let q = parse_query(Some("limit=1&limit=2&x=a&x"));
        assert_eq!((q["limit"].as_str(), q["x"].as_str()), ("1", "a"));
        // Every value of a list-valued one, in order.
        assert_eq!(q.all("x"), ["a", ""]);
        assert_eq!(q.all("limit"), ["1", "2"]);
        assert!(q.all("absent").is_empty());
    }

    #[test]
    fn flags_read_as_kube_apiserver_reads_a_bool() {
        let q = parse_query(Some("a=true&b=1&c=yes&d=&e&f=false&g=FALSE&h=0&i=False"));
        for key in ["a", "b", "c", "d", "e"] {
            assert!(flag(&q, key), "{key}");
        }
        for key in ["f", "g", "h", "i", "absent"] {
            assert!(!flag(&q, key), "{key}");
        }
    }
}
