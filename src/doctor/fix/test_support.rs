//! Test helpers: a doctor report and the findings the plan's and the
//! confirmation's tests build on.

use std::time::Duration;

use crate::doctor::findings::{
    Code, Finding, NamespaceReport, ObjectRef, RemainingObject, Remedy, Report, Scope, ScopeKind,
    Severity, Summary, Verdict,
};

use super::FixOptions;

pub(super) fn report(findings: Vec<Finding>, namespaces: Vec<NamespaceReport>) -> Report {
    Report {
        api_version: "kubectl-cozy.io/v1alpha1".into(),
        kind: "DoctorReport".into(),
        cluster: "https://127.0.0.1:6443".into(),
        server_version: None,
        generated_at: "2026-09-01T12:00:00Z".into(),
        duration_ms: 1,
        scope: Scope {
            namespaces: ScopeKind::Terminating,
            namespace: None,
        },
        result: Verdict::ProblemsFound,
        summary: Summary::default(),
        api_services: Vec::new(),
        serve_sessions: Vec::new(),
        namespaces,
        webhooks: Vec::new(),
        findings,
        unchecked: Vec::new(),
        fix: None,
        standalone: None,
    }
}

pub(super) fn cm() -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        resource: "configmaps".into(),
        namespace: Some("team-b".into()),
        name: "blocked".into(),
    }
}

pub(super) fn ns_report(name: &str) -> NamespaceReport {
    NamespaceReport {
        name: name.into(),
        phase: "Terminating".into(),
        deletion_timestamp: Some("2026-09-01T11:50:00Z".into()),
        spec_finalizers: vec!["kubernetes".into()],
        blocked: true,
        remaining: vec![RemainingObject {
            object: cm(),
            finalizers: vec!["example.com/block".into()],
            deletion_timestamp: Some("2026-09-01T11:50:01Z".into()),
            resource_version: Some("42".into()),
            labels: Default::default(),
        }],
        ..NamespaceReport::default()
    }
}

pub(super) fn finalizer_finding() -> Finding {
    let mut f =
        Finding::new(Code::FinalizerBlocking, Severity::Error, cm(), "w", "y").remedy(Remedy {
            description: String::new(),
            command: "kubectl patch configmaps/blocked -n team-b --type=merge -p '…'".into(),
            automatic: true,
        });
    f.blocks = vec!["team-b".into()];
    f
}

pub(super) fn opts(finalize: bool) -> FixOptions {
    FixOptions {
        finalize_namespaces: finalize,
        wait: Duration::from_secs(60),
    }
}
