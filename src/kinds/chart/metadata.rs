//! `Chart.yaml`: the [`ChartMetadata`] model (Helm chart API v1 and v2) and
//! its validation — required fields, SemVer 2 versions, chart types — done
//! the way Helm's `Metadata.Validate` does, plus the refusal of library
//! charts, which cannot be installed and so cannot back a kind.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::ChartError;
use super::yaml::{yaml_error, yaml_options};

/// A chart's `Chart.yaml`, validated.
///
/// Empty strings in the file are treated as absent, as Helm does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChartMetadata {
    /// `v1` (Helm 2 era) or `v2`.
    pub api_version: String,
    /// The chart name.
    pub name: String,
    /// The chart version, valid SemVer 2 (as written, e.g. `1.2.3-rc.1`).
    pub version: String,
    /// The version of the packaged application (free-form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// One-line description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `application` when stated; library charts are refused when loading.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub chart_type: Option<String>,
    /// Search keywords.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// The project's home page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// Source code URLs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// Icon URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// Maintainers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub maintainers: Vec<Maintainer>,
    /// Free-form annotations.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Subchart dependencies declared in Chart.yaml (v2 charts; v1 charts
    /// keep them in `requirements.yaml`, which is not read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<ChartDependency>,
    /// SemVer range of supported Kubernetes versions (not interpreted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kube_version: Option<String>,
    /// Whether the chart is deprecated.
    pub deprecated: bool,
}

/// A chart maintainer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Maintainer {
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// E-mail address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A subchart dependency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ChartDependency {
    /// The subchart's name.
    pub name: String,
    /// SemVer range of the subchart version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Repository URL (or `@alias` / `file://` path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Values path enabling the subchart (`postgresql.enabled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Name the subchart is installed under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
}

/// Chart.yaml as written; everything optional so that validation, not the
/// parser, reports what is missing.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct RawChart {
    api_version: Option<String>,
    name: Option<String>,
    version: Option<String>,
    app_version: Option<String>,
    description: Option<String>,
    #[serde(rename = "type")]
    chart_type: Option<String>,
    keywords: Option<Vec<String>>,
    home: Option<String>,
    sources: Option<Vec<String>>,
    icon: Option<String>,
    maintainers: Option<Vec<Maintainer>>,
    annotations: Option<BTreeMap<String, String>>,
    dependencies: Option<Vec<RawDependency>>,
    kube_version: Option<String>,
    deprecated: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawDependency {
    name: Option<String>,
    version: Option<String>,
    repository: Option<String>,
    condition: Option<String>,
    alias: Option<String>,
}

/// `Some` unless absent or empty.
fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|s| !s.trim().is_empty())
}

/// Parses and validates a Chart.yaml; `file` names it in errors.
pub(super) fn parse_chart_yaml(text: &str, file: &str) -> Result<ChartMetadata, ChartError> {
    let raw: RawChart = serde_saphyr::from_str_with_options(text, yaml_options())
        .map_err(|err| yaml_error(&err, file))?;

    let api_version = non_empty(raw.api_version).ok_or_else(|| missing(file, "apiVersion"))?;
    if api_version != "v1" && api_version != "v2" {
        return Err(ChartError::InvalidMetadata {
            file: file.to_owned(),
            message: format!("apiVersion must be v1 or v2, not {api_version:?}"),
        });
    }

    let name = non_empty(raw.name).ok_or_else(|| missing(file, "name"))?;
    if let Err(reason) = check_chart_name(&name) {
        return Err(ChartError::InvalidName {
            file: file.to_owned(),
            name,
            reason: reason.to_owned(),
        });
    }

    let version = non_empty(raw.version).ok_or_else(|| missing(file, "version"))?;
    if let Err(err) = semver::Version::parse(&version) {
        return Err(ChartError::InvalidVersion {
            file: file.to_owned(),
            version,
            reason: err.to_string(),
        });
    }

    let chart_type = match non_empty(raw.chart_type) {
        None => None,
        Some(t) if t == "application" => Some(t),
        Some(t) if t == "library" => {
            return Err(ChartError::LibraryChart {
                name,
                file: file.to_owned(),
            });
        }
        Some(t) => {
            return Err(ChartError::InvalidMetadata {
                file: file.to_owned(),
                message: format!("type must be \"application\" or \"library\", not {t:?}"),
            });
        }
    };

    let mut dependencies = Vec::new();
    for (i, dep) in raw.dependencies.unwrap_or_default().into_iter().enumerate() {
        let Some(dep_name) = non_empty(dep.name) else {
            return Err(ChartError::InvalidMetadata {
                file: file.to_owned(),
                message: format!("dependencies[{i}] has no name"),
            });
        };
        dependencies.push(ChartDependency {
            name: dep_name,
            version: non_empty(dep.version),
            repository: non_empty(dep.repository),
            condition: non_empty(dep.condition),
            alias: non_empty(dep.alias),
        });
    }

    Ok(ChartMetadata {
        api_version,
        name,
        version,
        app_version: non_empty(raw.app_version),
        description: non_empty(raw.description),
        chart_type,
        keywords: raw.keywords.unwrap_or_default(),
        home: non_empty(raw.home),
        sources: raw.sources.unwrap_or_default(),
        icon: non_empty(raw.icon),
        maintainers: raw.maintainers.unwrap_or_default(),
        annotations: raw.annotations.unwrap_or_default(),
        dependencies,
        kube_version: non_empty(raw.kube_version),
        deprecated: raw.deprecated.unwrap_or(false),
    })
}

fn missing(file: &str, field: &'static str) -> ChartError {
    ChartError::MissingField {
        file: file.to_owned(),
        field,
    }
}

/// Helm's rule (the name is its own base name: no path separators, not `.`
/// or `..`), plus no whitespace or control characters.
fn check_chart_name(name: &str) -> Result<(), &'static str> {
    if name.contains(['/', '\\']) {
        return Err("it must not contain path separators");
    }
    if name == "." || name == ".." {
        return Err("it must be a name, not a path");
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("it must not contain whitespace or control characters");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ChartMetadata, ChartError> {
        parse_chart_yaml(text, "charts/x/Chart.yaml")
    }

    #[test]
    fn full_v2_chart() {
        let meta = parse(
            "apiVersion: v2\n\
             name: postgres\n\
             version: 0.3.1-rc.1+build.5\n\
             appVersion: 17.2\n\
             description: Managed PostgreSQL\n\
             type: application\n\
             keywords: [database, sql]\n\
             home: https://www.postgresql.org\n\
             sources: [https://github.com/example/charts]\n\
             icon: https://example.com/pg.svg\n\
             maintainers:\n  - name: Platform team\n    email: platform@example.com\n\
             annotations:\n  cozystack.io/ui: \"true\"\n  category: database\n\
             dependencies:\n  - name: common\n    version: 2.x.x\n    repository: oci://example/charts\n    import-values: [defaults]\n\
             kubeVersion: \">=1.29.0-0\"\n\
             deprecated: false\n\
             unknownField: ignored\n",
        )
        .unwrap();
        assert_eq!(meta.api_version, "v2");
        assert_eq!(meta.name, "postgres");
        assert_eq!(meta.version, "0.3.1-rc.1+build.5");
        assert_eq!(meta.app_version.as_deref(), Some("17.2"));
        assert_eq!(meta.chart_type.as_deref(), Some("application"));
        assert_eq!(meta.keywords, ["database", "sql"]);
        assert_eq!(
            meta.maintainers[0].email.as_deref(),
            Some("platform@example.com")
        );
        assert_eq!(meta.annotations["cozystack.io/ui"], "true");
        assert_eq!(meta.dependencies[0].name, "common");
        assert_eq!(
            meta.dependencies[0].repository.as_deref(),
            Some("oci://example/charts")
        );
        assert_eq!(meta.kube_version.as_deref(), Some(">=1.29.0-0"));
        assert!(!meta.deprecated);
    }

    #[test]
    fn app_version_keeps_its_spelling() {
        // YAML would read 1.10 as the float 1.1; Helm users mean "1.10".
        let meta = parse("apiVersion: v1\nname: x\nversion: 1.0.0\nappVersion: 1.10\n").unwrap();
        assert_eq!(meta.app_version.as_deref(), Some("1.10"));
        assert_eq!(meta.api_version, "v1");
        assert_eq!(meta.chart_type, None);
    }

    #[test]
    fn missing_fields() {
        let err = parse("name: x\nversion: 1.0.0\n").unwrap_err();
        assert!(
            matches!(
                err,
                ChartError::MissingField {
                    field: "apiVersion",
                    ..
                }
            ),
            "{err}"
        );
        let err = parse("apiVersion: v2\nversion: 1.0.0\n").unwrap_err();
        assert!(
            matches!(err, ChartError::MissingField { field: "name", .. }),
            "{err}"
        );
        let err = parse("apiVersion: v2\nname: \"\"\nversion: 1.0.0\n").unwrap_err();
        assert!(
            matches!(err, ChartError::MissingField { field: "name", .. }),
            "{err}"
        );
        let err = parse("apiVersion: v2\nname: x\n").unwrap_err();
        assert!(
            matches!(
                err,
                ChartError::MissingField {
                    field: "version",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "charts/x/Chart.yaml: required field `version` is missing or empty"
        );
        let err = parse("").unwrap_err();
        assert!(matches!(err, ChartError::MissingField { .. }), "{err}");
    }

    #[test]
    fn bad_semver() {
        for bad in ["1.0", "v1.2.3", "1.2.3.4", "01.2.3", "latest", "1.2.3-"] {
            let err = parse(&format!("apiVersion: v2\nname: x\nversion: {bad}\n")).unwrap_err();
            let ChartError::InvalidVersion { version, .. } = &err else {
                panic!("{bad}: unexpected {err:?}");
            };
            assert_eq!(version, bad);
            assert!(err.to_string().contains("SemVer 2"), "{err}");
        }
    }

    #[test]
    fn library_chart_refused() {
        let err =
            parse("apiVersion: v2\nname: common\nversion: 2.0.0\ntype: library\n").unwrap_err();
        assert!(
            matches!(err, ChartError::LibraryChart { ref name, .. } if name == "common"),
            "{err}"
        );
        assert!(err.to_string().contains("cannot be installed"), "{err}");
    }

    #[test]
    fn bad_type_and_api_version() {
        let err = parse("apiVersion: v2\nname: x\nversion: 1.0.0\ntype: app\n").unwrap_err();
        assert!(err.to_string().contains("\"app\""), "{err}");
        let err = parse("apiVersion: v3\nname: x\nversion: 1.0.0\n").unwrap_err();
        assert!(err.to_string().contains("v1 or v2"), "{err}");
    }

    #[test]
    fn bad_names() {
        for bad in ["a/b", "..", "my chart"] {
            let err = parse(&format!(
                "apiVersion: v2\nname: \"{bad}\"\nversion: 1.0.0\n"
            ))
            .unwrap_err();
            assert!(
                matches!(err, ChartError::InvalidName { .. }),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn dependency_without_name() {
        let err =
            parse("apiVersion: v2\nname: x\nversion: 1.0.0\ndependencies:\n  - version: 1.x\n")
                .unwrap_err();
        assert!(err.to_string().contains("dependencies[0]"), "{err}");
    }

    #[test]
    fn malformed_yaml_names_line_and_column() {
        let err =
            parse("apiVersion: v2\nname: x\nversion: \"1.0.0\"\n  bad: : indent\n").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("charts/x/Chart.yaml:4:3: invalid YAML: "),
            "{msg}"
        );
        assert!(!msg.contains("at line"), "{msg}");
        let err = parse("apiVersion: v2\nname: [x\n").unwrap_err();
        assert!(
            matches!(err, ChartError::Yaml { line: Some(2), .. }),
            "{err}"
        );
    }

    #[test]
    fn wrong_types_name_the_line() {
        let err = parse("apiVersion: v2\nname: x\nversion: 1.0.0\nannotations:\n  a:\n    b: c\n")
            .unwrap_err();
        assert!(
            matches!(err, ChartError::Yaml { line: Some(6), .. }),
            "{err}"
        );
        let err = parse("apiVersion: v2\nname: x\nname: y\nversion: 1.0.0\n").unwrap_err();
        assert!(
            err.to_string().starts_with("charts/x/Chart.yaml:3:1:"),
            "{err}"
        );
    }
}
