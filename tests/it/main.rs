//! Integration tests, one binary (so one control plane per run): the CLI as a
//! user and kubectl see it, and smoke tests of the real control plane.

#![allow(unreachable_pub, reason = "test modules share helpers with pub items")]

mod api;
mod cli;
mod completion;
mod doctor;
mod kinds;
mod server;
mod smoke;
mod support;
