//! Kinds are data: definitions (our format, Cozystack's ApplicationDefinition
//! and legacy config.yaml) become served Kubernetes kinds without recompiling.
//!
//! - [`definition`]: the format, defaults and checks
//! - [`load`]: reading files and directories
//! - `cozystack`: Cozystack formats in and out
//! - [`application_definitions`]: ApplicationDefinitions read and watched in a cluster
//! - [`schema`]: JSON Schema → structural schema, validation and defaulting, inference from values.yaml
//! - `chart`: reading Helm charts (directory, .tgz, repository index) and naming kinds
//! - `scaffold`: a chart turned into a definition
//! - `from_charts`: every chart of a directory scaffolded in memory (`serve --charts`)
//! - [`registry`]: immutable snapshots swapped atomically on change
//! - `yaml_message`: YAML parse errors in the user's terms
//!
//! Error messages here follow one style: an action that failed is named by a
//! bare verb phrase that reads after "failed to" (`read ./chart/Chart.yaml`,
//! `list ApplicationDefinitions`), its cause exposed only as `#[source]`; bad
//! input is described where it is, as `{where}: {what is wrong}`. Neither
//! starts with "cannot", "failed" or "error".

pub mod application_definitions;
pub(crate) mod chart;
pub(crate) mod cozystack;
pub mod definition;
pub(crate) mod from_charts;
pub mod load;
pub mod registry;
pub(crate) mod scaffold;
pub mod schema;
mod yaml_lines;
pub(crate) mod yaml_message;

pub use definition::{KindDefinition, ResolvedKind};
pub use registry::{Following, KindSource, News, Registry, Snapshot, Verdict};
