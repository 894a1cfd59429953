//! `strconv.ParseInt(s, 10, 64)` with Go's error text, which kube-apiserver
//! answers verbatim (400) for a malformed integer query parameter
//! (`limit=x`, `timeoutSeconds=x`, `gracePeriodSeconds=x`: apimachinery's
//! `Convert_Slice_string_To_int64` and `..._To_Pointer_int64`), and
//! `strconv.ParseUint(s, 10, 64)`, whose error text kube-apiserver puts in
//! its answer to a resourceVersion that is no number.

/// `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits;
/// the error is Go's `*NumError` text (`strconv.ParseInt: parsing "x":
/// invalid syntax`, `... value out of range`).
pub fn parse_int(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let error = |why: &str| format!("strconv.ParseInt: parsing {}: {why}", super::quote(s));
    let magnitude = decimal(digits).map_err(error)?;
    if s.starts_with('-') {
        0i64.checked_sub_unsigned(magnitude)
            .ok_or_else(|| error("value out of range"))
    } else {
        i64::try_from(magnitude).map_err(|_| error("value out of range"))
    }
}

/// `strconv.ParseBool(s)`, which pflag reads a boolean flag's value with
/// (`1`, `t`, `T`, `TRUE`, `true`, `True` and their false forms); the error
/// is Go's `*NumError` text.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(format!(
            "strconv.ParseBool: parsing {}: invalid syntax",
            super::quote(s)
        )),
    }
}

/// `strconv.ParseUint(s, 10, 64)`: decimal digits only, no sign (what
/// apiserver's `APIObjectVersioner.ParseResourceVersion` reads a
/// resourceVersion with); the error is Go's `*NumError` text
/// (`strconv.ParseUint: parsing "abc": invalid syntax`).
pub fn parse_uint(s: &str) -> Result<u64, String> {
    decimal(s).map_err(|why| format!("strconv.ParseUint: parsing {}: {why}", super::quote(s)))
}

/// Unsigned decimal digits, as Go's scan: left to right, stopping at the
/// first bad digit (`invalid syntax`) or overflow (`value out of range`).
fn decimal(digits: &str) -> Result<u64, &'static str> {
    let mut magnitude: u64 = 0;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            return Err("invalid syntax");
        }
        magnitude = magnitude
            .checked_mul(10)
            .and_then(|m| m.checked_add(u64::from(c - b'0')))
            .ok_or("value out of range")?;
    }
    if digits.is_empty() {
        return Err("invalid syntax");
    }
    Ok(magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows from Go's strconv atoi_test.go (parseInt64Tests).
    #[test]
    fn parse_int_as_go() {
        let ok: &[(&str, i64)] = &[
            ("0", 0),
            ("-0", 0),
            ("+0", 0),
            ("1", 1),
            ("-1", -1),
            ("+1", 1),
            ("12345", 12345),
            ("-12345", -12345),
            ("012345", 12345),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
        ];
        for (s, n) in ok {
            assert_eq!(parse_int(s), Ok(*n), "{s}");
        }
        let bad: &[(&str, &str)] = &[
            ("", "invalid syntax"),
            ("-", "invalid syntax"),
            ("+", "invalid syntax"),
            ("x", "invalid syntax"),
            ("12345x", "invalid syntax"),
            ("1_2", "invalid syntax"),
            (" 1", "invalid syntax"),
            ("--1", "invalid syntax"),
            ("9223372036854775808", "value out of range"),
            ("-9223372036854775809", "value out of range"),
            ("99999999999999999999x", "value out of range"),
        ];
        for (s, why) in bad {
            assert_eq!(
                parse_int(s),
                Err(format!("strconv.ParseInt: parsing {s:?}: {why}")),
                "{s}"
            );
        }
    }

    /// Rows from Go's strconv atoi_test.go (parseUint64Tests).
    #[test]
    fn parse_uint_as_go() {
        let ok: &[(&str, u64)] = &[
            ("0", 0),
            ("1", 1),
            ("12345", 12345),
            ("012345", 12345),
            ("18446744073709551615", u64::MAX),
        ];
        for (s, n) in ok {
            assert_eq!(parse_uint(s), Ok(*n), "{s}");
        }
        let bad: &[(&str, &str)] = &[
            ("", "invalid syntax"),
            ("12345x", "invalid syntax"),
            ("1_2345", "invalid syntax"),
            ("-1", "invalid syntax"),
            ("+1", "invalid syntax"),
            ("abc", "invalid syntax"),
            ("18446744073709551616", "value out of range"),
            ("18446744073709551620", "value out of range"),
        ];
        for (s, why) in bad {
            assert_eq!(
                parse_uint(s),
                Err(format!("strconv.ParseUint: parsing {s:?}: {why}")),
                "{s}"
            );
        }
    }
}
