//! Kubernetes' CEL quantity library (`k8s.io/apiserver/pkg/cel/library`
//! `Quantity`): `quantity(string)`, `isQuantity(string)` and the members
//! `sign`, `isInteger`, `asInteger`, `asApproximateFloat`, `add`, `sub`,
//! `isLessThan`, `isGreaterThan` and `compareTo`, over resource quantities
//! such as `500m`, `1Gi` or `1e3`.
//!
//! A quantity is kept exactly as a count of nano-units in an `i128`
//! (Kubernetes keeps at most nano precision, rounding finer digits up); a
//! quantity beyond about 10^29 is refused as too large, where Kubernetes'
//! arbitrary-precision decimal would keep it.

use std::any::Any;
use std::cmp::Ordering;

use cel::common::types::{CelBool, CelDouble, CelInt, CelString, Type};
use cel::common::value::{StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// The CEL type of quantities.
pub(super) static QUANTITY_TYPE: Type = Type::new_unspecified_type("kubernetes.Quantity");

/// Nano-units per unit.
const NANO: i128 = 1_000_000_000;

/// A parsed quantity: its value in nano-units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Quantity(i128);

impl Val for Quantity {
    fn get_type(&self) -> &Type {
        <Self as Val>::cel_type()
    }
    fn cel_type() -> &'static Type {
        &QUANTITY_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Quantity>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}

impl StaticVal for Quantity {}

impl Quantity {
    /// Parses a Kubernetes quantity: a signed decimal number followed by a
    /// binary suffix (`Ki`..`Ei`), a decimal one (`n`, `u`, `m`, `k`, `M`,
    /// `G`, `T`, `P`, `E`) or an exponent (`e3`, `E-2`).
    pub(crate) fn parse(s: &str) -> Result<Quantity, &'static str> {
        if s.is_empty() {
            return Err(
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            );
        }
        let bad = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
        let (negative, rest) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(num_end);
        let (int_part, frac_part) = match number.split_once('.') {
            Some((i, f)) => (i, f),
            None => (number, ""),
        };
        if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
            return Err(bad);
        }
        // (base 10 exponent, base 2 exponent)
        let (exp10, exp2): (i32, u32) = match suffix {
            "" => (0, 0),
            "Ki" => (0, 10),
            "Mi" => (0, 20),
            "Gi" => (0, 30),
            "Ti" => (0, 40),
            "Pi" => (0, 50),
            "Ei" => (0, 60),
            "n" => (-9, 0),
            "u" => (-6, 0),
            "m" => (-3, 0),
            "k" => (3, 0),
            "M" => (6, 0),
            "G" => (9, 0),
            "T" => (12, 0),
            "P" => (15, 0),
            "E" => (18, 0),
            other => {
                let exp = other
                    .strip_prefix(['e', 'E'])
                    .filter(|e| !e.is_empty())
                    .ok_or(bad)?;
                let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad);
                }
                (
                    exp.parse::<i32>()
                        .map_err(|_| "quantity exponent is too large")?,
                    0,
                )
            }
        };
        let too_large = "quantity is too large";
        // digits × 10^(exp10 - len(frac)) × 2^exp2, in nano-units, rounded up.
        let mut mantissa: i128 = 0;
        for b in int_part.bytes().chain(frac_part.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(b - b'0')))
                .ok_or(too_large)?;
        }
        let frac_len = i32::try_from(frac_part.len()).map_err(|_| too_large)?;
        let scale = exp10 - frac_len + 9;
        let mut nanos = if scale >= 0 {
            let p = 10i128.checked_pow(u32::try_from(scale).map_err(|_| too_large)?);
            p.and_then(|p| mantissa.checked_mul(p)).ok_or(too_large)?
        } else {
            let div = u32::try_from(-scale)
                .ok()
                .and_then(|d| 10i128.checked_pow(d));
            match div {
                Some(d) => (mantissa + d - 1) / d,
                // Finer than any i128: rounds up to one nano-unit unless zero.
                None => i128::from(mantissa != 0),
            }
        };
        nanos = nanos.checked_mul(1i128 << exp2).ok_or(too_large)?;
        Ok(Quantity(if negative { -nanos } else { nanos }))
    }

    fn sign(&self) -> i64 {
        match self.0.cmp(&0) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }

    fn as_integer(&self) -> Option<i64> {
        if self.0 % NANO != 0 {
            return None;
        }
        i64::try_from(self.0 / NANO).ok()
    }
}

fn func_err(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

fn quantity(s: &CelString<'_>) -> Result<Quantity, ExecutionError> {
    Quantity::parse(s).map_err(|e| func_err("quantity", e))
}

fn is_quantity(s: &CelString<'_>) -> CelBool {
    Quantity::parse(s).is_ok().into()
}

fn sign(q: &Quantity) -> CelInt {
    q.sign().into()
}

fn is_integer(q: &Quantity) -> CelBool {
    q.as_integer().is_some().into()
}

fn as_integer(q: &Quantity) -> Result<CelInt, ExecutionError> {
    q.as_integer()
        .map(CelInt::from)
        .ok_or_else(|| func_err("asInteger", "cannot convert value to integer"))
}

fn as_approximate_float(q: &Quantity) -> CelDouble {
    // Precision loss is what "approximate" promises.
    #[allow(clippy::cast_precision_loss)]
    let v = q.0 as f64 / NANO as f64;
    v.into()
}

fn checked(function: &str, v: Option<i128>) -> Result<Quantity, ExecutionError> {
    v.map(Quantity)
        .ok_or_else(|| func_err(function, "quantity overflow"))
}

fn add(a: &Quantity, b: &Quantity) -> Result<Quantity, ExecutionError> {
    checked("add", a.0.checked_add(b.0))
}

fn add_int(a: &Quantity, b: &CelInt) -> Result<Quantity, ExecutionError> {
    checked(
        "add",
        i128::from(*b.inner())
            .checked_mul(NANO)
            .and_then(|b| a.0.checked_add(b)),
    )
}

fn sub(a: &Quantity, b: &Quantity) -> Result<Quantity, ExecutionError> {
    checked("sub", a.0.checked_sub(b.0))
}

fn sub_int(a: &Quantity, b: &CelInt) -> Result<Quantity, ExecutionError> {
    checked(
        "sub",
        i128::from(*b.inner())
            .checked_mul(NANO)
            .and_then(|b| a.0.checked_sub(b)),
    )
}

fn is_less_than(a: &Quantity, b: &Quantity) -> CelBool {
    (a < b).into()
}

fn is_greater_than(a: &Quantity, b: &Quantity) -> CelBool {
    (a > b).into()
}

fn compare_to(a: &Quantity, b: &Quantity) -> CelInt {
    match a.cmp(b) {
        Ordering::Less => -1i64,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
    .into()
}

/// Registers the library on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(QUANTITY_TYPE.to_owned())?;
    cel::add_overload!(env, fn quantity: (CelString) -> Result<Quantity>)?;
    cel::add_overload!(env, fn is_quantity: (CelString) -> CelBool, name = "isQuantity")?;
    cel::add_member_overload!(env, fn sign: (Quantity) -> CelInt)?;
    cel::add_member_overload!(env, fn is_integer: (Quantity) -> CelBool, name = "isInteger")?;
    cel::add_member_overload!(env, fn as_integer: (Quantity) -> Result<CelInt>, name = "asInteger")?;
    cel::add_member_overload!(env, fn as_approximate_float: (Quantity) -> CelDouble,
        name = "asApproximateFloat")?;
    cel::add_member_overload!(env, fn add: (Quantity, Quantity) -> Result<Quantity>)?;
    cel::add_member_overload!(env, fn add_int: (Quantity, CelInt) -> Result<Quantity>, name = "add")?;
    cel::add_member_overload!(env, fn sub: (Quantity, Quantity) -> Result<Quantity>)?;
    cel::add_member_overload!(env, fn sub_int: (Quantity, CelInt) -> Result<Quantity>, name = "sub")?;
    cel::add_member_overload!(env, fn is_less_than: (Quantity, Quantity) -> CelBool,
        name = "isLessThan")?;
    cel::add_member_overload!(env, fn is_greater_than: (Quantity, Quantity) -> CelBool,
        name = "isGreaterThan")?;
    cel::add_member_overload!(env, fn compare_to: (Quantity, Quantity) -> CelInt, name = "compareTo")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suffixes_exponents_and_fractions() {
        let q = |s: &str| Quantity::parse(s).unwrap().0;
        assert_eq!(q("1"), NANO);
        assert_eq!(q("1Gi"), NANO << 30);
        assert_eq!(q("1.5Gi"), (3 * NANO / 2) << 30);
        assert_eq!(q("500m"), NANO / 2);
        assert_eq!(q("1e3"), 1000 * NANO);
        assert_eq!(q("1E-3"), NANO / 1000);
        assert_eq!(q("-2k"), -2000 * NANO);
        assert_eq!(q(".5"), NANO / 2);
        assert_eq!(q("+5n"), 5);
        // Finer than nano rounds up.
        assert_eq!(q("0.1n"), 1);
        for bad in ["", "Gi", "1Gb", "1.2.3", "1e", "abc", "1 Gi", "1ee3"] {
            assert!(Quantity::parse(bad).is_err(), "{bad}");
        }
        assert!(Quantity::parse("1e40").is_err());
    }
}
