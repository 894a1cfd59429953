//! Numbers as kube-openapi checks them: a JSON number seen as Go's `int64`
//! or `float64`, the range check of a type and format, and `minimum`,
//! `maximum` and `multipleOf` with their messages.

use std::cmp::Ordering;

use serde_json::Value;

use crate::golang::format_g as go_float;

use super::super::node_type::NodeType;
use super::compile::Node;
use super::field_error::{FieldError, FieldErrorKind};

/// kube-openapi's numeric validators for one number: the range of the type
/// and format, `multipleOf`, `minimum` and `maximum`.
pub(super) fn check_number(
    n: &Node,
    num: &serde_json::Number,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let type_name = match n.ty {
        NodeType::Integer => "integer",
        NodeType::Number => "number",
        _ => "",
    };
    let c = NumberCheck {
        num,
        val: Num::from(num),
        type_name,
        format: if type_name.is_empty() { "" } else { &n.format },
        path,
    };
    if !in_range(c.val, type_name, c.format) {
        errs.push(c.range_error("Checked"));
    }
    if let Some(factor) = n.multiple_of {
        c.multiple_of(factor, errs);
    }
    if let Some(min) = n.minimum {
        c.bound(Side::Minimum, min, n.exclusive_minimum, errs);
    }
    if let Some(max) = n.maximum {
        c.bound(Side::Maximum, max, n.exclusive_maximum, errs);
    }
}

/// Which bound [`NumberCheck::bound`] checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Minimum,
    Maximum,
}

/// A number being checked, with what its messages name.
struct NumberCheck<'a> {
    num: &'a serde_json::Number,
    val: Num,
    /// `integer`, `number`, or empty for other node types.
    type_name: &'a str,
    /// The node's numeric format (empty if none or not numeric).
    format: &'a str,
    path: &'a str,
}

impl NumberCheck<'_> {
    /// The error of a value (or a bound) outside what the type and format
    /// can hold, e.g. `Checked value must be of type integer (default
    /// format) in spec.replicas`, at `<nil>` as kube-apiserver reports it.
    fn range_error(&self, prefix: &str) -> FieldError {
        let (type_name, format, path) = (self.type_name, self.format, self.path);
        let what = if format.is_empty() {
            format!("{prefix} value must be of type {type_name} (default format) in {path}")
        } else {
            format!("{prefix} value must be of type {type_name} with format {format} in {path}")
        };
        // kube-openapi raises it without a field name, so kube-apiserver
        // reports it at `<nil>` with an empty value; the message names the path.
        FieldError::new(
            "<nil>",
            FieldErrorKind::Invalid,
            Some(Value::String(String::new())),
            what,
        )
    }

    fn bad(&self) -> Value {
        num_value(self.num)
    }

    fn multiple_of(&self, factor: f64, errs: &mut Vec<FieldError>) {
        let path = self.path;
        let native = in_range(Num::F(factor), self.type_name, self.format);
        if !native {
            errs.push(self.range_error("MultipleOf"));
        }
        let fail = match self.val {
            Num::I(i) if native && factor.fract() == 0.0 => {
                let f = factor as i64;
                if f <= 0 {
                    Some(Err(f.to_string()))
                } else {
                    (i % f != 0).then(|| Ok(f.to_string()))
                }
            }
            _ => {
                if factor <= 0.0 {
                    Some(Err(go_float(factor)))
                } else {
                    let data = self.val.as_f64();
                    let mult = if factor < 1.0 {
                        1.0 / factor * data
                    } else {
                        data / factor
                    };
                    (!is_json_integer(mult)).then(|| Ok(go_float(factor)))
                }
            }
        };
        match fail {
            Some(Ok(shown)) => errs.push(FieldError::new(
                path,
                FieldErrorKind::Invalid,
                Some(self.bad()),
                format!("{path} in body should be a multiple of {shown}"),
            )),
            Some(Err(shown)) => errs.push(FieldError::new(
                path,
                FieldErrorKind::Invalid,
                Some(serde_json::json!(factor)),
                format!("factor MultipleOf declared for {path} must be positive: {shown}"),
            )),
            None => {}
        }
    }

    /// `minimum` or `maximum`: an integer value against an integral bound
    /// that the type can hold compares as integers and prints the bound as
    /// digits; anything else compares as floats and prints the bound with
    /// `%v`.
    fn bound(&self, side: Side, bound: f64, exclusive: bool, errs: &mut Vec<FieldError>) {
        let native = in_range(Num::F(bound), self.type_name, self.format);
        if !native {
            errs.push(self.range_error(match side {
                Side::Minimum => "Minimum boundary",
                Side::Maximum => "Maximum boundary",
            }));
        }
        let (order, shown) = match self.val {
            Num::I(i) if native && bound.fract() == 0.0 => {
                let b = bound as i64;
                (Some(i.cmp(&b)), b.to_string())
            }
            _ => (self.val.as_f64().partial_cmp(&bound), go_float(bound)),
        };
        let beyond = match side {
            Side::Minimum => Ordering::Less,
            Side::Maximum => Ordering::Greater,
        };
        let fails = order == Some(beyond) || (exclusive && order == Some(Ordering::Equal));
        if fails {
            let op = match (side, exclusive) {
                (Side::Minimum, true) => "greater than",
                (Side::Minimum, false) => "greater than or equal to",
                (Side::Maximum, true) => "less than",
                (Side::Maximum, false) => "less than or equal to",
            };
            let path = self.path;
            errs.push(FieldError::new(
                path,
                FieldErrorKind::Invalid,
                Some(self.bad()),
                format!("{path} in body should be {op} {shown}"),
            ));
        }
    }
}

/// A JSON number as Go's decoder sees it: `int64` when it is an integer that
/// fits, `float64` otherwise.
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    I(i64),
    F(f64),
}

impl Num {
    pub(super) fn from(n: &serde_json::Number) -> Num {
        match n.as_i64() {
            Some(i) => Num::I(i),
            None => Num::F(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    pub(super) fn as_f64(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
}

fn num_value(n: &serde_json::Number) -> Value {
    Value::Number(n.clone())
}

/// kube-openapi's `IsValueValidAgainstRange`.
fn in_range(val: Num, type_name: &str, format: &str) -> bool {
    match type_name {
        "integer" => {
            let as_int = match val {
                Num::I(i) => Some(i),
                // strconv.FormatFloat(f, 'f', -1) then ParseInt.
                Num::F(f) if f.fract() == 0.0 && f.abs() < 9.223_372_036_854_775e18 => {
                    Some(f as i64)
                }
                Num::F(_) => None,
            };
            match (as_int, format) {
                (None, _) => false,
                (Some(i), "int32") => i32::try_from(i).is_ok(),
                (Some(_), _) => true,
            }
        }
        _ if format == "float" => val.as_f64().abs() <= f64::from(f32::MAX),
        _ => true,
    }
}

/// go-openapi/swag's `IsFloat64AJSONInteger`.
pub(super) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_992.0; // 2^53
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let g = f.trunc();
    if f == g {
        return true;
    }
    let diff = (f - g).abs();
    if g == 0.0 {
        return false;
    }
    diff / (f.abs() + g.abs()) < 1e-9
}

#[cfg(test)]
mod tests {
    use super::super::FieldErrorKind;
    use super::super::tests::{errors, one, replicas_schema};
    use serde_json::json;

    #[test]
    fn bounds_use_kubernetes_wording() {
        let e = one(replicas_schema(), json!({"replicas": -1}));
        assert_eq!(e.kind, FieldErrorKind::Invalid);
        assert_eq!(e.kind.reason(), "FieldValueInvalid");
        assert_eq!(
            e.to_string(),
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
        );
        assert_eq!(
            errors(replicas_schema(), json!({"replicas": 11})),
            [
                "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
            ]
        );
        let excl = json!({"type": "object", "properties": {"ratio": {
            "type": "number", "minimum": 0, "exclusiveMinimum": true,
            "maximum": 1.5, "exclusiveMaximum": true, "multipleOf": 0.25
        }}});
        assert_eq!(
            errors(excl.clone(), json!({"ratio": 0})),
            ["spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"]
        );
        assert_eq!(
            errors(excl.clone(), json!({"ratio": 1.5})),
            ["spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5"]
        );
        assert_eq!(
            errors(excl.clone(), json!({"ratio": 0.3})),
            ["spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.25"]
        );
        assert!(errors(excl, json!({"ratio": 0.75})).is_empty());
        let mult =
            json!({"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 3}}});
        assert_eq!(
            errors(mult, json!({"n": 7})),
            ["spec.n: Invalid value: 7: spec.n in body should be a multiple of 3"]
        );
    }

    #[test]
    fn integers_follow_kubernetes_json_rules() {
        // 2.0 is an integer, as Kubernetes' JSON decoding and kube-openapi see it.
        assert!(errors(replicas_schema(), json!({"replicas": 2.0})).is_empty());
        // 2.5 fails the type check and then the int64 range check, which
        // kube-apiserver reports at `<nil>`, after the field's own error.
        assert_eq!(
            errors(replicas_schema(), json!({"replicas": 2.5})),
            [
                r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#,
                r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.replicas"#,
            ]
        );
        let i32s = json!({"type": "object", "properties": {"port": {"type": "integer", "format": "int32"}}});
        assert_eq!(
            errors(i32s.clone(), json!({"port": 3_000_000_000_i64})),
            [
                r#"<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.port"#
            ]
        );
        assert!(errors(i32s, json!({"port": 8080})).is_empty());
        // Numbers accept integers.
        let num = json!({"type": "object", "properties": {"x": {"type": "number"}}});
        assert!(errors(num, json!({"x": 3})).is_empty());
    }

    /// kube-openapi formats a float bound with `%v` (`ExceedsMaximum` and
    /// friends in `pkg/validation/errors/schema.go`), so 1e6 <= |x| < 1e21
    /// prints in `e` notation; an integer value against an integral bound
    /// goes through `MaximumInt` and prints plain digits. Checked against
    /// kube-apiserver v1.36 with a CRD of the same schema (tests/it/api.rs
    /// `number_bound_messages_match_kube_apiserver`).
    #[test]
    fn number_bound_messages_use_go_float_format() {
        let schema = json!({"type": "object", "properties": {
            "big": {"type": "number", "maximum": 1000000},
            "small": {"type": "number", "minimum": 0.00001},
            "excl": {"type": "number", "maximum": 2500000, "exclusiveMaximum": true},
            "step": {"type": "number", "multipleOf": 0.5},
            "int": {"type": "number", "maximum": 1000000}
        }});
        let errs = errors(
            schema,
            json!({
                "big": 1500000.5,
                "small": 0.000001,
                "excl": 2500000.0,
                "step": 1000000.25,
                "int": 2000000
            }),
        );
        assert_eq!(
            errs,
            [
                "spec.big: Invalid value: 1.5000005e+06: spec.big in body should be less than or equal to 1e+06",
                "spec.excl: Invalid value: 2.5e+06: spec.excl in body should be less than 2.5e+06",
                "spec.int: Invalid value: 2000000: spec.int in body should be less than or equal to 1000000",
                "spec.small: Invalid value: 1e-06: spec.small in body should be greater than or equal to 1e-05",
                "spec.step: Invalid value: 1.00000025e+06: spec.step in body should be a multiple of 0.5",
            ]
        );
    }
}
