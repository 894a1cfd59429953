//! Kubernetes' CEL URL library (`k8s.io/apiserver/pkg/cel/library` `URLs`):
//! `url(string)`, `isURL(string)` and the members `getScheme`, `getHost`,
//! `getHostname`, `getPort`, `getEscapedPath` and `getQuery`.
//!
//! URLs are parsed as Go's `url.ParseRequestURI` does (an absolute URL or
//! an absolute path, no fragment handling), not as the WHATWG URL standard
//! that the `url` crate follows: `url('https://a.b:8080/x?y=1')` keeps the
//! path as written and reports the port as a string.

use std::any::Any;
use std::collections::HashMap;

use cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString, Type};
use cel::common::value::{StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// The CEL type of URLs.
pub(super) static URL_TYPE: Type = Type::new_unspecified_type("kubernetes.URL");

/// A parsed URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    scheme: String,
    host: String,
    /// The path as written (still escaped).
    path: String,
    query: String,
}

impl Val for Url {
    fn get_type(&self) -> &Type {
        <Self as Val>::cel_type()
    }
    fn cel_type() -> &'static Type {
        &URL_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Url>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}

impl StaticVal for Url {}

impl Url {
    /// Parses `raw` as Go's `url.ParseRequestURI`.
    pub(crate) fn parse(raw: &str) -> Result<Url, String> {
        let fail = |why: &str| format!("parse {raw:?}: {why}");
        if raw.is_empty() {
            return Err(fail("empty url"));
        }
        if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
            return Err(fail("net/url: invalid control character in URL"));
        }
        let (scheme, rest) = split_scheme(raw).map_err(&fail)?;
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, q.to_string()),
            None => (rest, String::new()),
        };
        if !rest.starts_with('/') {
            // An opaque URL (`mailto:x`) has a scheme; anything else is not
            // a request URI.
            if scheme.is_empty() {
                return Err(fail("invalid URI for request"));
            }
            return Ok(Url {
                scheme,
                host: String::new(),
                path: String::new(),
                query,
            });
        }
        let (host, path) = match rest.strip_prefix("//").filter(|_| !scheme.is_empty()) {
            Some(after) => {
                let end = after.find('/').unwrap_or(after.len());
                let authority = &after[..end];
                let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                check_host(host).map_err(|e| fail(&e))?;
                (host.to_string(), after[end..].to_string())
            }
            None => (String::new(), rest.to_string()),
        };
        Ok(Url {
            scheme,
            host,
            path,
            query,
        })
    }

    fn hostname(&self) -> &str {
        let host = &self.host;
        if let Some(inner) = host.strip_prefix('[') {
            return inner.split(']').next().unwrap_or_default();
        }
        host.split(':').next().unwrap_or_default()
    }

    fn port(&self) -> &str {
        let after = match self.host.rfind(']') {
            Some(i) => &self.host[i + 1..],
            None => &self.host,
        };
        after.rsplit_once(':').map_or("", |(_, p)| p)
    }
}

/// Go's `getScheme`: a scheme is a letter followed by letters, digits, `+`,
/// `-` and `.`, ended by `:`; without one the whole input is the rest.
fn split_scheme(raw: &str) -> Result<(String, &str), &'static str> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err("missing protocol scheme"),
            ':' => return Ok((raw[..i].to_ascii_lowercase(), &raw[i + 1..])),
            _ => return Ok((String::new(), raw)),
        }
    }
    Ok((String::new(), raw))
}

/// The port after the host must be digits; a bracketed IPv6 host must close.
fn check_host(host: &str) -> Result<(), String> {
    let port = if let Some(inner) = host.strip_prefix('[') {
        let Some(end) = inner.find(']') else {
            return Err("missing ']' in host".to_string());
        };
        let after = &inner[end + 1..];
        match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(format!("invalid port {after:?} after host")),
        }
    } else {
        host.rsplit_once(':').map(|(_, p)| p)
    };
    if let Some(p) = port
        && !p.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!("invalid port \":{p}\" after host"));
    }
    Ok(())
}

/// Percent-decodes a query component, `+` standing for a space, as Go's
/// `url.QueryUnescape`.
fn query_unescape(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn url(s: &CelString<'_>) -> Result<Url, ExecutionError> {
    Url::parse(s).map_err(|e| ExecutionError::function_error("url", e))
}

fn is_url(s: &CelString<'_>) -> CelBool {
    Url::parse(s).is_ok().into()
}

fn get_scheme(u: &Url) -> CelString<'static> {
    u.scheme.clone().into()
}

fn get_host(u: &Url) -> CelString<'static> {
    u.host.clone().into()
}

fn get_hostname(u: &Url) -> CelString<'static> {
    u.hostname().to_string().into()
}

fn get_port(u: &Url) -> CelString<'static> {
    u.port().to_string().into()
}

fn get_escaped_path(u: &Url) -> CelString<'static> {
    u.path.clone().into()
}

fn get_query(u: &Url) -> CelMap<'static> {
    // Go's url.ParseQuery: `&`-separated pairs; pairs with `;` or bad
    // escapes are skipped.
    let mut map: HashMap<String, Vec<String>> = HashMap::new();
    for pair in u
        .query
        .split('&')
        .filter(|p| !p.is_empty() && !p.contains(';'))
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if let (Some(k), Some(v)) = (query_unescape(k), query_unescape(v)) {
            map.entry(k).or_default().push(v);
        }
    }
    let entries: HashMap<CelMapKey, Box<dyn Val>> = map
        .into_iter()
        .map(|(k, vs)| {
            let list: Vec<Box<dyn Val>> = vs
                .into_iter()
                .map(|v| Box::new(CelString::from(v)) as Box<dyn Val>)
                .collect();
            (
                CelMapKey::from(k),
                Box::new(CelList::from(list)) as Box<dyn Val>,
            )
        })
        .collect();
    CelMap::from(entries)
}

/// Registers the library on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(URL_TYPE.to_owned())?;
    cel::add_overload!(env, fn url: (CelString) -> Result<Url>)?;
    cel::add_overload!(env, fn is_url: (CelString) -> CelBool, name = "isURL")?;
    cel::add_member_overload!(env, fn get_scheme: (Url) -> CelString, name = "getScheme")?;
    cel::add_member_overload!(env, fn get_host: (Url) -> CelString, name = "getHost")?;
    cel::add_member_overload!(env, fn get_hostname: (Url) -> CelString, name = "getHostname")?;
    cel::add_member_overload!(env, fn get_port: (Url) -> CelString, name = "getPort")?;
    cel::add_member_overload!(env, fn get_escaped_path: (Url) -> CelString,
        name = "getEscapedPath")?;
    cel::add_member_overload!(env, fn get_query: (Url) -> CelMap, name = "getQuery")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_go_parse_request_uri() {
        let u = Url::parse("HTTPS://user@example.com:8443/a%20b/c?x=1&x=2&y=a+b").unwrap();
        assert_eq!(u.scheme, "https");
        assert_eq!(u.host, "example.com:8443");
        assert_eq!(u.hostname(), "example.com");
        assert_eq!(u.port(), "8443");
        assert_eq!(u.path, "/a%20b/c");
        let v6 = Url::parse("http://[::1]:80/").unwrap();
        assert_eq!(v6.hostname(), "::1");
        assert_eq!(v6.port(), "80");
        assert_eq!(Url::parse("/just/a/path").unwrap().path, "/just/a/path");
        assert_eq!(Url::parse("mailto:a@b").unwrap().scheme, "mailto");
        for bad in [
            "",
            "example.com",
            ":x",
            "http://h:port/",
            "http://[::1/",
            "a b",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }
}
