//! `kubectl-cozy tunnel-agent` (hidden): the in-pod end of `serve`'s reverse
//! tunnel ([`crate::tunnel::agent`]). Flags also come from the environment
//! (`COZY_TUNNEL_*`), which suits a Deployment. Prints one line on stdout
//! once listening, `tunnel-agent listening data=ADDR control=ADDR health=ADDR`,
//! then logs to stderr until SIGTERM or Ctrl-C.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;
use clap::builder::NonEmptyStringValueParser;

use crate::cli::{CliError, Ctx, ExitStatus, parse_request_timeout};
use crate::tunnel::{Agent, AgentConfig, Keepalive};

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
    // The session Lease watcher (src/register/session.rs) joins this select
    // once it exists: the agent stops and cleans up when the Lease expires.
    agent
        .run(shutdown_signal())
        .await
        .map_err(|e| CliError::other("run the tunnel agent", e))?;
    Ok(ExitStatus::Success)
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
