//! Shared helpers of the integration tests: the real control plane, the
//! built `kubectl-cozy` binaries and the Go test tools.

#![allow(dead_code, reason = "helpers for tests of later features")]

pub mod aggregated;
pub mod bins;
pub mod plane;
pub mod tools;

pub use plane::plane;
