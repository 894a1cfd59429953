//! kubectl's `-o go-template=TEMPLATE` (also spelled `-o template=`, and
//! `-o go-template-file=FILE` / `-o templatefile=FILE`): a Go `text/template`
//! over the JSON document the command would print with `-o json`, rendered
//! as cli-runtime's `GoTemplatePrinter` renders one. The engine is the
//! gotmpl crate (a port of Go's `text/template`: Go's printing of maps, lists
//! and numbers, its built-in functions, `<no value>` for a missing key);
//! this module gives it the document the way kubectl does — decoded as
//! apimachinery's `util/json` decodes into `interface{}`, whole numbers as
//! `int64` and the others as `float64` — and kubectl's two functions of
//! its own, `exists` and `base64decode`.
//!
//! One difference is known: the engine prints a float of a million or more,
//! or under 1e-4, in decimal (`1500000.5`), where Go's `%v` prints
//! `1.5000005e+06`; whole numbers are integers here as in kubectl and print
//! alike, and so do the floats of everyday objects (`0.5`, `2.25`).

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use gotmpl::{MissingKey, TemplateError, Value as GoValue};
use serde_json::Value;

/// A parsed `-o go-template` template.
pub struct Template {
    engine: gotmpl::Template,
}

impl std::fmt::Debug for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Template").finish_non_exhaustive()
    }
}

impl Template {
    /// Parses `text` with kubectl's functions; the error is the engine's
    /// (`template: output:1:5: …`), which kubectl prints after `error
    /// parsing template <template>, `. A missing map key renders as `<no
    /// value>`, as kubectl's default `--allow-missing-template-keys` has it.
    pub fn parse(text: &str) -> Result<Template, String> {
        gotmpl::Template::new("output")
            .func("exists", exists)
            .func("base64decode", base64decode)
            .parse(text)
            .map(|engine| Template { engine })
            .map_err(|e| e.to_string())
    }

    /// The template with `--allow-missing-template-keys=false`
    /// (`allow: false`): a missing map key fails it (`map has no entry for
    /// key`) instead of printing `<no value>`.
    pub fn allowing_missing_keys(self, allow: bool) -> Template {
        let missing = if allow {
            MissingKey::Invalid
        } else {
            MissingKey::Error
        };
        Template {
            engine: self.engine.missing_key(missing),
        }
    }

    /// Renders the template over `data` into `out`. On an error, `out`
    /// holds what rendered before it, which kubectl has already printed by
    /// then (Go's templates write as they go).
    pub fn render_into(&self, data: &Value, out: &mut String) -> Result<(), String> {
        self.engine
            .execute_fmt(out, &to_go(data))
            .map_err(|e| e.to_string())
    }
}

/// `data` as Go holds a JSON document decoded into `interface{}` by
/// apimachinery's `util/json`: a number that parses as an `int64` is one,
/// any other a `float64`; objects are maps (printed and ranged over in key
/// order, as Go does).
fn to_go(data: &Value) -> GoValue {
    match data {
        Value::Null => GoValue::Nil,
        Value::Bool(b) => GoValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => GoValue::Int(i),
            None => GoValue::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => GoValue::String(Arc::from(s.as_str())),
        Value::Array(items) => GoValue::List(items.iter().map(to_go).collect()),
        Value::Object(fields) => GoValue::Map(Arc::new(
            fields
                .iter()
                .map(|(k, v)| (Arc::from(k.as_str()), to_go(v)))
                .collect::<BTreeMap<_, _>>(),
        )),
    }
}

/// kubectl's `exists ITEM INDEX…`: whether `index ITEM INDEX…` would reach
/// a value that is not nil (a list's index in range, a map's key present
/// with a value that is not null).
fn exists(args: &[GoValue]) -> gotmpl::Result<GoValue> {
    let Some((item, indices)) = args.split_first() else {
        return Err(TemplateError::Exec(
            "wrong number of args for exists: want at least 1 got 0".to_owned(),
        ));
    };
    let mut current = item.clone();
    for index in indices {
        let next = match (&current, index) {
            (GoValue::Nil, _) => return Ok(GoValue::Bool(false)),
            (GoValue::List(items), GoValue::Int(i)) => {
                usize::try_from(*i).ok().and_then(|i| items.get(i).cloned())
            }
            (GoValue::List(items), GoValue::Uint(i)) => {
                usize::try_from(*i).ok().and_then(|i| items.get(i).cloned())
            }
            (GoValue::String(s), GoValue::Int(i)) => usize::try_from(*i)
                .ok()
                .and_then(|i| s.as_bytes().get(i))
                .map(|b| GoValue::Int(i64::from(*b))),
            (GoValue::String(s), GoValue::Uint(i)) => usize::try_from(*i)
                .ok()
                .and_then(|i| s.as_bytes().get(i))
                .map(|b| GoValue::Int(i64::from(*b))),
            (GoValue::Map(fields), GoValue::String(key)) => {
                Some(fields.get(key).cloned().unwrap_or(GoValue::Nil))
            }
            _ => None,
        };
        match next {
            Some(value) => current = value,
            None => return Ok(GoValue::Bool(false)),
        }
    }
    Ok(GoValue::Bool(!matches!(current, GoValue::Nil)))
}

/// kubectl's `base64decode STRING`: the string standard base64 (with
/// padding) encodes, as Go's `base64.StdEncoding` decodes it: line breaks
/// skipped, unused bits of the last character not checked. (Bytes that are
/// not UTF-8 print as U+FFFD, where Go prints them raw.)
fn base64decode(args: &[GoValue]) -> gotmpl::Result<GoValue> {
    let text = match args {
        [GoValue::String(text)] => text,
        [other] => {
            return Err(TemplateError::Exec(format!(
                "wrong type for value; expected string; got {}",
                go_type(other)
            )));
        }
        _ => {
            return Err(TemplateError::Exec(format!(
                "wrong number of args for base64decode: want 1 got {}",
                args.len()
            )));
        }
    };
    let failed = |at: usize| {
        TemplateError::Exec(format!(
            "base64 decode failed: illegal base64 data at input byte {at}"
        ))
    };
    const GO_STD_ENCODING: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireCanonical),
    );
    let unbroken: Vec<u8> = text
        .bytes()
        .filter(|b| !matches!(b, b'\r' | b'\n'))
        .collect();
    GO_STD_ENCODING
        .decode(&unbroken)
        .map(|bytes| GoValue::String(Arc::from(String::from_utf8_lossy(&bytes).as_ref())))
        .map_err(|e| match e {
            base64::DecodeError::InvalidByte(at, _)
            | base64::DecodeError::InvalidLastSymbol(at, _) => failed(at),
            // Go names the start of the quantum left unfinished.
            base64::DecodeError::InvalidLength(_) | base64::DecodeError::InvalidPadding => {
                failed(unbroken.len() / 4 * 4)
            }
        })
}

/// The Go type a decoded JSON value has, as Go's errors name it.
fn go_type(value: &GoValue) -> &'static str {
    match value {
        GoValue::Nil => "<nil>",
        GoValue::Bool(_) => "bool",
        GoValue::Int(_) => "int64",
        GoValue::Uint(_) => "uint64",
        GoValue::Float(_) => "float64",
        GoValue::String(_) => "string",
        GoValue::List(_) => "[]interface {}",
        GoValue::Map(_) => "map[string]interface {}",
        _ => "func",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn render(template: &str, data: &Value) -> Result<String, String> {
        let mut out = String::new();
        Template::parse(template)?.render_into(data, &mut out)?;
        Ok(out)
    }

    fn document() -> Value {
        json!({
            "apiVersion": "v1", "kind": "List",
            "items": [
                {"kind": "Postgres", "plural": "postgreses", "shortNames": ["pg"],
                 "replicas": 3, "ratio": 1.5, "big": 1_000_000, "chart": null,
                 "labels": {"b": "2", "a": "1"}, "secret": "aGVsbG8="},
                {"kind": "Redis", "plural": "redises", "shortNames": [], "replicas": 1}
            ]
        })
    }

    /// Expected outputs are kubectl 1.36's for the same template and
    /// document (`kubectl label --local -f doc.json … -o go-template=…`).
    #[test]
    fn renders_as_kubectl_does() {
        let doc = document();
        let cases = [
            (
                "{{range .items}}{{.kind}} {{.plural}}\n{{end}}",
                "Postgres postgreses\nRedis redises\n",
            ),
            (
                "{{(index .items 0).replicas}} {{(index .items 0).ratio}} {{(index .items 0).big}}",
                "3 1.5 1000000",
            ),
            ("{{(index .items 0).labels}}", "map[a:1 b:2]"),
            (
                "{{(index .items 0).shortNames}} {{(index .items 1).shortNames}}",
                "[pg] []",
            ),
            (
                "{{(index .items 0).nope}} {{(index .items 0).chart}}",
                "<no value> <no value>",
            ),
            (
                "{{range $k, $v := (index .items 0).labels}}{{$k}}={{$v}};{{end}}",
                "a=1;b=2;",
            ),
            ("{{printf \"%d/%s\" (len .items) .kind}}", "2/List"),
            ("{{(index .items 0).secret | base64decode}}", "hello"),
            (
                "{{exists (index .items 0) \"labels\" \"a\"}} {{exists (index .items 0) \"chart\"}} {{exists .items 5}} {{exists .items 1 \"kind\"}}",
                "true false false true",
            ),
            ("{{if eq (index .items 1).replicas 1}}one{{end}}", "one"),
        ];
        for (template, want) in cases {
            assert_eq!(render(template, &doc).as_deref(), Ok(want), "{template}");
        }
    }

    #[test]
    fn errors_say_where_and_keep_what_rendered() {
        let doc = document();
        let mut out = String::new();
        let template = Template::parse("{{.kind}} {{if eq .items 1.0}}x{{end}}").unwrap();
        let err = template.render_into(&doc, &mut out).unwrap_err();
        assert_eq!(out, "List ");
        assert!(err.contains("incompatible types"), "{err}");

        let err = render("{{\"not base64!\" | base64decode}}", &doc).unwrap_err();
        assert!(
            err.contains("base64 decode failed: illegal base64 data at input byte 3"),
            "{err}"
        );

        let err = render("{{.items | base64decode}}", &doc).unwrap_err();
        assert!(
            err.contains("wrong type for value; expected string; got []interface {}"),
            "{err}"
        );
        // As Go's `base64.StdEncoding`: line breaks skipped, the unused
        // bits of the last character not checked (`aGk=`, `aGl=`: "hi").
        assert_eq!(
            render(
                "{{\"aGVs\\nbG8=\" | base64decode}} {{\"aGl=\" | base64decode}}",
                &doc
            )
            .as_deref(),
            Ok("hello hi")
        );
        // Go's `base64.StdEncoding` names the same bytes.
        for (input, at) in [("Redis", 4), ("aGVsbG8", 4), ("a===", 1)] {
            let err = render(&format!("{{{{{input:?} | base64decode}}}}"), &doc).unwrap_err();
            assert!(err.contains(&format!("input byte {at}")), "{input}: {err}");
        }

        let err = Template::parse("{{.kind").unwrap_err();
        assert!(err.starts_with("template: output:1:"), "{err}");
    }
}
