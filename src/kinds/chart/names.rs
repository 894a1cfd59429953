//! Kubernetes names for a kind made from a chart: the `Kind`, its singular
//! and plural resource names ([`derive_names`], [`pluralize`]). The checks
//! Kubernetes applies to them are those of every definition
//! ([`crate::kinds::definition::KindDefinition::resolve`]).
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

/// The names of a kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    /// UpperCamelCase kind: `redis-cluster` → `RedisCluster`.
    pub kind: String,
    /// Lower-case kind, the singular resource name: `rediscluster`.
    pub singular: String,
    /// Plural resource name, used in URLs: `redisclusters`.
    pub plural: String,
}

/// Derives kind, singular and plural from a chart name.
///
/// Every character that is not a letter or digit (`-`, `_`, `.`, …)
/// separates words; each word's first letter is upper-cased and the rest is
/// kept: `postgres` → `Postgres`, `redis-cluster` → `RedisCluster`,
/// `s3_bucket` → `S3Bucket`. The result may still break Kubernetes' rules
/// (a chart named `3scale` gives the kind `3scale`); resolving the
/// definition made from them reports that.
pub(crate) fn derive_names(chart_name: &str) -> Names {
    let kind: String = chart_name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(capitalize)
        .collect();
    let singular = kind.to_lowercase();
    let plural = pluralize(&singular);
    Names {
        kind,
        singular,
        plural,
    }
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
            ("clickhouse", "Clickhouse", "clickhouse", "clickhouses"),
            ("kafka", "Kafka", "kafka", "kafkas"),
            ("nats", "Nats", "nats", "natses"),
            ("s3_bucket", "S3Bucket", "s3bucket", "s3buckets"),
            ("http-cache", "HttpCache", "httpcache", "httpcaches"),
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
            let names = derive_names(chart);
            assert_eq!(
                names,
                Names {
                    kind: kind.into(),
                    singular: singular.into(),
                    plural: plural.into()
                },
                "{chart}"
            );
        }
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
