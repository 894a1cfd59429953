//! `kubectl cozy kinds scaffold`: a Helm chart (directory, `.tgz`, or an entry
//! of a repository index) turned into a kind definition on stdout or in a
//! directory. Everything is computed before anything is written, so bad input
//! writes nothing; a file in the directory that differs from the new
//! definition is overwritten only with `--force` (`overwrote …`), an equal
//! one is left (`… unchanged`).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum, ValueHint};

use crate::cli::{CliError, Ctx, ExitStatus};
use crate::kinds::chart::settings::KindSettings;
use crate::kinds::chart::{self, ChartSource};
use crate::kinds::cozystack;
use crate::kinds::definition::ObjectRef;
use crate::kinds::scaffold::{ScaffoldOptions, scaffold};
use crate::output::{self, OutputFormat};

/// The `-o` formats `kinds scaffold` writes a definition in.
pub const OUTPUT_FORMATS: &[OutputFormat] = &[OutputFormat::Yaml, OutputFormat::Json];

/// Arguments of `kubectl cozy kinds scaffold`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  # A chart directory (this repository's example), definition on stdout
  kubectl cozy kinds scaffold examples/charts/postgres

  # A packaged chart, written to kinds/postgres.yaml (the directory is made)
  kubectl cozy kinds scaffold postgres-0.4.0.tgz --out kinds

  # From a repository index, as a Cozystack ApplicationDefinition
  kubectl cozy kinds scaffold --repo-index ./repo/index.yaml --chart postgres@0.4.0 --format cozystack

  # Irregular names
  kubectl cozy kinds scaffold ./charts/octopus --kind Octopus --plural octopi

Chart.yaml's kubectl-cozy.io/ annotations (kind, singular, plural, short-names, categories,
group-version, release-prefix, source-ref or chart-ref, printer-columns) set the kind as these
flags do, for serve --charts too; the flags win over them.")]
pub struct ScaffoldArgs {
    /// A chart directory or a packaged chart (.tgz)
    #[arg(value_name = "CHART", value_hint = ValueHint::AnyPath,
          required_unless_present_any = ["repo_index", "chart_name"], conflicts_with = "repo_index")]
    pub chart: Option<PathBuf>,

    /// A Helm repository index.yaml to take the chart from (with --chart)
    #[arg(long, value_name = "INDEX", value_hint = ValueHint::FilePath, requires = "chart_name")]
    pub repo_index: Option<PathBuf>,

    /// The chart in the repository index: NAME or NAME@VERSION
    #[arg(long = "chart", value_name = "NAME[@VERSION]", requires = "repo_index")]
    pub chart_name: Option<String>,

    /// Kind name (default: Chart.yaml's kubectl-cozy.io/kind annotation, else the chart name in UpperCamelCase, capitalized as Chart.yaml's description writes it or as known acronyms are)
    #[arg(long)]
    pub kind: Option<String>,

    /// Singular resource name (default: the kind, lower-case)
    #[arg(long)]
    pub singular: Option<String>,

    /// Plural resource name (default: Kubernetes' rule; set it for irregular plurals)
    #[arg(long)]
    pub plural: Option<String>,

    /// A short name for kubectl (repeatable)
    #[arg(long = "short-name", value_name = "NAME")]
    pub short_names: Vec<String>,

    /// A category (repeatable); `all` adds the kind to `kubectl get all`
    #[arg(long = "category", value_name = "NAME")]
    pub categories: Vec<String>,

    /// API group and version to serve the kind in (default: the kubectl-cozy.io/group-version annotation, else apps.cozystack.io/v1alpha1)
    #[arg(long, value_name = "GROUP/VERSION")]
    pub group_version: Option<String>,

    /// HelmRelease name prefix (default: <singular>-)
    #[arg(long)]
    pub prefix: Option<String>,

    /// Flux source of the chart as KIND/NAME or KIND/NAMESPACE/NAME (KIND: HelmRepository, GitRepository or Bucket; without NAMESPACE, the app's; default: the kubectl-cozy.io/source-ref annotation, else HelmRepository/cozy-public/cozystack-apps)
    #[arg(long, value_name = "REF", conflicts_with = "chart_ref")]
    pub source_ref: Option<String>,

    /// Use a Flux chartRef (KIND/NAME or KIND/NAMESPACE/NAME; KIND: OCIRepository, HelmChart or ExternalArtifact) instead of chart + sourceRef
    #[arg(long, value_name = "REF")]
    pub chart_ref: Option<String>,

    /// Definition format: ours, or a Cozystack ApplicationDefinition
    #[arg(long, value_enum, default_value_t = Format::Kind)]
    pub format: Format,

    /// Write <singular>.yaml (or .json) into this directory instead of stdout
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub out: Option<PathBuf>,

    /// With --out: overwrite a file there that differs from the scaffolded definition (hand edits are lost)
    #[arg(long, requires = "out")]
    pub force: bool,
}

/// Output formats of `scaffold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A kubectl-cozy kind definition
    Kind,
    /// A Cozystack ApplicationDefinition (cozystack.io/v1alpha1)
    Cozystack,
}

fn parse_ref(flag: &str, text: &str) -> Result<ObjectRef, CliError> {
    ObjectRef::parse(text).ok_or_else(|| {
        CliError::Usage(format!(
            "{flag} {text:?}: use KIND/NAME or KIND/NAMESPACE/NAME"
        ))
    })
}

/// Runs `kinds scaffold`.
pub async fn run(args: ScaffoldArgs, ctx: &Ctx) -> Result<ExitStatus, CliError> {
    let source = match (&args.chart, &args.repo_index, &args.chart_name) {
        (Some(_), _, Some(_)) => {
            return Err(CliError::Usage(
                "--chart names a chart of --repo-index; with a chart path, leave it out".into(),
            ));
        }
        (Some(path), _, _) => ChartSource::from_path(path),
        (None, Some(index), Some(spec)) => ChartSource::repo_index(index, spec),
        _ => {
            return Err(CliError::Usage(
                "give a chart path, or --repo-index with --chart".into(),
            ));
        }
    };
    let (group, version) = match &args.group_version {
        Some(given) => {
            let (group, version) = given.split_once('/').ok_or_else(|| {
                CliError::Usage(format!("--group-version {given:?}: use GROUP/VERSION"))
            })?;
            (Some(group.to_owned()), Some(version.to_owned()))
        }
        None => (None, None),
    };
    let options = ScaffoldOptions {
        kind: args.kind.clone(),
        settings: KindSettings {
            singular: args.singular.clone(),
            plural: args.plural.clone(),
            short_names: args.short_names.clone(),
            categories: args.categories.clone(),
            group,
            version,
            prefix: args.prefix.clone(),
            source_ref: args
                .source_ref
                .as_deref()
                .map(|r| parse_ref("--source-ref", r))
                .transpose()?,
            chart_ref: args
                .chart_ref
                .as_deref()
                .map(|r| parse_ref("--chart-ref", r))
                .transpose()?,
            printer_columns: Vec::new(),
        },
        kind_flag: true,
    };
    let output_format = ctx.output_in(OutputFormat::Yaml, OUTPUT_FORMATS, "kinds scaffold")?;

    let given = args.chart.clone();
    let loaded = tokio::task::spawn_blocking(move || chart::load(&source))
        .await
        .map_err(|e| CliError::other("read the chart", e))?
        .map_err(|e| {
            let missing = matches!(e, chart::ChartError::MissingChartYaml { .. });
            let err = CliError::other("read the chart", e);
            match given
                .as_deref()
                .map(charts_in)
                .filter(|c| missing && !c.is_empty())
            {
                Some(charts) => err.with_hint(format!(
                    "it holds charts ({}): scaffold one of them, or serve them all with \
                     `kubectl cozy serve --charts {}`",
                    charts.join(", "),
                    given.as_deref().unwrap_or(Path::new(".")).display()
                )),
                None => err,
            }
        })?;
    let scaffolded =
        scaffold(&loaded, &options).map_err(|e| CliError::other("scaffold a kind", e))?;

    let mut scaffolded = scaffolded;
    let document = match args.format {
        Format::Kind => serde_json::to_value(&scaffolded.definition)
            .map_err(|e| CliError::other("encode", e))?,
        Format::Cozystack => {
            let (document, dropped) = cozystack::to_application_definition(&scaffolded.definition);
            scaffolded.warnings.extend(
                dropped
                    .into_iter()
                    .map(|d| format!("--format cozystack: {d}")),
            );
            document
        }
    };
    let text = match output_format {
        OutputFormat::Json => {
            let mut t = serde_json::to_string_pretty(&document)
                .map_err(|e| CliError::other("encode", e))?;
            t.push('\n');
            t
        }
        _ => format!(
            "{}{}",
            header(&loaded.origin),
            output::to_yaml(&document).map_err(|e| CliError::io("encode", e))?
        ),
    };

    let mut stderr = std::io::stderr().lock();
    for note in &scaffolded.notes {
        let _ = writeln!(stderr, "Note: {note}");
    }
    for warning in &scaffolded.warnings {
        let _ = writeln!(stderr, "Warning: {warning}");
    }
    match &args.out {
        None => ctx
            .stdout()
            .write_all(text.as_bytes())
            .map_err(|e| CliError::io("write the definition", e))?,
        Some(dir) => {
            if dir.exists() && !dir.is_dir() {
                return Err(CliError::Usage(format!(
                    "--out {}: not a directory (--out names the directory the definition goes into, as \
                     <singular>.yaml)",
                    dir.display()
                )));
            }
            let extension = if output_format == OutputFormat::Json {
                "json"
            } else {
                "yaml"
            };
            let singular = scaffolded.definition.singular.clone();
            let path = dir.join(format!("{singular}.{extension}"));
            // The same kind in another format beside it would be defined
            // twice, and the directory would no longer load.
            if let Some(other) = ["yaml", "yml", "json"]
                .iter()
                .filter(|e| **e != extension)
                .map(|e| dir.join(format!("{singular}.{e}")))
                .find(|p| p.exists())
            {
                return Err(CliError::other(
                    format!("write {}", path.display()),
                    format!(
                        "{} is there already: the kind would be defined twice and the directory would not load; \
                         scaffold with -o {}, or remove that file first",
                        other.display(),
                        if other.extension().is_some_and(|e| e == "json") {
                            "json"
                        } else {
                            "yaml"
                        }
                    ),
                ));
            }
            let existing = match std::fs::read(&path) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(CliError::io(format!("read {}", path.display()), e)),
            };
            match existing {
                // The header names the chart as given: the same chart
                // reached by another path (`./postgres/`, an absolute one)
                // is the same definition.
                Some(bytes) if without_header(&bytes) == without_header(text.as_bytes()) => {
                    let _ = writeln!(stderr, "{} unchanged", path.display());
                }
                Some(_) if !args.force => {
                    return Err(CliError::other(
                        format!("write {}", path.display()),
                        "the file exists and differs from the scaffolded definition (hand edits would be lost): \
                         pass --force to overwrite it, or --out another directory",
                    ));
                }
                Some(_) => {
                    write_atomically(dir, &path, text.as_bytes())?;
                    let _ = writeln!(stderr, "overwrote {}", path.display());
                }
                None => {
                    write_atomically(dir, &path, text.as_bytes())?;
                    let _ = writeln!(stderr, "wrote {}", path.display());
                }
            }
        }
    }
    Ok(ExitStatus::Success)
}

/// The names of the chart directories directly in `dir` (sorted; none when
/// it is no directory).
fn charts_in(dir: &Path) -> Vec<String> {
    let mut charts: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join("Chart.yaml").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    charts.sort();
    charts
}

/// The first line of a scaffolded YAML definition, naming its chart.
const HEADER: &str = "# Generated by `kubectl cozy kinds scaffold` from ";

fn header(origin: &str) -> String {
    format!("{HEADER}{origin}.\n")
}

/// A definition's text after its header line, if it has one.
fn without_header(text: &[u8]) -> &[u8] {
    match text.strip_prefix(HEADER.as_bytes()) {
        Some(rest) => rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(&[][..], |end| &rest[end + 1..]),
        None => text,
    }
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::io(format!("create {}", dir.display()), e))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("kind"),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).map_err(|e| CliError::io(format!("write {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError::io(format!("write {}", path.display()), e)
    })
}
