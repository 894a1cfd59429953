//! The flags of `kubectl cozy serve`, and how they must fit together.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args, ValueEnum, ValueHint};

use crate::cli::CliError;
use crate::kinds::KindSource;
use crate::register::manifests::RbacSubject;
use crate::register::{agent, route, session};

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
#[command(group = ArgGroup::new("source").required(true).args(["kinds", "charts"]))]
#[command(after_help = "\
Examples:
  # Serve the kinds in the current cluster (through a tunnel), until Ctrl-C
  kubectl cozy serve --kinds ./kinds
  kubectl get postgreses

  # A local cluster that can reach this machine (kind, minikube, k3d): no agent pod
  kubectl cozy serve --kinds ./kinds --route external-name

  # Take over a group another server (or session) serves; it is given back on exit
  kubectl cozy serve --kinds ./kinds --takeover

  # A chart author's inner loop: serve charts as kinds, re-scaffolded when they change
  kubectl cozy serve --charts ./charts

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
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath)]
    pub kinds: Option<PathBuf>,

    /// Serve Helm charts as kinds, scaffolded in memory: a chart directory, or a directory of charts and .tgz files (re-scaffolded on change)
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub charts: Option<PathBuf>,

    /// Address to listen on (default: 127.0.0.1:6443 standalone, 127.0.0.1:<any> with the tunnel, 0.0.0.0:<any> for external-name)
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
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

    /// Take over group/versions another server or session serves; restored byte for byte on exit (deleted instead if their own serve session has ended)
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

    /// Print every object the session would create (YAML; -o json a List, -o name names) and create nothing
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

    /// Where to write the kubeconfig (standalone; merged into an existing one, whose other contexts stay; default: ~/.config/kubectl-cozy/standalone.kubeconfig)
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

    /// Print the RBAC objects the server and its users need (YAML, or -o json|name) and exit
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

/// Where the kinds come from: `--kinds` or `--charts`.
pub(super) fn kind_source(args: &ServeArgs) -> Result<KindSource, CliError> {
    match (&args.kinds, &args.charts) {
        (Some(path), None) => Ok(KindSource::Definitions(path.clone())),
        (None, Some(dir)) => Ok(KindSource::Charts(dir.clone())),
        _ => Err(CliError::Usage(
            "give one of --kinds (definitions) and --charts (Helm charts)".into(),
        )),
    }
}

/// The route asked for, checked against the other flags.
pub(super) fn route_of(args: &ServeArgs) -> Result<RouteArg, CliError> {
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

/// Validates `--rbac-subject` (kept as text: `ServeArgs` stays small).
/// `--listen`: `IP:PORT`, or `HOST:PORT` with a host name that resolves here
/// (`localhost:6443`); of a name's addresses, the first IPv4 one.
fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let usage = "expected ADDRESS:PORT, e.g. 127.0.0.1:6443, [::1]:6443 or localhost:6443";
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(usage.into());
    };
    let port: u16 = port.parse().map_err(|_| usage.to_owned())?;
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|e| format!("{host} does not resolve: {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("{host} has no address"))
}

pub(super) fn parse_rbac_subject(text: &str) -> Result<String, String> {
    RbacSubject::parse(text).map(|_| text.to_owned())
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
    fn listen_takes_an_address_or_a_host_name() {
        let listen = |a: &str| args(&["--listen", a]).map(|s| s.listen.unwrap());
        assert_eq!(
            listen("127.0.0.1:6443").unwrap(),
            "127.0.0.1:6443".parse().unwrap()
        );
        assert_eq!(listen("[::1]:7000").unwrap(), "[::1]:7000".parse().unwrap());
        let local = listen("localhost:6480").unwrap();
        assert!(local.ip().is_loopback() && local.port() == 6480, "{local}");
        assert!(listen("localhost").unwrap_err().contains("ADDRESS:PORT"));
        assert!(
            listen("localhost:http")
                .unwrap_err()
                .contains("ADDRESS:PORT")
        );
    }
}
