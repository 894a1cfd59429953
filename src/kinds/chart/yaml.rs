//! YAML as chart files and repository indexes are read: serde-saphyr's
//! options for them, and its errors mapped to [`ChartError::Yaml`] with line
//! and column.

use super::error::ChartError;

/// Parser options: serde-saphyr's defaults (duplicate keys are errors, alias
/// bombs are refused) with room for large values files and repository
/// indexes, whose byte size is already bounded by [`super::Limits`].
pub(super) fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = 20_000_000;
    budget.max_nodes = 10_000_000;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// Maps a serde-saphyr error to [`ChartError::Yaml`] with line and column.
pub(super) fn yaml_error(err: &serde_saphyr::Error, file: &str) -> ChartError {
    let (line, column) = match err.location() {
        Some(loc) if loc.line() > 0 => (Some(loc.line()), Some(loc.column())),
        _ => (None, None),
    };
    let message = crate::kinds::yaml_message::yaml_message(err);
    ChartError::Yaml {
        file: file.to_owned(),
        line,
        column,
        message,
    }
}
