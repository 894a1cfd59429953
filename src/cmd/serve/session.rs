//! A registered session, start to end: certificates, the server, the
//! session's objects, the Lease renewer, the route (tunnel or external
//! name), the wait for Available (the condition *and* a probe that reached
//! this very server; until the tunnel first connects, the agent pod's state
//! from [`crate::register::agent_state`]), then serving until a signal, a
//! lost Lease or a dropped tunnel (meanwhile [`super::ownership`] says who
//! holds its APIServices), and the teardown ([`super::stop`]).

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::args::{RouteArg, ServeArgs};
use super::cluster_server::{Listening, start_cluster_server};
use super::console::Log;
use super::plan::{external_host, plan, served};
use super::signals::Signals;
use super::stop::{end, end_unregistered};
use super::{agent_wait, guard, kinds_follow, ownership};
use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::{Following, Registry};
use crate::register::apiservice;
use crate::register::lease::{self, RenewState, Renewer};
use crate::register::plan::{Plan, Route};
use crate::register::registration::{self, Registering, Registrar};
use crate::register::{agent, certs, discovered, session};
use crate::tunnel::{
    ClientConfig, PortForwardTransport, TcpUpstream, TunnelClient, TunnelState, TunnelStatus,
};

/// Limit of each registration request.
const REQUEST_LIMIT: Duration = Duration::from_secs(10);

/// How long the aggregator may fail to connect through an ExternalName
/// before the start gives up (kube-apiserver retries a failed discovery
/// check within about a second; a host that resolves late gets a few).
const UNREACHABLE_AFTER: Duration = Duration::from_secs(8);

/// A cluster-mode session: register, serve, tear down.
pub(super) async fn serve_session(
    args: &ServeArgs,
    registry: Registry,
    following: Following,
    route: RouteArg,
    ctx: &Ctx,
) -> Result<ExitStatus, CliError> {
    let mut signals = Signals::new()?;
    let started = Instant::now();
    let served = served(&registry);
    if served.is_empty() {
        return Err(CliError::Usage("no kinds to serve".into()));
    }
    let host = match route {
        RouteArg::ExternalName => Some(external_host(args, ctx)?),
        _ => None,
    };
    let client = ctx.client().await?;
    let server_url = ctx.server_url().unwrap_or_default();
    // Nothing is created before the registration: a signal until then
    // (a request that hangs, a cluster that does not answer) just ends.
    let version = tokio::select! {
        version = client.apiserver_version() => version,
        () = signals.next() => return interrupted_before_anything(),
    };
    version.map_err(|source| {
        CliError::first_request_failed(server_url.clone(), "GET /version", source)
    })?;
    let log = Log::new(args.quiet, ctx.global().verbosity > 0);
    log.install_access_log();

    // Certificates (the Service name needs the session id: plan first).
    let mut plan = plan(args, route, served, host, 0, String::new());
    let state_dir = super::state_dir(args)?;
    let groups: Vec<String> = plan.served.iter().map(|gv| gv.group.clone()).collect();
    let dir = certs::dir_for(&state_dir, &server_url, &groups);
    let serving = certs::load_or_create(&dir, &session::object_name(&plan.id), &plan.namespace)
        .map_err(|e| CliError::other("prepare the serving certificate", e))?;
    plan.ca_pem = serving.ca_pem.clone();
    let t_certs = started.elapsed();

    let listen = args.listen.unwrap_or_else(|| match route {
        RouteArg::ExternalName => SocketAddr::from(([0, 0, 0, 0], 0)),
        _ => SocketAddr::from(([127, 0, 0, 1], 0)),
    });
    let starting = start_cluster_server(
        args,
        registry.clone(),
        client.clone(),
        ctx.kube_config().await?,
        Listening {
            listen,
            cert_pem: serving.chain_pem(),
            key_pem: serving.serving.key_pem.clone(),
            reachability_probe: plan.probe().map(|gv| (gv.group, gv.version)),
        },
    );
    let (running, apps) = tokio::select! {
        started = starting => started?,
        () = signals.next() => return interrupted_before_anything(),
    };
    let local = running.local_addr;
    if let Route::ExternalName { port, .. } = &mut plan.route {
        *port = local.port();
    }

    // The session's objects.
    let mut registrar = Registrar::new(client.clone(), REQUEST_LIMIT);
    let spinner = log.spinner("registering");
    let registered = tokio::select! {
        r = registrar.register(&plan, args.takeover, |event| match event {
            Registering::Step(step) => spinner.set_message(format!("registering: {step}")),
            // Said when it happens: the wait for its namespace comes after.
            Registering::Reaped(id, None) => log.line(&format!(
                "Reaped expired serve session {id} (its Lease was no longer renewed)"
            )),
            Registering::Reaped(id, Some(pid)) => log.line(&format!(
                "Reaped serve session {id}: its process (pid {pid}) on this machine is gone"
            )),
        }) => r,
        () = signals.next() => {
            spinner.finish_and_clear();
            log.clear_spinner();
            if registrar.may_have_written() {
                crate::stderr_line!("Interrupted; removing what was created");
            } else {
                crate::stderr_line!("Interrupted before anything was created");
            }
            end_unregistered(&client, &plan, &registrar, &mut signals, running, args.drain_timeout).await;
            return Ok(ExitStatus::Error);
        }
    };
    spinner.finish_and_clear();
    log.clear_spinner();
    let registered = match registered {
        Ok(r) => r,
        Err(err) => {
            end_unregistered(
                &client,
                &plan,
                &registrar,
                &mut signals,
                running,
                args.drain_timeout,
            )
            .await;
            return Err(CliError::other("register the session", err));
        }
    };
    let t_objects = started.elapsed();
    let renewer = Renewer::start(
        client.clone(),
        &plan.namespace,
        &session::lease_name(&plan.id),
        lease::renew_every(plan.lease_duration),
    );
    // A process of its own here reaps the session once serve's process is
    // gone, once the Lease it records exists: the external-name route has no
    // agent, and the tunnel route's agent can only wait for the Lease.
    let guard = if !args.no_session_guard && guard::useful(&plan) {
        match guard::spawn(ctx, &plan, &state_dir, &log) {
            Ok(guard) => {
                log.line(&format!(
                    "Guard: process {} reaps this session if serve ends without its teardown (log: {})",
                    guard.pid,
                    guard.log.display()
                ));
                Some(guard)
            }
            Err(e) => {
                log.line(&format!(
                    "Warning: no guard process ({e}); if serve dies, {}",
                    guard::reapers_without(&plan)
                ));
                None
            }
        }
    } else {
        None
    };

    // The route.
    let (tunnel_status, tunnel_task) = match &plan.route {
        Route::Tunnel { .. } => {
            let transport = PortForwardTransport::new(
                client.clone(),
                &plan.namespace,
                &agent::pod_selector(&plan.id),
                crate::tunnel::agent::DEFAULT_CONTROL_PORT,
            );
            let upstream_addr = if local.ip().is_unspecified() {
                SocketAddr::from(([127, 0, 0, 1], local.port()))
            } else {
                local
            };
            // --exit-on-disconnect is serve's own (below): the first connect
            // waits for the pod, only a drop after it ends the session.
            let config = ClientConfig::new(plan.id.clone());
            let tunnel = TunnelClient::new(
                Arc::new(transport),
                Arc::new(TcpUpstream::new(upstream_addr)),
                config,
            );
            let status = tunnel.status();
            let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(tunnel.run(async move {
                let _ = stop_rx.await;
            }));
            log.follow_tunnel(status.clone());
            (Some(status), Some((stop_tx, task)))
        }
        Route::ExternalName { .. } => (None, None),
    };
    let mut tunnel_task = tunnel_task;

    // Available: the condition says so, and the aggregator fetched
    // discovery from this very server (a taken-over APIService may still
    // carry its previous backend's condition).
    let names = plan.api_service_names();
    let probes: Vec<String> = plan
        .served
        .iter()
        .map(|gv| format!("/apis/{}/{}", gv.group, gv.version))
        .collect();
    let spinner = log.spinner("waiting for the APIServices to become Available");
    // `--timeout 0`: no limit (Ctrl-C stops the wait).
    let limit = args.start_limit().unwrap_or(Duration::MAX);
    let deadline = Instant::now().checked_add(limit);
    let left = || {
        deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        })
    };
    let waiting = |e| match (&e, &plan.route) {
        (apiservice::WaitError::Unreachable { .. }, Route::ExternalName { host, port }) => {
            CliError::other(
                "wait for the APIServices",
                format!(
                    "{e}\nthe cluster does not reach {host}:{port} (--route external-name): check --host, or use \
                     --route tunnel, which needs no route from the cluster to this machine"
                ),
            )
        }
        _ => CliError::other("wait for the APIServices", e),
    };
    // Until the tunnel first connects, what the agent pod is doing is the
    // news (Pending, pulling its image, …), not the APIServices' condition.
    let agent_news = std::sync::Mutex::new(None);
    let watch_agent = async {
        match &tunnel_status {
            Some(status) => {
                agent_wait::show_until_connected(&client, &plan, status, &spinner, &agent_news)
                    .await
            }
            None => std::future::pending().await,
        }
    };
    let available = async {
        // The APIServices are switched to this session only once its
        // backend answers: until then the group stays with whoever served
        // it (or unregistered), not unavailable while the agent starts.
        if let Some(status) = &tunnel_status {
            let mut status = status.clone();
            let connected = status.wait_for(|s| s.connections > 0);
            match tokio::time::timeout(left(), connected).await {
                Ok(Ok(_)) => {}
                // Its task ended: `tunnel_failed` says why.
                Ok(Err(_)) => std::future::pending().await,
                Err(_) => {
                    return Err(CliError::other(
                        "wait for the tunnel agent",
                        format!("not connected within --timeout {:?}", args.timeout),
                    ));
                }
            }
        }
        match tokio::time::timeout(
            left(),
            agent_wait::endpoints_ready(&client, &plan, &spinner),
        )
        .await
        {
            Ok(()) => {}
            Err(_) => {
                return Err(CliError::other(
                    "wait for the tunnel agent",
                    format!(
                        "service/{} listed no ready agent within --timeout {:?}",
                        session::object_name(&plan.id),
                        args.timeout
                    ),
                ));
            }
        }
        // Through an ExternalName the aggregator dials this machine itself:
        // when it cannot, waiting out --timeout only keeps the group (and
        // every namespace deletion in the cluster) stalled. Through the
        // tunnel the agent answers, so a dial failure there is passing.
        let unreachable_after =
            matches!(plan.route, Route::ExternalName { .. }).then_some(UNREACHABLE_AFTER);
        let progress = |name: &str, reason: &str| {
            // Until the tunnel first connects the agent's state is shown.
            if !tunnel_status
                .as_ref()
                .is_some_and(agent_wait::never_connected_yet)
            {
                spinner.set_message(format!(
                    "waiting for APIService {name} to become Available ({reason})"
                ));
            }
        };
        // Through an ExternalName, nothing says the cluster reaches this
        // machine until the aggregator has: an APIService of the session's
        // own probe group proves it before any served group (perhaps one
        // taken over from a server that answers) is pointed here.
        let probe = registrar
            .create_probe(&plan)
            .await
            .map_err(|e| CliError::other("register the reachability probe", e))?;
        if let Some(name) = probe {
            spinner.set_message(format!(
                "checking that the cluster reaches this server (APIService {name})"
            ));
            apiservice::wait_available(
                &client,
                std::slice::from_ref(&name),
                left(),
                unreachable_after,
                progress,
            )
            .await
            .map_err(waiting)?;
            registrar
                .remove_probe(&name)
                .await
                .map_err(|e| CliError::other("remove the reachability probe", e))?;
        }
        // Reaped meanwhile (a laptop asleep longer than the Lease, a start
        // stopped with Ctrl-Z): its Service is gone, and APIServices
        // switched to it would answer nothing — a taken-over one would
        // lose its original, whose copy went with the session.
        if *renewer.state().borrow() == RenewState::Lost {
            return Err(reaped_while_starting(&plan));
        }
        spinner.set_message("registering the APIServices");
        registrar
            .switch(&plan, &registered)
            .await
            .map_err(|e| CliError::other("register the APIServices", e))?;
        for name in &registered.took_over {
            log.line(&format!(
                "Took over APIService {name}; it is given back when this session ends (deleted \
                 instead if the session it was taken from has ended by then)"
            ));
        }
        apiservice::wait_available(&client, &names, left(), unreachable_after, progress)
            .await
            .map_err(waiting)?;
        spinner.set_message("waiting for the aggregator to reach this server");
        if tokio::time::timeout(left(), log.probed(&probes))
            .await
            .is_err()
        {
            return Err(waiting(apiservice::WaitError::Timeout {
                name: names.join(", "),
                waited: limit,
                reason: "NotProbed".into(),
                message: "the aggregator has not fetched discovery from this server".into(),
            }));
        }
        apiservice::wait_available(&client, &names, left(), unreachable_after, progress)
            .await
            .map_err(waiting)?;
        // kubectl reads kube-apiserver's aggregated discovery, which takes
        // the new backend in a moment after it turned Available.
        spinner.set_message("waiting for kube-apiserver's discovery to list the kinds");
        discovered::wait_listed(&client, &plan.served, left(), |gv, listing| {
            spinner.set_message(format!(
                "waiting for kube-apiserver's discovery to list {gv} ({listing:?})"
            ));
        })
        .await
        .map_err(|e| CliError::other("wait for kube-apiserver's discovery", e))
    };
    let tunnel_failed = async {
        match tunnel_task.as_mut() {
            Some((_, task)) => match task.await {
                Ok(Err(e)) => CliError::other("the tunnel", e),
                Ok(Ok(())) => CliError::other("the tunnel", "it stopped"),
                Err(e) => CliError::other("the tunnel", e),
            },
            None => std::future::pending().await,
        }
    };
    let mut lease_watch = renewer.state();
    let lost = lease_watch.wait_for(|s| *s == RenewState::Lost);
    let waited = tokio::select! {
        r = available => Some(r),
        _ = lost => Some(Err(reaped_while_starting(&plan))),
        e = tunnel_failed => Some(Err(e)),
        never = watch_agent => match never {},
        () = signals.next() => None,
    };
    // A tunnel that never connected is the cause, whatever the APIServices
    // said meanwhile.
    let waited = match (waited, &tunnel_status) {
        (Some(Err(err)), Some(status)) if agent_wait::never_connected_yet(status) => Some(Err(
            agent_wait::never_connected(&err, &plan, status, &agent_news),
        )),
        (other, _) => other,
    };
    spinner.finish_and_clear();
    log.clear_spinner();
    if tunnel_task
        .as_ref()
        .is_some_and(|(_, task)| task.is_finished())
    {
        tunnel_task = None;
    }
    let t_available = started.elapsed();
    let created = registrar.created().to_vec();
    // Then the watch cache's first list (checked possible before
    // registering, it may still fail): bounded like the wait for the
    // APIServices, and Ctrl-C ends it.
    let waited = match waited {
        Some(Ok(())) => tokio::select! {
            () = apps.wait_ready() => {
                apps.say_unserved(&registry.snapshot());
                Some(Ok(()))
            }
            () = tokio::time::sleep(left()) => Some(Err(CliError::other(
                "fill the HelmRelease watch cache",
                format!(
                    "its first list did not complete within --timeout {:?}; the warnings above say why",
                    args.timeout
                ),
            ))),
            () = signals.next() => None,
        },
        other => other,
    };
    let ended = match waited {
        Some(Ok(())) => None,
        Some(Err(err)) => Some(Err(err)),
        None => {
            crate::stderr_line!("Interrupted; removing the session");
            Some(Ok(ExitStatus::Error))
        }
    };
    if let Some(ended) = ended {
        let reaped = *renewer.state().borrow() == RenewState::Lost;
        if let Some(guard) = &guard {
            guard.ending();
        }
        let complete = end(
            &client,
            &plan,
            &created,
            &mut signals,
            Some((renewer, tunnel_task.take())),
            running,
            args.drain_timeout,
        )
        .await;
        guard::after_teardown(guard.as_ref(), complete, reaped);
        return left_something(ended, complete);
    }
    let tunnel_at = tunnel_status
        .as_ref()
        .and_then(|s| match &s.borrow().state {
            TunnelState::Connected { since, .. } => Some(since.duration_since(started)),
            _ => None,
        });
    let ownership_watch = BackgroundTask(ownership::spawn(
        client.clone(),
        plan.id.clone(),
        plan.api_service_names(),
        log.clone(),
    ));
    let _kinds_follow = BackgroundTask(kinds_follow::spawn(
        client.clone(),
        following,
        plan.id.clone(),
        plan.api_service_names(),
        plan.served.clone(),
        log.clone(),
    ));
    print_ready(
        &registry,
        &plan,
        local,
        started,
        t_certs,
        t_objects,
        tunnel_at,
        t_available,
    );

    // Serve until told to stop, or until the session cannot go on.
    let mut lease_state = renewer.state();
    let outcome = tokio::select! {
        () = signals.next() => Ok(ExitStatus::Success),
        ended = async {
            match tunnel_task.as_mut() {
                Some((_, task)) => task.await,
                None => std::future::pending().await,
            }
        } => {
            let err = match ended {
                Ok(Ok(())) => CliError::other("the tunnel", "it stopped"),
                Ok(Err(e)) => CliError::other("the tunnel", e),
                Err(e) => CliError::other("the tunnel", e),
            };
            tunnel_task = None;
            Err(err)
        }
        () = disconnected(tunnel_status.clone()), if args.exit_on_disconnect => Err(CliError::other(
            "the tunnel dropped",
            "the port-forward to the agent was lost and --exit-on-disconnect is set",
        )),
        _ = lease_state.wait_for(|s| *s == RenewState::Lost) => Err(CliError::other(
            "the session ended",
            format!(
                "the session Lease {}/{} is gone: the session was reaped while it could not be renewed",
                plan.namespace,
                session::lease_name(&plan.id)
            ),
        )),
    };
    // The teardown changes the APIServices itself: not news.
    drop(ownership_watch);
    crate::stderr_line!(
        "Stopping: removing the session (Ctrl-C again to skip all but the APIServices)"
    );
    let reaped = *renewer.state().borrow() == RenewState::Lost;
    if let Some(guard) = &guard {
        guard.ending();
    }
    let complete = end(
        &client,
        &plan,
        &created,
        &mut signals,
        Some((renewer, tunnel_task)),
        running,
        args.drain_timeout,
    )
    .await;
    guard::after_teardown(guard.as_ref(), complete, reaped);
    left_something(outcome, complete)
}

/// The session's Lease went before the start finished: it was reaped.
fn reaped_while_starting(plan: &Plan) -> CliError {
    CliError::other(
        "the session ended",
        format!(
            "the session Lease {}/{} is gone: the session was reaped while it started",
            plan.namespace,
            session::lease_name(&plan.id)
        ),
    )
}

/// Ctrl-C (or SIGTERM, SIGHUP) before the registration began.
fn interrupted_before_anything() -> Result<ExitStatus, CliError> {
    crate::stderr_line!("Interrupted before anything was created");
    Ok(ExitStatus::Error)
}

/// A stop that would exit 0 exits 1 when its teardown left something (it
/// said what), so that scripts can tell.
fn left_something(
    outcome: Result<ExitStatus, CliError>,
    complete: bool,
) -> Result<ExitStatus, CliError> {
    match outcome {
        Ok(ExitStatus::Success) if !complete => Ok(ExitStatus::Error),
        other => other,
    }
}

/// `err` with [`registration::RIGHTS_NEEDED`] as its hint when the cluster
/// refused a request of the start (HTTP 403 among its causes): reading the
/// authentication configuration, waiting for the APIServices, … — every
/// refusal says it, not only registration's own (which says it in its text).
pub(super) fn with_rights_hint(err: CliError) -> CliError {
    let mut refused = false;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    while let Some(e) = cur {
        if e.to_string().contains(registration::RIGHTS_NEEDED) {
            return err;
        }
        refused |= e
            .downcast_ref::<kube::Error>()
            .is_some_and(registration::is_refusal);
        cur = e.source();
    }
    if refused {
        err.with_hint(registration::RIGHTS_NEEDED)
    } else {
        err
    }
}

/// Resolves when a connected tunnel drops (never without a tunnel).
async fn disconnected(status: Option<tokio::sync::watch::Receiver<TunnelStatus>>) {
    let Some(mut status) = status else {
        return std::future::pending().await;
    };
    let _ = status
        .wait_for(|s| matches!(s.state, TunnelState::Connected { .. }))
        .await;
    let _ = status
        .wait_for(|s| !matches!(s.state, TunnelState::Connected { .. }))
        .await;
}

#[allow(clippy::too_many_arguments)]
fn print_ready(
    registry: &Registry,
    plan: &Plan,
    local: SocketAddr,
    started: Instant,
    t_certs: Duration,
    t_objects: Duration,
    tunnel_at: Option<Duration>,
    t_available: Duration,
) {
    let snapshot = registry.snapshot();
    let kinds = snapshot.plurals();
    let tunnel = tunnel_at
        .map(|t| format!(", tunnel connected {:.2}s", t.as_secs_f64()))
        .unwrap_or_default();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "Serving {} ({}) on https://{local} for the cluster, through {}.\n\
         Ready in {:.2}s (certificates {:.2}s, objects {:.2}s{tunnel}, Available {:.2}s).\n\
         Try:     kubectl get {}\n\
         Session: {} (Lease {}/{}, holder {})\n\
         Press Ctrl-C to stop; everything the session created is removed.",
        super::kinds_count(kinds.len()),
        kinds.join(", "),
        plan.route_text(),
        started.elapsed().as_secs_f64(),
        t_certs.as_secs_f64(),
        t_objects.as_secs_f64(),
        t_available.as_secs_f64(),
        kinds.first().copied().unwrap_or("all"),
        plan.id,
        plan.namespace,
        session::lease_name(&plan.id),
        plan.holder,
    );
}

/// A background task of the running session (following the kinds, who
/// holds its APIServices), stopped when the session ends.
struct BackgroundTask(tokio::task::JoinHandle<()>);

impl Drop for BackgroundTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::config::ConfigError;

    fn status(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            message: message.into(),
            ..Default::default()
        }))
    }

    #[test]
    fn every_refusal_of_the_start_says_which_rights_serve_needs() {
        let read = |source| {
            CliError::other(
                "configure delegated authentication",
                ConfigError::Read {
                    namespace: "kube-system".into(),
                    name: "extension-apiserver-authentication".into(),
                    source,
                },
            )
        };
        let hinted = with_rights_hint(read(status(403, "configmaps is forbidden")));
        assert!(
            matches!(&hinted, CliError::Hinted { hint, .. } if hint == registration::RIGHTS_NEEDED),
            "{hinted:?}"
        );
        // Not a refusal: no hint.
        let other = with_rights_hint(read(status(500, "etcd is down")));
        assert!(matches!(other, CliError::Other { .. }), "{other:?}");
        // Registration's refusal says it in its own words: not twice.
        let said = CliError::other(
            "register the session",
            registration::RegisterError::Forbidden {
                what: "get apiservices.apiregistration.k8s.io/v1.a.example.com".into(),
                message: "forbidden".into(),
            },
        );
        assert!(matches!(with_rights_hint(said), CliError::Other { .. }));
    }
}
