//! Go's text for a float64: `strconv.FormatFloat(f, fmt, -1, 64)` for the
//! `'g'`, `'e'` and `'f'` formats (shortest digits that read back to the
//! same float), and the two number formats built on them:
//!
//! - [`format_g`]: `%v`/`%g`, which is `'g'` with shortest digits: `e`
//!   notation when the decimal exponent is < -4 or >= 6 (so `1e+06`,
//!   `1e-05`), with at least two exponent digits;
//! - [`format_json`]: `encoding/json`, ES6 style: plain digits for
//!   1e-6 <= |x| < 1e21, else `e` notation with `e-07` shortened to `e-7`.
//!
//! Rust's `{}` and `{:e}` already print the shortest round-trip digits, so
//! only the layout (exponent sign and width, thresholds, `NaN`/`+Inf`) is
//! Go's here.

/// Go's spelling of a non-finite float, or `None` for a finite one.
fn non_finite(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

/// The shortest decimal digits of a finite, non-zero `f` in `e` form
/// (`"1.5"`, `"-2"`) and its decimal exponent.
fn shortest_exp(f: f64) -> (String, i32) {
    let sci = format!("{f:e}");
    match sci.split_once('e') {
        Some((mantissa, exp)) => (mantissa.to_owned(), exp.parse().unwrap_or(0)),
        None => (sci, 0),
    }
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`: `1e+06`, `1.5e-07`, `0e+00`.
pub fn format_e(f: f64) -> String {
    if let Some(s) = non_finite(f) {
        return s.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0e+00"
        } else {
            "0e+00"
        }
        .to_owned();
    }
    let (mantissa, exp) = shortest_exp(f);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
}

/// `strconv.FormatFloat(f, 'f', -1, 64)`: plain digits, never an exponent.
pub fn format_f(f: f64) -> String {
    match non_finite(f) {
        Some(s) => s.to_owned(),
        None => format!("{f}"),
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`, which is what Go's `%v` and `%g`
/// print for a float64.
pub fn format_g(f: f64) -> String {
    if non_finite(f).is_some() || f == 0.0 {
        return format_f(f);
    }
    let (_, exp) = shortest_exp(f);
    if (-4..6).contains(&exp) {
        format_f(f)
    } else {
        format_e(f)
    }
}

/// A float64 as Go's `encoding/json` writes it (`floatEncoder`): ES6 number
/// formatting, except that negative zero stays `-0`. Go refuses to encode
/// NaN and infinities; they are spelled as Go prints them here.
pub fn format_json(f: f64) -> String {
    let mut s = format_e_or_f(f, 1e21);
    shorten_negative_exponent(&mut s);
    s
}

/// `'e'` when `f` is non-zero and `|f| < 1e-6` or `|f| >= upper`, else `'f'`:
/// the choice `encoding/json` (and json-iterator) make before any clean-up.
pub(super) fn format_e_or_f(f: f64, upper: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && (abs < 1e-6 || abs >= upper) {
        format_e(f)
    } else {
        format_f(f)
    }
}

/// `encoding/json`'s clean-up of `e-09` to `e-9`.
fn shorten_negative_exponent(s: &mut String) {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 4 && b[n - 4] == b'e' && b[n - 3] == b'-' && b[n - 2] == b'0' {
        s.remove(n - 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows from golang/go `src/strconv/ftoa_test.go` (`ftoatests` with
    /// precision -1) and `src/fmt/fmt_test.go` (`%g`, `%v` and `%#v` of
    /// float64, and the infinities and NaN).
    #[test]
    #[expect(
        clippy::excessive_precision,
        reason = "Go's rows spell these literals with more digits than a float64 holds"
    )]
    fn format_float_matches_go() {
        const BELOW_1E23: f64 = 99_999_999_999_999_974_834_176.0;
        const ABOVE_1E23: f64 = 100_000_000_000_000_008_388_608.0;
        let rows: &[(f64, char, &str)] = &[
            (1.0, 'g', "1"),
            (20.0, 'g', "20"),
            (1234567.8, 'g', "1.2345678e+06"),
            (200000.0, 'g', "200000"),
            (2000000.0, 'g', "2e+06"),
            (0.0, 'g', "0"),
            (-1.0, 'g', "-1"),
            (12.0, 'g', "12"),
            (123456700.0, 'g', "1.234567e+08"),
            (1e23, 'e', "1e+23"),
            (1e23, 'f', "100000000000000000000000"),
            (1e23, 'g', "1e+23"),
            (BELOW_1E23, 'e', "9.999999999999997e+22"),
            (BELOW_1E23, 'f', "99999999999999970000000"),
            (BELOW_1E23, 'g', "9.999999999999997e+22"),
            (ABOVE_1E23, 'e', "1.0000000000000001e+23"),
            (ABOVE_1E23, 'f', "100000000000000010000000"),
            (ABOVE_1E23, 'g', "1.0000000000000001e+23"),
            (5e-324, 'g', "5e-324"),
            (-5e-324, 'g', "-5e-324"),
            (32.0, 'g', "32"),
            (f64::NAN, 'g', "NaN"),
            (f64::INFINITY, 'g', "+Inf"),
            (f64::NEG_INFINITY, 'g', "-Inf"),
            (2.2250738585072012e-308, 'g', "2.2250738585072014e-308"),
            (2.2250738585072011e-308, 'g', "2.225073858507201e-308"),
            (383260575764816448.0, 'g', "3.8326057576481645e+17"),
            (498484681984085570.0, 'f', "498484681984085570"),
            (-5.8339553793802237e+23, 'g', "-5.8339553793802237e+23"),
            // fmt_test.go
            (1234.5678e3, 'g', "1.2345678e+06"),
            (1234.5678e-8, 'g', "1.2345678e-05"),
            (-7.0, 'g', "-7"),
            (-1e-9, 'g', "-1e-09"),
            (1.23456789e3, 'g', "1234.56789"),
            (1.23456789e-3, 'g', "0.00123456789"),
            (1.23456789e20, 'g', "1.23456789e+20"),
            (1.2345678, 'g', "1.2345678"),
            (1000000.0, 'g', "1e+06"),
            (-0.0, 'g', "-0"),
        ];
        for &(f, fmt, want) in rows {
            let got = match fmt {
                'e' => format_e(f),
                'f' => format_f(f),
                _ => format_g(f),
            };
            assert_eq!(got, want, "FormatFloat({f:e}, '{fmt}', -1, 64)");
        }
    }

    /// Values at the edges of the rule in golang/go
    /// `src/encoding/json/encode.go` (`floatEncoder.encode`: `'f'` for
    /// 1e-6 <= |x| < 1e21, else `'e'` with `e-09` cleaned to `e-9`), which
    /// `TestMarshalFloat` in `encode_test.go` exercises across magnitudes;
    /// `-0` stays `-0` as the jsontext `AppendFloat` doc says.
    #[test]
    fn format_json_matches_go() {
        let rows: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (1e6, "1000000"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-1.2345e-9, "-1.2345e-9"),
            (1e-10, "1e-10"),
            (1e100, "1e+100"),
            (0.1, "0.1"),
            (123456789.125, "123456789.125"),
        ];
        for &(f, want) in rows {
            assert_eq!(format_json(f), want, "json.Marshal({f:e})");
        }
    }
}
