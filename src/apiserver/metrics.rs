//! `/metrics`: the server's Prometheus metrics, with kube-apiserver's names
//! and labels where it has the same thing, so that its dashboards and
//! alerts read this server too:
//!
//! - `apiserver_request_total` (verb, dry_run, group, version, resource,
//!   subresource, scope, component, code) and
//!   `apiserver_request_duration_seconds` (the same but code; kube's
//!   buckets), for every request answered, as `k8s.io/apiserver`'s
//!   `endpoints/metrics` labels them (`LIST`, `WATCH`, `APPLY`, scope
//!   `resource`, `namespace` or `cluster`); a watch is counted when its
//!   answer starts and left out of the latency, which for a stream says
//!   nothing;
//! - `apiserver_longrunning_requests`: the watches open now;
//! - `kubectl_cozy_watch_cache_objects`, `…_ready`, `…_upstream_watches_total`:
//!   the cache of the served HelmReleases, the watches it opened upstream
//!   (more than one means it re-listed) and whether it is synced;
//! - `kubectl_cozy_build_info` and, on Linux, the `process_*` metrics
//!   client_golang exports (memory, CPU, descriptors, start time).
//!
//! The request metrics live for the process ([`requests`]); the cache's are
//! read from the answering server's state at each scrape. The text is
//! OpenMetrics, which Prometheus scrapes; `/metrics` is authorized as any
//! non-resource path (`nonResourceURLs: ["/metrics"]`, verb `get`).

use std::sync::LazyLock;
use std::time::Duration;

use http::{HeaderMap, Method, header};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::apimachinery::query::Query;
use crate::apimachinery::request_info::{Route, Verb};
use crate::storage::cache::WatchCache;

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

impl RequestKind {
    /// The labels of a request at `route`.
    pub(crate) fn of(
        method: &Method,
        route: &Route,
        query: &Query,
        headers: &HeaderMap,
    ) -> RequestKind {
        let dry_run = if query.all("dryRun").contains(&"All") {
            "All"
        } else {
            ""
        };
        let Route::Resource(request) = route else {
            return RequestKind {
                verb: method_name(method),
                dry_run,
                group: String::new(),
                version: String::new(),
                resource: String::new(),
                subresource: String::new(),
                scope: "",
                component: "apiserver",
            };
        };
        let applies = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/apply-patch"));
        let verb = match request.verb {
            Verb::Get => "GET",
            Verb::List => "LIST",
            Verb::Watch => "WATCH",
            Verb::Create => "CREATE",
            Verb::Update => "UPDATE",
            Verb::Patch if applies => "APPLY",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
            Verb::DeleteCollection => "DELETECOLLECTION",
        };
        let scope = if request.name.is_some() {
            "resource"
        } else if request.namespace.is_some() {
            "namespace"
        } else {
            "cluster"
        };
        RequestKind {
            verb,
            dry_run,
            group: request.group.clone(),
            version: request.version.clone(),
            resource: request.resource.clone(),
            subresource: request.subresource.clone().unwrap_or_default(),
            scope,
            component: "apiserver",
        }
    }

    /// Whether this is a watch, which streams for as long as it lasts.
    pub(crate) fn is_watch(&self) -> bool {
        self.verb == "WATCH"
    }
}

/// A non-resource request's verb: its method, as kube-apiserver reports it.
fn method_name(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The request metrics of this process.
#[derive(Debug, Clone)]
pub(crate) struct Requests {
    total: Family<Answered, Counter>,
    duration: Family<RequestKind, Histogram, fn() -> Histogram>,
    longrunning: Family<RequestKind, Gauge>,
}

/// The process's request metrics, shared by every server it runs.
pub(crate) fn requests() -> &'static Requests {
    static REQUESTS: LazyLock<Requests> = LazyLock::new(|| Requests {
        total: Family::default(),
        duration: Family::new_with_constructor(|| Histogram::new(DURATION_BUCKETS)),
        longrunning: Family::default(),
    });
    &REQUESTS
}

/// A watch counted open until this is dropped (with its stream).
#[derive(Debug)]
pub(crate) struct OpenWatch(Gauge);

impl Drop for OpenWatch {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Requests {
    /// Counts one request answered with `code` after `elapsed`; a watch
    /// (answered 200) is counted open until the returned guard drops.
    pub(crate) fn answered(
        &self,
        kind: RequestKind,
        code: u16,
        elapsed: Duration,
    ) -> Option<OpenWatch> {
        let open = if !kind.is_watch() {
            self.duration
                .get_or_create(&kind)
                .observe(elapsed.as_secs_f64());
            None
        } else if code == 200 {
            let open = self.longrunning.get_or_create_owned(&kind);
            open.inc();
            Some(OpenWatch(open))
        } else {
            None
        };
        self.total
            .get_or_create(&Answered {
                kind,
                code: code.to_string(),
            })
            .inc();
        open
    }
}

/// The metrics text of a scrape: the process's request metrics, and the
/// state of `cache` (the answering server's).
pub(crate) fn render(cache: &WatchCache) -> String {
    let requests = requests().clone();
    let mut registry = Registry::default();
    registry.register(
        "apiserver_request",
        "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
        requests.total,
    );
    registry.register(
        "apiserver_request_duration_seconds",
        "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
        requests.duration,
    );
    registry.register(
        "apiserver_longrunning_requests",
        "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.",
        requests.longrunning,
    );
    registry.register_collector(Box::new(CacheState {
        objects: cache.snapshot().0.len(),
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
    ready: bool,
    upstream_watches: u64,
}

fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: i64,
) -> Result<(), std::fmt::Error> {
    let metric = ConstGauge::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

fn counter<N>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: N,
) -> Result<(), std::fmt::Error>
where
    ConstCounter<N>: EncodeMetric,
{
    let metric = ConstCounter::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

impl Collector for CacheState {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        gauge(
            &mut encoder,
            "kubectl_cozy_watch_cache_objects",
            "HelmReleases of the served kinds in the watch cache.",
            i64::try_from(self.objects).unwrap_or(i64::MAX),
        )?;
        gauge(
            &mut encoder,
            "kubectl_cozy_watch_cache_ready",
            "1 when the watch cache is synced with its store, else 0.",
            i64::from(self.ready),
        )?;
        counter(
            &mut encoder,
            "kubectl_cozy_watch_cache_upstream_watches",
            "Watches the cache opened on its store (more than one: it re-listed).",
            self.upstream_watches,
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
        counter(
            &mut encoder,
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            stats.cpu_seconds,
        )?;
        gauge(
            &mut encoder,
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            stats.resident_bytes,
        )?;
        gauge(
            &mut encoder,
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            stats.virtual_bytes,
        )?;
        gauge(
            &mut encoder,
            "process_open_fds",
            "Number of open file descriptors.",
            stats.open_fds,
        )?;
        if let Some(max) = stats.max_fds {
            gauge(
                &mut encoder,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                max,
            )?;
        }
        gauge(
            &mut encoder,
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            stats.start_time_seconds,
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
    start_time_seconds: i64,
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
        start_time_seconds: boot_time
            + i64::try_from(start_ticks / ticks_per_second.max(1)).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::query::parse_query;
    use crate::apimachinery::request_info::route;

    fn kind(method: Method, path: &str, query: &str, content_type: Option<&str>) -> RequestKind {
        let query = parse_query(Some(query));
        let mut headers = HeaderMap::new();
        if let Some(t) = content_type {
            headers.insert(header::CONTENT_TYPE, t.parse().unwrap());
        }
        RequestKind::of(&method, &route(&method, path, &query), &query, &headers)
    }

    /// The labels `k8s.io/apiserver`'s `endpoints/metrics` gives the same
    /// requests.
    #[test]
    fn requests_are_labelled_as_kube_apiserver_labels_them() {
        let list = kind(
            Method::GET,
            "/apis/apps.cozystack.io/v1alpha1/namespaces/a/postgreses",
            "",
            None,
        );
        assert_eq!(
            (
                list.verb,
                list.scope,
                list.group.as_str(),
                list.resource.as_str()
            ),
            ("LIST", "namespace", "apps.cozystack.io", "postgreses")
        );
        let all = kind(
            Method::GET,
            "/apis/apps.cozystack.io/v1alpha1/postgreses",
            "watch=true",
            None,
        );
        assert_eq!((all.verb, all.scope), ("WATCH", "cluster"));
        assert!(all.is_watch());
        let apply = kind(
            Method::PATCH,
            "/apis/apps.cozystack.io/v1alpha1/namespaces/a/postgreses/db/status",
            "dryRun=All&fieldManager=x",
            Some("application/apply-patch+yaml"),
        );
        assert_eq!(
            (
                apply.verb,
                apply.scope,
                apply.dry_run,
                apply.subresource.as_str()
            ),
            ("APPLY", "resource", "All", "status")
        );
        let merge = kind(
            Method::PATCH,
            "/apis/apps.cozystack.io/v1alpha1/namespaces/a/postgreses/db",
            "",
            Some("application/merge-patch+json"),
        );
        assert_eq!((merge.verb, merge.dry_run), ("PATCH", ""));
        let discovery = kind(Method::GET, "/apis", "", None);
        assert_eq!(
            (discovery.verb, discovery.scope, discovery.resource.as_str()),
            ("GET", "", "")
        );
    }

    #[test]
    fn answers_are_counted_and_watches_held_open() {
        let requests = Requests {
            total: Family::default(),
            duration: Family::new_with_constructor(|| Histogram::new(DURATION_BUCKETS)),
            longrunning: Family::default(),
        };
        let get = kind(
            Method::GET,
            "/apis/apps.cozystack.io/v1alpha1/namespaces/a/postgreses/db",
            "",
            None,
        );
        assert!(
            requests
                .answered(get.clone(), 404, Duration::from_millis(3))
                .is_none()
        );
        let answered = |kind: &RequestKind, code: &str| {
            requests
                .total
                .get_or_create(&Answered {
                    kind: kind.clone(),
                    code: code.to_owned(),
                })
                .get()
        };
        assert_eq!(answered(&get, "404"), 1);
        let watch = kind(
            Method::GET,
            "/apis/apps.cozystack.io/v1alpha1/postgreses",
            "watch=1",
            None,
        );
        let open = requests.answered(watch.clone(), 200, Duration::from_millis(1));
        assert!(open.is_some());
        assert_eq!(answered(&watch, "200"), 1);
        assert_eq!(requests.longrunning.get_or_create(&watch).get(), 1);
        // A refused watch never opened.
        assert!(
            requests
                .answered(watch.clone(), 403, Duration::ZERO)
                .is_none()
        );
        assert_eq!(requests.longrunning.get_or_create(&watch).get(), 1);
        drop(open);
        assert_eq!(requests.longrunning.get_or_create(&watch).get(), 0);
    }

    /// A line of proc(5)'s format, its command holding a space and a `)`.
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
                start_time_seconds: 1_700_000_000 + 123,
            }
        );
        assert_eq!(parse_stat("garbage", 0, 100, 4096), None);
    }
}
