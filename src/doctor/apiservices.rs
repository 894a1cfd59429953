//! APIService checks: the `Available` condition, the backing Service and its
//! ready endpoints (ClusterIP only, as the aggregator checks them), the
//! `caBundle` certificates and their expiry, a live probe of
//! `/apis/<group>/<version>` through kube-apiserver, and the `kubectl cozy
//! serve` session that registered the APIService, if any (its label; the
//! session itself is judged in [`super::sessions`]).
//!
//! Collection talks to the cluster; [`findings`] turns what was collected into
//! findings without any I/O, so the rules are unit-tested.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::jiff::Timestamp;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, ListParams};

use super::findings::{
    ApiServiceReport, CaBundleCheck, CertificateInfo, Code, Condition, Finding, ObjectRef, Remedy,
    ServiceCheck, SessionCheck, SessionState, Severity, Unchecked,
};
use super::render::condition_text;
use super::requester::Requester;
use super::sessions::{self, Labelled, Session};
use crate::register::session::{self as contract, SESSION_LABEL};

/// Everything read about APIServices.
#[derive(Debug, Default)]
pub struct Collected {
    /// One report per APIService, sorted by name.
    pub reports: Vec<ApiServiceReport>,
    /// The APIServices carrying a serve session's label.
    pub labelled: Vec<Labelled>,
    /// What could not be read.
    pub unchecked: Vec<Unchecked>,
}

/// Lists every APIService and checks each one (in parallel, under the
/// requester's limits).
pub async fn collect(req: &Requester, probe_timeout: Duration, now: Timestamp) -> Collected {
    let mut collected = Collected::default();
    let api: Api<APIService> = Api::all(req.client().clone());
    let list = match req.call(api.list(&ListParams::default())).await {
        Ok(list) => list.items,
        Err(err) => {
            collected
                .unchecked
                .push(err.unchecked("list apiservices.apiregistration.k8s.io"));
            return collected;
        }
    };
    let checks = join_all(
        list.into_iter()
            .map(|svc| check_one(req, svc, probe_timeout, now)),
    )
    .await;
    for (report, labelled, unchecked) in checks {
        collected.labelled.extend(labelled);
        collected.unchecked.extend(unchecked);
        collected.reports.push(report);
    }
    collected.reports.sort_by(|a, b| a.name.cmp(&b.name));
    collected
}

/// Records on each APIService the session that registered it; one whose
/// session is gone is not healthy.
pub fn attach_sessions(reports: &mut [ApiServiceReport], sessions: &[Session]) {
    for session in sessions {
        for report in reports
            .iter_mut()
            .filter(|r| session.api_services.contains(&r.name))
        {
            report.session = Some(session.check.clone());
            if session.is_reapable() {
                report.healthy = false;
            }
        }
    }
}

/// Checks one APIService. Returns its report, its session label (with the
/// Service, when that carries the same label) and what could not be read.
async fn check_one(
    req: &Requester,
    svc: APIService,
    probe_timeout: Duration,
    now: Timestamp,
) -> (ApiServiceReport, Option<Labelled>, Vec<Unchecked>) {
    let name = svc.metadata.name.clone().unwrap_or_default();
    let spec = svc.spec.clone().unwrap_or_default();
    let group = spec.group.clone().unwrap_or_default();
    let version = spec.version.clone().unwrap_or_default();
    let available = svc
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Available"))
        .map(|c| Condition {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
            last_transition_time: c.last_transition_time.as_ref().map(|t| t.0.to_string()),
        });
    let session = contract::session_of(
        svc.metadata.labels.as_ref(),
        svc.metadata.annotations.as_ref(),
        None,
    );
    let session_id = session.as_ref().map(|(id, _)| id.clone());

    let mut unchecked = Vec::new();
    let service_future = async {
        match &spec.service {
            Some(reference) => {
                let namespace = reference.namespace.clone().unwrap_or_default();
                let service_name = reference.name.clone().unwrap_or_default();
                let port = reference.port.unwrap_or(443);
                Some(check_service(req, &namespace, &service_name, port).await)
            }
            None => None,
        }
    };
    let (service, probe) = tokio::join!(service_future, req.probe(&group, &version, probe_timeout));
    let mut session_service = None;
    let service = service.map(|(check, labels, more)| {
        unchecked.extend(more);
        if let (Some(id), Some(labels)) = (&session_id, labels)
            && labels.get(SESSION_LABEL) == Some(id)
        {
            session_service = Some(ObjectRef {
                api_version: "v1".into(),
                kind: "Service".into(),
                resource: "services".into(),
                namespace: Some(check.namespace.clone()),
                name: check.name.clone(),
            });
        }
        check
    });
    let ca_bundle = spec
        .ca_bundle
        .as_ref()
        .filter(|b| !b.0.is_empty())
        .map(|b| parse_ca_bundle(&b.0, now));

    let mut report = ApiServiceReport {
        name,
        uid: svc.metadata.uid.clone(),
        group,
        version,
        local: spec.service.is_none(),
        available,
        service,
        insecure_skip_tls_verify: spec.insecure_skip_tls_verify.unwrap_or(false),
        ca_bundle,
        probe: Some(probe),
        session: None,
        healthy: false,
    };
    report.healthy = is_healthy(&report);
    let labelled = session.map(|(id, namespace)| Labelled {
        api_service: report.name.clone(),
        id,
        namespace,
        service: session_service,
        original_digest: svc
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(contract::ORIGINAL_DIGEST_ANNOTATION))
            .cloned(),
    });
    (report, labelled, unchecked)
}

/// The certificate error in an APIService's Available condition, when the
/// aggregator reached its server but would not trust it (an unknown CA, an
/// expired or mismatched certificate).
fn tls_failure(r: &ApiServiceReport) -> Option<&str> {
    let message = r.available.as_ref()?.message.as_deref()?;
    ["x509: ", "tls: "]
        .iter()
        .filter_map(|marker| message.find(marker))
        .min()
        .map(|at| &message[at..])
}

fn is_healthy(r: &ApiServiceReport) -> bool {
    let available = r.available.as_ref().is_some_and(|c| c.status == "True");
    let probe_ok = r.probe.as_ref().is_none_or(|p| p.ok);
    let ca_ok = r
        .ca_bundle
        .as_ref()
        .is_none_or(|ca| ca.error.is_none() && ca.certificates.iter().all(|c| c.days_left >= 0));
    available && probe_ok && ca_ok
}

/// Reads a Service and, for ClusterIP Services, counts the ready endpoints that
/// serve `port` (matched by port name through the Service, as the aggregator
/// and kube-proxy match them). Returns the check, the Service's labels, and
/// what could not be read.
pub async fn check_service(
    req: &Requester,
    namespace: &str,
    name: &str,
    port: i32,
) -> (
    ServiceCheck,
    Option<BTreeMap<String, String>>,
    Vec<Unchecked>,
) {
    let mut check = ServiceCheck {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        port,
        ..ServiceCheck::default()
    };
    let api: Api<Service> = Api::namespaced(req.client().clone(), namespace);
    let service = match req.call(api.get_opt(name)).await {
        Ok(Some(service)) => service,
        Ok(None) => {
            check.exists = Some(false);
            return (check, None, Vec::new());
        }
        Err(err) => {
            check.error = Some(err.to_string());
            let what = format!("get service {namespace}/{name}");
            return (check, None, vec![err.unchecked(what)]);
        }
    };
    check.exists = Some(true);
    let spec = service.spec.clone().unwrap_or_default();
    let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
    check.external_name = spec.external_name.clone();
    check.type_ = Some(type_.clone());
    let labels = service.metadata.labels.clone();
    if type_ != "ClusterIP" {
        // The aggregator checks endpoints of ClusterIP Services only.
        return (check, labels, Vec::new());
    }
    let Some(port_name) = spec
        .ports
        .as_ref()
        .and_then(|ps| ps.iter().find(|p| p.port == port))
        .map(|p| p.name.clone().unwrap_or_default())
    else {
        check.ready_endpoints = Some(0);
        check.error = Some(format!("the Service has no port {port}"));
        return (check, labels, Vec::new());
    };
    let slices: Api<EndpointSlice> = Api::namespaced(req.client().clone(), namespace);
    let selector = format!("kubernetes.io/service-name={name}");
    match req
        .call(slices.list(&ListParams::default().labels(&selector)))
        .await
    {
        Ok(list) => {
            check.ready_endpoints = Some(ready_endpoints(&list.items, &port_name));
            (check, labels, Vec::new())
        }
        Err(err) => {
            check.error = Some(format!("endpoints not readable: {err}"));
            let what = format!("list endpointslices for service {namespace}/{name}");
            (check, labels, vec![err.unchecked(what)])
        }
    }
}

/// Ready endpoints across slices that carry a port named `port_name`. An
/// endpoint with no `ready` condition counts as ready (the API's rule).
pub fn ready_endpoints(slices: &[EndpointSlice], port_name: &str) -> usize {
    slices
        .iter()
        .filter(|s| {
            s.ports.as_ref().is_some_and(|ports| {
                ports
                    .iter()
                    .any(|p| p.name.as_deref().unwrap_or("") == port_name)
            })
        })
        .flat_map(|s| s.endpoints.iter().flatten())
        .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
        .map(|e| e.addresses.len().max(1))
        .sum()
}

/// Parses a PEM bundle and reports each certificate's subject and expiry.
pub fn parse_ca_bundle(bytes: &[u8], now: Timestamp) -> CaBundleCheck {
    use x509_parser::pem::Pem;
    let mut check = CaBundleCheck::default();
    for (index, pem) in Pem::iter_from_buffer(bytes).enumerate() {
        let pem = match pem {
            Ok(pem) => pem,
            Err(err) => {
                check.error = Some(format!("PEM block {}: {err}", index + 1));
                break;
            }
        };
        if pem.label != "CERTIFICATE" {
            continue;
        }
        match pem.parse_x509() {
            Ok(cert) => {
                let not_after = cert.validity().not_after.timestamp();
                let not_after_text = Timestamp::from_second(not_after)
                    .map(|t| t.to_string())
                    .unwrap_or_else(|_| not_after.to_string());
                check.certificates.push(CertificateInfo {
                    subject: cert.subject().to_string(),
                    not_after: not_after_text,
                    days_left: (not_after - now.as_second()).div_euclid(86_400),
                });
            }
            Err(err) => {
                check.error = Some(format!("certificate {}: {err}", index + 1));
                break;
            }
        }
    }
    if check.certificates.is_empty() && check.error.is_none() {
        check.error = Some("no PEM certificate in the bundle".into());
    }
    check
}

/// `APIServiceUnresponsive` for each aggregated APIService that looked
/// healthy but whose group's lists timed out or answered 503 while doctor
/// listed namespace content (`unresponsive`: group → the first answer): the
/// namespace controller lists and deletes every namespaced type, so it
/// cannot finish any namespace either.
pub fn unresponsive_findings(
    reports: &[ApiServiceReport],
    unresponsive: &BTreeMap<String, String>,
) -> Vec<Finding> {
    reports
        .iter()
        .filter(|r| !r.local && r.healthy)
        .filter_map(|r| Some((r, unresponsive.get(&r.group)?)))
        .map(|(r, answer)| {
            let mut f = Finding::new(
                Code::ApiServiceUnresponsive,
                Severity::Error,
                ObjectRef::api_service(&r.name),
                format!(
                    "APIService {} answers discovery, but lists of {}/{} resources do not answer",
                    r.name, r.group, r.version
                ),
                "the namespace controller lists and deletes every namespaced type in a Terminating namespace; while a \
                 group's lists time out it cannot finish deleting ANY namespace (NamespaceDeletionContentFailure), \
                 and kubectl gets the same timeouts",
            )
            .evidence(
                format!("list of {}/{} resources through kube-apiserver", r.group, r.version),
                answer.clone(),
            );
            if let Some(c) = &r.available {
                f = f.evidence(
                    format!("APIService {} status.conditions[Available]", r.name),
                    c.status.clone(),
                );
            }
            f.remedy = Some(Remedy {
                description: "fix the server behind it (its lists hang while its discovery answers); if its API is no \
                              longer needed, delete the APIService and namespace deletions go on"
                    .into(),
                command: format!("kubectl delete apiservice {}", r.name),
                automatic: false,
            });
            f
        })
        .collect()
}

/// Findings about APIServices and serve sessions. `ca_warn_days` is the
/// warning window for expiring CA certificates.
pub fn findings(
    reports: &[ApiServiceReport],
    sessions: &[Session],
    ca_warn_days: i64,
    now: Timestamp,
) -> Vec<Finding> {
    let mut out = Vec::new();
    // APIService name -> the reapable session that left it.
    let reaped: BTreeMap<&str, &Session> = sessions
        .iter()
        .filter(|s| s.is_reapable())
        .flat_map(|s| s.api_services.iter().map(move |n| (n.as_str(), s)))
        .collect();
    out.extend(
        sessions
            .iter()
            .filter(|s| s.is_reapable())
            .map(sessions::session_finding),
    );

    for r in reports {
        let subject = ObjectRef::api_service(&r.name);
        let available = r.available.as_ref().map(|c| c.status.as_str());
        if let Some(status) = available
            && status != "True"
        {
            let mut f = Finding::new(
                Code::ApiServiceUnavailable,
                Severity::Error,
                subject.clone(),
                format!(
                    "APIService {} is not available: {}/{} cannot be served",
                    r.name, r.group, r.version
                ),
                if r.local {
                    "kube-apiserver serves this group itself and reports it unavailable; clients cannot use it and discovery of it fails".to_owned()
                } else {
                    "while an aggregated APIService is unavailable, discovery of its group fails for every client: kubectl warns \
                     `unable to retrieve the complete list of server APIs`, the garbage collector cannot sync it, and the namespace \
                     controller cannot finish deleting ANY namespace (NamespaceDeletionDiscoveryFailure)"
                        .to_owned()
                },
            );
            add_api_service_evidence(&mut f, r, now);
            f.remedy = Some(if r.local {
                Remedy {
                    description: "a local APIService is managed by kube-apiserver (built-in group or CRD); check the CRD and kube-apiserver's log".into(),
                    command: format!("kubectl get apiservice {} -o yaml", r.name),
                    automatic: false,
                }
            } else if let Some(session) = reaped.get(r.name.as_str()) {
                left_by_expired_session(session, "")
            } else if let Some(check) = live_session(r) {
                let agent = has_agent(sessions, check);
                f.hint = Some(sessions::live_session_hint(check, agent, now));
                sessions::live_session_remedy(check, agent, now)
            } else if let Some(tls) = tls_failure(r) {
                // Its server answers; the aggregator does not trust it:
                // deleting the APIService would drop a working API.
                Remedy {
                    description: format!(
                        "the aggregator does not trust the server's certificate ({tls}): put the CA that signed it in \
                         spec.caBundle (or fix the serving certificate)"
                    ),
                    command: format!(
                        "kubectl patch apiservice {} --type=merge -p '{{\"spec\":{{\"caBundle\":\"<base64 of the CA PEM>\"}}}}'",
                        r.name
                    ),
                    automatic: false,
                }
            } else {
                Remedy {
                    description: "restore the backend Service, or — if this API is no longer needed — delete the APIService; \
                                  clients lose the API until it is registered again"
                        .into(),
                    command: format!("kubectl delete apiservice {}", r.name),
                    automatic: true,
                }
            });
            out.push(f);
        } else if let Some(probe) = r.probe.as_ref().filter(|p| !p.ok)
            && available == Some("True")
        {
            let timed_out = probe.status.is_none();
            let mut f = Finding::new(
                Code::ApiServiceProbeFailed,
                // A 2xx that is no discovery document fails discovery too.
                if timed_out
                    || probe
                        .status
                        .is_some_and(|s| s >= 500 || (200..300).contains(&s))
                {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                subject.clone(),
                format!(
                    "APIService {} reports Available but GET {} failed",
                    r.name, probe.path
                ),
                "the aggregator's last check passed, but requests fail now; discovery will fail the same way and the \
                 APIService will turn unavailable at the next check",
            );
            add_api_service_evidence(&mut f, r, now);
            f.remedy = Some(if let Some(session) = reaped.get(r.name.as_str()) {
                left_by_expired_session(session, ", whose server is gone")
            } else if let Some(check) = live_session(r) {
                let agent = has_agent(sessions, check);
                f.hint = Some(sessions::live_session_hint(check, agent, now));
                sessions::live_session_remedy(check, agent, now)
            } else {
                Remedy {
                    description: "check the extension server behind the Service; retry the probe"
                        .into(),
                    command: format!("kubectl get --raw {}", probe.path),
                    automatic: false,
                }
            });
            out.push(f);
        }

        if let Some(ca) = &r.ca_bundle {
            let rotate = Remedy {
                description: "issue a new serving certificate for the extension server and put its CA in spec.caBundle".into(),
                command: format!(
                    "kubectl patch apiservice {} --type=merge -p '{{\"spec\":{{\"caBundle\":\"<base64 of the new CA PEM>\"}}}}'",
                    r.name
                ),
                automatic: false,
            };
            if let Some(error) = &ca.error {
                out.push(
                    Finding::new(
                        Code::ApiServiceCaBundleInvalid,
                        Severity::Error,
                        subject.clone(),
                        format!("the caBundle of APIService {} does not parse", r.name),
                        "kube-apiserver cannot verify the extension server with it, so the APIService cannot become available",
                    )
                    .evidence(format!("APIService {} spec.caBundle", r.name), error.clone())
                    .remedy(rotate.clone()),
                );
            }
            for cert in &ca.certificates {
                let (code, severity, what) = if cert.days_left < 0 {
                    (
                        Code::ApiServiceCaBundleExpired,
                        Severity::Error,
                        format!(
                            "a CA certificate in APIService {} expired {} days ago",
                            r.name, -cert.days_left
                        ),
                    )
                } else if cert.days_left < ca_warn_days {
                    (
                        Code::ApiServiceCaBundleExpiring,
                        Severity::Warning,
                        format!(
                            "a CA certificate in APIService {} expires in {} days",
                            r.name, cert.days_left
                        ),
                    )
                } else {
                    continue;
                };
                let mut f = Finding::new(
                    code,
                    severity,
                    subject.clone(),
                    what,
                    "once the CA expires kube-apiserver no longer trusts the extension server: the APIService turns \
                     unavailable and namespace deletion stalls cluster-wide",
                )
                .evidence(
                    format!("APIService {} spec.caBundle", r.name),
                    format!("subject {}, notAfter {}", cert.subject, cert.not_after),
                )
                .remedy(rotate.clone());
                // Two certificates may share a subject: keep ids unique.
                if out.iter().any(|o: &Finding| o.id == f.id) {
                    f.id = format!("{}#{}", f.id, cert.not_after);
                }
                out.push(f);
            }
        }
    }
    out
}

/// The session that registered `r`, when its Lease is still valid.
fn live_session(r: &ApiServiceReport) -> Option<&SessionCheck> {
    r.session
        .as_ref()
        .filter(|s| s.state == SessionState::Alive)
}

/// Whether the session `check` describes has a tunnel agent to reap it.
fn has_agent(sessions: &[Session], check: &SessionCheck) -> bool {
    sessions
        .iter()
        .find(|s| s.check.id == check.id)
        .is_some_and(Session::has_agent)
}

fn add_api_service_evidence(f: &mut Finding, r: &ApiServiceReport, now: Timestamp) {
    let source = format!("APIService {} status.conditions[Available]", r.name);
    match &r.available {
        Some(c) => f.evidence.push(super::findings::Evidence {
            source,
            observed: condition_text(c, now),
        }),
        None => f.evidence.push(super::findings::Evidence {
            source,
            observed: "not set".into(),
        }),
    }
    if let Some(s) = &r.service {
        let source = format!("Service {}/{}", s.namespace, s.name);
        let observed = match (s.exists, &s.type_) {
            (Some(false), _) => "not found".to_owned(),
            (None, _) => format!("could not be read: {}", s.error.clone().unwrap_or_default()),
            (Some(true), Some(t)) if t == "ExternalName" => format!(
                "ExternalName {} (kube-apiserver dials {}:{})",
                s.external_name.clone().unwrap_or_default(),
                s.external_name.clone().unwrap_or_default(),
                s.port
            ),
            (Some(true), t) => match (s.ready_endpoints, &s.error) {
                (_, Some(e)) => format!("{}: {e}", t.clone().unwrap_or_default()),
                (Some(n), None) => format!(
                    "{}, {n} ready endpoint(s) for port {}",
                    t.clone().unwrap_or_default(),
                    s.port
                ),
                (None, None) => t.clone().unwrap_or_default(),
            },
        };
        f.evidence
            .push(super::findings::Evidence { source, observed });
    }
    if let Some(p) = &r.probe {
        let observed = match (p.status, &p.error) {
            (Some(code), Some(e)) => format!("HTTP {code} in {}ms: {e}", p.latency_ms),
            (Some(code), None) => format!("HTTP {code} in {}ms", p.latency_ms),
            (None, Some(e)) => format!("{e} (after {}ms)", p.latency_ms),
            (None, None) => format!("no answer after {}ms", p.latency_ms),
        };
        f.evidence.push(super::findings::Evidence {
            source: format!("GET {} through kube-apiserver", p.path),
            observed,
        });
    }
    if let Some(s) = &r.session {
        f.evidence.push(super::findings::Evidence {
            source: format!("label {SESSION_LABEL}"),
            observed: format!(
                "serve session {}: Lease {} {}",
                s.id,
                s.lease,
                sessions::state_text(s)
            ),
        });
    }
}

/// The remedy for an APIService an expired serve session left behind
/// (`why` adds to "left behind by the expired serve session ID"): reaping
/// the session.
fn left_by_expired_session(session: &Session, why: &str) -> Remedy {
    let reap = sessions::reap_remedy(session);
    Remedy {
        description: format!(
            "left behind by the expired serve session {}{why}; reaping the session {}",
            session.check.id,
            if session.saved_api_services().is_some() {
                "restores what it took over or removes it"
            } else {
                "removes it"
            }
        ),
        command: reap.command,
        automatic: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::findings::Probe;

    fn now() -> Timestamp {
        "2026-09-01T12:00:00Z".parse().unwrap()
    }

    fn report(name: &str, status: &str, local: bool) -> ApiServiceReport {
        let (version, group) = name.split_once('.').unwrap();
        ApiServiceReport {
            name: name.into(),
            uid: Some("u1".into()),
            group: group.into(),
            version: version.into(),
            local,
            available: Some(Condition {
                type_: "Available".into(),
                status: status.into(),
                reason: Some(if status == "True" { "Passed" } else { "FailedDiscoveryCheck" }.into()),
                message: Some("failing or missing response from https://localhost:1/apis/x/v1: connection refused".into()),
                last_transition_time: Some("2026-09-01T11:55:00Z".into()),
            }),
            service: (!local).then(|| ServiceCheck {
                namespace: "default".into(),
                name: "ext".into(),
                port: 1,
                exists: Some(true),
                type_: Some("ExternalName".into()),
                external_name: Some("localhost".into()),
                ..ServiceCheck::default()
            }),
            insecure_skip_tls_verify: true,
            ca_bundle: None,
            probe: Some(Probe {
                path: format!("/apis/{group}/{version}"),
                status: Some(if status == "True" { 200 } else { 503 }),
                latency_ms: 3,
                ok: status == "True",
                error: (status != "True").then(|| "service unavailable".into()),
            }),
            session: None,
            healthy: status == "True",
        }
    }

    #[test]
    fn unavailable_aggregated_apiservice_is_an_error_with_evidence_and_a_delete_fix() {
        let found = findings(
            &[report("v1alpha1.x.example.com", "False", false)],
            &[],
            30,
            now(),
        );
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.code, Code::ApiServiceUnavailable);
        assert_eq!(f.severity, Severity::Error);
        let evidence: Vec<&str> = f.evidence.iter().map(|e| e.observed.as_str()).collect();
        assert!(
            evidence[0].starts_with("False FailedDiscoveryCheck: failing or missing"),
            "{evidence:?}"
        );
        assert!(evidence[0].contains("5m ago"), "{evidence:?}");
        assert!(
            evidence[1].contains("ExternalName localhost"),
            "{evidence:?}"
        );
        assert!(
            evidence[2].starts_with("HTTP 503 in 3ms: service unavailable"),
            "{evidence:?}"
        );
        let remedy = f.remedy.as_ref().unwrap();
        assert_eq!(
            remedy.command,
            "kubectl delete apiservice v1alpha1.x.example.com"
        );
        assert!(remedy.automatic);
    }

    /// The aggregator reaches the server but does not trust its
    /// certificate: the fix is the caBundle, never deleting a working API.
    #[test]
    fn a_certificate_failure_is_fixed_by_the_ca_bundle_not_by_a_delete() {
        let mut r = report("v1.wrongca.example.com", "False", false);
        if let Some(c) = r.available.as_mut() {
            c.message = Some(
                "failing or missing response from https://127.0.0.1:9443/apis/wrongca.example.com/v1: Get \
                 \"https://127.0.0.1:9443/apis/wrongca.example.com/v1\": tls: failed to verify certificate: x509: \
                 certificate signed by unknown authority"
                    .into(),
            );
        }
        let found = findings(&[r], &[], 30, now());
        let remedy = found[0].remedy.as_ref().unwrap();
        assert!(!remedy.automatic);
        assert!(remedy.command.contains("caBundle"), "{}", remedy.command);
        assert!(
            remedy.description.contains(
                "(tls: failed to verify certificate: x509: certificate signed by unknown authority)"
            ),
            "{}",
            remedy.description
        );
    }

    #[test]
    fn healthy_and_local_apiservices_raise_nothing() {
        let found = findings(
            &[
                report("v1.apps", "True", true),
                report("v1.y.example.com", "True", false),
            ],
            &[],
            30,
            now(),
        );
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn available_but_failing_probe_is_reported() {
        let mut r = report("v1.y.example.com", "True", false);
        r.probe = Some(Probe {
            path: "/apis/y.example.com/v1".into(),
            status: None,
            latency_ms: 2000,
            ok: false,
            error: Some("no answer within 2s".into()),
        });
        let found = findings(&[r], &[], 30, now());
        assert_eq!(found[0].code, Code::ApiServiceProbeFailed);
        assert_eq!(found[0].severity, Severity::Error);
    }

    #[test]
    fn expired_session_is_reaped_instead_of_deleting_its_apiservice() {
        let mut r = report("v1alpha1.apps.cozystack.io", "False", false);
        let check = sessions::judge_lease("abc", contract::DEFAULT_NAMESPACE, None, now());
        let session = Session {
            check,
            record: Default::default(),
            api_services: vec![r.name.clone()],
            objects: vec![],
            lease_exists: false,
            tampered: Vec::new(),
        };
        attach_sessions(std::slice::from_mut(&mut r), std::slice::from_ref(&session));
        assert_eq!(r.session.as_ref().unwrap().state, SessionState::Missing);
        assert!(!r.healthy);
        let found = findings(&[r], &[session], 30, now());
        assert_eq!(found[0].code, Code::ServeSessionExpired);
        assert_eq!(
            found[0].subject,
            sessions::lease_ref("kubectl-cozy-system", "abc")
        );
        assert!(
            found[0]
                .remedy
                .as_ref()
                .unwrap()
                .command
                .contains("-l kubectl-cozy.io/session=abc")
        );
        assert_eq!(found[1].code, Code::ApiServiceUnavailable);
        let remedy = found[1].remedy.as_ref().unwrap();
        assert!(
            remedy.description.contains("expired serve session abc"),
            "{remedy:?}"
        );
        assert!(remedy.automatic);
        // Its evidence names the session and its Lease.
        let last = found[1].evidence.last().unwrap();
        assert_eq!(last.source, "label kubectl-cozy.io/session");
        assert_eq!(
            last.observed,
            "serve session abc: Lease kubectl-cozy-system/kubectl-cozy-abc not found"
        );
    }

    fn live(id: &str, namespace: &str) -> SessionCheck {
        let lease: k8s_openapi::api::coordination::v1::Lease =
            serde_json::from_value(serde_json::json!({
                "spec": {"holderIdentity": "alice@laptop, pid 4242", "leaseDurationSeconds": 15,
                         "renewTime": "2026-09-01T11:59:51.250000Z"}
            }))
            .unwrap();
        sessions::judge_lease(id, namespace, Some(&lease), now())
    }

    #[test]
    fn a_live_session_is_pointed_at_not_deleted() {
        let mut r = report("v1alpha1.apps.cozystack.io", "False", false);
        let check = live("abc", "team-sessions");
        assert_eq!(check.state, SessionState::Alive);
        assert_eq!(check.expires_in_seconds, Some(6));
        r.session = Some(check);
        let found = findings(&[r], &[], 30, now());
        let remedy = found[0].remedy.as_ref().unwrap();
        assert!(!remedy.automatic);
        assert_eq!(
            remedy.command,
            "kubectl get lease -n team-sessions kubectl-cozy-abc"
        );
        assert_eq!(
            remedy.description,
            "registered by the serve session abc (alice@laptop, pid 4242), and its Lease expires at \
             2026-09-01T12:00:06Z (in 6s) unless renewed: do not delete its APIService by hand. Stop that `kubectl cozy \
             serve` (it deregisters on exit), or wait until the Lease expires: `kubectl cozy doctor --fix` then reaps \
             the session"
        );
        assert_eq!(
            found[0].evidence.last().unwrap().observed,
            "serve session abc: Lease team-sessions/kubectl-cozy-abc alive (renewed 2026-09-01T11:59:51.25Z, duration \
             15s, expires in 6s)"
        );
    }

    /// Regression: right after `serve` was killed its Lease is still valid
    /// and the aggregator may still say Available, but the probe fails. The
    /// finding says the serve may have died and when it will be reaped.
    #[test]
    fn a_failing_apiservice_of_a_live_session_hints_that_serve_may_have_died() {
        let mut r = report("v1alpha1.apps.cozystack.io", "True", false);
        r.probe = Some(Probe {
            path: "/apis/apps.cozystack.io/v1alpha1".into(),
            status: None,
            latency_ms: 4,
            ok: false,
            error: Some("connection reset by peer".into()),
        });
        r.healthy = false;
        let check = live("abc", contract::DEFAULT_NAMESPACE);
        r.session = Some(check.clone());
        let session = Session {
            check,
            record: crate::register::session::SessionRecord {
                route: Some("service kubectl-cozy-system/kubectl-cozy-abc:443 → tunnel".into()),
                ..Default::default()
            },
            api_services: vec![r.name.clone()],
            objects: vec![],
            lease_exists: true,
            tampered: Vec::new(),
        };
        let found = findings(&[r], &[session], 30, now());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, Code::ApiServiceProbeFailed);
        assert_eq!(
            found[0].hint.as_deref(),
            Some(
                "the Lease of serve session abc is still valid but its APIService fails: that `kubectl cozy serve` may \
                 have died (killed, crashed, or cut off from the cluster). If so, nothing renews the Lease: it expires \
                 at 2026-09-01T12:00:06Z (in 6s) unless renewed, and its tunnel agent then reaps the session within \
                 seconds (or `kubectl cozy doctor --fix` does)"
            )
        );
        let remedy = found[0].remedy.as_ref().unwrap();
        assert!(!remedy.automatic);
        assert!(
            remedy
                .description
                .contains("do not delete its APIService by hand"),
            "{remedy:?}"
        );
    }

    /// An expired session's APIService the aggregator still calls Available
    /// (it re-checks every 30s) is reaped with its session, as --fix plans.
    #[test]
    fn a_failing_probe_of_an_expired_sessions_apiservice_is_fixed_by_the_reap() {
        let mut r = report("v1alpha1.apps.cozystack.io", "True", false);
        r.probe.as_mut().unwrap().ok = false;
        r.probe.as_mut().unwrap().status = Some(503);
        let check = sessions::judge_lease("abc", contract::DEFAULT_NAMESPACE, None, now());
        let session = Session {
            check,
            record: Default::default(),
            api_services: vec![r.name.clone()],
            objects: vec![],
            lease_exists: false,
            tampered: Vec::new(),
        };
        attach_sessions(std::slice::from_mut(&mut r), std::slice::from_ref(&session));
        let found = findings(&[r], &[session], 30, now());
        assert_eq!(found[1].code, Code::ApiServiceProbeFailed);
        let remedy = found[1].remedy.as_ref().unwrap();
        assert!(remedy.automatic);
        assert!(remedy.command.contains("-l kubectl-cozy.io/session=abc"));
    }

    #[test]
    fn ca_bundles_parse_and_expiry_is_judged() {
        let ca = crate::pki::Ca::new("doctor-test-ca").unwrap();
        let check = parse_ca_bundle(ca.cert_pem().as_bytes(), now());
        assert!(check.error.is_none(), "{check:?}");
        assert_eq!(check.certificates.len(), 1);
        assert!(check.certificates[0].subject.contains("doctor-test-ca"));
        assert!(check.certificates[0].days_left > 30);

        let bad = parse_ca_bundle(b"not a certificate", now());
        assert!(bad.error.is_some());

        let mut r = report("v1.z.example.com", "True", false);
        r.ca_bundle = Some(CaBundleCheck {
            certificates: vec![CertificateInfo {
                subject: "CN=old".into(),
                not_after: "2026-09-11T00:00:00Z".into(),
                days_left: 9,
            }],
            error: None,
        });
        let found = findings(&[r], &[], 30, now());
        assert_eq!(found[0].code, Code::ApiServiceCaBundleExpiring);
        assert_eq!(found[0].severity, Severity::Warning);
    }

    #[test]
    fn ready_endpoints_count_only_the_named_port() {
        let slice: EndpointSlice = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "s"},
            "addressType": "IPv4",
            "ports": [{"name": "https", "port": 8443}],
            "endpoints": [
                {"addresses": ["10.0.0.5"], "conditions": {"ready": true}},
                {"addresses": ["10.0.0.6"], "conditions": {"ready": false}},
                {"addresses": ["10.0.0.7"]}
            ]
        }))
        .unwrap();
        assert_eq!(ready_endpoints(std::slice::from_ref(&slice), "https"), 2);
        assert_eq!(ready_endpoints(&[slice], "metrics"), 0);
    }
}
