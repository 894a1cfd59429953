//! Regular-expression dialect bridging for `pattern`.
//!
//! Kubernetes compiles `pattern` with Go's RE2 (`regexp.Compile`), where `\d`,
//! `\w`, `\s` and `\b` are ASCII-only (as they are in the ECMA-262 dialect
//! JSON Schema specifies), and `[` inside a bracket expression is a literal.
//! The `regex` crate is RE2-like but Unicode-aware for those classes and
//! nests bracket expressions, so patterns are rewritten before compiling to
//! give Go's answers. Syntax neither RE2 nor `regex` knows (look-around,
//! back-references) fails to compile, as it does in Kubernetes.

use regex::Regex;

/// Compiles a schema `pattern` with Go RE2 semantics for the ASCII classes.
pub(super) fn compile(pattern: &str) -> Result<Regex, String> {
    let translated = translate(pattern);
    regex::RegexBuilder::new(&translated)
        .size_limit(4 << 20)
        .build()
        .map_err(|e| match e {
            regex::Error::Syntax(msg) => {
                // The crate's message quotes the (translated) pattern with a
                // caret diagram; keep its last, explanatory line.
                let last = msg
                    .lines()
                    .rev()
                    .find(|l| l.trim_start().starts_with("error:"))
                    .unwrap_or("invalid syntax");
                last.trim_start()
                    .trim_start_matches("error:")
                    .trim()
                    .to_string()
            }
            regex::Error::CompiledTooBig(_) => "pattern is too large".to_string(),
            other => other.to_string(),
        })
}

/// Rewrites Go/ECMA-only spellings into equivalent `regex` crate syntax.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    // Inside a bracket expression; `class_start` is true right after `[` or
    // `[^`, where a `]` is a literal.
    let mut in_class = false;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        if c == '\\' {
            let Some(e) = chars.next() else {
                out.push('\\');
                break;
            };
            class_start = false;
            if in_class {
                match e {
                    'd' => out.push_str("0-9"),
                    'w' => out.push_str("0-9A-Za-z_"),
                    's' => out.push_str("\\t\\n\\x0C\\r "),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            } else {
                match e {
                    'd' => out.push_str("[0-9]"),
                    'D' => out.push_str("[^0-9]"),
                    'w' => out.push_str("[0-9A-Za-z_]"),
                    'W' => out.push_str("[^0-9A-Za-z_]"),
                    's' => out.push_str("[\\t\\n\\x0C\\r ]"),
                    'S' => out.push_str("[^\\t\\n\\x0C\\r ]"),
                    'b' => out.push_str("(?-u:\\b)"),
                    'B' => out.push_str("(?-u:\\B)"),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            continue;
        }
        if in_class {
            match c {
                ']' if class_start => out.push_str("\\]"),
                ']' => {
                    in_class = false;
                    out.push(']');
                }
                '[' if chars.peek() == Some(&':') => {
                    // POSIX class such as [:alpha:]: copy through to ":]".
                    out.push('[');
                    let mut prev = '[';
                    for p in chars.by_ref() {
                        out.push(p);
                        if prev == ':' && p == ']' {
                            break;
                        }
                        prev = p;
                    }
                }
                '[' => out.push_str("\\["),
                '&' | '~' | '-' if chars.peek() == Some(&c) => {
                    // `&&`, `~~` and `--` are set operators in the regex
                    // crate but literals in RE2.
                    out.push('\\');
                    out.push(c);
                }
                _ => out.push(c),
            }
            class_start = false;
            continue;
        }
        if c == '[' {
            in_class = true;
            class_start = true;
            out.push('[');
            if chars.peek() == Some(&'^') {
                chars.next();
                out.push('^');
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        compile(p).expect("pattern compiles").is_match(s)
    }

    #[test]
    fn ascii_classes_follow_go() {
        assert!(m(r"^\d+$", "123"));
        assert!(
            !m(r"^\d+$", "١٢٣"),
            "Arabic-Indic digits are not \\d in RE2"
        );
        assert!(m(r"^\w+$", "abc_1"));
        assert!(!m(r"^\w+$", "é"));
        assert!(m(r"^\s$", " "));
        assert!(!m(r"^\s$", "\u{a0}"));
        assert!(m(r"^[\d.]+$", "1.2.3"));
        assert!(!m(r"^[\w]+$", "é"));
        assert!(m(r"\bfoo\b", "a foo b"));
        assert!(m(r"^\D\W\S$", "a-b"));
    }

    #[test]
    fn brackets_and_escapes() {
        assert!(m(r"^[[]$", "["));
        assert!(m(r"^[]a]+$", "]a"));
        assert!(m(r"^[^]a]+$", "bc"));
        assert!(m(r"^[[:alpha:]]+$", "abc"));
        assert!(m(r"^a\/b$", "a/b"));
        assert!(m(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "my-name"));
        assert!(m(r"^[a&&b]$", "&"));
        assert!(m(r"^[a--]$", "-"));
        assert!(m(r"^\\d$", "\\d"));
    }

    #[test]
    fn unsupported_syntax_is_an_error() {
        assert!(compile(r"^(?!foo).*$").is_err());
        assert!(compile(r"(a)\1").is_err());
        assert!(compile(r"[a-").is_err());
        let msg = compile(r"(?<=x)y").unwrap_err();
        assert!(!msg.is_empty());
    }
}
