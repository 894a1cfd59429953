//! The kind definition format: one document per served kind, naming the kind,
//! its API group, the structural schema of its `spec`, its printer columns,
//! and how its objects are stored as Flux HelmReleases. Defaults are applied by
//! `KindDefinition::resolve`, which also validates a single definition;
//! `validate_set` checks a whole set for collisions.
//!
//! ```yaml
//! kind: Postgres
//! plural: postgreses            # default: Kubernetes' guess from the singular
//! shortNames: [pg]
//! categories: [cozy]            # "all" is not added implicitly
//! openAPISchema: {type: object, properties: {replicas: {type: integer, default: 2}}}
//! release:
//!   chart: {name: postgres, version: 0.1.0, sourceRef: {kind: HelmRepository, name: cozy-apps, namespace: cozy-public}}
//! ```

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::golang;

/// The group kinds are served in unless a definition says otherwise.
pub(crate) const DEFAULT_GROUP: &str = "apps.cozystack.io";
/// The version kinds are served in unless a definition says otherwise.
pub(crate) const DEFAULT_VERSION: &str = "v1alpha1";
/// Helm's limit on release names; the HelmRelease name is `prefix + name`.
pub(crate) const HELM_RELEASE_NAME_MAX: usize = 53;

/// The kinds a HelmRelease's `spec.chart.spec.sourceRef` may name (Flux's
/// helm.toolkit.fluxcd.io/v2 CRD).
const FLUX_SOURCE_KINDS: [&str; 3] = ["HelmRepository", "GitRepository", "Bucket"];

/// The kinds a HelmRelease's `spec.chartRef` may name.
const FLUX_CHART_REF_KINDS: [&str; 3] = ["OCIRepository", "HelmChart", "ExternalArtifact"];
/// A release prefix that leaves app names fewer characters than this is
/// warned of: names such as `orders-staging-eu-west` no longer fit.
pub(crate) const NAME_ROOM_WARNED_UNDER: usize = 20;

/// One kind, as written in a definition file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindDefinition {
    /// The kind, UpperCamelCase (`Postgres`).
    pub kind: String,
    /// Lower-case singular resource name (default: the kind, lower-cased).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub singular: String,
    /// Lower-case plural resource name (default: Kubernetes' guess from the singular).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub plural: String,
    /// Short names for kubectl (`pg`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    /// Categories (`all` makes `kubectl get all` include the kind).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// API group (default `apps.cozystack.io`).
    #[serde(default = "default_group")]
    pub group: String,
    /// API version (default `v1alpha1`).
    #[serde(default = "default_version")]
    pub version: String,
    /// Human description of the kind, shown by `kubectl explain`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The structural OpenAPI v3 schema of `spec` (an object schema).
    #[serde(rename = "openAPISchema", default = "empty_object_schema")]
    pub open_api_schema: Value,
    /// Table columns after NAME (default: READY, VERSION, STATUS, AGE).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub printer_columns: Vec<PrinterColumn>,
    /// How objects are stored as HelmReleases.
    pub release: ReleaseSpec,
}

/// A table column, as in a CRD's `additionalPrinterColumns`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PrinterColumn {
    /// Column header.
    pub name: String,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Simple JSONPath into the object, e.g. `.status.version`.
    pub json_path: String,
    /// 0 shows always; more only with `-o wide`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub priority: i32,
    /// Column description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// OpenAPI format hint (`name`, `date-time`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
}

/// How an object of the kind becomes a Flux HelmRelease.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseSpec {
    /// HelmRelease name prefix (default `<singular>-`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Extra labels put on every HelmRelease.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// A chart from a Flux source (HelmRepository, GitRepository, Bucket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartSpec>,
    /// A Flux chart reference (OCIRepository, HelmChart, ExternalArtifact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_ref: Option<ObjectRef>,
    /// HelmRelease reconcile interval (default `5m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Helm install timeout (default `10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_timeout: Option<String>,
    /// Helm upgrade timeout (default `10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_timeout: Option<String>,
    /// Helm release history to keep (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_history: Option<u32>,
}

/// `release.chart`: a chart name and version in a Flux source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChartSpec {
    /// Chart name in the source.
    pub name: String,
    /// Chart version or SemVer range (default: latest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The Flux source holding the chart.
    pub source_ref: ObjectRef,
}

/// A reference to a Flux object, optionally in another namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectRef {
    /// Kind, e.g. `HelmRepository`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace (default: the HelmRelease's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl ObjectRef {
    /// Reads `KIND/NAME` or `KIND/NAMESPACE/NAME`; `None` for anything else.
    pub fn parse(text: &str) -> Option<ObjectRef> {
        let parts: Vec<&str> = text.split('/').collect();
        let (kind, namespace, name) = match parts.as_slice() {
            [kind, name] => (*kind, None, *name),
            [kind, namespace, name] if !namespace.is_empty() => {
                (*kind, Some((*namespace).to_owned()), *name)
            }
            _ => return None,
        };
        (!kind.is_empty() && !name.is_empty()).then(|| ObjectRef {
            kind: kind.to_owned(),
            name: name.to_owned(),
            namespace,
        })
    }
}

fn default_group() -> String {
    DEFAULT_GROUP.to_owned()
}

fn default_version() -> String {
    DEFAULT_VERSION.to_owned()
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

/// The printer columns a kind gets when its definition names none.
pub(crate) fn default_printer_columns() -> Vec<PrinterColumn> {
    let col = |name: &str, type_: &str, path: &str, description: &str| PrinterColumn {
        name: name.to_owned(),
        type_: type_.to_owned(),
        json_path: path.to_owned(),
        priority: 0,
        description: description.to_owned(),
        format: String::new(),
    };
    vec![
        col(
            "Ready",
            "string",
            ".status.conditions[?(@.type==\"Ready\")].status",
            "Whether the release is ready",
        ),
        col(
            "Version",
            "string",
            ".status.version",
            "Chart version deployed",
        ),
        col(
            "Status",
            "string",
            ".status.conditions[?(@.type==\"Ready\")].message",
            "Message of the Ready condition",
        ),
        col(
            "Age",
            "date",
            ".metadata.creationTimestamp",
            "Time since creation",
        ),
    ]
}

/// A definition with every default applied and every field checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedKind {
    /// The definition with defaults filled in.
    pub definition: KindDefinition,
    /// The HelmRelease name prefix.
    pub release_prefix: String,
    /// Where the definition came from (file path, ApplicationDefinition name).
    pub source: String,
}

impl ResolvedKind {
    /// `<plural>.<group>`, as RBAC and error messages name the resource.
    pub(crate) fn resource_group(&self) -> String {
        format!("{}.{}", self.definition.plural, self.definition.group)
    }

    /// `<group>/<version>`.
    pub fn group_version(&self) -> String {
        format!("{}/{}", self.definition.group, self.definition.version)
    }

    /// The longest app name: what Helm's release name limit leaves after
    /// the release prefix.
    pub(crate) fn name_max(&self) -> usize {
        HELM_RELEASE_NAME_MAX.saturating_sub(self.release_prefix.len())
    }
}

impl KindDefinition {
    /// Applies defaults and validates this definition on its own; returns every
    /// problem found, each as a `field: problem` sentence.
    pub(crate) fn resolve(
        mut self,
        source: impl Into<String>,
    ) -> Result<ResolvedKind, Vec<String>> {
        let mut problems = Vec::new();
        if self.singular.is_empty() {
            self.singular = self.kind.to_lowercase();
        }
        if self.plural.is_empty() {
            self.plural = super::chart::pluralize(&self.singular);
        }
        if self.printer_columns.is_empty() {
            self.printer_columns = default_printer_columns();
        }
        let release = &mut self.release;
        release.interval.get_or_insert_with(|| "5m".to_owned());
        release
            .install_timeout
            .get_or_insert_with(|| "10m".to_owned());
        release
            .upgrade_timeout
            .get_or_insert_with(|| "10m".to_owned());
        release.max_history.get_or_insert(5);
        let prefix = release
            .prefix
            .clone()
            .unwrap_or_else(|| format!("{}-", self.singular));

        if !is_kind_name(&self.kind) {
            problems.push(format!(
                "kind: {:?} must be UpperCamelCase letters and digits (e.g. Postgres)",
                self.kind
            ));
        } else if self.kind == "List" {
            problems.push(
                "kind: \"List\" is the kind of lists of objects (`kind: List` documents, as `kubectl get -o yaml` \
                 prints them), which kubectl and these loaders read as a list, not as one object: choose another kind"
                    .to_owned(),
            );
        }
        for (field, value) in [("singular", &self.singular), ("plural", &self.plural)] {
            if let Some(why) = dns1035_problem(value) {
                problems.push(format!("{field}: {value:?} {why}"));
            }
        }
        for short in &self.short_names {
            if let Some(why) = dns1035_problem(short) {
                problems.push(format!("shortNames: {short:?} {why}"));
            }
        }
        for category in &self.categories {
            if let Some(why) = dns1035_problem(category) {
                problems.push(format!("categories: {category:?} {why}"));
            }
        }
        if !is_dns1123_subdomain(&self.group) || !self.group.contains('.') {
            let lower = self.group.to_lowercase();
            if lower != self.group && is_dns1123_subdomain(&lower) && lower.contains('.') {
                problems.push(format!(
                    "group: {:?} must be lower-case ({lower:?}): an API group is a DNS subdomain",
                    self.group
                ));
            } else {
                problems.push(format!(
                    "group: {:?} must be a DNS subdomain with at least one dot",
                    self.group
                ));
            }
        }
        if is_reserved_group(&self.group) {
            problems.push(format!(
                "group: {:?} is reserved for Kubernetes' own APIs (k8s.io, kubernetes.io and their subdomains, \
                 which kube-apiserver keeps from CRDs too): choose a group of your own domain",
                self.group
            ));
        }
        if !is_api_version(&self.version) {
            problems.push(format!(
                "version: {:?} must look like v1, v1alpha1 or v2beta3",
                self.version
            ));
        }
        if self.open_api_schema.get("type").and_then(Value::as_str) != Some("object") {
            problems.push("openAPISchema: the schema of spec must have type: object".to_owned());
        }
        for issue in super::schema::check_structural(&self.open_api_schema) {
            problems.push(format!("openAPISchema{}: {}", issue.pointer, issue.message));
        }
        let mut column_names = std::collections::BTreeSet::new();
        for (i, column) in self.printer_columns.iter().enumerate() {
            if column.name.is_empty() || !column_names.insert(column.name.to_lowercase()) {
                problems.push(format!(
                    "printerColumns[{i}].name: {:?} is empty or repeated",
                    column.name
                ));
            }
            if !matches!(
                column.type_.as_str(),
                "string" | "integer" | "number" | "boolean" | "date"
            ) {
                problems.push(format!(
                    "printerColumns[{i}].type: {:?} is not one of string, integer, number, boolean, date",
                    column.type_
                ));
            }
            if !column.json_path.starts_with('.') {
                problems.push(format!(
                    "printerColumns[{i}].jsonPath: {:?} must start with '.'",
                    column.json_path
                ));
            }
        }
        let release = &self.release;
        match (&release.chart, &release.chart_ref) {
            (None, None) => problems.push("release: set either chart or chartRef".to_owned()),
            (Some(_), Some(_)) => {
                problems.push("release: set chart or chartRef, not both".to_owned())
            }
            _ => {}
        }
        if let Some(chart) = &release.chart
            && (chart.name.is_empty()
                || chart.source_ref.kind.is_empty()
                || chart.source_ref.name.is_empty())
        {
            problems.push(
                "release.chart: name, sourceRef.kind and sourceRef.name are required".to_owned(),
            );
        }
        if let Some(chart_ref) = &release.chart_ref
            && (chart_ref.kind.is_empty() || chart_ref.name.is_empty())
        {
            problems.push("release.chartRef: kind and name are required".to_owned());
        }
        // What Flux's HelmRelease (helm.toolkit.fluxcd.io/v2) takes: any
        // other kind makes every app's HelmRelease a 422 in the cluster.
        let refs = [
            (
                "release.chart.sourceRef.kind",
                release.chart.as_ref().map(|c| &c.source_ref.kind),
                FLUX_SOURCE_KINDS.as_slice(),
            ),
            (
                "release.chartRef.kind",
                release.chart_ref.as_ref().map(|r| &r.kind),
                FLUX_CHART_REF_KINDS.as_slice(),
            ),
        ];
        for (field, kind, allowed) in refs {
            if let Some(kind) = kind.filter(|k| !k.is_empty() && !allowed.contains(&k.as_str())) {
                problems.push(format!(
                    "{field}: {kind:?} is not a kind Flux's HelmRelease takes here (one of {})",
                    allowed.join(", ")
                ));
            }
        }
        if !prefix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            problems.push(format!(
                "release.prefix: {prefix:?} may hold only lower-case letters, digits and '-'"
            ));
        }
        if prefix.len() >= HELM_RELEASE_NAME_MAX {
            problems.push(format!(
                "release.prefix: {prefix:?} is {} characters and leaves no room for object names under Helm's \
                 {HELM_RELEASE_NAME_MAX}-character release name limit",
                prefix.len()
            ));
        }
        for (key, value) in &release.labels {
            if !is_label_key(key) || value.len() > 63 {
                problems.push(format!(
                    "release.labels: {key:?}={value:?} is not a valid Kubernetes label"
                ));
            }
        }
        for (field, value) in [
            ("release.interval", &release.interval),
            ("release.installTimeout", &release.install_timeout),
            ("release.upgradeTimeout", &release.upgrade_timeout),
        ] {
            if let Some(problem) = value.as_deref().and_then(flux_duration_problem) {
                problems.push(format!("{field}: {problem}"));
            }
        }
        if !problems.is_empty() {
            // Said at once with the rest: every rule or pattern that does
            // not compile, each at its place (the schema is compiled when
            // served; a default beside one could not be checked, which it
            // causes).
            if let Err(errors) =
                super::schema::CompiledSchema::new_saying_all(&self.open_api_schema)
            {
                let unchecked = format!(": {}: ", super::schema::DEFAULT_UNCHECKED);
                problems.retain(|p| !(p.starts_with("openAPISchema") && p.contains(&unchecked)));
                // What the structural check said already (a pattern, a
                // malformed keyword) is not said twice.
                let said = |e: &super::schema::SchemaError| {
                    let at = format!("openAPISchema{}:", e.pointer());
                    problems.iter().any(|p| p.starts_with(&at))
                };
                let unsaid: Vec<String> = errors
                    .iter()
                    .filter(|e| !said(e))
                    .map(|e| format!("openAPISchema: {e}"))
                    .collect();
                problems.extend(unsaid);
            }
        }
        if problems.is_empty() {
            Ok(ResolvedKind {
                definition: self,
                release_prefix: prefix,
                source: source.into(),
            })
        } else {
            Err(problems)
        }
    }
}

/// Checks a set of resolved kinds for collisions: the same kind, plural,
/// singular or short name twice in one group/version, or a kind named as
/// another's list kind (`BucketList` beside `Bucket`: both would be served
/// and described as `BucketList`; kube-apiserver refuses the second CRD,
/// `"BucketList" is already in use`).
pub(crate) fn validate_set(kinds: &[ResolvedKind]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: BTreeMap<(String, String), &ResolvedKind> = BTreeMap::new();
    // Kinds and list kinds by group/version and exact name; `true` for a
    // list kind.
    let mut types: BTreeMap<(String, String), (&ResolvedKind, bool)> = BTreeMap::new();
    for kind in kinds {
        let d = &kind.definition;
        let gv = kind.group_version();
        let list_kind = format!("{}List", d.kind);
        match types.get(&(gv.clone(), d.kind.clone())) {
            Some((other, true)) if other.definition.kind != d.kind => problems.push(format!(
                "kind {:?} of {} is already in use as the list kind of {} ({}) in {gv}; rename one of them",
                d.kind, kind.source, other.definition.kind, other.source
            )),
            _ => {}
        }
        match types.get(&(gv.clone(), list_kind.clone())) {
            Some((other, false)) if other.definition.kind != d.kind => problems.push(format!(
                "list kind {list_kind:?} of {} ({}) is already in use by the kind {} ({}) in {gv}; rename one of them",
                d.kind, kind.source, other.definition.kind, other.source
            )),
            _ => {}
        }
        types
            .entry((gv.clone(), d.kind.clone()))
            .or_insert((kind, false));
        types.entry((gv.clone(), list_kind)).or_insert((kind, true));
        let mut names = vec![
            ("kind", d.kind.to_lowercase()),
            ("plural", d.plural.clone()),
        ];
        if d.singular != d.plural {
            names.push(("singular", d.singular.clone()));
        }
        names.extend(d.short_names.iter().map(|s| ("short name", s.clone())));
        for (what, name) in names {
            let key = (gv.clone(), name.clone());
            if let Some(other) = seen.get(&key) {
                if other.definition.kind != d.kind {
                    problems.push(format!(
                        "{what} {name:?} of {} ({}) is already used by {} ({}) in {gv}",
                        d.kind, kind.source, other.definition.kind, other.source
                    ));
                } else if what == "kind" {
                    problems.push(format!(
                        "kind {} in {gv} is defined twice: {} and {}",
                        d.kind, other.source, kind.source
                    ));
                }
            } else {
                seen.insert(key, kind);
            }
        }
    }
    problems
}

/// The warning for a kind whose release prefix leaves its apps' names less
/// than [`NAME_ROOM_WARNED_UNDER`] characters (a prefix leaving none at all is
/// a problem of [`KindDefinition::resolve`]).
pub(crate) fn name_room_warning(kind: &ResolvedKind) -> Option<String> {
    let room = kind.name_max();
    (room < NAME_ROOM_WARNED_UNDER).then(|| {
        format!(
            "release prefix {:?} of {} ({}) is {} characters and leaves names of {} only {room}: Helm's release \
             names are at most {HELM_RELEASE_NAME_MAX} characters, so a longer name is refused; shorten the prefix",
            kind.release_prefix,
            kind.definition.kind,
            kind.source,
            kind.release_prefix.len(),
            kind.definition.plural,
        )
    })
}

/// Warns about kinds whose apps can map to the same HelmRelease. The
/// HelmRelease of an app is named `prefix + name` in the app's namespace,
/// so two kinds with the same prefix collide on every shared app name, and
/// a prefix that starts another (`""` and `postgres-`) collides on names
/// that begin with the rest. The second app created is then refused with
/// 409 AlreadyExists. Versions of one kind share their HelmReleases on
/// purpose and are not reported.
pub(crate) fn release_name_overlaps(kinds: &[ResolvedKind]) -> Vec<String> {
    let mut by_prefix: BTreeMap<&str, Vec<&ResolvedKind>> = BTreeMap::new();
    for kind in kinds {
        let same = by_prefix.entry(kind.release_prefix.as_str()).or_default();
        let another_version = same.iter().any(|k| {
            k.definition.kind == kind.definition.kind && k.definition.group == kind.definition.group
        });
        if !another_version {
            same.push(kind);
        }
    }
    let name = |k: &ResolvedKind| format!("{} ({})", k.definition.kind, k.source);
    let mut warnings = Vec::new();
    for (prefix, sharing) in &by_prefix {
        if let [first, second, ..] = sharing.as_slice() {
            warnings.push(format!(
                "release prefix {prefix:?} is shared by {}: apps of these kinds with the same name in one namespace \
                 map to the same HelmRelease, and the second one created is refused (e.g. {} \"demo\" and {} \
                 \"demo\" are both HelmRelease {prefix}demo); give each kind its own prefix",
                sharing.iter().map(|k| name(k)).collect::<Vec<_>>().join(", "),
                first.definition.kind,
                second.definition.kind,
            ));
        }
        let longer: Vec<(&str, &ResolvedKind)> = by_prefix
            .iter()
            .filter(|(other, _)| other.len() > prefix.len() && other.starts_with(prefix))
            .flat_map(|(other, ks)| ks.iter().map(move |k| (*other, *k)))
            .collect();
        if let (Some(short), Some((other, long))) = (sharing.first(), longer.first()) {
            let rest = &other[prefix.len()..];
            warnings.push(format!(
                "release prefix {prefix:?} of {} starts the prefix of {}: an app of the first named \
                 \"{rest}<name>\" and an app of the other named \"<name>\" in one namespace map to the same \
                 HelmRelease (e.g. {} \"{rest}demo\" and {} \"demo\" are both HelmRelease {other}demo)",
                sharing.iter().map(|k| name(k)).collect::<Vec<_>>().join(", "),
                longer
                    .iter()
                    .map(|(p, k)| format!("{} ({p:?})", name(k)))
                    .collect::<Vec<_>>()
                    .join(", "),
                short.definition.kind,
                long.definition.kind,
            ));
        }
    }
    warnings
}

fn is_kind_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_alphanumeric())
        && s.len() <= 63
}

/// Why `s` is not a DNS-1035 label, if it is not.
pub(crate) fn dns1035_problem(s: &str) -> Option<&'static str> {
    if s.is_empty() || s.len() > 63 {
        return Some("must be 1 to 63 characters");
    }
    let bytes = s.as_bytes();
    if !bytes[0].is_ascii_lowercase() {
        return Some("must start with a lower-case letter");
    }
    if !bytes
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    {
        return Some("may hold only lower-case letters, digits and '-'");
    }
    if bytes[bytes.len() - 1] == b'-' {
        return Some("must end with a letter or digit");
    }
    None
}

fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// Whether `group` is one of Kubernetes' own: `k8s.io`, `kubernetes.io` or
/// a subdomain of either, which kube-apiserver refuses to CRDs without an
/// approval annotation (`apiextensions`' protected groups). An APIService
/// there would add a version to a built-in group, or claim a future one.
fn is_reserved_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"].iter().any(|domain| {
        group == *domain
            || group
                .strip_suffix(domain)
                .is_some_and(|rest| rest.ends_with('.'))
    })
}

fn is_api_version(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return false;
    }
    let rest = &rest[digits..];
    if rest.is_empty() {
        return true;
    }
    let Some(n) = rest
        .strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"))
    else {
        return false;
    };
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !n.starts_with('0')
}

fn is_label_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric();
    name_ok && prefix.is_none_or(is_dns1123_subdomain)
}

/// Flux's `HelmRelease` schema pattern for `interval` and the Helm
/// `timeout`s (`+kubebuilder:validation:Pattern` on its `metav1.Duration`
/// fields).
static FLUX_DURATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$").expect("the Flux duration pattern compiles")
});

/// Why `v` cannot be a Flux duration, or `None` when it can: Flux decodes
/// these fields with Go's `time.ParseDuration` (so `30` without a unit is
/// refused), and its CRD pattern further allows only positive numbers with
/// `ms`, `s`, `m` or `h` (so `0`, `-5m` and `10us` are refused too).
fn flux_duration_problem(v: &str) -> Option<String> {
    const HINT: &str = "use a number with a unit of ms, s, m or h, such as 30s, 5m or 1h30m";
    let quoted = golang::quote(v);
    if let Err(e) = golang::parse_duration(v) {
        return Some(format!("{quoted} is not a Go duration ({e}): {HINT}"));
    }
    (!FLUX_DURATION.is_match(v)).then(|| {
        format!(
            "{quoted} does not match Flux's HelmRelease pattern {}: {HINT}",
            FLUX_DURATION.as_str()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal(kind: &str) -> KindDefinition {
        serde_saphyr::from_str(&format!(
            "kind: {kind}\nopenAPISchema: {{type: object}}\nrelease:\n  chartRef: {{kind: ExternalArtifact, name: x}}\n"
        ))
        .unwrap()
    }

    #[test]
    fn defaults_follow_kubernetes_and_cozystack() {
        let k = minimal("Postgres").resolve("test").unwrap();
        assert_eq!(k.definition.singular, "postgres");
        assert_eq!(k.definition.plural, "postgreses");
        assert_eq!(k.definition.group, "apps.cozystack.io");
        assert_eq!(k.definition.version, "v1alpha1");
        assert_eq!(k.release_prefix, "postgres-");
        assert_eq!(k.definition.release.interval.as_deref(), Some("5m"));
        assert_eq!(k.definition.release.max_history, Some(5));
        let names: Vec<_> = k
            .definition
            .printer_columns
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["Ready", "Version", "Status", "Age"]);
        assert_eq!(k.resource_group(), "postgreses.apps.cozystack.io");
    }

    /// A kind Flux's HelmRelease does not take would make every app's
    /// HelmRelease a 422 in the cluster: refused with the definition.
    #[test]
    fn only_the_source_and_chart_kinds_flux_takes_are_accepted() {
        let with_release = |release: String| {
            serde_saphyr::from_str::<KindDefinition>(&format!(
                "kind: Postgres\nopenAPISchema: {{type: object}}\nrelease:\n{release}"
            ))
            .unwrap()
            .resolve("pg.yaml")
        };
        let with_chart_ref =
            |kind: &str| with_release(format!("  chartRef: {{kind: {kind}, name: x}}\n"));
        for kind in ["OCIRepository", "HelmChart", "ExternalArtifact"] {
            assert!(with_chart_ref(kind).is_ok(), "{kind}");
        }
        let problems = with_chart_ref("HelmRepository").unwrap_err();
        assert_eq!(
            problems,
            [
                r#"release.chartRef.kind: "HelmRepository" is not a kind Flux's HelmRelease takes here (one of OCIRepository, HelmChart, ExternalArtifact)"#
            ]
        );
        let with_source = |kind: &str| {
            with_release(format!(
                "  chart:\n    name: pg\n    sourceRef: {{kind: {kind}, name: repo}}\n"
            ))
        };
        for kind in ["HelmRepository", "GitRepository", "Bucket"] {
            assert!(with_source(kind).is_ok(), "{kind}");
        }
        let problems = with_source("helmrepository").unwrap_err();
        assert_eq!(
            problems,
            [
                r#"release.chart.sourceRef.kind: "helmrepository" is not a kind Flux's HelmRelease takes here (one of HelmRepository, GitRepository, Bucket)"#
            ]
        );
    }

    #[test]
    fn a_prefix_leaving_short_names_is_warned_of() {
        let with_prefix = |prefix: &str| {
            let mut d = minimal("Postgres");
            d.release.prefix = Some(prefix.into());
            d.resolve("pg.yaml").unwrap()
        };
        // 34 characters leave 19: warned; 33 leave 20: quiet, as is the default.
        let long = format!("{}-", "p".repeat(33));
        assert_eq!(
            name_room_warning(&with_prefix(&long)).as_deref(),
            Some(
                format!(
                    "release prefix {long:?} of Postgres (pg.yaml) is 34 characters and leaves names of postgreses \
                     only 19: Helm's release names are at most 53 characters, so a longer name is refused; shorten \
                     the prefix"
                )
                .as_str()
            )
        );
        assert_eq!(name_room_warning(&with_prefix(&long[1..])), None);
        assert_eq!(
            name_room_warning(&minimal("Postgres").resolve("pg.yaml").unwrap()),
            None
        );
        // The loader says it beside its other warnings.
        let loaded =
            super::super::load::from_resolved(vec![with_prefix(&long)], Vec::new()).unwrap();
        assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    }

    #[test]
    fn every_problem_is_reported() {
        let mut d = minimal("postgres");
        d.short_names = vec!["PG".into()];
        d.version = "1".into();
        d.release.prefix = Some("x".repeat(53));
        d.release.chart = Some(ChartSpec {
            name: "p".into(),
            version: None,
            source_ref: ObjectRef {
                kind: "HelmRepository".into(),
                name: "r".into(),
                namespace: None,
            },
        });
        d.release.interval = Some("often".into());
        // Rules that do not compile, one beside a default it keeps from
        // being checked: each said at its place, the default not at all.
        d.open_api_schema = serde_json::json!({"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 2,
                         "x-kubernetes-validations": [{"rule": "self >= "}]},
            "size": {"type": "string", "x-kubernetes-validations": [{"rule": "self.foo("}]}}});
        let problems = d.resolve("test").unwrap_err();
        let joined = problems.join("\n");
        for needle in [
            "kind:",
            "shortNames:",
            "version:",
            "not both",
            "53-character",
            "release.interval",
            "openAPISchema: /properties/replicas/x-kubernetes-validations/0/rule: compilation failed",
            "openAPISchema: /properties/size/x-kubernetes-validations/0/rule: compilation failed",
        ] {
            assert!(joined.contains(needle), "{needle} missing in:\n{joined}");
        }
        assert!(!joined.contains("default"), "{joined}");
        // What the structural check says (a pattern) is not said again by
        // the compiler.
        let mut d = minimal("postgres");
        d.open_api_schema = serde_json::json!({"type": "object", "properties": {
            "size": {"type": "string", "pattern": "([a-"}}});
        let problems = d.resolve("test").unwrap_err();
        let about_pattern = problems.iter().filter(|p| p.contains("/pattern")).count();
        assert_eq!(about_pattern, 1, "{problems:#?}");
    }

    /// Flux decodes `interval` and the Helm timeouts with Go's
    /// `time.ParseDuration`: `"30"` (no unit) used to pass here because the
    /// CLI's `--request-timeout` parser reads a bare number as seconds.
    #[test]
    fn flux_durations_need_a_unit() {
        for good in ["5m", "1h30m", "300ms", "10.5s"] {
            let mut d = minimal("Postgres");
            d.release.interval = Some(good.into());
            d.release.install_timeout = Some(good.into());
            d.release.upgrade_timeout = Some(good.into());
            assert!(d.resolve("test").is_ok(), "{good} must be accepted");
        }
        let mut d = minimal("Postgres");
        d.release.interval = Some("30".into());
        d.release.install_timeout = Some("10".into());
        d.release.upgrade_timeout = Some("-5m".into());
        assert_eq!(
            d.resolve("test").unwrap_err(),
            [
                "release.interval: \"30\" is not a Go duration (time: missing unit in duration \"30\"): \
                 use a number with a unit of ms, s, m or h, such as 30s, 5m or 1h30m",
                "release.installTimeout: \"10\" is not a Go duration (time: missing unit in duration \"10\"): \
                 use a number with a unit of ms, s, m or h, such as 30s, 5m or 1h30m",
                "release.upgradeTimeout: \"-5m\" does not match Flux's HelmRelease pattern \
                 ^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$: use a number with a unit of ms, s, m or h, such as 30s, 5m or 1h30m",
            ]
        );
        let err = crate::kinds::load::load_text(
            "kind: Postgres\nopenAPISchema: {type: object}\nrelease:\n  chartRef: {kind: ExternalArtifact, name: x}\n  interval: \"30\"\n",
            "kinds.yaml",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("release.interval: \"30\" is not a Go duration"),
            "{err}"
        );
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let err = serde_saphyr::from_str::<KindDefinition>("kind: A\nrelase: {}\n").unwrap_err();
        assert!(err.to_string().contains("unknown field `relase`"), "{err}");
    }

    #[test]
    fn collisions_across_definitions() {
        let a = minimal("Postgres").resolve("a.yaml").unwrap();
        let mut b = minimal("Pg");
        b.plural = "postgreses".into();
        let b = b.resolve("b.yaml").unwrap();
        let again = minimal("Postgres").resolve("c.yaml").unwrap();
        let problems = validate_set(&[a, b, again]);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("plural \"postgreses\" of Pg (b.yaml)")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("defined twice: a.yaml and c.yaml")),
            "{problems:?}"
        );
    }

    /// kube-apiserver refuses a CRD whose kind is another CRD's list kind
    /// in the group (NamesAccepted False, `"BucketList" is already in
    /// use`); served together, both would answer as `BucketList`.
    #[test]
    fn a_kind_named_as_another_kinds_list_is_refused() {
        let bucket = || minimal("Bucket").resolve("kinds/bucket.yaml").unwrap();
        let list = || {
            minimal("BucketList")
                .resolve("kinds/bucketlist.yaml")
                .unwrap()
        };
        assert_eq!(
            validate_set(&[bucket(), list()]),
            [
                "kind \"BucketList\" of kinds/bucketlist.yaml is already in use as the list kind of Bucket \
              (kinds/bucket.yaml) in apps.cozystack.io/v1alpha1; rename one of them"
            ]
        );
        assert_eq!(
            validate_set(&[list(), bucket()]),
            [
                "list kind \"BucketList\" of Bucket (kinds/bucket.yaml) is already in use by the kind \
              BucketList (kinds/bucketlist.yaml) in apps.cozystack.io/v1alpha1; rename one of them"
            ]
        );
        // Another version, or another group, is another set of names.
        let mut v2 = minimal("BucketList");
        v2.version = "v1beta1".into();
        assert!(validate_set(&[bucket(), v2.resolve("kinds/v2.yaml").unwrap()]).is_empty());
        // Versions of one kind are no clash.
        let mut bucket_v2 = minimal("Bucket");
        bucket_v2.version = "v1beta1".into();
        assert!(
            validate_set(&[bucket(), bucket_v2.resolve("kinds/bucket.yaml").unwrap()]).is_empty()
        );
    }

    #[test]
    fn shared_release_prefixes_are_warned_about() {
        let with_prefix = |kind: &str, prefix: &str, source: &str| {
            let mut d = minimal(kind);
            d.release.prefix = Some(prefix.into());
            d.resolve(source).unwrap()
        };
        let mut v2 = minimal("Tenant");
        v2.release.prefix = Some(String::new());
        v2.version = "v1beta1".into();
        let kinds = [
            with_prefix("Tenant", "", "a.yaml"),
            v2.resolve("a.yaml").unwrap(),
            with_prefix("Etcd", "", "b.yaml"),
            with_prefix("Postgres", "postgres-", "c.yaml"),
            with_prefix("Redis", "redis-", "d.yaml"),
        ];
        let warnings = release_name_overlaps(&kinds);
        assert_eq!(warnings.len(), 2, "{warnings:#?}");
        assert_eq!(
            warnings[0],
            "release prefix \"\" is shared by Tenant (a.yaml), Etcd (b.yaml): apps of these kinds with the same \
             name in one namespace map to the same HelmRelease, and the second one created is refused (e.g. Tenant \
             \"demo\" and Etcd \"demo\" are both HelmRelease demo); give each kind its own prefix"
        );
        assert!(
            warnings[1].starts_with(
                "release prefix \"\" of Tenant (a.yaml), Etcd (b.yaml) starts the prefix of Postgres (c.yaml) (\"postgres-\"), Redis (d.yaml) (\"redis-\")"
            ),
            "{}",
            warnings[1]
        );
        // Kinds with their own prefixes are quiet.
        let own = [
            with_prefix("Postgres", "postgres-", "c.yaml"),
            with_prefix("Redis", "redis-", "d.yaml"),
        ];
        assert!(release_name_overlaps(&own).is_empty());
    }

    #[test]
    fn a_group_with_capitals_is_told_so() {
        let mut d = minimal("Postgres");
        d.group = "Apps.Example.com".into();
        assert_eq!(
            d.resolve("test").unwrap_err(),
            [
                "group: \"Apps.Example.com\" must be lower-case (\"apps.example.com\"): an API group is a DNS subdomain"
            ]
        );
        let mut d = minimal("Postgres");
        d.group = "Apps_Example".into();
        assert_eq!(
            d.resolve("test").unwrap_err(),
            ["group: \"Apps_Example\" must be a DNS subdomain with at least one dot"]
        );
    }

    #[test]
    fn kubernetes_own_groups_are_refused() {
        for group in [
            "apiregistration.k8s.io",
            "k8s.io",
            "rbac.authorization.k8s.io",
            "example.kubernetes.io",
        ] {
            let mut d = minimal("Postgres");
            d.group = group.into();
            let problems = d.resolve("test").unwrap_err();
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(
                problems[0].starts_with(&format!(
                    "group: {group:?} is reserved for Kubernetes' own APIs"
                )),
                "{problems:?}"
            );
        }
        for group in [
            "cluster.x-k8s.io",
            "apps.cozystack.io",
            "k8s.io.example.com",
        ] {
            let mut d = minimal("Postgres");
            d.group = group.into();
            assert!(d.resolve("test").is_ok(), "{group}");
        }
    }

    #[test]
    fn name_rules() {
        assert!(is_api_version("v1") && is_api_version("v1alpha1") && is_api_version("v2beta3"));
        assert!(!is_api_version("v0") && !is_api_version("v1gamma1") && !is_api_version("v1alpha"));
        assert!(is_label_key("sharding.fluxcd.io/key") && is_label_key("app"));
        assert!(!is_label_key("-bad") && !is_label_key("UPPER.io/x/y"));
        assert_eq!(
            dns1035_problem("1abc"),
            Some("must start with a lower-case letter")
        );
    }
}
