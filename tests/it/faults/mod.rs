//! Fault injection on the real control plane (issue 14 §3): the server
//! under test keeps serving, loses nothing and recovers by itself when what
//! it stands on fails. Faults that stop or freeze kube-apiserver or etcd run
//! on a [`PrivatePlane`] of the test's own, never on the shared plane.
//!
//! The helpers here: the server in-process over a plane with a client
//! straight at it ([`Harness`]), an oracle that watches etcd itself (its
//! JSON gateway, so the watch survives kube-apiserver restarts:
//! [`EtcdWatch`]), and client-go-like watchers of the server ([`Watcher`]).

mod apiserver_restart;
mod etcd_pause;
mod exhaustion;
mod no_flux;
mod proxy;
mod standalone;
mod standalone_proc;
mod throttling;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use futures::{AsyncBufReadExt, StreamExt};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kubectl_cozy::apiserver::server::RunningServer;
use kubectl_cozy::auth::Auth;
use kubectl_cozy::pki::{Ca, LeafSpec};
use kubectl_cozy::storage::cache::WatchCache;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::aggregated::start_server_with_cache;
use crate::support::plane::Plane;
use crate::support::private_plane::PrivatePlane;

/// The HelmRelease name prefix of a Postgres app.
pub const RELEASE_PREFIX: &str = "postgres-";

/// The server under test, in-process over a plane, and a `system:masters`
/// client (of the server's own client CA) straight at it.
pub struct Harness {
    /// The server (it stops when dropped).
    #[expect(dead_code, reason = "held so that the server keeps running")]
    running: RunningServer,
    /// Its watch cache.
    pub cache: WatchCache,
    /// A client of the server.
    pub client: kube::Client,
}

impl Harness {
    /// Starts the server over `plane` (as its admin).
    pub async fn start(plane: &Plane) -> Harness {
        Harness::over(plane.config().await).await
    }

    /// Starts the server over the cluster `upstream` (a client's config)
    /// reaches, with the store's clients as `serve` makes them.
    pub async fn over(upstream: kube::Config) -> Harness {
        let client_ca = Ca::new("fault-test-client-ca").expect("CA");
        let auth = Auth::standalone(client_ca.cert_pem()).expect("auth");
        let (running, serving_ca_pem, cache) =
            start_server_with_cache(upstream, Arc::new(auth), false)
                .await
                .expect("server");
        let user = client_ca
            .issue(&LeafSpec::client("admin", &["system:masters"]))
            .expect("client cert");
        let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
             clusters: [{{name: c, cluster: {{server: 'https://{}', certificate-authority-data: {}}}}}]\n\
             users: [{{name: u, user: {{client-certificate-data: {}, client-key-data: {}}}}}]\n\
             contexts: [{{name: c, context: {{cluster: c, user: u}}}}]\n",
            running.local_addr,
            b64(&serving_ca_pem),
            b64(&user.cert_pem),
            b64(&user.key_pem),
        );
        let mut config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::from_yaml(&kubeconfig).expect("kubeconfig"),
            &Default::default(),
        )
        .await
        .expect("config");
        // The tests see every answer, 429s and 503s included.
        config.default_retry = false;
        Harness {
            running,
            cache,
            client: kube::Client::try_from(config).expect("client"),
        }
    }

    /// The Postgres apps of `namespace`, through the server.
    pub fn postgres(&self, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), namespace, &postgres_resource())
    }
}

/// `postgreses.apps.cozystack.io`.
pub fn postgres_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.cozystack.io", "v1alpha1", "Postgres"),
        "postgreses",
    )
}

/// Starts a private plane (blocking work, on this multi-threaded runtime).
pub fn private_plane(name: &str) -> PrivatePlane {
    tokio::task::block_in_place(|| PrivatePlane::start(name)).expect("private plane")
}

/// Creates `name` on `plane`.
pub async fn create_namespace(plane: &Plane, name: &str) {
    use k8s_openapi::api::core::v1::Namespace;
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
    Api::<Namespace>::all(plane.client().await)
        .create(&Default::default(), &ns)
        .await
        .expect("create namespace");
}

/// One change etcd recorded for an app's HelmRelease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// `ADDED`, `MODIFIED` or `DELETED`, as a watch would say.
    pub kind: &'static str,
    /// The app's name.
    pub name: String,
    /// The etcd revision (the resourceVersion).
    pub rv: u64,
}

/// A watch on etcd itself of the HelmReleases of one namespace: what
/// kube-apiserver stored, in order, whatever happens to kube-apiserver.
pub struct EtcdWatch {
    changes: Arc<Mutex<Vec<Change>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for EtcdWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The etcd key prefix of the HelmReleases of `namespace`.
fn release_prefix(namespace: &str) -> String {
    format!("/registry/helm.toolkit.fluxcd.io/helmreleases/{namespace}/")
}

/// Sends one HTTP/1.0 request to etcd's JSON gateway and returns the
/// stream after the response head (Go answers HTTP/1.0 unchunked).
async fn etcd_post(
    port: u16,
    path: &str,
    body: &Value,
) -> tokio::io::BufReader<tokio::net::TcpStream> {
    use tokio::io::AsyncBufReadExt as _;
    let body = body.to_string();
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect to etcd");
    let head = format!(
        "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body.as_bytes()).await.expect("write");
    let mut reader = tokio::io::BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).await.expect("status line");
    assert!(line.contains(" 200 "), "etcd {path}: {line}");
    loop {
        line.clear();
        reader.read_line(&mut line).await.expect("header");
        if line.trim().is_empty() {
            return reader;
        }
    }
}

/// etcd's current revision.
pub async fn etcd_revision(port: u16) -> u64 {
    let mut reader = etcd_post(
        port,
        "/v3/kv/range",
        &serde_json::json!({"key": base64::engine::general_purpose::STANDARD.encode("/"), "count_only": true}),
    )
    .await;
    let mut text = String::new();
    reader.read_to_string(&mut text).await.expect("range");
    let response: Value = serde_json::from_str(&text).expect("range JSON");
    number(&response["header"]["revision"])
}

/// A protobuf int64 as the gateway writes it (a string).
fn number(value: &Value) -> u64 {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| value.as_u64())
        .unwrap_or(0)
}

impl EtcdWatch {
    /// Starts watching `namespace`'s HelmReleases; returns once etcd has
    /// confirmed the watch.
    pub async fn start(port: u16, namespace: &str) -> EtcdWatch {
        use tokio::io::AsyncBufReadExt as _;
        let prefix = release_prefix(namespace);
        let mut end = prefix.clone().into_bytes();
        *end.last_mut().expect("prefix") += 1;
        let b64 = base64::engine::general_purpose::STANDARD;
        let request = serde_json::json!({"create_request": {
            "key": b64.encode(&prefix), "range_end": b64.encode(&end)}});
        let mut reader = etcd_post(port, "/v3/watch", &request).await;
        let mut line = String::new();
        reader.read_line(&mut line).await.expect("watch created");
        assert!(line.contains("\"created\":true"), "etcd watch: {line}");
        let changes = Arc::new(Mutex::new(Vec::new()));
        let sink = changes.clone();
        let task = tokio::spawn(async move {
            let mut line = String::new();
            while reader.read_line(&mut line).await.is_ok_and(|n| n > 0) {
                let message: Value = serde_json::from_str(&line).unwrap_or_default();
                line.clear();
                for event in message["result"]["events"].as_array().into_iter().flatten() {
                    let kv = &event["kv"];
                    let key = b64
                        .decode(kv["key"].as_str().unwrap_or_default())
                        .expect("key");
                    let key = String::from_utf8_lossy(&key);
                    let release = key.strip_prefix(&prefix).unwrap_or(&key);
                    let rv = number(&kv["mod_revision"]);
                    let kind = if event["type"] == "DELETE" {
                        "DELETED"
                    } else if number(&kv["create_revision"]) == rv {
                        "ADDED"
                    } else {
                        "MODIFIED"
                    };
                    sink.lock().unwrap().push(Change {
                        kind,
                        name: release
                            .strip_prefix(RELEASE_PREFIX)
                            .unwrap_or(release)
                            .to_owned(),
                        rv,
                    });
                }
            }
        });
        EtcdWatch { changes, task }
    }

    /// What etcd recorded so far.
    pub fn changes(&self) -> Vec<Change> {
        self.changes.lock().unwrap().clone()
    }
}

/// What a watcher asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr {
    /// `application/json`.
    Json,
    /// Table rows.
    Table,
    /// `PartialObjectMetadata`.
    Metadata,
}

impl Repr {
    fn accept(self) -> &'static str {
        match self {
            Repr::Json => "application/json",
            Repr::Table => "application/json;as=Table;v=v1;g=meta.k8s.io",
            Repr::Metadata => "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
        }
    }
}

/// What one watcher saw.
#[derive(Debug, Default, Clone)]
pub struct WatchLog {
    /// Every object event, in order.
    pub events: Vec<Change>,
    /// The objects it holds (name → resourceVersion), as an informer's store.
    pub store: BTreeMap<String, u64>,
    /// 410s that made it re-list.
    pub relists: u32,
    /// Streams that ended and were resumed.
    pub resumed: u32,
    /// Bookmarks received.
    pub bookmarks: u32,
    /// Protocol errors (an event it could not read), with the line.
    pub errors: Vec<String>,
}

/// A client-go-like watcher of one namespace's apps: resumes from the last
/// resourceVersion when its stream ends, re-lists on 410.
pub struct Watcher {
    log: Arc<Mutex<WatchLog>>,
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Watcher {
    /// Starts watching `namespace` from `rv`.
    pub fn start(
        client: kube::Client,
        namespace: &str,
        rv: u64,
        repr: Repr,
        bookmarks: bool,
    ) -> Watcher {
        let log = Arc::new(Mutex::new(WatchLog::default()));
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let path = format!("/apis/apps.cozystack.io/v1alpha1/namespaces/{namespace}/postgreses");
        let task = tokio::spawn(watch_loop(
            client,
            path,
            rv,
            repr,
            bookmarks,
            log.clone(),
            stopped,
        ));
        Watcher { log, stop, task }
    }

    /// What it saw so far.
    pub fn log(&self) -> WatchLog {
        self.log.lock().unwrap().clone()
    }

    /// Stops it and returns what it saw.
    pub async fn finish(self) -> WatchLog {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        self.log.lock().unwrap().clone()
    }
}

async fn watch_loop(
    client: kube::Client,
    path: String,
    mut rv: u64,
    repr: Repr,
    bookmarks: bool,
    log: Arc<Mutex<WatchLog>>,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        if *stopped.borrow() {
            return;
        }
        let request = http::Request::get(format!(
            "{path}?watch=true&resourceVersion={rv}&allowWatchBookmarks={bookmarks}"
        ))
        .header(http::header::ACCEPT, repr.accept())
        .body(Vec::new())
        .expect("request");
        let stream = tokio::select! {
            r = client.request_stream(request) => r,
            _ = stopped.changed() => return,
        };
        let stream = match stream {
            Ok(stream) => stream,
            Err(kube::Error::Api(status)) if status.code == 410 => {
                rv = relist(&client, &path, &log).await;
                continue;
            }
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let mut lines = stream.lines();
        loop {
            let line = tokio::select! {
                line = lines.next() => line,
                _ = stopped.changed() => return,
            };
            let Some(Ok(line)) = line else {
                log.lock().unwrap().resumed += 1;
                break;
            };
            let event: Value = match serde_json::from_str(&line) {
                Ok(event) => event,
                Err(_) => {
                    log.lock().unwrap().errors.push(line);
                    break;
                }
            };
            let object = &event["object"];
            match event["type"].as_str().unwrap_or_default() {
                "BOOKMARK" => {
                    rv = number(&object["metadata"]["resourceVersion"]);
                    log.lock().unwrap().bookmarks += 1;
                }
                "ERROR" if object["code"] == 410 => {
                    rv = relist(&client, &path, &log).await;
                    break;
                }
                kind @ ("ADDED" | "MODIFIED" | "DELETED") => {
                    let metadata = match repr {
                        Repr::Table => &object["rows"][0]["object"]["metadata"],
                        Repr::Json | Repr::Metadata => &object["metadata"],
                    };
                    let name = metadata["name"].as_str().unwrap_or_default().to_owned();
                    let version = number(&metadata["resourceVersion"]);
                    let mut log = log.lock().unwrap();
                    if name.is_empty() || version == 0 {
                        log.errors.push(line.clone());
                        continue;
                    }
                    rv = version;
                    if kind == "DELETED" {
                        log.store.remove(&name);
                    } else {
                        log.store.insert(name.clone(), version);
                    }
                    log.events.push(Change {
                        kind: match kind {
                            "ADDED" => "ADDED",
                            "MODIFIED" => "MODIFIED",
                            _ => "DELETED",
                        },
                        name,
                        rv: version,
                    });
                }
                _ => {
                    log.lock().unwrap().errors.push(line);
                    break;
                }
            }
        }
    }
}

/// Lists the apps (as client-go's reflector after a 410), replaces the
/// watcher's store and returns the list's resourceVersion.
async fn relist(client: &kube::Client, path: &str, log: &Mutex<WatchLog>) -> u64 {
    loop {
        let request = http::Request::get(path).body(Vec::new()).expect("request");
        if let Ok(list) = client.request::<Value>(request).await {
            let mut log = log.lock().unwrap();
            log.relists += 1;
            log.store = list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|item| {
                    (
                        item["metadata"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        number(&item["metadata"]["resourceVersion"]),
                    )
                })
                .collect();
            return number(&list["metadata"]["resourceVersion"]);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The objects `changes` leave (name → resourceVersion).
pub fn final_state(changes: &[Change]) -> BTreeMap<String, u64> {
    let mut state = BTreeMap::new();
    for change in changes {
        if change.kind == "DELETED" {
            state.remove(&change.name);
        } else {
            state.insert(change.name.clone(), change.rv);
        }
    }
    state
}

/// Waits (up to `limit`) until `done` holds, polling.
pub async fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    done()
}
