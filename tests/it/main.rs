//! Integration tests, one binary (so one control plane per run): the CLI as a
//! user and kubectl see it, third-party clients (client-go informers), smoke
//! tests of the real control plane, its simulated node (port-forward to a
//! pod whose container is a local process), and the release artefacts (archive,
//! krew install, container image).

#![allow(unreachable_pub, reason = "test modules share helpers with pub items")]

mod api;
mod auth;
mod cel;
mod cli;
mod completion;
mod consistency;
mod differential;
mod doctor;
mod faults;
mod go_text;
mod informer;
mod install;
mod kinds;
mod node;
mod release;
mod reloads;
mod serve;
mod server;
mod smoke;
mod support;
mod tunnel;
