//! Kubernetes names for a kind made from a chart: the `Kind`
//! ([`propose_kind`]) and the plural resource name ([`pluralize`]; the
//! singular is the lower-case kind). The checks
//! Kubernetes applies to them are those of every definition
//! ([`crate::kinds::definition::KindDefinition::resolve`]).
//!
//! Chart names are lower-case, so the capitals of a kind come from
//! elsewhere ([`propose_kind`]), in this order: a `kubectl-cozy.io/kind`
//! annotation in `Chart.yaml`; the chart's description when it spells the
//! name with capitals (`Managed ClickHouse service` gives `ClickHouse`,
//! `Virtual private cloud` gives `VirtualPrivateCloud`); then known words
//! (`HTTP`, `VM`, `NATS`, …, `…DB`, `…SQL`, `…MQ`, a few product names);
//! otherwise each word is capitalized.
//!
//! Pluralization follows the English rules that Kubernetes tooling uses for
//! resource names (`s`/`x`/`z`/`ch`/`sh` + "es", consonant + `y` → "ies",
//! otherwise + "s"), so `postgres` becomes `postgreses` exactly as in
//! Cozystack, plus a deliberately small table of irregular words.
//! Compared with apimachinery's `UnsafeGuessKindToResource` (which only
//! knows `s` → "es", any `y` → "ies" and `endpoints`), `box` gives `boxes`
//! rather than `boxs` and `gateway` gives `gateways` rather than
//! `gatewaies`; every name ending in `s` or a consonant + `y` comes out the
//! same as there.

/// The Chart.yaml annotation that names the kind made from a chart.
pub(crate) const KIND_ANNOTATION: &str = "kubectl-cozy.io/kind";

/// Where the capitals of a proposed kind come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KindSource {
    /// The `kubectl-cozy.io/kind` annotation.
    Annotation,
    /// The chart's description spells it so.
    Description,
    /// Known acronyms and product names.
    KnownWords,
    /// Each word of the chart name capitalized.
    ChartName,
}

impl std::fmt::Display for KindSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KindSource::Annotation => "from the kubectl-cozy.io/kind annotation in Chart.yaml",
            KindSource::Description => "capitals as Chart.yaml's description writes the name",
            KindSource::KnownWords => "capitals from a list of known acronyms and names",
            KindSource::ChartName => "the chart name with each word capitalized",
        })
    }
}

/// Proposes a kind for a chart (see the module documentation): the kind
/// and where its capitals come from.
pub(crate) fn propose_kind(
    chart_name: &str,
    description: Option<&str>,
    annotations: &std::collections::BTreeMap<String, String>,
) -> (String, KindSource) {
    if let Some(kind) = annotations.get(KIND_ANNOTATION).map(|k| k.trim())
        && !kind.is_empty()
    {
        return (kind.to_owned(), KindSource::Annotation);
    }
    let words: Vec<&str> = chart_name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let plain: String = words.iter().map(|w| capitalize(w)).collect();
    if let Some(spelled) = description.and_then(|d| spelled_in(d, &words))
        && spelled != plain
    {
        return (spelled, KindSource::Description);
    }
    let known: String = words.iter().map(|w| known_word(w)).collect();
    if known != plain {
        return (known, KindSource::KnownWords);
    }
    (plain, KindSource::ChartName)
}

/// The name as `description` spells it: consecutive words whose letters,
/// joined, are the chart name's (`HTTP cache` for `http-cache`), each with
/// its first letter upper-cased; `None` when no word there has a capital.
fn spelled_in(description: &str, words: &[&str]) -> Option<String> {
    let target: String = words.concat().to_lowercase();
    if target.is_empty() {
        return None;
    }
    let tokens: Vec<&str> = description
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    for start in 0..tokens.len() {
        let mut joined = String::new();
        for end in start..tokens.len() {
            joined.push_str(&tokens[end].to_lowercase());
            if joined == target {
                let run = &tokens[start..=end];
                if !run.iter().any(|t| t.chars().any(char::is_uppercase)) {
                    break;
                }
                return Some(run.iter().map(|t| capitalize(t)).collect());
            }
            if !target.starts_with(&joined) {
                break;
            }
        }
    }
    None
}

/// Acronyms written in capitals as a whole word (or at the start of one:
/// `httpcache` gives `HTTPCache`).
const ACRONYMS: &[&str] = &[
    "api", "cdn", "cpu", "dns", "ftp", "gpu", "http", "https", "iam", "ip", "k8s", "kv", "lb",
    "ldap", "llm", "mq", "nats", "nfs", "oidc", "s3", "sftp", "smtp", "sql", "ssh", "ssl", "tcp",
    "tls", "udp", "vm", "vpc", "vpn",
];

/// Product names whose capitals no rule finds.
const KNOWN_NAMES: &[&str] = &[
    "ClickHouse",
    "OpenSearch",
    "OpenBAO",
    "KubeVirt",
    "SeaweedFS",
    "VictoriaLogs",
    "VictoriaMetrics",
    "VirtualPrivateCloud",
    "VirtualMachine",
];

/// One word of a chart name with known capitals.
fn known_word(word: &str) -> String {
    let lower = word.to_lowercase();
    if let Some(name) = KNOWN_NAMES.iter().find(|n| n.to_lowercase() == lower) {
        return (*name).to_owned();
    }
    if ACRONYMS.contains(&lower.as_str()) {
        return lower.to_uppercase();
    }
    for suffix in ["db", "sql", "mq"] {
        if let Some(stem) = lower.strip_suffix(suffix)
            && stem.len() >= 2
        {
            return format!("{}{}", known_word(stem), suffix.to_uppercase());
        }
    }
    for acronym in ACRONYMS.iter().filter(|a| a.len() >= 3) {
        if let Some(rest) = lower.strip_prefix(acronym)
            && rest.len() >= 3
        {
            return format!("{}{}", acronym.to_uppercase(), known_word(rest));
        }
    }
    capitalize(word)
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Irregular endings, matched at the end of the (lower-case) singular.
const IRREGULAR: &[(&str, &str)] = &[("person", "people"), ("child", "children")];

/// Words whose plural is the singular (matched at the end, as Kubernetes
/// matches `endpoints`).
const UNCHANGED: &[&str] = &["chassis", "series", "species", "endpoints"];

/// The plural of a lower-case singular resource name.
///
/// * words ending in `chassis`, `series`, `species` or `endpoints` are
///   unchanged; `…person` → `…people`, `…child` → `…children`;
/// * `s`, `x`, `z`, `ch`, `sh` + "es": `postgres` → `postgreses`,
///   `ingress` → `ingresses`, `index` → `indexes`, `status` → `statuses`;
/// * consonant + `y` → "ies": `proxy` → `proxies`, `policy` → `policies`
///   (vowel + `y` just adds "s": `gateway` → `gateways`);
/// * anything else + "s": `cache` → `caches`, `quota` → `quotas`.
///
/// Upper-case ASCII input is matched case-insensitively; the ending added
/// is lower-case. The empty string stays empty.
pub(crate) fn pluralize(singular: &str) -> String {
    // ASCII lower-casing keeps byte offsets, so slicing `singular` at the
    // length of an (ASCII) ending matched in `lower` stays on a char boundary.
    let lower = singular.to_ascii_lowercase();
    if lower.is_empty() {
        return String::new();
    }
    if UNCHANGED.iter().any(|word| lower.ends_with(word)) {
        return singular.to_owned();
    }
    for (one, many) in IRREGULAR {
        if lower.ends_with(one) {
            let stem = &singular[..singular.len() - one.len()];
            return format!("{stem}{many}");
        }
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|ending| lower.ends_with(ending))
    {
        return format!("{singular}es");
    }
    if let Some(stem) = lower.strip_suffix('y') {
        let after_vowel = stem.ends_with(['a', 'e', 'i', 'o', 'u']);
        if !after_vowel {
            return format!("{}ies", &singular[..singular.len() - 1]);
        }
    }
    format!("{singular}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_table() {
        let table = [
            ("postgres", "Postgres", "postgres", "postgreses"),
            ("redis", "Redis", "redis", "redises"),
            ("ingress", "Ingress", "ingress", "ingresses"),
            ("proxy", "Proxy", "proxy", "proxies"),
            ("policy", "Policy", "policy", "policies"),
            (
                "redis-cluster",
                "RedisCluster",
                "rediscluster",
                "redisclusters",
            ),
            ("bucket", "Bucket", "bucket", "buckets"),
            ("clickhouse", "ClickHouse", "clickhouse", "clickhouses"),
            ("kafka", "Kafka", "kafka", "kafkas"),
            ("nats", "NATS", "nats", "natses"),
            ("s3_bucket", "S3Bucket", "s3bucket", "s3buckets"),
            ("http-cache", "HTTPCache", "httpcache", "httpcaches"),
            (
                "network.policy",
                "NetworkPolicy",
                "networkpolicy",
                "networkpolicies",
            ),
            ("kubernetes", "Kubernetes", "kubernetes", "kuberneteses"),
            (
                "virtual-machine",
                "VirtualMachine",
                "virtualmachine",
                "virtualmachines",
            ),
            ("etcd", "Etcd", "etcd", "etcds"),
            ("--weird--name__", "WeirdName", "weirdname", "weirdnames"),
        ];
        for (chart, kind, singular, plural) in table {
            let (proposed, _) = propose_kind(chart, None, &Default::default());
            let lower = proposed.to_lowercase();
            assert_eq!(
                (
                    proposed.as_str(),
                    lower.as_str(),
                    pluralize(&lower).as_str()
                ),
                (kind, singular, plural),
                "{chart}"
            );
        }
    }

    #[test]
    fn proposed_kinds_keep_capitals() {
        use std::collections::BTreeMap;
        let none = BTreeMap::new();
        let table = [
            (
                "clickhouse",
                Some("Managed ClickHouse service"),
                "ClickHouse",
                KindSource::Description,
            ),
            ("clickhouse", None, "ClickHouse", KindSource::KnownWords),
            (
                "mariadb",
                Some("Managed MariaDB service"),
                "MariaDB",
                KindSource::Description,
            ),
            ("mariadb", None, "MariaDB", KindSource::KnownWords),
            ("mysql", None, "MySQL", KindSource::KnownWords),
            ("rabbitmq", None, "RabbitMQ", KindSource::KnownWords),
            (
                "ferretdb",
                Some("a ferretdb service"),
                "FerretDB",
                KindSource::KnownWords,
            ),
            (
                "http-cache",
                Some("Layer7 HTTP cache"),
                "HTTPCache",
                KindSource::Description,
            ),
            ("http-cache", None, "HTTPCache", KindSource::KnownWords),
            ("tcpbalancer", None, "TCPBalancer", KindSource::KnownWords),
            (
                "vm-instance",
                Some("Virtual machine instance"),
                "VMInstance",
                KindSource::KnownWords,
            ),
            (
                "virtualprivatecloud",
                Some("Virtual private cloud for tenants"),
                "VirtualPrivateCloud",
                KindSource::Description,
            ),
            ("nats", None, "NATS", KindSource::KnownWords),
            (
                "postgres",
                Some("Managed PostgreSQL service"),
                "Postgres",
                KindSource::ChartName,
            ),
            (
                "redis",
                Some("redis is fast"),
                "Redis",
                KindSource::ChartName,
            ),
            ("kafka", None, "Kafka", KindSource::ChartName),
            ("myapp", None, "Myapp", KindSource::ChartName),
        ];
        for (chart, description, kind, source) in table {
            assert_eq!(
                propose_kind(chart, description, &none),
                (kind.to_owned(), source),
                "{chart} {description:?}"
            );
        }
        let annotated = BTreeMap::from([(KIND_ANNOTATION.to_owned(), "Nats".to_owned())]);
        assert_eq!(
            propose_kind("nats", None, &annotated),
            ("Nats".to_owned(), KindSource::Annotation)
        );
    }

    #[test]
    fn pluralization_rules() {
        let table = [
            ("index", "indexes"),
            ("cache", "caches"),
            ("status", "statuses"),
            ("box", "boxes"),
            ("quiz", "quizes"),
            ("batch", "batches"),
            ("mesh", "meshes"),
            ("gateway", "gateways"),
            ("key", "keys"),
            ("registry", "registries"),
            ("quota", "quotas"),
            ("person", "people"),
            ("salesperson", "salespeople"),
            ("child", "children"),
            ("chassis", "chassis"),
            ("series", "series"),
            ("timeseries", "timeseries"),
            ("species", "species"),
            ("endpoints", "endpoints"),
            ("datum", "datums"),
            ("mongo", "mongos"),
            ("vpn", "vpns"),
            ("s3", "s3s"),
            ("y", "ies"),
            ("", ""),
        ];
        for (singular, plural) in table {
            assert_eq!(pluralize(singular), plural, "{singular}");
        }
        assert_eq!(pluralize("Proxy"), "Proxies");
        assert_eq!(pluralize("NATS"), "NATSes");
    }
}
