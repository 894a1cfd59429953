//! Cozystack compatibility: converting its `ApplicationDefinition` objects
//! (`cozystack.io/v1alpha1`; `CozystackResourceDefinition` before the rename)
//! and its legacy `config.yaml` (`resources: [{application, release}]`) into
//! our [`KindDefinition`], and emitting an `ApplicationDefinition` from ours.
//!
//! Cozystack keeps `spec.application.openAPISchema` as a JSON *string* holding
//! a chart's JSON Schema; it is parsed and converted to a structural schema,
//! and whatever the conversion loses is reported as a warning.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::definition::{ChartSpec, KindDefinition, ObjectRef, ReleaseSpec};
use super::schema;

/// Cozystack's per-kind install timeout annotation.
pub(crate) const INSTALL_TIMEOUT_ANNOTATION: &str = "release.cozystack.io/helm-install-timeout";
/// Cozystack's per-kind upgrade timeout annotation.
pub(crate) const UPGRADE_TIMEOUT_ANNOTATION: &str = "release.cozystack.io/helm-upgrade-timeout";

/// A definition converted from Cozystack's format.
#[derive(Debug, Clone)]
pub(crate) struct Converted {
    /// Our definition.
    pub definition: KindDefinition,
    /// What the schema conversion lost or changed.
    pub warnings: Vec<String>,
    /// Where it came from, e.g. `ApplicationDefinition postgres`.
    pub origin: String,
}

/// Converts one `ApplicationDefinition` object.
pub(crate) fn from_application_definition(object: &Value) -> Result<Converted, String> {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("(unnamed)");
    let spec = object
        .get("spec")
        .ok_or("ApplicationDefinition has no spec")?;
    let annotations = object.pointer("/metadata/annotations");
    let annotation = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut converted = convert_entry(spec.get("application"), spec.get("release"))
        .map_err(|e| format!("ApplicationDefinition {name}: {e}"))?;
    converted.definition.release.install_timeout = annotation(INSTALL_TIMEOUT_ANNOTATION);
    converted.definition.release.upgrade_timeout = annotation(UPGRADE_TIMEOUT_ANNOTATION);
    converted.origin = format!("ApplicationDefinition {name}");
    Ok(converted)
}

/// Converts Cozystack's legacy `config.yaml`.
pub(crate) fn from_legacy_config(document: &Value) -> Result<Vec<Converted>, String> {
    let resources = document
        .get("resources")
        .and_then(Value::as_array)
        .ok_or("config.yaml has no resources list")?;
    resources
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            convert_entry(entry.get("application"), entry.get("release"))
                .map(|mut c| {
                    c.origin = format!("config.yaml resources[{i}]");
                    c
                })
                .map_err(|e| format!("resources[{i}]: {e}"))
        })
        .collect()
}

fn convert_entry(
    application: Option<&Value>,
    release: Option<&Value>,
) -> Result<Converted, String> {
    let application = application.ok_or("missing application")?;
    let release = release.ok_or("missing release")?;
    let text = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let kind = text(application, "kind");
    if kind.is_empty() {
        return Err("application.kind is empty".to_owned());
    }
    let mut warnings = Vec::new();
    let open_api_schema = match application.get("openAPISchema") {
        None | Some(Value::Null) => {
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        }
        Some(Value::String(s)) => {
            let parsed: Value = serde_json::from_str(s)
                .map_err(|e| format!("application.openAPISchema is not JSON: {e}"))?;
            convert_schema(&parsed, &mut warnings)?
        }
        Some(object @ Value::Object(_)) => convert_schema(object, &mut warnings)?,
        Some(_) => return Err("application.openAPISchema must be a JSON string".to_owned()),
    };
    let object_ref = |v: &Value| ObjectRef {
        kind: text(v, "kind"),
        name: text(v, "name"),
        namespace: v
            .get("namespace")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    };
    let chart_ref = release.get("chartRef").map(object_ref);
    let chart = release.get("chart").map(|c| ChartSpec {
        name: text(c, "name"),
        version: c.get("version").and_then(Value::as_str).map(str::to_owned),
        source_ref: object_ref(c.get("sourceRef").unwrap_or(&Value::Null)),
    });
    let labels: BTreeMap<String, String> = release
        .get("labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    let definition = KindDefinition {
        kind,
        singular: text(application, "singular"),
        plural: text(application, "plural"),
        short_names: strings(application.get("shortNames")),
        categories: strings(application.get("categories")),
        group: super::definition::DEFAULT_GROUP.to_owned(),
        version: super::definition::DEFAULT_VERSION.to_owned(),
        description: String::new(),
        open_api_schema,
        printer_columns: Vec::new(),
        release: ReleaseSpec {
            prefix: release
                .get("prefix")
                .and_then(Value::as_str)
                .map(str::to_owned),
            labels,
            chart,
            chart_ref,
            ..ReleaseSpec::default()
        },
    };
    Ok(Converted {
        definition,
        warnings,
        origin: String::new(),
    })
}

fn convert_schema(schema_in: &Value, warnings: &mut Vec<String>) -> Result<Value, String> {
    let conversion = schema::to_structural(schema_in);
    if !conversion.is_ok() {
        let errors: Vec<String> = conversion
            .errors
            .iter()
            .map(|i| format!("openAPISchema{}: {}", i.pointer, i.message))
            .collect();
        return Err(errors.join("; "));
    }
    warnings.extend(
        conversion
            .warnings
            .iter()
            .map(|i| format!("openAPISchema{}: {}", i.pointer, i.message)),
    );
    Ok(conversion.schema)
}

/// An `ApplicationDefinition` for `definition`, for `kinds scaffold --format
/// cozystack`, and one sentence per field of the definition the format
/// cannot hold (left out, not silently lost).
///
/// Cozystack's `spec.application` holds only `kind`, `singular`, `plural`
/// and `openAPISchema`, and `spec.release` a `chartRef`, `prefix` and
/// `labels` (Cozystack's `api/v1alpha1/applicationdefinitions_types.go`):
/// its CRD refuses other fields, so
/// short names, categories, a description, another group/version, printer
/// columns, the release interval and history, and a chart's version and
/// repository are left out. A `chart` becomes a `chartRef` to a Flux
/// HelmChart named after the chart in the repository's namespace, which
/// must exist (the warnings say what it holds).
pub(crate) fn to_application_definition(definition: &KindDefinition) -> (Value, Vec<String>) {
    let mut dropped = Vec::new();
    let singular = if definition.singular.is_empty() {
        definition.kind.to_lowercase()
    } else {
        definition.singular.clone()
    };
    let plural = if definition.plural.is_empty() {
        super::chart::pluralize(&singular)
    } else {
        definition.plural.clone()
    };
    let application = json!({
        "kind": definition.kind,
        "singular": singular,
        "plural": plural,
        "openAPISchema": serde_json::to_string(&definition.open_api_schema).unwrap_or_default(),
    });
    const HOLDS: &str = "an ApplicationDefinition's spec.application holds only kind, singular, plural and \
                         openAPISchema";
    if !definition.short_names.is_empty() {
        dropped.push(format!(
            "shortNames {}: {HOLDS}; left out",
            definition.short_names.join(",")
        ));
    }
    if !definition.categories.is_empty() {
        dropped.push(format!(
            "categories {}: {HOLDS} (spec.dashboard.category is the dashboard's menu group, not a kubectl \
             category); left out",
            definition.categories.join(",")
        ));
    }
    if !definition.description.is_empty() {
        dropped.push(
            "description: an ApplicationDefinition keeps one only in spec.dashboard.description, beside the \
             dashboard's required singular, plural and category; left out (add spec.dashboard by hand)"
                .to_owned(),
        );
    }
    if definition.group != super::definition::DEFAULT_GROUP
        || definition.version != super::definition::DEFAULT_VERSION
    {
        dropped.push(format!(
            "group/version {}/{}: Cozystack serves every ApplicationDefinition in {}/{}; left out",
            definition.group,
            definition.version,
            super::definition::DEFAULT_GROUP,
            super::definition::DEFAULT_VERSION
        ));
    }
    if !definition.printer_columns.is_empty() {
        dropped.push(
            "printerColumns: Cozystack's columns are fixed (NAME, READY, AGE, VERSION); left out"
                .to_owned(),
        );
    }
    let r = &definition.release;
    let mut release = json!({"prefix": r.prefix.clone().unwrap_or_else(|| format!("{singular}-"))});
    if !r.labels.is_empty() {
        release["labels"] = json!(r.labels);
    }
    if let Some(chart_ref) = &r.chart_ref {
        release["chartRef"] = serde_json::to_value(chart_ref).unwrap_or_default();
    } else if let Some(chart) = &r.chart {
        // Cozystack's current API only takes chartRef; a Flux HelmChart named
        // after the chart in the source's namespace is the equivalent object.
        let namespace = chart
            .source_ref
            .namespace
            .clone()
            .unwrap_or_else(|| "cozy-system".to_owned());
        release["chartRef"] = json!({
            "kind": "HelmChart",
            "name": chart.name,
            "namespace": namespace,
        });
        let helm_chart = format!("the Flux HelmChart {namespace}/{}", chart.name);
        dropped.push(format!(
            "release.chart.sourceRef {}/{}: an ApplicationDefinition names its chart only by chartRef, here \
             {helm_chart}, which must exist: create it with spec.chart {} and spec.sourceRef {{kind: {}, name: {}}}",
            chart.source_ref.kind, chart.source_ref.name, chart.name, chart.source_ref.kind, chart.source_ref.name
        ));
        if let Some(version) = &chart.version {
            dropped.push(format!(
                "release.chart.version {version}: an ApplicationDefinition holds no chart version; it belongs \
                 in {helm_chart} (spec.version)"
            ));
        }
    }
    if let Some(interval) = &r.interval {
        dropped.push(format!(
            "release.interval {interval}: Cozystack sets it for every kind (cozystack-api \
             --helmrelease-interval); left out"
        ));
    }
    if let Some(max_history) = r.max_history {
        dropped.push(format!(
            "release.maxHistory {max_history}: Cozystack sets it for every kind (cozystack-api \
             --helmrelease-max-history); left out"
        ));
    }
    let mut metadata = json!({"name": singular});
    let mut annotations = serde_json::Map::new();
    if let Some(t) = &r.install_timeout {
        annotations.insert(INSTALL_TIMEOUT_ANNOTATION.to_owned(), json!(t));
    }
    if let Some(t) = &r.upgrade_timeout {
        annotations.insert(UPGRADE_TIMEOUT_ANNOTATION.to_owned(), json!(t));
    }
    if !annotations.is_empty() {
        metadata["annotations"] = Value::Object(annotations);
    }
    let document = json!({
        "apiVersion": "cozystack.io/v1alpha1",
        "kind": "ApplicationDefinition",
        "metadata": metadata,
        "spec": {"application": application, "release": release},
    });
    (document, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    const APPDEF: &str = r#"
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: postgres
  annotations: {release.cozystack.io/helm-install-timeout: 15m}
spec:
  application:
    kind: Postgres
    singular: postgres
    plural: postgreses
    openAPISchema: |-
      {"title":"Chart Values","type":"object","properties":{"replicas":{"description":"Number of Postgres replicas.","type":"integer","default":2},"sync":{"type":"string","enum":["on","off"],"default":"on"}}}
  release:
    prefix: postgres-
    labels: {sharding.fluxcd.io/key: tenants}
    chartRef: {kind: ExternalArtifact, name: cozystack-postgres-application-default-postgres, namespace: cozy-system}
  dashboard: {category: PaaS}
"#;

    #[test]
    fn application_definition_converts() {
        let object: Value = serde_saphyr::from_str(APPDEF).unwrap();
        let c = from_application_definition(&object).unwrap();
        let d = &c.definition;
        assert_eq!(
            (d.kind.as_str(), d.plural.as_str()),
            ("Postgres", "postgreses")
        );
        assert_eq!(d.release.install_timeout.as_deref(), Some("15m"));
        assert_eq!(
            d.release.chart_ref.as_ref().unwrap().namespace.as_deref(),
            Some("cozy-system")
        );
        assert_eq!(d.release.labels["sharding.fluxcd.io/key"], "tenants");
        assert_eq!(
            d.open_api_schema["properties"]["sync"]["enum"],
            json!(["on", "off"])
        );
        assert_eq!(c.origin, "ApplicationDefinition postgres");
        d.clone().resolve("test").unwrap();
    }

    #[test]
    fn legacy_config_converts() {
        let doc: Value = serde_saphyr::from_str(
            "resources:\n- application: {kind: Redis, singular: redis, plural: redises}\n  release:\n    prefix: redis-\n    \
             labels: {cozystack.io/ui: 'true'}\n    chart:\n      name: redis\n      sourceRef: {kind: HelmRepository, name: cozystack-apps, namespace: cozy-public}\n",
        )
        .unwrap();
        let all = from_legacy_config(&doc).unwrap();
        assert_eq!(all.len(), 1);
        let d = &all[0].definition;
        assert_eq!(
            d.release.chart.as_ref().unwrap().source_ref.name,
            "cozystack-apps"
        );
        d.clone().resolve("test").unwrap();
    }

    #[test]
    fn round_trip_through_application_definition() {
        let object: Value = serde_saphyr::from_str(APPDEF).unwrap();
        let first = from_application_definition(&object).unwrap().definition;
        let (emitted, dropped) = to_application_definition(&first);
        assert_eq!(dropped, Vec::<String>::new());
        let second = from_application_definition(&emitted).unwrap().definition;
        assert_eq!(first, second);
    }

    /// What the format cannot hold is left out with one warning per field;
    /// the document holds only fields Cozystack's CRD knows.
    #[test]
    fn what_an_application_definition_cannot_hold_is_named() {
        let definition: KindDefinition = serde_saphyr::from_str(
            "kind: Kafka\nshortNames: [kf]\ncategories: [cozy]\ndescription: Managed Kafka\n\
             openAPISchema: {type: object}\nrelease:\n  chart:\n    name: kafka\n    version: 1.3.0\n    \
             sourceRef: {kind: HelmRepository, name: bar, namespace: foo}\n",
        )
        .unwrap();
        let (document, dropped) = to_application_definition(&definition);
        assert_eq!(
            document["spec"],
            json!({
                "application": {"kind": "Kafka", "singular": "kafka", "plural": "kafkas", "openAPISchema": "{\"type\":\"object\"}"},
                "release": {"prefix": "kafka-", "chartRef": {"kind": "HelmChart", "name": "kafka", "namespace": "foo"}}
            })
        );
        assert_eq!(
            dropped,
            [
                "shortNames kf: an ApplicationDefinition's spec.application holds only kind, singular, plural and \
                 openAPISchema; left out",
                "categories cozy: an ApplicationDefinition's spec.application holds only kind, singular, plural \
                 and openAPISchema (spec.dashboard.category is the dashboard's menu group, not a kubectl \
                 category); left out",
                "description: an ApplicationDefinition keeps one only in spec.dashboard.description, beside the \
                 dashboard's required singular, plural and category; left out (add spec.dashboard by hand)",
                "release.chart.sourceRef HelmRepository/bar: an ApplicationDefinition names its chart only by \
                 chartRef, here the Flux HelmChart foo/kafka, which must exist: create it with spec.chart kafka \
                 and spec.sourceRef {kind: HelmRepository, name: bar}",
                "release.chart.version 1.3.0: an ApplicationDefinition holds no chart version; it belongs in the \
                 Flux HelmChart foo/kafka (spec.version)",
            ]
        );
    }

    #[test]
    fn bad_schema_string_is_an_error() {
        let mut object: Value = serde_saphyr::from_str(APPDEF).unwrap();
        object["spec"]["application"]["openAPISchema"] = json!("{not json");
        let err = from_application_definition(&object).unwrap_err();
        assert!(err.contains("openAPISchema is not JSON"), "{err}");
    }
}
