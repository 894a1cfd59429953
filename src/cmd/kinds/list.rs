//! `kubectl cozy kinds list`: the kinds a definition set serves (`--kinds
//! PATH`, loaded and checked as `serve` loads them, CEL rules compiled, its
//! warnings logged), or the kinds a live cluster serves in a group (discovery, enriched
//! with ApplicationDefinitions where the cluster has them, else with the chart
//! and release prefix a kubectl-cozy server publishes in its OpenAPI).

use std::path::PathBuf;

use clap::{Args, ValueHint};
use serde::Serialize;

use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::definition::{DEFAULT_GROUP, KindDefinition, ResolvedKind};
use crate::kinds::{Snapshot, application_definitions, load};
use crate::output::{self, OutputFormat, Rows};

/// The `-o` formats `kinds list` prints: all of them.
pub const OUTPUT_FORMATS: &[OutputFormat] = &[
    OutputFormat::Table,
    OutputFormat::Wide,
    OutputFormat::Json,
    OutputFormat::Yaml,
    OutputFormat::Name,
    OutputFormat::JsonPath,
    OutputFormat::JsonPathFile,
    OutputFormat::JsonPathAsJson,
    OutputFormat::GoTemplate,
    OutputFormat::GoTemplateFile,
    OutputFormat::CustomColumns,
    OutputFormat::CustomColumnsFile,
];

/// Arguments of `kubectl cozy kinds list`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  # Kinds defined in a directory of definitions
  kubectl cozy kinds list --kinds examples/kinds

  # Kinds the current cluster serves in apps.cozystack.io
  kubectl cozy kinds list

  # Everything about them (a List whose items carry each full definition), as YAML
  kubectl cozy kinds list --kinds examples/kinds -o yaml

  # The plural of every kind, one per line
  kubectl cozy kinds list --kinds examples/kinds -o jsonpath='{range .items[*]}{.plural}{\"\\n\"}{end}'")]
pub struct ListArgs {
    /// Kind definitions: a file, or a directory of YAML files (subdirectories too; default: ask the cluster)
    #[arg(long, value_name = "PATH", value_hint = ValueHint::AnyPath)]
    pub kinds: Option<PathBuf>,

    /// API group to discover in the cluster
    #[arg(long, value_name = "GROUP", default_value = DEFAULT_GROUP, conflicts_with = "kinds")]
    pub group: String,
}

/// What `-o json|yaml` prints: a `List`, as `kubectl get -o json` does.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ListDocument<'a> {
    api_version: &'static str,
    kind: &'static str,
    items: &'a [Listed],
}

/// One listed kind: the table's fields, and the whole definition where it is
/// known (local files, or the cluster's ApplicationDefinitions).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    kind: String,
    plural: String,
    singular: String,
    short_names: Vec<String>,
    categories: Vec<String>,
    group_version: String,
    chart: Option<String>,
    chart_version: Option<String>,
    release_prefix: Option<String>,
    source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    definition: Option<KindDefinition>,
}

impl Listed {
    fn from_resolved(k: &ResolvedKind) -> Listed {
        let d = &k.definition;
        let (chart, chart_version) = match (&d.release.chart, &d.release.chart_ref) {
            (Some(c), _) => (Some(c.name.clone()), c.version.clone()),
            (None, Some(r)) => (Some(format!("{}/{}", r.kind, r.name)), None),
            _ => (None, None),
        };
        Listed {
            kind: d.kind.clone(),
            plural: d.plural.clone(),
            singular: d.singular.clone(),
            short_names: d.short_names.clone(),
            categories: d.categories.clone(),
            group_version: k.group_version(),
            chart,
            chart_version,
            release_prefix: Some(k.release_prefix.clone()),
            source: k.source.clone(),
            definition: Some(d.clone()),
        }
    }
}

/// Runs `kinds list`.
pub async fn run(args: ListArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let format = ctx.output_in(OutputFormat::Table, OUTPUT_FORMATS, "kinds list")?;
    let (listed, warnings) = match &args.kinds {
        Some(path) => {
            // As `serve` loads them: schemas and CEL rules compiled, so that
            // what lists here also serves.
            let snapshot = load::load_path(path)
                .and_then(Snapshot::build)
                .map_err(|e| CliError::other("load kind definitions", e))?;
            (
                snapshot
                    .kinds()
                    .iter()
                    .map(|k| Listed::from_resolved(&k.resolved))
                    .collect::<Vec<_>>(),
                snapshot.warnings().to_vec(),
            )
        }
        None => (from_cluster(ctx, &args.group).await?, Vec::new()),
    };
    // As `kinds scaffold` says its own.
    for w in &warnings {
        eprintln!("Warning: {w}");
    }
    let mut out = ctx.stdout();
    let document = ListDocument {
        api_version: "v1",
        kind: "List",
        items: &listed,
    };
    let written = match format {
        OutputFormat::Json => output::write_json(&mut out, &document),
        f if OutputFormat::TEMPLATES.contains(&f) => {
            ctx.write_template(&mut out, &document, f)?;
            Ok(())
        }
        OutputFormat::Yaml => output::write_yaml(&mut out, &document),
        OutputFormat::Name => {
            let text: String = listed
                .iter()
                .map(|l| format!("{}.{}\n", l.plural, group_of(&l.group_version)))
                .collect();
            std::io::Write::write_all(&mut out, text.as_bytes())
        }
        format => {
            let wide = format == OutputFormat::Wide;
            if listed.is_empty() {
                let _ = std::io::Write::flush(&mut out);
                eprintln!("No kinds found.");
                return Ok(ExitStatus::Success);
            }
            let mut headers = vec![
                "KIND",
                "PLURAL",
                "SHORTNAMES",
                "CHART",
                "CHART VERSION",
                "SOURCE",
            ];
            if wide {
                headers.extend(["APIVERSION", "SINGULAR", "CATEGORIES", "RELEASE PREFIX"]);
            }
            let mut rows = Rows::new(headers);
            for l in &listed {
                // `cluster <group/version>` says no more than APIVERSION does.
                let source = match l.source.strip_suffix(&format!(" {}", l.group_version)) {
                    Some(source) if wide => source.to_owned(),
                    _ => l.source.clone(),
                };
                let mut row = vec![
                    l.kind.clone(),
                    l.plural.clone(),
                    l.short_names.join(","),
                    l.chart.clone().unwrap_or_default(),
                    l.chart_version.clone().unwrap_or_default(),
                    source,
                ];
                if wide {
                    row.extend([
                        l.group_version.clone(),
                        l.singular.clone(),
                        l.categories.join(","),
                        l.release_prefix.clone().unwrap_or_default(),
                    ]);
                }
                rows.push(row);
            }
            rows.write_to(&mut out)
        }
    };
    written.map_err(|e| CliError::io("write the kinds", e))?;
    Ok(ExitStatus::Success)
}

fn group_of(group_version: &str) -> &str {
    group_version
        .split_once('/')
        .map_or(group_version, |(g, _)| g)
}

/// Kinds served in `group` by the cluster, from discovery; chart details come
/// from ApplicationDefinitions when the cluster has them and we may read them.
async fn from_cluster(ctx: &Ctx, group: &str) -> Result<Vec<Listed>, CliError> {
    let client = ctx.client().await?;
    let server = ctx.kube_config().await?.cluster_url.to_string();
    let groups = client
        .list_api_groups()
        .await
        .map_err(|source| CliError::first_request_failed(server, "GET /apis", source))?;
    let Some(api_group) = groups.groups.iter().find(|g| g.name == group) else {
        // A standalone server has no aggregator (and no APIServices): it
        // serves its kinds' groups, and only those.
        let aggregator = groups
            .groups
            .iter()
            .any(|g| g.name == "apiregistration.k8s.io");
        let served: Vec<&str> = groups
            .groups
            .iter()
            .map(|g| g.name.as_str())
            .filter(|g| !g.ends_with(".k8s.io"))
            .collect();
        let why = if aggregator {
            format!("the cluster serves no API group {group} (check `kubectl get apiservices`)")
        } else {
            format!(
                "the server serves no API group {group}: it is a standalone server, serving {}",
                match served.is_empty() {
                    true => "no kinds".to_owned(),
                    false => served.join(", "),
                }
            )
        };
        return Err(CliError::other(format!("list kinds in {group}"), why));
    };
    let group_version = api_group
        .preferred_version
        .as_ref()
        .map(|v| v.group_version.clone())
        .or_else(|| api_group.versions.first().map(|v| v.group_version.clone()))
        .unwrap_or_default();
    // A group-version's discovery is proxied to the server behind its
    // APIService; kube-apiserver may wait minutes on one that is gone.
    let limit = discovery_limit(ctx.global().request_timeout);
    let spinner =
        crate::output::progress::spinner(format!("waiting for discovery of {group_version}"));
    let discovered = match limit {
        Some(limit) => tokio::time::timeout(limit, client.list_api_group_resources(&group_version))
            .await
            .map_err(|_| DiscoveryFailure::TimedOut(limit)),
        None => Ok(client.list_api_group_resources(&group_version).await),
    };
    spinner.finish_and_clear();
    let resources = discovered
        .and_then(|answer| answer.map_err(DiscoveryFailure::Error))
        .map_err(|e| discovery_error(&group_version, e))?;
    let definitions = application_definitions::read(client.clone()).await.ok();
    // What discovery does not say: each kind's chart, from the group's
    // OpenAPI (a kubectl-cozy server's), best effort.
    let kinds = || resources.resources.iter().filter(|r| !r.name.contains('/'));
    // The ApplicationDefinition of a discovered resource.
    let defined_for = |r: &k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource| {
        definitions.as_ref().and_then(|d| {
            d.kinds
                .iter()
                .find(|k| k.definition.plural == r.name && k.group_version() == group_version)
        })
    };
    // Only what no ApplicationDefinition describes needs the OpenAPI.
    let releases = match limit {
        _ if kinds().all(|r| defined_for(r).is_some()) => Default::default(),
        Some(limit) => tokio::time::timeout(limit, releases_in_openapi(&client, &group_version))
            .await
            .unwrap_or_default(),
        None => releases_in_openapi(&client, &group_version).await,
    };
    let mut listed = Vec::new();
    for r in kinds() {
        let defined = defined_for(r);
        let mut entry = match defined {
            Some(k) => Listed::from_resolved(k),
            None => Listed {
                kind: r.kind.clone(),
                plural: r.name.clone(),
                singular: r.singular_name.clone(),
                short_names: Vec::new(),
                categories: Vec::new(),
                group_version: group_version.clone(),
                chart: None,
                chart_version: None,
                release_prefix: None,
                source: String::new(),
                definition: None,
            },
        };
        if let (None, Some(release)) = (defined, releases.get(&r.kind)) {
            entry.chart.clone_from(&release.chart);
            entry.chart_version.clone_from(&release.chart_version);
            entry.release_prefix.clone_from(&release.release_prefix);
        }
        entry.short_names = r.short_names.clone().unwrap_or_default();
        entry.categories = r.categories.clone().unwrap_or_default();
        entry.source = format!("cluster {group_version}");
        listed.push(entry);
    }
    // Discovery's order is the server's; list by kind, as definitions are
    // read (files in name order).
    listed.sort_by(|a, b| (&a.kind, &a.plural).cmp(&(&b.kind, &b.plural)));
    Ok(listed)
}

/// A kind's chart and release prefix as a kubectl-cozy server publishes them
/// in its OpenAPI ([`crate::apiserver::openapi::RELEASE_EXTENSION`]).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Release {
    chart: Option<String>,
    chart_version: Option<String>,
    release_prefix: Option<String>,
}

/// The [`Release`] of each kind (by kind) of `group_version`, read from the
/// cluster's OpenAPI v3 document of it; none where it cannot be read or
/// says nothing (a server other than kubectl-cozy's).
async fn releases_in_openapi(
    client: &kube::Client,
    group_version: &str,
) -> std::collections::BTreeMap<String, Release> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(request) =
        http::Request::get(format!("/openapi/v3/apis/{group_version}")).body(Vec::new())
    else {
        return out;
    };
    let Ok(text) = client.request_text(request).await else {
        return out;
    };
    let Ok(document) = serde_json::from_str::<serde_json::Value>(&text) else {
        return out;
    };
    let (group, version) = group_version.split_once('/').unwrap_or(("", group_version));
    let schemas = document
        .pointer("/components/schemas")
        .and_then(serde_json::Value::as_object);
    for schema in schemas.into_iter().flat_map(|s| s.values()) {
        let Some(release) = schema.get(crate::apiserver::openapi::RELEASE_EXTENSION) else {
            continue;
        };
        let gvks = schema["x-kubernetes-group-version-kind"].as_array();
        let kind = gvks.into_iter().flatten().find_map(|gvk| {
            (gvk["group"] == group && gvk["version"] == version)
                .then(|| gvk["kind"].as_str())
                .flatten()
        });
        if let (Some(kind), Ok(release)) = (kind, serde_json::from_value(release.clone())) {
            out.insert(kind.to_owned(), release);
        }
    }
    out
}

/// How long `kinds list` waits for a group-version's discovery when
/// `--request-timeout` does not say.
const DISCOVERY_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The bound on a group-version's discovery: `--request-timeout` (0: none),
/// else [`DISCOVERY_LIMIT`].
fn discovery_limit(request_timeout: Option<std::time::Duration>) -> Option<std::time::Duration> {
    match request_timeout {
        Some(t) if t.is_zero() => None,
        Some(t) => Some(t),
        None => Some(DISCOVERY_LIMIT),
    }
}

/// Why a group-version's discovery gave no resources.
#[derive(Debug)]
enum DiscoveryFailure {
    /// No answer within the limit.
    TimedOut(std::time::Duration),
    /// An answer, or a failure of the request itself.
    Error(kube::Error),
}

/// A group-version's discovery failed: a 503, or no answer in time, is its
/// APIService's server being down or unreachable, which `doctor`
/// diagnoses, and says so.
fn discovery_error(group_version: &str, failure: DiscoveryFailure) -> CliError {
    let (group, version) = group_version.split_once('/').unwrap_or(("", group_version));
    let unavailable = |why: String| {
        CliError::other(
            format!("discover {group_version}"),
            format!(
                "APIService {version}.{group} {why}: the server behind it is down or \
                 unreachable; `kubectl cozy doctor` says why and how to fix it"
            ),
        )
    };
    match failure {
        DiscoveryFailure::Error(kube::Error::Api(status)) if status.code == 503 => {
            unavailable("is unavailable (HTTP 503)".into())
        }
        DiscoveryFailure::TimedOut(limit) => unavailable(format!(
            "did not answer discovery within {} (--request-timeout sets the limit)",
            crate::golang::GoDuration::from_nanos_saturating(
                i128::try_from(limit.as_nanos()).unwrap_or(i128::MAX)
            )
        )),
        DiscoveryFailure::Error(err) if is_timeout(&err) => {
            unavailable("did not answer discovery within --request-timeout".into())
        }
        DiscoveryFailure::Error(err) => CliError::other(format!("discover {group_version}"), err),
    }
}

/// Whether `err` is the client giving up waiting (`--request-timeout`).
fn is_timeout(err: &kube::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
            || e.is::<tokio::time::error::Elapsed>()
        {
            return true;
        }
        source = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unavailable_apiservice_is_named_with_doctor() {
        let status = |code| {
            kube::Error::Api(
                kube::core::Status::failure("service unavailable", "ServiceUnavailable")
                    .with_code(code)
                    .boxed(),
            )
        };
        let chain = |e: CliError| crate::error_chain::error_chain(&e);
        let failed = |code| DiscoveryFailure::Error(status(code));
        let text = chain(discovery_error("apps.cozystack.io/v1alpha1", failed(503)));
        assert!(
            text.contains("discover apps.cozystack.io/v1alpha1")
                && text.contains("APIService v1alpha1.apps.cozystack.io is unavailable (HTTP 503)")
                && text.contains("`kubectl cozy doctor` says why"),
            "{text}"
        );
        let text = chain(discovery_error("apps.cozystack.io/v1alpha1", failed(500)));
        assert!(!text.contains("doctor"), "{text}");
        let text = chain(discovery_error(
            "apps.cozystack.io/v1alpha1",
            DiscoveryFailure::TimedOut(std::time::Duration::from_secs(30)),
        ));
        assert!(
            text.contains(
                "APIService v1alpha1.apps.cozystack.io did not answer discovery within 30s"
            ) && text.contains("`kubectl cozy doctor` says why"),
            "{text}"
        );
    }

    #[test]
    fn discovery_is_bounded_unless_told_otherwise() {
        use std::time::Duration;
        assert_eq!(discovery_limit(None), Some(DISCOVERY_LIMIT));
        assert_eq!(discovery_limit(Some(Duration::ZERO)), None);
        assert_eq!(
            discovery_limit(Some(Duration::from_secs(3))),
            Some(Duration::from_secs(3))
        );
    }
}
