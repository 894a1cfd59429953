//! etcd frozen (SIGSTOP) for [`PAUSE`] under the server: reads the cache
//! can answer (resourceVersion=0) stay fast; reads that must be consistent
//! and writes wait for etcd or fail with a Status, and none outlives the
//! request timeout; after SIGCONT everything works again by itself (writes,
//! consistent reads, the watch sees new changes) without restarting
//! anything.

use std::time::{Duration, Instant};

use kube::api::{DynamicObject, ListParams, PostParams};
use serde_json::json;

use super::{EtcdWatch, Harness, Repr, Watcher, create_namespace, eventually, private_plane};
use kubectl_cozy::apiserver::server::REQUEST_TIMEOUT;

/// How long etcd is frozen.
const PAUSE: Duration = Duration::from_secs(10);
/// The most a cache read may take while etcd is frozen.
const FAST: Duration = Duration::from_secs(1);

fn postgres(name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
        "metadata": {"name": name}, "spec": {"replicas": 1},
    }))
    .expect("app")
}

/// How a request that needs etcd ended: its time, and its code (200/201,
/// or the Status code).
async fn timed<T>(
    request: impl std::future::Future<Output = Result<T, kube::Error>>,
) -> (Duration, u16) {
    let t = Instant::now();
    let result = tokio::time::timeout(REQUEST_TIMEOUT + Duration::from_secs(10), request).await;
    let code = match result {
        Ok(Ok(_)) => 200,
        Ok(Err(kube::Error::Api(status))) => status.code,
        Ok(Err(other)) => panic!("not a Status: {other}"),
        Err(_) => panic!("a request outlived the request timeout by 10 s"),
    };
    (t.elapsed(), code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_frozen_for_ten_seconds_cache_reads_stay_fast_and_all_recovers() {
    let started = Instant::now();
    let private = private_plane("pause");
    let ns = "faults";
    create_namespace(&private.plane, ns).await;
    let harness = Harness::start(&private.plane).await;
    let apps = harness.postgres(ns);
    let etcd = EtcdWatch::start(private.etcd_port(), ns).await;
    for name in ["db-0", "db-1"] {
        apps.create(&PostParams::default(), &postgres(name))
            .await
            .expect("create");
    }
    let from: u64 = apps
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .unwrap_or_default()
        .parse()
        .expect("resourceVersion");
    let watcher = Watcher::start(harness.client.clone(), ns, from, Repr::Json, true);

    private.pause_etcd();
    let paused = Instant::now();
    // Requests that need etcd, in flight during the pause.
    let write = tokio::spawn({
        let apps = apps.clone();
        async move { timed(apps.create(&PostParams::default(), &postgres("db-2"))).await }
    });
    let consistent = tokio::spawn({
        let apps = apps.clone();
        async move { timed(apps.list(&ListParams::default())).await }
    });
    // Reads from the cache stay fast throughout.
    let mut slowest = Duration::ZERO;
    let mut cache_reads = 0;
    while paused.elapsed() < PAUSE {
        let t = Instant::now();
        let listed = apps
            .list(&ListParams::default().match_any())
            .await
            .expect("list at resourceVersion 0 while etcd is frozen");
        assert_eq!(listed.items.len(), 2);
        slowest = slowest.max(t.elapsed());
        cache_reads += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    private.resume_etcd();
    let resumed = Instant::now();
    assert!(
        slowest < FAST,
        "a cache read took {slowest:?} while etcd was frozen"
    );

    let (write_took, write_code) = write.await.expect("write task");
    let (read_took, read_code) = consistent.await.expect("read task");
    for (what, code) in [("write", write_code), ("consistent list", read_code)] {
        assert!(
            code == 200 || code == 504 || code == 500 || code == 503 || code == 429,
            "{what} during the pause ended with {code}"
        );
    }

    // Recovered by itself: writes, consistent reads, the watch.
    let t = Instant::now();
    let mut retries = 0;
    loop {
        match apps.create(&PostParams::default(), &postgres("db-3")).await {
            Ok(_) => break,
            Err(e) => {
                retries += 1;
                assert!(
                    t.elapsed() < Duration::from_secs(60),
                    "no write after SIGCONT: {e}"
                );
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
    let recovered = resumed.elapsed();
    if write_code != 200 {
        // The write that failed may still have been applied; either way it can be made now.
        match apps.create(&PostParams::default(), &postgres("db-2")).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => panic!("db-2 after SIGCONT: {e}"),
        }
    }
    let names: Vec<String> = apps
        .list(&ListParams::default())
        .await
        .expect("consistent list after SIGCONT")
        .items
        .into_iter()
        .filter_map(|a| a.metadata.name)
        .collect();
    assert_eq!(names, ["db-0", "db-1", "db-2", "db-3"]);
    let truth = etcd.changes();
    let last = truth.last().expect("changes").rv;
    assert!(
        eventually(Duration::from_secs(30), || watcher
            .log()
            .events
            .last()
            .is_some_and(|e| e.rv >= last))
        .await,
        "the watch did not see the changes after SIGCONT"
    );
    let log = watcher.finish().await;
    let since: Vec<_> = truth.into_iter().filter(|c| c.rv > from).collect();
    assert_eq!(log.events, since, "the watch lost or repeated changes");
    eprintln!(
        "etcd frozen {PAUSE:?}: {cache_reads} cache reads, slowest {slowest:?}; write in flight ended {write_code} \
         after {write_took:?}, consistent list {read_code} after {read_took:?}; first write after SIGCONT \
         succeeded {recovered:?} later ({retries} retries); total {:?}",
        started.elapsed()
    );
}
