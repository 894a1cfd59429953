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
//!   5,000-object list as JSON and as a Table, unpaged.
//!
//! Prints Markdown tables with p50 and p99 per subject and the ratio of
//! each app row to its HelmRelease row, and the load average. Asserts
//! counts and names only, never a time. Run it with `benches/clients.sh
//! [kubectl|client]` (or `cargo bench --bench clients -- [FILTER]`).

#![allow(
    unreachable_pub,
    reason = "the integration tests' helpers, shared here, have pub items"
)]

use std::time::{Duration, Instant};

use http::{Method, Request, header};
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
}

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
        let bench = Bench {
            plane,
            kinds,
            kind,
            serve,
            fleet,
            writes,
            cache_dir: tempfile::tempdir().expect("cache dir"),
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
        let hr_path = |ns: &str, name: Option<&str>| {
            let base = format!("{HR_API}/namespaces/{ns}/helmreleases");
            name.map_or(base.clone(), |n| format!("{base}/{n}"))
        };
        let json_body =
            |v: &Value| Some(("application/json", serde_json::to_vec(v).expect("JSON")));

        let mut lists: [[Samples; 2]; 2] = Default::default(); // [JSON, Table][app, HR]
        for round in 0..WARMUP + LIST_ROUNDS {
            for (k, path) in rotate(round, [self.app_path(None), hr_path(ns, None)]) {
                for (a, accept) in [None, Some(TABLE)].into_iter().enumerate() {
                    let (took, text) = request(&client, Method::GET, &path, accept, None).await;
                    assert_eq!(item_count(&text), APPS);
                    if round >= WARMUP {
                        lists[a][k].push(took);
                    }
                }
            }
        }

        let name = format!("db{:05}", APPS / 2);
        let mut gets: [Samples; 2] = Default::default();
        for round in 0..WARMUP + ROUNDS {
            for (k, path) in rotate(
                round,
                [
                    self.app_path(Some(&name)),
                    hr_path(ns, Some(&self.release_name(&name))),
                ],
            ) {
                let (took, _) = request(&client, Method::GET, &path, None, None).await;
                if round >= WARMUP {
                    gets[k].push(took);
                }
            }
        }

        let mut creates: [Samples; 2] = Default::default();
        let mut created: [Vec<Value>; 2] = Default::default();
        for round in 0..WARMUP + ROUNDS {
            for k in rotate(round, [0, 1]).map(|(k, _)| k) {
                let name = format!("kr-{k}-{round}");
                let (path, object) = if k == 0 {
                    (
                        self.app_path_in(&self.writes, None),
                        user_app(self.group(), &self.writes, &name, round),
                    )
                } else {
                    (
                        hr_path(&self.writes, None),
                        stored_release(&self.kind, &self.writes, &name, round),
                    )
                };
                let (took, text) =
                    request(&client, Method::POST, &path, None, json_body(&object)).await;
                if round >= WARMUP {
                    creates[k].push(took);
                }
                created[k].push(serde_json::from_str(&text).expect("JSON"));
            }
        }

        let mut updates: [Samples; 2] = Default::default();
        for round in 0..WARMUP + ROUNDS {
            let replicas = 1 + (round + 4) % 9;
            for k in rotate(round, [0, 1]).map(|(k, _)| k) {
                let mut object = created[k]
                    .get(round)
                    .cloned()
                    .expect("created in this round");
                let name = object["metadata"]["name"]
                    .as_str()
                    .expect("name")
                    .to_owned();
                let path = if k == 0 {
                    object["spec"]["replicas"] = json!(replicas);
                    self.app_path_in(&self.writes, Some(&name))
                } else {
                    object["spec"]["values"]["replicas"] = json!(replicas);
                    hr_path(&self.writes, Some(&name))
                };
                let (took, _) =
                    request(&client, Method::PUT, &path, None, json_body(&object)).await;
                if round >= WARMUP {
                    updates[k].push(took);
                }
            }
        }

        let rows = [
            (
                "list 5,000, JSON (consistent, unpaged)".to_owned(),
                &lists[0][0],
                &lists[0][1],
            ),
            (
                "list 5,000, Table (consistent, unpaged)".to_owned(),
                &lists[1][0],
                &lists[1][1],
            ),
            ("get one (consistent)".to_owned(), &gets[0], &gets[1]),
            ("create".to_owned(), &creates[0], &creates[1]),
            ("update (PUT)".to_owned(), &updates[0], &updates[1]),
        ];
        print_pairs(
            "kube-rs client through kube-apiserver (one kept-alive TLS connection): apps (aggregated) vs HelmReleases",
            &rows,
        );
        print_load(&load_before);
    }
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

/// `pair` in the order of round `round` (alternating which goes first),
/// each with its index.
fn rotate<T>(round: usize, pair: [T; 2]) -> impl Iterator<Item = (usize, T)> {
    let mut items: Vec<(usize, T)> = pair.into_iter().enumerate().collect();
    if round % 2 == 1 {
        items.reverse();
    }
    items.into_iter()
}

/// Times of one subject, ms.
#[derive(Default)]
struct Samples {
    ms: Vec<f64>,
}

impl Samples {
    fn push(&mut self, d: Duration) {
        self.ms.push(d.as_secs_f64() * 1e3);
    }

    /// Nearest-rank percentile, ms.
    fn pct(&self, p: f64) -> f64 {
        let mut v = self.ms.clone();
        v.sort_by(f64::total_cmp);
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        v[rank.clamp(1, v.len()) - 1]
    }

    fn p50(&self) -> f64 {
        self.pct(50.0)
    }

    fn p99(&self) -> f64 {
        self.pct(99.0)
    }
}

fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.0}")
    }
}

/// One table: each subject through the server against its HelmRelease baseline.
fn print_pairs(title: &str, rows: &[(String, &Samples, &Samples)]) {
    println!("\n### {title}\n");
    println!(
        "| what | n | apps p50 ms | HelmReleases p50 ms | p50 ratio | apps p99 ms | HelmReleases p99 ms | p99 ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (what, app, hr) in rows {
        println!(
            "| {what} | {} | {} | {} | {:.2}× | {} | {} | {:.2}× |",
            app.ms.len(),
            ms(app.p50()),
            ms(hr.p50()),
            app.p50() / hr.p50(),
            ms(app.p99()),
            ms(hr.p99()),
            app.p99() / hr.p99(),
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
