//! What `kubectl cozy serve` leaves in a cluster, and how it is found and
//! taken away again.
//!
//! | file | owns |
//! |---|---|
//! | [`session`] | the session contract: label, namespace, Lease and its record, saved originals, the kinds and their reap order; `doctor` reads sessions through it |
//! | [`plan`] | every object a session will create, decided up front (pure; `--dry-run`) |
//! | [`certs`] | the CA (`caBundle`) and serving certificate for `<svc>.<ns>.svc`, kept per cluster and groups |
//! | [`apiservice`] | APIService and Service manifests, who serves a group/version now, the wait for `Available` |
//! | [`agent`] | the tunnel agent's manifests: RBAC scoped by `resourceNames`, a PSA-restricted Deployment |
//! | [`agent_state`] | the agent pod's state in `kubectl get pods` terms, for serve's progress and errors |
//! | [`route`] | the external-name host of local clusters (kind, minikube, k3d) |
//! | [`lease`] | creating the Lease and renewing it every third of its duration |
//! | [`registration`] | creating the objects in a leak-proof order, remembering them |
//! | [`reap`] | reaping a dead session (APIServices first, restored or deleted), shared by `doctor --fix`, `serve` and the agent |
//! | [`teardown`] | serve's own teardown, in two phases (a second Ctrl-C stops after the APIServices) |
//! | [`sentinel`] | the agent's Lease watch (expiry on its own clock) and reap |
//! | [`manifests`] | the RBAC `serve --print-rbac` prints |
//! | [`install`] | a production install (`kubectl cozy install`): the Deployment running `serve --in-cluster`, its Secret, Service, APIServices; diff and server-side apply |
//! | [`credentials`] | standalone mode's local CA, certificates and kubeconfig |
//! | [`kubeconfig_file`] | standalone's entries written into a kubeconfig file, keeping everyone else's |
//! | [`file_lock`] | client-go's `<file>.lock` around a kubeconfig's (and the previous-context record's) read and write |
//! | [`previous_context`] | the context a kubeconfig had current before standalone's, kept until a clean stop restores it |

pub mod agent;
pub mod agent_state;
pub mod apiservice;
pub mod cert_files;
pub mod certs;
pub mod credentials;
pub mod discovered;
pub mod file_lock;
pub mod install;
pub mod kubeconfig_file;
pub mod lease;
pub mod local_process;
pub mod manifests;
pub mod plan;
pub mod previous_context;
pub mod reap;
pub mod registration;
pub mod route;
pub mod sentinel;
pub mod session;
pub mod teardown;
