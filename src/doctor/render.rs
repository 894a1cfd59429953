//! Doctor reports for people: kubectl-style tables of APIServices,
//! namespaces (with their conditions verbatim) and webhooks, one block per
//! finding (what, why, evidence, owner, blocks, fix command), a summary table,
//! what could not be checked, and the `--fix` plan and results. Pure functions
//! from the report to text; `-o json|yaml` serializes the report itself.

use std::fmt::Write as _;

use k8s_openapi::jiff::Timestamp;

use super::findings::{
    Action, ActionOutcome, ApiServiceReport, Condition, FixMode, FixReport, Outcome, Report,
    ScopeKind, SessionState,
};
use crate::golang::{self, GoDuration};
use crate::output::Rows;

/// An age as kubectl prints one (apimachinery's `HumanDuration`): `45s`,
/// `5m3s`, `3h20m`, `2d3h`. A negative age (clock skew) reads `0s`.
pub fn duration(seconds: i64) -> String {
    let nanos = i128::from(seconds.max(0)) * 1_000_000_000;
    golang::human_duration(GoDuration::from_nanos_saturating(nanos))
}

/// `5m ago`.
pub fn ago(seconds: i64) -> String {
    format!("{} ago", duration(seconds))
}

/// A condition on one line, verbatim: `False FailedDiscoveryCheck: <message>
/// (since <time>, 5m ago)`.
pub fn condition_text(c: &Condition, now: Timestamp) -> String {
    let mut text = c.status.clone();
    if let Some(reason) = c.reason.as_deref().filter(|r| !r.is_empty()) {
        text.push(' ');
        text.push_str(reason);
    }
    if let Some(message) = c.message.as_deref().filter(|m| !m.is_empty()) {
        text.push_str(": ");
        text.push_str(message);
    }
    if let Some(since) = &c.last_transition_time {
        match since.parse::<Timestamp>() {
            Ok(t) => {
                let _ = write!(
                    text,
                    " (since {since}, {})",
                    ago(now.as_second() - t.as_second())
                );
            }
            Err(_) => {
                let _ = write!(text, " (since {since})");
            }
        }
    }
    text
}

fn now_of(report: &Report) -> Timestamp {
    report
        .generated_at
        .parse()
        .unwrap_or_else(|_| Timestamp::now())
}

fn available_cell(a: &ApiServiceReport, now: Timestamp) -> String {
    match &a.available {
        Some(c) => {
            let since = c
                .last_transition_time
                .as_deref()
                .and_then(|t| t.parse::<Timestamp>().ok())
                .map(|t| format!(" {}", duration(now.as_second() - t.as_second())))
                .unwrap_or_default();
            format!(
                "{} {}{since}",
                c.status,
                c.reason.clone().unwrap_or_default()
            )
        }
        None => "<unset>".into(),
    }
}

fn probe_cell(a: &ApiServiceReport) -> String {
    match &a.probe {
        Some(p) => match p.status {
            Some(code) => format!("{code} {}ms", p.latency_ms),
            None => format!("timeout {}ms", p.latency_ms),
        },
        None => "-".into(),
    }
}

fn ca_cell(a: &ApiServiceReport) -> String {
    match &a.ca_bundle {
        Some(ca) if ca.error.is_some() => "invalid".into(),
        Some(ca) => ca
            .certificates
            .iter()
            .map(|c| c.days_left)
            .min()
            .map(|d| {
                if d < 0 {
                    "expired".into()
                } else {
                    format!("{d}d")
                }
            })
            .unwrap_or_else(|| "-".into()),
        None if a.insecure_skip_tls_verify => "insecure".into(),
        None => "-".into(),
    }
}

fn service_cell(a: &ApiServiceReport) -> String {
    match &a.service {
        None => "Local".into(),
        Some(s) => {
            let state = match (s.exists, &s.type_, s.ready_endpoints) {
                (Some(false), _, _) => " (missing)".to_owned(),
                (None, _, _) => " (unreadable)".to_owned(),
                (_, Some(t), _) if t == "ExternalName" => {
                    format!(" → {}", s.external_name.clone().unwrap_or_default())
                }
                (_, _, Some(n)) => format!(" ({n} ready)"),
                _ => String::new(),
            };
            format!("{}/{}:{}{state}", s.namespace, s.name, s.port)
        }
    }
}

/// The whole report as text. `wide` lists healthy local APIServices and
/// healthy webhooks too.
pub fn report(report: &Report, wide: bool) -> String {
    let now = now_of(report);
    let mut out = String::new();
    let s = &report.summary;
    let _ = writeln!(
        out,
        "Cluster {}{}: {} APIService(s), {} namespace(s) in scope, {} webhook(s) checked in {:.2}s ({} requests)",
        report.cluster,
        report
            .server_version
            .as_deref()
            .map(|v| format!(" ({v})"))
            .unwrap_or_default(),
        s.api_services,
        s.namespaces,
        s.webhooks,
        report.duration_ms as f64 / 1000.0,
        s.requests
    );

    // APIServices.
    let shown: Vec<&ApiServiceReport> = report
        .api_services
        .iter()
        .filter(|a| wide || !a.local || !a.healthy)
        .collect();
    let hidden = report.api_services.len() - shown.len();
    out.push('\n');
    if shown.is_empty() {
        let _ = writeln!(
            out,
            "APISERVICES: all {} healthy (local; -o wide lists them)",
            report.api_services.len()
        );
    } else {
        let _ = writeln!(
            out,
            "APISERVICES{}",
            if hidden > 0 {
                format!(" ({hidden} healthy local ones not shown; -o wide lists them)")
            } else {
                String::new()
            }
        );
        let mut rows = Rows::new([
            "Name",
            "Service",
            "Available",
            "Probe",
            "CA",
            "Session",
            "Healthy",
        ]);
        for a in shown {
            let session = match &a.session {
                Some(s) => format!(
                    "{} ({})",
                    s.id,
                    match s.state {
                        SessionState::Alive => "alive",
                        SessionState::Expired => "expired",
                        SessionState::Missing => "no lease",
                        SessionState::Unknown => "unknown",
                    }
                ),
                None => "-".into(),
            };
            rows.push([
                a.name.clone(),
                service_cell(a),
                available_cell(a, now),
                probe_cell(a),
                ca_cell(a),
                session,
                if a.healthy { "yes" } else { "NO" }.to_owned(),
            ]);
        }
        out.push_str(&rows.render());
    }

    // Namespaces.
    out.push('\n');
    let title = match report.scope.namespaces {
        ScopeKind::Terminating => "TERMINATING NAMESPACES".to_owned(),
        ScopeKind::Namespace => format!(
            "NAMESPACE {}",
            report.scope.namespace.clone().unwrap_or_default()
        ),
        ScopeKind::All => "NAMESPACES (Terminating, or with objects stuck in deletion)".to_owned(),
    };
    let listed: Vec<_> = report
        .namespaces
        .iter()
        .filter(|n| {
            report.scope.namespaces != ScopeKind::All
                || n.deletion_timestamp.is_some()
                || !n.remaining.is_empty()
        })
        .collect();
    if listed.is_empty() {
        let _ = writeln!(
            out,
            "{title}: none{}",
            if report.scope.namespaces == ScopeKind::All {
                format!(" (of {} checked)", report.namespaces.len())
            } else {
                String::new()
            }
        );
    } else {
        let _ = writeln!(out, "{title}");
        let mut rows = Rows::new([
            "Name",
            "Phase",
            "Deleting for",
            "True conditions",
            "Objects",
            "Blocked",
        ]);
        for n in &listed {
            let conditions: Vec<&str> = n
                .conditions
                .iter()
                .filter(|c| c.status == "True")
                .map(|c| c.type_.as_str())
                .collect();
            rows.push([
                n.name.clone(),
                n.phase.clone(),
                n.terminating_seconds
                    .map(duration)
                    .unwrap_or_else(|| "-".into()),
                if conditions.is_empty() {
                    "-".into()
                } else {
                    conditions.join(",")
                },
                n.remaining.len().to_string(),
                if n.blocked { "YES" } else { "no" }.to_owned(),
            ]);
        }
        out.push_str(&rows.render());
        for n in listed.iter().filter(|n| n.deletion_timestamp.is_some()) {
            let _ = writeln!(
                out,
                "\nnamespace/{} — {} since {} (spec.finalizers {:?}{})",
                n.name,
                n.phase,
                n.deletion_timestamp.clone().unwrap_or_default(),
                n.spec_finalizers,
                if n.finalizers.is_empty() {
                    String::new()
                } else {
                    format!(", metadata.finalizers {:?}", n.finalizers)
                }
            );
            if n.conditions.is_empty() {
                let _ = writeln!(out, "  (no conditions)");
            }
            for c in &n.conditions {
                let _ = writeln!(out, "  {}={}", c.type_, condition_text(c, now));
            }
            for o in n.remaining.iter().take(20) {
                let _ = writeln!(
                    out,
                    "  remaining: {}{}",
                    o.object.kubectl_name(),
                    if o.finalizers.is_empty() {
                        String::new()
                    } else {
                        format!(" finalizers {:?}", o.finalizers)
                    }
                );
            }
            if n.remaining.len() > 20 {
                let _ = writeln!(out, "  remaining: … and {} more", n.remaining.len() - 20);
            }
        }
    }

    // Webhooks.
    let hooks: Vec<_> = report
        .webhooks
        .iter()
        .filter(|w| wide || !w.healthy)
        .collect();
    if !hooks.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "WEBHOOKS");
        let mut rows = Rows::new([
            "Configuration",
            "Webhook",
            "Failure policy",
            "Service",
            "Healthy",
        ]);
        for w in hooks {
            let s = &w.service;
            let state = match (s.exists, s.ready_endpoints) {
                (Some(false), _) => " (missing)".to_owned(),
                (None, _) => " (unreadable)".to_owned(),
                (_, Some(n)) => format!(" ({n} ready)"),
                _ => String::new(),
            };
            rows.push([
                format!("{}/{}", w.kind, w.configuration),
                w.webhook.clone(),
                w.failure_policy.clone(),
                format!("{}/{}:{}{state}", s.namespace, s.name, s.port),
                if w.healthy { "yes" } else { "NO" }.to_owned(),
            ]);
        }
        out.push_str(&rows.render());
    }

    // Findings.
    out.push('\n');
    if report.findings.is_empty() {
        let _ = writeln!(out, "FINDINGS: none");
    } else {
        let _ = writeln!(out, "FINDINGS");
        for (i, f) in report.findings.iter().enumerate() {
            let _ = writeln!(
                out,
                "{}. [{}] {} {}",
                i + 1,
                f.severity,
                f.code,
                f.subject.kubectl_args()
            );
            let _ = writeln!(out, "   what:     {}", f.what);
            let _ = writeln!(out, "   why:      {}", f.why);
            for (j, e) in f.evidence.iter().enumerate() {
                let label = if j == 0 { "evidence:" } else { "" };
                let _ = writeln!(out, "   {label:<9} {}: {}", e.source, e.observed);
            }
            if let Some(owner) = &f.owner {
                let _ = writeln!(out, "   owner:    {owner}");
            }
            if !f.blocks.is_empty() {
                let _ = writeln!(out, "   blocks:   namespace(s) {}", f.blocks.join(", "));
            }
            if !f.caused_by.is_empty() {
                let _ = writeln!(out, "   cause:    {}", f.caused_by.join(", "));
            }
            if let Some(r) = &f.remedy {
                let _ = writeln!(out, "   fix:      {}", r.command);
                let _ = writeln!(
                    out,
                    "             {}{}",
                    r.description,
                    if r.automatic {
                        " [planned by --fix]"
                    } else {
                        ""
                    }
                );
            }
        }
    }

    // Summary.
    out.push('\n');
    let _ = writeln!(out, "SUMMARY");
    if !report.findings.is_empty() {
        let mut rows = Rows::new(["Severity", "Code", "Subject", "Blocks"]);
        for f in &report.findings {
            rows.push([
                f.severity.to_string(),
                f.code.to_string(),
                f.subject.kubectl_args(),
                if f.blocks.is_empty() {
                    "-".into()
                } else {
                    format!("{} namespace(s)", f.blocks.len())
                },
            ]);
        }
        out.push_str(&rows.render());
    }
    let mut rows = Rows::new(["Check", "Checked", "Problems"]);
    rows.push([
        "apiservices".to_owned(),
        s.api_services.to_string(),
        s.unhealthy_api_services.to_string(),
    ]);
    rows.push([
        "namespaces".to_owned(),
        s.namespaces.to_string(),
        format!("{} blocked", s.blocked_namespaces),
    ]);
    rows.push([
        "webhooks".to_owned(),
        s.webhooks.to_string(),
        s.failing_webhooks.to_string(),
    ]);
    rows.push([
        "findings".to_owned(),
        (s.errors + s.warnings + s.infos).to_string(),
        format!(
            "{} error(s), {} warning(s), {} info",
            s.errors, s.warnings, s.infos
        ),
    ]);
    out.push_str(&rows.render());

    if !report.unchecked.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "NOT CHECKED ({})", report.unchecked.len());
        let mut rows = Rows::new(["What", "Why"]);
        for u in &report.unchecked {
            rows.push([u.what.clone(), u.reason.clone()]);
        }
        out.push_str(&rows.render());
    }

    if report.fix.is_none() {
        out.push('\n');
        let _ = writeln!(out, "{}", verdict(report.result, false));
    }
    out
}

/// The closing line.
pub fn verdict(result: Outcome, fixing: bool) -> String {
    match result {
        Outcome::Healthy => "Result: healthy (exit 0).".into(),
        Outcome::ProblemsFound if fixing => "Result: problems found (exit 3).".into(),
        Outcome::ProblemsFound => {
            "Result: problems found (exit 3). `kubectl cozy doctor --fix` shows a fix plan.".into()
        }
        Outcome::Incomplete => {
            "Result: nothing wrong found, but some checks could not run (exit 5); see NOT CHECKED."
                .into()
        }
    }
}

fn action_title(action: &Action) -> String {
    match action {
        Action::ReapSession { session, objects } => {
            format!("reap serve session {session} ({} object(s))", objects.len())
        }
        Action::DeleteApiService { name, .. } => format!("delete APIService {name}"),
        Action::RemoveFinalizers { object, remove, .. } => format!(
            "remove finalizer(s) {} from {}",
            remove.join(", "),
            object.kubectl_args()
        ),
        Action::FinalizeNamespace { name } => {
            format!("finalize namespace {name} through /finalize (last resort)")
        }
    }
}

/// The fix plan, before any confirmation.
pub fn plan(fix: &FixReport) -> String {
    let mut out = String::new();
    if fix.actions.is_empty() {
        let _ = writeln!(out, "FIX PLAN: nothing doctor can fix automatically");
    } else {
        let _ = writeln!(out, "FIX PLAN ({} action(s))", fix.actions.len());
        for a in &fix.actions {
            let _ = writeln!(out, "{}. {}", a.id, action_title(&a.action));
            let _ = writeln!(out, "   {}", a.description);
            let _ = writeln!(out, "   same as:  {}", a.command);
            if !a.fixes.is_empty() {
                let _ = writeln!(out, "   fixes:    {}", a.fixes.join(", "));
            }
            if let Some(w) = &a.warning {
                let _ = writeln!(out, "   WARNING:  {w}");
            }
        }
    }
    if !fix.not_planned.is_empty() {
        let _ = writeln!(out, "NOT PLANNED");
        for n in &fix.not_planned {
            let _ = writeln!(out, "- {}: {}", n.finding, n.reason);
        }
    }
    out
}

/// What applying did and the state afterwards.
pub fn results(fix: &FixReport) -> String {
    let mut out = String::new();
    match fix.mode {
        FixMode::DryRun if fix.actions.is_empty() => return out,
        FixMode::DryRun => {
            let _ = writeln!(
                out,
                "Dry run: nothing was changed. Apply with --yes, or run in a terminal to confirm each step."
            );
            return out;
        }
        FixMode::Declined => {
            let _ = writeln!(out, "Nothing applied: every action was declined.");
            return out;
        }
        FixMode::Applied => {}
    }
    let _ = writeln!(out, "APPLIED");
    for r in &fix.results {
        let outcome = match r.outcome {
            ActionOutcome::Done => "done",
            ActionOutcome::AlreadyDone => "already done",
            ActionOutcome::Skipped => "skipped",
            ActionOutcome::NotVerified => "NOT VERIFIED",
            ActionOutcome::Failed => "FAILED",
        };
        let _ = writeln!(out, "{}. {outcome}: {}", r.action, r.detail);
        if let Some(v) = &r.verified {
            let _ = writeln!(out, "   verified: {v}");
        }
    }
    if let Some(after) = &fix.after {
        let _ = writeln!(out, "\nAFTER THE FIX");
        if after.namespaces.is_empty() {
            let _ = writeln!(out, "no namespace was Terminating before");
        } else {
            let mut rows = Rows::new(["Namespace", "State", "Still blocked by"]);
            for n in &after.namespaces {
                rows.push([
                    n.name.clone(),
                    n.state.clone(),
                    if n.blocked_by.is_empty() {
                        "-".into()
                    } else {
                        n.blocked_by.join(", ")
                    },
                ]);
            }
            out.push_str(&rows.render());
        }
        if after.findings.is_empty() {
            let _ = writeln!(out, "A fresh diagnosis finds nothing wrong.");
        } else {
            let _ = writeln!(
                out,
                "A fresh diagnosis still finds {} problem(s):",
                after.findings.len()
            );
            for f in &after.findings {
                let _ = writeln!(
                    out,
                    "- [{}] {} {}: {}",
                    f.severity,
                    f.code,
                    f.subject.kubectl_args(),
                    f.what
                );
            }
        }
        if !after.unchecked.is_empty() {
            let _ = writeln!(out, "Not checked afterwards: {}", after.unchecked.len());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kubectl prints `3h20m` and `2d3h` where doctor used to print `3h`
    /// and `2d`: ages go through apimachinery's `HumanDuration`.
    #[test]
    fn durations_read_like_kubectl() {
        let rows: &[(i64, &str)] = &[
            (5, "5s"),
            (45, "45s"),
            (119, "119s"),
            (303, "5m3s"),
            (300, "5m"),
            (3000, "50m"),
            (4 * 3600, "4h"),
            (3 * 3600 + 20 * 60, "3h20m"),
            (47 * 3600, "47h"),
            (2 * 86_400 + 3 * 3600, "2d3h"),
            (3 * 86_400, "3d"),
            (400 * 86_400, "400d"),
            (800 * 86_400, "2y70d"),
        ];
        for &(seconds, want) in rows {
            assert_eq!(duration(seconds), want, "{seconds}s");
        }
        assert_eq!(ago(-4), "0s ago");
    }

    #[test]
    fn conditions_print_verbatim_with_their_age() {
        let c = Condition {
            type_: "NamespaceDeletionDiscoveryFailure".into(),
            status: "True".into(),
            reason: Some("DiscoveryFailed".into()),
            message: Some("Discovery failed for some groups".into()),
            last_transition_time: Some("2026-09-01T11:55:00Z".into()),
        };
        let now: Timestamp = "2026-09-01T12:00:00Z".parse().unwrap();
        assert_eq!(
            condition_text(&c, now),
            "True DiscoveryFailed: Discovery failed for some groups (since 2026-09-01T11:55:00Z, 5m ago)"
        );
    }
}
