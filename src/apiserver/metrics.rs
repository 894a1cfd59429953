//! `/metrics`: the server's Prometheus metrics, with kube-apiserver's names,
//! labels and help where it has the same thing, so that its dashboards and
//! alerts read this server too:
//!
//! - `apiserver_request_total` (verb, dry_run, group, version, resource,
//!   subresource, scope, component, code) and
//!   `apiserver_request_duration_seconds` (the same but code; kube's
//!   buckets), labelled as `k8s.io/apiserver`'s `endpoints/metrics` labels
//!   them ([`RequestKind::of`]) and, as there, counted only for requests
//!   authorized for a resource this server serves (so a client cannot add
//!   label sets by asking for made-up paths); a watch is counted when it
//!   ends, with its whole duration;
//! - `apiserver_longrunning_requests`: the watches streaming now;
//! - `rest_client_requests_total`, `rest_client_request_duration_seconds`:
//!   the round trips to kube-apiserver, as client-go counts its own
//!   ([`crate::kube_client::request_metrics`]);
//! - `apiserver_resource_objects` (group, resource) and the deprecated
//!   `apiserver_storage_objects` (resource) that kube-apiserver 1.36 still
//!   serves beside it: the objects of each served resource, counted in the
//!   watch cache as a list of the resource selects them, so that a
//!   dashboard's object counts include the apps ([`resource_objects`]);
//! - `kubectl_cozy_watch_cache_objects`, `…_ready`, `…_upstream_watches_total`:
//!   the cache of the served HelmReleases, the watches it opened upstream
//!   (more than one means it re-listed) and whether it is synced;
//! - `kubectl_cozy_build_info` and, on Linux, the `process_*` metrics
//!   client_golang exports (memory, CPU, descriptors, start time).
//!
//! The request metrics live for the process ([`requests`]); the cache's are
//! read from the answering server's state at each scrape. The text is
//! OpenMetrics, the format Prometheus asks for first; `/metrics` is
//! authorized as any non-resource path (`nonResourceURLs: ["/metrics"]`,
//! verb `get`).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use http::{HeaderMap, Method, header};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::apimachinery::query::Query;
use crate::apimachinery::request_info::{ResourceRequest, Verb};
use crate::kinds::registry::ServedKind;
use crate::storage::cache::{Objects, WatchCache};
use crate::storage::helm_release;

/// The content type of the answer.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// kube-apiserver's buckets of `apiserver_request_duration_seconds`.
const DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// What a request is, as kube-apiserver's request metrics label it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestKind {
    verb: &'static str,
    dry_run: &'static str,
    #[prometheus(flatten)]
    resource: ResourceLabels,
}

/// The labels of `apiserver_longrunning_requests`, and the rest of a
/// request's.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabels {
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: &'static str,
    component: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Answered {
    #[prometheus(flatten)]
    kind: RequestKind,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LongRunning {
    verb: &'static str,
    #[prometheus(flatten)]
    resource: ResourceLabels,
}

impl RequestKind {
    /// The labels of a resource request, as `k8s.io/apiserver`'s
    /// `endpoints/metrics` computes them (`CleanScope`, `CanonicalVerb`,
    /// `cleanVerb`, `cleanDryRun`): the verb is the method's, GET (and
    /// HEAD) of a collection is `LIST`, a GET with a true `watch` parameter
    /// or under `/watch/` is `WATCH`, a server-side apply is `APPLY`; the
    /// scope is `resource` for one object and for a create, else
    /// `namespace` or `cluster`; `dry_run` is the sorted values of
    /// `dryRun`, or `invalid` when one is not `All`.
    pub(crate) fn of(
        method: &Method,
        request: &ResourceRequest,
        query: &Query,
        headers: &HeaderMap,
    ) -> RequestKind {
        let scope = if request.name.is_some() || request.verb == Verb::Create {
            "resource"
        } else if request.namespace.is_some() {
            "namespace"
        } else {
            "cluster"
        };
        let watch_parameter = query
            .get("watch")
            .is_some_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "0" | "false"));
        let verb = match *method {
            Method::GET if watch_parameter => "WATCH",
            _ if request.verb == Verb::Watch => "WATCH",
            Method::GET | Method::HEAD if scope == "resource" => "GET",
            Method::GET | Method::HEAD => "LIST",
            Method::POST => "POST",
            Method::PUT => "PUT",
            Method::PATCH
                if headers
                    .get(header::CONTENT_TYPE)
                    .is_some_and(|t| t == "application/apply-patch+yaml") =>
            {
                "APPLY"
            }
            Method::PATCH => "PATCH",
            Method::DELETE => "DELETE",
            _ => "other",
        };
        let dry_run = match query.all("dryRun").as_slice() {
            [] => "",
            values if values.iter().all(|v| *v == "All") => "All",
            _ => "invalid",
        };
        RequestKind {
            verb,
            dry_run,
            resource: ResourceLabels {
                group: request.group.clone(),
                version: request.version.clone(),
                resource: request.resource.clone(),
                subresource: request.subresource.clone().unwrap_or_default(),
                scope,
                component: "apiserver",
            },
        }
    }

    /// Whether this is a watch, which streams for as long as it lasts.
    pub(crate) fn is_watch(&self) -> bool {
        self.verb == "WATCH"
    }
}

/// The request metrics of this process.
#[derive(Debug, Clone)]
pub(crate) struct Requests {
    total: Family<Answered, Counter>,
    duration: Family<RequestKind, Histogram, fn() -> Histogram>,
    longrunning: Family<LongRunning, Gauge>,
}

impl Default for Requests {
    fn default() -> Requests {
        Requests {
            total: Family::default(),
            duration: Family::new_with_constructor(|| Histogram::new(DURATION_BUCKETS)),
            longrunning: Family::default(),
        }
    }
}

/// The process's request metrics, shared by every server it runs.
pub(crate) fn requests() -> &'static Requests {
    static REQUESTS: LazyLock<Requests> = LazyLock::new(Requests::default);
    &REQUESTS
}

/// A watch that streams: counted open until this drops with its stream,
/// then counted as answered with its whole duration, as kube-apiserver
/// counts one when it ends. It holds its three metrics' handles (shared
/// counters), not its labels: a thousand open watches hold 40 KB of these.
#[derive(Debug)]
pub(crate) struct OpenWatch {
    open: Gauge,
    answered: Counter,
    duration: Histogram,
    started: Instant,
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        self.open.dec();
        self.duration.observe(self.started.elapsed().as_secs_f64());
        self.answered.inc();
    }
}

impl Requests {
    /// Counts one request answered with `code`, `started` when it arrived:
    /// at once, or for a watch that streams (a 200), when the returned
    /// guard drops with its stream.
    pub(crate) fn answered(
        &self,
        kind: RequestKind,
        code: u16,
        started: Instant,
    ) -> Option<OpenWatch> {
        if !(kind.is_watch() && code == 200) {
            self.record(kind, code, started.elapsed());
            return None;
        }
        let open = self.longrunning.get_or_create_owned(&LongRunning {
            verb: kind.verb,
            resource: kind.resource.clone(),
        });
        open.inc();
        Some(OpenWatch {
            open,
            duration: self.duration.get_or_create_owned(&kind),
            answered: self.total.get_or_create_owned(&Answered {
                kind,
                code: code.to_string(),
            }),
            started,
        })
    }

    fn record(&self, kind: RequestKind, code: u16, elapsed: Duration) {
        self.duration
            .get_or_create(&kind)
            .observe(elapsed.as_secs_f64());
        self.total
            .get_or_create(&Answered {
                kind,
                code: code.to_string(),
            })
            .inc();
    }
}

/// The metrics text of a scrape: the process's request metrics, and the
/// state of `cache` (the answering server's) with the objects of each of
/// the `kinds` it serves.
pub(crate) fn render(cache: &WatchCache, kinds: &[Arc<ServedKind>]) -> String {
    let requests = requests().clone();
    // The registry ends each help text with a period.
    let mut registry = Registry::default();
    registry.register(
        "apiserver_request",
        "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code",
        requests.total,
    );
    registry.register(
        "apiserver_request_duration_seconds",
        "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component",
        requests.duration,
    );
    registry.register(
        "apiserver_longrunning_requests",
        "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way",
        requests.longrunning,
    );
    crate::kube_client::request_metrics::register(&mut registry);
    let (objects, _) = cache.snapshot();
    registry.register_collector(Box::new(CacheState {
        objects: objects.len(),
        per_resource: resource_objects(&objects, kinds),
        ready: cache.ready(),
        upstream_watches: cache.upstream_watches(),
    }));
    registry.register_collector(Box::new(Process));
    let mut out = String::new();
    // Writing to a `String` cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

/// The watch cache as one scrape saw it.
#[derive(Debug)]
struct CacheState {
    objects: usize,
    per_resource: Vec<ResourceObjects>,
    ready: bool,
    upstream_watches: u64,
}

/// Writes one unlabelled metric read at scrape time (a `ConstGauge` or
/// `ConstCounter`).
fn constant(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric: impl EncodeMetric,
) -> Result<(), std::fmt::Error> {
    let metric_type = metric.metric_type();
    metric.encode(encoder.encode_descriptor(name, help, None, metric_type)?)
}

/// How many objects of one served resource the cache holds.
#[derive(Debug, PartialEq, Eq)]
struct ResourceObjects {
    group: String,
    resource: String,
    count: u64,
}

/// The objects of each of `kinds` among `objects`, one entry per group and
/// resource (a kind served in several versions is one resource), zero
/// included, as kube-apiserver reports a resource with none: a HelmRelease
/// counts for the kind its kind label names when its name has that kind's
/// release prefix — what a list of the kind selects. One pass over the
/// cache, reading no object's JSON.
fn resource_objects(objects: &Objects, kinds: &[Arc<ServedKind>]) -> Vec<ResourceObjects> {
    let mut counted: Vec<ResourceObjects> = Vec::new();
    // Kind label → the kinds of that label, each with its index into
    // `counted` (a kind in two versions is there twice, counted once).
    let mut by_label: HashMap<&str, Vec<(&ServedKind, usize)>> = HashMap::new();
    for kind in kinds {
        let definition = &kind.resolved.definition;
        let index = counted
            .iter()
            .position(|r| r.group == definition.group && r.resource == definition.plural)
            .unwrap_or_else(|| {
                counted.push(ResourceObjects {
                    group: definition.group.clone(),
                    resource: definition.plural.clone(),
                    count: 0,
                });
                counted.len() - 1
            });
        by_label
            .entry(definition.kind.as_str())
            .or_default()
            .push((kind, index));
    }
    for (key, stored) in objects {
        let Some(labelled) = stored.kind_label().and_then(|label| by_label.get(label)) else {
            continue;
        };
        let (_, release) = key.parts();
        if let Some((_, index)) = labelled
            .iter()
            .find(|(kind, _)| helm_release::app_name(&kind.resolved, release).is_some())
        {
            counted[*index].count += 1;
        }
    }
    counted
}

/// Writes one gauge read at scrape time with a sample per label set.
fn gauges(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: impl Iterator<Item = (Vec<(&'static str, String)>, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(
        name,
        help,
        None,
        prometheus_client::metrics::MetricType::Gauge,
    )?;
    for (labels, value) in samples {
        ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX))
            .encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

impl Collector for CacheState {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        gauges(
            &mut encoder,
            "apiserver_resource_objects",
            "[ALPHA] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
            self.per_resource.iter().map(|r| {
                let labels = vec![("group", r.group.clone()), ("resource", r.resource.clone())];
                (labels, r.count)
            }),
        )?;
        gauges(
            &mut encoder,
            "apiserver_storage_objects",
            "[STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
            self.per_resource.iter().map(|r| {
                let resource = format!("{}.{}", r.resource, r.group);
                (vec![("resource", resource)], r.count)
            }),
        )?;
        constant(
            &mut encoder,
            "kubectl_cozy_watch_cache_objects",
            "HelmReleases of the served kinds in the watch cache.",
            ConstGauge::new(i64::try_from(self.objects).unwrap_or(i64::MAX)),
        )?;
        constant(
            &mut encoder,
            "kubectl_cozy_watch_cache_ready",
            "1 when the watch cache is synced with its store, else 0.",
            ConstGauge::new(i64::from(self.ready)),
        )?;
        constant(
            &mut encoder,
            "kubectl_cozy_watch_cache_upstream_watches",
            "Watches the cache opened on its store (more than one: it re-listed).",
            ConstCounter::new(self.upstream_watches),
        )?;
        let info = ConstGauge::new(1);
        let labels = [("version", crate::version::VERSION)];
        let mut family = encoder.encode_descriptor(
            "kubectl_cozy_build_info",
            "The version of kubectl-cozy serving, as a label; always 1.",
            None,
            info.metric_type(),
        )?;
        info.encode(family.encode_family(&labels)?)
    }
}

/// The `process_*` metrics of client_golang's process collector, read
/// from `/proc/self` at each scrape (Linux; nothing elsewhere).
#[derive(Debug)]
struct Process;

impl Collector for Process {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(stats) = process_stats() else {
            return Ok(());
        };
        constant(
            &mut encoder,
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            ConstCounter::new(stats.cpu_seconds),
        )?;
        constant(
            &mut encoder,
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            ConstGauge::new(stats.resident_bytes),
        )?;
        constant(
            &mut encoder,
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            ConstGauge::new(stats.virtual_bytes),
        )?;
        constant(
            &mut encoder,
            "process_open_fds",
            "Number of open file descriptors.",
            ConstGauge::new(stats.open_fds),
        )?;
        if let Some(max) = stats.max_fds {
            constant(
                &mut encoder,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                ConstGauge::new(max),
            )?;
        }
        constant(
            &mut encoder,
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            ConstGauge::new(stats.start_time_seconds),
        )
    }
}

/// What `process_*` report.
#[derive(Debug, PartialEq)]
struct ProcessStats {
    cpu_seconds: f64,
    resident_bytes: i64,
    virtual_bytes: i64,
    open_fds: i64,
    max_fds: Option<i64>,
    start_time_seconds: f64,
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn process_stats() -> Option<ProcessStats> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let boot_time = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse::<i64>()
        .ok()?;
    let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count();
    let max_fds = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .and_then(|n| i64::try_from(n).ok());
    parse_stat(
        &stat,
        boot_time,
        rustix::param::clock_ticks_per_second(),
        rustix::param::page_size(),
    )
    .map(|stats| ProcessStats {
        open_fds: i64::try_from(open_fds).unwrap_or(i64::MAX),
        max_fds,
        ..stats
    })
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn process_stats() -> Option<ProcessStats> {
    None
}

/// The CPU time, memory and start time in a `/proc/<pid>/stat` line
/// (proc(5): fields 14 `utime`, 15 `stime`, 22 `starttime` in clock ticks,
/// 23 `vsize` in bytes, 24 `rss` in pages), after the command in
/// parentheses, which may hold spaces.
#[cfg_attr(
    not(all(target_os = "linux", target_env = "gnu")),
    expect(dead_code, reason = "read only where /proc is")
)]
fn parse_stat(
    stat: &str,
    boot_time: i64,
    ticks_per_second: u64,
    page_size: usize,
) -> Option<ProcessStats> {
    let after_command = &stat[stat.rfind(')')? + 1..];
    // Field 3 (`state`) is the first after the command.
    let fields: Vec<&str> = after_command.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    let ticks = ticks_per_second.max(1) as f64;
    let start_ticks = field(22)?;
    Some(ProcessStats {
        cpu_seconds: (field(14)? + field(15)?) as f64 / ticks,
        resident_bytes: i64::try_from(field(24)?.saturating_mul(page_size as u64)).ok()?,
        virtual_bytes: i64::try_from(field(23)?).ok()?,
        open_fds: 0,
        max_fds: None,
        start_time_seconds: boot_time as f64 + start_ticks as f64 / ticks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::query::parse_query;
    use crate::apimachinery::request_info::{Route, route};

    fn kind(method: Method, path: &str, query: &str, content_type: Option<&str>) -> RequestKind {
        let query = parse_query(Some(query));
        let mut headers = HeaderMap::new();
        if let Some(t) = content_type {
            headers.insert(header::CONTENT_TYPE, t.parse().unwrap());
        }
        let Route::Resource(request) = route(&method, path, &query) else {
            panic!("{path} is no resource path");
        };
        RequestKind::of(&method, &request, &query, &headers)
    }

    fn labels(kind: &RequestKind) -> (&str, &str, &str, &str, &str) {
        (
            kind.verb,
            kind.resource.scope,
            kind.dry_run,
            &kind.resource.resource,
            &kind.resource.subresource,
        )
    }

    const PG: &str = "/apis/apps.cozystack.io/v1alpha1";

    /// The labels `k8s.io/apiserver`'s `endpoints/metrics` gives the same
    /// requests (`CleanScope`, `CanonicalVerb`, `cleanVerb`, `cleanDryRun`).
    #[test]
    fn requests_are_labelled_as_kube_apiserver_labels_them() {
        let cases = [
            (
                Method::GET,
                "/namespaces/a/postgreses",
                "",
                None,
                ("LIST", "namespace", "", "postgreses", ""),
            ),
            (
                Method::HEAD,
                "/postgreses",
                "",
                None,
                ("LIST", "cluster", "", "postgreses", ""),
            ),
            (
                Method::GET,
                "/namespaces/a/postgreses/db",
                "",
                None,
                ("GET", "resource", "", "postgreses", ""),
            ),
            (
                Method::GET,
                "/postgreses",
                "watch=true",
                None,
                ("WATCH", "cluster", "", "postgreses", ""),
            ),
            // A named GET with `watch` is a get for the handler, a watch here.
            (
                Method::GET,
                "/namespaces/a/postgreses/db",
                "watch=1",
                None,
                ("WATCH", "resource", "", "postgreses", ""),
            ),
            (
                Method::GET,
                "/watch/namespaces/a/postgreses/db",
                "",
                None,
                ("WATCH", "resource", "", "postgreses", ""),
            ),
            (
                Method::GET,
                "/namespaces/a/postgreses",
                "watch=false",
                None,
                ("LIST", "namespace", "", "postgreses", ""),
            ),
            (
                Method::POST,
                "/namespaces/a/postgreses",
                "dryRun=All",
                None,
                ("POST", "resource", "All", "postgreses", ""),
            ),
            (
                Method::PUT,
                "/namespaces/a/postgreses/db/status",
                "",
                None,
                ("PUT", "resource", "", "postgreses", "status"),
            ),
            (
                Method::PATCH,
                "/namespaces/a/postgreses/db",
                "fieldManager=x",
                Some("application/apply-patch+yaml"),
                ("APPLY", "resource", "", "postgreses", ""),
            ),
            (
                Method::PATCH,
                "/namespaces/a/postgreses/db",
                "",
                Some("application/merge-patch+json"),
                ("PATCH", "resource", "", "postgreses", ""),
            ),
            (
                Method::DELETE,
                "/namespaces/a/postgreses/db",
                "dryRun=All&dryRun=All",
                None,
                ("DELETE", "resource", "All", "postgreses", ""),
            ),
            (
                Method::DELETE,
                "/namespaces/a/postgreses",
                "dryRun=Some",
                None,
                ("DELETE", "namespace", "invalid", "postgreses", ""),
            ),
        ];
        for (method, path, query, content_type, want) in cases {
            let got = kind(method.clone(), &format!("{PG}{path}"), query, content_type);
            assert_eq!(labels(&got), want, "{method} {path}?{query}");
            assert_eq!(
                (got.resource.group.as_str(), got.resource.component),
                ("apps.cozystack.io", "apiserver")
            );
        }
    }

    #[test]
    fn answers_are_counted_and_watches_when_they_end() {
        let requests = Requests::default();
        let answered = |kind: &RequestKind, code: &str| {
            requests
                .total
                .get_or_create(&Answered {
                    kind: kind.clone(),
                    code: code.to_owned(),
                })
                .get()
        };
        let get = kind(
            Method::GET,
            &format!("{PG}/namespaces/a/postgreses/db"),
            "",
            None,
        );
        assert!(
            requests
                .answered(get.clone(), 404, Instant::now())
                .is_none()
        );
        assert_eq!(answered(&get, "404"), 1);

        let watch = kind(Method::GET, &format!("{PG}/postgreses"), "watch=1", None);
        let streaming = LongRunning {
            verb: "WATCH",
            resource: watch.resource.clone(),
        };
        let open = requests.answered(watch.clone(), 200, Instant::now());
        assert!(open.is_some());
        assert_eq!(requests.longrunning.get_or_create(&streaming).get(), 1);
        assert_eq!(answered(&watch, "200"), 0, "counted when it ends");
        // A refused watch never streamed: counted at once.
        assert!(
            requests
                .answered(watch.clone(), 410, Instant::now())
                .is_none()
        );
        assert_eq!(answered(&watch, "410"), 1);
        drop(open);
        assert_eq!(requests.longrunning.get_or_create(&streaming).get(), 0);
        assert_eq!(answered(&watch, "200"), 1);
    }

    /// A line of proc(5)'s format, its command holding a space and a `)`.
    /// Each served resource's objects as a list of it selects them: by the
    /// kind label and the kind's release prefix, a kind in two versions
    /// counted once, a resource with none at zero.
    #[test]
    fn objects_are_counted_per_resource_as_a_list_selects_them() {
        let text = "kind: Postgres\nplural: postgreses\nversion: v1alpha1\n\
                    openAPISchema: {type: object}\n\
                    release: {chart: {name: postgres, sourceRef: {kind: HelmRepository, name: r}}}\n---\n\
                    kind: Postgres\nplural: postgreses\nversion: v1beta1\n\
                    openAPISchema: {type: object}\n\
                    release: {chart: {name: postgres, sourceRef: {kind: HelmRepository, name: r}}}\n---\n\
                    kind: Redis\nopenAPISchema: {type: object}\n\
                    release: {chart: {name: redis, sourceRef: {kind: HelmRepository, name: r}}}\n---\n\
                    kind: Bucket\nopenAPISchema: {type: object}\n\
                    release: {chart: {name: bucket, sourceRef: {kind: HelmRepository, name: r}}}\n";
        let snapshot = crate::kinds::registry::Snapshot::build(
            crate::kinds::load::load_text(text, "test").unwrap(),
        )
        .unwrap();
        let release = |name: &str, kind: Option<&str>| {
            let labels = kind.map_or(
                serde_json::json!({}),
                |kind| serde_json::json!({ crate::storage::helm_release::KIND_LABEL: kind }),
            );
            let text = serde_json::json!({
                "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": name, "namespace": "ns", "labels": labels,
                             "resourceVersion": "1"},
                "spec": {},
            })
            .to_string();
            let (key, stored) = crate::storage::cache::Stored::from_text(&text).unwrap();
            (key, Arc::new(stored))
        };
        let objects: Objects = [
            release("postgres-a", Some("Postgres")),
            release("postgres-b", Some("Postgres")),
            release("redis-a", Some("Redis")),
            // Labelled for a kind, named for none of its releases.
            release("other-a", Some("Postgres")),
            // Named for a kind, not labelled.
            release("postgres-c", None),
            release("redis-b", Some("Etcd")),
        ]
        .into_iter()
        .collect();
        let counted = resource_objects(&objects, snapshot.kinds());
        let counts: Vec<(&str, &str, u64)> = counted
            .iter()
            .map(|r| (r.group.as_str(), r.resource.as_str(), r.count))
            .collect();
        assert_eq!(
            counts,
            [
                ("apps.cozystack.io", "postgreses", 2),
                ("apps.cozystack.io", "redises", 1),
                ("apps.cozystack.io", "buckets", 0),
            ]
        );
    }

    #[test]
    fn stat_lines_read_cpu_memory_and_start() {
        let line = "4242 (kubectl) cozy) S 1 4242 4242 0 -1 4194560 2000 0 0 0 250 50 0 0 20 0 \
                    9 0 12345 1073741824 6400 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let stats = parse_stat(line, 1_700_000_000, 100, 4096).unwrap();
        assert_eq!(
            stats,
            ProcessStats {
                cpu_seconds: 3.0,
                resident_bytes: 6400 * 4096,
                virtual_bytes: 1_073_741_824,
                open_fds: 0,
                max_fds: None,
                start_time_seconds: 1_700_000_123.45,
            }
        );
        assert_eq!(parse_stat("garbage", 0, 100, 4096), None);
    }
}
