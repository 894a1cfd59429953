//! kubectl-cozy: a kubectl plugin that runs Kubernetes extension API servers
//! (Cozystack-style kinds stored as Flux HelmReleases) locally, diagnoses
//! APIService trouble, and scaffolds kind definitions from Helm charts.
//!
//! The binary is thin; this library holds the command line ([`cli`]), the
//! subcommands ([`cmd`]), the extension API server ([`apiserver`]), the checks
//! and fixes behind `doctor` ([`doctor`]),
//! kubeconfig resolution ([`kubeconfig`]), output rendering ([`output`]),
//! shell completion ([`complete`]) and the Go-compatible text and duration
//! syntax all of them share ([`golang`]).

pub mod allocator;
pub mod apimachinery;
pub mod apiserver;
pub mod auth;
pub mod cli;
pub mod cmd;
pub mod complete;
pub mod doctor;
pub mod drop_later;
pub mod error_chain;
#[doc(hidden)]
pub mod fuzzing;
pub mod golang;
pub mod kinds;
pub mod kube_client;
pub mod kubeconfig;
pub mod open_files;
pub mod output;
pub mod pki;
pub mod register;
pub mod storage;
#[cfg(test)]
mod test_log;
pub mod tunnel;
pub mod version;
pub mod woken;
