//! Which encoding of `GET /openapi/v2` an `Accept` header picks, decided as
//! kube-openapi's `pkg/handler` does: the header is parsed by
//! github.com/munnerz/goautoneg's `ParseAccept` and its clauses, in the
//! order it sorts them, are matched against `application/json`, then
//! `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`, then
//! `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`; the first
//! match wins, and either protobuf type is answered with the second
//! (non-deprecated) one.
//!
//! goautoneg's quirks are kept: names are compared as written (no case
//! folding); only spaces are trimmed; a `q` that does not parse counts 0,
//! and a `q=0` clause still matches; `*` alone means `*/*`; a missing
//! header means `*/*` (JSON). Its sort (`sort.Sort`, an insertion sort for
//! the dozen clauses or fewer any client sends) is done as an insertion
//! sort with its comparison: higher `q` first, then a concrete type before
//! `*`, a concrete subtype before `*`.
//!
//! Where nothing matches kube-openapi answers 406; this server answers JSON,
//! as it always has.

/// The body of `GET /openapi/v2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Swagger 2.0 as JSON.
    Json,
    /// gnostic's `openapi_v2.Document` as protobuf.
    Protobuf,
}

/// The deprecated protobuf subtype kubectl and client-go ask for.
const PROTOBUF_DEPRECATED: &str = "com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// The protobuf subtype, and the one answered for either.
const PROTOBUF: &str = "com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The media types served, in kube-openapi's order.
const SERVED: [(&str, &str, Encoding); 3] = [
    ("application", "json", Encoding::Json),
    ("application", PROTOBUF_DEPRECATED, Encoding::Protobuf),
    ("application", PROTOBUF, Encoding::Protobuf),
];

/// The encoding `accept` asks for (JSON when it asks for nothing served).
pub(crate) fn negotiate(accept: Option<&str>) -> Encoding {
    let clauses = parse_accept(accept.unwrap_or("*/*"));
    for clause in &clauses {
        for (type_, subtype, encoding) in SERVED {
            if (clause.type_ == type_ || clause.type_ == "*")
                && (clause.subtype == subtype || clause.subtype == "*")
            {
                return encoding;
            }
        }
    }
    Encoding::Json
}

/// One clause of an `Accept` header, as goautoneg keeps it.
#[derive(Debug, Clone, PartialEq)]
struct Clause {
    type_: String,
    subtype: String,
    q: f64,
}

/// goautoneg's `nextSplitElement`: before and after the first `sep`.
fn split(s: &str, sep: char) -> (&str, &str) {
    s.split_once(sep).unwrap_or((s, ""))
}

fn trim_spaces(s: &str) -> &str {
    s.trim_matches(' ')
}

/// goautoneg's `ParseAccept`, sorted.
fn parse_accept(header: &str) -> Vec<Clause> {
    let mut clauses = Vec::new();
    let mut remaining = header;
    while !remaining.is_empty() {
        let part;
        (part, remaining) = split(remaining, ',');
        let part = trim_spaces(part);
        let (media, mut params) = split(part, ';');
        let (type_, rest) = split(media, '/');
        let type_ = trim_spaces(type_);
        let subtype = if rest.is_empty() {
            if type_ != "*" {
                continue;
            }
            "*"
        } else {
            let (subtype, rest) = split(rest, '/');
            if !rest.is_empty() {
                continue;
            }
            trim_spaces(subtype)
        };
        let mut q = 1.0;
        while !params.is_empty() {
            let param;
            (param, params) = split(params, ';');
            let (name, rest) = split(param, '=');
            if rest.is_empty() {
                continue;
            }
            let (value, rest) = split(rest, '=');
            if !rest.is_empty() {
                continue;
            }
            if trim_spaces(name) == "q" {
                // strconv.ParseFloat(value, 32): 0 when malformed, ±Inf
                // when out of range. No trimming.
                q = value.parse::<f32>().map_or(0.0, f64::from);
            }
        }
        clauses.push(Clause {
            type_: type_.to_owned(),
            subtype: subtype.to_owned(),
            q,
        });
    }
    // Go's insertion sort with goautoneg's Less.
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
    clauses
}

/// goautoneg's `acceptSlice.Less`.
fn less(a: &Clause, b: &Clause) -> bool {
    a.q > b.q || (a.type_ != "*" && b.type_ == "*") || (a.subtype != "*" && b.subtype == "*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_what_kube_openapi_picks() {
        use Encoding::{Json, Protobuf};
        for (accept, want) in [
            (None, Json),
            (Some(""), Json),
            (Some("*/*"), Json),
            (Some("*"), Json),
            (Some("application/json"), Json),
            (
                Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
                Protobuf,
            ),
            (
                Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
                Protobuf,
            ),
            // What the aggregator and kubectl send.
            (Some("application/json, */*"), Json),
            (
                Some(
                    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json",
                ),
                Protobuf,
            ),
            (
                Some(
                    "application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                ),
                Protobuf,
            ),
            (
                Some(
                    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.9, application/json",
                ),
                Json,
            ),
            // A concrete type before a wildcard of the same q.
            (
                Some("*/*, application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
                Protobuf,
            ),
            (Some("application/*"), Json),
            // goautoneg's quirks: q=0 still matches; a malformed q is 0; a
            // spaced q value does not parse; no case folding.
            (Some("application/json;q=0"), Json),
            (
                Some(
                    "application/json;q=x, application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.1",
                ),
                Protobuf,
            ),
            (
                Some(
                    "application/json; q= 0.9, application/com.github.proto-openapi.spec.v2.v1.0+protobuf; q=0.5",
                ),
                Protobuf,
            ),
            (
                Some("Application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
                Json,
            ),
            (Some("text/html"), Json),
            (
                Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf/x"),
                Json,
            ),
        ] {
            assert_eq!(negotiate(accept), want, "{accept:?}");
        }
    }

    #[test]
    fn parses_like_goautoneg() {
        let c =
            parse_accept(" text/plain;q=0.5;level=1,, */*;q=0.1,image/png;q=1;x,a/b;q=0.5 ;x=1");
        let names: Vec<(&str, &str, f64)> = c
            .iter()
            .map(|c| (c.type_.as_str(), c.subtype.as_str(), c.q))
            .collect();
        assert_eq!(
            names,
            [
                ("image", "png", 1.0),
                ("text", "plain", 0.5),
                ("a", "b", 0.0),
                ("*", "*", f64::from(0.1f32))
            ]
        );
    }
}
