//! Go's quoting of strings and runes: `strconv.Quote` (what `%q` and `%#v`
//! print for a string), `%q` of a `[]string`, and `%#U` of a rune.
//!
//! Go leaves a character as it is when `strconv.IsPrint` holds (Unicode
//! letters, marks, numbers, punctuation and symbols, plus the ASCII space)
//! and escapes everything else: `\a \b \f \n \r \t \v`, `\xHH` below U+0020
//! and for DEL, `\uHHHH` up to U+FFFF, `\UHHHHHHHH` above. A Rust `&str` is
//! always valid UTF-8, so Go's `\xHH` for an invalid byte cannot arise here.
//!
//! The general categories come from the `unicode-general-category` crate; a
//! code point that a newer Unicode version assigns and Go's tables do not yet
//! know prints raw here where Go would escape it.

use std::fmt::Write as _;

use unicode_general_category::{GeneralCategory as Gc, get_general_category};

/// Go's `strconv.IsPrint`: categories L, M, N, P, S and the ASCII space.
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    matches!(
        get_general_category(c),
        Gc::UppercaseLetter
            | Gc::LowercaseLetter
            | Gc::TitlecaseLetter
            | Gc::ModifierLetter
            | Gc::OtherLetter
            | Gc::NonspacingMark
            | Gc::SpacingMark
            | Gc::EnclosingMark
            | Gc::DecimalNumber
            | Gc::LetterNumber
            | Gc::OtherNumber
            | Gc::ConnectorPunctuation
            | Gc::DashPunctuation
            | Gc::OpenPunctuation
            | Gc::ClosePunctuation
            | Gc::InitialPunctuation
            | Gc::FinalPunctuation
            | Gc::OtherPunctuation
            | Gc::MathSymbol
            | Gc::CurrencySymbol
            | Gc::ModifierSymbol
            | Gc::OtherSymbol
    )
}

/// `strconv.Quote(s)`, which is also Go's `%q` and `%#v` of a string.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_quoted(&mut out, s);
    out
}

/// Appends `strconv.Quote(s)` to `out`.
pub fn write_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        write_escaped(out, c);
    }
    out.push('"');
}

fn write_escaped(out: &mut String, c: char) {
    match c {
        '"' | '\\' => {
            out.push('\\');
            out.push(c);
        }
        c if is_print(c) => out.push(c),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if c < ' ' || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if (c as u32) < 0x10000 => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\U{:08x}", c as u32);
        }
    }
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub fn quote_list<S: AsRef<str>>(items: &[S]) -> String {
    quoted_list(items, "[", " ", "]")
}

/// Go's `%#v` of a `[]string`: `[]string{"a", "b"}`.
pub fn go_syntax_list<S: AsRef<str>>(items: &[S]) -> String {
    quoted_list(items, "[]string{", ", ", "}")
}

fn quoted_list<S: AsRef<str>>(items: &[S], open: &str, sep: &str, close: &str) -> String {
    let mut out = String::from(open);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        write_quoted(&mut out, item.as_ref());
    }
    out.push_str(close);
    out
}

/// Go's `%#U` of a rune: `U+0078 'x'`, or just `U+000A` when the rune is
/// not printable.
pub fn unicode_sharp(c: char) -> String {
    if is_print(c) {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows from golang/go `src/strconv/quote_test.go` (`quotetests`, the
    /// `Quote` column) and `src/fmt/fmt_test.go` (the `%q` rows of
    /// "escaped strings" and "Runes that are not printable"). Go's rows
    /// with invalid UTF-8 (`"abc\xffdef"`) cannot be a Rust `&str`.
    #[test]
    fn quote_matches_go() {
        let rows: &[(&str, &str)] = &[
            ("\u{7}\u{8}\u{c}\r\n\t\u{b}", r#""\a\b\f\r\n\t\v""#),
            ("\\", r#""\\""#),
            ("\u{263a}", "\"☺\""),
            ("\u{10ffff}", r#""\U0010ffff""#),
            ("\u{4}", r#""\x04""#),
            ("!\u{a0}!\u{2000}!\u{3000}!", r#""!\u00a0!\u2000!\u3000!""#),
            ("\u{7f}", r#""\x7f""#),
            ("", r#""""#),
            ("\"", r#""\"""#),
            ("`", "\"`\""),
            ("\n", r#""\n""#),
            ("\\n", r#""\\n""#),
            ("abc", r#""abc""#),
            ("日本語", "\"日本語\""),
            ("\u{7}\u{8}\u{c}\n\r\t\u{b}\"\\", r#""\a\b\f\n\r\t\v\"\\""#),
            ("\u{e00}", r#""\u0e00""#),
            ("\u{fffd}", "\"\u{fffd}\""),
            // Go's IsPrint excludes format characters (Cf) and private use.
            ("a\u{200b}b\u{feff}\u{e000}", r#""a\u200bb\ufeff\ue000""#),
            ("\u{0}", r#""\x00""#),
        ];
        for (input, want) in rows {
            assert_eq!(quote(input), *want, "Quote({input:?})");
        }
    }

    /// golang/go `src/fmt/fmt_test.go`: `{"%q", []string{"a", "b"}, `["a" "b"]`}`;
    /// `%#v` per `{"%#v", []string{"a", "b"}, `[]string{"a", "b"}`}`.
    #[test]
    fn lists_match_go() {
        let rows: &[(&[&str], &str, &str)] = &[
            (&["a", "b"], r#"["a" "b"]"#, r#"[]string{"a", "b"}"#),
            (&[], "[]", "[]string{}"),
        ];
        for (items, q, sharp_v) in rows {
            assert_eq!(quote_list(items), *q);
            assert_eq!(go_syntax_list(items), *sharp_v);
        }
    }

    /// Rows from golang/go `src/fmt/fmt_test.go` ("unicode format", `%#U`).
    #[test]
    fn unicode_sharp_matches_go() {
        let rows: &[(char, &str)] = &[
            ('\n', "U+000A"),
            ('x', "U+0078 'x'"),
            ('\u{263a}', "U+263A '☺'"),
            ('\u{1d6c2}', "U+1D6C2 '𝛂'"),
            ('\u{0}', "U+0000"),
        ];
        for (c, want) in rows {
            assert_eq!(unicode_sharp(*c), *want, "%#U of {c:?}");
        }
    }
}
