//! The API contract at the HTTP level, against an in-process server over the
//! embedded store (no cluster needed): discovery ETags, health, pagination,
//! watch semantics, negotiation, patches and server-side apply conflicts,
//! preconditions, deletecollection, dryRun, generateName and finalizers.

use std::time::Duration;

use futures::StreamExt;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use kube::client::Body;
use serde_json::{Value, json};

use kubectl_cozy::apiserver::handlers::ApiState;
use kubectl_cozy::apiserver::server::{self, RunningServer, ServerConfig};
use kubectl_cozy::kinds::Registry;
use kubectl_cozy::register::credentials as standalone;
use kubectl_cozy::storage::Backend;
use kubectl_cozy::storage::app_store::AppStore;
use kubectl_cozy::storage::cache::WatchCache;
use kubectl_cozy::storage::embedded_store::EmbeddedStore;

const PG: &str = "/apis/apps.cozystack.io/v1alpha1/namespaces/default/postgreses";

struct Local {
    client: kube::Client,
    addr: std::net::SocketAddr,
    ca_pem: String,
    client_cert_pem: String,
    client_key_pem: String,
    _running: RunningServer,
    _dir: tempfile::TempDir,
}

async fn local() -> Local {
    local_with(server::ConnectionLimits::default()).await
}

/// [`local`] holding its connections within `limits`.
async fn local_with(limits: server::ConnectionLimits) -> Local {
    let dir = tempfile::tempdir().unwrap();
    let kinds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
    let registry = Registry::from_path(&kinds).unwrap();
    let store = EmbeddedStore::open(&dir.path().join("db.sqlite")).unwrap();
    let backend = Backend::Embedded(store);
    let cache = WatchCache::start(backend.clone());
    let listen = "127.0.0.1:0".parse().unwrap();
    let credentials = standalone::credentials(&dir.path().join("state"), listen).unwrap();
    let running = server::start(ServerConfig {
        listen,
        cert_pem: credentials.serving.cert_pem.clone(),
        key_pem: credentials.serving.key_pem.clone(),
        auth: std::sync::Arc::new(
            kubectl_cozy::auth::Auth::standalone(&credentials.ca_pem).unwrap(),
        ),
        state: ApiState {
            registry,
            apps: AppStore::new(cache.clone(), backend),
            reachability_probe: None,
        },
        connections: limits,
    })
    .await
    .unwrap();
    cache.wait_ready().await;
    let kubeconfig = dir.path().join("kubeconfig");
    standalone::write_kubeconfig(
        &kubeconfig,
        &format!("https://{}", running.local_addr),
        &credentials,
    )
    .unwrap();
    let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
    let mut config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    // The server's answers as it gives them: kube-rs would retry a 503 or
    // 504 (up to 15 times) before the test saw it.
    config.default_retry = false;
    Local {
        client: kube::Client::try_from(config).unwrap(),
        addr: running.local_addr,
        ca_pem: credentials.ca_pem.clone(),
        client_cert_pem: credentials.client.cert_pem.clone(),
        client_key_pem: credentials.client.key_pem.clone(),
        _running: running,
        _dir: dir,
    }
}

struct Reply {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Value,
}

impl Local {
    /// Opens a watch stream at `path` (a `?watch=true` URL).
    async fn watch(&self, path: &str) -> http::Response<Body> {
        self.client
            .send(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap()
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Reply {
        let bytes = body
            .map(|b| serde_json::to_vec(&b).unwrap())
            .unwrap_or_default();
        self.raw(method, path, headers, bytes).await
    }

    async fn raw(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Reply {
        let mut req = Request::builder().method(method).uri(path);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            req = req.header("content-type", "application/json");
        }
        let resp = self
            .client
            .send(req.body(Body::from(body)).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()));
        Reply {
            status,
            headers,
            body,
        }
    }

    async fn create(&self, name: &str, spec: Value, labels: Value) -> Value {
        let r = self
            .call(
                Method::POST,
                PG,
                &[],
                Some(
                    json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
                "metadata": {"name": name, "labels": labels}, "spec": spec}),
                ),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.body
    }

    /// deletecollection of the Postgres apps labelled `key=value`.
    async fn delete_collection(&self, key: &str, value: &str) -> Reply {
        self.call(
            Method::DELETE,
            &format!("{PG}?labelSelector={key}%3D{value}"),
            &[],
            None,
        )
        .await
    }
}

#[tokio::test]
async fn discovery_etag_and_health() {
    let s = local().await;
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    // The groups, and the core group (a standalone server's namespaces) as
    // kube-apiserver serves `/api` (that document is held to kube-apiserver's
    // in tests/it/server.rs); without the media type, the legacy documents.
    for (path, legacy) in [("/apis", "APIGroupList"), ("/api", "APIVersions")] {
        let r = s.call(Method::GET, path, &[("accept", accept)], None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        assert_eq!(r.body["kind"], "APIGroupDiscoveryList", "{path}");
        assert_eq!(
            r.headers["content-type"],
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            "{path}"
        );
        let etag = r.headers["etag"].to_str().unwrap().to_owned();
        let r = s
            .call(
                Method::GET,
                path,
                &[("accept", accept), ("if-none-match", &etag)],
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::NOT_MODIFIED, "{path}");
        let r = s.call(Method::GET, path, &[], None).await;
        assert_eq!(r.body["kind"], legacy, "{path}");
    }

    let r = s
        .call(Method::GET, "/apis/apps.cozystack.io/v1alpha1", &[], None)
        .await;
    let names: Vec<&str> = r.body["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"postgreses") && names.contains(&"postgreses/status"),
        "{names:?}"
    );
    let r = s.call(Method::GET, "/readyz?verbose", &[], None).await;
    let text = r.body.as_str().unwrap().to_owned();
    assert!(
        text.contains("[+]watch-cache-sync ok") && text.contains("readyz check passed"),
        "{text}"
    );
    let r = s.call(Method::GET, "/openapi/v3", &[], None).await;
    let url = r.body["paths"]["apis/apps.cozystack.io/v1alpha1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = s.call(Method::GET, &url, &[], None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.headers
            .get("cache-control")
            .is_some_and(|v| v.to_str().unwrap().contains("immutable"))
    );
}

/// `/openapi/v2` as kube-openapi's handler answers it: JSON by default,
/// gnostic protobuf for either protobuf media type (answered with the
/// non-deprecated one), each with its own ETag and 304 on it; and the core
/// v1 document a standalone server adds to the v3 root.
#[tokio::test]
async fn openapi_v2_is_negotiated_and_the_core_group_published() {
    let s = local().await;
    const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    let json = s.call(Method::GET, "/openapi/v2", &[], None).await;
    assert_eq!(json.status, StatusCode::OK);
    assert_eq!(json.headers["content-type"], "application/json");
    assert_eq!(json.body["swagger"], "2.0");
    assert!(
        json.body["definitions"]
            .get("io.k8s.api.core.v1.Namespace")
            .is_some()
    );
    let json_etag = json.headers["etag"].to_str().unwrap().to_owned();
    for accept in [
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        PROTOBUF,
        "application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
    ] {
        let r = s
            .raw(
                Method::GET,
                "/openapi/v2",
                &[("accept", accept)],
                Vec::new(),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{accept}");
        assert_eq!(r.headers["content-type"], PROTOBUF, "{accept}");
        assert_eq!(r.headers["vary"], "Accept");
        // Field 1 (swagger), a string: "2.0".
        let body = r.body.as_str().unwrap_or_default();
        assert!(body.starts_with("\n\u{3}2.0"), "{accept}: {body:.20}");
        let etag = r.headers["etag"].to_str().unwrap().to_owned();
        assert_ne!(etag, json_etag);
        let again = s
            .raw(
                Method::GET,
                "/openapi/v2",
                &[("accept", accept), ("if-none-match", &etag)],
                Vec::new(),
            )
            .await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{accept}");
    }
    // The aggregator's request, and a q that prefers JSON.
    for accept in [
        "application/json, */*",
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.5, application/json",
    ] {
        let r = s
            .call(Method::GET, "/openapi/v2", &[("accept", accept)], None)
            .await;
        assert_eq!(r.headers["content-type"], "application/json", "{accept}");
        assert_eq!(r.headers["etag"].to_str().unwrap(), json_etag);
    }

    let root = s.call(Method::GET, "/openapi/v3", &[], None).await;
    let url = root.body["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(url.starts_with("/openapi/v3/api/v1?hash="), "{url}");
    let core = s.call(Method::GET, &url, &[], None).await;
    assert_eq!(core.status, StatusCode::OK);
    assert!(
        core.body["components"]["schemas"]
            .get("io.k8s.api.core.v1.NamespaceList")
            .is_some()
    );
    assert!(core.body["paths"].get("/api/v1/namespaces").is_some());
    let missing = s.call(Method::GET, "/openapi/v3/api/v2", &[], None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pagination_is_consistent_and_complete() {
    let s = local().await;
    for i in 0..5 {
        s.create(&format!("db{i}"), json!({}), json!({})).await;
    }
    let mut names = Vec::new();
    let mut path = format!("{PG}?limit=2");
    let mut pages = 0;
    loop {
        let r = s.call(Method::GET, &path, &[], None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        pages += 1;
        names.extend(
            r.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned()),
        );
        if pages == 1 {
            // A write between pages does not leak into the paginated snapshot.
            s.create("db9", json!({}), json!({})).await;
        }
        match r.body["metadata"]["continue"].as_str() {
            Some(token) if !token.is_empty() => path = format!("{PG}?limit=2&continue={token}"),
            _ => break,
        }
    }
    assert_eq!(names, ["db0", "db1", "db2", "db3", "db4"]);
    assert_eq!(pages, 3);
    let r = s
        .call(Method::GET, &format!("{PG}?continue=garbage"), &[], None)
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

/// A get at a resourceVersion answers a state not older than it: its own
/// version at once, a version the cache has not reached only once it has —
/// after the wait a list gets, a 504 saying so, never an older state.
#[tokio::test]
async fn a_get_at_a_resource_version_is_never_older_than_it() {
    let s = local().await;
    let created = s.create("db1", json!({}), json!({})).await;
    let rv: u64 = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let r = s
        .call(
            Method::GET,
            &format!("{PG}/db1?resourceVersion={rv}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let future = rv + 1_000_000;
    for path in [
        format!("{PG}/db1?resourceVersion={future}"),
        format!("{PG}?resourceVersion={future}"),
    ] {
        let r = s.call(Method::GET, &path, &[], None).await;
        assert_eq!(r.status, StatusCode::GATEWAY_TIMEOUT, "{path}: {}", r.body);
        assert_eq!(r.body["reason"], "Timeout", "{}", r.body);
        assert!(
            r.body["message"].as_str().unwrap().starts_with(&format!(
                "Timeout: Too large resource version: {future}, current: "
            )),
            "{}",
            r.body
        );
    }
}

#[tokio::test]
async fn representations_for_kubectl_and_controllers() {
    let s = local().await;
    s.create("db1", json!({}), json!({})).await;
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let r = s.call(Method::GET, PG, &[("accept", table)], None).await;
    assert_eq!(r.body["kind"], "Table");
    let columns: Vec<&str> = r.body["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["Name", "Ready", "Version", "Status", "Age"]);
    assert_eq!(r.body["rows"][0]["cells"][0], "db1");
    assert_eq!(r.body["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    let metadata = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let r = s.call(Method::GET, PG, &[("accept", metadata)], None).await;
    assert_eq!(r.body["kind"], "PartialObjectMetadataList");
    assert!(r.body["items"][0].get("spec").is_none());
    // YAML is answered, as kube-apiserver answers it (held to it by
    // differential::yaml_answers); protobuf alone is not.
    let r = s
        .call(Method::GET, PG, &[("accept", "application/yaml")], None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = s
        .call(
            Method::GET,
            PG,
            &[("accept", "application/vnd.kubernetes.protobuf")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_ACCEPTABLE);
    let r = s
        .call(
            Method::GET,
            &format!("{PG}?fieldSelector=spec.replicas%3D2"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = s
        .call(
            Method::GET,
            &format!("{PG}?fieldSelector=metadata.name%3Ddb1"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.body["items"].as_array().unwrap().len(), 1);
}

async fn read_events(resp: http::Response<Body>, count: usize) -> Vec<Value> {
    let mut body = resp.into_body().into_data_stream();
    let mut buf = Vec::new();
    let mut events = Vec::new();
    while events.len() < count {
        let chunk = tokio::time::timeout(Duration::from_secs(10), body.next())
            .await
            .expect("watch event")
            .expect("stream")
            .unwrap();
        buf.extend_from_slice(&chunk);
        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            events.push(serde_json::from_slice(&line).unwrap());
        }
    }
    events
}

#[tokio::test]
async fn watch_semantics() {
    let s = local().await;
    let created = s.create("db1", json!({}), json!({})).await;
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();

    // RV unset: synthetic ADDED first, then changes.
    let resp = s.watch(&format!("{PG}?watch=true")).await;
    s.call(
        Method::PATCH,
        &format!("{PG}/db1"),
        &[("content-type", "application/merge-patch+json")],
        Some(json!({"spec": {"replicas": 3}})),
    )
    .await;
    let events = read_events(resp, 2).await;
    assert_eq!(
        (events[0]["type"].as_str(), events[1]["type"].as_str()),
        (Some("ADDED"), Some("MODIFIED"))
    );

    // RV=X: only what happened after X.
    let resp = s
        .watch(&format!("{PG}?watch=true&resourceVersion={rv}"))
        .await;
    let events = read_events(resp, 1).await;
    assert_eq!(events[0]["type"], "MODIFIED");
    assert_eq!(events[0]["object"]["spec"]["replicas"], 3);

    // sendInitialEvents: the state, then the initial-events-end bookmark.
    let path = format!(
        "{PG}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
    );
    let resp = s.watch(&path).await;
    let events = read_events(resp, 2).await;
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[1]["type"], "BOOKMARK");
    assert_eq!(
        events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );

    let r = s
        .call(
            Method::GET,
            &format!("{PG}?watch=true&sendInitialEvents=true"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status.as_u16(), 422, "{}", r.body);

    // Leaving a label selector is a DELETED event.
    let resp = s
        .watch(&format!("{PG}?watch=true&labelSelector=tier%3Dgold"))
        .await;
    s.call(
        Method::PATCH,
        &format!("{PG}/db1"),
        &[("content-type", "application/merge-patch+json")],
        Some(json!({"metadata": {"labels": {"tier": "gold"}}})),
    )
    .await;
    s.call(
        Method::PATCH,
        &format!("{PG}/db1"),
        &[("content-type", "application/merge-patch+json")],
        Some(json!({"metadata": {"labels": {"tier": "silver"}}})),
    )
    .await;
    let events = read_events(resp, 2).await;
    assert_eq!(
        (events[0]["type"].as_str(), events[1]["type"].as_str()),
        (Some("ADDED"), Some("DELETED"))
    );
}

#[tokio::test]
async fn writes_preconditions_patches_and_apply() {
    let s = local().await;
    let created = s
        .create("db1", json!({"replicas": 2}), json!({"team": "a"}))
        .await;
    let stale = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(created["metadata"]["managedFields"].is_array(), "{created}");

    // JSON patch, then an update with the stale resourceVersion: 409.
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/db1"),
            &[("content-type", "application/json-patch+json")],
            Some(json!([{"op": "replace", "path": "/spec/replicas", "value": 4}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let mut update = created.clone();
    update["spec"]["replicas"] = json!(5);
    update["metadata"]["resourceVersion"] = json!(stale);
    let r = s
        .call(Method::PUT, &format!("{PG}/db1"), &[], Some(update))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.body["reason"], "Conflict");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("the object has been modified")
    );
    // A resourceVersion in a merge patch is a precondition too.
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/db1"),
            &[("content-type", "application/merge-patch+json")],
            Some(json!({"metadata": {"resourceVersion": stale}, "spec": {"replicas": 6}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    // Strategic merge patch is not supported: 415.
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/db1"),
            &[("content-type", "application/strategic-merge-patch+json")],
            Some(json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // A schema violation: 422 with a cause per field, nothing stored.
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/db1"),
            &[("content-type", "application/merge-patch+json")],
            Some(json!({"spec": {"replicas": 99, "version": "9"}})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 422);
    let fields: Vec<&str> = r.body["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&"spec.replicas") && fields.contains(&"spec.version"),
        "{fields:?}"
    );
    let r = s.call(Method::GET, &format!("{PG}/db1"), &[], None).await;
    assert_eq!(r.body["spec"]["replicas"], 4);

    // Server-side apply: a second manager conflicts unless forced.
    let apply = |replicas: u64| json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": {"name": "db2"}, "spec": {"replicas": replicas}});
    let ct = [("content-type", "application/apply-patch+yaml")];
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/db2?fieldManager=alice"),
            &ct,
            Some(apply(3)),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/db2?fieldManager=bob"),
            &ct,
            Some(apply(4)),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert_eq!(
        r.body["details"]["causes"][0]["reason"],
        "FieldManagerConflict"
    );
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/db2?fieldManager=bob&force=true"),
            &ct,
            Some(apply(4)),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = s
        .call(Method::PATCH, &format!("{PG}/db2"), &ct, Some(apply(5)))
        .await;
    assert_eq!(r.status.as_u16(), 422, "fieldManager is required for apply");

    // dryRun stores nothing; generateName makes a name.
    let r = s
        .call(
            Method::POST,
            &format!("{PG}?dryRun=All"),
            &[],
            Some(json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": {"name": "dry"}, "spec": {}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(
        s.call(Method::GET, &format!("{PG}/dry"), &[], None)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let r = s
        .call(
            Method::POST,
            PG,
            &[],
            Some(json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": {"generateName": "pg-"}, "spec": {}})),
        )
        .await;
    let name = r.body["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("pg-") && name.len() == 8, "{name}");
    // As kube-apiserver, a dry-run create has no resourceVersion.
    let r = s
        .call(
            Method::POST,
            &format!("{PG}?dryRun=All"),
            &[],
            Some(json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": {"name": "dry"}, "spec": {}})),
        )
        .await;
    assert!(
        r.body["metadata"].get("resourceVersion").is_none(),
        "{}",
        r.body
    );
    // A generateName too long for the kind's names (44 characters for
    // Postgres: Helm's 53 less the release prefix `postgres-`) is cut so the
    // generated name fits.
    let base = format!("{}-", "g".repeat(45));
    let r = s
        .call(
            Method::POST,
            PG,
            &[],
            Some(json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": {"generateName": base}, "spec": {}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let name = r.body["metadata"]["name"].as_str().unwrap();
    assert_eq!(name.len(), 44, "{name}");
    assert!(name.starts_with(&base[..39]), "{name}");
    let r = s
        .call(
            Method::POST,
            PG,
            &[],
            Some(json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": {"name": "db1"}, "spec": {}})),
        )
        .await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (StatusCode::CONFLICT, Some("AlreadyExists"))
    );
    let r = s
        .raw(
            Method::POST,
            PG,
            &[("content-type", "text/plain")],
            b"hello".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

/// A deletecollection right after creates deletes them, though the cache's
/// watch may not have delivered them yet (the creates' objects wait in the
/// cache as writes taken ahead of it): it lists as a consistent list does.
/// Another server's writes keep the caches' shared thread busy meanwhile,
/// so that the watch lags as it does under load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletecollection_right_after_creates_deletes_them() {
    let s = local().await;
    let busy = local().await;
    let load = tokio::spawn(async move {
        for i in 0.. {
            busy.create(&format!("load{i}"), json!({}), json!({})).await;
        }
    });
    for round in 0..20 {
        for i in 0..3 {
            s.create(
                &format!("batch{round}-{i}"),
                json!({}),
                json!({"batch": round.to_string()}),
            )
            .await;
        }
        let r = s.delete_collection("batch", &round.to_string()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(
            r.body["items"].as_array().unwrap().len(),
            3,
            "round {round}: {}",
            r.body
        );
    }
    load.abort();
    let r = s.call(Method::GET, PG, &[], None).await;
    assert_eq!(r.body["items"].as_array().unwrap().len(), 0, "{}", r.body);
}

#[tokio::test]
async fn deletion_finalizers_and_collections() {
    let s = local().await;
    s.create("keep", json!({}), json!({"tier": "gold"})).await;
    s.create("drop1", json!({}), json!({"tier": "bronze"}))
        .await;
    s.create("drop2", json!({}), json!({"tier": "bronze"}))
        .await;
    let r = s.delete_collection("tier", "bronze").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["items"].as_array().unwrap().len(), 2);
    let r = s.call(Method::GET, PG, &[], None).await;
    assert_eq!(r.body["items"].as_array().unwrap().len(), 1);

    // A finalizer holds the object; removing it completes the deletion.
    s.call(
        Method::PATCH,
        &format!("{PG}/keep"),
        &[("content-type", "application/merge-patch+json")],
        Some(json!({"metadata": {"finalizers": ["example.com/hold"]}})),
    )
    .await;
    let r = s.call(Method::DELETE, &format!("{PG}/keep"), &[], Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "wrong"}}))).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let r = s
        .call(Method::DELETE, &format!("{PG}/keep"), &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.body["metadata"]["deletionTimestamp"].is_string(),
        "{}",
        r.body
    );
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/keep"),
            &[("content-type", "application/merge-patch+json")],
            Some(json!({"metadata": {"finalizers": null}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        s.call(Method::GET, &format!("{PG}/keep"), &[], None)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn an_oversized_body_closes_the_connection_and_the_next_request_works() {
    let s = local().await;
    let big = vec![b' '; 4 * 1024 * 1024];
    let r = s.raw(Method::POST, PG, &[], big).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert_eq!(r.body["reason"], "RequestEntityTooLarge", "{}", r.body);
    assert_eq!(
        r.headers.get("connection").map(|v| v.to_str().unwrap()),
        Some("close"),
        "the unread body leaves the connection unusable; say so"
    );
    let r = s.call(Method::GET, PG, &[], None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

/// A create whose body carries a resourceVersion (`kubectl create -f` of a
/// saved `get -o yaml`) is accepted, the resourceVersion ignored, as
/// kube-apiserver accepts it for a custom resource (a HelmRelease on the test
/// plane: checked, since older kube-apiservers refused it).
#[tokio::test]
async fn a_create_with_a_resource_version_is_accepted_like_kube_apiserver() {
    let s = local().await;
    let body = json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
                      "metadata": {"name": "rv1", "resourceVersion": "123"}, "spec": {}});
    let ours = s.call(Method::POST, PG, &[], Some(body)).await;
    assert_eq!(ours.status, StatusCode::CREATED, "{}", ours.body);
    assert_ne!(
        ours.body["metadata"]["resourceVersion"], "123",
        "{}",
        ours.body
    );
    let plane = crate::support::plane::plane();
    let ns = plane.namespace("rv-create").await;
    let theirs = plane.kubectl_stdin(
        &["create", "-o", "json", "-f", "-"],
        &format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: rv1, namespace: {ns}, resourceVersion: \"123\"}}\n\
             spec: {{interval: 5m, chart: {{spec: {{chart: c, sourceRef: {{kind: HelmRepository, name: r}}}}}}}}\n"
        ),
    );
    assert!(
        theirs.status.success(),
        "{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    let _ = plane
        .kubectl()
        .args(["delete", "namespace", &ns, "--wait=false"])
        .output();
}

/// An app name too long for its HelmRelease is refused with the reason: the
/// release name it makes and Helm's limit.
#[tokio::test]
async fn a_name_too_long_for_its_release_says_why() {
    let s = local().await;
    let name = "a".repeat(60);
    let body = json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
                      "metadata": {"name": name}, "spec": {}});
    let r = s.call(Method::POST, PG, &[], Some(body)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("metadata.name: Invalid value")
            && message.contains("(it names the HelmRelease \"postgres-aaa")
            && message.contains("Helm's release names are at most 53 characters"),
        "{message}"
    );
}

#[tokio::test]
async fn invalid_object_metadata_is_refused_like_kube_apiserver() {
    let s = local().await;
    let with_meta = |meta: Value| {
        let mut m = json!({"name": "meta"});
        m.as_object_mut()
            .unwrap()
            .extend(meta.as_object().unwrap().clone());
        json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": m, "spec": {}})
    };
    let cases: Vec<(Value, u16, &str)> = vec![
        (
            json!({"labels": {"k": "v".repeat(64)}}),
            422,
            "metadata.labels: Invalid value",
        ),
        (
            json!({"labels": {"k": "a\u{0}b"}}),
            422,
            "metadata.labels: Invalid value",
        ),
        (
            json!({"labels": {"k": "x".repeat(1 << 20)}}),
            422,
            "must be no more than 63 bytes",
        ),
        (
            json!({"labels": {"bad key": "v"}}),
            422,
            "metadata.labels: Invalid value: \"bad key\"",
        ),
        (
            json!({"annotations": {"a": "x".repeat(300 * 1024)}}),
            422,
            "metadata.annotations: Too long: must have at most 262144 bytes",
        ),
        (
            json!({"finalizers": "zz"}),
            400,
            "cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string",
        ),
        (
            json!({"finalizers": ["not valid"]}),
            422,
            "metadata.finalizers: Invalid value",
        ),
        (
            json!({"ownerReferences": [{"apiVersion": "", "kind": "X"}]}),
            422,
            "metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty",
        ),
        (
            json!({"ownerReferences": "garbage"}),
            400,
            "ObjectMeta.ownerReferences of type []v1.OwnerReference",
        ),
        (
            json!({"name": "", "generateName": "Bad_"}),
            422,
            "metadata.generateName: Invalid value: \"Bad_\"",
        ),
    ];
    for (meta, code, want) in cases {
        let r = s
            .call(Method::POST, PG, &[], Some(with_meta(meta.clone())))
            .await;
        let shown: String = meta.to_string().chars().take(80).collect();
        assert_eq!(r.status.as_u16(), code, "{shown}: {}", r.body);
        let message = r.body["message"].as_str().unwrap_or_default();
        assert!(message.contains(want), "{shown}: {message}");
    }
    // A namespace that is no RFC 1123 label, too long or not.
    for ns in ["Bad_NS", &"a".repeat(300)] {
        let path = format!("/apis/apps.cozystack.io/v1alpha1/namespaces/{ns}/postgreses");
        let r = s
            .call(Method::POST, &path, &[], Some(with_meta(json!({}))))
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
        assert!(
            r.body["message"]
                .as_str()
                .unwrap()
                .contains("metadata.namespace: Invalid value"),
            "{}",
            r.body
        );
    }
    let r = s.call(Method::GET, PG, &[], None).await;
    assert_eq!(
        r.body["items"],
        json!([]),
        "a refused write stored something"
    );
}

#[tokio::test]
async fn patching_metadata_uid_is_refused_as_immutable() {
    let s = local().await;
    let created = s.create("uid1", json!({}), json!({})).await;
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/uid1"),
            &[("content-type", "application/merge-patch+json")],
            Some(json!({"metadata": {"uid": "00000000-0000-0000-0000-000000000000"}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("metadata.uid: Invalid value: \"00000000-0000-0000-0000-000000000000\": field is immutable"),
        "{}",
        r.body
    );
    // Leaving the uid out of an update keeps it.
    let mut update = created.clone();
    update["metadata"].as_object_mut().unwrap().remove("uid");
    update["spec"]["replicas"] = json!(2);
    let r = s
        .call(Method::PUT, &format!("{PG}/uid1"), &[], Some(update))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["metadata"]["uid"], created["metadata"]["uid"]);
}

#[tokio::test]
async fn unsupported_methods_are_405_like_kube_apiserver() {
    let s = local().await;
    s.create("m1", json!({}), json!({})).await;
    let item = format!("{PG}/m1");
    for (method, path) in [
        (Method::PUT, PG),
        (Method::PATCH, PG),
        (Method::OPTIONS, PG),
        (Method::TRACE, item.as_str()),
    ] {
        let r = s.call(method.clone(), path, &[], Some(json!({}))).await;
        assert_eq!(
            r.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}: {}",
            r.body
        );
        assert_eq!(r.body["reason"], "MethodNotAllowed", "{}", r.body);
    }
    // An unknown resource stays 404 whatever the method.
    let r = s
        .call(
            Method::PUT,
            "/apis/apps.cozystack.io/v1alpha1/namespaces/default/nothings",
            &[],
            Some(json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
}

#[tokio::test]
async fn duplicate_json_fields_are_refused_under_strict_and_warned_under_warn() {
    let s = local().await;
    let body = |name: &str| {
        format!(
            r#"{{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"Postgres","metadata":{{"name":"{name}"}},"spec":{{"replicas":1,"replicas":2}}}}"#
        )
        .into_bytes()
    };
    let r = s
        .raw(
            Method::POST,
            &format!("{PG}?fieldValidation=Strict"),
            &[],
            body("dup1"),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Postgres in version \"v1alpha1\" cannot be handled as a Postgres: \
         strict decoding error: duplicate field \"spec.replicas\"",
        "{}",
        r.body
    );
    let r = s.raw(Method::POST, PG, &[], body("dup2")).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["spec"]["replicas"], 2, "the last value wins");
    let warnings: Vec<&str> = r
        .headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("duplicate field \\\"spec.replicas\\\"")),
        "{warnings:?}"
    );
    let r = s
        .raw(
            Method::POST,
            &format!("{PG}?fieldValidation=Ignore"),
            &[],
            body("dup3"),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert!(r.headers.get("warning").is_none());
}

/// Unknown fields outside `spec` as kube-apiserver treats them for a custom
/// resource (checked against it in `differential/writes.rs`): refused under
/// Strict, warned about under Warn and by default, dropped under Ignore,
/// and never owned; a write that changes nothing keeps the resourceVersion.
#[tokio::test]
async fn unknown_fields_outside_spec_are_refused_warned_or_dropped_and_never_owned() {
    let s = local().await;
    let body = |name: &str| {
        json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
               "metadata": {"name": name, "lables": {"team": "a"}},
               "sepc": {"replicas": 5}, "spec": {"replicas": 3}, "status": {"foo": 1}})
    };
    let r = s
        .call(
            Method::POST,
            &format!("{PG}?fieldValidation=Strict"),
            &[],
            Some(body("strict")),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Postgres in version \"v1alpha1\" cannot be handled as a Postgres: strict decoding error: \
         unknown field \"metadata.lables\", unknown field \"sepc\", unknown field \"status.foo\""
    );
    let warnings = |r: &Reply| -> Vec<String> {
        r.headers
            .get_all("warning")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect()
    };
    for (name, query, warned) in [
        ("warn", "?fieldValidation=Warn", true),
        ("default", "", true),
        ("ignore", "?fieldValidation=Ignore", false),
    ] {
        let r = s
            .call(Method::POST, &format!("{PG}{query}"), &[], Some(body(name)))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        let expected: Vec<String> = if warned {
            ["metadata.lables", "sepc", "status.foo"]
                .iter()
                .map(|f| format!("299 - \"unknown field \\\"{f}\\\"\""))
                .collect()
        } else {
            Vec::new()
        };
        assert_eq!(warnings(&r), expected, "{name}");
        assert!(r.body.get("sepc").is_none(), "{}", r.body);
        assert!(r.body["metadata"].get("lables").is_none(), "{}", r.body);
        // The create owns what it set and the defaults it got, nothing dropped.
        let fields = &r.body["metadata"]["managedFields"][0]["fieldsV1"];
        assert_eq!(
            fields,
            // kube-apiserver's, for a CRD with the same schema.
            &json!({"f:spec": {".": {}, "f:databases": {}, "f:external": {}, "f:replicas": {},
                               "f:resources": {}, "f:resourcesPreset": {}, "f:size": {},
                               "f:synchronousCommit": {}, "f:users": {}, "f:version": {}}}),
            "{name}"
        );
    }
    // A merge patch that only adds a pruned field changes nothing.
    let before = s.call(Method::GET, &format!("{PG}/warn"), &[], None).await;
    let r = s
        .call(
            Method::PATCH,
            &format!("{PG}/warn?fieldManager=kubectl-patch"),
            &[("content-type", "application/merge-patch+json")],
            Some(json!({"spec": {"unknown": 1}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body, before.body, "a write that changes nothing");
}

/// Anyone who reaches the port can open connections before authenticating:
/// those of clients not yet known are held up to a limit (beyond it a new
/// one is closed after the handshake); a client with a trusted certificate
/// (the aggregator, an x509 user) is served whatever their number, and a
/// connection whose request authenticated no longer counts.
#[tokio::test]
async fn connections_of_unknown_clients_are_held_up_to_a_limit() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let local = local_with(server::ConnectionLimits {
        unproven: 2,
        unproven_lifetime: Duration::from_secs(2),
        ..Default::default()
    })
    .await;
    let connector = {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(local.ca_pem.as_bytes()) {
            roots.add(cert.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
    };
    let open = || async {
        let tcp = tokio::net::TcpStream::connect(local.addr).await.unwrap();
        let name = rustls::pki_types::ServerName::IpAddress(local.addr.ip().into());
        connector.connect(name, tcp).await.unwrap()
    };
    // `/readyz` on a connection: its status line, or "" when it was closed.
    let readyz = |mut tls: tokio_rustls::client::TlsStream<tokio::net::TcpStream>| async move {
        let _ = tls
            .write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await;
        let mut raw = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), tls.read_to_end(&mut raw)).await;
        String::from_utf8_lossy(&raw)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    use rustls::pki_types::pem::PemObject as _;
    let held = [open().await, open().await];
    // (The server counts a connection once it reads the client's Finished.)
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(readyz(open().await).await, "", "a third is closed");
    // With a certificate: served.
    local
        .client
        .apiserver_version()
        .await
        .expect("a client with a certificate");
    // A new connection's `/readyz` status, once the server has seen a
    // place given back (it may take a moment).
    let readyz_soon = || async {
        let mut status = String::new();
        for _ in 0..50 {
            status = readyz(open().await).await;
            if !status.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        status
    };
    // One closes: a new one is served.
    drop(held);
    assert_eq!(readyz_soon().await, "HTTP/1.1 200 OK");
    // Held past their lifetime with no authenticated request (a probe's
    // `/readyz` is anonymous): closed, and their places given back.
    let mut idle = [open().await, open().await];
    for tls in &mut idle {
        tls.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
    }
    assert_eq!(readyz(open().await).await, "", "the places are taken");
    for mut tls in idle {
        let mut raw = Vec::new();
        // The answer, then the end of the stream once the lifetime is up.
        let read = tokio::time::timeout(Duration::from_secs(30), tls.read_to_end(&mut raw)).await;
        assert!(read.is_ok(), "an unproven connection outlived its lifetime");
        assert!(String::from_utf8_lossy(&raw).starts_with("HTTP/1.1 200 OK"));
    }
    assert_eq!(readyz_soon().await, "HTTP/1.1 200 OK");
}

/// An HTTP/2 client answers the server's keep-alive pings, so an unused
/// connection would stay for ever: after the idle timeout with nothing in
/// flight the server says `GOAWAY` and the connection ends; one carrying a
/// watch is not idle however quiet the watch, and is closed only once the
/// timeout has passed after its watch ended.
#[tokio::test]
async fn idle_http2_connections_are_closed_gracefully_but_not_while_a_watch_streams() {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    let idle = Duration::from_secs(1);
    let local = local_with(server::ConnectionLimits {
        idle,
        ..Default::default()
    })
    .await;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(local.ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_client_auth_cert(
        CertificateDer::pem_slice_iter(local.client_cert_pem.as_bytes())
            .map(Result::unwrap)
            .collect(),
        PrivateKeyDer::from_pem_slice(local.client_key_pem.as_bytes()).unwrap(),
    )
    .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    // An HTTP/2 connection: its sender, and a channel that yields when the
    // connection has ended.
    let open = || async {
        let tcp = tokio::net::TcpStream::connect(local.addr).await.unwrap();
        let tls = connector
            .connect(ServerName::IpAddress(local.addr.ip().into()), tcp)
            .await
            .unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let (sender, connection) = hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(tls),
        )
        .await
        .unwrap();
        let (ended_tx, ended) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = connection.await;
            let _ = ended_tx.send(());
        });
        (sender, ended)
    };
    let get = |path: &str| {
        http::Request::get(format!("https://{}{path}", local.addr))
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap()
    };

    // A request, then nothing: closed once the timeout has passed. The
    // server's timer starts when its answer leaves, which the client can
    // only bound from below by when it asked: the answer reaches it later,
    // by a scheduling delay that a loaded machine makes longer than the
    // closing takes.
    let (mut sender, mut ended) = open().await;
    let asked = std::time::Instant::now();
    let answered = sender.send_request(get("/version")).await.unwrap();
    assert_eq!(answered.status(), 200);
    drop(answered);
    tokio::time::timeout(Duration::from_secs(20), &mut ended)
        .await
        .expect("an idle connection is closed")
        .unwrap();
    assert!(asked.elapsed() >= idle, "closed before its idle timeout");

    // A watch on a namespace with no apps: no event comes, yet the
    // connection stays; once the watch ends, the connection goes too.
    let (mut sender, mut ended) = open().await;
    let watch = sender
        .send_request(get(&format!(
            "/apis/{}/namespaces/quiet/postgreses?watch=true",
            "apps.cozystack.io/v1alpha1"
        )))
        .await
        .unwrap();
    assert_eq!(watch.status(), 200);
    assert!(
        tokio::time::timeout(idle * 4, &mut ended).await.is_err(),
        "a connection with a watch streaming was closed as idle"
    );
    drop(watch);
    tokio::time::timeout(Duration::from_secs(20), &mut ended)
        .await
        .expect("closed once its watch has ended and the timeout has passed")
        .unwrap();
}
