//! Doctor reports for people: kubectl-style tables of APIServices,
//! namespaces (with their conditions verbatim) and webhooks, one block per
//! finding (what, why, evidence, owner, blocks, fix command), a summary table,
//! what could not be checked, and the `--fix` plan and results. Pure functions
//! from the report to text; `-o json|yaml` serializes the report itself.

use std::fmt::Write as _;

use k8s_openapi::jiff::Timestamp;

use super::findings::{
    Action, ActionOutcome, ApiServiceReport, Condition, Finding, FixMode, FixReport,
    NamespaceReport, Report, ScopeKind, SessionState, Verdict,
};
use super::group;
use crate::output::{Rows, age, ago};

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
                .map(|t| format!(" {}", age(now.as_second() - t.as_second())))
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
            // No answer: the limit ran out, or the connection failed.
            None if p
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with("no answer")) =>
            {
                format!("timeout {}ms", p.latency_ms)
            }
            None => format!("failed {}ms", p.latency_ms),
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

/// The whole report as text: the header, then one section per part of the
/// cluster, the findings, the summary, what was not checked, and (without
/// `--fix`) the verdict. `wide` lists healthy local APIServices and healthy
/// webhooks too.
pub fn report(report: &Report, wide: bool) -> String {
    let now = now_of(report);
    let mut out = header(report);
    if let Some(server) = &report.standalone {
        out.push('\n');
        out.push_str(&super::standalone::explain(server));
        out.push('\n');
        out.push_str(&namespaces_section(report, now));
        out.push('\n');
        out.push_str(&findings_section(report));
        let unchecked = unchecked_section(report);
        if !unchecked.is_empty() {
            out.push('\n');
            out.push_str(&unchecked);
        }
        // With --fix the verdict follows the plan (and what it did).
        if report.fix.is_none() {
            out.push('\n');
            let _ = writeln!(out, "{}", verdict(report, false));
        }
        return out;
    }
    out.push('\n');
    out.push_str(&api_services_section(report, wide, now));
    out.push('\n');
    out.push_str(&namespaces_section(report, now));
    let hooks = webhooks_section(report, wide);
    if !hooks.is_empty() {
        out.push('\n');
        out.push_str(&hooks);
    }
    out.push('\n');
    out.push_str(&findings_section(report));
    out.push('\n');
    out.push_str(&summary_section(report));
    let unchecked = unchecked_section(report);
    if !unchecked.is_empty() {
        out.push('\n');
        out.push_str(&unchecked);
    }
    if report.fix.is_none() {
        out.push('\n');
        let _ = writeln!(out, "{}", verdict(report, false));
    }
    out
}

/// The first line: which cluster, what was checked, how long it took.
fn header(report: &Report) -> String {
    let s = &report.summary;
    if report.standalone.is_some() {
        return format!(
            "Server {}{}: a standalone server, checked in {:.2}s ({} requests)\n",
            report.cluster,
            report
                .server_version
                .as_deref()
                .map(|v| format!(" ({v})"))
                .unwrap_or_default(),
            report.duration_ms as f64 / 1000.0,
            s.requests
        );
    }
    format!(
        "Cluster {}{}: {} APIService(s), {} namespace(s) in scope, {} webhook(s) checked in {:.2}s ({} requests)\n",
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
    )
}

fn session_cell(a: &ApiServiceReport) -> String {
    match &a.session {
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
    }
}

/// APISERVICES: a table of the aggregated and unhealthy ones (all with
/// `wide`).
fn api_services_section(report: &Report, wide: bool, now: Timestamp) -> String {
    let mut out = String::new();
    let shown: Vec<&ApiServiceReport> = report
        .api_services
        .iter()
        .filter(|a| wide || !a.local || !a.healthy)
        .collect();
    let hidden = report.api_services.len() - shown.len();
    if report.api_services.is_empty()
        && report
            .unchecked
            .iter()
            .any(|u| u.what.starts_with("list apiservices"))
    {
        // Not "all 0 healthy": they could not be listed (NOT CHECKED says why).
        let _ = writeln!(out, "APISERVICES: not checked (could not be listed)");
        return out;
    }
    if shown.is_empty() {
        let _ = writeln!(
            out,
            "APISERVICES: all {} healthy (local; -o wide lists them)",
            report.api_services.len()
        );
        return out;
    }
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
        rows.push([
            a.name.clone(),
            service_cell(a),
            available_cell(a, now),
            probe_cell(a),
            ca_cell(a),
            session_cell(a),
            if a.healthy { "yes" } else { "NO" }.to_owned(),
        ]);
    }
    out.push_str(&rows.render());
    out
}

/// The namespaces in scope: a table, then each Terminating one with its
/// conditions verbatim and what remains in it.
fn namespaces_section(report: &Report, now: Timestamp) -> String {
    let mut out = String::new();
    let title = match report.scope.namespaces {
        ScopeKind::Terminating => "TERMINATING NAMESPACES".to_owned(),
        ScopeKind::Namespace => format!(
            "NAMESPACE {}",
            report.scope.namespace.clone().unwrap_or_default()
        ),
        ScopeKind::All => "NAMESPACES (Terminating, or with objects stuck in deletion)".to_owned(),
    };
    let listed: Vec<&NamespaceReport> = report
        .namespaces
        .iter()
        .filter(|n| {
            report.scope.namespaces != ScopeKind::All
                || n.deletion_timestamp.is_some()
                || !n.remaining.is_empty()
        })
        .collect();
    let unread = report.unchecked.iter().any(|u| {
        u.what == "list namespaces"
            || report
                .scope
                .namespace
                .as_ref()
                .is_some_and(|ns| u.what == format!("get namespace {ns}"))
    });
    if listed.is_empty() && unread {
        // Not "none": they could not be read (NOT CHECKED says why).
        let _ = writeln!(out, "{title}: not checked (could not be read)");
        return out;
    }
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
        return out;
    }
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
            n.terminating_seconds.map(age).unwrap_or_else(|| "-".into()),
            if conditions.is_empty() {
                "-".into()
            } else {
                conditions.join(",")
            },
            // The objects left in a Terminating namespace (or stuck in
            // deletion); an Active one's content is not counted.
            if n.deletion_timestamp.is_none() && n.remaining.is_empty() {
                "-".into()
            } else {
                n.remaining.len().to_string()
            },
            if n.blocked { "YES" } else { "no" }.to_owned(),
        ]);
    }
    out.push_str(&rows.render());
    let terminating: Vec<&NamespaceReport> = listed
        .iter()
        .copied()
        .filter(|n| n.deletion_timestamp.is_some())
        .collect();
    for members in group::namespaces(&terminating) {
        match members.as_slice() {
            [n] => out.push_str(&namespace_detail(n, now)),
            _ => out.push_str(&namespaces_detail(&members, now)),
        }
    }
    out
}

/// Terminating namespaces whose details read the same but for their names
/// and times ([`group::namespaces`]): once, with the span of the times.
fn namespaces_detail(members: &[&NamespaceReport], now: Timestamp) -> String {
    let mut out = String::new();
    let first = members[0];
    let span = |times: Vec<&str>| -> String {
        let earliest = times.iter().min().copied().unwrap_or_default();
        let latest = times.iter().max().copied().unwrap_or_default();
        if earliest == latest {
            earliest.to_owned()
        } else {
            format!("{earliest} … {latest}")
        }
    };
    let deleted = span(
        members
            .iter()
            .filter_map(|n| n.deletion_timestamp.as_deref())
            .collect(),
    );
    let _ = writeln!(
        out,
        "\n{} namespaces — {} since {deleted} (spec.finalizers {:?}{}), each alike:",
        members.len(),
        first.phase,
        first.spec_finalizers,
        if first.finalizers.is_empty() {
            String::new()
        } else {
            format!(", metadata.finalizers {:?}", first.finalizers)
        }
    );
    let names: Vec<&str> = members.iter().map(|n| n.name.as_str()).collect();
    let label = "  namespaces: ";
    let _ = writeln!(
        out,
        "{label}{}",
        group::name_list(&names, label.len(), label.len())
    );
    if first.conditions.is_empty() {
        let _ = writeln!(out, "  (no conditions)");
    }
    for (i, c) in first.conditions.iter().enumerate() {
        let times: Vec<&str> = members
            .iter()
            .filter_map(|n| n.conditions.get(i)?.last_transition_time.as_deref())
            .collect();
        let text = if times
            .iter()
            .all(|t| Some(*t) == c.last_transition_time.as_deref())
        {
            condition_text(c, now)
        } else {
            let mut bare = c.clone();
            bare.last_transition_time = None;
            format!("{} (since {})", condition_text(&bare, now), span(times))
        };
        let _ = writeln!(out, "  {}={text}", c.type_);
    }
    for o in first.remaining.iter().take(20) {
        let _ = writeln!(
            out,
            "  remaining in each: {}{}",
            o.object.kubectl_name(),
            if o.finalizers.is_empty() {
                String::new()
            } else {
                format!(" finalizers {:?}", o.finalizers)
            }
        );
    }
    if first.remaining.len() > 20 {
        let _ = writeln!(
            out,
            "  remaining in each: … and {} more",
            first.remaining.len() - 20
        );
    }
    out
}

/// One Terminating namespace: finalizers, conditions, what remains.
fn namespace_detail(n: &NamespaceReport, now: Timestamp) -> String {
    let mut out = String::new();
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
    out
}

/// WEBHOOKS: the unhealthy ones (all with `wide`); empty when none is shown.
fn webhooks_section(report: &Report, wide: bool) -> String {
    let mut out = String::new();
    let hooks: Vec<_> = report
        .webhooks
        .iter()
        .filter(|w| wide || !w.healthy)
        .collect();
    if hooks.is_empty() {
        return out;
    }
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
    out
}

/// FINDINGS: one numbered block per finding.
fn findings_section(report: &Report) -> String {
    let mut out = String::new();
    if report.findings.is_empty() {
        let _ = writeln!(out, "FINDINGS: none");
        return out;
    }
    let _ = writeln!(out, "FINDINGS");
    for (i, members) in group::findings(&report.findings).iter().enumerate() {
        match members.as_slice() {
            [f] => out.push_str(&finding_block(i + 1, f)),
            _ => out.push_str(&group_block(i + 1, members)),
        }
    }
    out
}

/// `   blocks:   namespace(s) a, b, …`, wrapped and capped; an info
/// finding (its controller may still be working: not BLOCKED yet) `holds`.
fn blocks_line(blocks: &[String], severity: super::Severity) -> String {
    let label = if severity == super::Severity::Info {
        "   holds:    namespace(s) "
    } else {
        "   blocks:   namespace(s) "
    };
    format!("{label}{}\n", group::name_list(blocks, label.len(), 13))
}

/// Findings about several namespaces that say the same but for the
/// namespace ([`group::findings`]): what they share once (the cause's
/// evidence, the fix), the first namespace's own evidence, and the
/// namespaces.
fn group_block(number: usize, members: &[&Finding]) -> String {
    let mut out = String::new();
    let first = members[0];
    let count = members.len();
    let _ = writeln!(
        out,
        "{number}. [{}] {} in {count} namespaces",
        first.severity, first.code
    );
    let own_name = format!("namespace {}", first.subject.name);
    let what = if first.what.contains(&own_name) {
        first
            .what
            .replacen(&own_name, &format!("{count} namespaces"), 1)
    } else {
        format!(
            "{} (and alike in {} other namespaces)",
            first.what,
            count - 1
        )
    };
    let _ = writeln!(out, "   what:     {what}");
    let _ = writeln!(out, "   why:      {}", first.why);
    for (j, e) in first.evidence.iter().enumerate() {
        let label = if j == 0 { "evidence:" } else { "" };
        let _ = writeln!(out, "   {label:<9} {}: {}", e.source, e.observed);
    }
    let shape = group::own_evidence_shape(first);
    if !shape.is_empty() {
        let others = &members[1..];
        if others.iter().all(|f| group::own_evidence_shape(f) == shape) {
            let _ = writeln!(
                out,
                "             (the same in {}, but for the time)",
                match others.len() {
                    1 => "the other namespace".to_owned(),
                    n => format!("the other {n} namespaces"),
                }
            );
        } else {
            for f in others.iter().take(3) {
                for e in f
                    .evidence
                    .iter()
                    .filter(|e| group::own_evidence(e, &f.subject.name))
                {
                    let _ = writeln!(out, "             {}: {}", e.source, e.observed);
                }
            }
            if others.len() > 3 {
                let _ = writeln!(
                    out,
                    "             (and what each of the other {} namespaces says: -o json)",
                    others.len() - 3
                );
            }
        }
    }
    if let Some(owner) = &first.owner {
        let _ = writeln!(out, "   owner:    {owner}");
    }
    let blocks: Vec<String> = members.iter().map(|f| f.subject.name.clone()).collect();
    out.push_str(&blocks_line(&blocks, first.severity));
    finding_tail(&mut out, first);
    out
}

/// A finding's last lines: cause, hint, fix.
fn finding_tail(out: &mut String, f: &Finding) {
    if !f.caused_by.is_empty() {
        let _ = writeln!(out, "   cause:    {}", f.caused_by.join(", "));
    }
    if let Some(hint) = &f.hint {
        let _ = writeln!(out, "   hint:     {hint}");
    }
    if let Some(r) = &f.remedy {
        let _ = writeln!(out, "   fix:      {}", r.command);
        let automatic = if r.automatic {
            " [planned by --fix]"
        } else {
            ""
        };
        let _ = writeln!(out, "             {}{automatic}", r.description);
    }
}

/// One finding: what, why, evidence, owner, blocks, cause, fix.
fn finding_block(number: usize, f: &Finding) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{number}. [{}] {} {}",
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
        out.push_str(&blocks_line(&f.blocks, f.severity));
    }
    finding_tail(&mut out, f);
    out
}

/// `-o name`: the subject of each finding, once each, in the order of the
/// findings, as `kubectl get -o name` names objects
/// (`apiservice.apiregistration.k8s.io/v1alpha1.apps.cozystack.io`,
/// `namespace/team-a`), without namespaces, as kubectl prints them.
pub fn names(report: &Report) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = String::new();
    for f in &report.findings {
        let name = f.subject.kubectl_object_name();
        if seen.insert(name.clone()) {
            out.push_str(&name);
            out.push('\n');
        }
    }
    out
}

/// SUMMARY: the findings as a table (when any), then the counts.
fn summary_section(report: &Report) -> String {
    let mut out = String::new();
    let s = &report.summary;
    let _ = writeln!(out, "SUMMARY");
    if !report.findings.is_empty() {
        let mut rows = Rows::new(["Severity", "Code", "Subject", "Blocks"]);
        for members in group::findings(&report.findings) {
            let f = members[0];
            let (subject, blocks) = match members.len() {
                1 => (f.subject.kubectl_args(), f.blocks.len()),
                n => (
                    format!("{} and {} more", f.subject.kubectl_args(), n - 1),
                    n,
                ),
            };
            rows.push([
                f.severity.to_string(),
                f.code.to_string(),
                subject,
                if blocks == 0 {
                    "-".into()
                } else {
                    format!("{blocks} namespace(s)")
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
    out
}

/// NOT CHECKED: what could not be read and why; empty when everything was.
fn unchecked_section(report: &Report) -> String {
    let mut out = String::new();
    if report.unchecked.is_empty() {
        return out;
    }
    let _ = writeln!(out, "NOT CHECKED ({})", report.unchecked.len());
    let mut rows = Rows::new(["What", "Why"]);
    for u in &report.unchecked {
        rows.push([u.what.clone(), u.reason.clone()]);
    }
    out.push_str(&rows.render());
    out
}

/// The closing line; `fixing` when `--fix` ran. It points at `--fix` only
/// where a finding has a remedy `--fix` carries out.
pub fn verdict(report: &Report, fixing: bool) -> String {
    let fixable = report
        .findings
        .iter()
        .any(|f| f.remedy.as_ref().is_some_and(|r| r.automatic));
    match report.result {
        Verdict::Healthy => "Result: healthy (exit 0).".into(),
        Verdict::ProblemsFound if fixing => "Result: problems found (exit 3).".into(),
        Verdict::ProblemsFound if fixable => {
            "Result: problems found (exit 3). `kubectl cozy doctor --fix` shows a fix plan.".into()
        }
        Verdict::ProblemsFound => {
            "Result: problems found (exit 3); nothing here `--fix` can do: each finding's fix is by hand.".into()
        }
        Verdict::Incomplete => {
            "Result: nothing wrong found, but some checks could not run (exit 5); see NOT CHECKED."
                .into()
        }
    }
}

/// One line naming an action: `delete APIService x`.
pub fn action_title(action: &Action) -> String {
    match action {
        Action::ReapSession {
            session, objects, ..
        } => {
            format!("reap serve session {session} ({} object(s))", objects.len())
        }
        Action::DeleteApiService { name, .. } => format!("delete APIService {name}"),
        Action::RemoveFinalizers { object, remove, .. } => format!(
            "remove finalizer(s) {} from {}",
            remove.join(", "),
            object.kubectl_args()
        ),
        Action::DeleteNamespace { name, .. } => format!("delete namespace {name} again"),
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
                let _ = writeln!(out, "   fixes:    {}", finding_ids(&a.fixes, 13));
            }
            if let Some(w) = &a.warning {
                let _ = writeln!(out, "   WARNING:  {w}");
            }
        }
    }
    if !fix.not_planned.is_empty() {
        let _ = writeln!(out, "NOT PLANNED");
        // Namespaces left for one reason are said once.
        let mut said: Vec<(&str, Vec<&str>)> = Vec::new();
        for n in &fix.not_planned {
            match said.iter_mut().find(|(reason, ids)| {
                *reason == n.reason
                    && namespace_finding(ids[0]).is_some_and(|(code, _)| {
                        namespace_finding(&n.finding).is_some_and(|(c, _)| c == code)
                    })
            }) {
                Some((_, ids)) => ids.push(&n.finding),
                None => said.push((&n.reason, vec![&n.finding])),
            }
        }
        for (reason, ids) in said {
            let ids: Vec<String> = ids.into_iter().map(str::to_owned).collect();
            let _ = writeln!(out, "- {}: {reason}", finding_ids(&ids, 2));
        }
    }
    out
}

/// `<code>:namespace/<name>` split into code and name.
fn namespace_finding(id: &str) -> Option<(&str, &str)> {
    let (code, name) = id.split_once(":namespace/")?;
    (!name.contains('/')).then_some((code, name))
}

/// Finding ids, those of one code about several namespaces said once:
/// `NamespaceDiscoveryFailure in 43 namespaces:` and the names on the
/// next lines (indented by `indent`, capped).
fn finding_ids(ids: &[String], indent: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut by_code: Vec<(&str, Vec<&str>)> = Vec::new();
    for id in ids {
        match namespace_finding(id) {
            Some((code, name)) => match by_code.iter_mut().find(|(c, _)| *c == code) {
                Some((_, names)) => names.push(name),
                None => by_code.push((code, vec![name])),
            },
            None => parts.push(id.clone()),
        }
    }
    for (code, names) in by_code {
        parts.push(match names.as_slice() {
            [name] => format!("{code}:namespace/{name}"),
            _ => format!(
                "{code} in {} namespaces:\n{}{}",
                names.len(),
                " ".repeat(indent),
                group::name_list(&names, indent, indent)
            ),
        });
    }
    parts.join(", ")
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
        if let Some(failed) = after
            .unchecked
            .iter()
            .find(|u| u.what == super::findings::DIAGNOSIS_AFTER)
        {
            // Nothing was read afterwards: no table, no verdict on it.
            let _ = writeln!(
                out,
                "The diagnosis after the fix failed ({}): what the fix changed is not known; run kubectl cozy \
                 doctor again.",
                failed.reason
            );
            return out;
        }
        if after.namespaces.is_empty() {
            // A sentence rather than a table of no rows, as kubectl says
            // "No resources found".
            let _ = writeln!(out, "No namespace was Terminating before the fix.");
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
        // Info findings are notes, not problems (they leave the exit code).
        let (notes, problems): (Vec<_>, Vec<_>) = after
            .findings
            .iter()
            .partition(|f| f.severity == super::Severity::Info);
        let still: Vec<&str> = after
            .namespaces
            .iter()
            .filter(|n| n.state == "terminating")
            .map(|n| n.name.as_str())
            .collect();
        if problems.is_empty() && !still.is_empty() {
            // Nothing wrong yet, but not done: what holds them are notes
            // (finalizers whose controllers may still be working).
            let _ = writeln!(
                out,
                "A fresh diagnosis finds no problem, but namespace(s) {} are still Terminating: see the notes; run \
                 kubectl cozy doctor again later.",
                still.join(", ")
            );
        } else if problems.is_empty() {
            let _ = writeln!(out, "A fresh diagnosis finds nothing wrong.");
        } else {
            let _ = writeln!(
                out,
                "A fresh diagnosis still finds {} problem(s):",
                problems.len()
            );
        }
        for (i, f) in problems.iter().chain(&notes).enumerate() {
            if i == problems.len() {
                let _ = writeln!(out, "Notes:");
            }
            let _ = writeln!(
                out,
                "- [{}] {} {}: {}",
                f.severity,
                f.code,
                f.subject.kubectl_args(),
                f.what
            );
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

    /// Reports built the way `diagnose` builds them (the real rules), from
    /// what a cluster could have answered.
    mod fixtures {
        use std::collections::BTreeMap;

        use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
        use k8s_openapi::api::core::v1::Namespace;
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
        use k8s_openapi::jiff::Timestamp;

        use crate::doctor::content::Content;
        use crate::doctor::discovery::Discovered;
        use crate::doctor::findings::{
            ApiServiceReport, Condition, ObjectRef, Probe, RemainingObject, Report, ServiceCheck,
            WebhookReport,
        };
        use crate::doctor::sessions::{Session, judge_lease, object_ref};
        use crate::doctor::{Gathered, Options, apiservices, conclude};
        use crate::register::session::{
            DEFAULT_NAMESPACE, SessionObject, SessionRecord, session_kind,
        };

        pub(super) fn now() -> Timestamp {
            "2026-09-01T12:00:00Z".parse().unwrap()
        }

        fn condition(
            type_: &str,
            status: &str,
            reason: &str,
            message: &str,
            since: &str,
        ) -> Condition {
            Condition {
                type_: type_.into(),
                status: status.into(),
                reason: Some(reason.into()),
                message: (!message.is_empty()).then(|| message.into()),
                last_transition_time: Some(since.into()),
            }
        }

        fn probe(group: &str, version: &str, status: u16, latency_ms: u64) -> Probe {
            Probe {
                path: format!("/apis/{group}/{version}"),
                status: Some(status),
                latency_ms,
                ok: status == 200,
                error: (status != 200).then(|| "service unavailable".into()),
            }
        }

        fn local(name: &str) -> ApiServiceReport {
            let (version, group) = name.split_once('.').unwrap_or((name, ""));
            ApiServiceReport {
                name: name.into(),
                uid: None,
                group: group.into(),
                version: version.into(),
                local: true,
                available: Some(condition(
                    "Available",
                    "True",
                    "Local",
                    "Local APIServices are always available",
                    "2026-09-01T08:00:00Z",
                )),
                service: None,
                insecure_skip_tls_verify: false,
                ca_bundle: None,
                probe: Some(probe(group, version, 200, 2)),
                session: None,
                healthy: true,
            }
        }

        fn aggregated(name: &str, service: ServiceCheck, available: bool) -> ApiServiceReport {
            let (version, group) = name.split_once('.').unwrap();
            ApiServiceReport {
                name: name.into(),
                uid: Some(format!("uid-{group}")),
                group: group.into(),
                version: version.into(),
                local: false,
                available: Some(if available {
                    condition(
                        "Available",
                        "True",
                        "Passed",
                        "all checks passed",
                        "2026-09-01T09:00:00Z",
                    )
                } else {
                    condition(
                        "Available",
                        "False",
                        "FailedDiscoveryCheck",
                        &format!(
                            "failing or missing response from https://10.96.0.42:443/apis/{group}/{version}: connection refused"
                        ),
                        "2026-09-01T11:49:00Z",
                    )
                }),
                service: Some(service),
                insecure_skip_tls_verify: true,
                ca_bundle: None,
                probe: Some(probe(group, version, if available { 200 } else { 503 }, 3)),
                session: None,
                healthy: available,
            }
        }

        fn external(name: &str) -> ServiceCheck {
            ServiceCheck {
                namespace: "default".into(),
                name: name.into(),
                port: 443,
                exists: Some(true),
                type_: Some("ExternalName".into()),
                external_name: Some("localhost".into()),
                ..ServiceCheck::default()
            }
        }

        fn cluster_ip(namespace: &str, name: &str, ready: usize) -> ServiceCheck {
            ServiceCheck {
                namespace: namespace.into(),
                name: name.into(),
                port: 443,
                exists: Some(true),
                type_: Some("ClusterIP".into()),
                ready_endpoints: Some(ready),
                ..ServiceCheck::default()
            }
        }

        fn plane() -> Vec<ApiServiceReport> {
            ["v1.", "v1.apps", "v1.coordination.k8s.io", "v2.autoscaling"]
                .into_iter()
                .map(local)
                .collect()
        }

        fn terminating(name: &str, since: &str, conditions: serde_json::Value) -> Namespace {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "deletionTimestamp": since, "resourceVersion": "812"},
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Terminating", "conditions": conditions}
            }))
            .unwrap()
        }

        fn configmap(namespace: &str, name: &str, finalizers: &[&str]) -> RemainingObject {
            RemainingObject {
                object: ObjectRef {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    resource: "configmaps".into(),
                    namespace: Some(namespace.into()),
                    name: name.into(),
                },
                finalizers: finalizers.iter().map(|f| (*f).to_owned()).collect(),
                deletion_timestamp: (!finalizers.is_empty()).then(|| "2026-09-01T11:50:02Z".into()),
                resource_version: Some("942".into()),
                labels: Default::default(),
            }
        }

        fn webhook(
            configuration: &str,
            name: &str,
            policy: &str,
            service: ServiceCheck,
            healthy: bool,
        ) -> WebhookReport {
            WebhookReport {
                kind: "ValidatingWebhookConfiguration".into(),
                configuration: configuration.into(),
                webhook: name.into(),
                failure_policy: policy.into(),
                rules: vec!["DELETE configmaps".into()],
                namespace_selector: None,
                object_selector: None,
                intercepts: vec![
                    serde_json::from_value(serde_json::json!({
                        "operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"],
                        "resources": ["configmaps"]
                    }))
                    .unwrap(),
                ],
                service,
                healthy,
            }
        }

        struct Cluster {
            api_services: Vec<ApiServiceReport>,
            sessions: Vec<Session>,
            namespaces: Vec<Namespace>,
            content: Content,
            discovered: Discovered,
            webhooks: Vec<WebhookReport>,
        }

        impl Cluster {
            fn new(api_services: Vec<ApiServiceReport>) -> Self {
                Cluster {
                    api_services,
                    sessions: Vec::new(),
                    namespaces: Vec::new(),
                    content: Content::default(),
                    discovered: Discovered::default(),
                    webhooks: Vec::new(),
                }
            }

            fn report(mut self) -> Report {
                let opts = Options::default();
                let crds = BTreeMap::from([(
                    "example.com".to_owned(),
                    vec!["widgets.example.com".to_owned()],
                )]);
                self.content.types_listed = 31;
                apiservices::attach_sessions(&mut self.api_services, &self.sessions);
                let mut report = conclude(Gathered {
                    cluster: "https://127.0.0.1:6443",
                    server_version: Some("v1.36.3".into()),
                    now: now(),
                    opts: &opts,
                    api_services: self.api_services,
                    sessions: &self.sessions,
                    namespaces: &self.namespaces,
                    content: &self.content,
                    discovered: &self.discovered,
                    crds: &crds,
                    webhooks: self.webhooks,
                    unchecked: Vec::new(),
                });
                report.duration_ms = 212;
                report.summary.requests = 98;
                report
            }
        }

        pub(super) fn healthy() -> Report {
            let mut api = plane();
            api.push(aggregated(
                "v1beta1.metrics.k8s.io",
                cluster_ip("kube-system", "metrics-server", 1),
                true,
            ));
            let mut cluster = Cluster::new(api);
            cluster.webhooks.push(webhook(
                "policy",
                "validate.policy.example.com",
                "Fail",
                cluster_ip("policy-system", "policy-webhook", 2),
                true,
            ));
            cluster.report()
        }

        pub(super) fn dead_api_service_blocking_namespaces() -> Report {
            let mut api = plane();
            api.push(aggregated(
                "v1alpha1.doctor-test.example.com",
                external("doctor-dead"),
                false,
            ));
            let mut cluster = Cluster::new(api);
            let discovery = serde_json::json!([{
                "type": "NamespaceDeletionDiscoveryFailure", "status": "True", "reason": "DiscoveryFailed",
                "message": "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: \
                            doctor-test.example.com/v1alpha1: stale GroupVersion discovery: doctor-test.example.com/v1alpha1",
                "lastTransitionTime": "2026-09-01T11:50:01Z"
            }]);
            cluster.namespaces = vec![
                terminating("team-a", "2026-09-01T11:50:00Z", discovery.clone()),
                terminating("team-b", "2026-09-01T11:40:00Z", discovery),
            ];
            cluster.content.objects.insert(
                "team-a".into(),
                vec![configmap("team-a", "kube-root-ca.crt", &[])],
            );
            cluster.content.objects.insert(
                "team-b".into(),
                vec![configmap("team-b", "blocked", &["example.com/block"])],
            );
            cluster.discovered.failed.insert(
                "doctor-test.example.com/v1alpha1".into(),
                "stale GroupVersion discovery".into(),
            );
            cluster.report()
        }

        /// The reviewer's cluster: one dead APIService and `count`
        /// namespaces deleted a few seconds apart, each stuck on it, with the
        /// five conditions the namespace controller sets (their content was
        /// deleted: only discovery holds them).
        pub(super) fn dead_api_service_blocking_many_namespaces(count: usize) -> Report {
            let mut api = plane();
            api.push(aggregated(
                "v1alpha1.doctor-test.example.com",
                cluster_ip("doctor-test", "doctor-test-server", 0),
                false,
            ));
            let mut cluster = Cluster::new(api);
            cluster.namespaces = (0..count)
                .map(|i| {
                    let deleted = format!("2026-09-01T11:40:{:02}Z", i % 60);
                    let observed = format!("2026-09-01T11:41:{:02}Z", i % 60);
                    terminating(
                        &format!("team-{i:02}"),
                        &deleted,
                        serde_json::json!([
                            {"type": "NamespaceDeletionDiscoveryFailure", "status": "True", "reason": "DiscoveryFailed",
                             "message": "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: \
                                         doctor-test.example.com/v1alpha1: stale GroupVersion discovery: doctor-test.example.com/v1alpha1",
                             "lastTransitionTime": observed},
                            {"type": "NamespaceDeletionGroupVersionParsingFailure", "status": "False",
                             "reason": "ParsedGroupVersions", "message": "All legacy kube types successfully parsed",
                             "lastTransitionTime": observed},
                            {"type": "NamespaceDeletionContentFailure", "status": "False", "reason": "ContentDeleted",
                             "message": "All content successfully deleted, may be waiting on finalization",
                             "lastTransitionTime": observed},
                            {"type": "NamespaceContentRemaining", "status": "False", "reason": "ContentRemoved",
                             "message": "All content successfully removed", "lastTransitionTime": observed},
                            {"type": "NamespaceFinalizersRemaining", "status": "False",
                             "reason": "ContentHasNoFinalizers", "message": "All content-preserving finalizers finished",
                             "lastTransitionTime": observed}
                        ]),
                    )
                })
                .collect();
            cluster.discovered.failed.insert(
                "doctor-test.example.com/v1alpha1".into(),
                "stale GroupVersion discovery".into(),
            );
            cluster.report()
        }

        pub(super) fn expired_session() -> Report {
            let mut api = plane();
            api.push(aggregated(
                "v1alpha1.apps.cozystack.io",
                cluster_ip(DEFAULT_NAMESPACE, "kubectl-cozy-3f2a", 0),
                false,
            ));
            api.push(aggregated(
                "v1alpha1.lab.example.com",
                cluster_ip(DEFAULT_NAMESPACE, "kubectl-cozy-7k2m", 1),
                true,
            ));
            let lease = |renewed: &str| Lease {
                spec: Some(LeaseSpec {
                    holder_identity: Some("alice@laptop, pid 4242".into()),
                    lease_duration_seconds: Some(15),
                    renew_time: Some(MicroTime(renewed.parse().unwrap())),
                    ..LeaseSpec::default()
                }),
                ..Lease::default()
            };
            let namespaced = |api_version: &str, kind: &str, name: &str| {
                object_ref(&SessionObject::of(
                    session_kind(api_version, kind).unwrap(),
                    Some(DEFAULT_NAMESPACE),
                    name,
                ))
            };
            let expired = Session {
                check: judge_lease(
                    "3f2a",
                    DEFAULT_NAMESPACE,
                    Some(&lease("2026-09-01T11:00:00Z")),
                    now(),
                ),
                record: SessionRecord {
                    served: vec!["apps.cozystack.io/v1alpha1".into()],
                    api_services: vec!["v1alpha1.apps.cozystack.io".into()],
                    route: Some(
                        "service kubectl-cozy-system/kubectl-cozy-3f2a:443 → tunnel".into(),
                    ),
                    started: Some("2026-09-01T09:30:00Z".parse().unwrap()),
                    saved_api_services: None,
                    in_session_namespace: false,
                    process: None,
                },
                api_services: vec!["v1alpha1.apps.cozystack.io".into()],
                objects: vec![
                    namespaced("v1", "Service", "kubectl-cozy-3f2a"),
                    namespaced("apps/v1", "Deployment", "kubectl-cozy-3f2a-agent"),
                    namespaced("v1", "ServiceAccount", "kubectl-cozy-3f2a-agent"),
                ],
                lease_exists: true,
                tampered: Vec::new(),
            };
            let alive = Session {
                check: judge_lease(
                    "7k2m",
                    DEFAULT_NAMESPACE,
                    Some(&lease("2026-09-01T11:59:58Z")),
                    now(),
                ),
                record: SessionRecord::default(),
                api_services: vec!["v1alpha1.lab.example.com".into()],
                objects: Vec::new(),
                lease_exists: true,
                tampered: Vec::new(),
            };
            let mut cluster = Cluster::new(api);
            cluster.sessions = vec![expired, alive];
            cluster.report()
        }

        /// Seconds after `kubectl cozy serve` was SIGKILLed while namespace
        /// team-e was being deleted: its Lease is still valid, the
        /// aggregator still says Available, the probe gets a connection
        /// reset.
        pub(super) fn live_session_of_a_killed_serve() -> Report {
            let mut api = plane();
            let mut a = aggregated(
                "v1alpha1.apps.cozystack.io",
                cluster_ip(DEFAULT_NAMESPACE, "kubectl-cozy-51mt0qm3", 1),
                true,
            );
            a.probe = Some(Probe {
                path: "/apis/apps.cozystack.io/v1alpha1".into(),
                status: None,
                latency_ms: 4,
                ok: false,
                error: Some("error trying to connect: connection reset by peer".into()),
            });
            a.healthy = false;
            api.push(a);
            let lease = Lease {
                spec: Some(LeaseSpec {
                    holder_identity: Some("alice@laptop, pid 4242".into()),
                    lease_duration_seconds: Some(15),
                    renew_time: Some(MicroTime("2026-09-01T11:59:54Z".parse().unwrap())),
                    ..LeaseSpec::default()
                }),
                ..Lease::default()
            };
            let session = Session {
                check: judge_lease("51mt0qm3", DEFAULT_NAMESPACE, Some(&lease), now()),
                record: SessionRecord {
                    served: vec!["apps.cozystack.io/v1alpha1".into()],
                    api_services: vec!["v1alpha1.apps.cozystack.io".into()],
                    route: Some(
                        "service kubectl-cozy-system/kubectl-cozy-51mt0qm3:443 → tunnel".into(),
                    ),
                    started: Some("2026-09-01T11:30:00Z".parse().unwrap()),
                    saved_api_services: None,
                    in_session_namespace: false,
                    process: None,
                },
                api_services: vec!["v1alpha1.apps.cozystack.io".into()],
                objects: Vec::new(),
                lease_exists: true,
                tampered: Vec::new(),
            };
            let mut cluster = Cluster::new(api);
            cluster.sessions = vec![session];
            cluster.namespaces = vec![terminating(
                "team-e",
                "2026-09-01T11:59:50Z",
                serde_json::json!([{
                    "type": "NamespaceDeletionDiscoveryFailure", "status": "True", "reason": "DiscoveryFailed",
                    "message": "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of \
                                server APIs: apps.cozystack.io/v1alpha1: stale GroupVersion discovery: apps.cozystack.io/v1alpha1",
                    "lastTransitionTime": "2026-09-01T11:59:52Z"
                }]),
            )];
            cluster.discovered.failed.insert(
                "apps.cozystack.io/v1alpha1".into(),
                "stale GroupVersion discovery".into(),
            );
            cluster.report()
        }

        /// A failing webhook intercepts updates of ConfigMaps, and a
        /// ConfigMap held by a finalizer keeps team-d Terminating: removing
        /// the finalizer is an update the webhook rejects.
        pub(super) fn finalizer_behind_failing_webhook() -> Report {
            let mut cluster = Cluster::new(plane());
            let mut missing = cluster_ip("policy-system", "guard-webhook", 0);
            missing.exists = Some(false);
            missing.type_ = None;
            missing.ready_endpoints = None;
            let mut guard = webhook("guard", "guard.example.com", "Fail", missing, false);
            guard.rules = vec!["UPDATE configmaps".into()];
            guard.intercepts = vec![
                serde_json::from_value(serde_json::json!({
                    "operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                    "resources": ["configmaps"]
                }))
                .unwrap(),
            ];
            cluster.webhooks = vec![guard];
            cluster.namespaces = vec![terminating(
                "team-d",
                "2026-09-01T11:30:00Z",
                serde_json::json!([{
                    "type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizersRemain",
                    "message": "Some content in the namespace has finalizers remaining: example.com/block in 1 resource instances",
                    "lastTransitionTime": "2026-09-01T11:30:05Z"
                }]),
            )];
            cluster.content.objects.insert(
                "team-d".into(),
                vec![configmap("team-d", "blocked", &["example.com/block"])],
            );
            cluster.report()
        }

        pub(super) fn failing_webhook() -> Report {
            let mut cluster = Cluster::new(plane());
            let mut missing = cluster_ip("policy-system", "deny-webhook", 0);
            missing.exists = Some(false);
            missing.type_ = None;
            missing.ready_endpoints = None;
            cluster.webhooks = vec![
                webhook("deny", "deny.example.com", "Fail", missing, false),
                webhook(
                    "audit",
                    "audit.example.com",
                    "Ignore",
                    cluster_ip("policy-system", "audit-webhook", 1),
                    true,
                ),
            ];
            cluster.namespaces = vec![terminating(
                "team-c",
                "2026-09-01T11:30:00Z",
                serde_json::json!([{
                    "type": "NamespaceDeletionContentFailure", "status": "True", "reason": "ContentDeletionFailed",
                    "message": "Failed to delete all resource types, 1 remaining: Internal error occurred: failed calling \
                                webhook \"deny.example.com\": failed to call webhook: service \"deny-webhook\" not found",
                    "lastTransitionTime": "2026-09-01T11:30:02Z"
                }]),
            )];
            cluster
                .content
                .objects
                .insert("team-c".into(), vec![configmap("team-c", "guarded", &[])]);
            cluster.report()
        }
    }

    fn both(name: &str, r: &Report) {
        insta::assert_snapshot!(name, report(r, false));
        insta::assert_snapshot!(format!("{name}_wide"), report(r, true));
    }

    #[test]
    fn healthy_report() {
        let r = fixtures::healthy();
        assert_eq!(r.result, Verdict::Healthy);
        both("healthy", &r);
    }

    /// APIServices that could not be listed are not "all 0 healthy".
    #[test]
    fn api_services_not_listed_are_not_called_healthy() {
        let mut r = fixtures::healthy();
        r.api_services.clear();
        r.unchecked.push(crate::doctor::Unchecked {
            what: "list apiservices.apiregistration.k8s.io".into(),
            reason: "HTTP 403 Forbidden".into(),
            status: Some(403),
        });
        let text = api_services_section(&r, false, r.generated_at.parse().unwrap());
        assert_eq!(text, "APISERVICES: not checked (could not be listed)\n");
        r.unchecked.clear();
        let text = api_services_section(&r, false, r.generated_at.parse().unwrap());
        assert!(text.starts_with("APISERVICES: all 0 healthy"), "{text}");
    }

    /// Namespaces that could not be read are not "none".
    #[test]
    fn namespaces_not_read_are_not_called_none() {
        let mut r = fixtures::healthy();
        r.namespaces.clear();
        let now = r.generated_at.parse().unwrap();
        let none = namespaces_section(&r, now);
        assert!(none.ends_with(": none\n"), "{none}");
        r.unchecked.push(crate::doctor::Unchecked {
            what: "list namespaces".into(),
            reason: "HTTP 403 Forbidden".into(),
            status: Some(403),
        });
        let text = namespaces_section(&r, now);
        assert!(
            text.ends_with(": not checked (could not be read)\n"),
            "{text}"
        );
    }

    /// An Active namespace's content is not counted: `-`, not `0` objects
    /// (`doctor -n team-a` of a namespace holding apps said 0).
    #[test]
    fn an_active_namespaces_objects_are_not_counted() {
        let mut r = fixtures::dead_api_service_blocking_namespaces();
        r.scope.namespaces = ScopeKind::Namespace;
        let mut active = r.namespaces[0].clone();
        active.name = "quiet".into();
        active.phase = "Active".into();
        active.deletion_timestamp = None;
        active.terminating_seconds = None;
        active.remaining.clear();
        active.conditions.clear();
        active.blocked = false;
        r.namespaces = vec![active];
        let text = namespaces_section(&r, r.generated_at.parse().unwrap());
        let row = text
            .lines()
            .find(|l| l.starts_with("quiet "))
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["quiet", "Active", "-", "-", "-", "no"],
            "{text}"
        );
    }

    #[test]
    fn dead_apiservice_blocking_namespaces_report() {
        let r = fixtures::dead_api_service_blocking_namespaces();
        assert_eq!(r.result, Verdict::ProblemsFound);
        both("dead_apiservice", &r);
    }

    /// Regression: 43 namespaces stuck on one dead APIService printed
    /// 1,587 lines, each namespace repeating the APIService's evidence. The
    /// shared cause is said once, the namespaces listed; `-o json` keeps
    /// every finding.
    #[test]
    fn namespaces_stuck_on_one_cause_are_said_once() {
        let r = fixtures::dead_api_service_blocking_many_namespaces(43);
        assert_eq!(
            r.findings
                .iter()
                .filter(|f| f.code == crate::doctor::findings::Code::NamespaceDiscoveryFailure)
                .count(),
            43
        );
        let text = report(&r, false);
        let lines = text.lines().count();
        eprintln!("43 namespaces: {lines} lines");
        // The table lists each namespace once (44 lines); the rest is said once.
        assert!(lines <= 110, "{lines} lines:\n{text}");
        let available = "APIService v1alpha1.doctor-test.example.com status.conditions[Available]";
        assert_eq!(text.matches(available).count(), 2, "{text}");
        assert_eq!(
            text.matches("NamespaceDeletionDiscoveryFailure=True")
                .count(),
            1,
            "{text}"
        );
        for i in 0..43 {
            assert!(
                text.contains(&format!("team-{i:02}")),
                "team-{i:02}:\n{text}"
            );
        }
        insta::assert_snapshot!("many_namespaces", text);
        let fix = plan_of(&r);
        let planned = plan(&fix);
        assert!(planned.lines().count() <= 12, "{planned}");
        insta::assert_snapshot!("many_namespaces_plan", planned);
    }

    #[test]
    fn expired_session_report_and_plan() {
        let r = fixtures::expired_session();
        assert_eq!(r.serve_sessions.len(), 2);
        both("expired_session", &r);
        let fix = crate::doctor::fix::plan(
            &r,
            &crate::doctor::fix::FixOptions {
                finalize_namespaces: false,
                wait: std::time::Duration::from_secs(60),
            },
        );
        insta::assert_snapshot!("expired_session_plan", plan(&fix));
    }

    #[test]
    fn failing_webhook_report() {
        let r = fixtures::failing_webhook();
        both("failing_webhook", &r);
    }

    /// Regression: `--fix` planned removing a finalizer with an update
    /// that a failing webhook intercepts, which could only fail. The
    /// finding says to fix the webhook first, and the plan leaves it.
    #[test]
    fn a_finalizer_behind_a_failing_webhook_waits_for_the_webhook() {
        use crate::doctor::findings::Code;
        let r = fixtures::finalizer_behind_failing_webhook();
        let webhook_id =
            "WebhookBackendUnavailable:validatingwebhookconfiguration/guard#guard.example.com";
        let f = r
            .findings
            .iter()
            .find(|f| f.code == Code::FinalizerBlocking)
            .unwrap();
        let remedy = f.remedy.as_ref().unwrap();
        assert!(!remedy.automatic, "{remedy:?}");
        assert!(
            remedy
                .description
                .starts_with("first make webhook guard.example.com answer again"),
            "{remedy:?}"
        );
        assert_eq!(f.caused_by, vec![webhook_id]);
        let fix = plan_of(&r);
        assert!(
            !fix.actions
                .iter()
                .any(|a| matches!(a.action, Action::RemoveFinalizers { .. })),
            "{:?}",
            fix.actions
        );
        let reason = &fix
            .not_planned
            .iter()
            .find(|n| n.finding == f.id)
            .unwrap()
            .reason;
        assert!(
            reason.starts_with(
                "removing its finalizers is an update that a failing webhook rejects: fix the webhook first"
            ) && reason.contains(webhook_id),
            "{reason}"
        );
        // The webhook's finding blocks the namespace the table calls blocked.
        let hook = r.findings.iter().find(|f| f.id == webhook_id).unwrap();
        assert_eq!(hook.blocks, vec!["team-d"]);
        assert!(r.namespaces[0].blocked);
        insta::assert_snapshot!("finalizer_behind_webhook", report(&r, false));
        insta::assert_snapshot!("finalizer_behind_webhook_plan", plan(&fix));
    }

    fn plan_of(r: &Report) -> FixReport {
        crate::doctor::fix::plan(
            r,
            &crate::doctor::fix::FixOptions {
                finalize_namespaces: false,
                wait: std::time::Duration::from_secs(60),
            },
        )
    }

    /// Regression: seconds after `serve` was SIGKILLed, the namespace's fix
    /// said `kubectl delete apiservice …` "[planned by --fix]", the plan
    /// planned nothing and offered that delete "by hand" — of a live
    /// session's APIService. Both now wait for its Lease and say until when.
    #[test]
    fn a_killed_serve_is_waited_for_and_never_deleted_by_hand() {
        let r = fixtures::live_session_of_a_killed_serve();
        let text = report(&r, false);
        let fix = plan_of(&r);
        let planned = plan(&fix);
        insta::assert_snapshot!("killed_serve", text);
        insta::assert_snapshot!("killed_serve_plan", planned);
        for out in [&text, &planned] {
            assert!(!out.contains("kubectl delete apiservice"), "{out}");
            assert!(!out.contains("[planned by --fix]"), "{out}");
        }
        assert!(
            text.contains(
                "hint:     the Lease of serve session 51mt0qm3 is still valid but its APIService fails: that `kubectl \
                 cozy serve` may have died"
            ),
            "{text}"
        );
        assert!(
            text.contains("it expires at 2026-09-01T12:00:09Z (in 9s) unless renewed"),
            "{text}"
        );
        assert!(fix.actions.is_empty());
        let reasons: Vec<&str> = fix.not_planned.iter().map(|n| n.reason.as_str()).collect();
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(
            reasons[1].starts_with(
                "its cause is not fixed by the plan: APIService v1alpha1.apps.cozystack.io belongs to the live serve \
                 session 51mt0qm3, and its Lease expires at 2026-09-01T12:00:09Z (in 9s) unless renewed"
            ),
            "{reasons:?}"
        );
    }

    /// What a finding marks "[planned by --fix]" the plan plans, and what it
    /// does not mark, the plan lists as not planned: in every fixture.
    #[test]
    fn planned_by_fix_agrees_with_the_plan() {
        use crate::doctor::findings::Severity;
        for r in [
            fixtures::healthy(),
            fixtures::dead_api_service_blocking_namespaces(),
            fixtures::expired_session(),
            fixtures::failing_webhook(),
            fixtures::live_session_of_a_killed_serve(),
            fixtures::finalizer_behind_failing_webhook(),
            fixtures::dead_api_service_blocking_many_namespaces(43),
        ] {
            let fix = plan_of(&r);
            let planned = crate::doctor::fix::fixes_by_finding(&fix);
            for f in r.findings.iter().filter(|f| f.severity != Severity::Info) {
                let automatic = f.remedy.as_ref().is_some_and(|r| r.automatic);
                assert_eq!(
                    automatic,
                    planned.contains_key(&f.id),
                    "{}: remedy {:?}, plan {:#?}",
                    f.id,
                    f.remedy,
                    fix
                );
            }
        }
    }

    /// The table after a fix has a row per namespace that was Terminating;
    /// with none, or when the diagnosis after the fix failed, a sentence
    /// says so (never a bare header), and the failure's reason is given.
    #[test]
    fn the_after_table_is_never_a_bare_header() {
        use crate::doctor::findings::{AfterFix, Code, ObjectRef, Severity, Unchecked};
        let applied = |after: AfterFix| FixReport {
            mode: FixMode::Applied,
            actions: Vec::new(),
            not_planned: Vec::new(),
            results: Vec::new(),
            after: Some(after),
        };
        let header = "NAMESPACE   STATE   STILL BLOCKED BY";
        let none = results(&applied(AfterFix {
            namespaces: Vec::new(),
            findings: Vec::new(),
            unchecked: Vec::new(),
        }));
        assert!(!none.contains(header), "{none}");
        assert!(
            none.contains("No namespace was Terminating before the fix."),
            "{none}"
        );
        let failed = results(&applied(AfterFix {
            namespaces: Vec::new(),
            findings: Vec::new(),
            unchecked: vec![Unchecked {
                what: "the diagnosis after the fix".into(),
                reason: "reach the API server: connection refused".into(),
                status: None,
            }],
        }));
        assert!(!failed.contains(header), "{failed}");
        assert!(!failed.contains("was Terminating before"), "{failed}");
        assert!(!failed.contains("finds nothing wrong"), "{failed}");
        assert!(
            failed.contains(
                "The diagnosis after the fix failed (reach the API server: connection refused): what the fix \
                 changed is not known; run kubectl cozy doctor again."
            ),
            "{failed}"
        );
        // Still Terminating, held only by finalizers not stuck yet (notes):
        // no problem, but not "nothing wrong" either.
        let mut note = Finding::new(
            Code::FinalizerBlocking,
            Severity::Info,
            ObjectRef::cluster("v1", "Namespace", "namespaces", "team-e"),
            "w",
            "y",
        );
        note.blocks = vec!["team-e".into()];
        let held = results(&applied(AfterFix {
            namespaces: vec![crate::doctor::findings::NamespaceAfter {
                name: "team-e".into(),
                state: "terminating".into(),
                blocked_by: Vec::new(),
            }],
            findings: vec![note.clone()],
            unchecked: Vec::new(),
        }));
        assert!(!held.contains("finds nothing wrong"), "{held}");
        assert!(
            held.contains(
                "A fresh diagnosis finds no problem, but namespace(s) team-e are still Terminating: see the notes"
            ),
            "{held}"
        );
        // Such a note holds its namespace; it does not block it (BLOCKED no).
        let block = finding_block(1, &note);
        assert!(
            block.contains("   holds:    namespace(s) team-e") && !block.contains("blocks:"),
            "{block}"
        );
    }

    /// `-o name` prints what `kubectl get -o name` prints, once per object.
    #[test]
    fn names_read_like_kubectl_get_o_name() {
        let r = fixtures::dead_api_service_blocking_namespaces();
        assert_eq!(
            names(&r),
            "apiservice.apiregistration.k8s.io/v1alpha1.doctor-test.example.com\n\
             namespace/team-a\n\
             namespace/team-b\n\
             configmap/blocked\n"
        );
        let r = fixtures::expired_session();
        assert_eq!(
            names(&r),
            "lease.coordination.k8s.io/kubectl-cozy-3f2a\n\
             apiservice.apiregistration.k8s.io/v1alpha1.apps.cozystack.io\n"
        );
    }
}
