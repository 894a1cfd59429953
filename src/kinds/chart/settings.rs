//! Per-chart settings of the kind made from a chart, in `Chart.yaml`'s
//! annotations, so that `serve --charts` (which takes no per-chart flags)
//! and `kinds scaffold` (whose flags win over them) make the same kind:
//!
//! ```yaml
//! annotations:
//!   kubectl-cozy.io/kind: Postgres            # see names.rs
//!   kubectl-cozy.io/plural: postgreses
//!   kubectl-cozy.io/singular: postgres
//!   kubectl-cozy.io/short-names: pg,pgs
//!   kubectl-cozy.io/categories: cozy,all
//!   kubectl-cozy.io/group-version: apps.example.com/v1alpha1
//!   kubectl-cozy.io/release-prefix: postgres-
//!   kubectl-cozy.io/source-ref: HelmRepository/cozy-public/cozystack-apps
//!   kubectl-cozy.io/chart-ref: OCIRepository/postgres-chart
//!   kubectl-cozy.io/printer-columns: |        # a definition's printerColumns
//!     - {name: Replicas, type: integer, jsonPath: .spec.replicas}
//!     - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
//! ```
//!
//! A value that cannot be read is a problem naming the annotation; an
//! unknown `kubectl-cozy.io/` key (a typo) is a warning listing the known
//! ones. Values are checked as the flags' are, and then with the whole
//! definition.

use std::collections::BTreeMap;

use crate::kinds::definition::{ObjectRef, PrinterColumn};

/// The annotations' common prefix.
pub(crate) const PREFIX: &str = "kubectl-cozy.io/";

/// The keys read (after [`PREFIX`]); `kind` is read by
/// [`super::propose_kind`].
const KEYS: [&str; 10] = [
    "kind",
    "singular",
    "plural",
    "short-names",
    "categories",
    "group-version",
    "release-prefix",
    "source-ref",
    "chart-ref",
    "printer-columns",
];

/// How a kind made of a chart is named and placed, as a chart's
/// annotations or the caller's flags set it (`None` or empty: not set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KindSettings {
    /// `singular`.
    pub singular: Option<String>,
    /// `plural`.
    pub plural: Option<String>,
    /// `short-names`, comma-separated.
    pub short_names: Vec<String>,
    /// `categories`, comma-separated.
    pub categories: Vec<String>,
    /// The group of `group-version`.
    pub group: Option<String>,
    /// The version of `group-version`.
    pub version: Option<String>,
    /// `release-prefix` (may be empty: HelmReleases named as their apps).
    pub prefix: Option<String>,
    /// `source-ref`: KIND/NAME or KIND/NAMESPACE/NAME.
    pub source_ref: Option<ObjectRef>,
    /// `chart-ref`: KIND/NAME or KIND/NAMESPACE/NAME.
    pub chart_ref: Option<ObjectRef>,
    /// `printer-columns`: the table's columns after NAME, in a definition's
    /// `printerColumns` format (YAML); empty: the defaults.
    pub printer_columns: Vec<PrinterColumn>,
}

/// What was read from `annotations`.
#[derive(Debug, Default)]
pub(crate) struct ReadSettings {
    /// The settings.
    pub settings: KindSettings,
    /// Values that cannot be read, one line each, with the setting they
    /// are about (`group-version`, or `source` for the chart's source).
    pub problems: Vec<(&'static str, String)>,
    /// Unknown keys, one line each.
    pub warnings: Vec<String>,
}

impl KindSettings {
    /// These settings (the caller's), what they leave unset taken from the
    /// `chart`'s; a source given either way wins over a chart object given
    /// the other. Also which of the definition's fields (as its problems
    /// name them) came from which annotation.
    pub(crate) fn over(
        &self,
        chart: KindSettings,
    ) -> (KindSettings, Vec<(&'static str, &'static str)>) {
        let mut taken = Vec::new();
        let mut pick = |given: &Option<String>, chart: Option<String>, field, annotation| {
            given.clone().or_else(|| {
                taken.extend(chart.is_some().then_some((field, annotation)));
                chart
            })
        };
        let singular = pick(&self.singular, chart.singular, "singular", "singular");
        let plural = pick(&self.plural, chart.plural, "plural", "plural");
        let group = pick(&self.group, chart.group, "group", "group-version");
        let version = pick(&self.version, chart.version, "version", "group-version");
        let prefix = pick(
            &self.prefix,
            chart.prefix,
            "release.prefix",
            "release-prefix",
        );
        let mut pick_list = |given: &Vec<String>, chart: Vec<String>, field, annotation| {
            if given.is_empty() {
                taken.extend((!chart.is_empty()).then_some((field, annotation)));
                chart
            } else {
                given.clone()
            }
        };
        let short_names = pick_list(
            &self.short_names,
            chart.short_names,
            "shortNames",
            "short-names",
        );
        let categories = pick_list(
            &self.categories,
            chart.categories,
            "categories",
            "categories",
        );
        let printer_columns = if self.printer_columns.is_empty() {
            taken.extend(
                (!chart.printer_columns.is_empty())
                    .then_some(("printerColumns", "printer-columns")),
            );
            chart.printer_columns
        } else {
            self.printer_columns.clone()
        };
        let (source_ref, chart_ref) = if self.source_ref.is_some() || self.chart_ref.is_some() {
            (self.source_ref.clone(), self.chart_ref.clone())
        } else {
            taken.extend(
                chart
                    .source_ref
                    .is_some()
                    .then_some(("release.chart", "source-ref")),
            );
            taken.extend(
                chart
                    .chart_ref
                    .is_some()
                    .then_some(("release.chartRef", "chart-ref")),
            );
            (chart.source_ref, chart.chart_ref)
        };
        let settings = KindSettings {
            singular,
            plural,
            short_names,
            categories,
            group,
            version,
            prefix,
            source_ref,
            chart_ref,
            printer_columns,
        };
        (settings, taken)
    }
}

/// Reads the settings in a chart's `annotations`.
pub(crate) fn read(annotations: &BTreeMap<String, String>) -> ReadSettings {
    let mut read = ReadSettings::default();
    for (key, value) in annotations {
        let Some(name) = key.strip_prefix(PREFIX) else {
            continue;
        };
        let value = value.trim();
        let settings = &mut read.settings;
        let word = |v: &str| Some(v.to_owned()).filter(|v| !v.is_empty());
        let list = |v: &str| -> Vec<String> {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let mut problem = |setting: &'static str, why: &str| {
            read.problems.push((
                setting,
                format!("Chart.yaml: annotation {key}: {value:?}: {why}"),
            ));
        };
        match name {
            "kind" => {}
            "singular" => settings.singular = word(value),
            "plural" => settings.plural = word(value),
            "short-names" => settings.short_names = list(value),
            "categories" => settings.categories = list(value),
            "group-version" => match value.split_once('/') {
                Some((group, version)) if !group.is_empty() && !version.is_empty() => {
                    settings.group = Some(group.to_owned());
                    settings.version = Some(version.to_owned());
                }
                _ => problem("group-version", "use GROUP/VERSION"),
            },
            "release-prefix" => settings.prefix = Some(value.to_owned()),
            "source-ref" | "chart-ref" => match ObjectRef::parse(value) {
                Some(reference) if name == "source-ref" => settings.source_ref = Some(reference),
                Some(reference) => settings.chart_ref = Some(reference),
                None => problem("source", "use KIND/NAME or KIND/NAMESPACE/NAME"),
            },
            "printer-columns" => match serde_saphyr::from_str::<Vec<PrinterColumn>>(value) {
                Ok(columns) => settings.printer_columns = columns,
                Err(e) => problem(
                    "printer-columns",
                    &format!(
                        "{}; use a YAML list of columns as in a definition's printerColumns \
                         (name, type, jsonPath; priority, description and format optional)",
                        crate::kinds::yaml_message::yaml_message(&e)
                    ),
                ),
            },
            _ => read.warnings.push(format!(
                "Chart.yaml: annotation {key} is not one kubectl-cozy reads ({}); ignored",
                KEYS.map(|k| format!("{PREFIX}{k}")).join(", ")
            )),
        }
    }
    if read.settings.source_ref.is_some() && read.settings.chart_ref.is_some() {
        read.problems.push((
            "source",
            format!(
                "Chart.yaml: annotations {PREFIX}source-ref and {PREFIX}chart-ref: give one (a chart from a source, or a chart object)"
            ),
        ));
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn every_setting_is_read_and_other_annotations_are_left_alone() {
        let read = read(&annotations(&[
            ("kubectl-cozy.io/kind", "Postgres"),
            ("kubectl-cozy.io/plural", "postgreses"),
            ("kubectl-cozy.io/singular", " postgres "),
            ("kubectl-cozy.io/short-names", "pg, pgs,"),
            ("kubectl-cozy.io/categories", "cozy,all"),
            ("kubectl-cozy.io/group-version", "apps.example.com/v1beta1"),
            ("kubectl-cozy.io/release-prefix", ""),
            (
                "kubectl-cozy.io/source-ref",
                "GitRepository/platform/charts",
            ),
            ("artifacthub.io/license", "Apache-2.0"),
        ]));
        assert!(
            read.problems.is_empty() && read.warnings.is_empty(),
            "{read:?}"
        );
        assert_eq!(
            read.settings,
            KindSettings {
                singular: Some("postgres".into()),
                plural: Some("postgreses".into()),
                short_names: vec!["pg".into(), "pgs".into()],
                categories: vec!["cozy".into(), "all".into()],
                group: Some("apps.example.com".into()),
                version: Some("v1beta1".into()),
                prefix: Some(String::new()),
                source_ref: Some(ObjectRef {
                    kind: "GitRepository".into(),
                    name: "charts".into(),
                    namespace: Some("platform".into()),
                }),
                chart_ref: None,
                printer_columns: Vec::new(),
            }
        );
    }

    #[test]
    fn unreadable_values_are_problems_and_unknown_keys_warnings() {
        let read = read(&annotations(&[
            ("kubectl-cozy.io/group-version", "apps.example.com"),
            ("kubectl-cozy.io/chart-ref", "OCIRepository/"),
            ("kubectl-cozy.io/plurals", "postgreses"),
        ]));
        assert_eq!(
            read.problems,
            [
                (
                    "source",
                    "Chart.yaml: annotation kubectl-cozy.io/chart-ref: \"OCIRepository/\": use KIND/NAME or KIND/NAMESPACE/NAME".to_owned()
                ),
                (
                    "group-version",
                    "Chart.yaml: annotation kubectl-cozy.io/group-version: \"apps.example.com\": use GROUP/VERSION".to_owned()
                ),
            ]
        );
        assert_eq!(read.warnings.len(), 1);
        assert!(
            read.warnings[0].starts_with(
                "Chart.yaml: annotation kubectl-cozy.io/plurals is not one kubectl-cozy reads (kubectl-cozy.io/kind, "
            ),
            "{:?}",
            read.warnings
        );
        let both = super::read(&annotations(&[
            ("kubectl-cozy.io/chart-ref", "OCIRepository/pg"),
            ("kubectl-cozy.io/source-ref", "HelmRepository/apps"),
        ]));
        assert_eq!(both.problems.len(), 1, "{:?}", both.problems);
    }
}
