//! PATCH for data-defined kinds: JSON patch, merge patch and server-side
//! apply, and the `metadata.managedFields` bookkeeping that goes with every
//! write, as kube-apiserver does them for custom resources.
//!
//! - [`apply_patch`]: RFC 6902 JSON patch and RFC 7386 merge patch
//!   (`application/json-patch+json`, `application/merge-patch+json`);
//! - [`server_side_apply`]: `application/apply-patch+yaml`, a structured
//!   merge with field ownership and conflicts;
//! - [`record_update`] / [`record_update_with_schema`]: ownership for
//!   create, update and non-apply patches, written into the object;
//!   [`record_update_text`]: the same as the JSON text of the entries (what
//!   the handlers store in the HelmRelease's annotation).
//!
//! Strategic merge patch is not here; the handler answers it with 415.
//!
//! What stays with the caller: preconditions (a `metadata.resourceVersion`
//! in a patch body or applied configuration is kept in the result for the
//! caller to compare), the name and namespace of the result against the
//! URL (kube-apiserver answers a mismatch with 400 `BadRequest`, "the name
//! of the object (x) does not match the name on the URL (y)"), immutable
//! and server-set metadata, resetting `status`, pruning, defaulting and
//! validation against the schema, and `fieldManager` syntax checks.
//!
//! The port of structured-merge-diff lives in `fieldpath` (paths, sets and
//! `FieldsV1`), `merge_types` (merge types from a structural schema), `merge`
//! (the typed walks) and `updater` (ownership rules); `managed_fields` (the
//! entries), `record_update` (ownership of non-apply writes) and `apply`
//! stack kube-apiserver's field-manager layers on top, and
//! `json_patch` applies JSON patches as gopkg.in/evanphx/json-patch.v4
//! does and merge patches with the `json-patch` crate.

mod apply;
mod fieldpath;
mod json_patch;
mod managed_fields;
mod merge;
mod merge_types;
mod record_update;
mod updater;

use std::fmt;

pub use self::apply::{Applied, ApplyRequest, applied_configuration, server_side_apply};
pub use self::json_patch::{apply_patch, json_patch_strict_errors};
pub use self::record_update::{record_update, record_update_text, record_update_with_schema};

/// The kind of a PATCH body, from its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/json-patch+json`: RFC 6902.
    Json,
    /// `application/merge-patch+json`: RFC 7386.
    Merge,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply,
}

impl PatchKind {
    /// The kind for a `Content-Type` header value (parameters such as
    /// `charset` ignored). `None` for anything else, strategic merge patch
    /// included.
    pub fn from_content_type(content_type: &str) -> Option<PatchKind> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media.to_ascii_lowercase().as_str() {
            "application/json-patch+json" => Some(PatchKind::Json),
            "application/merge-patch+json" => Some(PatchKind::Merge),
            "application/apply-patch+yaml" => Some(PatchKind::Apply),
            _ => None,
        }
    }

    /// The media type.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchKind::Json => "application/json-patch+json",
            PatchKind::Merge => "application/merge-patch+json",
            PatchKind::Apply => "application/apply-patch+yaml",
        }
    }
}

/// A failed patch, ready to become a `metav1.Status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    /// HTTP status: 400, 409, 413, 422 or 500.
    pub code: u16,
    /// Status reason: `BadRequest`, `Conflict`, `RequestEntityTooLarge`,
    /// `Invalid`, `InternalError`, or none (`""`).
    pub reason: &'static str,
    /// The Status message.
    pub message: String,
    /// `details.causes`.
    pub causes: Vec<Cause>,
    /// A `details` object even without causes (`"details": {}`), as
    /// kube-apiserver's generic server responses have.
    pub empty_details: bool,
}

impl From<PatchError> for crate::apimachinery::status::ApiError {
    /// A patch's failure as the API answers it, with its causes.
    fn from(e: PatchError) -> Self {
        let causes: Vec<serde_json::Value> = e
            .causes
            .iter()
            .map(
                |c| serde_json::json!({"reason": c.reason, "message": c.message, "field": c.field}),
            )
            .collect();
        crate::apimachinery::status::ApiError {
            code: e.code,
            reason: e.reason,
            message: e.message,
            details: if !causes.is_empty() {
                Some(serde_json::json!({"causes": causes}))
            } else {
                e.empty_details.then(|| serde_json::json!({}))
            },
            retry_after: None,
            hidden_cause: None,
        }
    }
}

/// One `details.causes` entry of a Status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// The cause type, e.g. `FieldManagerConflict`.
    pub reason: String,
    /// What is wrong.
    pub message: String,
    /// The field, e.g. `.spec.replicas`.
    pub field: String,
}

impl PatchError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> PatchError {
        PatchError {
            code,
            reason,
            message: message.into(),
            causes: Vec::new(),
            empty_details: false,
        }
    }

    /// 400 `BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> PatchError {
        PatchError::new(400, "BadRequest", message)
    }

    /// 409 `Conflict`.
    pub fn conflict(message: impl Into<String>, causes: Vec<Cause>) -> PatchError {
        PatchError {
            causes,
            ..PatchError::new(409, "Conflict", message)
        }
    }

    /// 413 `RequestEntityTooLarge`.
    pub fn too_large(message: impl Into<String>) -> PatchError {
        PatchError::new(413, "RequestEntityTooLarge", message)
    }

    /// 422 `Invalid`.
    pub fn invalid(message: impl Into<String>, causes: Vec<Cause>) -> PatchError {
        PatchError {
            causes,
            ..PatchError::new(422, "Invalid", message)
        }
    }

    /// 500 `InternalError`.
    pub fn internal(message: impl Into<String>) -> PatchError {
        PatchError::new(500, "InternalError", message)
    }

    /// 500 without a reason: an error kube-apiserver does not classify,
    /// answered as it is (its `ErrorToAPIStatus` of a plain error).
    pub fn unclassified(message: impl Into<String>) -> PatchError {
        PatchError::new(500, "", message)
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.reason, self.code, self.message)
    }
}

impl std::error::Error for PatchError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        assert_eq!(
            PatchKind::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchKind::Merge)
        );
        assert_eq!(
            PatchKind::from_content_type("Application/JSON-Patch+JSON"),
            Some(PatchKind::Json)
        );
        assert_eq!(
            PatchKind::from_content_type("application/strategic-merge-patch+json"),
            None
        );
        for k in [PatchKind::Json, PatchKind::Merge, PatchKind::Apply] {
            assert_eq!(PatchKind::from_content_type(k.content_type()), Some(k));
        }
    }
}
