//! A Helm chart turned into a kind definition: names from `Chart.yaml`, the
//! `spec` schema converted from `values.schema.json` (or inferred from
//! `values.yaml`), and a HelmRelease template pointing at the chart. Every
//! compromise the schema conversion makes comes back as a warning.

use super::chart::settings::KindSettings;
use super::chart::{self, LoadedChart};
use super::definition::{ChartSpec, KindDefinition, ObjectRef, ReleaseSpec};
use super::schema;

/// What the user chose on the command line; `None` means derive it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScaffoldOptions {
    /// Kind override (`Postgres`).
    pub kind: Option<String>,
    /// The rest of the kind's names and places (the chart's annotations
    /// fill what these leave unset).
    pub settings: KindSettings,
    /// Whether the caller takes `--kind` (`kinds scaffold` does, `serve
    /// --charts` does not): how a kind the chart's name cannot make is to
    /// be named.
    pub kind_flag: bool,
}

impl ScaffoldOptions {
    /// Whether these options set what the chart's annotation setting
    /// `setting` (as [`chart::settings::ReadSettings::problems`] names it)
    /// would: its problem is then moot.
    fn override_setting(&self, setting: &str) -> bool {
        let given = &self.settings;
        match setting {
            "group-version" => given.group.is_some(),
            "source" => given.source_ref.is_some() || given.chart_ref.is_some(),
            _ => false,
        }
    }
}

/// The result: a definition and what was lost or assumed on the way.
#[derive(Debug, Clone)]
pub(crate) struct Scaffolded {
    /// The definition (not yet resolved; the writer keeps it minimal).
    pub definition: KindDefinition,
    /// Warnings for stderr.
    pub warnings: Vec<String>,
    /// What was chosen for the user and how to choose otherwise, for stderr.
    pub notes: Vec<String>,
}

/// Why a chart could not be scaffolded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ScaffoldError {
    /// `values.schema.json` is not JSON.
    #[error("{origin}: values.schema.json:{at}: {message}")]
    SchemaJson {
        /// The chart.
        origin: String,
        /// `line:column`, or the line alone where the parser knows no
        /// column (the end of the text).
        at: String,
        /// The parser's message, without its position.
        message: String,
    },
    /// The schema cannot be converted into a structural schema.
    #[error("{origin}: values.schema.json does not convert to a structural schema:\n  {}", problems.join("\n  "))]
    Schema {
        /// The chart.
        origin: String,
        /// One line per problem, with its JSON pointer.
        problems: Vec<String>,
    },
    /// `values.yaml` is not valid YAML.
    #[error("{origin}: values.yaml: {message}")]
    Values {
        /// The chart.
        origin: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The resulting definition is invalid (bad overrides, for instance).
    #[error("the scaffolded definition is invalid:\n  {}", problems.join("\n  "))]
    Invalid {
        /// One line per problem.
        problems: Vec<String>,
    },
}

/// Builds a kind definition for `chart`.
pub(crate) fn scaffold(
    loaded: &LoadedChart,
    options: &ScaffoldOptions,
) -> Result<Scaffolded, ScaffoldError> {
    let origin = loaded.origin.clone();
    let read = chart::settings::read(&loaded.metadata.annotations);
    let problems: Vec<String> = read
        .problems
        .into_iter()
        .filter(|(setting, _)| !options.override_setting(setting))
        .map(|(_, problem)| problem)
        .collect();
    if !problems.is_empty() {
        return Err(ScaffoldError::Invalid { problems });
    }
    let (settings, from_annotations) = options.settings.over(read.settings);
    let mut warnings = read.warnings;
    let mut notes = Vec::new();
    // Where a kind that was not given comes from, for the note and for
    // the hint beside a problem with it.
    let mut derived = None;
    let kind = match &options.kind {
        Some(kind) => kind.clone(),
        None => {
            let (kind, source) = chart::propose_kind(
                &loaded.metadata.name,
                loaded.metadata.description.as_deref(),
                &loaded.metadata.annotations,
            );
            notes.push(format!(
                "kind {kind} ({source}); choose another with --kind, or set the {} annotation in Chart.yaml",
                chart::KIND_ANNOTATION
            ));
            derived = Some(source);
            kind
        }
    };
    let singular = settings
        .singular
        .clone()
        .unwrap_or_else(|| kind.to_lowercase());
    let plural = settings
        .plural
        .clone()
        .unwrap_or_else(|| chart::pluralize(&singular));

    let open_api_schema = if let Some(text) = &loaded.values_schema_json {
        let parsed: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            let position = format!(" at line {} column {}", e.line(), e.column());
            let text = e.to_string();
            ScaffoldError::SchemaJson {
                origin: origin.clone(),
                at: match e.column() {
                    0 => e.line().to_string(),
                    column => format!("{}:{column}", e.line()),
                },
                message: text.strip_suffix(&position).unwrap_or(&text).to_owned(),
            }
        })?;
        let conversion = schema::to_structural(&parsed);
        if !conversion.is_ok() {
            return Err(ScaffoldError::Schema {
                origin,
                problems: conversion
                    .errors
                    .iter()
                    .map(|i| format!("{}: {}", in_file(SCHEMA_FILE, text, &i.pointer), i.message))
                    .collect(),
            });
        }
        warnings.extend(
            conversion
                .warnings
                .iter()
                .map(|i| format!("{}: {}", in_file(SCHEMA_FILE, text, &i.pointer), i.message)),
        );
        let mut schema = conversion.schema;
        // Helm validates the schema against values.yaml merged with the
        // user's values: its values are the defaults the schema lacks.
        // Its comments describe what the schema leaves undescribed, and its
        // `@skip` keys are not laid over it (no default: the chart decides).
        if let Some(values_text) = &loaded.values_yaml {
            schema::describe_given_schema(values_text, &mut schema);
            match schema::values_as_helm_reads(values_text) {
                Ok((mut values, read)) => {
                    schema::without_skipped(values_text, &mut values);
                    let laid = schema::apply_values_over_schema(&mut schema, &values);
                    warnings.extend(read.iter().chain(&laid).map(|i| {
                        format!(
                            "{}: {}",
                            in_file(VALUES_FILE, values_text, &i.pointer),
                            i.message
                        )
                    }));
                }
                Err(e) => warnings.push(format!(
                    "values.yaml: {e}; its values are not used as the schema's defaults"
                )),
            }
        }
        schema
    } else if let Some(values) = &loaded.values_yaml {
        warnings.push("no values.schema.json: schema inferred from values.yaml; review types and add constraints".into());
        let inferred = schema::infer_from_values(values).map_err(|e| ScaffoldError::Values {
            origin: origin.clone(),
            message: e.to_string(),
        })?;
        warnings.extend(inferred.warnings.iter().map(|i| {
            format!(
                "{}: {}",
                in_file(VALUES_FILE, values, &i.pointer),
                i.message
            )
        }));
        inferred.schema
    } else {
        warnings.push(
            "the chart has neither values.schema.json nor values.yaml: spec accepts any fields"
                .into(),
        );
        serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
    };

    warnings.extend(undeclared_dependencies(
        &loaded.metadata.dependencies,
        &open_api_schema,
    ));

    let (chart, chart_ref) = match &settings.chart_ref {
        Some(chart_ref) => (None, Some(chart_ref.clone())),
        None => (
            Some(ChartSpec {
                name: loaded.metadata.name.clone(),
                version: Some(loaded.metadata.version.clone()),
                source_ref: settings.source_ref.clone().unwrap_or_else(|| ObjectRef {
                    kind: "HelmRepository".into(),
                    name: "cozystack-apps".into(),
                    namespace: Some("cozy-public".into()),
                }),
            }),
            None,
        ),
    };
    let definition = KindDefinition {
        kind,
        singular,
        plural,
        short_names: settings.short_names.clone(),
        categories: settings.categories.clone(),
        group: settings
            .group
            .clone()
            .unwrap_or_else(|| super::definition::DEFAULT_GROUP.to_owned()),
        version: settings
            .version
            .clone()
            .unwrap_or_else(|| super::definition::DEFAULT_VERSION.to_owned()),
        description: loaded.metadata.description.clone().unwrap_or_default(),
        open_api_schema,
        printer_columns: settings.printer_columns.clone(),
        release: ReleaseSpec {
            prefix: settings.prefix.clone(),
            chart,
            chart_ref,
            ..ReleaseSpec::default()
        },
    };
    // Check it the way it will be loaded and served (the schema and its CEL
    // rules compiled), so a bad override or rule fails here.
    let resolved = definition
        .clone()
        .resolve(origin)
        .map_err(|mut problems| {
            if let Some(source) = &derived {
                for p in problems.iter_mut().filter(|p| p.starts_with("kind:")) {
                    p.push_str(&format!(
                        "; the kind comes from the chart ({source}): name it with {}the {} annotation in Chart.yaml",
                        if options.kind_flag { "--kind, or with " } else { "" },
                        chart::KIND_ANNOTATION
                    ));
                }
            }
            // A problem with a value the chart's annotations gave: where
            // it comes from (`serve --charts` has no flag to look at).
            for p in &mut problems {
                if let Some((_, annotation)) = from_annotations.iter().find(|(field, _)| {
                    p.strip_prefix(field)
                        .is_some_and(|rest| rest.starts_with([':', '.', '[', ' ']))
                }) {
                    p.push_str(&format!(
                        "; it comes from Chart.yaml's {}{annotation} annotation",
                        chart::settings::PREFIX
                    ));
                }
            }
            ScaffoldError::Invalid {
                problems: problems
                    .into_iter()
                    .map(|p| in_chart_files(p, loaded))
                    .collect(),
            }
        })?;
    schema::CompiledSchema::new_saying_all(&definition.open_api_schema).map_err(|errors| {
        ScaffoldError::Invalid {
            problems: errors
                .iter()
                .map(|e| in_chart_files(format!("openAPISchema: {e}"), loaded))
                .collect(),
        }
    })?;
    warnings.extend(super::definition::name_room_warning(&resolved));
    // A conversion may say one thing twice (two passes meeting one keyword).
    let mut said = std::collections::HashSet::new();
    warnings.retain(|w| said.insert(w.clone()));
    Ok(Scaffolded {
        definition,
        warnings,
        notes,
    })
}

/// A warning for each subchart whose `condition` (`cache.enabled`, the
/// values path that switches it) the schema does not declare: Helm reads a
/// subchart's values from its own values.yaml, under its name (or alias) in
/// the parent's; a schema made from the parent alone lacks them, so apps
/// could not switch it. (One without a condition, such as a library chart,
/// is not switched by values: nothing to say.)
fn undeclared_dependencies(
    dependencies: &[chart::ChartDependency],
    schema: &serde_json::Value,
) -> Vec<String> {
    let declared = |path: &str| {
        let mut node = schema;
        for key in path.split('.') {
            if node.get("x-kubernetes-preserve-unknown-fields")
                == Some(&serde_json::Value::Bool(true))
            {
                return true;
            }
            match node.get("properties").and_then(|p| p.get(key)) {
                Some(child) => node = child,
                None => return false,
            }
        }
        true
    };
    let mut out = Vec::new();
    for dep in dependencies {
        let key = dep.alias.as_deref().unwrap_or(&dep.name);
        let conditions: Vec<&str> = dep
            .condition
            .iter()
            .flat_map(|c| c.split(','))
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        if let Some(condition) = conditions.iter().find(|c| !declared(c)) {
            out.push(format!(
                "dependency {}: its condition {condition} is not in the schema, so apps cannot switch it{}; declare it in the \
                 chart's values.yaml or values.schema.json (the subchart's own values are not read)",
                dep.name,
                if declared(key) {
                    String::new()
                } else {
                    format!(", nor set its values ({key}.*)")
                }
            ));
        }
    }
    out
}

fn pointer(p: &str) -> &str {
    if p.is_empty() { "/" } else { p }
}

/// The chart's schema file, as problems name it.
const SCHEMA_FILE: &str = "values.schema.json";
/// The chart's values file, as problems name it.
const VALUES_FILE: &str = "values.yaml";

/// Where a problem at JSON `pointer` into `file` (its `text`) is, as a
/// compiler says it: `values.schema.json:30: /properties/version/pattern`
/// (the line of the node, or of its nearest ancestor in the file), or
/// without a line when there is none (the root).
fn in_file(file: &str, text: &str, at: &str) -> String {
    match super::yaml_lines::pointer_line(text, at) {
        Some(line) => format!("{file}:{line}: {}", pointer(at)),
        None => format!("{file} {}", pointer(at)),
    }
}

/// `problem`, found in the scaffolded definition (`openAPISchema/… : …`),
/// at the line of `values.schema.json` it comes from: the same pointer
/// there, as the conversion keeps the schema's structure. Other problems
/// (the kind's name, the release; a schema inferred from `values.yaml`,
/// which fits by construction) are unchanged.
fn in_chart_files(problem: String, loaded: &LoadedChart) -> String {
    let Some(rest) = problem.strip_prefix("openAPISchema") else {
        return problem;
    };
    let rest = rest.strip_prefix(": ").unwrap_or(rest);
    let Some((at, message)) = rest.split_once(": ").filter(|(at, _)| at.starts_with('/')) else {
        return problem;
    };
    match &loaded.values_schema_json {
        Some(text) => format!("{}: {message}", in_file(SCHEMA_FILE, text, at)),
        None => problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dependency(
        name: &str,
        alias: Option<&str>,
        condition: Option<&str>,
    ) -> chart::ChartDependency {
        chart::ChartDependency {
            name: name.into(),
            version: None,
            repository: None,
            condition: condition.map(Into::into),
            alias: alias.map(Into::into),
        }
    }

    /// Scaffolds a chart directory holding `files` (name, text) beside a
    /// Chart.yaml.
    fn scaffold_files(files: &[(&str, &str)]) -> Result<Scaffolded, ScaffoldError> {
        scaffold_chart("", files, &ScaffoldOptions::default())
    }

    /// Scaffolds a chart whose Chart.yaml ends with `chart_yaml`, holding
    /// `files`, with `options`.
    fn scaffold_chart(
        chart_yaml: &str,
        files: &[(&str, &str)],
        options: &ScaffoldOptions,
    ) -> Result<Scaffolded, ScaffoldError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Chart.yaml"),
            format!("apiVersion: v2\nname: postgres\nversion: 0.1.0\n{chart_yaml}"),
        )
        .unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let loaded = chart::load(&chart::ChartSource::Dir(dir.path().to_owned())).unwrap();
        scaffold(&loaded, options)
    }

    /// The problems a chart whose Chart.yaml ends with `chart_yaml` is
    /// refused with.
    fn refused(chart_yaml: &str) -> Vec<String> {
        match scaffold_chart(chart_yaml, &[], &ScaffoldOptions::default()) {
            Err(ScaffoldError::Invalid { problems }) => problems,
            other => panic!("not refused: {other:?}"),
        }
    }

    const ANNOTATED: &str = "annotations:\n  kubectl-cozy.io/plural: postgresi\n  \
        kubectl-cozy.io/short-names: pg\n  kubectl-cozy.io/group-version: apps.example.com/v1beta1\n  \
        kubectl-cozy.io/release-prefix: db-\n  kubectl-cozy.io/chart-ref: OCIRepository/charts/postgres\n";

    #[test]
    fn a_charts_annotations_set_the_kind_and_flags_win_over_them() {
        let made = scaffold_chart(ANNOTATED, &[], &ScaffoldOptions::default())
            .unwrap()
            .definition;
        assert_eq!(
            (made.plural.as_str(), made.short_names.as_slice()),
            ("postgresi", &["pg".to_owned()][..])
        );
        assert_eq!(
            (made.group.as_str(), made.version.as_str()),
            ("apps.example.com", "v1beta1")
        );
        assert_eq!(made.release.prefix.as_deref(), Some("db-"));
        assert_eq!(made.release.chart, None);
        assert_eq!(
            made.release.chart_ref,
            ObjectRef::parse("OCIRepository/charts/postgres")
        );
        // The caller's flags win; a source given by flag wins over the
        // chart object of the annotation.
        let flags = ScaffoldOptions {
            settings: KindSettings {
                plural: Some("pgs".into()),
                group: Some("apps.cozystack.io".into()),
                version: Some("v1alpha1".into()),
                source_ref: ObjectRef::parse("HelmRepository/cozy-public/cozystack-apps"),
                ..KindSettings::default()
            },
            ..ScaffoldOptions::default()
        };
        let made = scaffold_chart(ANNOTATED, &[], &flags).unwrap().definition;
        assert_eq!(made.plural, "pgs");
        assert_eq!(made.short_names, ["pg"]);
        assert_eq!(made.group, "apps.cozystack.io");
        assert_eq!(made.release.chart_ref, None);
        assert_eq!(
            made.release.chart.map(|c| c.source_ref),
            ObjectRef::parse("HelmRepository/cozy-public/cozystack-apps")
        );
        // A value from an annotation that the definition refuses names it.
        let problems = refused("annotations:\n  kubectl-cozy.io/group-version: apps.k8s.io/v1\n");
        assert!(
            problems[0].starts_with("group: \"apps.k8s.io\" is reserved")
                && problems[0].ends_with(
                    "; it comes from Chart.yaml's kubectl-cozy.io/group-version annotation"
                ),
            "{problems:?}"
        );
        // One the caller's flags override is moot.
        let flagged = ScaffoldOptions {
            settings: KindSettings {
                source_ref: ObjectRef::parse("HelmRepository/apps"),
                ..KindSettings::default()
            },
            ..ScaffoldOptions::default()
        };
        assert!(
            scaffold_chart(
                "annotations:\n  kubectl-cozy.io/source-ref: cozystack-apps\n",
                &[],
                &flagged
            )
            .is_ok()
        );
        // An annotation that cannot be read refuses the chart, naming it.
        let problems = refused("annotations:\n  kubectl-cozy.io/source-ref: cozystack-apps\n");
        assert_eq!(
            problems,
            [
                "Chart.yaml: annotation kubectl-cozy.io/source-ref: \"cozystack-apps\": use KIND/NAME or KIND/NAMESPACE/NAME"
            ]
        );
    }

    #[test]
    fn a_charts_printer_columns_annotation_sets_the_kinds_table() {
        let columns = "annotations:\n  kubectl-cozy.io/printer-columns: |\n    \
            - {name: Replicas, type: integer, jsonPath: .spec.replicas}\n    \
            - name: Ready\n      type: string\n      priority: 1\n      \
            jsonPath: '.status.conditions[?(@.type==\"Ready\")].status'\n";
        let made = scaffold_chart(columns, &[], &ScaffoldOptions::default())
            .unwrap()
            .definition;
        let names: Vec<_> = made
            .printer_columns
            .iter()
            .map(|c| (c.name.as_str(), c.type_.as_str(), c.priority))
            .collect();
        assert_eq!(names, [("Replicas", "integer", 0), ("Ready", "string", 1)]);
        assert_eq!(
            made.printer_columns[1].json_path,
            ".status.conditions[?(@.type==\"Ready\")].status"
        );
        // Columns the definition refuses name the annotation; a value that
        // is not a list of columns is said with the parser's reason.
        let problems = refused(
            "annotations:\n  kubectl-cozy.io/printer-columns: '[{name: Size, type: text, jsonPath: spec.size}]'\n",
        );
        assert_eq!(
            problems,
            [
                "printerColumns[0].type: \"text\" is not one of string, integer, number, boolean, date; it comes from Chart.yaml's kubectl-cozy.io/printer-columns annotation",
                "printerColumns[0].jsonPath: \"spec.size\" must start with '.'; it comes from Chart.yaml's kubectl-cozy.io/printer-columns annotation",
            ]
        );
        let problems = refused(
            "annotations:\n  kubectl-cozy.io/printer-columns: '[{name: Size, jsonpath: .spec.size}]'\n",
        );
        assert!(
            problems.len() == 1
                && problems[0].starts_with(
                    "Chart.yaml: annotation kubectl-cozy.io/printer-columns: \"[{name: Size, jsonpath: .spec.size}]\": "
                )
                && problems[0].contains("jsonpath")
                && problems[0].ends_with("use a YAML list of columns as in a definition's printerColumns (name, type, jsonPath; priority, description and format optional)"),
            "{problems:?}"
        );
    }

    const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "replicas": {
      "type": "integer",
      "default": 2
    },
    "version": {
      "type": "string",
      "pattern": "([a-"
    }
  }
}
"#;

    #[test]
    fn schema_warnings_and_problems_name_the_line_of_the_charts_file() {
        let scaffolded = scaffold_files(&[("values.schema.json", SCHEMA)]).unwrap();
        assert!(
            scaffolded.warnings.iter().any(|w| w.starts_with(
                "values.schema.json:10: /properties/version/pattern: pattern is not a valid RE2 regular expression"
            )),
            "{:?}",
            scaffolded.warnings
        );
        // A CEL rule that does not compile beside a default (which it keeps
        // from being checked): the rule's line in values.schema.json.
        let broken = SCHEMA.replace(
            "\"default\": 2\n",
            "\"default\": 2,\n      \"x-kubernetes-validations\": [{\"rule\": \"self >= oldSelff\"}]\n",
        );
        let Err(ScaffoldError::Invalid { problems }) =
            scaffold_files(&[("values.schema.json", &broken)])
        else {
            panic!("not refused")
        };
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with(
                "values.schema.json:7: /properties/replicas/x-kubernetes-validations/0/rule: compilation failed: "
            ),
            "{problems:?}"
        );
        // A warning about values.yaml: its line there.
        let scaffolded = scaffold_files(&[(
            "values.yaml",
            "replicas: 2\n## @param {int} wrongDefault - A string where an int belongs.\nwrongDefault: \"3\"\n",
        )])
        .unwrap();
        assert!(
            scaffolded.warnings.iter().any(|w| w.starts_with(
                "values.yaml:3: /wrongDefault: the value \"3\" does not fit the @param type \"int\""
            )),
            "{:?}",
            scaffolded.warnings
        );
    }

    #[test]
    fn every_rule_that_does_not_compile_is_said_at_once() {
        let schema = r#"{
  "type": "object",
  "properties": {
    "a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >"}]},
    "b": {"type": "string"},
    "c": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < oldSelff"}]}
  }
}
"#;
        let Err(ScaffoldError::Invalid { problems }) =
            scaffold_files(&[("values.schema.json", schema)])
        else {
            panic!("not refused")
        };
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].starts_with(
                "values.schema.json:4: /properties/a/x-kubernetes-validations/0/rule: compilation failed"
            ) && problems[1].starts_with(
                "values.schema.json:6: /properties/c/x-kubernetes-validations/0/rule: compilation failed"
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn a_pointer_names_the_line_of_its_node_or_its_nearest_ancestor() {
        use super::super::yaml_lines::pointer_line;
        assert_eq!(
            pointer_line(SCHEMA, "/properties/version/pattern"),
            Some(10)
        );
        assert_eq!(pointer_line(SCHEMA, "/properties/version/x-added"), Some(8));
        assert_eq!(pointer_line(SCHEMA, "/properties/a~1b"), Some(3));
        assert_eq!(pointer_line(SCHEMA, ""), None);
        assert_eq!(pointer_line("a:\n  b: [x, {c: 1}]\n", "/a/b/1/c"), Some(2));
    }

    #[test]
    fn a_subchart_switch_the_schema_lacks_is_said() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "database": {"type": "object", "properties": {"enabled": {"type": "boolean"}}}}});
        let said = undeclared_dependencies(
            &[
                dependency("cache", None, Some("cache.enabled")),
                dependency("db", Some("database"), Some("database.enabled")),
                dependency("cozy-lib", None, None),
            ],
            &schema,
        );
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with(
                "dependency cache: its condition cache.enabled is not in the schema, so apps cannot switch it, nor set its values (cache.*)"
            ),
            "{said:?}"
        );
    }
}
