//! String formats Kubernetes validates (`format` on strings), with the same
//! acceptance rules as kube-openapi's `strfmt` registry (which wraps
//! govalidator and Go's `net`, `net/mail`, `net/url` and `time` parsers).
//!
//! Kubernetes normalizes format names by removing `-` (so `date-time` and
//! `datetime` are the same format) and ignores formats it does not know;
//! [`lookup`] returns `None` for those. Numeric formats (`int32`, `int64`,
//! `float`, `double`) are range checks and live with number validation.

use std::net::Ipv6Addr;
use std::sync::LazyLock;

use regex::Regex;

use crate::golang;

/// A string format known to Kubernetes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StringFormat {
    BsonObjectId,
    Uri,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Cidr,
    Mac,
    Uuid,
    Uuid3,
    Uuid4,
    Uuid5,
    Isbn,
    Isbn10,
    Isbn13,
    CreditCard,
    Ssn,
    HexColor,
    RgbColor,
    Byte,
    Password,
    Date,
    Duration,
    DateTime,
    K8sShortName,
    K8sLongName,
}

/// Finds the string format Kubernetes validates for `name`, if any.
pub(super) fn lookup(name: &str) -> Option<StringFormat> {
    use StringFormat::*;
    let normalized: String = name.chars().filter(|&c| c != '-').collect();
    Some(match normalized.as_str() {
        "bsonobjectid" => BsonObjectId,
        "uri" => Uri,
        "email" => Email,
        "hostname" => Hostname,
        "ipv4" => Ipv4,
        "ipv6" => Ipv6,
        "cidr" => Cidr,
        "mac" => Mac,
        "uuid" => Uuid,
        "uuid3" => Uuid3,
        "uuid4" => Uuid4,
        "uuid5" => Uuid5,
        "isbn" => Isbn,
        "isbn10" => Isbn10,
        "isbn13" => Isbn13,
        "creditcard" => CreditCard,
        "ssn" => Ssn,
        "hexcolor" => HexColor,
        "rgbcolor" => RgbColor,
        "byte" => Byte,
        "password" => Password,
        "date" => Date,
        "duration" => Duration,
        "datetime" => DateTime,
        "k8sshortname" => K8sShortName,
        "k8slongname" => K8sLongName,
        _ => return None,
    })
}

/// Whether a numeric `format` is one Kubernetes keeps for `type` (`integer`
/// keeps int32/int64, `number` keeps float/double).
pub(super) fn is_numeric_format(ty: &str, format: &str) -> bool {
    matches!(
        (ty, format),
        ("integer", "int32" | "int64") | ("number", "float" | "double")
    )
}

/// Checks `s` against `format`.
pub(super) fn check(format: StringFormat, s: &str) -> bool {
    use StringFormat::*;
    match format {
        BsonObjectId => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        Uri => is_request_uri(s),
        Email => is_email(s),
        Hostname => is_hostname(s),
        Ipv4 => is_ipv4(s),
        Ipv6 => s.contains(':') && parse_ip(s).is_some(),
        Cidr => is_cidr(s),
        Mac => is_mac(s),
        Uuid => is_uuid(s, None),
        Uuid3 => is_uuid(s, Some(b'3')),
        Uuid4 => is_uuid(s, Some(b'4')),
        Uuid5 => is_uuid(s, Some(b'5')),
        Isbn => is_isbn10(s) || is_isbn13(s),
        Isbn10 => is_isbn10(s),
        Isbn13 => is_isbn13(s),
        CreditCard => is_credit_card(s),
        Ssn => is_ssn(s),
        HexColor => is_hex_color(s),
        RgbColor => is_rgb_color(s),
        Byte => is_base64(s),
        Password => true,
        Date => is_date(s),
        Duration => is_duration(s),
        DateTime => is_date_time(s),
        K8sShortName => s.len() <= 63 && is_short_name(s),
        K8sLongName => s.len() <= 253 && s.split('.').all(is_short_name),
    }
}

/// Go's ASCII `\s`.
fn is_go_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0C' | '\r' | ' ')
}

fn is_short_name(s: &str) -> bool {
    let b = s.as_bytes();
    let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match b {
        [] => false,
        [only] => ok(only),
        [first, mid @ .., last] => ok(first) && ok(last) && mid.iter().all(|c| ok(c) || *c == b'-'),
    }
}

/// `net/url.ParseRequestURI`: an absolute URI or an absolute path.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    // Scheme: a letter, then letters, digits, '+', '-', '.', ended by ':'.
    let mut scheme = None;
    for (i, c) in s.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return false,
            ':' => {
                scheme = Some(i);
                break;
            }
            _ => break,
        }
    }
    let rest = match scheme {
        Some(i) => &s[i + 1..],
        None => s,
    };
    let rest = match rest.split_once('?') {
        Some((before, _)) => before,
        None => rest,
    };
    if !rest.starts_with('/') {
        // Opaque URIs ("mailto:x") need a scheme; relative paths are invalid
        // for a request URI.
        return scheme.is_some();
    }
    let mut path = rest;
    if scheme.is_some()
        && let Some(after) = rest.strip_prefix("//")
    {
        let end = after.find('/').unwrap_or(after.len());
        if !valid_authority(&after[..end]) {
            return false;
        }
        path = &after[end..];
    }
    valid_escapes(path)
}

fn valid_escapes(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

fn valid_authority(auth: &str) -> bool {
    let (userinfo, host) = match auth.rfind('@') {
        Some(i) => (Some(&auth[..i]), &auth[i + 1..]),
        None => (None, auth),
    };
    if let Some(u) = userinfo
        && !u
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c) || !c.is_ascii())
    {
        return false;
    }
    let (host, port) = if let Some(stripped) = host.strip_prefix('[') {
        match stripped.find(']') {
            Some(i) => (&stripped[..i], &stripped[i + 1..]),
            None => return false,
        }
    } else {
        match host.rfind(':') {
            Some(i) => (&host[..i], &host[i..]),
            None => (host, ""),
        }
    };
    if !port.is_empty() {
        let Some(digits) = port.strip_prefix(':') else {
            return false;
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    host.chars()
        .all(|c| !c.is_ascii() || !" \"<>\\^`{|}".contains(c))
        && valid_escapes(host)
}

/// `net/mail.ParseAddress`, for the common forms: `local@domain` and
/// `Display Name <local@domain>`.
fn is_email(s: &str) -> bool {
    let s = s.trim_matches(is_go_space);
    let addr = if let Some(inner) = s.strip_suffix('>') {
        match inner.rfind('<') {
            Some(i) => &inner[i + 1..],
            None => return false,
        }
    } else {
        s
    };
    let Some(at) = addr.rfind('@') else {
        return false;
    };
    let (local, domain) = (&addr[..at], &addr[at + 1..]);
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        true
    } else {
        is_dot_atom(local)
    };
    let domain_ok = if domain.starts_with('[') && domain.ends_with(']') {
        domain.len() > 2
    } else {
        is_dot_atom(domain)
    };
    local_ok && domain_ok
}

fn is_dot_atom(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|atom| {
            !atom.is_empty()
                && atom.chars().all(|c| {
                    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii()
                })
        })
}

/// kube-openapi's hostname rule: a single label (which may only contain a
/// hyphen right after its first character), or dot-separated labels ending
/// in an alphabetic top-level label of 2 to 63 characters; at most 255 bytes
/// and 63 bytes per label. Labels may contain Unicode letters and symbols.
fn is_hostname(s: &str) -> bool {
    fn label_char(c: char) -> bool {
        c.is_ascii_alphanumeric()
            || "$+<=>^`|~".contains(c)
            || (!c.is_ascii() && !c.is_whitespace() && !c.is_control())
    }
    fn tld_char(c: char) -> bool {
        c.is_ascii_alphabetic() || (!c.is_ascii() && c.is_alphabetic())
    }
    if s.len() > 255 || s.split('.').any(|p| p.len() > 63) {
        return false;
    }
    if !s.contains('.') {
        let mut chars = s.chars();
        let Some(first) = chars.next() else {
            return false;
        };
        if !label_char(first) {
            return false;
        }
        let rest = chars.as_str();
        let rest = rest.strip_prefix('-').unwrap_or(rest);
        return rest.chars().count() <= 62 && rest.chars().all(label_char);
    }
    let (labels, tld) = match s.rsplit_once('.') {
        Some(x) => x,
        None => return false,
    };
    let tld_len = tld.chars().count();
    if !(2..=63).contains(&tld_len) || !tld.chars().all(tld_char) {
        return false;
    }
    labels.split('.').all(|label| {
        let mut chars = label.chars();
        let Some(first) = chars.next() else {
            return false;
        };
        let Some(last) = chars.next_back() else {
            return label_char(first);
        };
        let mid = chars.as_str();
        mid.chars().count() <= 61
            && label_char(first)
            && label_char(last)
            && mid.chars().all(|c| label_char(c) || c == '-')
    })
}

/// Go's pre-1.17 ("sloppy") IPv4 parsing: four decimal fields up to 255,
/// leading zeros allowed.
fn parse_ipv4_sloppy(s: &str) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut fields = s.split('.');
    for slot in &mut out {
        let f = fields.next()?;
        if f.is_empty() || f.len() > 8 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u32 = f.parse().ok()?;
        *slot = u8::try_from(n).ok()?;
    }
    fields.next().is_none().then_some(out)
}

/// Parses an IPv4 (sloppy) or IPv6 address; returns its bit length.
fn parse_ip(s: &str) -> Option<u32> {
    if parse_ipv4_sloppy(s).is_some() {
        return Some(32);
    }
    if s.contains(':') {
        if s.parse::<Ipv6Addr>().is_ok() {
            return Some(128);
        }
        // IPv6 with an embedded IPv4 part that has leading zeros.
        if let Some(i) = s.rfind(':')
            && let Some(v4) = parse_ipv4_sloppy(&s[i + 1..])
        {
            let rebuilt = format!("{}{}.{}.{}.{}", &s[..=i], v4[0], v4[1], v4[2], v4[3]);
            return rebuilt.parse::<Ipv6Addr>().is_ok().then_some(128);
        }
    }
    None
}

fn is_ipv4(s: &str) -> bool {
    s.contains('.') && parse_ip(s).is_some()
}

fn is_cidr(s: &str) -> bool {
    let Some((addr, mask)) = s.split_once('/') else {
        return false;
    };
    let Some(bits) = parse_ip(addr) else {
        return false;
    };
    !mask.is_empty()
        && mask.len() <= 8
        && mask.bytes().all(|b| b.is_ascii_digit())
        && mask.parse::<u32>().is_ok_and(|m| m <= bits)
}

/// `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx:..`, `xx-xx-..` or
/// `xxxx.xxxx.xxxx`.
fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let n_ok = |n: usize| matches!(n, 6 | 8 | 20);
    if b[2] == b':' || b[2] == b'-' {
        if !(b.len() + 1).is_multiple_of(3) || !n_ok((b.len() + 1) / 3) {
            return false;
        }
        let sep = b[2];
        b.chunks(3).all(|c| {
            c[0].is_ascii_hexdigit() && c[1].is_ascii_hexdigit() && (c.len() == 2 || c[2] == sep)
        })
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) || !n_ok(2 * (b.len() + 1) / 5) {
            return false;
        }
        b.chunks(5)
            .all(|c| c[..4].iter().all(u8::is_ascii_hexdigit) && (c.len() == 4 || c[4] == b'.'))
    } else {
        false
    }
}

/// `(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?V[0-9a-f]{3}-?[89ab]?[0-9a-f]{3}-?[0-9a-f]{12}$`
/// where `V` (and the variant nibble) apply only to versioned UUIDs.
fn is_uuid(s: &str, version: Option<u8>) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let mut hex_digits = [0u8; 32];
    let mut n = 0;
    for (group, len) in [8usize, 4, 4, 4, 12].into_iter().enumerate() {
        if group > 0 && b.get(i) == Some(&b'-') {
            i += 1;
        }
        for _ in 0..len {
            match b.get(i) {
                Some(c) if c.is_ascii_hexdigit() => hex_digits[n] = c.to_ascii_lowercase(),
                _ => return false,
            }
            n += 1;
            i += 1;
        }
    }
    if i != b.len() {
        return false;
    }
    match version {
        None => true,
        Some(v) => {
            hex_digits[12] == v
                && (v == b'3' || matches!(hex_digits[16], b'8' | b'9' | b'a' | b'b'))
        }
    }
}

fn isbn_digits(s: &str) -> String {
    s.chars().filter(|&c| !is_go_space(c) && c != '-').collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    if b.len() != 10
        || !b[..9].iter().all(u8::is_ascii_digit)
        || !(b[9].is_ascii_digit() || b[9] == b'X')
    {
        return false;
    }
    let mut sum: u32 = b[..9]
        .iter()
        .enumerate()
        .map(|(i, c)| (i as u32 + 1) * u32::from(c - b'0'))
        .sum();
    sum += 10
        * if b[9] == b'X' {
            10
        } else {
            u32::from(b[9] - b'0')
        };
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = b[..12]
        .iter()
        .enumerate()
        .map(|(i, c)| if i % 2 == 0 { 1 } else { 3 } * u32::from(c - b'0'))
        .sum();
    u32::from(b[12] - b'0') == (10 - sum % 10) % 10
}

static CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        "^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
    )
    .expect("static credit card pattern compiles")
});

/// govalidator's `IsCreditCard`: non-digits are ignored, the digits must
/// look like a known issuer's number and pass the Luhn check.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !CREDIT_CARD.is_match(&digits) {
        return false;
    }
    let mut sum = 0u32;
    for (i, c) in digits.bytes().rev().enumerate() {
        let mut n = u32::from(c - b'0');
        if i % 2 == 1 {
            n *= 2;
            if n >= 10 {
                n = n % 10 + 1;
            }
        }
        sum += n;
    }
    sum.is_multiple_of(10)
}

fn is_ssn(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 11 {
        return false;
    }
    let digits = |r: &[u8]| r.iter().all(u8::is_ascii_digit);
    let sep = |c: u8| c == b'-' || c == b' ';
    digits(&b[0..3]) && sep(b[3]) && digits(&b[4..6]) && sep(b[6]) && digits(&b[7..11])
}

fn is_hex_color(s: &str) -> bool {
    let h = s.strip_prefix('#').unwrap_or(s);
    (h.len() == 3 || h.len() == 6) && h.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `rgb(R, G, B)` with components 0-255 without leading zeros.
fn is_rgb_color(s: &str) -> bool {
    let Some(inner) = s.strip_prefix("rgb(").and_then(|r| r.strip_suffix(')')) else {
        return false;
    };
    let parts: Vec<&str> = inner.split(',').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            let p = p.trim_matches(is_go_space);
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p == "0" || !p.starts_with('0'))
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// Standard base64 with padding, at least one quantum.
fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return false;
    }
    let body_len = b.len() - b.iter().rev().take(2).take_while(|&&c| c == b'=').count();
    b[..body_len]
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: &[u8]| -> Option<u32> {
        r.iter().try_fold(0u32, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let (Some(year), Some(month), Some(day)) = (num(&b[0..4]), num(&b[5..7]), num(&b[8..10]))
    else {
        return false;
    };
    let leap = (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// kube-openapi's `IsDateTime`: a date, `T` (any case), then
/// `HH:MM:SS`, an optional fraction, and `Z` or a numeric offset.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    // kube-openapi lower-cases, splits on "t" and looks at the first two
    // pieces only.
    let mut parts = s.split(['t', 'T']);
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let b = time.as_bytes();
    let two = |i: usize| -> Option<&[u8]> {
        let r = b.get(i..i + 2)?;
        r.iter().all(u8::is_ascii_digit).then_some(r)
    };
    let (Some(h), Some(m), Some(sec)) = (two(0), two(3), two(6)) else {
        return false;
    };
    if b.get(2) != Some(&b':') || b.get(5) != Some(&b':') {
        return false;
    }
    if h > b"23".as_slice() || m > b"59".as_slice() || sec > b"59".as_slice() {
        return false;
    }
    let rest = &time[8..];
    let zone_ok = |z: &str| {
        let zb = z.as_bytes();
        z.eq_ignore_ascii_case("z")
            || (zb.len() == 6
                && (zb[0] == b'+' || zb[0] == b'-')
                && zb[1].is_ascii_digit()
                && zb[2].is_ascii_digit()
                && zb[3] == b':'
                && zb[4].is_ascii_digit()
                && zb[5].is_ascii_digit())
    };
    if zone_ok(rest) {
        return true;
    }
    // Optional `(.[0-9]+)`: any one character, then digits.
    let mut chars = rest.chars();
    if chars.next().is_none() {
        return false;
    }
    let after = chars.as_str();
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && zone_ok(&after[digits..])
}

/// Go's `time.ParseDuration`, or kube-openapi's lenient fallback that accepts
/// any text containing `<digits><unit>` such as `3 days`.
fn is_duration(s: &str) -> bool {
    golang::parse_duration(s).is_ok() || lenient_duration(s)
}

fn lenient_duration(s: &str) -> bool {
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    let mut rest = s;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let from_digits = &rest[start..];
        let n_digits = from_digits.bytes().take_while(u8::is_ascii_digit).count();
        let after_digits = &from_digits[n_digits..];
        let after_space = after_digits.trim_start_matches(is_go_space);
        let unit_len = after_space
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_alphabetic() || c == 'µ'))
            .map_or(after_space.len(), |(i, _)| i);
        if unit_len == 0 {
            rest = &from_digits[1..];
            continue;
        }
        if from_digits[..n_digits].parse::<i64>().is_err() {
            return false;
        }
        let unit = after_space[..unit_len].to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit == *v {
                    ok = true;
                }
            }
        }
        rest = &after_space[unit_len..];
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::StringFormat::*;
    use super::*;

    fn ok(f: StringFormat, s: &str) -> bool {
        check(f, s)
    }

    #[test]
    fn lookup_normalizes_dashes_and_ignores_unknown() {
        assert_eq!(lookup("date-time"), Some(DateTime));
        assert_eq!(lookup("datetime"), Some(DateTime));
        assert_eq!(lookup("k8s-short-name"), Some(K8sShortName));
        assert_eq!(lookup("uri-reference"), None);
        assert_eq!(lookup("int32"), None);
        assert!(is_numeric_format("integer", "int32"));
        assert!(!is_numeric_format("number", "int32"));
    }

    #[test]
    fn dates_and_times() {
        assert!(ok(Date, "2024-02-29"));
        assert!(!ok(Date, "2023-02-29"));
        assert!(!ok(Date, "2024-13-01"));
        assert!(!ok(Date, "2024-1-01"));
        assert!(ok(DateTime, "2014-12-15T19:30:20.000Z"));
        assert!(ok(DateTime, "2014-12-15t19:30:20+01:00"));
        assert!(ok(DateTime, "2014-12-15T19:30:20Z"));
        assert!(!ok(DateTime, "2014-12-15T24:30:20Z"));
        assert!(!ok(DateTime, "2014-12-15 19:30:20Z"));
        assert!(!ok(DateTime, "2014-12-15T19:30:20"));
        assert!(!ok(DateTime, "yesterday"));
        assert!(ok(Duration, "1h30m"));
        assert!(ok(Duration, "-1.5s"));
        assert!(ok(Duration, "0"));
        assert!(ok(Duration, "300ms"));
        assert!(ok(Duration, "3 days"));
        assert!(ok(Duration, "2 weeks"));
        assert!(!ok(Duration, "soon"));
        assert!(!ok(Duration, "5"));
        assert!(!ok(Duration, ""));
    }

    #[test]
    fn network_formats() {
        assert!(ok(Ipv4, "10.0.0.1"));
        assert!(ok(Ipv4, "010.000.000.001"));
        assert!(!ok(Ipv4, "256.0.0.1"));
        assert!(!ok(Ipv4, "10.0.0"));
        assert!(!ok(Ipv4, "::1"));
        assert!(ok(Ipv6, "::1"));
        assert!(ok(Ipv6, "2001:db8::ff00:42:8329"));
        assert!(!ok(Ipv6, "10.0.0.1"));
        assert!(ok(Cidr, "10.0.0.0/8"));
        assert!(ok(Cidr, "2001:db8::/32"));
        assert!(!ok(Cidr, "10.0.0.0/33"));
        assert!(!ok(Cidr, "10.0.0.0"));
        assert!(ok(Mac, "00:1A:2b:3c:4d:5e"));
        assert!(ok(Mac, "00-1a-2b-3c-4d-5e"));
        assert!(ok(Mac, "001a.2b3c.4d5e"));
        assert!(!ok(Mac, "00:1a:2b:3c:4d"));
        assert!(ok(Hostname, "example.com"));
        assert!(ok(Hostname, "a.b-c.example"));
        assert!(ok(Hostname, "localhost"));
        assert!(
            !ok(Hostname, "my-host"),
            "kube-openapi quirk: one label, hyphen not at 2nd char"
        );
        assert!(!ok(Hostname, "example.c0m"));
        assert!(!ok(Hostname, "-bad.example.com"));
        assert!(!ok(Hostname, "bad..example.com"));
        assert!(ok(Uri, "https://example.com/a?b=c"));
        assert!(ok(Uri, "/just/a/path"));
        assert!(ok(Uri, "mailto:someone@example.com"));
        assert!(!ok(Uri, "relative/path"));
        assert!(!ok(Uri, "https://exa mple.com/"));
        assert!(!ok(Uri, "https://example.com/%zz"));
        assert!(!ok(Uri, ""));
        assert!(ok(Email, "a.b+c@example.com"));
        assert!(ok(Email, "Alice <alice@example.com>"));
        assert!(!ok(Email, "not-an-email"));
        assert!(!ok(Email, "a..b@example.com"));
    }

    #[test]
    fn identifiers_and_encodings() {
        assert!(ok(Uuid, "123e4567-e89b-12d3-a456-426614174000"));
        assert!(ok(Uuid, "123E4567E89B12D3A456426614174000"));
        assert!(!ok(Uuid, "123e4567-e89b-12d3-a456-42661417400"));
        assert!(ok(Uuid3, "a3bb189e-8bf9-3888-9912-ace4e6543002"));
        assert!(!ok(Uuid3, "123e4567-e89b-12d3-a456-426614174000"));
        assert!(ok(Uuid4, "f47ac10b-58cc-4372-a567-0e02b2c3d479"));
        assert!(!ok(Uuid4, "f47ac10b-58cc-4372-c567-0e02b2c3d479"));
        assert!(ok(Uuid5, "21f7f8de-8051-5b89-8680-0195ef798b6a"));
        assert!(ok(BsonObjectId, "507f1f77bcf86cd799439011"));
        assert!(!ok(BsonObjectId, "507f1f77bcf86cd79943901"));
        assert!(ok(Byte, "aGVsbG8="));
        assert!(ok(Byte, "aGVsbG8h"));
        assert!(!ok(Byte, "aGVsbG8"));
        assert!(!ok(Byte, ""));
        assert!(!ok(Byte, "a==="));
        assert!(ok(Isbn10, "0-321-75104-3"));
        assert!(ok(Isbn10, "080442957X"));
        assert!(!ok(Isbn10, "0321751044"));
        assert!(ok(Isbn13, "978-0321751041"));
        assert!(!ok(Isbn13, "978-0321751042"));
        assert!(ok(Isbn, "978 0321751041"));
        assert!(ok(CreditCard, "4111 1111 1111 1111"));
        assert!(!ok(CreditCard, "4111 1111 1111 1112"));
        assert!(ok(Ssn, "123-45-6789"));
        assert!(!ok(Ssn, "123456789"));
        assert!(ok(HexColor, "#fff"));
        assert!(ok(HexColor, "A0B1C2"));
        assert!(!ok(HexColor, "#ffff"));
        assert!(ok(RgbColor, "rgb(255, 0, 10)"));
        assert!(!ok(RgbColor, "rgb(256,0,0)"));
        assert!(!ok(RgbColor, "rgb(01,0,0)"));
        assert!(ok(Password, ""));
        assert!(ok(K8sShortName, "my-app"));
        assert!(!ok(K8sShortName, "My-app"));
        assert!(ok(K8sLongName, "my.app-1.example"));
        assert!(!ok(K8sLongName, "my..app"));
    }
}
