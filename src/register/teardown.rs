//! Ending a session from `serve` itself (SIGINT/SIGTERM, or a failed start):
//! the same reaper `doctor` and the agent use ([`super::reap::Reaping`]),
//! judged as the Lease's holder, over exactly the objects serve created, in
//! two phases so a second Ctrl-C can stop after the first:
//!
//! 1. [`Teardown::api_services`]: restore taken-over APIServices, delete the
//!    others — what stalls discovery and namespace deletion cluster-wide if
//!    left pointing at a dead server;
//! 2. [`Teardown::rest`]: the Service, the agent, the saved originals, the
//!    Lease, the namespace (if serve created it and no other session lives
//!    there), the cluster-wide RBAC last; then everything is re-read.
//!
//! Whatever phase 2 does not finish, the agent (for the tunnel route) or the
//! next `serve` / `doctor --fix` reaps once the Lease, no longer renewed,
//! expires.

use std::time::Duration;

use kube::Client;

use super::reap::{Begun, Judge, ReapError, ReapOptions, ReapReport, Reaping, Target};
use super::session::{self, SessionObject, reap_rank};

/// A session's teardown.
pub struct Teardown {
    client: Client,
    target: Target,
    limit: Duration,
}

/// `created` in the order a teardown acts on it.
pub fn order(created: &[SessionObject]) -> Vec<SessionObject> {
    let mut objects = created.to_vec();
    objects.sort_by_key(|o| reap_rank(&o.api_version, &o.kind));
    objects.dedup();
    objects
}

impl Teardown {
    /// The teardown of session `id` (namespace `namespace`) over the objects
    /// it `created`, each request limited to `limit`.
    pub fn new(
        client: Client,
        id: &str,
        namespace: &str,
        created: &[SessionObject],
        limit: Duration,
    ) -> Self {
        // The namespace too when serve did not create it: another session that
        // did may have handed it over on leaving (the reaper deletes it only
        // when it carries this session's label and no other session is left).
        let mut objects = created.to_vec();
        let ns = SessionObject::of(&session::NAMESPACE, None, namespace);
        if !objects.contains(&ns) {
            objects.push(ns);
        }
        Teardown {
            client,
            target: Target {
                id: id.to_owned(),
                namespace: namespace.to_owned(),
                objects: order(&objects),
            },
            limit,
        }
    }

    /// Phase 1: restores or deletes the APIServices.
    pub async fn api_services(&self) -> Result<Box<Reaping>, ReapError> {
        let options = ReapOptions {
            judge: Judge::Holder,
            stop_on_unrestored: false,
        };
        let mut reaping =
            match Reaping::begin(&self.client, &self.target, &options, self.limit).await? {
                Begun::Reaping(reaping) => reaping,
                Begun::Alive { .. } => unreachable!("the holder never judges its Lease alive"),
            };
        reaping.api_services(&self.client, self.limit).await;
        Ok(reaping)
    }

    /// Phase 2: everything else, then the re-read.
    pub async fn rest(&self, mut reaping: Box<Reaping>) -> ReapReport {
        reaping.rest(&self.client, self.limit).await;
        reaping.verify(&self.client, self.limit).await
    }
}

/// What a teardown left undone, one line each (empty when everything went).
/// A namespace left alone is not a problem: it was not the session's, or
/// another session lives in it.
pub fn problems(report: &ReapReport) -> Vec<String> {
    let mut lines = Vec::new();
    for (o, why) in &report.failed {
        lines.push(format!("{}: {why}", o.describe()));
    }
    for (o, why) in report
        .left
        .iter()
        .filter(|(o, _)| o.kind != session::NAMESPACE.kind)
    {
        lines.push(format!("{}: {why}", o.describe()));
    }
    for (o, why) in &report.unverified {
        lines.push(format!("{}: {why}", o.describe()));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::register::session::SessionKind;

    fn of(kind: &SessionKind, name: &str) -> SessionObject {
        SessionObject::of(kind, kind.namespaced.then_some("ns"), name)
    }

    #[test]
    fn apiservices_go_first_the_lease_and_namespace_late_the_agents_rights_last() {
        // In creation order, as serve makes them.
        let created = vec![
            of(&session::NAMESPACE, "ns"),
            of(&session::LEASE, "kubectl-cozy-a"),
            of(&session::CONFIG_MAP, "kubectl-cozy-a-originals"),
            of(&session::SERVICE, "kubectl-cozy-a"),
            of(&session::SERVICE_ACCOUNT, "kubectl-cozy-a"),
            of(&session::ROLE, "kubectl-cozy-a"),
            of(&session::ROLE_BINDING, "kubectl-cozy-a"),
            of(&session::CLUSTER_ROLE, "kubectl-cozy-a"),
            of(&session::CLUSTER_ROLE_BINDING, "kubectl-cozy-a"),
            of(&session::DEPLOYMENT, "kubectl-cozy-a"),
            of(&session::API_SERVICE, "v1.a.example.com"),
        ];
        let kinds: Vec<String> = order(&created).into_iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            [
                "APIService",
                "Service",
                "Deployment",
                "ServiceAccount",
                "RoleBinding",
                "Role",
                "ConfigMap",
                "Lease",
                "Namespace",
                "ClusterRoleBinding",
                "ClusterRole"
            ]
        );
    }

    #[test]
    fn problems_are_one_line_each() {
        let report = ReapReport {
            failed: vec![(
                of(&session::API_SERVICE, "v1.a.example.com"),
                "HTTP 500".into(),
            )],
            left: vec![
                (of(&session::NAMESPACE, "ns"), "handed over".into()),
                (of(&session::SERVICE, "s"), "kept".into()),
            ],
            ..ReapReport::default()
        };
        assert_eq!(
            problems(&report),
            [
                "apiservices.apiregistration.k8s.io/v1.a.example.com: HTTP 500",
                "services/s -n ns: kept"
            ]
        );
        assert!(problems(&ReapReport::default()).is_empty());
    }
}
