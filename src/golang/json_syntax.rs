//! Go's `encoding/json` syntax errors: what `json.Unmarshal` says of text
//! that is not one JSON value (its scanner's `SyntaxError` message, e.g.
//! `invalid character 'x' looking for beginning of value`, `unexpected end
//! of JSON input`), which kube-apiserver puts in its 400s.
//!
//! Only the syntax is judged, as Go's `checkValid` judges it before
//! decoding: strings are not checked for valid UTF-8 (Go replaces bad
//! bytes), and nesting may go 10,000 levels deep.

/// Go's `maxNestingDepth`.
const MAX_NESTING_DEPTH: usize = 10_000;

const EOF: &str = "unexpected end of JSON input";

/// Where the scanner is between values of an object or array.
#[derive(Clone, Copy)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// The scanner's state (Go's `step` functions).
#[derive(Clone, Copy)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    Int,
    Zero,
    Dot,
    DotDigits,
    Exp,
    ExpSign,
    ExpDigits,
    /// Inside `true`, `false` or `null`: the literal and how much is read.
    Literal(&'static str, usize),
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// Go's `quoteChar`: the byte as the message shows it.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        _ => {
            let q = super::quote(&char::from(c).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

fn error(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote_char(c))
}

/// `Ok` if `data` is one JSON value (with surrounding white space), else
/// the message of Go's `SyntaxError`.
pub fn check(data: &[u8]) -> Result<(), String> {
    let mut stack: Vec<Parse> = Vec::new();
    let mut state = State::BeginValue;
    for &c in data {
        state = step(&mut stack, state, c)?;
    }
    // Go's `eof`: a number may end here; anything else unfinished is EOF.
    if matches!(
        state,
        State::Int | State::Zero | State::DotDigits | State::ExpDigits
    ) {
        state = step(&mut stack, state, b' ')?;
    }
    match state {
        State::EndTop => Ok(()),
        State::EndValue if stack.is_empty() => Ok(()),
        _ => Err(EOF.to_owned()),
    }
}

fn push(stack: &mut Vec<Parse>, c: u8, p: Parse, next: State) -> Result<State, String> {
    stack.push(p);
    if stack.len() > MAX_NESTING_DEPTH {
        return Err(error(c, "exceeded max depth"));
    }
    Ok(next)
}

fn step(stack: &mut Vec<Parse>, state: State, c: u8) -> Result<State, String> {
    match state {
        State::BeginValue => {
            if is_space(c) {
                return Ok(state);
            }
            begin_value(stack, c)
        }
        State::BeginValueOrEmpty => {
            if is_space(c) {
                return Ok(state);
            }
            if c == b']' {
                return end_value(stack, c);
            }
            begin_value(stack, c)
        }
        State::BeginStringOrEmpty => {
            if is_space(c) {
                return Ok(state);
            }
            if c == b'}' {
                if let Some(last) = stack.last_mut() {
                    *last = Parse::ObjectValue;
                }
                return end_value(stack, c);
            }
            step(stack, State::BeginString, c)
        }
        State::BeginString => match c {
            _ if is_space(c) => Ok(state),
            b'"' => Ok(State::InString),
            _ => Err(error(c, "looking for beginning of object key string")),
        },
        State::EndValue => end_value(stack, c),
        State::EndTop => {
            if is_space(c) {
                Ok(state)
            } else {
                Err(error(c, "after top-level value"))
            }
        }
        State::InString => match c {
            b'"' => Ok(State::EndValue),
            b'\\' => Ok(State::InStringEsc),
            _ if c < 0x20 => Err(error(c, "in string literal")),
            _ => Ok(state),
        },
        State::InStringEsc => match c {
            b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => Ok(State::InString),
            b'u' => Ok(State::InStringEscU(0)),
            _ => Err(error(c, "in string escape code")),
        },
        State::InStringEscU(n) => {
            if !c.is_ascii_hexdigit() {
                return Err(error(c, "in \\u hexadecimal character escape"));
            }
            Ok(if n == 3 {
                State::InString
            } else {
                State::InStringEscU(n + 1)
            })
        }
        State::Neg => match c {
            b'0' => Ok(State::Zero),
            b'1'..=b'9' => Ok(State::Int),
            _ => Err(error(c, "in numeric literal")),
        },
        State::Int if c.is_ascii_digit() => Ok(state),
        State::Int | State::Zero => match c {
            b'.' => Ok(State::Dot),
            b'e' | b'E' => Ok(State::Exp),
            _ => end_value(stack, c),
        },
        State::Dot => {
            if c.is_ascii_digit() {
                Ok(State::DotDigits)
            } else {
                Err(error(c, "after decimal point in numeric literal"))
            }
        }
        State::DotDigits => match c {
            _ if c.is_ascii_digit() => Ok(state),
            b'e' | b'E' => Ok(State::Exp),
            _ => end_value(stack, c),
        },
        State::Exp if matches!(c, b'+' | b'-') => Ok(State::ExpSign),
        State::Exp | State::ExpSign => {
            if c.is_ascii_digit() {
                Ok(State::ExpDigits)
            } else {
                Err(error(c, "in exponent of numeric literal"))
            }
        }
        State::ExpDigits => {
            if c.is_ascii_digit() {
                Ok(state)
            } else {
                end_value(stack, c)
            }
        }
        State::Literal(word, read) => {
            let want = word.as_bytes()[read];
            if c != want {
                return Err(error(
                    c,
                    &format!("in literal {word} (expecting {})", quote_char(want)),
                ));
            }
            Ok(if read + 1 == word.len() {
                State::EndValue
            } else {
                State::Literal(word, read + 1)
            })
        }
    }
}

fn begin_value(stack: &mut Vec<Parse>, c: u8) -> Result<State, String> {
    match c {
        b'{' => push(stack, c, Parse::ObjectKey, State::BeginStringOrEmpty),
        b'[' => push(stack, c, Parse::ArrayValue, State::BeginValueOrEmpty),
        b'"' => Ok(State::InString),
        b'-' => Ok(State::Neg),
        b'0' => Ok(State::Zero),
        b'1'..=b'9' => Ok(State::Int),
        b't' => Ok(State::Literal("true", 1)),
        b'f' => Ok(State::Literal("false", 1)),
        b'n' => Ok(State::Literal("null", 1)),
        _ => Err(error(c, "looking for beginning of value")),
    }
}

fn end_value(stack: &mut Vec<Parse>, c: u8) -> Result<State, String> {
    let Some(&top) = stack.last() else {
        return step(stack, State::EndTop, c);
    };
    if is_space(c) {
        return Ok(State::EndValue);
    }
    match (top, c) {
        (Parse::ObjectKey, b':') => {
            *stack.last_mut().expect("top") = Parse::ObjectValue;
            Ok(State::BeginValue)
        }
        (Parse::ObjectKey, _) => Err(error(c, "after object key")),
        (Parse::ObjectValue, b',') => {
            *stack.last_mut().expect("top") = Parse::ObjectKey;
            Ok(State::BeginString)
        }
        (Parse::ObjectValue, b'}') | (Parse::ArrayValue, b']') => {
            stack.pop();
            Ok(if stack.is_empty() {
                State::EndTop
            } else {
                State::EndValue
            })
        }
        (Parse::ObjectValue, _) => Err(error(c, "after object key:value pair")),
        (Parse::ArrayValue, b',') => Ok(State::BeginValue),
        (Parse::ArrayValue, _) => Err(error(c, "after array element")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows from Go's `encoding/json` tests (decode_test.go, scanner_test.go)
    /// and kube-apiserver's answers.
    #[test]
    fn go_syntax_errors() {
        for (input, want) in [
            ("{}", Ok(())),
            (
                " [1, 2.5e-3, -0, \"a\\u00e9\\n\", true, false, null] ",
                Ok(()),
            ),
            ("123", Ok(())),
            ("\"x\"", Ok(())),
            ("", Err(EOF)),
            ("[2, 3", Err(EOF)),
            ("[{", Err(EOF)),
            ("{", Err(EOF)),
            ("-", Err(EOF)),
            (
                "{\"X\": \"foo\", \"Y\"}",
                Err("invalid character '}' after object key"),
            ),
            (
                "[1, 2, 3+]",
                Err("invalid character '+' after array element"),
            ),
            (
                "{\"X\":12x}",
                Err("invalid character 'x' after object key:value pair"),
            ),
            (
                "{\"F3\": -}",
                Err("invalid character '}' in numeric literal"),
            ),
            (
                "\x01 42",
                Err("invalid character '\\x01' looking for beginning of value"),
            ),
            (
                " 42 \x01",
                Err("invalid character '\\x01' after top-level value"),
            ),
            (
                "x",
                Err("invalid character 'x' looking for beginning of value"),
            ),
            ("[] x", Err("invalid character 'x' after top-level value")),
            (
                "[{op:1}]",
                Err("invalid character 'o' looking for beginning of object key string"),
            ),
            ("01", Err("invalid character '1' after top-level value")),
            ("1.", Err(EOF)),
            (
                "1.x",
                Err("invalid character 'x' after decimal point in numeric literal"),
            ),
            (
                "1ex",
                Err("invalid character 'x' in exponent of numeric literal"),
            ),
            ("tru", Err(EOF)),
            (
                "trux",
                Err("invalid character 'x' in literal true (expecting 'e')"),
            ),
            (
                "nul1",
                Err("invalid character '1' in literal null (expecting 'l')"),
            ),
            (
                "\"\\x\"",
                Err("invalid character 'x' in string escape code"),
            ),
            (
                "\"\\u12g4\"",
                Err("invalid character 'g' in \\u hexadecimal character escape"),
            ),
            ("\"a\nb\"", Err("invalid character '\\n' in string literal")),
            (
                "'a'",
                Err("invalid character '\\'' looking for beginning of value"),
            ),
            (
                "[\"a\" \"b\"]",
                Err("invalid character '\"' after array element"),
            ),
            ("{}}", Err("invalid character '}' after top-level value")),
            (
                "{]",
                Err("invalid character ']' looking for beginning of object key string"),
            ),
        ] {
            assert_eq!(
                check(input.as_bytes()),
                want.map_err(str::to_owned),
                "{input:?}"
            );
        }
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(check(deep.as_bytes()), Ok(()));
        let deeper = format!("{}{}", "[".repeat(10_001), "]".repeat(10_001));
        assert_eq!(
            check(deeper.as_bytes()),
            Err("invalid character '[' exceeded max depth".to_owned())
        );
    }
}
