//! `kubectl-cozy tunnel-agent` (hidden): the in-pod end of `serve`'s reverse
//! tunnel ([`crate::tunnel::agent`]). Flags also come from the environment
//! (`COZY_TUNNEL_*`), which suits a Deployment. Prints one line on stdout
//! once listening, `tunnel-agent listening data=ADDR control=ADDR health=ADDR`,
//! then logs to stderr until SIGTERM or Ctrl-C.
//!
//! With `--session-namespace` it also guards the session
//! ([`crate::register::sentinel`]): it watches the session's Lease and, once
//! serve stopped renewing it, stops serving, reaps the session, prints
//! `tunnel-agent reaped session ID: …` and exits. A SIGTERM during the reap
//! (its own pod going, as the garbage collector follows the Lease) lets the
//! reap finish first, within [`REAP_GRACE`]. The cluster credentials are the
//! pod's ServiceAccount (in-cluster configuration) or, outside a pod, the
//! kubeconfig (`--kubeconfig`, `KUBECONFIG`).

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Args;
use clap::builder::NonEmptyStringValueParser;
use tokio::sync::watch;

use crate::cli::{CliError, Ctx, ExitStatus, parse_request_timeout};
use crate::register::sentinel::{self, SentinelConfig};
use crate::register::{session, teardown};
use crate::tunnel::{Agent, AgentConfig, Keepalive};

/// How long a reap in progress may go on after SIGTERM (the pod's
/// `terminationGracePeriodSeconds` is 30).
pub const REAP_GRACE: Duration = Duration::from_secs(25);

/// Arguments of `kubectl-cozy tunnel-agent`.
#[derive(Debug, Args)]
pub struct TunnelAgentArgs {
    /// The serve session this agent belongs to; connections of any other session are refused
    #[arg(long, env = "COZY_TUNNEL_SESSION", value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub session: String,

    /// Where the aggregator connects (the Service's target port)
    #[arg(
        long,
        env = "COZY_TUNNEL_DATA_LISTEN",
        value_name = "ADDR",
        default_value = "0.0.0.0:8443"
    )]
    pub data_listen: SocketAddr,

    /// Where serve connects through pods/portforward (keep it on localhost)
    #[arg(
        long,
        env = "COZY_TUNNEL_CONTROL_LISTEN",
        value_name = "ADDR",
        default_value = "127.0.0.1:7001"
    )]
    pub control_listen: SocketAddr,

    /// Where probes connect: GET /livez, GET /readyz (ready while serve is connected)
    #[arg(
        long,
        env = "COZY_TUNNEL_HEALTH_LISTEN",
        value_name = "ADDR",
        default_value = "0.0.0.0:8081"
    )]
    pub health_listen: SocketAddr,

    /// How long an aggregator connection waits for serve before it is reset
    #[arg(long, env = "COZY_TUNNEL_HOLD", value_name = "DURATION", default_value = "3s", value_parser = parse_request_timeout)]
    pub hold: Duration,

    /// The session namespace: watch the session's Lease there and reap the session once it expires
    #[arg(long, env = "COZY_TUNNEL_SESSION_NAMESPACE", value_name = "NAMESPACE")]
    pub session_namespace: Option<String>,

    /// Added to the Lease's duration before the session counts as dead
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_request_timeout)]
    pub lease_grace: Duration,

    /// Time between reads of the session Lease
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_request_timeout)]
    pub lease_poll: Duration,

    /// Time between keepalive pings to serve
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_request_timeout)]
    pub keepalive_interval: Duration,

    /// How long a keepalive ping may go unanswered before serve's connection is dropped
    #[arg(long, value_name = "DURATION", default_value = "4s", value_parser = parse_request_timeout)]
    pub keepalive_timeout: Duration,
}

/// Runs the agent until SIGTERM or Ctrl-C.
pub async fn run(args: TunnelAgentArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    if args.keepalive_interval.is_zero() || args.keepalive_timeout.is_zero() {
        return Err(CliError::Usage(
            "--keepalive-interval and --keepalive-timeout must be greater than 0".into(),
        ));
    }
    let mut config = AgentConfig::new(args.session);
    config.data_listen = args.data_listen;
    config.control_listen = args.control_listen;
    config.health_listen = Some(args.health_listen);
    config.hold = args.hold;
    config.keepalive = Keepalive {
        interval: args.keepalive_interval,
        timeout: args.keepalive_timeout,
    };
    let agent = Agent::bind(config)
        .await
        .map_err(|e| CliError::other("start the tunnel agent", e))?;
    let health = agent
        .health_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|| "-".into());
    let mut out = ctx.stdout();
    writeln!(
        out,
        "tunnel-agent listening data={} control={} health={health}",
        agent.data_addr(),
        agent.control_addr(),
    )
    .and_then(|()| out.flush())
    .map_err(|e| CliError::io("write the listening addresses", e))?;
    tracing::info!(
        data = %agent.data_addr(),
        control = %agent.control_addr(),
        %health,
        session = %agent.hub().session(),
        "tunnel agent listening"
    );
    let guard = match &args.session_namespace {
        Some(namespace) => {
            session::validate_id(agent.hub().session())
                .map_err(|e| CliError::Usage(e.to_string()))?;
            let mut config = SentinelConfig::new(agent.hub().session(), namespace);
            config.grace = args.lease_grace;
            if !args.lease_poll.is_zero() {
                config.poll = args.lease_poll;
            }
            Some((client(ctx).await?, config))
        }
        None => None,
    };

    let (stop, mut stopped) = watch::channel(false);
    let stop = Arc::new(stop);
    let serving = tokio::spawn(agent.run(async move {
        let _ = stopped.wait_for(|s| *s).await;
    }));
    let reaping = Arc::new(AtomicBool::new(false));
    let mut guard_task = guard.map(|(client, config)| {
        let stop = stop.clone();
        let reaping = reaping.clone();
        tokio::spawn(async move {
            let report = sentinel::run(&client, &config, |_| {
                reaping.store(true, Ordering::SeqCst);
                let _ = stop.send(true);
            })
            .await;
            (config.id, report)
        })
    });
    let guarded = async {
        match guard_task.as_mut() {
            Some(task) => task.await.ok(),
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = shutdown_signal() => {
            let _ = stop.send(true);
            if reaping.load(Ordering::SeqCst)
                && let Some(task) = guard_task.take()
            {
                tracing::info!(grace = ?REAP_GRACE, "stopping after the reap in progress");
                if let Ok(Ok((id, Some(report)))) = tokio::time::timeout(REAP_GRACE, task).await {
                    reaped(ctx, "tunnel-agent", &id, &report)?;
                }
            }
        }
        done = guarded => {
            let _ = stop.send(true);
            // The agent never gives up reading its Lease: a report.
            if let Some((id, Some(report))) = done {
                reaped(ctx, "tunnel-agent", &id, &report)?;
            }
        }
    }
    match serving.await {
        Ok(result) => result.map_err(|e| CliError::other("run the tunnel agent", e))?,
        Err(e) => return Err(CliError::other("run the tunnel agent", e)),
    }
    Ok(ExitStatus::Success)
}

/// The cluster credentials: the pod's (in-cluster) unless a kubeconfig is
/// named.
async fn client(ctx: &Ctx) -> Result<kube::Client, CliError> {
    let named = ctx.global().kubeconfig.is_some() || std::env::var_os("KUBECONFIG").is_some();
    if !named && std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        let config = kube::Config::incluster()
            .map_err(|e| CliError::other("load the pod's in-cluster configuration", e))?;
        return crate::kube_client::client(config)
            .map_err(|e| CliError::other("build the Kubernetes client", e));
    }
    ctx.client().await
}

/// Prints what the reap did, as `WHO reaped session ID: …`.
pub(super) fn reaped(
    ctx: &Ctx,
    who: &str,
    id: &str,
    report: &crate::register::reap::ReapReport,
) -> Result<(), CliError> {
    let problems = teardown::problems(report);
    let mut out = ctx.stdout();
    writeln!(
        out,
        "{who} reaped session {id}: {} deleted, {} restored, {} already gone{}",
        report.deleted.len(),
        report.restored.len(),
        report.gone.len(),
        if problems.is_empty() {
            String::new()
        } else {
            format!("; not done: {}", problems.join("; "))
        }
    )
    .and_then(|()| out.flush())
    .map_err(|e| CliError::io("write the reap summary", e))
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
