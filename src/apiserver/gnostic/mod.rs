//! `GET /openapi/v2` as protobuf: the published Swagger 2.0 document
//! encoded as gnostic's `openapi_v2.Document`
//! (github.com/google/gnostic-models `openapiv2/OpenAPIv2.proto`), which is
//! what client-go's `OpenAPISchema()` asks for (kubectl falls back to it to
//! validate a manifest whose kind the OpenAPI v3 documents do not name) and
//! what kube-apiserver answers with: kube-openapi's handler converts its
//! JSON with gnostic's `ParseDocument` and marshals that.
//!
//! - [`negotiate`]: which encoding an `Accept` header picks ([`accept`]);
//! - [`encode`]: the protobuf bytes of a JSON document, built from
//!   [`messages`] by [`from_json`], with vendor extensions and other `Any`
//!   values as the YAML text of [`yaml`].

mod accept;
mod from_json;
mod messages;
mod yaml;

use prost::Message;
use serde_json::Value;

pub(crate) use self::accept::{Encoding, negotiate};
pub(crate) use self::from_json::Error;

/// The `Content-Type` of the protobuf document (for either protobuf media
/// type asked for, as kube-openapi answers).
pub(crate) const CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The protobuf encoding of Swagger 2.0 document `doc`.
pub(crate) fn encode(doc: &Value) -> Result<Vec<u8>, Error> {
    Ok(from_json::document(doc)?.encode_to_vec())
}

#[cfg(test)]
mod tests;
