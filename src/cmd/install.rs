//! `kubectl cozy install`: the server as a Deployment in the cluster.
//!
//! A composer over [`crate::register::install`]: load the kinds, prepare the
//! serving certificate (reused from the cluster while valid, else issued; or
//! cert-manager's), build the objects, then print them (YAML, a JSON List
//! with `-o json`, or `kind.group/name` lines with `-o name`) or, with `--apply`, show the diff against the
//! cluster, ask, and server-side apply them; `--delete` removes what the
//! cluster holds of them, APIServices first. `--dry-run=client` prints
//! without contacting the cluster; `--dry-run=server` has the server check
//! everything and stores nothing. When the cluster can be read, a namespace
//! that exists and is not the install's is left out of all of these (and
//! left as it is), `--cert-manager` needs a cluster with cert-manager and
//! `--service-monitor` and `--prometheus-rules` one with the Prometheus
//! Operator ([`check_operators`]).
//! See `docs/install.md`.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;

use clap::{Args, ValueEnum, ValueHint};

use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::Registry;
use crate::output::OutputFormat;
use crate::register::install::{
    self, Certificates, DEFAULT_NAMESPACE, DEFAULT_REPLICAS, InstallSpec, apply, kinds, monitoring,
    tls,
};

/// `--dry-run` modes, as kubectl's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    /// Print the objects; contact no cluster (certificates are new)
    Client,
    /// Send everything to the server as a dry run (with --apply: the diff, then a checked apply that stores nothing)
    Server,
}

/// The `-o` formats `install` prints (yaml, the default, is what `--apply`
/// would send).
pub const OUTPUT_FORMATS: &[OutputFormat] =
    &[OutputFormat::Yaml, OutputFormat::Json, OutputFormat::Name];

/// Arguments of `kubectl cozy install`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  # Print the install (namespace kubectl-cozy, 2 replicas); apply it with kubectl
  kubectl cozy install --kinds ./kinds | kubectl apply --server-side -f -

  # Show the diff against the cluster, ask, then server-side apply
  kubectl cozy install --kinds ./kinds --apply

  # Check everything with the server, store nothing
  kubectl cozy install --kinds ./kinds --apply --dry-run=server

  # Certificates from cert-manager instead of a generated Secret
  kubectl cozy install --kinds ./kinds --cert-manager -n cozy-api --replicas 3 --apply --yes

  # Have the Prometheus Operator scrape /metrics and alert (kube-prometheus-stack selects by its release label)
  kubectl cozy install --kinds ./kinds --service-monitor release=kube-prometheus-stack \
    --prometheus-rules release=kube-prometheus-stack --apply

  # Remove it again: APIServices first (nothing is left to stall namespace deletion)
  kubectl cozy install --kinds ./kinds --delete

The install's namespace is -n NAME; without it, kubectl-cozy (not the context's namespace).")]
pub struct InstallArgs {
    /// Kind definitions: a file, or a directory of YAML files (subdirectories too; shipped as a ConfigMap)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath)]
    pub kinds: PathBuf,

    /// Number of server replicas (each keeps one HelmRelease watch)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_REPLICAS, value_parser = clap::value_parser!(i32).range(1..=100))]
    pub replicas: i32,

    /// The server's image
    #[arg(long, value_name = "IMAGE", default_value = crate::version::IMAGE)]
    pub image: String,

    /// Take the serving certificate from cert-manager (Issuers and Certificates; caBundle injected)
    #[arg(long)]
    pub cert_manager: bool,

    /// Write HelmReleases as the requesting user (impersonation rights are granted)
    #[arg(long)]
    pub impersonate: bool,

    /// Add a Prometheus Operator ServiceMonitor for /metrics, with these labels (key=value,…) besides the install's
    ///
    /// Prometheus scrapes each replica over HTTPS with its own ServiceAccount token, which needs
    /// get on the non-resource URL /metrics (kube-prometheus grants its Prometheus that).
    #[arg(long, value_name = "LABELS", num_args = 0..=1, default_missing_value = "", value_parser = monitoring::parse_labels)]
    pub service_monitor: Option<std::collections::BTreeMap<String, String>>,

    /// With --service-monitor, add a PrometheusRule alerting on the server, with these labels besides the install's
    ///
    /// Alerts: an APIService of the install unavailable for 5 minutes (it stalls namespace deletion cluster-wide;
    /// read from kube-apiserver's own metrics), no replica answering for 5 minutes, a replica's watch cache not
    /// synced for 10 minutes, more than 5% of requests failing for 10 minutes.
    #[arg(long, value_name = "LABELS", num_args = 0..=1, default_missing_value = "", value_parser = monitoring::parse_labels, requires = "service_monitor")]
    pub prometheus_rules: Option<std::collections::BTreeMap<String, String>>,

    /// Server-side apply the objects (after showing the diff and asking)
    #[arg(long)]
    pub apply: bool,

    /// Remove the install (after showing what and asking): its APIServices first, the namespace last
    #[arg(long, conflicts_with_all = ["apply", "dry_run"])]
    pub delete: bool,

    /// client: print without contacting the cluster; server: the server checks, nothing is stored
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1, default_missing_value = "client")]
    pub dry_run: Option<DryRun>,

    /// Apply or delete without asking
    #[arg(short = 'y', long)]
    pub yes: bool,

    /// With --apply, how long to wait for the Deployment before registering APIServices that are new (0: no limit)
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::cli::parse_request_timeout, allow_hyphen_values = true)]
    pub timeout: std::time::Duration,

    /// Field manager of the server-side apply
    #[arg(long, value_name = "NAME", default_value = "kubectl-cozy")]
    pub field_manager: String,
}

impl InstallArgs {
    /// Whether the command changes the cluster or has the server check the
    /// install (`--apply`, `--dry-run=server`), rather than printing it.
    fn to_cluster(&self) -> bool {
        self.apply || self.dry_run == Some(DryRun::Server)
    }
}

/// Runs `install`.
pub async fn run(args: InstallArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let format = ctx.output_in(OutputFormat::Yaml, OUTPUT_FORMATS, "install")?;
    if args.apply && args.dry_run == Some(DryRun::Client) {
        return Err(CliError::Usage(
            "--apply talks to the cluster: use --dry-run=server to check without storing, or drop --apply to print"
                .into(),
        ));
    }
    let namespace = ctx
        .global()
        .namespace
        .clone()
        .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
    let registry = Registry::from_path(&args.kinds)
        .map_err(|e| CliError::other("load kind definitions", e))?;
    let snapshot = registry.snapshot();
    if snapshot.kinds().is_empty() {
        return Err(CliError::Usage(format!(
            "no kinds in {}",
            args.kinds.display()
        )));
    }
    for warning in snapshot.warnings() {
        tracing::warn!("{warning}");
    }
    let kind_files =
        kinds::files(&args.kinds).map_err(|e| CliError::other("ship the kind definitions", e))?;
    let client = connect(&args, ctx).await?;
    // Whether the cluster answered (printing goes on without it).
    let (certificates, cluster_answered) =
        certificates(&args, ctx, client.as_ref(), &namespace).await?;
    let spec = InstallSpec {
        namespace,
        image: args.image.clone(),
        replicas: args.replicas,
        impersonate: args.impersonate,
        kinds: snapshot
            .kinds()
            .iter()
            .map(|k| k.resolved.clone())
            .collect(),
        kind_files,
        certificates,
        service_monitor: args.service_monitor.clone(),
        prometheus_rules: args.prometheus_rules.clone(),
    };
    let mut objects = install::manifests(&spec);
    if args.delete {
        // Whichever way the certificates were made: cert-manager's objects
        // too, and the ServiceMonitor and PrometheusRule whether asked for
        // or not (the ones the cluster lacks are skipped).
        if !args.cert_manager {
            objects.extend(tls::cert_manager(&spec));
        }
        if args.service_monitor.is_none() {
            objects.push(monitoring::service_monitor(&spec, &Default::default()));
        }
        if args.prometheus_rules.is_none() {
            objects.push(monitoring::prometheus_rule(&spec, &Default::default()));
        }
        let Some(client) = client else {
            return Err(CliError::Usage("--delete needs the cluster".into()));
        };
        return delete_objects(&args, &client, &objects, &spec).await;
    }
    // The cluster's own namespaces are never the install's: known without
    // asking the cluster, so left out when it is not asked (`--dry-run=client`,
    // no kubeconfig, unreachable) too.
    let system_namespace = install::namespace::is_system(&spec.namespace);
    if system_namespace {
        eprintln!("{}", install::namespace::left_as_it_is(&spec.namespace));
        objects = install::namespace::without_namespace(objects);
    }
    if let Some(client) = client.as_ref().filter(|_| cluster_answered) {
        if args.cert_manager {
            check_operators(&args, client, &[&CERT_MANAGER]).await?;
        }
        // One discovery request for both of the Prometheus Operator's kinds.
        let prometheus: Vec<&Operator> = [
            (args.service_monitor.is_some(), &PROMETHEUS_OPERATOR),
            (args.prometheus_rules.is_some(), &PROMETHEUS_RULES),
        ]
        .into_iter()
        .filter_map(|(wanted, operator)| wanted.then_some(operator))
        .collect();
        check_operators(&args, client, &prometheus).await?;
        if !system_namespace {
            objects = check_namespace(&args, client, &spec, objects).await?;
        }
        check_claims(&args, client, &spec).await?;
    }
    match (args.apply, client) {
        (true, Some(client)) => apply_objects(&args, &client, &objects, &spec).await,
        (false, Some(client)) if args.dry_run == Some(DryRun::Server) => {
            let checked = apply::preview(&client, &objects, &args.field_manager)
                .await
                .map_err(|e| CliError::other("server dry run", e))?;
            print(ctx, format, &objects)?;
            let unchecked = checked.iter().filter(|c| c.unchecked).count();
            eprintln!(
                "The server accepted {} objects (dry run: nothing stored){}",
                checked.len() - unchecked,
                if unchecked > 0 {
                    format!(
                        "; {unchecked} not checked: namespace {} does not exist yet",
                        spec.namespace
                    )
                } else {
                    String::new()
                }
            );
            Ok(ExitStatus::Success)
        }
        _ => {
            if matches!(spec.certificates, Certificates::Generated(_))
                && format != OutputFormat::Name
            {
                eprintln!(
                    "Note: the output holds private keys (Secrets {} and {}): keep it out of Git unless \
                     encrypted (SOPS, sealed-secrets), or use --cert-manager, which keeps the keys in the cluster",
                    tls::CA_SECRET,
                    tls::SERVING_SECRET
                );
            }
            print(ctx, format, &objects)
        }
    }
}

/// The cluster's client, checked with a first request (so that a wrong
/// address is named as such): none with `--dry-run=client`. Printing goes
/// on without a cluster, saying once why (then nothing is read from it:
/// the certificates are new, the namespace is printed).
async fn connect(args: &InstallArgs, ctx: &Ctx) -> Result<Option<kube::Client>, CliError> {
    if args.dry_run == Some(DryRun::Client) {
        return Ok(None);
    }
    let printing = !(args.to_cluster() || args.delete);
    let client = match ctx.client().await {
        Ok(client) => client,
        Err(e) if printing => {
            eprintln!("Note: no cluster to read certificates from ({e}); printing new ones");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let server = ctx.server_url().unwrap_or_default();
    match client.apiserver_version().await {
        Ok(info) if crate::version::is_kubectl_cozy_server(&info.git_version) => {
            Err(CliError::Usage(format!(
                "{server} is a kubectl-cozy standalone server (serve --standalone), not a cluster: it already \
                 serves the kinds and has no Deployments to install into; choose a cluster's context \
                 (--context, --kubeconfig), or --dry-run=client to print the install"
            )))
        }
        Ok(_) => Ok(Some(client)),
        Err(source) if printing => {
            let why = crate::cli::unreachable_note(&source, Some(&server)).unwrap_or_else(|| {
                let err = CliError::first_request_failed(server, "GET /version", source);
                crate::error_chain::error_chain(&err)
            });
            eprintln!(
                "Note: {why}; printing the install without reading the cluster{}",
                if args.cert_manager {
                    ""
                } else {
                    " (new certificates)"
                }
            );
            Ok(None)
        }
        Err(source) => Err(CliError::first_request_failed(
            server,
            "GET /version",
            source,
        )),
    }
}

/// Where the serving certificate comes from: cert-manager, or certificates
/// made here, reusing the cluster's Secrets while valid (`--delete` only
/// needs their names, so it reads nothing and says nothing of them). Also
/// whether the cluster answered: printing goes on, with new certificates,
/// when it cannot be read.
async fn certificates(
    args: &InstallArgs,
    ctx: &Ctx,
    client: Option<&kube::Client>,
    namespace: &str,
) -> Result<(Certificates, bool), CliError> {
    if args.cert_manager {
        return Ok((Certificates::CertManager, client.is_some()));
    }
    let mut answered = client.is_some();
    let existing = match client.filter(|_| !args.delete) {
        Some(c) => match apply::read_certificates(c, namespace).await {
            Ok(found) => found,
            Err(e) if args.to_cluster() => {
                return Err(CliError::other("read the install's Secrets", e));
            }
            Err(e) => {
                let why = crate::cli::unreachable_note(&e, ctx.server_url().as_deref())
                    .unwrap_or_else(|| {
                        format!(
                            "could not read the install's Secrets ({})",
                            crate::error_chain::error_chain(&e)
                        )
                    });
                eprintln!("Note: {why}; printing new certificates");
                answered = false;
                (None, None)
            }
        },
        None => (None, None),
    };
    let generated = tls::prepare(
        existing.0.as_ref(),
        existing.1.as_ref(),
        namespace,
        jiff::Timestamp::now(),
    )
    .map_err(|e| CliError::other("prepare the serving certificate", e))?;
    if answered && !args.delete {
        for note in &generated.notes {
            eprintln!("Certificates: {note}");
        }
    }
    Ok((Certificates::Generated(generated), answered))
}

/// An operator whose kinds an option of the install needs.
struct Operator {
    /// Its name, as its users say it.
    name: &'static str,
    /// The option that needs it.
    option: &'static str,
    /// The group/version of its kinds.
    api: &'static str,
    /// The resources the install creates, and as the message names them.
    plurals: &'static [&'static str],
    kinds: &'static str,
    /// Where to read how to install it.
    docs: &'static str,
    /// How the install goes on without the option.
    without: &'static str,
}

/// `--cert-manager`'s.
const CERT_MANAGER: Operator = Operator {
    name: "cert-manager",
    option: "--cert-manager",
    api: tls::CERT_MANAGER_API,
    plurals: &["issuers", "certificates"],
    kinds: "Issuers or Certificates",
    docs: "https://cert-manager.io/docs/installation/",
    without: " to have the certificates made here",
};

/// `--service-monitor`'s.
const PROMETHEUS_OPERATOR: Operator = Operator {
    name: "the Prometheus Operator",
    option: "--service-monitor",
    api: monitoring::PROMETHEUS_OPERATOR_API,
    plurals: &["servicemonitors"],
    kinds: "ServiceMonitors",
    docs: "https://prometheus-operator.dev/docs/getting-started/installation/",
    without: " to scrape /metrics another way",
};

/// `--prometheus-rules`'.
const PROMETHEUS_RULES: Operator = Operator {
    plurals: &["prometheusrules"],
    kinds: "PrometheusRules",
    option: "--prometheus-rules",
    without: " to alert another way",
    ..PROMETHEUS_OPERATOR
};

impl Operator {
    /// What is wrong when the cluster lacks the operator, and how to go on.
    fn missing(&self, fix: &str) -> String {
        format!(
            "{} is not installed: the cluster serves no {} {}; {fix}",
            self.name, self.api, self.kinds
        )
    }
}

/// With options that need operators of one API (`needed`; none: nothing
/// to check): refuses to apply (or to check with the server) an install
/// into a cluster without one of them, whose objects it could not take;
/// when printing, says so on stderr. The API's resources are asked once.
async fn check_operators(
    args: &InstallArgs,
    client: &kube::Client,
    needed: &[&Operator],
) -> Result<(), CliError> {
    let Some(first) = needed.first() else {
        return Ok(());
    };
    let served = match install::served_resources(client, first.api).await {
        Ok(served) => served,
        Err(e) if args.to_cluster() => {
            return Err(CliError::other(
                format!("read the cluster's {} API", first.api),
                e,
            ));
        }
        Err(e) => {
            eprintln!(
                "Note: could not tell whether the cluster has {} ({})",
                first.name,
                crate::error_chain::error_chain(&e)
            );
            return Ok(());
        }
    };
    for operator in needed {
        if operator
            .plurals
            .iter()
            .all(|p| served.iter().any(|s| s == p))
        {
            continue;
        }
        if args.to_cluster() {
            return Err(CliError::other(
                format!("install with {}", operator.option),
                operator.missing(&format!(
                    "install {} first ({}), or drop {}{}",
                    operator.name, operator.docs, operator.option, operator.without
                )),
            ));
        }
        eprintln!(
            "Warning: {}",
            operator.missing(&format!(
                "install it before applying this output, or drop {}",
                operator.option
            ))
        );
    }
    Ok(())
}

/// Leaves the install's namespace out of `objects` when it exists and is
/// not the install's (it is left as it is, which stderr says). When it
/// cannot be read, applying stops; printing keeps it.
async fn check_namespace(
    args: &InstallArgs,
    client: &kube::Client,
    spec: &InstallSpec,
    objects: Vec<serde_json::Value>,
) -> Result<Vec<serde_json::Value>, CliError> {
    use install::namespace::{self, Held};
    match namespace::read(client, &spec.namespace).await {
        Ok(Held::Foreign) => {
            eprintln!("{}", namespace::left_as_it_is(&spec.namespace));
            Ok(namespace::without_namespace(objects))
        }
        Ok(Held::Missing | Held::Ours) => Ok(objects),
        Err(e) if args.to_cluster() => Err(CliError::other(
            format!("read namespace {}", spec.namespace),
            e,
        )),
        Err(e) => {
            eprintln!(
                "Note: could not read namespace {} ({}); printing its Namespace object",
                spec.namespace,
                crate::error_chain::error_chain(&e)
            );
            Ok(objects)
        }
    }
}

/// Refuses to apply (or to check with the server) an install whose
/// APIServices another server holds; when printing, says so on stderr, as
/// `kubectl apply` of the output would repoint them.
async fn check_claims(
    args: &InstallArgs,
    client: &kube::Client,
    spec: &InstallSpec,
) -> Result<(), CliError> {
    let to_cluster = args.to_cluster();
    match install::claim::refusals(client, spec).await {
        Ok(refusals) if refusals.is_empty() => Ok(()),
        Ok(refusals) if to_cluster => Err(CliError::other(
            format!("install into namespace {}", spec.namespace),
            refusals.join("\n"),
        )),
        Ok(refusals) => {
            for refusal in refusals {
                eprintln!("Warning: {refusal}; applying this output would repoint it");
            }
            Ok(())
        }
        Err(e) if to_cluster => Err(CliError::other("read the install's APIServices", e)),
        // Printing: the Secrets were read, so this is a passing fault; the
        // output does not depend on it.
        Err(e) => {
            eprintln!("Note: could not read the install's APIServices ({e})");
            Ok(())
        }
    }
}

fn print(
    ctx: &Ctx,
    format: OutputFormat,
    objects: &[serde_json::Value],
) -> Result<ExitStatus, CliError> {
    crate::output::write_objects(&mut ctx.stdout(), format, objects)
        .map_err(|e| CliError::io("write the objects", e))?;
    Ok(ExitStatus::Success)
}

/// Asks `prompt` on the terminal unless `--yes`; without a terminal, `--yes`
/// is required (`flag` names the mode in the message).
fn confirmed(yes: bool, flag: &str, prompt: String) -> Result<bool, CliError> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Err(CliError::Usage(format!(
            "{flag} asks before changing the cluster: pass --yes when not on a terminal"
        )));
    }
    dialoguer::Confirm::with_theme(&dialoguer::theme::SimpleTheme)
        .wait_for_newline(true)
        .with_prompt(prompt)
        .default(false)
        .interact()
        .map_err(|e| CliError::other("ask for confirmation", e))
}

/// `--delete`: what of the install the cluster holds, the question, the
/// deletion (APIServices first).
async fn delete_objects(
    args: &InstallArgs,
    client: &kube::Client,
    objects: &[serde_json::Value],
    spec: &InstallSpec,
) -> Result<ExitStatus, CliError> {
    use install::remove::{self, Removal};
    let plan = remove::plan(client, objects)
        .await
        .map_err(|e| CliError::other("read the install", e))?;
    let to_delete = plan
        .iter()
        .filter(|r| matches!(r, Removal::Delete(_)))
        .count();
    for removal in &plan {
        match removal {
            Removal::Delete(object) => eprintln!("delete {}", apply::describe(object)),
            Removal::Keep { object, why } => eprintln!("keep   {object}: {why}"),
            Removal::Going { object, why } => eprintln!("going  {object}: {why}"),
        }
    }
    if to_delete == 0 {
        let going = plan.iter().any(|r| matches!(r, Removal::Going { .. }));
        eprintln!(
            "Nothing to delete: the cluster holds no object of an install in namespace {}{}.",
            spec.namespace,
            if going {
                " that is not already being deleted"
            } else {
                ""
            }
        );
        return Ok(ExitStatus::Success);
    }
    let prompt = format!(
        "Delete these {to_delete} objects (APIServices first) from namespace {} and the cluster-wide ones?",
        spec.namespace
    );
    if !confirmed(args.yes, "--delete", prompt)? {
        eprintln!("Nothing deleted.");
        return Ok(ExitStatus::Error);
    }
    let deleted = remove::delete(client, &plan, |object| eprintln!("{object} deleted"))
        .await
        .map_err(|e| CliError::other("delete the install", e))?;
    eprintln!("Deleted {deleted} objects.");
    Ok(ExitStatus::Success)
}

/// Server-side applies `objects` (each with its previewed change) and says
/// each one that changes, as `Kind ns/name created|changed`.
async fn apply_and_say(
    client: &kube::Client,
    objects: &[(&serde_json::Value, &apply::Change)],
    field_manager: &str,
) -> Result<(), CliError> {
    let values: Vec<serde_json::Value> = objects.iter().map(|(o, _)| (*o).clone()).collect();
    let applied = apply::apply(client, &values, field_manager, false)
        .await
        .map_err(|e| CliError::other("apply", e))?;
    for ((_, change), name) in objects.iter().zip(&applied) {
        if change.changes() {
            eprintln!("{name} {}", change.verb());
        }
    }
    Ok(())
}

/// `--apply`: the diff, the question, the server-side apply.
async fn apply_objects(
    args: &InstallArgs,
    client: &kube::Client,
    objects: &[serde_json::Value],
    spec: &InstallSpec,
) -> Result<ExitStatus, CliError> {
    let changes = apply::preview(client, objects, &args.field_manager)
        .await
        .map_err(|e| CliError::other("compare with the cluster", e))?;
    let mut out = std::io::stdout().lock();
    let write = |out: &mut std::io::StdoutLock<'_>, text: &str| {
        out.write_all(text.as_bytes())
            .map_err(|e| CliError::io("write the diff", e))
    };
    for change in &changes {
        write(&mut out, &change.diff())?;
    }
    let count = |verb: &str| changes.iter().filter(|c| c.verb() == verb).count();
    let unchecked = changes.iter().filter(|c| c.unchecked).count();
    eprintln!(
        "{} to create, {} to change, {} unchanged{}",
        count("created"),
        count("changed"),
        count("unchanged"),
        if unchecked > 0 {
            format!(
                " ({unchecked} shown as sent: their namespace does not exist yet, so the server could not dry-run them)"
            )
        } else {
            String::new()
        }
    );
    drop(out);
    if !changes.iter().any(apply::Change::changes) {
        eprintln!("Nothing to apply.");
        return Ok(ExitStatus::Success);
    }
    if args.dry_run == Some(DryRun::Server) {
        eprintln!("Dry run (server): nothing was stored.");
        return Ok(ExitStatus::Success);
    }
    let prompt = format!(
        "Apply these changes to namespace {} and the cluster-wide objects?",
        spec.namespace
    );
    if !confirmed(args.yes, "--apply", prompt)? {
        eprintln!("Nothing applied.");
        return Ok(ExitStatus::Error);
    }
    // APIServices that are new wait for a pod to answer them: registered
    // before, they would be unavailable meanwhile, stalling discovery and
    // every namespace deletion in the cluster.
    let (held, now): (Vec<_>, Vec<_>) = objects
        .iter()
        .zip(&changes)
        .partition(|(object, change)| object["kind"] == "APIService" && change.verb() == "created");
    apply_and_say(client, &now, &args.field_manager).await?;
    let names: Vec<String> = spec
        .served()
        .iter()
        .map(|gv| gv.api_service_name())
        .collect();
    if !held.is_empty() {
        let spinner = crate::output::progress::spinner(format!(
            "waiting for deployment/{} before registering the APIServices",
            install::NAME
        ));
        let limit = (!args.timeout.is_zero()).then_some(args.timeout);
        let waited = install::rollout::wait_available(client, &spec.namespace, limit, |how_far| {
            spinner.set_message(format!(
                "waiting for deployment/{} before registering the APIServices: {how_far}",
                install::NAME
            ));
        })
        .await;
        spinner.finish_and_clear();
        let held_names: Vec<&str> = held
            .iter()
            .filter_map(|(o, _)| o["metadata"]["name"].as_str())
            .collect();
        match waited {
            Ok(()) => {}
            Err(err @ install::rollout::RolloutError::Read { .. }) => {
                return Err(CliError::other("register the APIServices", err).with_hint(format!(
                    "the APIServices {} were not registered; run the same `kubectl cozy install --apply` again",
                    held_names.join(", ")
                )));
            }
            Err(err) => {
                return Err(CliError::other("register the APIServices", err).with_hint(format!(
                    "the APIServices {} were not registered: with no pod to answer them they would stall \
                     discovery and every namespace deletion in the cluster. See why with\n  kubectl -n {} \
                     describe deployment/{}\nthen run the same `kubectl cozy install --apply` again",
                    held_names.join(", "),
                    spec.namespace,
                    install::NAME
                )));
            }
        }
        apply_and_say(client, &held, &args.field_manager).await?;
    }
    eprintln!(
        "Applied: {} created, {} changed, {} unchanged. Follow the rollout and the registration with:\n  \
         kubectl -n {} rollout status deployment/{}\n  kubectl get apiservice {}",
        count("created"),
        count("changed"),
        count("unchanged"),
        spec.namespace,
        install::NAME,
        names.join(" ")
    );
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        install: InstallArgs,
    }

    #[test]
    fn flags() {
        let parse = |line: &[&str]| {
            let mut argv = vec!["install", "--kinds", "k"];
            argv.extend_from_slice(line);
            Cli::try_parse_from(argv).map(|c| c.install)
        };
        let a = parse(&[]).unwrap();
        assert_eq!(a.replicas, 2);
        assert_eq!(a.image, crate::version::IMAGE);
        assert_eq!(a.dry_run, None);
        assert_eq!(parse(&["--dry-run"]).unwrap().dry_run, Some(DryRun::Client));
        assert_eq!(
            parse(&["--dry-run=server"]).unwrap().dry_run,
            Some(DryRun::Server)
        );
        assert!(parse(&["--replicas", "0"]).is_err());
        assert!(parse(&["--dry-run=sometimes"]).is_err());
    }
}
