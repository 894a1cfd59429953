//! `kubectl cozy serve`: the extension API server, registered in the current
//! cluster for as long as it runs.
//!
//! A composer: flags → options → start the parts → wait for a signal → tear
//! down in reverse. The parts live in [`crate::register`] (certificates, the
//! session's objects, the Lease, the teardown) and [`crate::tunnel`] (the
//! reverse tunnel); see `docs/serve.md`.
//!
//! - `--standalone`: no cluster; an embedded store and a kubeconfig for it.
//! - `--route tunnel` (default): an agent pod in the session namespace and a
//!   reverse tunnel over pods/portforward; `--route external-name`: an
//!   ExternalName Service to a host the cluster reaches this machine by;
//!   `--route none`: serve only (`--tls-cert-file`/`--tls-key-file`), the
//!   APIService is the caller's.
//! - `--in-cluster` ([`in_cluster`]): the server `kubectl cozy install`
//!   deploys, registered by the install, not by itself.
//! - `--dry-run` prints every object a session would create and creates
//!   nothing; `--print-rbac` prints the RBAC of an in-cluster server.

mod in_cluster;

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum, ValueHint};
use indicatif::ProgressBar;

use crate::apiserver::handlers::ApiState;
use crate::apiserver::server::{self, Access, RunningServer, ServerConfig};
use crate::auth::Auth;
use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::Registry;
use crate::register::apiservice::{self, GroupVersion};
use crate::register::credentials as standalone;
use crate::register::lease::{self, RenewState, Renewer};
use crate::register::manifests::{self, RbacOptions, RbacSubject};
use crate::register::plan::{self, Plan, Route};
use crate::register::registration::Registrar;
use crate::register::teardown::{self, Teardown};
use crate::register::{agent, certs, route, session};
use crate::storage::app_store::AppStore;
use crate::storage::cache::WatchCache;
use crate::storage::{Backend, cluster_store::ClusterStore, embedded_store::EmbeddedStore};
use crate::tunnel::{
    ClientConfig, PortForwardTransport, TcpUpstream, TunnelClient, TunnelState, TunnelStatus,
};

/// The user kube-apiserver's aggregator probes APIServices as.
const AGGREGATOR: &str = "system:kube-aggregator";
/// Limit of each registration and teardown request.
const REQUEST_LIMIT: Duration = Duration::from_secs(10);
/// Limit of each request of the teardown (it must finish within ~5 s).
const TEARDOWN_LIMIT: Duration = Duration::from_secs(2);

/// How kube-apiserver reaches this server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RouteArg {
    /// An agent pod and a reverse tunnel over pods/portforward (any cluster)
    Tunnel,
    /// An ExternalName Service to a host name the cluster resolves to this machine (kind, minikube, k3d)
    ExternalName,
    /// Register nothing: serve only (needs --tls-cert-file and --tls-key-file)
    None,
}

/// Arguments of `kubectl cozy serve`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  # Serve the kinds in the current cluster (through a tunnel), until Ctrl-C
  kubectl cozy serve --kinds ./kinds
  kubectl get postgreses

  # A local cluster that can reach this machine (kind, minikube, k3d): no agent pod
  kubectl cozy serve --kinds ./kinds --route external-name

  # Take over a group another server (or session) serves; it is given back on exit
  kubectl cozy serve --kinds ./kinds --takeover

  # Show every object a session would create, create nothing
  kubectl cozy serve --kinds ./kinds --dry-run

  # No cluster needed: serve the example kinds, then use them with kubectl
  kubectl cozy serve --standalone --kinds examples/kinds
  kubectl --kubeconfig ~/.config/kubectl-cozy/standalone.kubeconfig get postgreses

  # The RBAC for a server running as ServiceAccount cozy-system/kubectl-cozy
  kubectl cozy serve --kinds ./kinds --print-rbac | kubectl apply -f -")]
pub struct ServeArgs {
    /// Serve without any cluster, over an embedded store, and write a kubeconfig for it
    #[arg(long)]
    pub standalone: bool,

    /// Kind definitions: a file or a directory of YAML files (reloaded on change)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath, required = true)]
    pub kinds: Option<PathBuf>,

    /// Address to listen on (default: 127.0.0.1:6443 standalone, 127.0.0.1:<any> with the tunnel, 0.0.0.0:<any> for external-name)
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,

    /// How kube-apiserver reaches this server (default: tunnel; none with --tls-cert-file)
    #[arg(long, value_enum, value_name = "ROUTE")]
    pub route: Option<RouteArg>,

    /// The host the cluster reaches this machine by (external-name; default: detected for kind, minikube, k3d)
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,

    /// Namespace of the session's objects (created if missing, and then removed at the end)
    #[arg(long, value_name = "NAMESPACE", default_value = session::DEFAULT_NAMESPACE)]
    pub session_namespace: String,

    /// Image of the tunnel agent
    #[arg(long, value_name = "IMAGE", default_value = agent::DEFAULT_IMAGE)]
    pub agent_image: String,

    /// Take over group/versions another server or session serves; restored byte for byte on exit
    #[arg(long)]
    pub takeover: bool,

    /// How long to wait for the APIServices to become Available
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = crate::cli::parse_request_timeout)]
    pub timeout: Duration,

    /// No access log on stderr
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Exit (after cleaning up) when the tunnel drops instead of reconnecting
    #[arg(long)]
    pub exit_on_disconnect: bool,

    /// Print every object the session would create (YAML) and create nothing
    #[arg(long, alias = "print-manifests")]
    pub dry_run: bool,

    /// Duration of the session Lease (renewed every third of it)
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = crate::cli::parse_request_timeout)]
    pub lease_duration: Duration,

    /// Test seam: make the Service an ExternalName to HOST and the APIService port PORT (the test plane cannot route to pods)
    #[arg(long, value_name = "HOST:PORT", hide = true, value_parser = route::parse_host_port)]
    pub agent_service_external_name: Option<(String, u16)>,

    /// Embedded store file (standalone; default: <state dir>/standalone.sqlite)
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub data: Option<PathBuf>,

    /// Where to write the kubeconfig (standalone; default: ~/.config/kubectl-cozy/standalone.kubeconfig)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub write_kubeconfig: Option<PathBuf>,

    /// Directory for CAs and certificates (default: ~/.local/state/kubectl-cozy)
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub state_dir: Option<PathBuf>,

    /// Serving certificate (--route none), PEM
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath, requires = "tls_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// Serving key (--route none), PEM
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath, requires = "tls_cert_file")]
    pub tls_key_file: Option<PathBuf>,

    /// Write HelmReleases as the requesting user (impersonation), so users need HelmRelease rights too
    #[arg(long)]
    pub impersonate: bool,

    /// Print the RBAC objects the server and its users need (YAML) and exit
    #[arg(long)]
    pub print_rbac: bool,

    /// The server's identity in --print-rbac: NAMESPACE/NAME (a ServiceAccount) or user:NAME
    #[arg(long, value_name = "SUBJECT", default_value = "cozy-system/kubectl-cozy", value_parser = parse_rbac_subject)]
    pub rbac_subject: String,

    /// Run as the in-cluster server `kubectl cozy install` deploys: in-cluster config, --tls-cert-file/--tls-key-file, no registration
    #[arg(long, requires = "tls_cert_file", conflicts_with_all = ["standalone", "route", "dry_run", "takeover", "print_rbac"])]
    pub in_cluster: bool,

    /// Time to let requests finish on shutdown
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::cli::parse_request_timeout)]
    pub drain_timeout: Duration,
}

/// Runs `serve`.
pub async fn run(args: ServeArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let kinds_path = args
        .kinds
        .clone()
        .ok_or_else(|| CliError::Usage("--kinds is required".into()))?;
    let registry = Registry::from_path(&kinds_path)
        .map_err(|e| CliError::other("load kind definitions", e))?;
    if args.print_rbac {
        return print_rbac(&args, &registry, ctx);
    }
    let route = route_of(&args)?;
    if args.dry_run {
        return dry_run(&args, &registry, route, ctx).await;
    }
    crate::allocator::tune_for_server();
    for warning in registry.snapshot().warnings() {
        tracing::warn!("{warning}");
    }
    let _file_watch = registry
        .watch_path(kinds_path.clone())
        .map_err(|e| CliError::other(format!("watch {}", kinds_path.display()), e))?;
    if args.standalone {
        return serve_standalone(&args, registry).await;
    }
    if args.in_cluster {
        return in_cluster::serve(&args, registry, ctx).await;
    }
    match route {
        RouteArg::None => serve_unregistered(&args, registry, ctx).await,
        route => serve_session(&args, registry, route, ctx).await,
    }
}

/// The route asked for, checked against the other flags.
fn route_of(args: &ServeArgs) -> Result<RouteArg, CliError> {
    let tls_files = args.tls_cert_file.is_some();
    let route = match (args.route, tls_files) {
        (Some(r), _) => r,
        (None, true) => RouteArg::None,
        (None, false) => RouteArg::Tunnel,
    };
    let usage = |m: &str| Err(CliError::Usage(m.to_owned()));
    if args.standalone && (args.route.is_some() || args.dry_run) {
        return usage("--route and --dry-run apply to cluster mode, not --standalone");
    }
    if route == RouteArg::None && !args.standalone && !tls_files {
        return usage(
            "--route none needs --tls-cert-file and --tls-key-file (the APIService is yours to register)",
        );
    }
    if route != RouteArg::None && tls_files && !args.standalone {
        return usage(
            "--tls-cert-file/--tls-key-file go with --route none; registered routes make their own certificates",
        );
    }
    if route != RouteArg::ExternalName && args.host.is_some() {
        return usage("--host goes with --route external-name");
    }
    if args.agent_service_external_name.is_some() && route != RouteArg::Tunnel {
        return usage("--agent-service-external-name goes with --route tunnel");
    }
    if args.lease_duration < Duration::from_secs(3) {
        return usage("--lease-duration must be at least 3s");
    }
    Ok(route)
}

/// The group/versions the kinds are in.
fn served(registry: &Registry) -> Vec<GroupVersion> {
    let mut out: Vec<GroupVersion> = registry
        .snapshot()
        .kinds()
        .iter()
        .map(|k| GroupVersion {
            group: k.resolved.definition.group.clone(),
            version: k.resolved.definition.version.clone(),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The external-name host: `--host`, else detected from the kubeconfig.
fn external_host(args: &ServeArgs, ctx: &Ctx) -> Result<String, CliError> {
    if let Some(host) = &args.host {
        return Ok(host.clone());
    }
    let selection = ctx.selection();
    let kubeconfig = crate::kubeconfig::read(&selection)?;
    let context_name = selection
        .context
        .clone()
        .or(kubeconfig.current_context.clone());
    let cluster_name = selection.cluster.clone().or_else(|| {
        kubeconfig
            .contexts
            .iter()
            .find(|c| Some(&c.name) == context_name.as_ref())
            .and_then(|c| c.context.as_ref())
            .map(|c| c.cluster.clone())
    });
    match route::detect(context_name.as_deref(), cluster_name.as_deref()) {
        Some(found) => {
            eprintln!(
                "Route: external-name to {} (detected: {}; --host to choose another)",
                found.host, found.because
            );
            Ok(found.host.to_owned())
        }
        None => Err(CliError::Usage(format!(
            "--route external-name needs --host: no local cluster (kind, minikube, k3d) recognised in context {}",
            context_name.as_deref().unwrap_or("(none)")
        ))),
    }
}

/// The plan of a session, with serve's `port` for the external-name route.
fn plan(
    args: &ServeArgs,
    route: RouteArg,
    served: Vec<GroupVersion>,
    host: Option<String>,
    port: u16,
    ca_pem: String,
) -> Plan {
    let route = match route {
        RouteArg::ExternalName => Route::ExternalName {
            host: host.unwrap_or_default(),
            port,
        },
        _ => Route::Tunnel {
            image: args.agent_image.clone(),
            service_external_name: args.agent_service_external_name.clone(),
        },
    };
    Plan {
        id: session::generate_id(),
        namespace: args.session_namespace.clone(),
        holder: lease::holder(),
        started: k8s_openapi::jiff::Timestamp::now(),
        lease_duration: args.lease_duration,
        served,
        route,
        ca_pem,
    }
}

/// `--dry-run`: the objects, on stdout; nothing written anywhere.
async fn dry_run(
    args: &ServeArgs,
    registry: &Registry,
    route: RouteArg,
    ctx: &Ctx,
) -> Result<ExitStatus, CliError> {
    if route == RouteArg::None {
        return Err(CliError::Usage(
            "--dry-run shows what a registered session creates; --route none creates nothing"
                .into(),
        ));
    }
    let served = served(registry);
    let host = match route {
        RouteArg::ExternalName => Some(external_host(args, ctx)?),
        _ => None,
    };
    let port = args.listen.map(|a| a.port()).unwrap_or(0);
    let mut plan = plan(args, route, served, host, port, String::new());
    let certs = certs::ephemeral(&session::object_name(&plan.id), &plan.namespace)
        .map_err(|e| CliError::other("make certificates", e))?;
    plan.ca_pem = certs.ca_pem;
    let text =
        plan::to_yaml(&plan.manifests()).map_err(|e| CliError::io("render the manifests", e))?;
    let mut out = ctx.stdout();
    let header = format!(
        "# kubectl cozy serve --dry-run: what session {id} would create (nothing was created).\n\
         # The namespace only if it is missing; namespaced objects are owned by the Lease (ownerReferences are set at\n\
         # creation); caBundle here is a throw-away CA (a real session uses the one kept under the state directory).\n\
         # With --takeover, APIServices that exist are replaced and kept in ConfigMap {saved}.\n{port_note}",
        id = plan.id,
        saved = session::saved_api_services_name(&plan.id),
        port_note = if route == RouteArg::ExternalName && port == 0 {
            "# The APIService port is serve's port, chosen when it starts (--listen to fix it): shown as 0.\n"
        } else {
            ""
        }
    );
    out.write_all(header.as_bytes())
        .and_then(|()| out.write_all(text.as_bytes()))
        .map_err(|e| CliError::io("write the manifests", e))?;
    Ok(ExitStatus::Success)
}

/// The server on `listen` over the cluster (delegated authentication).
async fn start_cluster_server(
    args: &ServeArgs,
    registry: Registry,
    client: kube::Client,
    listen: SocketAddr,
    cert_pem: String,
    key_pem: String,
) -> Result<(RunningServer, AppStore), CliError> {
    let auth = Auth::delegated(client.clone(), Default::default())
        .await
        .map_err(|e| CliError::other("configure delegated authentication", e))?;
    let group = registry
        .snapshot()
        .kinds()
        .first()
        .map(|k| k.resolved.definition.group.clone())
        .unwrap_or_default();
    let backend = Backend::Cluster(Box::new(
        ClusterStore::new(client, &group).with_impersonation(args.impersonate),
    ));
    let apps = AppStore::new(WatchCache::start(backend.clone()), backend);
    let running = server::start(ServerConfig {
        listen,
        cert_pem,
        key_pem,
        auth: Arc::new(auth),
        state: ApiState {
            registry,
            apps: apps.clone(),
        },
    })
    .await
    .map_err(|e| CliError::other("start the API server", e))?;
    Ok((running, apps))
}

/// A cluster-mode session: register, serve, tear down.
async fn serve_session(
    args: &ServeArgs,
    registry: Registry,
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
    client
        .apiserver_version()
        .await
        .map_err(|source| CliError::Unreachable {
            server: server_url.clone(),
            source,
        })?;
    let log = Log::new(args.quiet);
    log.install_access_log();

    // Certificates (the Service name needs the session id: plan first).
    let mut plan = plan(args, route, served, host, 0, String::new());
    let state_dir = args
        .state_dir
        .clone()
        .unwrap_or_else(standalone::default_state_dir);
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
    let (running, apps) = start_cluster_server(
        args,
        registry.clone(),
        client.clone(),
        listen,
        serving.chain_pem(),
        serving.serving.key_pem.clone(),
    )
    .await?;
    let local = running.local_addr;
    if let Route::ExternalName { port, .. } = &mut plan.route {
        *port = local.port();
    }

    // The session's objects.
    let mut registrar = Registrar::new(client.clone(), REQUEST_LIMIT);
    let spinner = log.spinner("registering");
    let registered = tokio::select! {
        r = registrar.register(&plan, args.takeover, |step| spinner.set_message(format!("registering: {step}"))) => r,
        () = signals.next() => {
            spinner.finish_and_clear();
            log.clear_spinner();
            eprintln!("Interrupted; removing what was created");
            end(&client, &plan, registrar.created(), &mut signals, None, running, args.drain_timeout).await;
            return Ok(ExitStatus::Error);
        }
    };
    spinner.finish_and_clear();
    log.clear_spinner();
    let registered = match registered {
        Ok(r) => r,
        Err(err) => {
            end(
                &client,
                &plan,
                registrar.created(),
                &mut signals,
                None,
                running,
                args.drain_timeout,
            )
            .await;
            return Err(CliError::other("register the session", err));
        }
    };
    for id in &registered.reaped {
        eprintln!("Reaped expired serve session {id} (its Lease was no longer renewed)");
    }
    for name in &registered.took_over {
        eprintln!("Took over APIService {name}; it is restored when this session ends");
    }
    let created = registrar.created().to_vec();
    let t_objects = started.elapsed();
    let renewer = Renewer::start(
        client.clone(),
        &plan.namespace,
        &session::lease_name(&plan.id),
        lease::renew_every(plan.lease_duration),
    );

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
    let deadline = Instant::now() + args.timeout;
    let available = async {
        let progress = |name: &str, reason: &str| {
            spinner.set_message(format!(
                "waiting for APIService {name} to become Available ({reason})"
            ));
        };
        apiservice::wait_available(&client, &names, args.timeout, progress).await?;
        spinner.set_message("waiting for the aggregator to reach this server");
        let left = deadline.saturating_duration_since(Instant::now());
        if tokio::time::timeout(left, log.probed(&probes))
            .await
            .is_err()
        {
            return Err(apiservice::WaitError::Timeout {
                name: names.join(", "),
                waited: args.timeout,
                reason: "NotProbed".into(),
                message: "the aggregator has not fetched discovery from this server".into(),
            });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        apiservice::wait_available(&client, &names, left, progress).await
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
    let waited = tokio::select! {
        r = available => Some(r.map_err(|e| CliError::other("wait for the APIServices", e))),
        e = tunnel_failed => Some(Err(e)),
        () = signals.next() => None,
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
    let failure = match waited {
        Some(Ok(())) => None,
        Some(Err(err)) => Some(err),
        None => {
            eprintln!("Interrupted; removing the session");
            end(
                &client,
                &plan,
                &created,
                &mut signals,
                Some((renewer, tunnel_task.take())),
                running,
                args.drain_timeout,
            )
            .await;
            return Ok(ExitStatus::Error);
        }
    };
    if let Some(err) = failure {
        end(
            &client,
            &plan,
            &created,
            &mut signals,
            Some((renewer, tunnel_task.take())),
            running,
            args.drain_timeout,
        )
        .await;
        return Err(err);
    }
    apps.wait_ready().await;
    let tunnel_at = tunnel_status
        .as_ref()
        .and_then(|s| match &s.borrow().state {
            TunnelState::Connected { since, .. } => Some(since.duration_since(started)),
            _ => None,
        });
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
    eprintln!("Stopping: removing the session (Ctrl-C again to skip all but the APIServices)");
    end(
        &client,
        &plan,
        &created,
        &mut signals,
        Some((renewer, tunnel_task)),
        running,
        args.drain_timeout,
    )
    .await;
    outcome
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

type TunnelTask = (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), crate::tunnel::ClientError>>,
);

/// Tears the session down: the renewer stops, the APIServices go (restored or
/// deleted), then the tunnel and the server stop, then the rest of the
/// objects go unless a second signal arrives.
async fn end(
    client: &kube::Client,
    plan: &Plan,
    created: &[session::SessionObject],
    signals: &mut Signals,
    running_parts: Option<(Renewer, Option<TunnelTask>)>,
    running: RunningServer,
    drain: Duration,
) {
    let began = Instant::now();
    let (renewer, tunnel) = match running_parts {
        Some((renewer, tunnel)) => (Some(renewer), tunnel),
        None => (None, None),
    };
    if let Some(renewer) = renewer {
        renewer.stop().await;
    }
    let teardown = Teardown::new(
        client.clone(),
        &plan.id,
        &plan.namespace,
        created,
        TEARDOWN_LIMIT,
    );
    let first = teardown.api_services().await;
    // The aggregator no longer routes here: stop the tunnel and the server
    // while the rest goes.
    let stopping = async {
        if let Some((stop, task)) = tunnel {
            let _ = stop.send(());
            let _ = tokio::time::timeout(Duration::from_secs(3), task).await;
        }
        running.shutdown(drain.min(Duration::from_secs(2))).await;
    };
    let rest = async {
        let reaping = match first {
            Ok(reaping) => reaping,
            Err(err) => {
                eprintln!(
                    "Could not remove the session's APIServices: {}\n  the agent, the next serve or `kubectl cozy doctor --fix` removes them once the Lease expires",
                    crate::tunnel::client::chain(&err)
                );
                return None;
            }
        };
        tokio::select! {
            report = teardown.rest(reaping) => Some(report),
            () = signals.next() => {
                eprintln!(
                    "Skipped the rest of the cleanup: the Lease {}/{} expires within {}s and the agent or `kubectl cozy doctor --fix` removes what is left",
                    plan.namespace,
                    session::lease_name(&plan.id),
                    plan.lease_duration.as_secs()
                );
                None
            }
        }
    };
    let ((), report) = tokio::join!(stopping, rest);
    let Some(report) = report else {
        return;
    };
    let problems = teardown::problems(&report);
    if problems.is_empty() {
        eprintln!(
            "Removed session {} ({} objects{}) in {:.1}s",
            plan.id,
            report.deleted.len() + report.restored.len(),
            if report.restored.is_empty() {
                String::new()
            } else {
                format!(", {} APIService(s) restored", report.restored.len())
            },
            began.elapsed().as_secs_f64()
        );
    } else {
        eprintln!("Removed session {} except:", plan.id);
        for line in problems {
            eprintln!("  {line}");
        }
    }
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
    let kinds: Vec<&str> = snapshot
        .kinds()
        .iter()
        .map(|k| k.resolved.definition.plural.as_str())
        .collect();
    let tunnel = tunnel_at
        .map(|t| format!(", tunnel connected {:.2}s", t.as_secs_f64()))
        .unwrap_or_default();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "Serving {} kinds ({}) on https://{local} for the cluster, through {}.\n\
         Ready in {:.2}s (certificates {:.2}s, objects {:.2}s{tunnel}, Available {:.2}s).\n\
         Try:     kubectl get {}\n\
         Session: {} (Lease {}/{}, holder {})\n\
         Press Ctrl-C to stop; everything the session created is removed.",
        kinds.len(),
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

/// Today's cluster mode: serve with the given certificate, register nothing.
async fn serve_unregistered(
    args: &ServeArgs,
    registry: Registry,
    ctx: &Ctx,
) -> Result<ExitStatus, CliError> {
    let (Some(cert), Some(key)) = (&args.tls_cert_file, &args.tls_key_file) else {
        return Err(CliError::Usage(
            "--route none needs --tls-cert-file and --tls-key-file".into(),
        ));
    };
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).map_err(|e| CliError::io(format!("read {}", p.display()), e))
    };
    let (cert_pem, key_pem) = (read(cert)?, read(key)?);
    let client = ctx.client().await?;
    let log = Log::new(args.quiet);
    log.install_access_log();
    let listen = args
        .listen
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 6443)));
    let (running, apps) =
        start_cluster_server(args, registry.clone(), client, listen, cert_pem, key_pem).await?;
    let spinner = crate::output::progress::spinner("waiting for the HelmRelease cache to sync");
    apps.wait_ready().await;
    spinner.finish_and_clear();
    let snapshot = registry.snapshot();
    let kinds: Vec<&str> = snapshot
        .kinds()
        .iter()
        .map(|k| k.resolved.definition.plural.as_str())
        .collect();
    eprintln!(
        "Serving {} kinds ({}) on https://{}, storing HelmReleases in the cluster (no APIService registered: --route none)",
        kinds.len(),
        kinds.join(", "),
        running.local_addr
    );
    Signals::new()?.next().await;
    eprintln!(
        "Shutting down (draining for up to {:?})",
        args.drain_timeout
    );
    running.shutdown(args.drain_timeout).await;
    Ok(ExitStatus::Success)
}

/// `--standalone`: the embedded store and a kubeconfig.
async fn serve_standalone(args: &ServeArgs, registry: Registry) -> Result<ExitStatus, CliError> {
    let state_dir = args
        .state_dir
        .clone()
        .unwrap_or_else(standalone::default_state_dir);
    let data = args
        .data
        .clone()
        .unwrap_or_else(|| state_dir.join("standalone.sqlite"));
    if let Some(parent) = data.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError::io(format!("create {}", parent.display()), e))?;
    }
    let store = EmbeddedStore::open(&data)
        .map_err(|e| CliError::other(format!("open {}", data.display()), e))?;
    let listen = args
        .listen
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 6443)));
    let credentials = standalone::credentials(&state_dir, listen)
        .map_err(|e| CliError::other("prepare the standalone certificates", e))?;
    let backend = Backend::Embedded(store);
    let apps = AppStore::new(WatchCache::start(backend.clone()), backend);
    let running = server::start(ServerConfig {
        listen,
        cert_pem: format!("{}{}", credentials.serving.cert_pem, credentials.ca_pem),
        key_pem: credentials.serving.key_pem.clone(),
        auth: Arc::new(
            Auth::standalone(&credentials.ca_pem)
                .map_err(|e| CliError::other("configure authentication", e))?,
        ),
        state: ApiState {
            registry: registry.clone(),
            apps: apps.clone(),
        },
    })
    .await
    .map_err(|e| CliError::other("start the API server", e))?;
    let url = format!("https://{}", running.local_addr);
    let spinner = crate::output::progress::spinner("waiting for the store's cache to load");
    apps.wait_ready().await;
    spinner.finish_and_clear();
    let kubeconfig = args
        .write_kubeconfig
        .clone()
        .unwrap_or_else(standalone::default_kubeconfig_path);
    standalone::write_kubeconfig(&kubeconfig, &url, &credentials)
        .map_err(|e| CliError::other("write the kubeconfig", e))?;
    let snapshot = registry.snapshot();
    let kinds: Vec<&str> = snapshot
        .kinds()
        .iter()
        .map(|k| k.resolved.definition.plural.as_str())
        .collect();
    eprintln!(
        "Serving {} kinds ({}) on {url} from {}\nKubeconfig: {}\nTry: kubectl --kubeconfig {} get {}\nPress Ctrl-C to stop.",
        kinds.len(),
        kinds.join(", "),
        data.display(),
        kubeconfig.display(),
        kubeconfig.display(),
        kinds.first().copied().unwrap_or("all")
    );
    Signals::new()?.next().await;
    eprintln!(
        "Shutting down (draining for up to {:?})",
        args.drain_timeout
    );
    running.shutdown(args.drain_timeout).await;
    Ok(ExitStatus::Success)
}

/// What serve prints while running: the access log (unless `-q`), tunnel
/// state changes, spinners (only on a terminal); lines printed while a
/// spinner spins go above it.
#[derive(Clone)]
struct Log {
    quiet: bool,
    spinner: Arc<Mutex<Option<ProgressBar>>>,
    /// Paths the aggregator fetched successfully (its availability probes
    /// of `/apis/<group>/<version>`): proof that it reaches *this* server.
    probed: Arc<tokio::sync::watch::Sender<std::collections::BTreeSet<String>>>,
}

impl Log {
    fn new(quiet: bool) -> Self {
        Log {
            quiet,
            spinner: Arc::new(Mutex::new(None)),
            probed: Arc::new(tokio::sync::watch::channel(Default::default()).0),
        }
    }

    /// Waits until the aggregator fetched every one of `paths` from this
    /// server.
    async fn probed(&self, paths: &[String]) {
        let mut rx = self.probed.subscribe();
        let _ = rx
            .wait_for(|seen| paths.iter().all(|p| seen.contains(p)))
            .await;
    }

    fn line(&self, text: &str) {
        let bar = self.spinner.lock().ok().and_then(|s| s.clone());
        match bar {
            Some(bar) if !bar.is_hidden() => bar.println(text),
            _ => eprintln!("{text}"),
        }
    }

    fn spinner(&self, message: &str) -> ProgressBar {
        let bar = crate::output::progress::spinner(message.to_owned());
        if let Ok(mut slot) = self.spinner.lock() {
            *slot = Some(bar.clone());
        }
        bar
    }

    fn clear_spinner(&self) {
        if let Ok(mut slot) = self.spinner.lock() {
            *slot = None;
        }
    }

    fn install_access_log(&self) {
        let log = self.clone();
        server::set_access_log(Box::new(move |a: &Access<'_>| {
            if a.status.is_success() && a.user == Some(AGGREGATOR) && a.path.starts_with("/apis/") {
                let path = a.path.to_owned();
                log.probed.send_if_modified(|seen| seen.insert(path));
            }
            if !log.quiet {
                log.line(&access_line(a));
            }
        }));
    }

    /// Prints the tunnel's state changes (connected, reconnecting).
    fn follow_tunnel(&self, mut status: tokio::sync::watch::Receiver<TunnelStatus>) {
        let log = self.clone();
        tokio::spawn(async move {
            let mut last = String::new();
            loop {
                let line = tunnel_line(&status.borrow_and_update());
                if let Some(line) = line
                    && line != last
                {
                    log.line(&line);
                    last = line;
                }
                if status.changed().await.is_err() {
                    break;
                }
            }
        });
    }
}

/// One access log line: `GET /apis/… 200 3.1ms alice`.
fn access_line(a: &Access<'_>) -> String {
    format!(
        "{} {} {} {:.1}ms {}",
        a.method,
        a.path,
        a.status.as_u16(),
        a.latency.as_secs_f64() * 1000.0,
        a.user.unwrap_or("-")
    )
}

/// The line for a tunnel state, if it is worth one.
fn tunnel_line(status: &TunnelStatus) -> Option<String> {
    match &status.state {
        TunnelState::Connecting => None,
        TunnelState::Connected {
            endpoint, agent, ..
        } => Some(format!("Tunnel: connected to {endpoint} ({agent})")),
        TunnelState::Reconnecting { attempt, retry_in } => Some(format!(
            "Tunnel: reconnecting (attempt {attempt}, in {:.1}s){}",
            retry_in.as_secs_f64(),
            status
                .last_error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        )),
        TunnelState::Stopped => Some("Tunnel: stopped".to_owned()),
    }
}

/// SIGINT and SIGTERM, listened to from the start (a signal before the
/// handlers exist would kill the process mid-registration).
struct Signals {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Self, CliError> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen =
                |kind| signal(kind).map_err(|e| CliError::io("listen for SIGINT and SIGTERM", e));
            Ok(Signals {
                int: listen(SignalKind::interrupt())?,
                term: listen(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    async fn next(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Validates `--rbac-subject` (kept as text: `ServeArgs` stays small).
fn parse_rbac_subject(text: &str) -> Result<String, String> {
    RbacSubject::parse(text).map(|_| text.to_owned())
}

/// `--print-rbac`: the objects for the loaded kinds, as YAML on stdout.
fn print_rbac(args: &ServeArgs, registry: &Registry, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let snapshot = registry.snapshot();
    let options = RbacOptions {
        subject: RbacSubject::parse(&args.rbac_subject).map_err(CliError::Usage)?,
        impersonate: args.impersonate,
        ..RbacOptions::default()
    };
    let objects = manifests::rbac(snapshot.kinds().iter().map(|k| &k.resolved), &options);
    let text =
        manifests::to_yaml(&objects).map_err(|e| CliError::io("render the RBAC objects", e))?;
    let mut out = ctx.stdout();
    std::io::Write::write_all(&mut out, text.as_bytes())
        .map_err(|e| CliError::io("write the RBAC objects", e))?;
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn args(line: &[&str]) -> Result<ServeArgs, String> {
        let mut argv = vec!["serve", "--kinds", "k"];
        argv.extend_from_slice(line);
        Cli::try_parse_from(argv)
            .map(|c| c.serve)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn routes_default_to_the_tunnel_and_flags_must_fit_them() {
        assert_eq!(route_of(&args(&[]).unwrap()).unwrap(), RouteArg::Tunnel);
        assert_eq!(
            route_of(&args(&["--tls-cert-file", "c", "--tls-key-file", "k"]).unwrap()).unwrap(),
            RouteArg::None
        );
        let err = |line: &[&str]| route_of(&args(line).unwrap()).unwrap_err().to_string();
        assert!(err(&["--route", "none"]).contains("--tls-cert-file"));
        assert!(err(&["--host", "h"]).contains("--route external-name"));
        assert!(err(&["--standalone", "--dry-run"]).contains("cluster mode"));
        assert!(err(&["--lease-duration", "1s"]).contains("at least 3s"));
        assert!(
            err(&[
                "--route",
                "external-name",
                "--agent-service-external-name",
                "localhost:1"
            ])
            .contains("--route tunnel")
        );
        assert_eq!(
            args(&["--agent-service-external-name", "localhost:4242"])
                .unwrap()
                .agent_service_external_name,
            Some(("localhost".into(), 4242))
        );
        assert!(args(&["--agent-service-external-name", "nope"]).is_err());
        assert!(args(&["--print-manifests"]).unwrap().dry_run);
    }

    #[test]
    fn access_and_tunnel_lines() {
        let line = access_line(&Access {
            method: &http::Method::GET,
            path: "/apis/a.example.com/v1",
            status: http::StatusCode::OK,
            latency: Duration::from_micros(3150),
            user: Some("system:kube-aggregator"),
        });
        assert_eq!(
            line,
            "GET /apis/a.example.com/v1 200 3.1ms system:kube-aggregator"
        );
        let status = |state| TunnelStatus {
            state,
            last_error: Some("port-forward failed".into()),
            connections: 1,
        };
        assert_eq!(tunnel_line(&status(TunnelState::Connecting)), None);
        assert_eq!(
            tunnel_line(&status(TunnelState::Reconnecting {
                attempt: 2,
                retry_in: Duration::from_millis(500)
            }))
            .unwrap(),
            "Tunnel: reconnecting (attempt 2, in 0.5s): port-forward failed"
        );
    }
}
