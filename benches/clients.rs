//! The server measured the way users reach it (issue 15, goal 4): through
//! kube-apiserver's aggregator, against direct HelmRelease access through
//! the same kube-apiserver, with a client that is not ours.
//!
//! A real `kubectl-cozy serve` process (release build, delegated
//! authentication and authorization as always in cluster mode, the
//! external-name route: an APIService and an ExternalName Service to
//! `localhost`) serves 5,000 Postgres apps in one namespace of the real
//! local control plane; the baseline is the same 5,000 HelmReleases read
//! straight from kube-apiserver. Two clients, each subject interleaved with
//! its baseline round by round:
//!
//! - `kubectl`, the real binary, one process per request (its own start,
//!   kubeconfig load and cached discovery are part of both sides; the
//!   `kubectl version --client` row is that floor): `get` (a Table, paged
//!   by 500 as kubectl pages), `get -o json` (JSON, paged likewise), `get
//!   -l` (one team's 500 apps, by label), `get NAME -o json` and
//!   `create -f`;
//! - a kube-rs client over one kept-alive TLS connection to kube-apiserver
//!   (no process start): consistent get, create, update (PUT), and the
//!   5,000-object list as JSON and as a Table, unpaged. Beside the two, the
//!   aggregated floor: the same HelmReleases through a pass-through proxy
//!   registered as an APIService of a group of its own (`passthrough`),
//!   which is kube-apiserver's proxying and the second hop with no work
//!   behind them.
//!
//! Prints Markdown tables with p50 and p99 per subject and the ratio of
//! each app row to its HelmRelease row (and, for kube-rs, to the floor's),
//! and the load average. Asserts
//! counts and names only, never a time. Run it with `benches/clients.sh
//! [kubectl|client]` (or `cargo bench --bench clients -- [FILTER]`).

#![allow(
    unreachable_pub,
    reason = "the integration tests' helpers, shared here, have pub items"
)]

use std::time::{Duration, Instant};

use http::{Method, Request, header};
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::{Value, json};

use kubectl_cozy::kinds::Registry;
use kubectl_cozy::kinds::registry::ServedKind;
use kubectl_cozy::storage::helm_release;

use crate::support::plane::{Plane, plane};
use crate::support::serve::{KindsDir, ServeProcess, kinds_dir};

#[allow(
    dead_code,
    reason = "the examples' kind loaders: this benchmark writes its own kinds"
)]
mod apps;
/// The pass-through proxy: the aggregated rows' floor.
mod passthrough;
/// The proxy's own timing (`BENCH_SPANS=1`), unused here.
#[allow(dead_code, reason = "the spans are printed by the server benchmark")]
mod stages;
use passthrough::Passthrough;
/// Latencies, their percentiles, and ratios of percentiles with an interval.
#[allow(dead_code, reason = "the server benchmark uses all of it")]
mod samples;
use samples::{Samples, percentile_ratio};
/// The real control plane, `serve` as a process, as the integration tests
/// have them.
#[path = "../tests/it/support/mod.rs"]
#[allow(
    unused_imports,
    reason = "re-exports the tests use and the benchmarks do not"
)]
mod support;

use apps::{PLURAL, VERSION};

/// Apps (and HelmReleases) in the listed namespace.
const APPS: usize = 5_000;
/// HelmReleases created at once while populating.
const IN_FLIGHT: usize = 16;
const HR_API: &str = "/apis/helm.toolkit.fluxcd.io/v2";
/// kubectl's resource argument for HelmReleases.
const HR_RESOURCE: &str = "helmreleases.v2.helm.toolkit.fluxcd.io";
/// What `kubectl get` asks for.
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

fn main() {
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default();
    let plane = plane();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let bench = Bench::start(plane).await;
        if "kubectl".contains(filter.as_str()) {
            println!("\n## benchmark kubectl");
            bench.kubectl().await;
        }
        if "client".contains(filter.as_str()) {
            println!("\n## benchmark client");
            bench.client().await;
        }
        bench.stop().await;
    });
}

/// The plane with 5,000 apps and `serve` registered for their group.
struct Bench {
    plane: &'static Plane,
    kinds: KindsDir,
    kind: std::sync::Arc<ServedKind>,
    serve: ServeProcess,
    /// The namespace of the 5,000 apps.
    fleet: String,
    /// A namespace for the writes.
    writes: String,
    /// kubectl's discovery cache.
    cache_dir: tempfile::TempDir,
    /// The pass-through proxy, registered for [`Bench::floor_group`].
    floor: Passthrough,
    floor_group: String,
}

/// The floor's Service (an ExternalName to `localhost`).
const FLOOR_SERVICE: &str = "bench-passthrough";

impl Bench {
    async fn start(plane: &'static Plane) -> Bench {
        let kinds = kinds_dir(&support::serve::group("clients"));
        let registry = Registry::from_path(kinds.dir.path()).expect("kinds");
        let kind = registry
            .snapshot()
            .get(&kinds.group, VERSION, PLURAL)
            .cloned()
            .expect("the Postgres kind");
        let fleet = plane.namespace("bench-clients").await;
        let writes = plane.namespace("bench-clients-w").await;
        populate(plane, &kind, &fleet).await;
        let started = Instant::now();
        let mut serve = ServeProcess::start(
            plane,
            &kinds,
            &[
                "--route",
                "external-name",
                "--host",
                "localhost",
                "--listen",
                "127.0.0.1:0",
                "-q",
                "--timeout",
                "150s",
            ],
        );
        serve
            .ready(Duration::from_secs(180))
            .await
            .expect("serve is ready");
        eprintln!(
            "[bench] serve registered (external-name route) in {:.1}s",
            started.elapsed().as_secs_f64()
        );
        let floor_ns = plane.namespace("bench-clients-floor").await;
        let floor_group = support::serve::group("passthrough");
        // Started on a thread of its own: it builds and blocks on a runtime
        // of its own, which this runtime's threads may not.
        let floor = {
            let (ns, group) = (floor_ns.clone(), floor_group.clone());
            std::thread::spawn(move || {
                Passthrough::behind_aggregator(plane, FLOOR_SERVICE, &ns, &group)
            })
            .join()
            .expect("start the pass-through proxy")
        };
        register_floor(plane, &floor, &floor_ns, &floor_group).await;
        let bench = Bench {
            plane,
            kinds,
            kind,
            serve,
            fleet,
            writes,
            cache_dir: tempfile::tempdir().expect("cache dir"),
            floor,
            floor_group,
        };
        // Served through the aggregator, all of them, before anything is timed.
        let client = plane.client().await;
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (_, text) = request(&client, Method::GET, &bench.app_path(None), None, None).await;
            if item_count(&text) == APPS {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "serve lists {} apps, not {APPS}",
                item_count(&text)
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        bench
    }

    async fn stop(mut self) {
        self.serve.signal("-INT");
        let _ = self.serve.exit(Duration::from_secs(30)).await;
        let api: Api<APIService> = Api::all(self.plane.client().await);
        api.delete(&floor_api_service(&self.floor_group), &Default::default())
            .await
            .expect("delete the floor's APIService");
        drop(self.floor);
    }

    fn group(&self) -> &str {
        &self.kinds.group
    }

    /// kubectl's resource argument for the apps.
    fn app_resource(&self) -> String {
        format!("{PLURAL}.{VERSION}.{}", self.group())
    }

    fn app_path(&self, name: Option<&str>) -> String {
        self.app_path_in(&self.fleet, name)
    }

    fn app_path_in(&self, ns: &str, name: Option<&str>) -> String {
        let base = format!("/apis/{}/{VERSION}/namespaces/{ns}/{PLURAL}", self.group());
        name.map_or(base.clone(), |n| format!("{base}/{n}"))
    }

    /// The HelmRelease of app `name`.
    fn release_name(&self, name: &str) -> String {
        helm_release::release_name(&self.kind.resolved, name)
    }

    /// Runs kubectl with the plane's admin kubeconfig and the bench's
    /// discovery cache; the time covers the whole process.
    async fn run_kubectl(&self, args: &[&str]) -> (Duration, String) {
        let mut cmd = tokio::process::Command::new(self.plane.kubectl_path());
        cmd.arg("--kubeconfig")
            .arg(&self.plane.kubeconfig)
            .arg("--cache-dir")
            .arg(self.cache_dir.path())
            .args(args)
            .kill_on_drop(true);
        let started = Instant::now();
        let output = cmd.output().await.expect("run kubectl");
        let took = started.elapsed();
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        (took, String::from_utf8(output.stdout).expect("UTF-8"))
    }

    async fn kubectl(&self) {
        const LIST_ROUNDS: usize = 8;
        const ROUNDS: usize = 30;
        let load_before = loadavg();
        let app = self.app_resource();
        let app = app.as_str();
        let ns = self.fleet.as_str();
        // Warm-up: fills the discovery cache and the connections' first costs.
        let first = "db00000".to_owned();
        for (resource, object) in [
            (app, first.clone()),
            (HR_RESOURCE, self.release_name(&first)),
        ] {
            self.run_kubectl(&["get", resource, &object, "-n", ns, "-o", "name"])
                .await;
        }

        let mut version = Samples::default();
        // [Table, JSON, Table of one team (-l)][app, HR]
        let mut lists: [[Samples; 2]; 3] = Default::default();
        // One team's apps (every tenth), by their label and by the
        // HelmReleases' stored form of it.
        let team = |k: usize| match k {
            0 => "team=team-3",
            _ => "apps.cozystack.io-team=team-3",
        };
        for round in 0..LIST_ROUNDS {
            for (k, resource) in rotate(round, [app, HR_RESOURCE]) {
                let (took, text) = self
                    .run_kubectl(&["get", resource, "-n", ns, "-l", team(k)])
                    .await;
                assert_eq!(
                    text.lines().count(),
                    APPS / 10 + 1,
                    "a header and one team's rows"
                );
                lists[2][k].push(took);
                let (took, text) = self.run_kubectl(&["get", resource, "-n", ns]).await;
                assert_eq!(text.lines().count(), APPS + 1, "a header and {APPS} rows");
                lists[0][k].push(took);
                let (took, text) = self
                    .run_kubectl(&["get", resource, "-n", ns, "-o", "json"])
                    .await;
                assert_eq!(item_count(&text), APPS);
                lists[1][k].push(took);
            }
        }

        let name = format!("db{:05}", APPS / 2);
        let release = self.release_name(&name);
        let mut gets: [Samples; 2] = Default::default();
        for round in 0..ROUNDS {
            let (took, _) = self.run_kubectl(&["version", "--client"]).await;
            version.push(took);
            for (k, (resource, object)) in rotate(
                round,
                [(app, name.as_str()), (HR_RESOURCE, release.as_str())],
            ) {
                let (took, text) = self
                    .run_kubectl(&["get", resource, object, "-n", ns, "-o", "json"])
                    .await;
                let got: Value = serde_json::from_str(&text).expect("JSON");
                assert_eq!(got["metadata"]["name"], object);
                gets[k].push(took);
            }
        }

        let files = tempfile::tempdir().expect("temp dir");
        let mut creates: [Samples; 2] = Default::default();
        for round in 0..ROUNDS {
            for k in rotate(round, [0, 1]).map(|(k, _)| k) {
                let name = format!("kc-{k}-{round}");
                let object = if k == 0 {
                    user_app(self.group(), &self.writes, &name, round)
                } else {
                    stored_release(&self.kind, &self.writes, &name, round)
                };
                let file = files.path().join(format!("{name}.json"));
                std::fs::write(&file, serde_json::to_vec(&object).expect("JSON")).expect("write");
                let (took, text) = self
                    .run_kubectl(&["create", "-f", file.to_str().expect("path")])
                    .await;
                assert!(text.contains(" created"), "{text}");
                creates[k].push(took);
            }
        }

        let what = |s: &str| s.replace("{app}", app).replace("{hr}", HR_RESOURCE);
        let rows = [
            (
                what("kubectl get {app} (Table, 5,000 rows, paged by 500)"),
                &lists[0][0],
                &lists[0][1],
            ),
            (
                what("kubectl get {app} -o json (5,000 items, paged by 500)"),
                &lists[1][0],
                &lists[1][1],
            ),
            (
                what("kubectl get {app} -l team=team-3 (Table, the 500 of one team, of 5,000)"),
                &lists[2][0],
                &lists[2][1],
            ),
            (
                "kubectl get NAME -o json (one object)".to_owned(),
                &gets[0],
                &gets[1],
            ),
            (
                "kubectl create -f FILE (one object)".to_owned(),
                &creates[0],
                &creates[1],
            ),
        ];
        print_pairs(
            "kubectl through kube-apiserver: apps (aggregated: kube-apiserver → serve → kube-apiserver) vs HelmReleases (kube-apiserver)",
            ("apps", "HelmReleases"),
            &rows,
        );
        println!(
            "\nkubectl's own floor, `kubectl version --client` (process start, no request): p50 {} ms, p99 {} ms (n = {})",
            ms(version.p50()),
            ms(version.p99()),
            version.ms.len()
        );
        print_load(&load_before);
    }

    async fn client(&self) {
        const ROUNDS: usize = 100;
        const LIST_ROUNDS: usize = 15;
        const WARMUP: usize = 5;
        let load_before = loadavg();
        let client = self.plane.client().await;
        let ns = self.fleet.as_str();
        // The HelmReleases' path, straight or through the floor.
        let hr_path = |api: &str, ns: &str, name: Option<&str>| {
            let base = format!("{api}/namespaces/{ns}/helmreleases");
            name.map_or(base.clone(), |n| format!("{base}/{n}"))
        };
        let floor_api = format!("/apis/{}/v2", self.floor_group);
        let json_body =
            |v: &Value| Some(("application/json", serde_json::to_vec(v).expect("JSON")));

        // Every subject: [apps, HelmReleases, HelmReleases through the floor].
        let mut lists: [[Samples; 3]; 2] = Default::default(); // [JSON, Table]
        for round in 0..WARMUP + LIST_ROUNDS {
            let paths = [
                self.app_path(None),
                hr_path(HR_API, ns, None),
                hr_path(&floor_api, ns, None),
            ];
            for (k, path) in rotate(round, paths) {
                for (a, accept) in [None, Some(TABLE)].into_iter().enumerate() {
                    let (took, text) = request(&client, Method::GET, &path, accept, None).await;
                    assert_eq!(item_count(&text), APPS, "{path}");
                    if round >= WARMUP {
                        lists[a][k].push(took);
                    }
                }
            }
        }

        let name = format!("db{:05}", APPS / 2);
        let release = self.release_name(&name);
        let mut gets: [Samples; 3] = Default::default();
        for round in 0..WARMUP + ROUNDS {
            let paths = [
                self.app_path(Some(&name)),
                hr_path(HR_API, ns, Some(&release)),
                hr_path(&floor_api, ns, Some(&release)),
            ];
            for (k, path) in rotate(round, paths) {
                let (took, _) = request(&client, Method::GET, &path, None, None).await;
                if round >= WARMUP {
                    gets[k].push(took);
                }
            }
        }

        let mut creates: [Samples; 3] = Default::default();
        let mut created: [Vec<Value>; 3] = Default::default();
        for round in 0..WARMUP + ROUNDS {
            for k in rotate(round, [0, 1, 2]).map(|(k, _)| k) {
                let name = format!("kr-{k}-{round}");
                let (path, object) = match k {
                    0 => (
                        self.app_path_in(&self.writes, None),
                        user_app(self.group(), &self.writes, &name, round),
                    ),
                    1 => (
                        hr_path(HR_API, &self.writes, None),
                        stored_release(&self.kind, &self.writes, &name, round),
                    ),
                    _ => (
                        hr_path(&floor_api, &self.writes, None),
                        stored_release(&self.kind, &self.writes, &name, round),
                    ),
                };
                let (took, text) =
                    request(&client, Method::POST, &path, None, json_body(&object)).await;
                if round >= WARMUP {
                    creates[k].push(took);
                }
                created[k].push(serde_json::from_str(&text).expect("JSON"));
            }
        }

        let mut updates: [Samples; 3] = Default::default();
        for round in 0..WARMUP + ROUNDS {
            let replicas = 1 + (round + 4) % 9;
            for k in rotate(round, [0, 1, 2]).map(|(k, _)| k) {
                let mut object = created[k]
                    .get(round)
                    .cloned()
                    .expect("created in this round");
                let name = object["metadata"]["name"]
                    .as_str()
                    .expect("name")
                    .to_owned();
                let path = match k {
                    0 => {
                        object["spec"]["replicas"] = json!(replicas);
                        self.app_path_in(&self.writes, Some(&name))
                    }
                    1 => {
                        object["spec"]["values"]["replicas"] = json!(replicas);
                        hr_path(HR_API, &self.writes, Some(&name))
                    }
                    _ => {
                        object["spec"]["values"]["replicas"] = json!(replicas);
                        hr_path(&floor_api, &self.writes, Some(&name))
                    }
                };
                let (took, _) =
                    request(&client, Method::PUT, &path, None, json_body(&object)).await;
                if round >= WARMUP {
                    updates[k].push(took);
                }
            }
        }

        let rows = [
            ("list 5,000, JSON (consistent, unpaged)", &lists[0]),
            ("list 5,000, Table (consistent, unpaged)", &lists[1]),
            ("get one (consistent)", &gets),
            ("create", &creates),
            ("update (PUT)", &updates),
        ];
        print_pairs(
            "kube-rs client through kube-apiserver (one kept-alive TLS connection): apps (aggregated) vs HelmReleases",
            ("apps", "HelmReleases"),
            &rows.map(|(what, s)| (what.to_owned(), &s[0], &s[1])),
        );
        print_pairs(
            "The aggregated floor: HelmReleases through a pass-through APIService (kube-apiserver → proxy → kube-apiserver) vs HelmReleases",
            ("floor", "HelmReleases"),
            &rows.map(|(what, s)| (what.to_owned(), &s[2], &s[1])),
        );
        print_pairs(
            "apps (aggregated) vs the aggregated floor: what serving apps adds beyond the two hops",
            ("apps", "floor"),
            &rows.map(|(what, s)| (what.to_owned(), &s[0], &s[2])),
        );
        print_load(&load_before);
    }
}

/// Registers `floor` for `group`/v2: an ExternalName Service to
/// `localhost` at its port in `ns`, and an APIService with its CA; waits
/// until kube-apiserver reports it Available.
async fn register_floor(plane: &Plane, floor: &Passthrough, ns: &str, group: &str) {
    use k8s_openapi::api::core::v1::{Service, ServiceSpec};
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::{
        APIServiceSpec, ServiceReference,
    };
    use kube::api::ObjectMeta;
    let client = plane.client().await;
    let service = Service {
        metadata: ObjectMeta {
            name: Some(FLOOR_SERVICE.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            type_: Some("ExternalName".to_owned()),
            external_name: Some("localhost".to_owned()),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    };
    Api::<Service>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &service)
        .await
        .expect("the floor's Service");
    let api_service = APIService {
        metadata: ObjectMeta {
            name: Some(floor_api_service(group)),
            ..ObjectMeta::default()
        },
        spec: Some(APIServiceSpec {
            group: Some(group.to_owned()),
            version: Some("v2".to_owned()),
            service: Some(ServiceReference {
                namespace: Some(ns.to_owned()),
                name: Some(FLOOR_SERVICE.to_owned()),
                port: Some(i32::from(floor.port())),
            }),
            ca_bundle: Some(k8s_openapi::ByteString(
                floor.ca().cert_pem().as_bytes().to_vec(),
            )),
            group_priority_minimum: 1000,
            version_priority: 15,
            insecure_skip_tls_verify: None,
        }),
        status: None,
    };
    let api: Api<APIService> = Api::all(client);
    api.create(&PostParams::default(), &api_service)
        .await
        .expect("the floor's APIService");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let current = api
            .get(&floor_api_service(group))
            .await
            .expect("APIService");
        let available = current
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .into_iter()
            .any(|c| c.type_ == "Available" && c.status == "True");
        if available {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the floor's APIService is not Available"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn floor_api_service(group: &str) -> String {
    format!("v2.{group}")
}

/// Creates [`APPS`] HelmReleases in `ns` straight at kube-apiserver, as the
/// server would store the apps `db00000`…
async fn populate(plane: &Plane, kind: &ServedKind, ns: &str) {
    let started = Instant::now();
    let api: Api<DynamicObject> = Api::namespaced_with(
        plane.client().await,
        ns,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "helm.toolkit.fluxcd.io",
            "v2",
            "HelmRelease",
        )),
    );
    let names: Vec<String> = (0..APPS).map(|i| format!("db{i:05}")).collect();
    for (c, chunk) in names.chunks(IN_FLIGHT).enumerate() {
        let mut set = tokio::task::JoinSet::new();
        for (i, name) in chunk.iter().enumerate() {
            let release: DynamicObject =
                serde_json::from_value(stored_release(kind, ns, name, c * IN_FLIGHT + i))
                    .expect("HelmRelease");
            let api = api.clone();
            set.spawn(async move { api.create(&PostParams::default(), &release).await });
        }
        while let Some(r) = set.join_next().await {
            r.expect("join").expect("create HelmRelease");
        }
    }
    eprintln!(
        "[bench] {APPS} HelmReleases created in {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

use apps::user_app;

/// The HelmRelease the server stores for [`user_app`], as created by kubectl.
fn stored_release(kind: &ServedKind, ns: &str, name: &str, i: usize) -> Value {
    apps::stored_release(kind, ns, name, i, "kubectl-create")
}

/// Sends one request and reads the whole body; the time covers both.
async fn request(
    client: &kube::Client,
    method: Method,
    path: &str,
    accept: Option<&str>,
    body: Option<(&str, Vec<u8>)>,
) -> (Duration, String) {
    let mut builder = Request::builder().method(method.clone()).uri(path);
    if let Some(accept) = accept {
        builder = builder.header(header::ACCEPT, accept);
    }
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

/// `subjects` in the order of round `round` (each goes first in turn),
/// each with its index.
fn rotate<T, const N: usize>(round: usize, subjects: [T; N]) -> impl Iterator<Item = (usize, T)> {
    let mut items: Vec<(usize, T)> = subjects.into_iter().enumerate().collect();
    items.rotate_left(round % N);
    items.into_iter()
}

fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.0}")
    }
}

/// One table: each subject against its baseline, the columns named by
/// `(subject, baseline)`; each ratio with its 95 % interval (a paired
/// bootstrap over the rounds, [`percentile_ratio`]).
fn print_pairs(title: &str, (a, b): (&str, &str), rows: &[(String, &Samples, &Samples)]) {
    println!("\n### {title}\n");
    println!(
        "| what | n | {a} p50 ms | {b} p50 ms | p50 ratio (95 % interval) | {a} p99 ms | {b} p99 ms | p99 ratio (95 % interval) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let ratio = |a: &Samples, b: &Samples, p: f64| {
        let r = percentile_ratio(a, b, p);
        let (low, high) = r.interval;
        format!("{:.2}× ({low:.2}–{high:.2})", r.value)
    };
    for (what, app, hr) in rows {
        println!(
            "| {what} | {} | {} | {} | {} | {} | {} | {} |",
            app.ms.len(),
            ms(app.p50()),
            ms(hr.p50()),
            ratio(app, hr, 50.0),
            ms(app.p99()),
            ms(hr.p99()),
            ratio(app, hr, 99.0),
        );
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

fn print_load(before: &str) {
    println!(
        "\nload average (1/5/15 min): {before} at the start, {} at the end",
        loadavg()
    );
}
