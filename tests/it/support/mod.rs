//! Shared helpers of the integration tests: the real control plane and the
//! built `kubectl-cozy` binaries.

#![allow(dead_code, reason = "helpers for tests of later features")]

pub mod aggregated;
pub mod bins;
pub mod plane;

pub use plane::plane;
