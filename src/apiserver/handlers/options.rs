//! The options of a write from its query — `CreateOptions`,
//! `UpdateOptions`, `PatchOptions` — validated as apimachinery's
//! `ValidateCreateOptions`, `ValidateUpdateOptions` and
//! `ValidatePatchOptions` validate them, in their order: for an apply a
//! `fieldManager` is required, for any other patch `force` is forbidden;
//! then `fieldManager` (at most 128 bytes, every character printable),
//! `dryRun` (only `All`; `dryRun=` is the bad value `[""]`) and
//! `fieldValidation` (`Ignore`, `Strict`, `Warn` or empty). Every broken
//! rule is a cause of one 422 `CreateOptions.meta.k8s.io "" is invalid`
//! (`UpdateOptions`, `PatchOptions`). The `dryRun` rule is
//! `DeleteOptions`' too.
//!
//! As kube-apiserver's handlers, the callers validate the options after
//! the content type of a create or patch is accepted (before it for an
//! update) and before the body is decoded or the object looked up.

use super::validate::field_error;
use crate::apimachinery::query::Query;
use crate::apimachinery::status::ApiError;
use crate::apiserver::patch::PatchKind;
use crate::golang;
use crate::kinds::schema::{FieldError, FieldErrorKind};

/// apimachinery's `FieldManagerMaxLength`, in bytes.
const FIELD_MANAGER_MAX: usize = 128;

/// Which write the options are of.
#[derive(Clone, Copy)]
pub(super) enum Write {
    Create,
    Update,
    Patch(PatchKind),
}

impl Write {
    /// The kind of the options, as the 422 names it.
    fn options_kind(self) -> &'static str {
        match self {
            Write::Create => "CreateOptions",
            Write::Update => "UpdateOptions",
            Write::Patch(_) => "PatchOptions",
        }
    }
}

/// apimachinery's `ValidateDryRun`: every value `All`, else one cause with
/// the whole list as the bad value (printed as JSON, `["Bogus"]`).
pub(super) fn dry_run_error(dry_run: &[&str]) -> Option<FieldError> {
    dry_run.iter().any(|v| *v != "All").then(|| {
        field_error(
            "dryRun",
            FieldErrorKind::NotSupported,
            Some(dry_run.into()),
            r#"supported values: "All""#,
        )
    })
}

/// apimachinery's `ValidateFieldManager`: too long (in bytes), and a cause
/// for each character Go does not print, at its byte offset.
fn field_manager_errors(manager: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if manager.len() > FIELD_MANAGER_MAX {
        errors.push(field_error(
            "fieldManager",
            FieldErrorKind::TooLong,
            None,
            &format!("may not be more than {FIELD_MANAGER_MAX} bytes"),
        ));
    }
    for (at, c) in manager.char_indices() {
        if !golang::quote::is_print(c) {
            errors.push(field_error(
                "fieldManager",
                FieldErrorKind::Invalid,
                Some(manager.into()),
                &format!(
                    "invalid character {} (at position {at})",
                    golang::quote::unicode_sharp(c)
                ),
            ));
        }
    }
    errors
}

/// apimachinery's `ValidateFieldValidation`.
fn field_validation_error(value: &str) -> Option<FieldError> {
    (!matches!(value, "" | "Ignore" | "Strict" | "Warn")).then(|| {
        field_error(
            "fieldValidation",
            FieldErrorKind::NotSupported,
            Some(value.into()),
            r#"supported values: "", "Ignore", "Strict", "Warn""#,
        )
    })
}

/// Validates the options of `write` from its `query` (see the module
/// documentation): the 422 naming every broken rule.
pub(super) fn validate(query: &Query, write: Write) -> Result<(), ApiError> {
    let get = |key: &str| query.get(key).map(String::as_str);
    let manager = get("fieldManager").unwrap_or_default();
    let mut errors = Vec::new();
    match write {
        Write::Patch(PatchKind::Apply) if manager.is_empty() => errors.push(field_error(
            "fieldManager",
            FieldErrorKind::Required,
            None,
            "is required for apply patch",
        )),
        Write::Patch(PatchKind::Json | PatchKind::Merge) if get("force").is_some() => {
            errors.push(field_error(
                "force",
                FieldErrorKind::Forbidden,
                None,
                "may not be specified for non-apply patch",
            ));
        }
        _ => {}
    }
    errors.extend(field_manager_errors(manager));
    errors.extend(dry_run_error(&query.all("dryRun")));
    errors.extend(field_validation_error(
        get("fieldValidation").unwrap_or_default(),
    ));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            write.options_kind(),
            "meta.k8s.io",
            "",
            &errors,
        ))
    }
}

/// Whether an apply is forced: `force` given and, as kube-apiserver
/// converts a query parameter to a bool, neither `false` nor `0` in any
/// case (`force=` and `force=x` force).
pub(super) fn force(query: &Query) -> bool {
    crate::apimachinery::query::flag(query, "force")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn field_manager_is_checked_for_length_in_bytes_and_printable_characters() {
        assert!(field_manager_errors(&"m".repeat(128)).is_empty());
        // 64 two-byte characters: 128 bytes, within the limit.
        assert!(field_manager_errors(&"é".repeat(64)).is_empty());
        assert_eq!(
            messages(&field_manager_errors(&"é".repeat(65))),
            ["fieldManager: Too long: may not be more than 128 bytes"]
        );
        assert_eq!(
            messages(&field_manager_errors("a\u{7}b\u{a0}c")),
            [
                r#"fieldManager: Invalid value: "a\ab\u00a0c": invalid character U+0007 (at position 1)"#,
                r#"fieldManager: Invalid value: "a\ab\u00a0c": invalid character U+00A0 (at position 3)"#,
            ]
        );
    }

    #[test]
    fn dry_run_and_field_validation_take_only_their_values() {
        assert!(dry_run_error(&[]).is_none());
        assert!(dry_run_error(&["All"]).is_none());
        assert!(dry_run_error(&["All", "All"]).is_none());
        assert_eq!(
            messages(&dry_run_error(&[""]).into_iter().collect::<Vec<_>>()),
            [r#"dryRun: Unsupported value: [""]: supported values: "All""#]
        );
        for ok in ["", "Ignore", "Strict", "Warn"] {
            assert!(field_validation_error(ok).is_none(), "{ok}");
        }
        assert_eq!(
            messages(
                &field_validation_error("warn")
                    .into_iter()
                    .collect::<Vec<_>>()
            ),
            [
                r#"fieldValidation: Unsupported value: "warn": supported values: "", "Ignore", "Strict", "Warn""#
            ]
        );
    }
}
