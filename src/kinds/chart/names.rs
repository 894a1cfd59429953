//! Kubernetes names for a kind made from a chart: the `Kind`, its singular
//! and plural resource names ([`derive_names`], [`pluralize`]), and the
//! checks Kubernetes applies to them ([`validate_names`]).
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
pub struct Names {
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
/// (a chart named `3scale` gives the kind `3scale`); check it with
/// [`validate_names`].
pub fn derive_names(chart_name: &str) -> Names {
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
pub fn pluralize(singular: &str) -> String {
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

/// Problems with `names` under Kubernetes' rules; empty when they are fine.
///
/// * the kind must match `^[A-Z][A-Za-z0-9]*$`;
/// * singular and plural must be DNS-1035 labels (lower-case letters, digits
///   and `-`, starting with a letter, ending with a letter or digit, at most
///   63 characters);
/// * the plural must differ from the singular, except for words that have no
///   distinct plural (`series`, `chassis`, …).
pub fn validate_names(names: &Names) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(problem) = kind_problem(&names.kind) {
        problems.push(format!("kind {:?} {problem}", names.kind));
    }
    if let Some(problem) = dns1035_problem(&names.singular) {
        problems.push(format!("singular name {:?} {problem}", names.singular));
    }
    if let Some(problem) = dns1035_problem(&names.plural) {
        problems.push(format!("plural name {:?} {problem}", names.plural));
    }
    let uncountable = UNCHANGED.iter().any(|word| names.singular.ends_with(word));
    if !names.plural.is_empty() && names.plural == names.singular && !uncountable {
        problems.push(format!(
            "plural name {:?} is the same as the singular; choose a distinct plural",
            names.plural
        ));
    }
    problems
}

fn kind_problem(kind: &str) -> Option<&'static str> {
    let Some(first) = kind.chars().next() else {
        return Some("is empty");
    };
    if !first.is_ascii_uppercase() {
        return Some("must start with an upper-case ASCII letter");
    }
    if !kind.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Some("may contain only ASCII letters and digits");
    }
    None
}

fn dns1035_problem(label: &str) -> Option<&'static str> {
    let Some(first) = label.chars().next() else {
        return Some("is empty");
    };
    if label.len() > 63 {
        return Some("is longer than 63 characters");
    }
    if !label
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Some("may contain only lower-case ASCII letters, digits and '-'");
    }
    if !first.is_ascii_lowercase() {
        return Some("must start with a lower-case letter");
    }
    if label.ends_with('-') {
        return Some("must end with a letter or digit");
    }
    None
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
            assert!(
                validate_names(&names).is_empty(),
                "{chart}: {:?}",
                validate_names(&names)
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

    #[test]
    fn validation() {
        let ok = derive_names("postgres");
        assert!(validate_names(&ok).is_empty());

        let digits = derive_names("3scale");
        let problems = validate_names(&digits);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("upper-case"), "{problems:?}");

        let bad = Names {
            kind: "Foo-Bar".into(),
            singular: "Foo".into(),
            plural: "foo-".into(),
        };
        let problems = validate_names(&bad);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("only ASCII letters and digits"));
        assert!(problems[1].contains("lower-case"));
        assert!(problems[2].contains("end with"));

        let long = derive_names(&"a".repeat(64));
        assert!(validate_names(&long).iter().any(|p| p.contains("63")));

        let same = Names {
            kind: "Fish".into(),
            singular: "fish".into(),
            plural: "fish".into(),
        };
        assert!(validate_names(&same)[0].contains("same as the singular"));
        let series = derive_names("series");
        assert_eq!(series.plural, "series");
        assert!(validate_names(&series).is_empty());

        let empty = derive_names("---");
        let problems = validate_names(&empty);
        assert!(
            problems.iter().any(|p| p.contains("is empty")),
            "{problems:?}"
        );

        let unicode = derive_names("café");
        assert!(!validate_names(&unicode).is_empty());
    }
}
