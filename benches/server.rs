//! Benchmarks of the extension API server against the real test control plane.
//!
//! Each benchmark measures a subject and its baseline in the same process,
//! interleaved (so drift in machine load hits both alike), with the same HTTP
//! stack on both sides: a kube-rs `Client` over TLS with a client
//! certificate, HTTP/1.1, one kept-alive connection. They print Markdown
//! tables (absolute figures, ratios, whether each target of
//! `docs/design.md` is met) and assert only correctness (counts), never
//! times. Run them with `benches/server.sh [NAME]` (it records the machine's
//! load around the run), or `cargo bench --bench server -- [NAME]`.
//! With `BENCH_SPANS=1` the writes benchmark also prints the server's
//! `debug` stage spans per verb (`request`, `auth`, `body`, `decode`,
//! `prepare`, `managed_fields`, `validate`, `convert`, `upstream` with its
//! `send` and `parse`, `cache`, `encode`): p50 and p99 of each, wall time
//! and the CPU time of its thread. Every write of the writes benchmark (the
//! baselines' too) is followed, outside the timing, by a wait for the
//! server's watch cache to apply its event, so no timed request shares the
//! cores with the cache parsing an earlier write's event.
//! `BENCH_CORES=split` runs the writes benchmark with the control plane on
//! CPU 0 and this process on the others (`cores`), as on separate machines.
//! `BENCH_SERVER_WORKERS=N` gives the server's and the pass-through proxy's
//! runtimes N workers instead of `serve`'s 2.
//! `BENCH_WRITE_ROUNDS=N` sets its rounds (100 by default; a p99 worth
//! quoting takes 1,000 or more, and its ratios still move by ±0.1 between
//! runs of 3,000, the pass-through proxy's as much as the server's). Its
//! ratios come with a 95 % interval from a paired bootstrap over the rounds
//! (`percentile_ratio`), and a target counts as met or missed outright only
//! when the whole interval is on one side of it.
//!
//! | benchmark | subject | baseline |
//! |---|---|---|
//! | `list` | list 5,000 apps through the server (JSON and Table, consistent and `resourceVersion=0`), the 50 of another namespace, and in pages of 500 (the first page; every page, as `kubectl get`); the consistency check alone in JSON and protobuf, by page size | the same lists of HelmReleases from kube-apiserver |
//! | `get` | get one app through the server, consistent and `resourceVersion=0` | the handler's own work in-process (cache lookup, the kept app view); the same gets of the HelmRelease from kube-apiserver |
//! | `writes` | create / update / merge-patch / delete an app through the server | the same writes of the HelmRelease at kube-apiserver, and through a pass-through proxy (`passthrough`: the second hop alone, the floor of any server that stores upstream) |
//! | `watch_fanout` | 1,000 watches on the server, events delivered | one watch straight on kube-apiserver |
//! | `memory` | VmRSS and VmHWM (and of VmRSS, anonymous and file-backed) of a `kubectl-cozy serve` process: idle, with 5,000 and 10,000 apps cached, after a list of them, then with 1,000 watches open (each on its own HTTP/1.1 connection; on a fresh process, over 5 HTTP/2 connections as kube-apiserver's aggregator multiplexes them); targets checked on the release artefact (`BENCH_MEMORY_SHIPPED_BIN`, which `server.sh` builds with `scripts/release.sh`), cargo's own build beside it; other builds or malloc settings in the same run with `BENCH_MEMORY_BASELINE_BIN` (paths separated by `:`) / `BENCH_MEMORY_ENV` | RSS of `kubectl-cozy --version` / `kinds list` |
//!
//! The server under test runs in-process on its own 2-worker runtime
//! (`Auth::standalone` with its own CA, the client certificate's user in
//! `system:masters`, so authentication and authorization stay in-process as
//! they are for kube-apiserver's own client-certificate admin; cluster
//! backend, one watch cache), reached directly, without the aggregator's
//! extra hop; the memory benchmark runs the real binary as a separate
//! process (delegated authentication, as `serve` always has in cluster mode;
//! `benches/auth.rs` measures what delegation costs per request).

#![allow(
    unreachable_pub,
    reason = "the integration tests' helpers, shared here, have pub items"
)]

use std::hint::black_box;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use http::{Method, Request, header};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value, json};

use kubectl_cozy::apiserver::handlers::ApiState;
use kubectl_cozy::apiserver::server::{self, RunningServer, ServerConfig};
use kubectl_cozy::auth::Auth;
use kubectl_cozy::kinds::Registry;
use kubectl_cozy::kinds::registry::ServedKind;
use kubectl_cozy::pki::{Ca, LeafSpec};
use kubectl_cozy::storage::app_store::AppStore;
use kubectl_cozy::storage::cache::WatchCache;
use kubectl_cozy::storage::{
    Backend, ReadScope, cluster_store::ClusterStore, helm_release, metadata_list,
};

use crate::support::bins;
use crate::support::plane::{self, Plane, plane};

/// The real control plane and the built binaries, as the integration tests
/// have them.
mod apps;
#[path = "../tests/it/support/mod.rs"]
#[allow(
    unused_imports,
    reason = "re-exports the tests use and the benchmarks do not"
)]
mod support;

/// The server's stage spans, timed (`BENCH_SPANS=1`).
mod stages;

/// A pass-through HTTPS proxy to kube-apiserver: the writes' floor.
mod passthrough;
use passthrough::Passthrough;

/// `BENCH_CORES=split`: the control plane and this process on separate cores.
mod cores;

/// Latencies, their percentiles, and ratios of percentiles with an interval.
mod samples;
use samples::{PercentileRatio, Samples, percentile_ratio};

use apps::{GROUP, PLURAL, VERSION, examples_registry, postgres};
/// Apps per fleet namespace.
const FLEET_CHUNK: usize = 5_000;
/// HelmReleases created at once while populating.
const IN_FLIGHT: usize = 16;

/// Runs the benchmarks whose names contain the first argument that is not
/// a flag (all of them without one), one after another.
fn main() {
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default();
    // BENCH_SPANS=1: the server's `debug` stage spans, timed, to see where
    // a write's time goes (the writes benchmark prints them per verb).
    stages::install();
    let benchmarks: [(&str, fn()); 5] = [
        ("list", list),
        ("get", get),
        ("writes", writes),
        ("watch_fanout", watch_fanout),
        ("memory", memory),
    ];
    for (name, run) in benchmarks {
        if name.contains(filter.as_str()) {
            println!("\n## benchmark {name}");
            run();
        }
    }
}

// ---------------------------------------------------------------------------
// list

fn list() {
    const ROUNDS: usize = 30;
    /// Apps of the small namespace (the common case: one team's apps).
    const SMALL: usize = 50;
    const SUBJECTS: usize = 12;
    let plane = plane();
    let rt = client_runtime();
    let ns = rt.block_on(fleet(plane, FLEET_CHUNK)).remove(0);
    let small = rt.block_on(small_namespace(plane, SMALL));
    let server = InProcess::start(plane);
    let load_before = loadavg();
    rt.block_on(async {
        let direct = plane.client().await;
        let through = server.client().await;
        let hr = |ns: &str| format!("/apis/helm.toolkit.fluxcd.io/v2/namespaces/{ns}/helmreleases");
        let rv0 = |path: String| format!("{path}?resourceVersion=0");
        // (client, path, Accept, what, expected count)
        let subjects: [(&kube::Client, String, Option<&str>, String, usize); SUBJECTS] = [
            (&direct, hr(&ns), None, format!("kube-apiserver: list {FLEET_CHUNK} HelmReleases, JSON (consistent)"), FLEET_CHUNK),
            (&through, app_path(&ns, None), None, format!("server: list {FLEET_CHUNK} apps, JSON (consistent: checks upstream)"), FLEET_CHUNK),
            (&direct, hr(&ns), Some(TABLE), format!("kube-apiserver: list {FLEET_CHUNK} HelmReleases, Table (consistent)"), FLEET_CHUNK),
            (&through, app_path(&ns, None), Some(TABLE), format!("server: list {FLEET_CHUNK} apps, Table (consistent)"), FLEET_CHUNK),
            (&direct, rv0(hr(&ns)), None, "kube-apiserver: the same, JSON, resourceVersion=0".to_owned(), FLEET_CHUNK),
            (&through, rv0(app_path(&ns, None)), None, "server: the same, JSON, resourceVersion=0".to_owned(), FLEET_CHUNK),
            (&direct, rv0(hr(&ns)), Some(TABLE), "kube-apiserver: the same, Table, resourceVersion=0".to_owned(), FLEET_CHUNK),
            (&through, rv0(app_path(&ns, None)), Some(TABLE), "server: the same, Table, resourceVersion=0".to_owned(), FLEET_CHUNK),
            (&direct, hr(&small), None, format!("kube-apiserver: list the {SMALL} HelmReleases of one namespace, JSON (consistent)"), SMALL),
            (&through, app_path(&small, None), None, format!("server: list the {SMALL} apps of one namespace, JSON (consistent)"), SMALL),
            (&direct, hr(&small), Some(TABLE), format!("kube-apiserver: list the {SMALL} HelmReleases of one namespace, Table (consistent)"), SMALL),
            (&through, app_path(&small, None), Some(TABLE), format!("server: list the {SMALL} apps of one namespace, Table (consistent)"), SMALL),
        ];
        let mut samples: [Samples; SUBJECTS] = Default::default();
        let mut bodies = [0usize; SUBJECTS];
        for round in 0..ROUNDS + 2 {
            for k in rotation(round, SUBJECTS) {
                let (client, path, accept, _, want) = &subjects[k];
                let (took, text) = request_as(client, path, *accept).await;
                if round >= 2 {
                    samples[k].push(took);
                } else {
                    bodies[k] = text.len();
                    assert_eq!(item_count(&text), *want, "{path} {accept:?}: every app of the namespace");
                }
            }
        }

        // A Prometheus scrape of the server with every app cached (its
        // object counts are one pass over the cache), beside a request that
        // does nothing (`/version`) and kube-apiserver's own scrape.
        let scrapes: [(&kube::Client, &str, &str); 3] = [
            (&through, "/version", "server: GET /version (a request that does nothing)"),
            (&through, "/metrics", "server: GET /metrics (a scrape: request metrics, object counts)"),
            (&direct, "/metrics", "kube-apiserver: GET /metrics (its own scrape)"),
        ];
        let mut scrape_samples: [Samples; 3] = Default::default();
        let mut scrape_bytes = [0usize; 3];
        for round in 0..ROUNDS + 2 {
            for k in rotation(round, scrapes.len()) {
                let (client, path, _) = scrapes[k];
                let (took, text) = request_as(client, path, None).await;
                if round >= 2 {
                    scrape_samples[k].push(took);
                } else {
                    scrape_bytes[k] = text.len();
                }
                if k == 1 && round == 0 {
                    let counted = text
                        .lines()
                        .find_map(|l| {
                            l.strip_prefix(r#"apiserver_resource_objects{group="apps.cozystack.io",resource="postgreses"} "#)
                        })
                        .and_then(|n| n.parse::<usize>().ok());
                    assert!(
                        counted >= Some(FLEET_CHUNK + SMALL),
                        "the scrape counts every cached app: {counted:?}"
                    );
                }
            }
        }

        // What the handler does in-process: scan the cache snapshot and copy
        // the kept app views; and the consistency check it runs meanwhile
        // (the upstream metadata list of the namespace's Postgres apps).
        let kind = postgres(&server.registry);
        let mut in_process = Samples::default();
        let mut check = Samples::default();
        let store = cluster_store(plane).await;
        let scope = ReadScope {
            kind: "Postgres".to_owned(),
            namespace: Some(ns.clone()),
            release: None,
            labels: None,
        };
        // The check's encodings and page sizes, each reading every page of
        // the scope and decoding it for versions (interleaved).
        let check_ways: [(&str, u32); 5] = [
            (METADATA_LIST, 2000),
            (METADATA_LIST_PROTOBUF, 2000),
            (METADATA_LIST_PROTOBUF, 0),
            (METADATA_LIST_PROTOBUF, 500),
            (METADATA_LIST, 0),
        ];
        let mut check_samples: [Samples; 5] = Default::default();
        let mut check_bytes = [0usize; 5];
        for _ in 0..10 {
            let started = Instant::now();
            let bytes = list_in_process(&server.cache, &kind, &ns);
            in_process.push(started.elapsed());
            black_box(bytes);
            let started = Instant::now();
            let state = store.current_state(&scope).await.expect("upstream state");
            check.push(started.elapsed());
            assert_eq!(state.versions.map(|v| v.len()), Some(FLEET_CHUNK));
            for (k, (accept, limit)) in check_ways.iter().enumerate() {
                let (took, bytes, count) = check_pages(&direct, &ns, accept, *limit).await;
                check_samples[k].push(took);
                check_bytes[k] = bytes;
                assert_eq!(count, FLEET_CHUNK, "{accept} limit {limit}");
            }
        }
        let check_labels: Vec<String> = check_ways
            .iter()
            .map(|(accept, limit)| {
                format!(
                    "check alone, {} metadata list, {}",
                    if *accept == METADATA_LIST { "JSON" } else { "protobuf" },
                    if *limit == 0 { "one page".to_owned() } else { format!("pages of {limit}") }
                )
            })
            .collect();

        // Paged consistent lists, as `kubectl get` asks (limit=500): the
        // first page alone, and every page of the 5,000 (interleaved).
        const PAGE: usize = 500;
        // One team's apps of the 5,000 (every tenth: `team=team-3`), as
        // `kubectl get -l` pages them and as an unpaged client lists them;
        // the HelmReleases carry the app's labels under the user prefix.
        const TEAM: usize = FLEET_CHUNK / 10;
        let by_team = |path: String, key: &str| format!("{path}?labelSelector={key}%3Dteam-3");
        let hr_team = by_team(hr(&ns), "apps.cozystack.io-team");
        let app_team = by_team(app_path(&ns, None), "team");
        let paged: [PagedSubject; 10] = [
            (&direct, hr(&ns), None, PAGE, false, PAGE, format!("kube-apiserver: first page of {PAGE}, JSON (consistent)")),
            (&through, app_path(&ns, None), None, PAGE, false, PAGE, format!("server: first page of {PAGE}, JSON (consistent, checks the page's range)")),
            (&direct, hr(&ns), Some(TABLE), PAGE, false, PAGE, format!("kube-apiserver: first page of {PAGE}, Table (consistent)")),
            (&through, app_path(&ns, None), Some(TABLE), PAGE, false, PAGE, format!("server: first page of {PAGE}, Table (consistent)")),
            (&direct, hr(&ns), Some(TABLE), PAGE, true, FLEET_CHUNK, format!("kube-apiserver: all {FLEET_CHUNK} in pages of {PAGE}, Table (kubectl get)")),
            (&through, app_path(&ns, None), Some(TABLE), PAGE, true, FLEET_CHUNK, format!("server: all {FLEET_CHUNK} in pages of {PAGE}, Table (kubectl get)")),
            (&direct, hr_team.clone(), Some(TABLE), PAGE, true, TEAM, format!("kube-apiserver: the {TEAM} of one team (label selector), pages of {PAGE}, Table (kubectl get -l)")),
            (&through, app_team.clone(), Some(TABLE), PAGE, true, TEAM, format!("server: the {TEAM} of one team (label selector), pages of {PAGE}, Table (kubectl get -l)")),
            (&direct, hr_team, None, 0, true, TEAM, format!("kube-apiserver: the {TEAM} of one team (label selector), unpaged, JSON (consistent)")),
            (&through, app_team, None, 0, true, TEAM, format!("server: the {TEAM} of one team (label selector), unpaged, JSON (consistent)")),
        ];
        let mut paged_samples: [Samples; 10] = Default::default();
        for round in 0..ROUNDS / 2 + 1 {
            for k in rotation(round, paged.len()) {
                let (client, path, accept, limit, all, want, _) = &paged[k];
                let (took, items) = list_pages(client, path, *accept, *limit, *all).await;
                assert_eq!(items, *want, "{path} {accept:?} paged");
                if round >= 1 {
                    paged_samples[k].push(took);
                }
            }
        }

        let mut rows: Vec<(&str, &Samples, String)> = subjects
            .iter()
            .zip(&samples)
            .zip(bodies)
            .map(|(((_, _, _, what, _), s), body)| (what.as_str(), s, kib(body)))
            .collect();
        rows.push((
            "in-process: cache scan + kept app views copied (no HTTP)",
            &in_process,
            String::new(),
        ));
        rows.push((
            "in-process: the consistency check alone (upstream metadata list)",
            &check,
            String::new(),
        ));
        for ((label, samples), bytes) in check_labels.iter().zip(&check_samples).zip(check_bytes) {
            rows.push((label.as_str(), samples, kib(bytes)));
        }
        for ((_, _, _, _, _, _, what), samples) in paged.iter().zip(&paged_samples) {
            rows.push((what.as_str(), samples, String::new()));
        }
        for (((_, _, what), samples), bytes) in scrapes.iter().zip(&scrape_samples).zip(scrape_bytes) {
            rows.push((what, samples, kib(bytes)));
        }
        print_samples(
            &format!("list: {FLEET_CHUNK} apps in one namespace, and {SMALL} in another ({ROUNDS} rounds, interleaved)"),
            &rows,
        );
        let ratio = |server: usize, direct: usize| samples[server].p50() / samples[direct].p50();
        print_targets(&[
            Target::at_most("list p50 ratio server / kube-apiserver, JSON (consistent)", ratio(1, 0), 0.6, "x"),
            Target::at_most("list p50 ratio server / kube-apiserver, Table (consistent)", ratio(3, 2), 0.8, "x"),
            Target::info("list p50 ratio, JSON, both resourceVersion=0", ratio(5, 4), "x"),
            Target::info("list p50 ratio, Table, both resourceVersion=0", ratio(7, 6), "x"),
            Target::info(&format!("list of {SMALL} p50 ratio, JSON (consistent)"), ratio(9, 8), "x"),
            Target::info(&format!("list of {SMALL} p50 ratio, Table (consistent)"), ratio(11, 10), "x"),
            Target::info(
                &format!("first page of {PAGE} p50 ratio, JSON (consistent)"),
                paged_samples[1].p50() / paged_samples[0].p50(),
                "x",
            ),
            Target::info(
                &format!("first page of {PAGE} p50 ratio, Table (consistent)"),
                paged_samples[3].p50() / paged_samples[2].p50(),
                "x",
            ),
            Target::info(
                &format!("all pages of {PAGE} p50 ratio, Table (kubectl get)"),
                paged_samples[5].p50() / paged_samples[4].p50(),
                "x",
            ),
            Target::info(
                &format!("one team's {TEAM} (label selector) in pages of {PAGE} p50 ratio, Table (kubectl get -l)"),
                paged_samples[7].p50() / paged_samples[6].p50(),
                "x",
            ),
            Target::info(
                &format!("one team's {TEAM} (label selector), unpaged p50 ratio, JSON (consistent)"),
                paged_samples[9].p50() / paged_samples[8].p50(),
                "x",
            ),
            Target::info(
                &format!("scrape p50 ratio server /metrics / server /version ({FLEET_CHUNK}+ apps counted)"),
                scrape_samples[1].p50() / scrape_samples[0].p50(),
                "x",
            ),
            Target::info(
                "scrape p50 ratio server /metrics / kube-apiserver /metrics",
                scrape_samples[1].p50() / scrape_samples[2].p50(),
                "x",
            ),
            Target::info(
                "list: share of server p50 spent in-process (scan, copy)",
                in_process.p50() / samples[1].p50() * 100.0,
                "%",
            ),
        ]);
    });
    print_load(load_before);
    drop(server);
}

/// A paged list benchmark: client, path, `Accept`, limit (0: unpaged),
/// whether every page is read, the items expected, what it is.
type PagedSubject<'a> = (
    &'a kube::Client,
    String,
    Option<&'a str>,
    usize,
    bool,
    usize,
    String,
);

/// `Accept` of a Table, as kubectl sends it (without its fallbacks).
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// A namespace of `apps` Postgres apps (created once per run, like the
/// fleet), besides the fleet's.
async fn small_namespace(plane: &Plane, apps: usize) -> String {
    let ns = plane.namespace("bench-small").await;
    let kind = postgres(&examples_registry());
    let api: Api<DynamicObject> = Api::namespaced_with(
        plane.client().await,
        &ns,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "helm.toolkit.fluxcd.io",
            "v2",
            "HelmRelease",
        )),
    );
    for i in 0..apps {
        let object: DynamicObject =
            serde_json::from_value(stored_release(&kind, &ns, &fleet_app(i), i)).expect("object");
        api.create(&PostParams::default(), &object)
            .await
            .expect("create HelmRelease");
    }
    ns
}

// ---------------------------------------------------------------------------
// get

fn get() {
    const ROUNDS: usize = 1_000;
    const SUBJECTS: usize = 7;
    const IN_PROCESS: usize = 20_000;
    let plane = plane();
    let rt = client_runtime();
    let ns = rt.block_on(fleet(plane, FLEET_CHUNK)).remove(0);
    let server = InProcess::start(plane);
    let load_before = loadavg();
    rt.block_on(async {
        let direct = plane.client().await;
        let through = server.client().await;
        let kind = postgres(&server.registry);
        let names: Vec<String> = (0..100).map(|i| fleet_app(i * 37)).collect();
        let mut samples: [Samples; SUBJECTS] = Default::default();
        for round in 0..ROUNDS + 20 {
            let name = &names[round % names.len()];
            let release = helm_release::release_name(&kind.resolved, name);
            let selector = format!(
                "labelSelector={}%3D{GROUP},{}%3DPostgres&fieldSelector=metadata.name%3D{release}&limit=2000",
                helm_release::GROUP_LABEL,
                helm_release::KIND_LABEL
            );
            let paths: [String; SUBJECTS] = [
                hr_path(&ns, Some(&release)),
                app_path(&ns, Some(name)),
                format!("{}?resourceVersion=0", hr_path(&ns, Some(&release))),
                format!("{}?resourceVersion=0", app_path(&ns, Some(name))),
                "/version".to_owned(),
                "/version".to_owned(),
                format!("{}?{selector}", hr_path(&ns, None)),
            ];
            let clients = [
                &direct, &through, &direct, &through, &direct, &through, &direct,
            ];
            for k in rotation(round, SUBJECTS) {
                let accept = (k == 6).then_some(METADATA_LIST);
                let (took, text) = request_as(clients[k], &paths[k], accept).await;
                if round >= 20 {
                    samples[k].push(took);
                } else if k == 1 || k == 3 {
                    let app: Value = serde_json::from_str(&text).expect("app JSON");
                    assert_eq!(app["metadata"]["name"], json!(name));
                    assert_eq!(app["kind"], "Postgres");
                } else if k == 6 {
                    assert_eq!(item_count(&text), 1, "{text}");
                }
            }
        }

        // The handler's own work, in-process: the cache lookup and the app
        // view kept with the object (made on the first read, copied after),
        // which the targets compare against; and, for the first read of an
        // object, what making the view costs: parse, conversion, encoding.
        let resolved = &kind.resolved;
        let mut in_process = Samples::default();
        let mut first_read = Samples::default();
        let mut lookup = Samples::default();
        let mut to_app = Samples::default();
        let mut encode = Samples::default();
        for i in 0..IN_PROCESS {
            let release = helm_release::release_name(resolved, &names[i % names.len()]);
            let t0 = Instant::now();
            let view = server
                .cache
                .stored(&ns, &release)
                .and_then(|stored| stored.app_view(&kind))
                .expect("cached");
            let bytes = view.json.as_bytes().to_vec();
            in_process.push(t0.elapsed());
            black_box(bytes);

            let t0 = Instant::now();
            let hr = server
                .cache
                .get(&ns, &release)
                .filter(|hr| helm_release::owned_by(resolved, hr))
                .expect("cached");
            let t1 = Instant::now();
            let app = helm_release::to_app(resolved, &hr);
            let t2 = Instant::now();
            let bytes = serde_json::to_vec(&app).expect("encode");
            let t3 = Instant::now();
            black_box(bytes);
            lookup.push(t1 - t0);
            to_app.push(t2 - t1);
            encode.push(t3 - t2);
            first_read.push(t3 - t0);
        }
        let hr = server
            .cache
            .get(&ns, &helm_release::release_name(resolved, &names[0]))
            .expect("cached");
        let size = |v: &Value| serde_json::to_vec(v).map_or(0, |b| b.len());
        println!(
            "\nsizes: cached HelmRelease {} B, of which metadata.managedFields (kube-apiserver's own, unused by the \
             server) {} B and the app's managed-fields annotation {} B; the app {} B",
            size(&hr),
            size(&hr["metadata"]["managedFields"]),
            size(&hr["metadata"]["annotations"][helm_release::MANAGED_FIELDS_ANNOTATION]),
            size(&helm_release::to_app(resolved, &hr)),
        );

        let [
            direct_get,
            server_get,
            direct_cached,
            server_cached,
            direct_version,
            server_version,
            probe,
        ] = &samples;
        print_samples(
            &format!("get: one app of {FLEET_CHUNK} ({ROUNDS} rounds, interleaved)"),
            &[
                (
                    "kube-apiserver: get HelmRelease (consistent: etcd)",
                    direct_get,
                    String::new(),
                ),
                (
                    "server: get Postgres app (consistent: checks upstream)",
                    server_get,
                    String::new(),
                ),
                (
                    "kube-apiserver: get HelmRelease, resourceVersion=0 (its cache)",
                    direct_cached,
                    String::new(),
                ),
                (
                    "server: get Postgres app, resourceVersion=0 (its cache)",
                    server_cached,
                    String::new(),
                ),
                (
                    "kube-apiserver: GET /version (transport floor)",
                    direct_version,
                    String::new(),
                ),
                (
                    "server: GET /version (transport floor)",
                    server_version,
                    String::new(),
                ),
                (
                    "kube-apiserver: the server's consistency check (metadata list, one name)",
                    probe,
                    String::new(),
                ),
                (
                    "in-process: cache lookup + the object's kept app view, copied",
                    &in_process,
                    String::new(),
                ),
                (
                    "in-process, an object's first read: parse + to_app + JSON encode",
                    &first_read,
                    String::new(),
                ),
                (
                    "  of which: cache get (parse) + ownership check",
                    &lookup,
                    String::new(),
                ),
                ("  of which: helm_release::to_app", &to_app, String::new()),
                ("  of which: JSON encode", &encode, String::new()),
            ],
        );
        print_targets(&[
            Target::at_most(
                "get from the cache (resourceVersion=0): p50 added over the in-process cache read",
                server_cached.p50() - in_process.p50(),
                1.0,
                "ms",
            ),
            Target::info(
                "consistent get: p50 added over the in-process cache read",
                server_get.p50() - in_process.p50(),
                "ms",
            ),
            Target::info(
                "consistent get: p50 ratio server / kube-apiserver",
                server_get.p50() / direct_get.p50(),
                "x",
            ),
            Target::info(
                "consistent get: p50 over the cache get (the upstream check)",
                server_get.p50() - server_cached.p50(),
                "ms",
            ),
            Target::info(
                "cache get: p50 ratio server / kube-apiserver (both resourceVersion=0)",
                server_cached.p50() / direct_cached.p50(),
                "x",
            ),
        ]);
    });
    print_load(load_before);
    drop(server);
}

// ---------------------------------------------------------------------------
// create / update

fn writes() {
    // 100 by default; p99 of 100 samples is their second-largest, so a
    // p99 worth quoting takes more (`BENCH_WRITE_ROUNDS=1000`).
    let rounds: usize = std::env::var("BENCH_WRITE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(100);
    /// Rounds not counted: the first connections, the first writes.
    const WARMUP: usize = 5;
    let plane = plane();
    cores::split_if_asked();
    println!("cores: {}", cores::arrangement());
    let rt = client_runtime();
    let server = InProcess::start(plane);
    let passthrough = Passthrough::start(plane);
    let load_before = loadavg();
    rt.block_on(async {
        let ns = plane.namespace("bench-write").await;
        let direct = plane.client().await;
        let through = server.client().await;
        let proxied = client_of(passthrough.url(), passthrough.ca(), &[]).await;
        let kind = postgres(&server.registry);
        let json_body = |v: &Value| Some(("application/json", serde_json::to_vec(v).unwrap()));

        // The server's stage spans per verb (BENCH_SPANS=1; empty otherwise).
        let mut stage_times = Vec::new();
        // Each verb: [the app through the server, its HelmRelease straight
        // at kube-apiserver, the HelmRelease through the pass-through proxy
        // (the floor: the second hop alone)].
        // create: plus what the server's writes wait for.
        let mut create: [Samples; 3] = Default::default();
        let mut watch_lag = Samples::default();
        // The extra hop alone, interleaved with the creates: a get served
        // from the server's cache (client -> server -> cache, no upstream
        // call), the floor of what a write through the server adds.
        let mut hop = Samples::default();
        let mut server_apps = Vec::new();
        let mut direct_releases = Vec::new();
        let mut proxied_releases = Vec::new();
        for round in 0..WARMUP + rounds {
            if round == WARMUP {
                stages::take(); // the warm-up rounds' stages
            }
            for k in rotation(round, 4) {
                match k {
                    2 => {
                        let Some(name) = server_apps
                            .last()
                            .and_then(|a: &Value| a["metadata"]["name"].as_str())
                        else {
                            continue;
                        };
                        let path = format!("{}?resourceVersion=0", app_path(&ns, Some(name)));
                        let (took, _) = request(&through, Method::GET, &path, None).await;
                        if round >= WARMUP {
                            hop.push(took);
                        }
                    }
                    0 => {
                        let app = user_app(&ns, &format!("s-{round}"), round);
                        let (took, text) = request(
                            &through,
                            Method::POST,
                            &app_path(&ns, None),
                            json_body(&app),
                        )
                        .await;
                        if round >= WARMUP {
                            create[0].push(took);
                        }
                        let created: Value = serde_json::from_str(&text).unwrap();
                        settle(&server.cache, &created).await;
                        server_apps.push(created);
                    }
                    _ => {
                        // 1: straight at kube-apiserver; 3: through the proxy.
                        let (client, prefix, slot) = if k == 1 {
                            (&direct, "d", 1)
                        } else {
                            (&proxied, "p", 2)
                        };
                        let release =
                            stored_release(&kind, &ns, &format!("{prefix}-{round}"), round);
                        let (took, text) = request(
                            client,
                            Method::POST,
                            &hr_path(&ns, None),
                            json_body(&release),
                        )
                        .await;
                        let responded = Instant::now();
                        if round >= WARMUP {
                            create[slot].push(took);
                        }
                        let created: Value = serde_json::from_str(&text).unwrap();
                        if k == 3 {
                            settle(&server.cache, &created).await;
                            proxied_releases.push(created);
                            continue;
                        }
                        // How long the server's watch cache takes to see it:
                        // what every server write waits for (read-your-writes).
                        let rv = kubectl_cozy::storage::resource_version(&created);
                        assert!(
                            server
                                .cache
                                .wait_for_revision(rv, Duration::from_secs(10))
                                .await
                        );
                        if round >= WARMUP {
                            watch_lag.push(responded.elapsed());
                        }
                        direct_releases.push(created);
                    }
                }
            }
        }

        stage_times.push(("create", stages::take()));
        // update: change spec.replicas on each object created above.
        let mut update: [Samples; 3] = Default::default();
        for round in 0..WARMUP + rounds {
            if round == WARMUP {
                stages::take(); // the warm-up rounds' stages
            }
            let replicas = 1 + (round + 4) % 9;
            for k in rotation(round, 3) {
                if k == 0 {
                    let mut app = server_apps[round].clone();
                    app["spec"]["replicas"] = json!(replicas);
                    let name = app["metadata"]["name"].as_str().unwrap().to_owned();
                    let (took, text) = request(
                        &through,
                        Method::PUT,
                        &app_path(&ns, Some(&name)),
                        json_body(&app),
                    )
                    .await;
                    if round >= WARMUP {
                        update[0].push(took);
                    }
                    let updated: Value = serde_json::from_str(&text).unwrap();
                    settle(&server.cache, &updated).await;
                    assert_eq!(updated["spec"]["replicas"], json!(replicas));
                } else {
                    let (client, releases) = if k == 1 {
                        (&direct, &direct_releases)
                    } else {
                        (&proxied, &proxied_releases)
                    };
                    let mut release = releases[round].clone();
                    release["spec"]["values"]["replicas"] = json!(replicas);
                    let name = release["metadata"]["name"].as_str().unwrap().to_owned();
                    let (took, text) = request(
                        client,
                        Method::PUT,
                        &hr_path(&ns, Some(&name)),
                        json_body(&release),
                    )
                    .await;
                    if round >= WARMUP {
                        update[k].push(took);
                    }
                    let updated: Value = serde_json::from_str(&text).unwrap();
                    settle(&server.cache, &updated).await;
                    assert_eq!(updated["spec"]["values"]["replicas"], json!(replicas));
                }
            }
        }
        stage_times.push(("update", stages::take()));
        // patch: a merge patch of spec.replicas (no resourceVersion: the
        // server reads the current app from its cache).
        let mut patch: [Samples; 3] = Default::default();
        let merge = |v: &Value| {
            Some((
                "application/merge-patch+json",
                serde_json::to_vec(v).unwrap(),
            ))
        };
        for round in 0..WARMUP + rounds {
            if round == WARMUP {
                stages::take(); // the warm-up rounds' stages
            }
            let replicas = 1 + (round + 7) % 9;
            for k in rotation(round, 3) {
                let (client, path, body) = if k == 0 {
                    let name = server_apps[round]["metadata"]["name"].as_str().unwrap();
                    (
                        &through,
                        app_path(&ns, Some(name)),
                        json!({"spec": {"replicas": replicas}}),
                    )
                } else {
                    let (client, releases) = if k == 1 {
                        (&direct, &direct_releases)
                    } else {
                        (&proxied, &proxied_releases)
                    };
                    let name = releases[round]["metadata"]["name"].as_str().unwrap();
                    (
                        client,
                        hr_path(&ns, Some(name)),
                        json!({"spec": {"values": {"replicas": replicas}}}),
                    )
                };
                let (took, text) = request(client, Method::PATCH, &path, merge(&body)).await;
                if round >= WARMUP {
                    patch[k].push(took);
                }
                let patched: Value = serde_json::from_str(&text).unwrap();
                settle(&server.cache, &patched).await;
                let got = if k == 0 {
                    &patched["spec"]["replicas"]
                } else {
                    &patched["spec"]["values"]["replicas"]
                };
                assert_eq!(got, &json!(replicas), "{text}");
            }
        }
        stage_times.push(("patch", stages::take()));
        let (_, listed) = request(&through, Method::GET, &app_path(&ns, None), None).await;
        assert_eq!(
            item_count(&listed),
            3 * (WARMUP + rounds),
            "the server sees every app, whichever way it was written"
        );

        // delete: every object created above.
        let mut delete: [Samples; 3] = Default::default();
        for round in 0..WARMUP + rounds {
            if round == WARMUP {
                stages::take(); // the warm-up rounds' stages
            }
            for k in rotation(round, 3) {
                let (client, path) = match k {
                    0 => (
                        &through,
                        app_path(&ns, server_apps[round]["metadata"]["name"].as_str()),
                    ),
                    1 => (
                        &direct,
                        hr_path(&ns, direct_releases[round]["metadata"]["name"].as_str()),
                    ),
                    _ => (
                        &proxied,
                        hr_path(&ns, proxied_releases[round]["metadata"]["name"].as_str()),
                    ),
                };
                let (took, text) = request(client, Method::DELETE, &path, None).await;
                if round >= WARMUP {
                    delete[k].push(took);
                }
                settle(&server.cache, &serde_json::from_str(&text).unwrap_or_default()).await;
            }
        }
        stage_times.push(("delete", stages::take()));
        // Read-your-writes: gone at once for the server's reads.
        let (_, listed) = request(&through, Method::GET, &app_path(&ns, None), None).await;
        assert_eq!(item_count(&listed), 0, "every app deleted");

        let [server_create, direct_create, proxied_create] = &create;
        let [server_update, direct_update, proxied_update] = &update;
        let [server_patch, direct_patch, proxied_patch] = &patch;
        let [server_delete, direct_delete, proxied_delete] = &delete;
        print_samples(
            &format!("writes: create / update / patch / delete ({rounds} of each, interleaved)"),
            &[
                (
                    "kube-apiserver: create HelmRelease",
                    direct_create,
                    String::new(),
                ),
                (
                    "pass-through proxy: create HelmRelease",
                    proxied_create,
                    String::new(),
                ),
                ("server: create Postgres app", server_create, String::new()),
                (
                    "kube-apiserver: update (PUT) HelmRelease",
                    direct_update,
                    String::new(),
                ),
                (
                    "pass-through proxy: update (PUT) HelmRelease",
                    proxied_update,
                    String::new(),
                ),
                (
                    "server: update (PUT) Postgres app",
                    server_update,
                    String::new(),
                ),
                (
                    "kube-apiserver: merge patch HelmRelease",
                    direct_patch,
                    String::new(),
                ),
                (
                    "pass-through proxy: merge patch HelmRelease",
                    proxied_patch,
                    String::new(),
                ),
                (
                    "server: merge patch Postgres app",
                    server_patch,
                    String::new(),
                ),
                (
                    "kube-apiserver: delete HelmRelease",
                    direct_delete,
                    String::new(),
                ),
                (
                    "pass-through proxy: delete HelmRelease",
                    proxied_delete,
                    String::new(),
                ),
                ("server: delete Postgres app", server_delete, String::new()),
                (
                    "upstream response -> the watch cache has it (writes no longer wait for it)",
                    &watch_lag,
                    String::new(),
                ),
                (
                    "server: get from its cache (resourceVersion=0), interleaved with the creates: the extra hop alone",
                    &hop,
                    String::new(),
                ),
            ],
        );
        let mut targets = Vec::new();
        for (verb, server_s, direct_s, proxied_s) in [
            ("create", server_create, direct_create, proxied_create),
            ("update", server_update, direct_update, proxied_update),
            ("patch", server_patch, direct_patch, proxied_patch),
            ("delete", server_delete, direct_delete, proxied_delete),
        ] {
            targets.push(Target::ratio(
                &format!("{verb} p50 ratio server / kube-apiserver"),
                percentile_ratio(server_s, direct_s, 50.0),
                Some(1.1),
            ));
            targets.push(Target::ratio(
                &format!("{verb} p99 ratio server / kube-apiserver"),
                percentile_ratio(server_s, direct_s, 99.0),
                Some(1.1),
            ));
            targets.push(Target::info(
                &format!("{verb} p50 added (server - kube-apiserver)"),
                server_s.p50() - direct_s.p50(),
                "ms",
            ));
            targets.push(Target::info(
                &format!("{verb} p50 ratio floor: (kube-apiserver + the hop) / kube-apiserver"),
                (direct_s.p50() + hop.p50()) / direct_s.p50(),
                "x",
            ));
            targets.push(Target::ratio(
                &format!("{verb} p50 ratio floor: pass-through proxy / kube-apiserver"),
                percentile_ratio(proxied_s, direct_s, 50.0),
                None,
            ));
            targets.push(Target::ratio(
                &format!("{verb} p99 ratio floor: pass-through proxy / kube-apiserver"),
                percentile_ratio(proxied_s, direct_s, 99.0),
                None,
            ));
            targets.push(Target::ratio(
                &format!("{verb} p50 ratio server / pass-through proxy"),
                percentile_ratio(server_s, proxied_s, 50.0),
                None,
            ));
            targets.push(Target::ratio(
                &format!("{verb} p99 ratio server / pass-through proxy"),
                percentile_ratio(server_s, proxied_s, 99.0),
                None,
            ));
        }
        print_targets(&targets);
        for (verb, times) in &stage_times {
            if !times.is_empty() {
                stages::print(
                    &format!(
                        "server stages of {verb} ({rounds} server and {rounds} direct writes)"
                    ),
                    times,
                );
            }
        }
    });
    print_load(load_before);
    drop(passthrough);
    drop(server);
}

// ---------------------------------------------------------------------------
// watch fan-out

/// One watch event as a client sees it.
#[derive(serde::Deserialize)]
struct WatchLine {
    #[serde(rename = "type")]
    event_type: String,
    object: WatchObject,
}

#[derive(serde::Deserialize)]
struct WatchObject {
    metadata: WatchMeta,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WatchMeta {
    #[serde(default)]
    resource_version: String,
}

/// Which watcher received which resourceVersion when.
type Receipt = (usize, u64, Instant);

fn watch_fanout() {
    let plane = plane();
    let rt = client_runtime();
    let server = InProcess::start(plane);
    let load_before = loadavg();
    rt.block_on(async {
        // 100 watchers first: how delivery scales with the number of watchers.
        fanout(plane, &server, 100, 10, 5).await;
        let at_1000 = fanout(plane, &server, 1_000, 20, 10).await;
        print_targets(&[
            Target::at_most(
                "upstream watches of the server with 1,000 client watches open",
                at_1000.upstream as f64,
                1.0,
                "",
            ),
            Target::at_most(
                "event delivery p99 to 1,000 watchers (write at kube-apiserver, from response)",
                at_1000.p99[0],
                100.0,
                "ms",
            ),
            Target::at_most(
                "event delivery p99 to 1,000 watchers (write through server, from response)",
                at_1000.p99[1],
                100.0,
                "ms",
            ),
        ]);
    });
    print_load(load_before);
    drop(server);
}

/// What [`fanout`] found.
struct Fanout {
    /// Upstream watches the server had open (counted since it started).
    upstream: u64,
    /// Delivery p99 from the write's response, ms: written at kube-apiserver, through the server.
    p99: [f64; 2],
}

/// Opens `watchers` watches on the server (and one straight on
/// kube-apiserver), writes `direct_events` changes at kube-apiserver and
/// `server_events` through the server, one at a time, and measures when
/// each watcher receives each of them.
async fn fanout(
    plane: &Plane,
    server: &InProcess,
    watchers: usize,
    direct_events: usize,
    server_events: usize,
) -> Fanout {
    /// Watches being opened at once.
    const OPENING: usize = 50;
    let ns = plane.namespace("bench-watch").await;
    let direct = plane.client().await;
    let through = server.client().await;
    let kind = postgres(&server.registry);
    let name = "fan";
    let release_name = helm_release::release_name(&kind.resolved, name);
    let release = stored_release(&kind, &ns, name, 0);
    request(
        &direct,
        Method::POST,
        &hr_path(&ns, None),
        Some(("application/json", serde_json::to_vec(&release).unwrap())),
    )
    .await;
    let upstream_before = server.cache.upstream_watches();

    // Open the watches; each reports its first line (the synthetic ADDED of
    // the one app) as "ready", then every later event it receives.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Receipt>();
    let (open_tx, mut open_rx) = tokio::sync::mpsc::unbounded_channel::<Duration>();
    let opening = std::sync::Arc::new(tokio::sync::Semaphore::new(OPENING));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for id in 0..=watchers {
        // Watcher `watchers` is the baseline: one watch straight on kube-apiserver.
        let (client, path) = if id == watchers {
            (direct.clone(), format!("{}?watch=true", hr_path(&ns, None)))
        } else {
            (
                through.clone(),
                format!("{}?watch=true", app_path(&ns, None)),
            )
        };
        let tx = tx.clone();
        let open_tx = open_tx.clone();
        let opening = opening.clone();
        tasks.push(tokio::spawn(async move {
            let permit = opening.acquire_owned().await.expect("semaphore");
            let asked = Instant::now();
            let req = Request::get(&path).body(Vec::new()).expect("request");
            let stream = client.request_stream(req).await.expect("open watch");
            let mut lines = stream.lines();
            let mut permit = Some(permit);
            while let Some(line) = lines.next().await {
                let received = Instant::now();
                let line = line.expect("watch stream");
                let event: WatchLine = serde_json::from_str(&line).expect("watch event");
                if permit.take().is_some() {
                    let _ = open_tx.send(received - asked);
                }
                if event.event_type == "BOOKMARK" {
                    continue;
                }
                let rv = event.object.metadata.resource_version.parse().unwrap_or(0);
                if tx.send((id, rv, received)).is_err() {
                    return;
                }
            }
        }));
    }
    drop((tx, open_tx));
    let mut ready = std::collections::HashSet::new();
    while ready.len() < watchers + 1 {
        let (id, _, _) = tokio::time::timeout(Duration::from_secs(180), rx.recv())
            .await
            .expect("every watch opens within 180 s")
            .expect("watchers alive");
        ready.insert(id);
    }
    let opened_in = started.elapsed();
    let mut open = Samples::default();
    while let Ok(took) = open_rx.try_recv() {
        open.push(took);
    }
    let upstream_with_watches = server.cache.upstream_watches();

    // Write, one event at a time, and collect every watcher's receipt.
    let mut from_response: [Samples; 2] = Default::default();
    let mut from_request: [Samples; 2] = Default::default();
    let mut last_watcher: [Samples; 2] = Default::default();
    let mut baseline = Samples::default();
    for seq in 0..direct_events + server_events {
        let via_server = seq >= direct_events;
        let (client, path, body) = if via_server {
            (
                &through,
                app_path(&ns, Some(name)),
                json!({"metadata": {"labels": {"seq": seq.to_string()}}}),
            )
        } else {
            (
                &direct,
                hr_path(&ns, Some(&release_name)),
                json!({"metadata": {"labels": {format!("{}seq", helm_release::USER_KEY_PREFIX): seq.to_string()}}}),
            )
        };
        let requested = Instant::now();
        let (_, text) = request(
            client,
            Method::PATCH,
            &path,
            Some((
                "application/merge-patch+json",
                serde_json::to_vec(&body).unwrap(),
            )),
        )
        .await;
        let responded = Instant::now();
        let written: Value = serde_json::from_str(&text).unwrap();
        let rv = kubectl_cozy::storage::resource_version(&written);
        let k = usize::from(via_server);
        let mut got = 0;
        let mut latest = responded;
        while got < watchers + 1 {
            let (id, seen, at) = tokio::time::timeout(Duration::from_secs(60), rx.recv())
                .await
                .unwrap_or_else(|_| panic!("event {rv} reached only {got} watchers in 60 s"))
                .expect("watchers alive");
            assert_eq!(seen, rv, "watcher {id} got an unexpected event");
            got += 1;
            if id == watchers {
                // Only writes at kube-apiserver are compared with its own watch.
                if !via_server {
                    baseline.push(at.saturating_duration_since(responded));
                }
                continue;
            }
            from_response[k].push(at.saturating_duration_since(responded));
            from_request[k].push(at.saturating_duration_since(requested));
            latest = latest.max(at);
        }
        last_watcher[k].push(latest.saturating_duration_since(responded));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let upstream_after = server.cache.upstream_watches();
    for task in &tasks {
        task.abort();
    }
    assert_eq!(
        upstream_with_watches, upstream_before,
        "{watchers} client watches opened no upstream watch"
    );
    assert_eq!(upstream_after, upstream_before);

    println!(
        "\n{watchers} watches (+1 on kube-apiserver) opened in {:.2} s, {OPENING} at a time; upstream watches \
         of the server: {upstream_before} before, {upstream_with_watches} with the watches open, \
         {upstream_after} after {} events",
        opened_in.as_secs_f64(),
        direct_events + server_events
    );
    let last = format!("  per event: last of {watchers} watchers, from write response");
    print_samples(
        &format!(
            "watch fan-out: {watchers} watches on the server; {direct_events} writes at kube-apiserver, \
             {server_events} through the server"
        ),
        &[
            (
                "open a watch (request to first event)",
                &open,
                String::new(),
            ),
            (
                "baseline: 1 watch on kube-apiserver, from write response",
                &baseline,
                String::new(),
            ),
            (
                "server watches, write at kube-apiserver, from write response",
                &from_response[0],
                String::new(),
            ),
            (
                "server watches, write at kube-apiserver, from write request",
                &from_request[0],
                String::new(),
            ),
            (last.as_str(), &last_watcher[0], String::new()),
            (
                "server watches, write through server, from write response",
                &from_response[1],
                String::new(),
            ),
            (
                "server watches, write through server, from write request",
                &from_request[1],
                String::new(),
            ),
            (last.as_str(), &last_watcher[1], String::new()),
        ],
    );
    Fanout {
        upstream: upstream_with_watches,
        p99: [from_response[0].p99(), from_response[1].p99()],
    }
}

// ---------------------------------------------------------------------------
// memory

fn memory() {
    const APPS: usize = 10_000;
    let plane = plane();
    let rt = client_runtime();
    let load_before = loadavg();
    let dir = tempfile::tempdir().expect("tempdir");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");

    // Baselines: the same binary doing (almost) nothing.
    let version = max_rss_of(&["--version".as_ref()]);
    let kinds_list = max_rss_of(&[
        "kinds".as_ref(),
        "list".as_ref(),
        "--kinds".as_ref(),
        examples.as_os_str(),
    ]);

    // Idle: the example kinds, but in a group no HelmRelease belongs to, so
    // the cache syncs empty whatever other benchmarks left in the cluster.
    let idle_kinds = dir.path().join("idle-kinds");
    std::fs::create_dir_all(&idle_kinds).unwrap();
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replace("group: apps.cozystack.io", "group: idle.bench.example.com");
        std::fs::write(idle_kinds.join(path.file_name().unwrap()), text).unwrap();
    }

    // Standalone (embedded SQLite store, empty): for context.
    let standalone = Serve::standalone(dir.path(), &examples);
    let standalone_rss = standalone.settled_rss();
    drop(standalone);

    // Variants of `serve`, measured in turn on the same apps: this build;
    // with BENCH_MEMORY_ENV="NAME=VALUE[ NAME=VALUE...][;...]", this build
    // again with each set of environment variables (another malloc through
    // LD_PRELOAD, glibc's MALLOC_ARENA_MAX, ...); with
    // BENCH_MEMORY_BASELINE_BIN=path[:path...], other builds of kubectl-cozy
    // (say, the commit before a change).
    //
    // First, what the targets are checked on: the binary as released
    // (BENCH_MEMORY_SHIPPED_BIN, which benches/server.sh builds with
    // scripts/release.sh: static-pie, packed relocations), as krew installs
    // it and the image runs it; then cargo's own build (dynamically linked
    // to glibc, as `cargo install` makes it). Without the former, cargo's.
    let mut variants = Vec::new();
    if let Some(bin) = std::env::var_os("BENCH_MEMORY_SHIPPED_BIN") {
        variants.push(ServeVariant {
            name: "release artefact".to_owned(),
            bin: bin.into(),
            env: Vec::new(),
        });
    }
    variants.push(ServeVariant {
        name: "this build".to_owned(),
        bin: bins::kubectl_cozy(),
        env: Vec::new(),
    });
    for set in std::env::var("BENCH_MEMORY_ENV")
        .unwrap_or_default()
        .split(';')
        .filter(|v| !v.trim().is_empty())
    {
        let env: Vec<(String, String)> = set
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let shown: Vec<String> = env
            .iter()
            .map(|(k, v)| {
                let v = Path::new(v)
                    .file_name()
                    .map_or(v.clone(), |f| f.to_string_lossy().into_owned());
                format!("{k}={v}")
            })
            .collect();
        variants.push(ServeVariant {
            name: format!("this build, {}", shown.join(" ")),
            bin: bins::kubectl_cozy(),
            env,
        });
    }
    // Several builds: paths separated by `:`, each named by its file name.
    if let Some(bins) = std::env::var_os("BENCH_MEMORY_BASELINE_BIN") {
        for bin in std::env::split_paths(&bins) {
            let name = bin
                .file_name()
                .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
            variants.push(ServeVariant {
                name: format!("baseline build `{name}`"),
                bin,
                env: Vec::new(),
            });
        }
    }
    let mut runs: Vec<(String, Rss, Vec<Loaded>)> = variants
        .iter()
        .map(|variant| {
            let idle = idle_rss(plane, &rt, dir.path(), &idle_kinds, variant);
            (variant.name.clone(), idle, Vec::new())
        })
        .collect();
    // 5,000 apps, then 10,000 (and whatever other benchmarks of this run
    // added), each variant in turn on the same apps.
    for apps in [FLEET_CHUNK, APPS] {
        rt.block_on(fleet(plane, apps));
        for (variant, run) in variants.iter().zip(&mut runs) {
            run.2
                .push(loaded_rss(plane, &rt, dir.path(), &examples, apps, variant));
        }
    }

    let mib = |kib: u64| kib as f64 / 1024.0;
    println!("\n### memory: `kubectl-cozy serve` as a separate process (VmRSS after settling)\n");
    println!("| process | build | VmRSS MiB | VmHWM MiB | of VmRSS: anonymous / file-backed MiB |");
    println!("|---|---|---:|---:|---:|");
    let peak = |kib: Option<u64>| {
        kib.map_or("n/a (needs /usr/bin/time)".to_owned(), |k| {
            format!("{:.1}", mib(k))
        })
    };
    println!(
        "| baseline: `kubectl-cozy --version` (peak) | this build | | {} | |",
        peak(version)
    );
    println!(
        "| baseline: `kubectl-cozy kinds list --kinds examples/kinds` (peak) | this build | | {} | |",
        peak(kinds_list)
    );
    let row = |what: &str, name: &str, r: &Rss| {
        println!(
            "| {what} | {name} | {:.1} | {:.1} | {:.1} / {:.1} |",
            mib(r.rss),
            mib(r.hwm),
            mib(r.anon),
            mib(r.file)
        );
    };
    row(
        "`serve --standalone`, empty embedded store",
        "this build",
        &standalone_rss,
    );
    for (name, idle_rss, loaded) in &runs {
        row(
            "`serve` (cluster), idle: synced, 0 apps cached",
            name,
            idle_rss,
        );
        for l in loaded {
            row(
                &format!("`serve` (cluster), {} apps cached", l.apps),
                name,
                &l.cached_rss,
            );
            row(
                &format!(
                    "same, after one list of all {} apps ({:.0} ms)",
                    l.apps,
                    l.list_took.as_secs_f64() * 1e3
                ),
                name,
                &l.listed,
            );
            row(
                &format!(
                    "same, and with {MEMORY_WATCHERS} watches open, each on its own HTTP/1.1 connection"
                ),
                name,
                &l.after_list,
            );
            row(
                &format!(
                    "another process, after the same list, with {MEMORY_WATCHERS} watches over HTTP/2 \
                     ({} connections, as the aggregator multiplexes them)",
                    MEMORY_WATCHERS.div_ceil(H2_STREAMS_PER_CONNECTION)
                ),
                name,
                &l.after_list_h2,
            );
        }
    }
    let (checked, idle_rss, loaded) = &runs[0]; // the release artefact's, or this build's
    println!("\ntargets checked on: {checked}");
    let [five, ten] = &loaded[..] else {
        unreachable!("two fleets")
    };
    print_targets(&[
        Target::info("server RSS idle, 0 apps", mib(idle_rss.rss), "MiB"),
        Target::at_most(
            &format!("server RSS with {} apps cached", five.apps),
            mib(five.cached_rss.rss),
            30.0,
            "MiB",
        ),
        Target::at_most(
            &format!(
                "server RSS after a list of {} + {MEMORY_WATCHERS} watchers",
                five.apps
            ),
            mib(five.after_list.rss),
            60.0,
            "MiB",
        ),
        Target::at_most(
            &format!(
                "server RSS after a list of {} + {MEMORY_WATCHERS} watchers",
                ten.apps
            ),
            mib(ten.after_list.rss),
            80.0,
            "MiB",
        ),
        Target::at_most(
            &format!(
                "server RSS after a list of {} + {MEMORY_WATCHERS} watchers over HTTP/2",
                five.apps
            ),
            mib(five.after_list_h2.rss),
            60.0,
            "MiB",
        ),
        Target::at_most(
            &format!(
                "server RSS after a list of {} + {MEMORY_WATCHERS} watchers over HTTP/2",
                ten.apps
            ),
            mib(ten.after_list_h2.rss),
            80.0,
            "MiB",
        ),
        Target::info(
            "of which anonymous (heap, stacks), idle",
            mib(idle_rss.anon),
            "MiB",
        ),
        Target::info(
            &format!("of which anonymous, {} apps cached", five.apps),
            mib(five.cached_rss.anon),
            "MiB",
        ),
        Target::info(
            &format!(
                "of which anonymous, after a list of {} + watchers",
                five.apps
            ),
            mib(five.after_list.anon),
            "MiB",
        ),
        Target::info(
            &format!(
                "of which anonymous, after a list of {} + watchers",
                ten.apps
            ),
            mib(ten.after_list.anon),
            "MiB",
        ),
        Target::info(
            "cache cost per app (10,000 cached - 5,000 cached)",
            (ten.cached_rss.rss.saturating_sub(five.cached_rss.rss) * 1024) as f64
                / (ten.apps.saturating_sub(five.apps)).max(1) as f64,
            "bytes",
        ),
        Target::info(
            &format!(
                "cost of one open watch ({MEMORY_WATCHERS} open, {} apps)",
                five.apps
            ),
            (five.after_list.rss.saturating_sub(five.listed.rss) * 1024) as f64
                / MEMORY_WATCHERS as f64,
            "bytes",
        ),
        Target::info(
            &format!(
                "cost of one open watch over HTTP/2 ({MEMORY_WATCHERS} open on {} connections, {} apps)",
                MEMORY_WATCHERS.div_ceil(H2_STREAMS_PER_CONNECTION),
                five.apps
            ),
            (five.after_list_h2.rss.saturating_sub(five.listed_h2.rss) * 1024) as f64
                / MEMORY_WATCHERS as f64,
            "bytes",
        ),
    ]);
    print_load(load_before);
}

/// Watches open while measuring memory.
const MEMORY_WATCHERS: usize = 1_000;

/// `serve` (`variant`) over the kinds of `idle_kinds`, no app cached.
fn idle_rss(
    plane: &'static Plane,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    idle_kinds: &Path,
    variant: &ServeVariant,
) -> Rss {
    let idle = Serve::start(plane, dir, idle_kinds, "idle", variant);
    let idle_rss = idle.settled_rss();
    let idle_count = rt.block_on(async {
        let client = idle.client(plane).await;
        let (_, text) = request(
            &client,
            Method::GET,
            &format!("/apis/idle.bench.example.com/{VERSION}/{PLURAL}"),
            None,
        )
        .await;
        item_count(&text)
    });
    assert_eq!(idle_count, 0, "the idle server caches nothing");
    idle_rss
}

/// `serve` (`variant`) over the example kinds with at least
/// `apps` apps: cached, after one list of them all, then with
/// [`MEMORY_WATCHERS`] watches open, each on its own HTTP/1.1 connection;
/// then the same again on a fresh process, the watches over HTTP/2 as
/// kube-apiserver's aggregator opens them ([`H2Watches`]).
fn loaded_rss(
    plane: &'static Plane,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    examples: &Path,
    apps: usize,
    variant: &ServeVariant,
) -> Loaded {
    let http1 = loaded_run(plane, rt, dir, examples, apps, variant, Transport::Http1);
    let http2 = loaded_run(plane, rt, dir, examples, apps, variant, Transport::Http2);
    Loaded {
        apps: http1.apps,
        list_took: http1.list_took,
        cached_rss: http1.cached_rss,
        listed: http1.listed,
        after_list: http1.watching,
        listed_h2: http2.listed,
        after_list_h2: http2.watching,
    }
}

/// How a memory run opens its watches.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// Each on its own HTTP/1.1 connection (kube-rs, one client).
    Http1,
    /// Multiplexed over HTTP/2 connections, as the aggregator does.
    Http2,
}

/// One `serve` process through [`loaded_rss`]'s steps.
struct LoadedRun {
    apps: usize,
    list_took: Duration,
    cached_rss: Rss,
    listed: Rss,
    watching: Rss,
}

fn loaded_run(
    plane: &'static Plane,
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    examples: &Path,
    apps: usize,
    variant: &ServeVariant,
    transport: Transport,
) -> LoadedRun {
    let tag = match transport {
        Transport::Http1 => format!("loaded-{apps}"),
        Transport::Http2 => format!("loaded-{apps}-h2"),
    };
    let server = Serve::start(plane, dir, examples, &tag, variant);
    let cached_rss = server.settled_rss();
    let (cached, list_took, listed, watching) = rt.block_on(async {
        let client = server.client(plane).await;
        let (took, text) = request(
            &client,
            Method::GET,
            &format!("/apis/{GROUP}/{VERSION}/{PLURAL}"),
            None,
        )
        .await;
        let cached = item_count(&text);
        drop(text);
        let listed = server.settled_rss();
        // Watches of an empty namespace: what idle watchers hold.
        let ns = plane.namespace("bench-mem-watch").await;
        let path = format!("{}?watch=true", app_path(&ns, None));
        let opened = match transport {
            Transport::Http1 => {
                let opened = futures::stream::iter(0..MEMORY_WATCHERS)
                    .map(|_| {
                        let client = client.clone();
                        let path = path.clone();
                        async move {
                            let req = Request::get(&path).body(Vec::new()).expect("request");
                            client.request_stream(req).await.expect("open watch")
                        }
                    })
                    .buffer_unordered(50)
                    .collect::<Vec<_>>()
                    .await;
                Watching::Http1(opened)
            }
            Transport::Http2 => {
                Watching::Http2(H2Watches::open(&server, plane, &path, MEMORY_WATCHERS).await)
            }
        };
        (cached, took, listed, opened)
    });
    assert!(
        cached >= apps,
        "the server serves every app: {cached} < {apps}"
    );
    let watching_rss = server.settled_rss();
    drop(watching);
    LoadedRun {
        apps: cached,
        list_took,
        cached_rss,
        listed,
        watching: watching_rss,
    }
}

/// Open watches, held until dropped.
enum Watching<S> {
    Http1(#[allow(dead_code, reason = "held open")] Vec<S>),
    Http2(#[allow(dead_code, reason = "held open")] H2Watches),
}

/// Streams a server's HTTP/2 connection carries at once: hyper's default
/// `SETTINGS_MAX_CONCURRENT_STREAMS`, which `serve` keeps.
const H2_STREAMS_PER_CONNECTION: usize = 200;

/// Watches opened the way kube-apiserver's aggregator opens the watches of
/// its clients on an extension API server: the front-proxy client
/// certificate and `X-Remote-User`/`X-Remote-Group`, over HTTP/2, as many
/// streams on a connection as the server allows (Go's HTTP/2 transport
/// dials another connection only when one is full), so 1,000 watches take
/// 5 connections.
struct H2Watches {
    _responses: Vec<http::Response<hyper::body::Incoming>>,
    connections: Vec<tokio::task::JoinHandle<()>>,
}

impl H2Watches {
    async fn open(server: &Serve, plane: &Plane, path: &str, n: usize) -> H2Watches {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
        let pki = plane.dir.join("pki");
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(server.ca_pem.as_bytes()).expect("serving CA"))
            .expect("root");
        let mut config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_client_auth_cert(
            vec![CertificateDer::from_pem_file(pki.join("front-proxy-client.crt")).expect("cert")],
            PrivateKeyDer::from_pem_file(pki.join("front-proxy-client.key")).expect("key"),
        )
        .expect("client auth");
        config.alpn_protocols = vec![b"h2".to_vec()];
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
        let authority = server
            .url
            .strip_prefix("https://")
            .expect("https URL")
            .trim_end_matches('/')
            .to_owned();
        let addr: std::net::SocketAddr = authority.parse().expect("serve listens on an IP");
        let mut responses = Vec::with_capacity(n);
        let mut connections = Vec::new();
        for start in (0..n).step_by(H2_STREAMS_PER_CONNECTION) {
            let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
            tcp.set_nodelay(true).expect("nodelay");
            let tls = connector
                .connect(ServerName::IpAddress(addr.ip().into()), tcp)
                .await
                .expect("handshake");
            assert_eq!(
                tls.get_ref().1.alpn_protocol(),
                Some(&b"h2"[..]),
                "serve negotiates HTTP/2"
            );
            let (sender, connection) = hyper::client::conn::http2::handshake(
                hyper_util::rt::TokioExecutor::new(),
                hyper_util::rt::TokioIo::new(tls),
            )
            .await
            .expect("HTTP/2 handshake");
            connections.push(tokio::spawn(async move {
                let _ = connection.await;
            }));
            let count = H2_STREAMS_PER_CONNECTION.min(n - start);
            let opened = futures::stream::iter(0..count)
                .map(|_| {
                    let mut sender = sender.clone();
                    let req = Request::get(format!("https://{authority}{path}"))
                        .header("x-remote-user", "bench")
                        .header("x-remote-group", "system:masters")
                        .header(header::ACCEPT, "application/json")
                        .body(http_body_util::Empty::<bytes::Bytes>::new())
                        .expect("request");
                    async move {
                        let response = sender.send_request(req).await.expect("open watch");
                        assert_eq!(response.status(), http::StatusCode::OK, "watch opened");
                        response
                    }
                })
                .buffer_unordered(50)
                .collect::<Vec<_>>()
                .await;
            responses.extend(opened);
        }
        H2Watches {
            _responses: responses,
            connections,
        }
    }
}

impl Drop for H2Watches {
    fn drop(&mut self) {
        for connection in &self.connections {
            connection.abort();
        }
    }
}

/// A `kubectl-cozy serve` to measure: which binary, with which extra
/// environment.
struct ServeVariant {
    name: String,
    bin: std::path::PathBuf,
    env: Vec<(String, String)>,
}

/// What loaded `serve` processes held (one with HTTP/1.1 watches, one
/// with HTTP/2 watches).
struct Loaded {
    apps: usize,
    list_took: Duration,
    cached_rss: Rss,
    /// After the list, before the watches.
    listed: Rss,
    /// With the watches open, each on its own HTTP/1.1 connection.
    after_list: Rss,
    /// The HTTP/2 process, after its list.
    listed_h2: Rss,
    /// The HTTP/2 process with its watches open.
    after_list_h2: Rss,
}

use std::process::{Child, Command, Stdio};

/// Drops a binary's pages from the page cache (those no process maps), so
/// that each `serve` starts as after a reboot or once the kernel reclaimed
/// them. The binary's file-backed RSS depends on how its pages entered the
/// cache: the same bytes written by the linker, by `cp` and by `tar` (as
/// krew installs them) measured 13.3, 14.6 and 15.3 MiB at idle, and 13.3
/// each once read back from disk.
fn evict_from_page_cache(bin: &Path) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if let Ok(file) = std::fs::File::open(bin) {
        // Only clean pages can be dropped: a fresh build's are written back
        // first.
        let _ = file.sync_all();
        let _ = rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = bin;
}

/// VmRSS and VmHWM, KiB.
struct Rss {
    rss: u64,
    hwm: u64,
    /// Of `rss`: anonymous memory (heap, stacks) and file-backed pages
    /// (mostly the binary's own code, mapped as the kernel reads it ahead).
    anon: u64,
    file: u64,
}

/// A `kubectl-cozy serve` process.
struct Serve {
    child: Child,
    url: String,
    ca_pem: String,
}

impl Serve {
    /// Cluster mode against the plane, serving `kinds`.
    fn start(plane: &Plane, dir: &Path, kinds: &Path, tag: &str, variant: &ServeVariant) -> Serve {
        let ca = Ca::new("kubectl-cozy-bench-serving-ca").expect("CA");
        let serving = ca
            .issue(&LeafSpec::server(
                "kubectl-cozy",
                &["localhost"],
                &["127.0.0.1".parse().expect("ip")],
            ))
            .expect("serving certificate");
        let cert = dir.join(format!("{tag}.crt"));
        let key = dir.join(format!("{tag}.key"));
        std::fs::write(&cert, &serving.cert_pem).unwrap();
        std::fs::write(&key, &serving.key_pem).unwrap();
        let mut cmd = Command::new(&variant.bin);
        cmd.arg("--kubeconfig")
            .arg(&plane.kubeconfig)
            .args(["serve", "--listen", "127.0.0.1:0", "--kinds"])
            .arg(kinds)
            .arg("--tls-cert-file")
            .arg(&cert)
            .arg("--tls-key-file")
            .arg(&key);
        cmd.envs(variant.env.iter().map(|(k, v)| (k, v)));
        Serve::spawn(cmd, ca.cert_pem().to_owned())
    }

    /// `serve --standalone` over an empty embedded store.
    fn standalone(dir: &Path, kinds: &Path) -> Serve {
        let cmd =
            support::standalone::serve_command(kinds, dir, &dir.join("standalone.kubeconfig"));
        Serve::spawn(cmd, String::new())
    }

    fn spawn(mut cmd: Command, ca_pem: String) -> Serve {
        use std::io::BufRead;
        evict_from_page_cache(Path::new(cmd.get_program()));
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start kubectl-cozy serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent && line.starts_with("Serving") {
                    let _ = tx.send(Ok(line));
                    sent = true;
                } else if !sent && line.contains("rror") {
                    let _ = tx.send(Err(line));
                    sent = true;
                }
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("serve is ready within 120 s")
            .unwrap_or_else(|e| panic!("serve failed: {e}"));
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("https://"))
            .unwrap_or_default()
            .trim_end_matches(',')
            .to_owned();
        Serve { child, url, ca_pem }
    }

    /// RSS once it has stopped moving (samples a second apart).
    fn settled_rss(&self) -> Rss {
        let mut last = 0;
        for _ in 0..10 {
            std::thread::sleep(Duration::from_secs(1));
            let now = self.status();
            if now.rss.abs_diff(last) < 64 {
                return now;
            }
            last = now.rss;
        }
        self.status()
    }

    fn status(&self) -> Rss {
        let text = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/<pid>/status");
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Rss {
            rss: field("VmRSS:"),
            hwm: field("VmHWM:"),
            anon: field("RssAnon:"),
            file: field("RssFile:"),
        }
    }

    /// A client the way the aggregator calls: the front-proxy certificate,
    /// X-Remote-User and X-Remote-Group (`system:masters`, so the
    /// SubjectAccessReview allows it without RBAC objects).
    async fn client(&self, plane: &Plane) -> kube::Client {
        let pki = plane.dir.join("pki");
        let pair = kubectl_cozy::pki::CertPair {
            cert_pem: std::fs::read_to_string(pki.join("front-proxy-client.crt")).unwrap(),
            key_pem: std::fs::read_to_string(pki.join("front-proxy-client.key")).unwrap(),
        };
        let path = plane
            .dir
            .join(format!("bench-{}.kubeconfig", self.child.id()));
        plane::write_kubeconfig(&path, &self.url, &self.ca_pem, &pair).expect("kubeconfig");
        let mut config = config_from(&path).await;
        config.headers.push((
            header::HeaderName::from_static("x-remote-user"),
            header::HeaderValue::from_static("bench"),
        ));
        config.headers.push((
            header::HeaderName::from_static("x-remote-group"),
            header::HeaderValue::from_static("system:masters"),
        ));
        kube::Client::try_from(config).expect("client")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `kubectl-cozy args` to completion under `/usr/bin/time` and returns
/// its peak RSS, KiB; `None` without `/usr/bin/time`. (`wait4` from this
/// process would not do: a child's peak counts the memory of the test process
/// it was forked from.)
fn max_rss_of(args: &[&std::ffi::OsStr]) -> Option<u64> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let out = tempfile::NamedTempFile::new().expect("temp file");
    let status = Command::new(time)
        .args(["-f", "%M", "-o"])
        .arg(out.path())
        .arg(bins::kubectl_cozy())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run /usr/bin/time");
    assert!(status.success(), "kubectl-cozy {args:?} failed");
    std::fs::read_to_string(out.path())
        .ok()
        .and_then(|t| t.trim().parse().ok())
}

// ---------------------------------------------------------------------------
// the server under test, in-process

struct InProcess {
    url: String,
    ca: Ca,
    cache: WatchCache,
    registry: Registry,
    /// Held for the server's life (its shutdown handle).
    _running: RunningServer,
    runtime: Option<tokio::runtime::Runtime>,
}

impl InProcess {
    /// Starts the server on its own runtime and waits for its cache to sync.
    fn start(plane: &'static Plane) -> InProcess {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(passthrough::runtime_workers())
            .thread_name("bench-server")
            .enable_all()
            .build()
            .expect("server runtime");
        let started = Instant::now();
        let ca = Ca::new("kubectl-cozy-bench-ca").expect("CA");
        let (running, cache, registry) = runtime.block_on(async {
            let registry = examples_registry();
            let backend = Backend::Cluster(Box::new(cluster_store(plane).await));
            let cache = WatchCache::start(backend.clone());
            let serving = ca
                .issue(&LeafSpec::server(
                    "kubectl-cozy",
                    &["localhost"],
                    &["127.0.0.1".parse().expect("ip")],
                ))
                .expect("serving certificate");
            let running = server::start(ServerConfig {
                listen: "127.0.0.1:0".parse().expect("addr"),
                cert_pem: serving.cert_pem,
                key_pem: serving.key_pem,
                auth: std::sync::Arc::new(Auth::standalone(ca.cert_pem()).expect("auth")),
                state: ApiState {
                    registry: registry.clone(),
                    apps: AppStore::new(cache.clone(), backend),
                    reachability_probe: None,
                },
                connections: server::ConnectionLimits::default(),
            })
            .await
            .expect("start the server");
            cache.wait_ready().await;
            (running, cache, registry)
        });
        eprintln!(
            "[bench] server up, cache synced with {} HelmReleases, in {:.1}s",
            cache.snapshot().0.len(),
            started.elapsed().as_secs_f64()
        );
        InProcess {
            url: format!("https://{}", running.local_addr),
            ca,
            cache,
            registry,
            _running: running,
            runtime: Some(runtime),
        }
    }

    /// A client with a certificate of the server's CA (bound to the caller's runtime).
    async fn client(&self) -> kube::Client {
        client_of(&self.url, &self.ca, &["system:masters"]).await
    }
}

/// A client of the HTTPS server at `url` whose certificate `ca` issued,
/// with a client certificate of `ca` for a user in `groups`: the
/// benchmark's client stack, bound to the caller's runtime.
async fn client_of(url: &str, ca: &Ca, groups: &[&str]) -> kube::Client {
    static KUBECONFIGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let pair = ca
        .issue(&LeafSpec::client("bench", groups))
        .expect("client certificate");
    let path = std::env::temp_dir().join(format!(
        "kubectl-cozy-bench-{}-{}.kubeconfig",
        std::process::id(),
        KUBECONFIGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    plane::write_kubeconfig(&path, url, ca.cert_pem(), &pair).expect("kubeconfig");
    let config = config_from(&path).await;
    let _ = std::fs::remove_file(&path);
    kube::Client::try_from(config).expect("client")
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The HelmRelease store as `serve` builds it, over the plane's admin
/// kubeconfig.
async fn cluster_store(plane: &Plane) -> ClusterStore {
    ClusterStore::connect(&config_from(&plane.kubeconfig).await, GROUP).expect("store clients")
}

async fn config_from(path: &Path) -> kube::Config {
    let kubeconfig = kube::config::Kubeconfig::read_from(path).expect("read kubeconfig");
    kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("kubeconfig")
}

fn client_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("bench-client")
        .enable_all()
        .build()
        .expect("client runtime")
}

// ---------------------------------------------------------------------------
// apps and HelmReleases

fn app_path(ns: &str, name: Option<&str>) -> String {
    let base = format!("/apis/{GROUP}/{VERSION}/namespaces/{ns}/{PLURAL}");
    name.map_or(base.clone(), |n| format!("{base}/{n}"))
}

fn hr_path(ns: &str, name: Option<&str>) -> String {
    let base = format!("/apis/helm.toolkit.fluxcd.io/v2/namespaces/{ns}/helmreleases");
    name.map_or(base.clone(), |n| format!("{base}/{n}"))
}

fn fleet_app(i: usize) -> String {
    format!("pg-{i:05}")
}

/// An app as a user writes it ([`apps::user_app`] of the examples' group).
fn user_app(ns: &str, name: &str, i: usize) -> Value {
    apps::user_app(GROUP, ns, name, i)
}

/// The HelmRelease the server stores for [`user_app`], as applied by kubectl.
fn stored_release(kind: &ServedKind, ns: &str, name: &str, i: usize) -> Value {
    apps::stored_release(kind, ns, name, i, "kubectl-client-side-apply")
}

/// Namespaces of [`FLEET_CHUNK`] Postgres apps each, created once per run
/// straight at kube-apiserver as the HelmReleases the server would store.
static FLEET: Mutex<Vec<String>> = Mutex::new(Vec::new());

async fn fleet(plane: &Plane, apps: usize) -> Vec<String> {
    let mut namespaces = FLEET.lock().unwrap_or_else(|p| p.into_inner()).clone();
    while namespaces.len() * FLEET_CHUNK < apps {
        let ns = plane.namespace("bench-fleet").await;
        let started = Instant::now();
        let registry = examples_registry();
        let kind = postgres(&registry);
        let api: Api<DynamicObject> = Api::namespaced_with(
            plane.client().await,
            &ns,
            &ApiResource::from_gvk(&GroupVersionKind::gvk(
                "helm.toolkit.fluxcd.io",
                "v2",
                "HelmRelease",
            )),
        );
        let created = futures::stream::iter(0..FLEET_CHUNK)
            .map(|i| {
                let api = api.clone();
                let release = stored_release(&kind, &ns, &fleet_app(i), i);
                async move {
                    let object: DynamicObject = serde_json::from_value(release).expect("object");
                    api.create(&PostParams::default(), &object).await
                }
            })
            .buffer_unordered(IN_FLIGHT)
            .try_fold(0usize, |n, _| async move { Ok(n + 1) })
            .await
            .expect("create HelmReleases");
        assert_eq!(created, FLEET_CHUNK);
        eprintln!(
            "[bench] created {FLEET_CHUNK} HelmReleases in {ns} in {:.1}s ({IN_FLIGHT} in flight)",
            started.elapsed().as_secs_f64()
        );
        FLEET
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(ns.clone());
        namespaces.push(ns);
    }
    namespaces
}

/// What the list handler does, without HTTP: a scan of the snapshot for the
/// kind's objects in `ns`, their kept app views copied into one JSON list.
fn list_in_process(cache: &WatchCache, kind: &ServedKind, ns: &str) -> Vec<u8> {
    let resolved = &kind.resolved;
    let (objects, revision) = cache.snapshot();
    let head = json!({
        "apiVersion": resolved.group_version(),
        "kind": "PostgresList",
        "metadata": {"resourceVersion": revision.to_string()},
    });
    let mut bytes = serde_json::to_vec(&head).expect("encode");
    bytes.pop();
    bytes.extend_from_slice(b",\"items\":[");
    let mut first = true;
    for (key, stored) in objects.iter() {
        if key.namespace() != ns || stored.kind_label() != Some(resolved.definition.kind.as_str()) {
            continue;
        }
        if let Some(view) = stored.app_view(kind) {
            if !first {
                bytes.push(b',');
            }
            first = false;
            bytes.extend_from_slice(view.json.as_bytes());
        }
    }
    bytes.extend_from_slice(b"]}");
    bytes
}

// ---------------------------------------------------------------------------
// measuring and reporting

/// Sends one request and reads the whole body; the time covers both.
async fn request(
    client: &kube::Client,
    method: Method,
    path: &str,
    body: Option<(&str, Vec<u8>)>,
) -> (Duration, String) {
    let mut builder = Request::builder().method(method.clone()).uri(path);
    let bytes = match body {
        Some((content_type, bytes)) => {
            builder = builder.header(header::CONTENT_TYPE, content_type);
            bytes
        }
        None => Vec::new(),
    };
    let req = builder.body(bytes).expect("request");
    let started = Instant::now();
    let text = client
        .request_text(req)
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    (started.elapsed(), text)
}

/// `Accept` of a metadata-only list, as the consistency check sends it.
const METADATA_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// `Accept` of a metadata-only list in protobuf only.
const METADATA_LIST_PROTOBUF: &str =
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// The consistency check of the fleet namespace `ns` done by hand with
/// `accept` and page size `limit` (0: one page): every page read and decoded
/// for versions. Returns the time, the bytes received and the items.
async fn check_pages(
    client: &kube::Client,
    ns: &str,
    accept: &str,
    limit: u32,
) -> (Duration, usize, usize) {
    use futures::AsyncReadExt as _;
    let base = format!(
        "/apis/helm.toolkit.fluxcd.io/v2/namespaces/{ns}/helmreleases?labelSelector={}",
        format!(
            "{}={GROUP},{}=Postgres",
            helm_release::GROUP_LABEL,
            helm_release::KIND_LABEL
        )
        .replace('/', "%2F")
        .replace('=', "%3D")
        .replace(',', "%2C")
    );
    let started = Instant::now();
    let (mut bytes, mut items) = (0, 0);
    let mut token: Option<String> = None;
    loop {
        let mut path = base.clone();
        if limit > 0 {
            path.push_str(&format!("&limit={limit}"));
        }
        if let Some(t) = &token {
            path.push_str(&format!("&continue={t}"));
        }
        let req = Request::builder()
            .uri(path)
            .header(header::ACCEPT, accept)
            .body(Vec::new())
            .expect("request");
        let mut body = Vec::new();
        client
            .request_stream(req)
            .await
            .expect("metadata list")
            .read_to_end(&mut body)
            .await
            .expect("body");
        if accept.contains("protobuf") {
            assert!(
                body.starts_with(metadata_list::PROTOBUF_MAGIC),
                "protobuf answered"
            );
        }
        bytes += body.len();
        let page = metadata_list::decode(body.into()).expect("page");
        items += page.items.len();
        match page.continue_token {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    (started.elapsed(), bytes, items)
}

/// A list of `path` in pages of `limit` with an optional `Accept`: the
/// first page only, or every page (`all`) as kubectl reads them. Returns
/// the time of the requests (reading each page's JSON for its continue
/// token is not counted) and the items (or Table rows) read.
async fn list_pages(
    client: &kube::Client,
    path: &str,
    accept: Option<&str>,
    limit: usize,
    all: bool,
) -> (Duration, usize) {
    let mut took = Duration::ZERO;
    let mut items = 0;
    let mut token: Option<String> = None;
    loop {
        // limit 0: one unpaged request.
        let separator = if path.contains('?') { '&' } else { '?' };
        let mut page_path = match limit {
            0 => path.to_owned(),
            _ => format!("{path}{separator}limit={limit}"),
        };
        if let Some(t) = &token {
            let separator = if page_path.contains('?') { '&' } else { '?' };
            page_path.push_str(&format!("{separator}continue={t}"));
        }
        let (page_took, text) = request_as(client, &page_path, accept).await;
        took += page_took;
        let page: Value = serde_json::from_str(&text).expect("list JSON");
        items += item_count(&text);
        token = page["metadata"]["continue"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        if !all || token.is_none() {
            break;
        }
    }
    (took, items)
}

/// A GET with an optional `Accept`, timed as [`request`] does.
async fn request_as(client: &kube::Client, path: &str, accept: Option<&str>) -> (Duration, String) {
    let mut builder = Request::builder().method(Method::GET).uri(path);
    if let Some(accept) = accept {
        builder = builder.header(header::ACCEPT, accept);
    }
    let req = builder.body(Vec::new()).expect("request");
    let started = Instant::now();
    let text = client
        .request_text(req)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    (started.elapsed(), text)
}

/// The order of `n` interleaved subjects in round `round` (rotating, so no
/// subject always goes first).
fn rotation(round: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (k + round) % n)
}

/// The items of a list, or the rows of a Table.
fn item_count(list: &str) -> usize {
    let value: Value = serde_json::from_str(list).expect("list JSON");
    let items = if value["kind"] == "Table" {
        &value["rows"]
    } else {
        &value["items"]
    };
    items.as_array().map_or(0, Vec::len)
}

fn kib(bytes: usize) -> String {
    format!("{:.0} KiB", bytes as f64 / 1024.0)
}

fn ms(v: f64) -> String {
    if v < 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.2}")
    }
}

fn print_samples(title: &str, rows: &[(&str, &Samples, String)]) {
    println!("\n### {title}\n");
    println!("| subject | n | p50 ms | p99 ms | mean ms | min ms | max ms | body |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, s, note) in rows {
        let v = s.sorted();
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {note} |",
            v.len(),
            ms(s.p50()),
            ms(s.p99()),
            ms(s.mean()),
            ms(v.first().copied().unwrap_or(f64::NAN)),
            ms(v.last().copied().unwrap_or(f64::NAN)),
        );
    }
}

/// A figure, and the target it is held to (if any).
struct Target {
    what: String,
    value: f64,
    /// A 95 % interval of the figure, where it is a ratio of percentiles
    /// of paired samples ([`percentile_ratio`]).
    interval: Option<(f64, f64)>,
    limit: Option<f64>,
    unit: &'static str,
}

impl Target {
    fn at_most(what: &str, value: f64, limit: f64, unit: &'static str) -> Target {
        Target {
            what: what.to_owned(),
            value,
            interval: None,
            limit: Some(limit),
            unit,
        }
    }

    fn info(what: &str, value: f64, unit: &'static str) -> Target {
        Target {
            what: what.to_owned(),
            value,
            interval: None,
            limit: None,
            unit,
        }
    }

    /// `ratio` with its interval, held to at most `limit` when there is one.
    fn ratio(what: &str, ratio: PercentileRatio, limit: Option<f64>) -> Target {
        Target {
            what: what.to_owned(),
            value: ratio.value,
            interval: Some(ratio.interval),
            limit,
            unit: "x",
        }
    }
}

fn print_targets(targets: &[Target]) {
    let intervals = targets.iter().any(|t| t.interval.is_some());
    if intervals {
        println!("\n| figure | measured | 95 % interval | target | met? |");
        println!("|---|---:|---:|---:|---|");
    } else {
        println!("\n| figure | measured | target | met? |");
        println!("|---|---:|---:|---|");
    }
    for t in targets {
        let (target, met) = match (t.limit, t.interval) {
            (Some(limit), Some((low, high))) => (
                format!("≤ {limit} {}", t.unit),
                if high <= limit {
                    "yes"
                } else if low > limit {
                    "**no**"
                } else if t.value <= limit {
                    "yes, within the interval"
                } else {
                    "**no**, within the interval"
                },
            ),
            (Some(limit), None) => (
                format!("≤ {limit} {}", t.unit),
                if t.value <= limit { "yes" } else { "**no**" },
            ),
            (None, _) => (String::new(), ""),
        };
        let measured = format!("{:.2} {}", t.value, t.unit);
        if intervals {
            let interval = t
                .interval
                .map(|(low, high)| format!("{low:.2}–{high:.2}"))
                .unwrap_or_default();
            println!(
                "| {} | {measured} | {interval} | {target} | {met} |",
                t.what
            );
        } else {
            println!("| {} | {measured} | {target} | {met} |", t.what);
        }
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Waits until `cache` has applied the watch event of the write that
/// `answer` (its response body, parsed) reports, so that the next timed
/// request does not share the cores with the cache parsing it: every write
/// of the writes benchmark, the baselines' too, is followed by it, outside
/// the timing. An answer without a resourceVersion (a `Status`) has none to
/// wait for.
async fn settle(cache: &WatchCache, answer: &Value) {
    let rv = kubectl_cozy::storage::resource_version(answer);
    if rv > 0 {
        assert!(
            cache.wait_for_revision(rv, Duration::from_secs(10)).await,
            "the watch cache never saw revision {rv}"
        );
    }
}

fn print_load(before: String) {
    println!(
        "\nload average (1/5/15 min): {before} at the start, {} at the end\n",
        loadavg()
    );
}
