//! The Kubernetes API vocabulary that authentication, authorization, the
//! server and the storage all speak, below all of them (the parts of
//! k8s.io/apimachinery and k8s.io/apiserver this server needs):
//!
//! - [`query`]: query parameters, decoded as kube-apiserver decodes them
//! - [`request_info`]: what a request asks for (route, verb, namespace,
//!   resource, name)
//! - [`user`]: who is asking (`user.Info`)
//! - [`status`]: `metav1.Status` errors ([`status::ApiError`])
//! - [`labels`], [`fields`]: `labelSelector` and `fieldSelector`
//! - [`jsonpath`]: the JSONPath subset printer columns use
//! - [`object_meta`]: `ObjectMeta` validation on create and update
//! - [`meta_decode`]: Go's decoding errors (a field of the wrong type) of a
//!   custom resource's `ObjectMeta` and of a whole `Namespace`
//! - [`protobuf_meta`]: the metadata of a protobuf-encoded object
//!
//! Nothing here does I/O or knows a served kind; every file is a port of
//! the upstream package it names, down to its error texts.

// `ApiError` carries a `serde_json::Value` of details, so it is larger than
// clippy likes in a `Result`; errors are the cold path wherever it is used
// and boxing would only move the allocation.
#![allow(
    clippy::result_large_err,
    reason = "ApiError is the error type of every request path; see above"
)]

pub(crate) mod fields;
pub(crate) mod jsonpath;
pub(crate) mod labels;
pub mod meta_decode;
pub mod object_meta;
pub mod protobuf_meta;
pub mod query;
pub mod request_info;
pub mod status;
pub mod user;

/// Short strings of the characters request parsers care about, from a fixed
/// xorshift sequence: what a robustness test feeds every parser of request
/// input.
#[cfg(test)]
pub(crate) fn garbage_inputs(count: usize) -> impl Iterator<Item = String> {
    let alphabet: Vec<char> = "ab=!(),<> \\\t'\"-./@[]?*:0é\u{1}".chars().collect();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    (0..count).map(move |_| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 12) as usize;
        (0..len)
            .map(|i| alphabet[((seed >> (i * 5)) % alphabet.len() as u64) as usize])
            .collect()
    })
}

#[cfg(test)]
mod tests {
    /// Request input never panics the parsers, whatever it is.
    #[test]
    fn garbage_never_panics() {
        let data = serde_json::json!({"a": [{"b": 1}], "b": {"a": null}});
        for input in super::garbage_inputs(20_000) {
            let _ = super::labels::LabelSelector::parse(&input).map(|s| s.matches(None));
            let _ = super::fields::FieldSelector::parse(&input);
            let _ =
                super::jsonpath::JsonPath::parse(&input).map(|p| p.find(&data).map(|v| v.len()));
            let _ = super::query::parse_query(Some(&input));
        }
    }
}
