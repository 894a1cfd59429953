//! The extension API server: what kubectl and kube-apiserver's aggregator
//! expect of it (see docs/aggregation-contract.md), over the kinds registry
//! and the HelmRelease storage.
//!
//! - [`server`]: TLS, HTTP/1.1 and HTTP/2, limits, timeouts, graceful shutdown
//! - [`routes`]: what each path answers
//! - [`handlers`]: every verb of every served kind
//! - [`duplicate_fields`]: repeated keys in a JSON body (`fieldValidation`)
//! - [`unknown_fields`]: unknown fields outside `spec` (`fieldValidation`)
//! - [`negotiate`]: `Accept` and `Content-Type` negotiation
//! - [`yaml_response`]: answers in YAML for a client that prefers it
//! - [`table`]: `Table` and `PartialObjectMetadata(List)` responses
//! - [`metrics`]: `/metrics`, kube-apiserver's request metrics and the cache's
//! - [`discovery`]: `/apis`, `/apis/<g>`, `/apis/<g>/<v>` and aggregated discovery
//! - [`openapi`]: `/openapi/v2` and `/openapi/v3`
//! - [`gnostic`]: `/openapi/v2` as gnostic's protobuf `openapi_v2.Document`
//! - [`published`]: discovery and OpenAPI, built once per registry snapshot
//! - [`patch`]: JSON patch, merge patch, server-side apply, managedFields
//! - [`response`]: HTTP response helpers
//! - [`request_body`]: reading a body within the size limit and deadline
//!
//! The request vocabulary (request info, `Status`, selectors, JSONPath) is
//! [`crate::apimachinery`]'s; reading and writing apps is
//! [`crate::storage::app_store`]'s.

// `ApiError` carries a `serde_json::Value` of details, so it is larger than
// clippy likes in a `Result`; errors are the cold path of every handler here
// and boxing would only move the allocation.
#![allow(
    clippy::result_large_err,
    reason = "ApiError is the error type of every handler; see above"
)]

pub(crate) mod discovery;
pub(crate) mod duplicate_fields;
pub(crate) mod gnostic;
pub mod handlers;
pub(crate) mod metrics;
pub(crate) mod negotiate;
pub(crate) mod openapi;
pub mod patch;
pub(crate) mod published;
pub(crate) mod request_body;
pub(crate) mod response;
pub(crate) mod routes;
pub mod server;
pub(crate) mod table;
pub mod unknown_fields;
pub(crate) mod yaml_response;
