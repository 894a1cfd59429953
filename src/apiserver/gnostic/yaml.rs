//! The YAML text of a gnostic `Any` (a vendor extension's value, an `enum`
//! entry, a `default`, an `example`). gnostic parses the JSON document into
//! go.yaml.in/yaml/v3 nodes, clears their styles and marshals each such
//! value with yaml.v3's defaults; kube-openapi's `VendorExtensionToMap` and
//! kubectl read the text back with a YAML 1.1 parser (yaml.v2).
//!
//! [`to_yaml`] writes what yaml.v3 writes for the JSON values a document
//! holds: block mappings and sequences indented as yaml.v3 indents them
//! (4 spaces; a sequence under a key is indented too; a mapping in a
//! sequence item starts after `- `), `[]` and `{}` for empty ones, and each
//! string in the style yaml.v3's emitter picks — plain when libyaml's
//! analysis allows it and the text would not read back as another type,
//! single-quoted when only that is allowed, a `|` literal block for text with
//! line feeds, double-quoted (with libyaml's escapes) otherwise. Numbers keep
//! their JSON text. Lines are never folded (yaml.v3 sets no width).
//!
//! One deliberate difference: a string YAML 1.1 reads as a boolean (`on`,
//! `no`, `Y`, …) or a sexagesimal number (`1:20`) is double-quoted, as
//! yaml.v3 does when it marshals a Go string, but not when it marshals
//! gnostic's nodes; so is `<<`, which readers take for a merge key.
//! kube-openapi and kubectl read the text with yaml.v2 (YAML 1.1), which
//! would take a plain `on` for `true`.
//!
//! Where yaml.v3 would write something this module does not reproduce, the
//! string is double-quoted instead: always a valid YAML 1.1 and 1.2
//! rendering of the same value, only not byte-identical to gnostic's. That
//! is the case for a string that starts like a date (four digits and a
//! dash: quoted even when Go's `time.Parse` would not take it), a
//! `.`-leading string that parses as an out-of-range float, a string with
//! line breaks other than line feed (yaml.v3 writes those raw in a literal
//! block, where a reader turns them into line feeds), a multi-line string
//! that would go single-quoted, and a literal block that starts with a
//! space or a line break where yaml.v3's indentation indicator would be
//! wrong (below a sequence item).

use serde_json::{Map, Value};

/// yaml.v3's `best_indent`.
const INDENT: i32 = 4;

/// Map keys longer than this (bytes) are explicit (`? key`), as in libyaml.
const MAX_SIMPLE_KEY: usize = 128;

/// The YAML text yaml.v3 marshals `value` to, ending with a line break.
pub(crate) fn to_yaml(value: &Value) -> String {
    let mut w = Writer {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
    };
    w.node(value, -1, Place::Top);
    // The document's end.
    w.write_indent(-1);
    w.out
}

/// Where a node is emitted: what libyaml's state stack says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The root.
    Top,
    /// A map value (after a simple or an explicit key).
    MapValue,
    /// A sequence item.
    SeqItem,
    /// A simple map key.
    SimpleKey,
    /// An explicit (`? `) map key.
    ExplicitKey,
}

/// libyaml's output state: the column and whether the line so far holds only
/// whitespace (`whitespace`) or only indentation and indicators
/// (`indention`).
struct Writer {
    out: String,
    column: usize,
    whitespace: bool,
    indention: bool,
}

/// libyaml's `yaml_emitter_increase_indent`: the indentation of a node
/// emitted at `place` inside a collection indented `indent` (-1 at the
/// root); `flow` for scalars.
fn increase(indent: i32, place: Place, flow: bool) -> i32 {
    if indent < 0 {
        if flow { INDENT } else { 0 }
    } else if place == Place::SeqItem {
        indent + 2
    } else {
        INDENT * ((indent + INDENT) / INDENT)
    }
}

impl Writer {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
        self.indention = true;
    }

    /// `yaml_emitter_write_indent`.
    fn write_indent(&mut self, indent: i32) {
        let indent = usize::try_from(indent).unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    /// `yaml_emitter_write_indicator`.
    fn indicator(
        &mut self,
        s: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in s.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    /// A node at `place` in a collection indented `indent`.
    fn node(&mut self, value: &Value, indent: i32, place: Place) {
        match value {
            Value::Array(items) if items.is_empty() => {
                self.indicator("[", true, true, false);
                self.indicator("]", false, false, false);
            }
            Value::Object(map) if map.is_empty() => {
                self.indicator("{", true, true, false);
                self.indicator("}", false, false, false);
            }
            Value::Array(items) => {
                let indent = increase(indent, place, false);
                for item in items {
                    self.write_indent(indent);
                    self.indicator("-", true, false, true);
                    self.node(item, indent, Place::SeqItem);
                }
            }
            Value::Object(map) => self.mapping(map, increase(indent, place, false)),
            Value::String(s) => {
                let own = increase(indent, place, true);
                // The parent's indentation as a YAML reader counts it, for
                // a literal block's indentation indicator.
                let parent = indent.max(0);
                self.string(s, place, own, own - parent == INDENT || indent < 0);
            }
            Value::Null => self.plain("null"),
            Value::Bool(b) => self.plain(if *b { "true" } else { "false" }),
            Value::Number(n) => self.plain(&n.to_string()),
        }
    }

    fn mapping(&mut self, map: &Map<String, Value>, indent: i32) {
        for (key, value) in map {
            self.write_indent(indent);
            if key.len() <= MAX_SIMPLE_KEY && !key.chars().any(is_break) {
                self.string(key, Place::SimpleKey, indent, false);
                self.indicator(":", false, false, false);
            } else {
                self.indicator("?", true, false, true);
                let own = increase(indent, Place::ExplicitKey, true);
                self.string(key, Place::ExplicitKey, own, own - indent.max(0) == INDENT);
                self.write_indent(indent);
                self.indicator(":", true, false, true);
            }
            self.node(value, indent, Place::MapValue);
        }
    }

    /// A string scalar indented `indent` (a literal block's lines);
    /// `hint_ok` when a block's indentation indicator would be right here.
    fn string(&mut self, s: &str, place: Place, indent: i32, hint_ok: bool) {
        match style(s, place, hint_ok) {
            Style::Plain => self.plain(s),
            Style::Single => self.single_quoted(s),
            Style::Double => self.double_quoted(s),
            Style::Literal => self.literal(s, indent),
        }
    }

    /// `yaml_emitter_write_plain_scalar` (no line breaks here).
    fn plain(&mut self, s: &str) {
        if !s.is_empty() && !self.whitespace {
            self.put(' ');
        }
        for c in s.chars() {
            self.put(c);
        }
        if !s.is_empty() {
            self.whitespace = false;
        }
        self.indention = false;
    }

    /// `yaml_emitter_write_single_quoted_scalar` (no line breaks here).
    fn single_quoted(&mut self, s: &str) {
        self.indicator("'", true, false, false);
        for c in s.chars() {
            if c == '\'' {
                self.put('\'');
            }
            self.put(c);
        }
        self.indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_double_quoted_scalar`, escapes and all (a string
    /// starting with a byte order mark has every character escaped, as in
    /// libyaml, whose check looks at the string's start).
    fn double_quoted(&mut self, s: &str) {
        self.indicator("\"", true, false, false);
        let bom = s.starts_with('\u{feff}');
        for c in s.chars() {
            if bom || !is_printable(c) || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                let short = match c {
                    '\0' => Some('0'),
                    '\u{7}' => Some('a'),
                    '\u{8}' => Some('b'),
                    '\t' => Some('t'),
                    '\n' => Some('n'),
                    '\u{b}' => Some('v'),
                    '\u{c}' => Some('f'),
                    '\r' => Some('r'),
                    '\u{1b}' => Some('e'),
                    '"' => Some('"'),
                    '\\' => Some('\\'),
                    '\u{85}' => Some('N'),
                    '\u{a0}' => Some('_'),
                    '\u{2028}' => Some('L'),
                    '\u{2029}' => Some('P'),
                    _ => None,
                };
                match short {
                    Some(e) => self.put(e),
                    None => {
                        let v = u32::from(c);
                        let (prefix, digits) = match v {
                            0..=0xFF => ('x', 2),
                            0x100..=0xFFFF => ('u', 4),
                            _ => ('U', 8),
                        };
                        self.put(prefix);
                        for k in (0..digits).rev() {
                            let digit = (v >> (k * 4)) & 0xF;
                            self.put(
                                char::from_digit(digit, 16).map_or('0', |d| d.to_ascii_uppercase()),
                            );
                        }
                    }
                }
            } else {
                self.put(c);
            }
        }
        self.indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_literal_scalar` for text whose only line breaks
    /// are line feeds.
    fn literal(&mut self, s: &str, indent: i32) {
        self.indicator("|", true, false, false);
        if s.starts_with([' ', '\n']) {
            self.indicator(&INDENT.to_string(), false, false, false);
        }
        // Chomping: strip without a final line feed, keep with more than
        // one (or only one), clip otherwise.
        if !s.ends_with('\n') {
            self.indicator("-", false, false, false);
        } else if s == "\n" || s.ends_with("\n\n") {
            self.indicator("+", false, false, false);
        }
        self.put_break();
        self.whitespace = true;
        let mut breaks = true;
        for c in s.chars() {
            if c == '\n' {
                self.put_break();
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// A scalar style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// The style yaml.v3 gives string `s` at `place` (see the module doc for
/// where this falls back to double quotes instead).
fn style(s: &str, place: Place, hint_ok: bool) -> Style {
    let a = analyze(s);
    let simple_key = place == Place::SimpleKey;
    let mut style = if s.contains('\n') {
        Style::Literal
    } else if !resolves_to_string(s) || is_yaml11_bool(s) || is_base60_float(s) || s == "<<" {
        Style::Double
    } else {
        Style::Plain
    };
    if simple_key && a.multiline {
        style = Style::Double;
    }
    if style == Style::Plain && (!a.block_plain_allowed || (s.is_empty() && simple_key)) {
        style = Style::Single;
    }
    if style == Style::Single && (!a.single_quoted_allowed || a.multiline) {
        style = Style::Double;
    }
    if style == Style::Literal {
        let only_line_feeds = !s.chars().any(|c| is_break(c) && c != '\n');
        let hint_needed = s.starts_with([' ', '\n']);
        if !a.block_allowed || simple_key || !only_line_feeds || (hint_needed && !hint_ok) {
            style = Style::Double;
        }
    }
    style
}

/// What libyaml's `yaml_emitter_analyze_scalar` finds out about a scalar,
/// for block context.
#[derive(Debug, Clone, Copy)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut line_breaks = false;
    let mut special_characters = false;
    let mut tab_characters = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut preceded_by_whitespace = true;
    let mut previous_space = false;
    let mut previous_break = false;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let last = i + 1 == chars.len();
        let followed_by_whitespace = chars.get(i + 1).is_none_or(|&n| n == ' ' || n == '\t');
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if c == '\t' {
            tab_characters = true;
        } else if !is_printable(c) {
            special_characters = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = c == ' ' || c == '\t' || c == '\0' || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || tab_characters || special_characters {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// yaml.v3's `isOldBool`: the booleans of YAML 1.1 that YAML 1.2 reads as
/// strings.
fn is_yaml11_bool(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "on"
            | "On"
            | "ON"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "off"
            | "Off"
            | "OFF"
    )
}

/// yaml.v3's `isBase60Float`:
/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !s.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let (sexagesimal, fraction) = s.split_once('.').unwrap_or((s, ""));
    if !fraction.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return false;
    }
    let mut parts = sexagesimal.split(':');
    let head = parts.next().unwrap_or_default();
    let mut sixties = 0;
    for part in parts {
        let ok = match part.as_bytes() {
            [d] => d.is_ascii_digit(),
            [a, b] => (b'0'..=b'5').contains(a) && b.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
        sixties += 1;
    }
    sixties > 0 && head.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// libyaml's `is_printable`: line feed, printable ASCII, and U+00A0–U+D7FF,
/// U+E000–U+FFFD but the byte order mark (nothing beyond the BMP).
fn is_printable(c: char) -> bool {
    matches!(u32::from(c), 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD) && c != '\u{feff}'
}

/// libyaml's `is_break`: CR, LF, NEL, LS, PS.
fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Whether yaml.v3's `resolve` reads `s`, written plain, as a string (so
/// that it need not be quoted). Errs towards `false` (quoting) where the
/// module doc says.
fn resolves_to_string(s: &str) -> bool {
    const WORDS: [&str; 23] = [
        "true", "True", "TRUE", "false", "False", "FALSE", "", "~", "null", "Null", "NULL", ".nan",
        ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
        "-.INF",
    ];
    let Some(&first) = s.as_bytes().first() else {
        return false;
    };
    let hint = match first {
        b'+' | b'-' | b'0'..=b'9' => 'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => 'M',
        b'.' => '.',
        _ => return true,
    };
    if WORDS.contains(&s) {
        return false;
    }
    match hint {
        'M' => true,
        '.' => s.parse::<f64>().is_err(),
        _ => {
            let b = s.as_bytes();
            if b.len() > 4 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' {
                return false;
            }
            let plain = s.replace('_', "");
            if go_parse_int(&plain, 0).is_some() || is_yaml_float(&plain) {
                return false;
            }
            let binary = plain
                .strip_prefix("0b")
                .is_some_and(|rest| go_parse_int(rest, 2).is_some())
                || plain
                    .strip_prefix("-0b")
                    .is_some_and(|rest| go_parse_int(&format!("-{rest}"), 2).is_some());
            let octal = plain
                .strip_prefix("0o")
                .is_some_and(|rest| go_parse_int(rest, 8).is_some())
                || plain
                    .strip_prefix("-0o")
                    .is_some_and(|rest| go_parse_int(&format!("-{rest}"), 8).is_some());
            !(binary || octal)
        }
    }
}

/// Go's `strconv.ParseInt(s, base, 64)` succeeding, or `ParseUint` when it
/// overflows (`base` 0 reads `0x`, `0o`, `0b` and leading-`0` octal
/// prefixes). Underscores are already gone.
fn go_parse_int(s: &str, base: u32) -> Option<i128> {
    let (negative, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if base == 0 {
        let lower = unsigned.get(..2).map(str::to_ascii_lowercase);
        match lower.as_deref() {
            Some("0x") => (16, &unsigned[2..]),
            Some("0o") => (8, &unsigned[2..]),
            Some("0b") => (2, &unsigned[2..]),
            _ if unsigned.len() > 1 && unsigned.starts_with('0') => (8, &unsigned[1..]),
            _ => (10, unsigned),
        }
    } else {
        (base, unsigned)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    let value = i128::try_from(magnitude).ok()?;
    let value = if negative { -value } else { value };
    let signed = i64::try_from(value).is_ok();
    // ParseUint takes no sign.
    let unsigned_ok = s == unsigned && u64::try_from(value).is_ok();
    (signed || unsigned_ok).then_some(value)
}

/// yaml.v3's `yamlStyleFloat`:
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let rest = if let Some(after_dot) = s.strip_prefix('.') {
        let n = digits(after_dot);
        if n == 0 {
            return false;
        }
        &after_dot[n..]
    } else {
        let n = digits(s);
        if n == 0 {
            return false;
        }
        let after = &s[n..];
        match after.strip_prefix('.') {
            Some(fraction) => &fraction[digits(fraction)..],
            None => after,
        }
    };
    if rest.is_empty() {
        return true;
    }
    let Some(exponent) = rest.strip_prefix(['e', 'E']) else {
        return false;
    };
    let exponent = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
    !exponent.is_empty() && digits(exponent) == exponent.len()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[test]
    fn scalars_as_yaml_v3_writes_them() {
        for (value, yaml) in [
            (json!("atomic"), "atomic\n"),
            (json!(true), "true\n"),
            (json!(null), "null\n"),
            (json!(3), "3\n"),
            (json!(-2.5), "-2.5\n"),
            (json!(""), "\"\"\n"),
            (json!("17"), "\"17\"\n"),
            (json!("1.5"), "\"1.5\"\n"),
            (json!("0x1F"), "\"0x1F\"\n"),
            (json!("08"), "\"08\"\n"),
            (json!("1.2.3"), "1.2.3\n"),
            (json!("true"), "\"true\"\n"),
            (json!("tRue"), "tRue\n"),
            (json!("on"), "\"on\"\n"),
            (json!("N"), "\"N\"\n"),
            (json!("1:20"), "\"1:20\"\n"),
            (json!("-1:20:3.5"), "\"-1:20:3.5\"\n"),
            (json!("1:60"), "1:60\n"),
            (json!("null"), "\"null\"\n"),
            (json!("~"), "\"~\"\n"),
            (json!(".inf"), "\".inf\"\n"),
            (json!(".5"), "\".5\"\n"),
            (json!("2024-01-02"), "\"2024-01-02\"\n"),
            (json!("a: b"), "'a: b'\n"),
            (json!("it's"), "it's\n"),
            (json!("- x"), "'- x'\n"),
            (json!("-x"), "-x\n"),
            (json!(" x"), "' x'\n"),
            (json!("a #b"), "'a #b'\n"),
            (json!("a#b"), "a#b\n"),
            (json!("#x"), "'#x'\n"),
            (
                json!("self.a > 0 && self.b != 'x'"),
                "self.a > 0 && self.b != 'x'\n",
            ),
            (json!("tab\there"), "\"tab\\there\"\n"),
            (json!("caf\u{e9}"), "caf\u{e9}\n"),
            (json!("\u{1F600}"), "\"\\U0001F600\"\n"),
            (json!("a\u{7f}"), "\"a\\x7F\"\n"),
            (json!("\u{feff}ab"), "\"\\uFEFF\\x61\\x62\"\n"),
            (json!("back\\slash"), "back\\slash\n"),
            (json!("two\nlines"), "|-\n    two\n    lines\n"),
            (json!("line\n"), "|\n    line\n"),
            (json!(" lead\nx"), "|4-\n     lead\n    x\n"),
            (json!("keep\n\n"), "|+\n    keep\n\n"),
            (json!("\n"), "|4+\n\n"),
            (json!("cr\rlf\n"), "\"cr\\rlf\\n\"\n"),
            (json!("trailing \nx"), "\"trailing \\nx\"\n"),
        ] {
            assert_eq!(to_yaml(&value), yaml, "{value}");
        }
    }

    #[test]
    fn collections_as_yaml_v3_writes_them() {
        assert_eq!(
            to_yaml(&json!([{"group": "", "kind": "Status", "version": "v1"}])),
            "- group: \"\"\n  kind: Status\n  version: v1\n"
        );
        assert_eq!(
            to_yaml(
                &json!({"group": "apps.cozystack.io", "version": "v1alpha1", "kind": "Postgres"})
            ),
            "group: apps.cozystack.io\nversion: v1alpha1\nkind: Postgres\n"
        );
        assert_eq!(to_yaml(&json!(["type"])), "- type\n");
        assert_eq!(to_yaml(&json!([])), "[]\n");
        assert_eq!(to_yaml(&json!({})), "{}\n");
        assert_eq!(
            to_yaml(&json!({"a": {"b": [1, [2, 3], {}], "c": []}, "d": {"e": {"f": "g"}}})),
            "a:\n    b:\n        - 1\n        - - 2\n          - 3\n        - {}\n    c: []\nd:\n    e:\n        f: g\n"
        );
        assert_eq!(
            to_yaml(&json!([{"rule": "a\nb", "m": {"x": 1}}, "s\nt", " u\n", {"k": "\nv"}])),
            "- rule: |-\n    a\n    b\n  m:\n    x: 1\n- |-\n  s\n  t\n- \" u\\n\"\n- k: \"\\nv\"\n"
        );
        let long = "k".repeat(129);
        assert_eq!(
            to_yaml(&json!({long.clone(): {"a": 1}, "x\ny": 2})),
            format!("? {long}\n:   a: 1\n? |-\n    x\n    y\n: 2\n")
        );
    }

    #[test]
    fn integers_and_floats_as_go_reads_them() {
        for s in [
            "0",
            "-1",
            "+7",
            "0x1f",
            "0o17",
            "0b101",
            "0b-1",
            "017",
            "1_000",
            "9223372036854775808",
        ] {
            assert!(!resolves_to_string(s), "{s}");
        }
        for s in [
            "1e3",
            "1.",
            ".5",
            "-.5e-3",
            "08",
            "99999999999999999999",
            "-99999999999999999999",
        ] {
            assert!(!resolves_to_string(s), "{s}");
        }
        for s in [
            "0x",
            "1e",
            "-",
            "+",
            "1.2.3",
            "0xFFFFFFFFFFFFFFFFFF",
            "1-2",
            "+inf",
            "0b2",
            "o1",
        ] {
            assert!(resolves_to_string(s), "{s}");
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e12f64..1e12).prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[ -~\\t\\n\\r]{0,12}".prop_map(Value::String),
            "[0-9._+eExob:-]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[ -~\\n]{0,6}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever the value, a YAML parser reads back exactly it.
        #[test]
        fn reads_back_as_the_same_value(value in json_value()) {
            let yaml = to_yaml(&value);
            let back: Value = serde_saphyr::from_str(&yaml)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{yaml}")))?;
            prop_assert_eq!(&back, &value, "{}", yaml);
        }
    }
}
