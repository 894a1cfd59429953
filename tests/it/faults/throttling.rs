//! Upstream throttling and slowness, injected by [`FaultProxy`] between the
//! server and the shared plane's kube-apiserver: a 429 `TooManyRequests`
//! from kube-apiserver's priority and fairness reaches the client as it was
//! sent (code, reason, message, `Retry-After` header and
//! `details.retryAfterSeconds`), and a slow kube-apiserver slows only the
//! requests that need it: reads the cache answers, discovery and new watches
//! stay fast meanwhile.

use std::time::{Duration, Instant};

use kube::api::ListParams;
use serde_json::{Value, json};

use super::proxy::{FaultProxy, RETRY_AFTER, THROTTLE_MESSAGE};
use super::{Harness, postgres_resource};
use crate::support::plane::plane;

/// How slow the upstream is made.
const SLOW: Duration = Duration::from_secs(4);
/// The most an unrelated request may take meanwhile.
const FAST: Duration = Duration::from_secs(1);

fn app(name: &str) -> Value {
    json!({
        "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
        "metadata": {"name": name}, "spec": {"replicas": 1},
    })
}

/// Sends `request`; returns the status, the `Retry-After` header and the body.
async fn send(
    client: &kube::Client,
    request: http::Request<Vec<u8>>,
) -> (u16, Option<String>, Value) {
    use http_body_util::BodyExt;
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("send");
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        retry_after,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )
}

fn assert_throttled(what: &str, (status, retry_after, body): &(u16, Option<String>, Value)) {
    assert_eq!(*status, 429, "{what}: {body}");
    assert_eq!(
        retry_after.as_deref(),
        Some(RETRY_AFTER.to_string().as_str()),
        "{what}: Retry-After"
    );
    assert_eq!(body["reason"], "TooManyRequests", "{what}: {body}");
    assert_eq!(body["message"], THROTTLE_MESSAGE, "{what}: {body}");
    assert_eq!(
        body["details"]["retryAfterSeconds"], RETRY_AFTER,
        "{what}: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_throttling_passes_through_and_slowness_blocks_only_what_needs_upstream() {
    let started = Instant::now();
    let plane = plane();
    let ns = plane.namespace("faults-throttle").await;
    let proxy = FaultProxy::start(plane.client().await).await;
    let harness = Harness::over(proxy.config()).await;
    let client = &harness.client;
    let collection = format!("/apis/apps.cozystack.io/v1alpha1/namespaces/{ns}/postgreses");
    let create = |name: &str| {
        http::Request::post(&collection)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(app(name).to_string().into_bytes())
            .expect("request")
    };
    let get = |query: &str| {
        http::Request::get(format!("{collection}{query}"))
            .body(Vec::new())
            .expect("request")
    };

    // Throttled write and consistent read: the client gets kube-apiserver's 429.
    proxy.set(|r| r.throttle_writes = 1);
    assert_throttled("create", &send(client, create("db")).await);
    proxy.set(|r| r.throttle_reads = 1);
    assert_throttled("consistent list", &send(client, get("")).await);
    // And once upstream lets it through, the same requests succeed.
    assert_eq!(send(client, create("db")).await.0, 201);
    assert_eq!(send(client, get("")).await.0, 200);

    // Slow upstream: writes and consistent reads wait for it, nothing else does.
    proxy.set(|r| {
        r.delay_writes = SLOW;
        r.delay_reads = SLOW;
    });
    let slow_started = Instant::now();
    let mut slow = Vec::new();
    for i in 0..2 {
        let request = create(&format!("slow-{i}"));
        let client = client.clone();
        slow.push(tokio::spawn(async move { send(&client, request).await.0 }));
    }
    for _ in 0..3 {
        let request = get("");
        let client = client.clone();
        slow.push(tokio::spawn(async move { send(&client, request).await.0 }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let apps = harness.postgres(&ns);
    let mut slowest = Duration::ZERO;
    let mut answered = 0;
    while slow_started.elapsed() < SLOW - FAST {
        let t = Instant::now();
        let listed = apps
            .list(&ListParams::default().match_any())
            .await
            .expect("list at resourceVersion 0");
        assert!(
            listed
                .items
                .iter()
                .any(|a| a.metadata.name.as_deref() == Some("db"))
        );
        let (status, _, _) = send(client, get("/db?resourceVersion=0")).await;
        assert_eq!(status, 200, "get at resourceVersion 0");
        let discovery = send(
            client,
            http::Request::get("/apis/apps.cozystack.io/v1alpha1")
                .body(Vec::new())
                .expect("request"),
        )
        .await;
        assert_eq!(discovery.0, 200, "discovery");
        // A watch from a known resourceVersion starts at once.
        let rv = listed.metadata.resource_version.clone().unwrap_or_default();
        let request = http::Request::get(format!(
            "{collection}?watch=true&resourceVersion={rv}&timeoutSeconds=1"
        ))
        .body(Vec::new())
        .expect("request");
        let response = client
            .send(request.map(kube::client::Body::from))
            .await
            .expect("watch");
        assert_eq!(response.status(), 200, "watch");
        drop(response);
        slowest = slowest.max(t.elapsed());
        answered += 1;
    }
    assert!(
        slowest < FAST,
        "an unrelated request took {slowest:?} while upstream was slow"
    );
    for task in slow {
        let status = task.await.expect("slow request");
        assert!(
            status == 200 || status == 201,
            "a slow request ended with {status}"
        );
    }
    let slow_took = slow_started.elapsed();
    assert!(
        slow_took >= SLOW,
        "the upstream was not slow: {slow_took:?}"
    );
    proxy.set(|r| *r = Default::default());
    let apps_now = kube::Api::<kube::api::DynamicObject>::namespaced_with(
        client.clone(),
        &ns,
        &postgres_resource(),
    );
    let names: Vec<String> = apps_now
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|a| a.metadata.name)
        .collect();
    assert_eq!(names, ["db", "slow-0", "slow-1"]);
    eprintln!(
        "throttling: 429 passed through; {answered} rounds of 4 unrelated requests during a {SLOW:?} upstream stall, \
         slowest round {slowest:?}; slow requests done in {slow_took:?}; total {:?}",
        started.elapsed()
    );
}
