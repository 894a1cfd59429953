//! What `kubectl cozy serve` leaves in a cluster, and how it is found and
//! taken away again.
//!
//! - [`session`]: the session contract — the label, the session namespace,
//!   the Lease (name, holder, liveness, the annotations a reaper reads), the
//!   saved originals of taken-over APIServices, the kinds a session creates.
//!   `doctor` reads sessions through it and nothing else.
//! - [`reap`]: reaping a session whose Lease is missing or expired (restore or
//!   delete its APIServices first, then everything else it labelled), used by
//!   `doctor --fix` now and by `serve` and its agent later.
//! - [`manifests`]: typed manifests of what `serve` needs in a cluster (the
//!   RBAC `serve --print-rbac` prints).
//! - [`credentials`]: standalone mode's local CA, certificates and kubeconfig.
//!
//! Registration itself joins these as `apiservice` (the Service and one
//! APIService per served group/version, with `--takeover` saving what was
//! there), `certs` (the serving certificate kube-apiserver trusts through
//! `caBundle`) and `lease` (creating and renewing the session Lease), each
//! written against [`session`].

pub mod agent;
pub mod apiservice;
pub mod certs;
pub mod credentials;
pub mod lease;
pub mod manifests;
pub mod plan;
pub mod reap;
pub mod registration;
pub mod session;
