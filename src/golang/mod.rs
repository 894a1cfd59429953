//! Go compatibility: the exact text Go and Kubernetes print, and the Go
//! syntaxes they accept, in one place, so every message that must match
//! kube-apiserver or kubectl byte for byte is made the same way.
//!
//! - [`quote`]: `strconv.Quote` (`%q`), `%q` and `%#v` of a `[]string`,
//!   `%#U`;
//! - [`float`]: `%v`/`%g` of a float64 (`1e+06`) and `encoding/json`'s
//!   float format (`1e+21`, `1e-7`);
//! - [`json`]: `json.Marshal` of a decoded JSON value (HTML-safe, sorted
//!   keys), and json-iterator's variant that structured-merge-diff uses;
//! - [`json_syntax`]: `encoding/json`'s syntax errors (`invalid character
//!   'x' looking for beginning of value`);
//! - [`base64`]: `base64.RawURLEncoding`'s decoding and its errors
//!   (`illegal base64 data at input byte 0`);
//! - [`duration`]: `time.ParseDuration` and `time.Duration.String`;
//! - [`rfc3339`]: `time.Parse(time.RFC3339, s)`'s errors;
//! - [`human`]: apimachinery's `HumanDuration` and `ShortHumanDuration`;
//! - [`unstructured`]: `%T`, `%v` and `%#v` of a decoded JSON value, as
//!   structured-merge-diff's typing errors print it (`got &{yes}`);
//! - [`strconv`]: `strconv.ParseInt`'s and `strconv.ParseUint`'s errors
//!   (`strconv.ParseInt: parsing "x": invalid syntax`);
//! - [`yaml`]: YAML read as yaml.v2 reads it (request bodies, apply).
//!
//! A leaf: it imports nothing from the rest of the crate. Each function has
//! one table test whose rows come from Go's or Kubernetes' own tests.

pub mod base64;
pub mod duration;
pub mod float;
pub mod human;
pub mod json;
pub mod json_syntax;
pub mod quote;
pub mod rfc3339;
pub mod strconv;
pub mod unstructured;
pub mod yaml;

pub use duration::{DurationError, GoDuration, parse_duration};
pub use float::{format_g, format_json};
pub use human::{human_duration, short_human_duration};
pub use json::{Dialect, marshal, marshal_indent};
pub use quote::{go_syntax_list, quote, quote_list, unicode_sharp};
pub use strconv::{parse_bool, parse_int, parse_uint};
