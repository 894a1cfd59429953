//! Shared helpers of the integration tests: the real control plane, the
//! built `kubectl-cozy` binaries, and the lock that serializes tests which
//! change cluster-wide state, and the Go test tools.

#![allow(dead_code, reason = "helpers for tests of later features")]

pub mod aggregated;
pub mod bins;
pub mod plane;
pub mod tools;

pub use plane::plane;

/// Held by every test that deletes namespaces or changes what blocks
/// namespace deletion cluster-wide (an unavailable APIService stalls every
/// namespace deletion; doctor's "healthy plane" test needs nothing
/// Terminating). A tokio mutex works from any test's runtime; sync tests use
/// `blocking_lock()`.
pub static CLUSTER_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
