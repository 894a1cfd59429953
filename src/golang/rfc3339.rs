//! `time.Parse(time.RFC3339, s)`'s errors, as Kubernetes' `metav1.Time`
//! returns them for a timestamp that is a string but no time
//! (`parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse
//! "yesterday" as "2006"`): Go's layout parser walked over RFC 3339's
//! elements (`time/format.go`'s `parse`, `getnum`, `skip`), with its
//! range checks and `extra text`.

use super::duration::time_quote;

/// `time.RFC3339`.
const LAYOUT: &str = "2006-01-02T15:04:05Z07:00";

/// The error of parsing `value` as an RFC 3339 time, or `None` when it is
/// one.
pub fn parse_error(value: &str) -> Option<String> {
    parse(value.as_bytes()).err().map(|e| e.text(value))
}

/// Why a value does not parse.
enum Failure<'a> {
    /// `cannot parse <rest of the value> as <layout element>`.
    Element(&'static str, &'a [u8]),
    /// `<what> out of range`.
    Range(&'static str),
    /// Text after the time.
    Extra(&'a [u8]),
}

impl Failure<'_> {
    fn text(&self, value: &str) -> String {
        match self {
            Failure::Element(layout, rest) => format!(
                "parsing time {} as {}: cannot parse {} as {}",
                time_quote(value),
                time_quote(LAYOUT),
                time_quote(&String::from_utf8_lossy(rest)),
                time_quote(layout)
            ),
            Failure::Range(what) => {
                format!("parsing time {}: {what} out of range", time_quote(value))
            }
            Failure::Extra(rest) => format!(
                "parsing time {}: extra text: {}",
                time_quote(value),
                time_quote(&String::from_utf8_lossy(rest))
            ),
        }
    }
}

fn digit(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

/// `getnum`: one or (`fixed`: exactly) two leading digits.
fn getnum(s: &[u8], fixed: bool) -> Option<(u32, &[u8])> {
    if !digit(s, 0) {
        return None;
    }
    if !digit(s, 1) {
        return (!fixed).then(|| (u32::from(s[0] - b'0'), &s[1..]));
    }
    Some((
        u32::from(s[0] - b'0') * 10 + u32::from(s[1] - b'0'),
        &s[2..],
    ))
}

/// `skip`: the literal `prefix` (one character here) at the start of `s`.
fn skip<'a>(s: &'a [u8], prefix: &'static str) -> Result<&'a [u8], Failure<'a>> {
    s.strip_prefix(prefix.as_bytes())
        .ok_or(Failure::Element(prefix, s))
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn parse(s: &[u8]) -> Result<(), Failure<'_>> {
    // 2006
    if s.len() < 4 || !s[..4].iter().all(u8::is_ascii_digit) {
        return Err(Failure::Element("2006", s));
    }
    let year = s[..4].iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'));
    let s = skip(&s[4..], "-")?;
    // 01
    let (month, s) = getnum(s, true).ok_or(Failure::Element("01", s))?;
    if !(1..=12).contains(&month) {
        return Err(Failure::Range("month"));
    }
    let s = skip(s, "-")?;
    // 02: any two digits; the day is checked against the month at the end.
    let (day, s) = getnum(s, true).ok_or(Failure::Element("02", s))?;
    let s = skip(s, "T")?;
    // 15
    let (hour, s) = getnum(s, false).ok_or(Failure::Element("15", s))?;
    if hour >= 24 {
        return Err(Failure::Range("hour"));
    }
    let s = skip(s, ":")?;
    // 04
    let (minute, s) = getnum(s, true).ok_or(Failure::Element("04", s))?;
    if minute >= 60 {
        return Err(Failure::Range("minute"));
    }
    let s = skip(s, ":")?;
    // 05, and a fraction the layout does not name but accepts.
    let (second, mut s) = getnum(s, true).ok_or(Failure::Element("05", s))?;
    if second >= 60 {
        return Err(Failure::Range("second"));
    }
    if s.len() >= 2 && matches!(s[0], b'.' | b',') && digit(s, 1) {
        let digits = s[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        s = &s[1 + digits..];
    }
    // Z07:00
    let s = match s.strip_prefix(b"Z") {
        Some(rest) => rest,
        None => {
            let bad = Failure::Element("Z07:00", s);
            if s.len() < 6 || s[3] != b':' {
                return Err(bad);
            }
            let hours = getnum(&s[1..3], true);
            let minutes = hours.and_then(|_| getnum(&s[4..6], true));
            let (hr, mm) = (hours.map_or(0, |h| h.0), minutes.map_or(0, |m| m.0));
            // Go sets the hour's range error, then the minute's over it.
            if mm > 60 {
                return Err(Failure::Range("time zone offset minute"));
            }
            if hr > 24 {
                return Err(Failure::Range("time zone offset hour"));
            }
            if minutes.is_none() || !matches!(s[0], b'+' | b'-') {
                return Err(bad);
            }
            &s[6..]
        }
    };
    if !s.is_empty() {
        return Err(Failure::Extra(s));
    }
    if day < 1 || day > days_in(month, year) {
        return Err(Failure::Range("day"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's answers (`time.Parse(time.RFC3339, value)`), as kube-apiserver
    /// gives them for `metadata.creationTimestamp` (the differential test
    /// asks it again for a few).
    #[test]
    fn errors_are_gos() {
        let p = |v: &str| {
            format!("parsing time \"{v}\" as \"2006-01-02T15:04:05Z07:00\": cannot parse ")
        };
        let cases = [
            (
                "yesterday",
                format!("{}\"yesterday\" as \"2006\"", p("yesterday")),
            ),
            ("", format!("{}\"\" as \"2006\"", p(""))),
            ("2026-01-01", format!("{}\"\" as \"T\"", p("2026-01-01"))),
            (
                "2026/01/01",
                format!("{}\"/01/01\" as \"-\"", p("2026/01/01")),
            ),
            (
                "2026-1-01T00:00:00Z",
                format!("{}\"1-01T00:00:00Z\" as \"01\"", p("2026-1-01T00:00:00Z")),
            ),
            (
                "2026-01-01T10:00:00",
                format!("{}\"\" as \"Z07:00\"", p("2026-01-01T10:00:00")),
            ),
            (
                "2026-01-01T10:00:00+0100",
                format!("{}\"+0100\" as \"Z07:00\"", p("2026-01-01T10:00:00+0100")),
            ),
            (
                "2026-01-01 10:00:00Z",
                format!("{}\" 10:00:00Z\" as \"T\"", p("2026-01-01 10:00:00Z")),
            ),
            (
                "2026-13-01T00:00:00Z",
                "parsing time \"2026-13-01T00:00:00Z\": month out of range".into(),
            ),
            (
                "2026-02-30T00:00:00Z",
                "parsing time \"2026-02-30T00:00:00Z\": day out of range".into(),
            ),
            (
                "2026-01-01T25:00:00Z",
                "parsing time \"2026-01-01T25:00:00Z\": hour out of range".into(),
            ),
            (
                "2026-01-01T10:61:00Z",
                "parsing time \"2026-01-01T10:61:00Z\": minute out of range".into(),
            ),
            (
                "2026-01-01T10:00:00+25:00",
                "parsing time \"2026-01-01T10:00:00+25:00\": time zone offset hour out of range"
                    .into(),
            ),
            (
                "2026-01-01T10:00:00+25:61",
                "parsing time \"2026-01-01T10:00:00+25:61\": time zone offset minute out of range"
                    .into(),
            ),
            (
                "2026-01-01T10:00:00Zjunk",
                "parsing time \"2026-01-01T10:00:00Zjunk\": extra text: \"junk\"".into(),
            ),
            (
                "2026-01-01T10:00:00Zé",
                "parsing time \"2026-01-01T10:00:00Z\\xc3\\xa9\": extra text: \"\\xc3\\xa9\""
                    .into(),
            ),
        ];
        for (value, want) in cases {
            assert_eq!(
                parse_error(value).as_deref(),
                Some(want.as_str()),
                "{value}"
            );
        }
    }

    /// Every truncation and every one-character change of a time, some
    /// non-ASCII: an answer each, never a panic.
    #[test]
    fn any_text_gets_an_answer() {
        let base: Vec<char> = "2026-01-01T10:00:00.5+01:00".chars().collect();
        for end in 0..=base.len() {
            let _ = parse_error(&base[..end].iter().collect::<String>());
        }
        for i in 0..base.len() {
            for c in "0123456789-:TtZz.,+ é\u{1}".chars() {
                let mut changed = base.clone();
                changed[i] = c;
                for end in [i + 1, changed.len()] {
                    let _ = parse_error(&changed[..end].iter().collect::<String>());
                }
            }
        }
    }

    #[test]
    fn times_parse() {
        for value in [
            "2026-12-06T03:00:00Z",
            "2026-12-06T03:00:00.123456789Z",
            "2026-12-06T03:00:00+01:00",
            "2024-02-29T00:00:00Z",
            "2026-12-06T3:00:00Z",
            "2026-12-06T03:00:00,5-07:30",
        ] {
            assert_eq!(parse_error(value), None, "{value}");
        }
        assert!(parse_error("2025-02-29T00:00:00Z").is_some());
        assert!(parse_error("1900-02-29T00:00:00Z").is_some());
        assert!(parse_error("2000-02-29T00:00:00Z").is_none());
    }
}
