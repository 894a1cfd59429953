//! kubectl-compatible global flags, accepted before or after any subcommand.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueHint};

use crate::golang;
use crate::output::OutputFormat;

const HEADING: &str = "Global options";

/// Flags every subcommand accepts, spelled as kubectl spells them.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)
    #[arg(long, global = true, value_name = "PATH", value_hint = ValueHint::FilePath, help_heading = HEADING)]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use
    #[arg(long, global = true, value_name = "NAME", help_heading = HEADING)]
    pub context: Option<String>,

    /// The kubeconfig cluster to use
    #[arg(long, global = true, value_name = "NAME", help_heading = HEADING)]
    pub cluster: Option<String>,

    /// The kubeconfig user to use
    #[arg(long, global = true, value_name = "NAME", help_heading = HEADING)]
    pub user: Option<String>,

    /// Namespace scope (default: the context's namespace)
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE", help_heading = HEADING)]
    pub namespace: Option<String>,

    /// Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_request_timeout,
          allow_hyphen_values = true, help_heading = HEADING)]
    pub request_timeout: Option<Duration>,

    /// Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE
    ///
    /// The templates run over what -o json prints, as kubectl's do: jsonpath=TEMPLATE is
    /// kubectl's JSONPath template, e.g. -o jsonpath='{.items[*].plural}' (jsonpath-as-json
    /// prints what it selects as JSON arrays); go-template=TEMPLATE is a Go text/template,
    /// e.g. -o go-template='{{range .items}}{{.plural}}{{"\n"}}{{end}}' (template= and
    /// templatefile= are its other names, with kubectl's exists and base64decode);
    /// custom-columns=HEADER:PATH,... prints a table with a row per item, e.g. -o
    /// custom-columns=KIND:.kind,CHART:.chart (custom-columns-file=FILE: a line of headers,
    /// then a line of paths). Each command's --help says which formats it prints.
    #[arg(short = 'o', long, global = true, value_name = "FORMAT", value_parser = parse_output,
          help_heading = HEADING)]
    pub output: Option<OutputArg>,

    /// Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template
    /// names that is missing; =false makes it an error
    #[arg(long, global = true, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_value = "true", default_missing_value = "true", value_parser = parse_allow_missing,
          help_heading = HEADING)]
    pub allow_missing_template_keys: AllowMissingKeys,

    /// The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the
    /// template file of -o jsonpath-file or go-template-file; alone, it means -o go-template
    #[arg(long, global = true, value_name = "TEMPLATE", help_heading = HEADING)]
    pub template: Option<String>,

    /// Disable colors (also when NO_COLOR is set or output is not a terminal)
    #[arg(long, global = true, help_heading = HEADING)]
    pub no_color: bool,

    /// Log verbosity on stderr, kubectl's scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent
    #[arg(short = 'v', long = "v", global = true, value_name = "LEVEL", default_value_t = 0,
          help_heading = HEADING)]
    pub verbosity: u8,
}

/// `-o` as given: a format, and for the template formats their template
/// (checked to parse when the flag is read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputArg {
    /// The format.
    pub format: OutputFormat,
    /// The template of the template formats (`-o jsonpath=TEMPLATE`, the
    /// spec of `-o custom-columns=SPEC`, the text of a file `-o
    /// go-template-file=FILE` names, …); none until
    /// [`GlobalArgs::resolve_output`] for one named alone.
    pub template: Option<String>,
}

/// The `-o` names that take a template after `=` (or from `--template`),
/// kubectl's aliases (`template`, `templatefile`) among them.
const TEMPLATE_NAMES: &[(&str, OutputFormat)] = &[
    ("jsonpath", OutputFormat::JsonPath),
    ("jsonpath-file", OutputFormat::JsonPathFile),
    ("jsonpath-as-json", OutputFormat::JsonPathAsJson),
    ("go-template", OutputFormat::GoTemplate),
    ("template", OutputFormat::GoTemplate),
    ("go-template-file", OutputFormat::GoTemplateFile),
    ("templatefile", OutputFormat::GoTemplateFile),
    ("custom-columns", OutputFormat::CustomColumns),
    ("custom-columns-file", OutputFormat::CustomColumnsFile),
];

fn template_format(name: &str) -> Option<OutputFormat> {
    TEMPLATE_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, format)| *format)
}

/// Reads `-o`: a format's name, or a template format with its template
/// after `=` (`jsonpath=TEMPLATE`, `go-template-file=FILE`, …), which must
/// read and parse (kubectl's words when it does not). A template format
/// named alone takes its template from `--template`
/// ([`GlobalArgs::resolve_output`]).
fn parse_output(value: &str) -> Result<OutputArg, String> {
    if let Some((name, template)) = value.split_once('=')
        && let Some(format) = template_format(name)
    {
        return OutputArg::with_template(format, template);
    }
    if let Some(format) = template_format(value) {
        return Ok(OutputArg {
            format,
            template: None,
        });
    }
    <OutputFormat as clap::ValueEnum>::from_str(value, false)
        .map(|format| OutputArg {
            format,
            template: None,
        })
        .map_err(|_| {
            "one of table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, \
             jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, \
             custom-columns=SPEC or custom-columns-file=FILE"
                .to_owned()
        })
}

impl OutputArg {
    /// A template format with its template as `-o` or `--template` gave it:
    /// a file's path for the file formats (read here), else the template,
    /// which must parse.
    fn with_template(format: OutputFormat, given: &str) -> Result<OutputArg, String> {
        use crate::output::custom_columns::Columns;
        use crate::output::{go_template, jsonpath_template};
        // Custom columns say it in their own words.
        if given.is_empty() && format != OutputFormat::CustomColumns {
            return Err("template format specified but no template given".to_owned());
        }
        let text = if format.reads_file() {
            std::fs::read_to_string(given)
                .map_err(|e| format!("error reading template {given}, {e}"))?
        } else {
            given.to_owned()
        };
        match format {
            OutputFormat::CustomColumns => Columns::parse(&text).map(drop)?,
            OutputFormat::CustomColumnsFile => Columns::parse_file(&text).map(drop)?,
            OutputFormat::GoTemplate | OutputFormat::GoTemplateFile => {
                go_template::Template::parse(&text)
                    .map_err(|e| format!("error parsing template {text}, {e}"))?;
            }
            _ => {
                jsonpath_template::Template::parse(&text)
                    .map_err(|e| format!("error parsing jsonpath {text}, {e}"))?;
            }
        }
        Ok(OutputArg {
            format,
            template: Some(text),
        })
    }
}

/// What `-o NAME` alone is told to add: an example of its template.
fn template_example(format: OutputFormat) -> &'static str {
    match format {
        OutputFormat::JsonPath | OutputFormat::JsonPathAsJson => "'{.items[*].plural}'",
        OutputFormat::GoTemplate => "'{{range .items}}{{.plural}}{{\"\\n\"}}{{end}}'",
        OutputFormat::CustomColumns => "KIND:.kind,CHART:.chart",
        OutputFormat::CustomColumnsFile => "columns.txt",
        _ => "FILE",
    }
}

impl GlobalArgs {
    /// Gives a JSONPath or Go template format named alone (`-o go-template`)
    /// the template of `--template`, and `--template` alone the format
    /// `go-template`, as kubectl does; `--template` beside any other format
    /// (custom columns too) is ignored, as kubectl ignores it. The error is a
    /// usage error's message.
    pub fn resolve_output(&mut self) -> Result<(), String> {
        let template = self.template.as_deref().filter(|t| !t.is_empty());
        let columns = self.output.as_ref().is_some_and(|o| {
            matches!(
                o.format,
                OutputFormat::CustomColumns | OutputFormat::CustomColumnsFile
            )
        });
        match (&self.output, template) {
            (None, Some(template)) => {
                self.output = Some(OutputArg::with_template(
                    OutputFormat::GoTemplate,
                    template,
                )?);
            }
            // Custom columns take no `--template`, as kubectl's do not.
            (Some(output), _) if columns && output.template.is_none() => {
                let name = output.format.name();
                let example = template_example(output.format);
                return Err(format!("-o {name} needs columns: -o {name}={example}"));
            }
            (Some(output), template)
                if !columns && OutputFormat::TEMPLATES.contains(&output.format) =>
            {
                let name = output.format.name();
                match (&output.template, template) {
                    (Some(_), None) => {}
                    (None, Some(template)) => {
                        self.output = Some(OutputArg::with_template(output.format, template)?);
                    }
                    (Some(_), Some(_)) => {
                        return Err(format!(
                            "-o {name}=… and --template both give a template: give one"
                        ));
                    }
                    (None, None) => {
                        let example = template_example(output.format);
                        return Err(format!(
                            "-o {name} needs a template: -o {name}={example}, or --template={example}"
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn color_allowed(&self) -> bool {
        !self.no_color && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    }

    /// Whether stdout output may use colors.
    pub fn stdout_color(&self) -> bool {
        self.color_allowed() && std::io::stdout().is_terminal()
    }

    /// Whether stderr output (logs, errors, progress) may use colors.
    pub fn stderr_color(&self) -> bool {
        self.color_allowed() && std::io::stderr().is_terminal()
    }
}

/// `--allow-missing-template-keys`: true unless given false, as kubectl's
/// (and so in [`GlobalArgs::default`] too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllowMissingKeys(pub bool);

impl Default for AllowMissingKeys {
    fn default() -> Self {
        AllowMissingKeys(true)
    }
}

/// The flag's value as pflag reads a boolean (`strconv.ParseBool`).
fn parse_allow_missing(s: &str) -> Result<AllowMissingKeys, String> {
    golang::parse_bool(s).map(AllowMissingKeys)
}

/// Parses kubectl's `--request-timeout` as client-go's
/// `clientcmd.ParseTimeout` does: a non-negative whole number is seconds
/// (`0` for no limit), anything else a Go duration (`1m30s`, `500ms`, `2h`).
/// A negative duration, which kubectl would take as no limit, is refused.
pub fn parse_request_timeout(s: &str) -> Result<Duration, String> {
    parse_non_negative(s, ": use 0 for no limit")
}

/// Parses a duration flag that is no limit (`serve --drain-timeout`,
/// `--lease-duration`) as [`parse_request_timeout`] does, without its advice
/// for a negative one (0 is not "no limit" there).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    parse_non_negative(s, "")
}

/// A whole number of seconds or a Go duration, not negative (refused with
/// `negative_advice` after the reason).
fn parse_non_negative(s: &str, negative_advice: &str) -> Result<Duration, String> {
    // The flag takes the next word even when it is one (as pflag does):
    // `--request-timeout --context x` lacks its value.
    if s.starts_with("--") {
        return Err(format!(
            "{s} is a flag, not a duration: give the flag a value"
        ));
    }
    if let Ok(secs) = s.parse::<i64>() {
        return u64::try_from(secs)
            .map(Duration::from_secs)
            .map_err(|_| format!("{} is negative{negative_advice}", golang::quote(s)));
    }
    match golang::parse_duration(s) {
        Ok(d) => d
            .to_std()
            .ok_or_else(|| format!("{} is negative{negative_advice}", golang::quote(s))),
        Err(e) => Err(format!(
            "{e}: use 0, a whole number of seconds, or a number with a unit (1s, 2m, 3h)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-o` and `--template` together as kubectl's print flags read them.
    #[test]
    fn template_flag_completes_a_template_format_named_alone() {
        let resolve = |output: Option<&str>, template: Option<&str>| {
            let mut args = GlobalArgs {
                output: output.map(|o| parse_output(o).expect("-o parses")),
                template: template.map(str::to_owned),
                ..GlobalArgs::default()
            };
            args.resolve_output()
                .map(|()| args.output.map(|o| (o.format, o.template)))
        };
        let with = |format, template: &str| Ok(Some((format, Some(template.to_owned()))));
        assert_eq!(
            resolve(None, Some("{{.kind}}")),
            with(OutputFormat::GoTemplate, "{{.kind}}")
        );
        assert_eq!(
            resolve(Some("jsonpath"), Some("{.kind}")),
            with(OutputFormat::JsonPath, "{.kind}")
        );
        assert_eq!(
            resolve(Some("template"), Some("{{.kind}}")),
            with(OutputFormat::GoTemplate, "{{.kind}}")
        );
        // Beside another format, or custom columns given theirs, it is ignored.
        assert_eq!(
            resolve(Some("json"), Some("{{.kind}}")),
            Ok(Some((OutputFormat::Json, None)))
        );
        assert_eq!(
            resolve(Some("custom-columns=K:.kind"), Some("{{.kind}}")),
            with(OutputFormat::CustomColumns, "K:.kind")
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("t.tmpl");
        std::fs::write(&file, "{{.kind}}").expect("write");
        assert_eq!(
            resolve(Some("go-template-file"), file.to_str()),
            with(OutputFormat::GoTemplateFile, "{{.kind}}")
        );
        for (output, template, says) in [
            (
                Some("go-template={{.a}}"),
                Some("{{.b}}"),
                "both give a template",
            ),
            (Some("go-template"), None, "-o go-template needs a template"),
            (Some("jsonpath"), Some(""), "-o jsonpath needs a template"),
            (
                Some("custom-columns"),
                Some("K:.kind"),
                "-o custom-columns needs columns",
            ),
            (None, Some("{{.kind"), "error parsing template {{.kind"),
        ] {
            let err = resolve(output, template).expect_err(says);
            assert!(err.contains(says), "{output:?} {template:?}: {err}");
        }
    }

    /// Inputs of client-go's `ParseTimeout` (`tools/clientcmd/helpers.go`):
    /// `strconv.ParseInt` first, then `time.ParseDuration`.
    #[test]
    fn request_timeout_accepts_kubectl_forms() {
        let ok: &[(&str, Duration)] = &[
            ("0", Duration::ZERO),
            ("15", Duration::from_secs(15)),
            ("+15", Duration::from_secs(15)),
            ("-0", Duration::ZERO),
            ("1m30s", Duration::from_secs(90)),
            ("500ms", Duration::from_millis(500)),
            ("2h", Duration::from_secs(7200)),
            ("1.5h", Duration::from_secs(5400)),
        ];
        for (input, want) in ok {
            assert_eq!(parse_request_timeout(input), Ok(*want), "{input:?}");
        }
        for input in [
            "",
            "soon",
            "5 parsecs",
            "s",
            " 5s",
            "-1s",
            "-5",
            "9223372036854775808",
        ] {
            assert!(parse_request_timeout(input).is_err(), "{input:?}");
        }
        assert_eq!(
            parse_request_timeout("-1s").unwrap_err(),
            "\"-1s\" is negative: use 0 for no limit"
        );
        // Where 0 is not "no limit", a negative duration is refused plainly.
        assert_eq!(parse_duration("-1s").unwrap_err(), "\"-1s\" is negative");
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(
            parse_request_timeout("-1").unwrap_err(),
            "\"-1\" is negative: use 0 for no limit"
        );
        assert_eq!(
            parse_request_timeout("5d").unwrap_err(),
            "time: unknown unit \"d\" in duration \"5d\": use 0, a whole number of seconds, or a number with a unit (1s, 2m, 3h)"
        );
    }

    /// As pflag does, the flag takes the next word as its value even when
    /// it starts with `-`, so a negative one gets our reason, not clap's.
    #[test]
    fn a_negative_request_timeout_is_refused_with_the_reason() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            global: GlobalArgs,
        }
        let refused = |value: &str| {
            Cli::try_parse_from(["cozy", "--request-timeout", value])
                .err()
                .expect("refused")
                .to_string()
        };
        let err = refused("-1");
        assert!(
            err.contains("\"-1\" is negative: use 0 for no limit"),
            "{err}"
        );
        let err = refused("--context");
        assert!(
            err.contains("--context is a flag, not a duration: give the flag a value"),
            "{err}"
        );
        let cli = Cli::try_parse_from(["cozy", "--request-timeout", "-0"]).expect("-0 is 0");
        assert_eq!(cli.global.request_timeout, Some(Duration::ZERO));
    }
}
