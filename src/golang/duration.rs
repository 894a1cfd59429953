//! Go's `time.Duration`: [`parse_duration`] is `time.ParseDuration` (what
//! `metav1.Duration` fields such as Flux's `interval` and `timeout` accept)
//! and [`GoDuration`]'s `Display` is `time.Duration.String` (`1h2m3.5s`).
//!
//! A duration is a signed count of nanoseconds in an `i64`, as in Go, so
//! the range is about ±292 years and the error messages are Go's own
//! (`time: missing unit in duration "30"`).

use std::fmt;

/// A Go `time.Duration`: signed nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GoDuration(i64);

const NANOSECOND: u64 = 1;
const MICROSECOND: u64 = 1000 * NANOSECOND;
const MILLISECOND: u64 = 1000 * MICROSECOND;
const SECOND: u64 = 1000 * MILLISECOND;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;
const TWO_63: u64 = 1 << 63;

impl GoDuration {
    /// A duration of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: i64) -> Self {
        Self(nanos)
    }

    /// `nanos` clamped to Go's range, as `time.Time.Sub` saturates.
    pub fn from_nanos_saturating(nanos: i128) -> Self {
        Self(i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX }))
    }

    /// The duration in nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// The same span as a `std::time::Duration`, or `None` when negative.
    pub fn to_std(self) -> Option<std::time::Duration> {
        u64::try_from(self.0)
            .ok()
            .map(std::time::Duration::from_nanos)
    }
}

/// Why `time.ParseDuration` refused a string; `Display` is Go's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not of the form `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or out of range.
    #[error("time: invalid duration {}", time_quote(.input))]
    Invalid {
        /// The whole input.
        input: String,
    },
    /// A number without a unit, such as `30`.
    #[error("time: missing unit in duration {}", time_quote(.input))]
    MissingUnit {
        /// The whole input.
        input: String,
    },
    /// A unit other than `ns`, `us` (`µs`), `ms`, `s`, `m` or `h`.
    #[error("time: unknown unit {} in duration {}", time_quote(.unit), time_quote(.input))]
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// The whole input.
        input: String,
    },
}

/// The `quote` of Go's `time` package: non-ASCII and control bytes as `\xHH`.
pub(super) fn time_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if !c.is_ascii() || c < ' ' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// `leadingInt`: the leading `[0-9]*` of `s`, or `None` on overflow.
fn leading_int(s: &str) -> Option<(u64, &str)> {
    let mut x: u64 = 0;
    let end = s.bytes().take_while(u8::is_ascii_digit).count();
    for b in s[..end].bytes() {
        if x > TWO_63 / 10 {
            return None;
        }
        x = x * 10 + u64::from(b - b'0');
        if x > TWO_63 {
            return None;
        }
    }
    Some((x, &s[end..]))
}

/// `leadingFraction`: the leading `[0-9]*` of `s` as `x / scale`, dropping
/// precision instead of failing on overflow.
fn leading_fraction(s: &str) -> (u64, f64, &str) {
    let mut x: u64 = 0;
    let mut scale = 1.0;
    let mut overflow = false;
    let end = s.bytes().take_while(u8::is_ascii_digit).count();
    for b in s[..end].bytes() {
        if overflow {
            continue;
        }
        if x > (TWO_63 - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(b - b'0');
        if y > TWO_63 {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, &s[end..])
}

fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => NANOSECOND,
        "us" | "\u{b5}s" | "\u{3bc}s" => MICROSECOND,
        "ms" => MILLISECOND,
        "s" => SECOND,
        "m" => MINUTE,
        "h" => HOUR,
        _ => return None,
    })
}

/// Go's `time.ParseDuration`: a possibly signed sequence of decimal numbers,
/// each with an optional fraction and a unit (`300ms`, `-1.5h`, `2h45m`);
/// `0` alone needs no unit.
pub fn parse_duration(input: &str) -> Result<GoDuration, DurationError> {
    let invalid = || DurationError::Invalid {
        input: input.to_owned(),
    };
    let mut s = input;
    let mut neg = false;
    if let Some(rest) = s.strip_prefix('-') {
        neg = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(GoDuration(0));
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut d: u64 = 0;
    while !s.is_empty() {
        let first = s.as_bytes()[0];
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        let before = s.len();
        let (mut v, rest) = leading_int(s).ok_or_else(invalid)?;
        s = rest;
        let pre = before != s.len();
        let (mut f, mut scale, mut post) = (0u64, 1.0f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let before = rest.len();
            (f, scale, s) = leading_fraction(rest);
            post = before != s.len();
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .bytes()
            .position(|b| b == b'.' || b.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(DurationError::MissingUnit {
                input: input.to_owned(),
            });
        }
        let (unit_text, rest) = s.split_at(unit_len);
        s = rest;
        let unit = unit_nanos(unit_text).ok_or_else(|| DurationError::UnknownUnit {
            unit: unit_text.to_owned(),
            input: input.to_owned(),
        })?;
        if v > TWO_63 / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            // As Go: float64 keeps fractions of hours nanosecond-exact.
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > TWO_63 {
                return Err(invalid());
            }
        }
        d = d
            .checked_add(v)
            .filter(|d| *d <= TWO_63)
            .ok_or_else(invalid)?;
    }
    if neg {
        // d <= 2^63, so this is exact, -2^63 included.
        return Ok(GoDuration(0i64.wrapping_sub_unsigned(d)));
    }
    i64::try_from(d).map(GoDuration).map_err(|_| invalid())
}

/// `fmtFrac`: the fraction of `v / 10^prec` with trailing zeros dropped (and
/// no `.` when nothing is left), and the integer part.
fn frac(v: u64, prec: u32) -> (String, u64) {
    let mut digits = Vec::new();
    let mut v = v;
    let mut print = false;
    for _ in 0..prec {
        let digit = v % 10;
        print = print || digit != 0;
        if print {
            digits.push(char::from(b'0' + digit as u8));
        }
        v /= 10;
    }
    let mut out = String::new();
    if print {
        out.push('.');
        out.extend(digits.iter().rev());
    }
    (out, v)
}

impl fmt::Display for GoDuration {
    /// `time.Duration.String`: `72h3m0.5s`, `1.5ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let u = self.0.unsigned_abs();
        let sign = if self.0 < 0 { "-" } else { "" };
        if u < SECOND {
            let (prec, unit) = match u {
                0 => return f.write_str("0s"),
                u if u < MICROSECOND => (0, "ns"),
                u if u < MILLISECOND => (3, "\u{b5}s"),
                _ => (6, "ms"),
            };
            let (fraction, int) = frac(u, prec);
            return write!(f, "{sign}{int}{fraction}{unit}");
        }
        let (fraction, secs) = frac(u, 9);
        let (seconds, minutes) = (secs % 60, secs / 60);
        let (mins, hours) = (minutes % 60, minutes / 60);
        f.write_str(sign)?;
        if hours > 0 {
            write!(f, "{hours}h")?;
        }
        if minutes > 0 {
            write!(f, "{mins}m")?;
        }
        write!(f, "{seconds}{fraction}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: i64 = NANOSECOND as i64;
    const US: i64 = MICROSECOND as i64;
    const MS: i64 = MILLISECOND as i64;
    const S: i64 = SECOND as i64;
    const M: i64 = MINUTE as i64;
    const H: i64 = HOUR as i64;

    /// `parseDurationTests` from golang/go `src/time/time_test.go`.
    #[test]
    fn parse_duration_matches_go() {
        let rows: &[(&str, i64)] = &[
            ("0", 0),
            ("5s", 5 * S),
            ("30s", 30 * S),
            ("1478s", 1478 * S),
            ("-5s", -5 * S),
            ("+5s", 5 * S),
            ("-0", 0),
            ("+0", 0),
            ("5.0s", 5 * S),
            ("5.6s", 5 * S + 600 * MS),
            ("5.s", 5 * S),
            (".5s", 500 * MS),
            ("1.0s", S),
            ("1.00s", S),
            ("1.004s", S + 4 * MS),
            ("1.0040s", S + 4 * MS),
            ("100.00100s", 100 * S + MS),
            ("10ns", 10 * NS),
            ("11us", 11 * US),
            ("12\u{b5}s", 12 * US),
            ("12\u{3bc}s", 12 * US),
            ("13ms", 13 * MS),
            ("14s", 14 * S),
            ("15m", 15 * M),
            ("16h", 16 * H),
            ("3h30m", 3 * H + 30 * M),
            ("10.5s4m", 4 * M + 10 * S + 500 * MS),
            ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
            (
                "1h2m3s4ms5us6ns",
                H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS,
            ),
            ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
            ("52763797000ns", 52763797000 * NS),
            ("0.3333333333333333333h", 20 * M),
            ("9007199254740993ns", (1 << 53) + 1),
            ("9223372036854775807ns", i64::MAX),
            ("9223372036854775.807us", i64::MAX),
            ("9223372036s854ms775us807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("-9223372036854775.808us", i64::MIN),
            ("-9223372036s854ms775us808ns", i64::MIN),
            ("-2562047h47m16.854775808s", i64::MIN),
            ("0.100000000000000000000h", 6 * M),
            ("0.830103483285477580700h", 49 * M + 48 * S + 372539827 * NS),
        ];
        for &(input, want) in rows {
            assert_eq!(
                parse_duration(input),
                Ok(GoDuration(want)),
                "ParseDuration({input:?})"
            );
        }
    }

    /// `parseDurationErrorTests` from golang/go `src/time/time_test.go`
    /// (the rows with invalid UTF-8 cannot be a Rust `&str`), with the
    /// message shapes of `ParseDuration` in `src/time/format.go`.
    #[test]
    fn parse_duration_errors_match_go() {
        let rows: &[(&str, &str)] = &[
            ("", r#"time: invalid duration """#),
            ("3", r#"time: missing unit in duration "3""#),
            ("-", r#"time: invalid duration "-""#),
            ("s", r#"time: invalid duration "s""#),
            (".", r#"time: invalid duration ".""#),
            ("-.", r#"time: invalid duration "-.""#),
            (".s", r#"time: invalid duration ".s""#),
            ("+.s", r#"time: invalid duration "+.s""#),
            ("1d", r#"time: unknown unit "d" in duration "1d""#),
            ("\u{fffd}", r#"time: invalid duration "\xef\xbf\xbd""#),
            (
                "\u{fffd} hello \u{fffd} world",
                r#"time: invalid duration "\xef\xbf\xbd hello \xef\xbf\xbd world""#,
            ),
            (
                "9223372036854775810ns",
                r#"time: invalid duration "9223372036854775810ns""#,
            ),
            (
                "9223372036854775808ns",
                r#"time: invalid duration "9223372036854775808ns""#,
            ),
            (
                "-9223372036854775809ns",
                r#"time: invalid duration "-9223372036854775809ns""#,
            ),
            (
                "9223372036854776us",
                r#"time: invalid duration "9223372036854776us""#,
            ),
            ("3000000h", r#"time: invalid duration "3000000h""#),
            (
                "9223372036854775.808us",
                r#"time: invalid duration "9223372036854775.808us""#,
            ),
            (
                "9223372036854ms775us808ns",
                r#"time: invalid duration "9223372036854ms775us808ns""#,
            ),
        ];
        for &(input, want) in rows {
            match parse_duration(input) {
                Ok(d) => panic!("ParseDuration({input:?}) = {d}, want an error"),
                Err(e) => assert_eq!(e.to_string(), want, "ParseDuration({input:?})"),
            }
        }
    }

    /// `durationTests` from golang/go `src/time/time_test.go`: each value
    /// and, when positive, its negation with a leading `-`.
    #[test]
    fn duration_string_matches_go() {
        let rows: &[(&str, i64)] = &[
            ("0s", 0),
            ("1ns", NS),
            ("1.1\u{b5}s", 1100 * NS),
            ("2.2ms", 2200 * US),
            ("3.3s", 3300 * MS),
            ("4m5s", 4 * M + 5 * S),
            ("4m5.001s", 4 * M + 5001 * MS),
            ("5h6m7.001s", 5 * H + 6 * M + 7001 * MS),
            ("8m0.000000001s", 8 * M + NS),
            ("2562047h47m16.854775807s", i64::MAX),
            ("-2562047h47m16.854775808s", i64::MIN),
        ];
        for &(want, nanos) in rows {
            assert_eq!(GoDuration(nanos).to_string(), want, "Duration({nanos})");
            if nanos > 0 {
                assert_eq!(GoDuration(-nanos).to_string(), format!("-{want}"));
            }
            // TestParseDurationRoundTrip: String() reads back as itself.
            assert_eq!(parse_duration(want), Ok(GoDuration(nanos)), "{want}");
        }
    }

    #[test]
    fn conversions() {
        assert_eq!(
            GoDuration::from_nanos(1_500_000_000).to_std(),
            Some(std::time::Duration::from_millis(1500))
        );
        assert_eq!(GoDuration::from_nanos(-1).to_std(), None);
        assert_eq!(
            GoDuration::from_nanos_saturating(i128::MAX).as_nanos(),
            i64::MAX
        );
        assert_eq!(
            GoDuration::from_nanos_saturating(i128::MIN).as_nanos(),
            i64::MIN
        );
    }
}
