//! The flags of `kubectl cozy serve`, and how they must fit together.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args, ValueEnum, ValueHint};

use crate::cli::{CliError, GlobalArgs};
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

    /// Kind definitions: a file, or a directory of YAML files (subdirectories too; reloaded on change)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath)]
    pub kinds: Option<PathBuf>,

    /// Serve Helm charts as kinds, scaffolded in memory: a chart directory or packaged chart (.tgz), or a directory of charts and .tgz files (re-scaffolded on change)
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub charts: Option<PathBuf>,

    /// Address to listen on (default: 127.0.0.1:6443 standalone and --route none, 127.0.0.1:<any> with the tunnel, 0.0.0.0:<any> for external-name, 0.0.0.0:8443 --in-cluster)
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

    /// How long to wait for the APIServices to become Available (0: no limit, until Ctrl-C)
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = crate::cli::parse_request_timeout, allow_hyphen_values = true)]
    pub timeout: Duration,

    /// No access log on stderr (cluster mode; standalone prints none)
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Exit (after cleaning up) when the tunnel drops instead of reconnecting
    #[arg(long)]
    pub exit_on_disconnect: bool,

    /// Start no guard process: a serve killed or crashed is then reaped only by the tunnel agent once its Lease expires, or (external-name route) by the next serve or `doctor --fix`
    #[arg(long)]
    pub no_session_guard: bool,

    /// Print every object the session would create (YAML; -o json a List, -o name names) and create nothing
    #[arg(long, alias = "print-manifests")]
    pub dry_run: bool,

    /// Duration of the session Lease (renewed every third of it)
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = crate::cli::parse_duration, allow_hyphen_values = true)]
    pub lease_duration: Duration,

    /// Test seam: make the Service an ExternalName to HOST and the APIService port PORT (the test plane cannot route to pods)
    #[arg(long, value_name = "HOST:PORT", hide = true, value_parser = route::parse_host_port)]
    pub agent_service_external_name: Option<(String, u16)>,

    /// Embedded store file (standalone; default: <state dir>/standalone.sqlite)
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub data: Option<PathBuf>,

    /// Where to write the kubeconfig (standalone; merged into an existing one, whose other contexts stay; default: ~/.config/kubectl-cozy/standalone.kubeconfig, or under $XDG_CONFIG_HOME)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub write_kubeconfig: Option<PathBuf>,

    /// Directory for CAs, certificates and the standalone store (default: ~/.local/state/kubectl-cozy, or under $XDG_STATE_HOME)
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

    /// Time to let requests finish on shutdown (0: stop at once)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::cli::parse_duration, allow_hyphen_values = true)]
    pub drain_timeout: Duration,

    /// The flags given on the command line (clap ids), not left to their
    /// defaults: what [`check_mode_flags`] judges.
    #[arg(skip)]
    pub given: BTreeSet<String>,
}

impl ServeArgs {
    /// Notes which flags `matches` (serve's) got from the command line.
    pub fn note_given(&mut self, matches: &clap::ArgMatches) {
        self.given = matches
            .ids()
            .filter(|id| {
                matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
            })
            .map(|id| id.as_str().to_owned())
            .collect();
    }

    /// The serving certificate and key, PEM, of `--tls-cert-file` and
    /// `--tls-key-file`; `mode` (`--route none`) is the one that needs them,
    /// `what` says what they are there (may be empty). An unreadable file is
    /// named with its flag.
    pub(super) fn tls_files(&self, mode: &str, what: &str) -> Result<(String, String), CliError> {
        let (Some(cert), Some(key)) = (&self.tls_cert_file, &self.tls_key_file) else {
            return Err(CliError::Usage(format!(
                "{mode} needs --tls-cert-file and --tls-key-file{what}"
            )));
        };
        let read = |flag: &str, path: &PathBuf| {
            std::fs::read_to_string(path)
                .map_err(|e| CliError::io(format!("read {flag} {}", path.display()), e))
        };
        Ok((read("--tls-cert-file", cert)?, read("--tls-key-file", key)?))
    }

    /// How long the start may wait for the APIServices: `--timeout`, no
    /// limit for 0 (as `--request-timeout 0`).
    pub(super) fn start_limit(&self) -> Option<Duration> {
        (!self.timeout.is_zero()).then_some(self.timeout)
    }
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

/// Where a flag of serve has an effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Anything but `--standalone`.
    Cluster,
    /// `--standalone` only.
    Standalone,
    /// A session that registers itself (`--route tunnel` or `external-name`),
    /// or prints what it would create.
    Session,
    /// A session through the tunnel, or what it would create.
    Tunnel,
}

impl Scope {
    fn describe(self) -> &'static str {
        match self {
            Scope::Cluster => "cluster mode",
            Scope::Standalone => "--standalone",
            Scope::Session => "a registered session (--route tunnel or external-name)",
            Scope::Tunnel => "--route tunnel",
        }
    }
}

/// Serve's flags that have an effect in some modes only: clap id, flag,
/// where it applies. Given elsewhere, they are refused rather than ignored.
const MODAL_FLAGS: [(&str, &str, Scope); 19] = [
    ("quiet", "-q/--quiet", Scope::Cluster),
    ("route", "--route", Scope::Cluster),
    ("dry_run", "--dry-run", Scope::Cluster),
    ("print_rbac", "--print-rbac", Scope::Cluster),
    ("rbac_subject", "--rbac-subject", Scope::Cluster),
    ("host", "--host", Scope::Cluster),
    ("tls_cert_file", "--tls-cert-file", Scope::Cluster),
    ("tls_key_file", "--tls-key-file", Scope::Cluster),
    ("impersonate", "--impersonate", Scope::Cluster),
    ("session_namespace", "--session-namespace", Scope::Session),
    ("takeover", "--takeover", Scope::Session),
    ("timeout", "--timeout", Scope::Session),
    ("lease_duration", "--lease-duration", Scope::Session),
    ("agent_image", "--agent-image", Scope::Tunnel),
    ("exit_on_disconnect", "--exit-on-disconnect", Scope::Tunnel),
    ("no_session_guard", "--no-session-guard", Scope::Session),
    (
        "agent_service_external_name",
        "--agent-service-external-name",
        Scope::Tunnel,
    ),
    ("data", "--data", Scope::Standalone),
    ("write_kubeconfig", "--write-kubeconfig", Scope::Standalone),
];

/// The mode the flags choose, as [`check_mode_flags`] judges it.
struct Mode {
    standalone: bool,
    in_cluster: bool,
    /// `--dry-run` or `--print-rbac`: prints what a session would create,
    /// so every session flag has its say.
    printing: bool,
    route: RouteArg,
}

impl Mode {
    fn of(args: &ServeArgs) -> Mode {
        Mode {
            standalone: args.standalone,
            in_cluster: args.in_cluster,
            printing: args.dry_run || args.print_rbac,
            route: args.route.unwrap_or(if args.tls_cert_file.is_some() {
                RouteArg::None
            } else {
                RouteArg::Tunnel
            }),
        }
    }

    fn has(&self, scope: Scope) -> bool {
        let registered = !self.in_cluster && self.route != RouteArg::None;
        match scope {
            Scope::Cluster => !self.standalone,
            Scope::Standalone => self.standalone,
            Scope::Session => !self.standalone && (self.printing || registered),
            Scope::Tunnel => {
                !self.standalone
                    && (self.printing || (registered && self.route == RouteArg::Tunnel))
            }
        }
    }

    /// The mode, as `… apply to X, not <this>` says it.
    fn describe(&self, scope: Scope) -> String {
        if self.standalone {
            "--standalone".to_owned()
        } else if scope == Scope::Standalone {
            "cluster mode".to_owned()
        } else if self.in_cluster {
            "--in-cluster".to_owned()
        } else {
            let route = self.route.to_possible_value();
            format!(
                "--route {}",
                route.as_ref().map_or("tunnel", |v| v.get_name())
            )
        }
    }
}

/// Refuses the flags given (`args.given`, and the kubeconfig's global flags
/// in `global`) that have no effect in the mode chosen, naming them:
/// `--takeover and --timeout apply to cluster mode, not --standalone`.
pub(super) fn check_mode_flags(args: &ServeArgs, global: &GlobalArgs) -> Result<(), CliError> {
    let mode = Mode::of(args);
    let mut refused: Vec<(&str, Scope)> = MODAL_FLAGS
        .iter()
        .filter(|(id, _, scope)| args.given.contains(*id) && !mode.has(*scope))
        .map(|(_, flag, scope)| (*flag, *scope))
        .collect();
    // Standalone reads no kubeconfig (it writes one) and sends no request:
    // kubectl passes a plugin none of its own flags, so these were typed
    // for serve. (flag, given, whether it is a kubeconfig's)
    let client_flags = [
        ("--kubeconfig", global.kubeconfig.is_some(), true),
        ("--context", global.context.is_some(), true),
        ("--cluster", global.cluster.is_some(), true),
        ("--user", global.user.is_some(), true),
        ("--request-timeout", global.request_timeout.is_some(), false),
    ];
    let mut reads_kubeconfig = false;
    if mode.standalone {
        for (flag, given, kubeconfig) in client_flags {
            if given {
                refused.push((flag, Scope::Cluster));
                reads_kubeconfig |= kubeconfig;
            }
        }
    }
    let Some(&(_, first)) = refused.first() else {
        return Ok(());
    };
    // Standalone has one contrast, cluster mode: every flag at once.
    let scope = if mode.standalone {
        Scope::Cluster
    } else {
        first
    };
    let flags: Vec<&str> = refused
        .iter()
        .filter(|(_, s)| mode.standalone || *s == scope)
        .map(|(f, _)| *f)
        .collect();
    let verb = if flags.len() == 1 { "applies" } else { "apply" };
    let note = if reads_kubeconfig {
        " (it reads no kubeconfig; it writes its own, --write-kubeconfig PATH)"
    } else {
        ""
    };
    Err(CliError::Usage(format!(
        "{} {verb} to {}, not {}{note}",
        join_and(&flags),
        scope.describe(),
        mode.describe(scope)
    )))
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
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
        use clap::{CommandFactory, FromArgMatches};
        let mut argv = vec!["serve", "--kinds", "k"];
        argv.extend_from_slice(line);
        let matches = Cli::command()
            .try_get_matches_from(argv)
            .map_err(|e| e.to_string())?;
        let mut serve = Cli::from_arg_matches(&matches)
            .map_err(|e| e.to_string())?
            .serve;
        serve.note_given(&matches);
        Ok(serve)
    }

    /// The usage error `check_mode_flags` gives `line`, if any.
    fn mode_error(line: &[&str], global: &GlobalArgs) -> Option<String> {
        check_mode_flags(&args(line).unwrap(), global)
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn an_unreadable_tls_file_is_named_with_its_flag() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("tls.crt");
        std::fs::write(&cert, "cert").unwrap();
        let missing = dir.path().join("nope.key");
        let args = args(&[
            "--tls-cert-file",
            cert.to_str().unwrap(),
            "--tls-key-file",
            missing.to_str().unwrap(),
        ])
        .unwrap();
        let err = crate::error_chain::error_chain(&args.tls_files("--route none", "").unwrap_err());
        assert!(
            err.contains(&format!("read --tls-key-file {}", missing.display())),
            "{err}"
        );
    }

    #[test]
    fn flags_of_another_mode_are_refused_naming_them() {
        let none = GlobalArgs::default();
        let refused = |line: &[&str]| mode_error(line, &none).unwrap_or_default();
        assert_eq!(
            refused(&["--standalone", "--route", "tunnel", "--dry-run"]),
            "--route and --dry-run apply to cluster mode, not --standalone"
        );
        assert_eq!(
            refused(&[
                "--standalone",
                "--takeover",
                "--session-namespace",
                "foo",
                "--exit-on-disconnect",
                "--agent-image",
                "x",
                "--lease-duration",
                "3s",
                "--timeout",
                "5s",
            ]),
            "--session-namespace, --takeover, --timeout, --lease-duration, --agent-image and \
             --exit-on-disconnect apply to cluster mode, not --standalone"
        );
        assert_eq!(
            refused(&["--standalone", "--agent-image", "x"]),
            "--agent-image applies to cluster mode, not --standalone"
        );
        assert_eq!(
            refused(&["--standalone", "--host", "h", "--impersonate"]),
            "--host and --impersonate apply to cluster mode, not --standalone"
        );
        assert_eq!(
            refused(&["--route", "external-name", "--exit-on-disconnect"]),
            "--exit-on-disconnect applies to --route tunnel, not --route external-name"
        );
        assert_eq!(
            refused(&[
                "--tls-cert-file",
                "c",
                "--tls-key-file",
                "k",
                "--timeout",
                "0"
            ]),
            "--timeout applies to a registered session (--route tunnel or external-name), not --route none"
        );
        assert_eq!(
            refused(&["--data", "d.sqlite", "--write-kubeconfig", "k"]),
            "--data and --write-kubeconfig apply to --standalone, not cluster mode"
        );
        let global = GlobalArgs {
            context: Some("kind".into()),
            kubeconfig: Some("k".into()),
            ..GlobalArgs::default()
        };
        assert_eq!(
            mode_error(&["--standalone"], &global).unwrap(),
            "--kubeconfig and --context apply to cluster mode, not --standalone (it reads no \
             kubeconfig; it writes its own, --write-kubeconfig PATH)"
        );
        let timeout = GlobalArgs {
            request_timeout: Some(std::time::Duration::from_secs(5)),
            ..GlobalArgs::default()
        };
        assert_eq!(
            mode_error(&["--standalone"], &timeout).unwrap(),
            "--request-timeout applies to cluster mode, not --standalone"
        );
        // Standalone prints no access log for -q to quiet.
        assert_eq!(
            mode_error(&["--standalone", "-q"], &none).unwrap(),
            "-q/--quiet applies to cluster mode, not --standalone"
        );
        // What each mode uses passes; defaults are never "given"; printing
        // what a session would create takes every session flag.
        for ok in [
            &[
                "--standalone",
                "--listen",
                "127.0.0.1:0",
                "--data",
                "d",
                "--state-dir",
                "s",
            ][..],
            &[
                "--route",
                "external-name",
                "--host",
                "h",
                "--takeover",
                "--timeout",
                "0",
            ],
            &[
                "--exit-on-disconnect",
                "--agent-image",
                "x",
                "--lease-duration",
                "5s",
            ],
            &[
                "--route",
                "external-name",
                "--dry-run",
                "--agent-image",
                "x",
            ],
            &[
                "--print-rbac",
                "--rbac-subject",
                "user:bob",
                "--impersonate",
            ],
            &[
                "--in-cluster",
                "--tls-cert-file",
                "c",
                "--tls-key-file",
                "k",
            ],
        ] {
            assert_eq!(mode_error(ok, &none), None, "{ok:?}");
        }
        assert_eq!(mode_error(&["--route", "tunnel"], &global), None);
    }

    #[test]
    fn timeout_zero_is_no_limit() {
        assert_eq!(args(&["--timeout", "0"]).unwrap().start_limit(), None);
        assert_eq!(
            args(&[]).unwrap().start_limit(),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            args(&["--timeout", "90s"]).unwrap().start_limit(),
            Some(Duration::from_secs(90))
        );
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
