//! kube-apiserver restarted under 200 open watches of the server (JSON,
//! Table and PartialObjectMetadata, with and without bookmarks), with writes
//! through the server before, while kube-apiserver is down, while it comes
//! back, and after: every watcher sees exactly the changes etcd recorded,
//! none lost, duplicated or out of order (or, had it got a 410, re-lists to
//! etcd's state the way client-go does), and the same server keeps serving.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::{
    Change, EtcdWatch, Harness, Repr, Watcher, create_namespace, etcd_revision, eventually,
    final_state, private_plane,
};

/// Open watches of the server during the restart.
const WATCHERS: usize = 200;
/// How long a write may take to fail while kube-apiserver is down (the
/// server's request timeout is 60 s; a refused connection fails at once).
const DOWN_WRITE_LIMIT: Duration = Duration::from_secs(15);

fn postgres(name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apps.cozystack.io/v1alpha1",
        "kind": "Postgres",
        "metadata": {"name": name},
        "spec": {"replicas": 1},
    }))
    .expect("app")
}

async fn create(apps: &Api<DynamicObject>, name: &str) -> Result<(), kube::Error> {
    apps.create(&PostParams::default(), &postgres(name))
        .await
        .map(drop)
}

async fn label(apps: &Api<DynamicObject>, name: &str, value: &str) -> Result<(), kube::Error> {
    let patch = json!({"metadata": {"labels": {"step": value}}});
    apps.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(drop)
}

async fn delete(apps: &Api<DynamicObject>, name: &str) -> Result<(), kube::Error> {
    apps.delete(name, &DeleteParams::default()).await.map(drop)
}

/// Retries `write` until it succeeds (as a client would while the server
/// recovers); a 409 AlreadyExists after a failed create counts as done.
/// Returns the codes of the failures.
async fn until_done<F, Fut>(what: &str, mut write: F) -> Vec<u16>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), kube::Error>>,
{
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut failures = Vec::new();
    loop {
        match write().await {
            Ok(()) => return failures,
            Err(kube::Error::Api(s)) if s.code == 409 && s.reason == "AlreadyExists" => {
                return failures;
            }
            Err(e) => {
                failures.push(match &e {
                    kube::Error::Api(s) => s.code,
                    _ => 0,
                });
                assert!(Instant::now() < deadline, "{what} never succeeded: {e}");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_see_every_change_across_a_kube_apiserver_restart() {
    let started = Instant::now();
    let mut private = private_plane("restart");
    let ns = "faults";
    create_namespace(&private.plane, ns).await;
    let harness = Harness::start(&private.plane).await;
    let apps = harness.postgres(ns);
    let etcd = EtcdWatch::start(private.etcd_port(), ns).await;
    let plane_ready = started.elapsed();

    // Watchers start as client-go's do: from a list's resourceVersion.
    let list = apps.list(&ListParams::default()).await.expect("list");
    let from: u64 = list
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or_default()
        .parse()
        .expect("list resourceVersion");
    let watchers: Vec<(Repr, bool, Watcher)> = (0..WATCHERS)
        .map(|i| {
            let repr = [Repr::Json, Repr::Table, Repr::Metadata][i % 3];
            let bookmarks = (i / 3) % 2 == 0;
            let watcher = Watcher::start(harness.client.clone(), ns, from, repr, bookmarks);
            (repr, bookmarks, watcher)
        })
        .collect();

    // Before: every watcher is connected once it has seen the first write.
    create(&apps, "db-0").await.expect("create db-0");
    assert!(
        eventually(Duration::from_secs(60), || watchers
            .iter()
            .all(|(.., w)| !w.log().events.is_empty()))
        .await,
        "not every watcher saw the first write"
    );
    for name in ["db-1", "db-2", "db-3", "db-4", "db-5"] {
        create(&apps, name).await.expect("create");
    }
    for name in ["db-0", "db-1", "db-2"] {
        label(&apps, name, "before").await.expect("label");
    }
    delete(&apps, "db-5").await.expect("delete db-5");
    let watches_before = harness.cache.upstream_watches();
    let before = etcd_revision(private.etcd_port()).await;

    // Down: writes fail promptly with a 503 that says why; reads at
    // resourceVersion=0 are answered from the cache.
    let runtime = tokio::runtime::Handle::current();
    let mut down_write = None;
    let mut down_read = None;
    let (downtime, stop) = tokio::task::block_in_place(|| {
        private.restart_apiserver(|| {
            runtime.block_on(async {
                let t = Instant::now();
                let result = tokio::time::timeout(DOWN_WRITE_LIMIT, create(&apps, "db-6")).await;
                down_write = Some((t.elapsed(), result));
                let names = apps
                    .list(&ListParams::default().match_any())
                    .await
                    .map(|l| {
                        l.items
                            .into_iter()
                            .filter_map(|a| a.metadata.name)
                            .collect::<Vec<_>>()
                    });
                down_read = Some(names);
            });
        })
    })
    .expect("restart kube-apiserver");
    let (write_time, write_result) = down_write.expect("write while down");
    match write_result {
        Ok(Err(kube::Error::Api(status))) => {
            assert_eq!(
                (status.code, status.reason.as_str()),
                (503, "ServiceUnavailable"),
                "a write while kube-apiserver is down: {status:?}"
            );
            assert!(status.message.contains("unreachable"), "{status:?}");
            eprintln!(
                "write while kube-apiserver is down: {} {} in {write_time:?}",
                status.code, status.reason
            );
        }
        other => panic!("a write while kube-apiserver is down: {other:?}"),
    }
    assert_eq!(
        down_read
            .expect("read while down")
            .expect("list at resourceVersion 0 while down"),
        ["db-0", "db-1", "db-2", "db-3", "db-4"],
        "the cache answers reads at resourceVersion 0 while kube-apiserver is down"
    );

    // Coming back: writes are retried until the server can make them; the
    // server's cache reconnects by itself.
    let mut failures = until_done("create db-6", || create(&apps, "db-6")).await;
    failures.extend(until_done("label db-1", || label(&apps, "db-1", "recovery")).await);
    failures.extend(until_done("label db-2", || label(&apps, "db-2", "recovery-1")).await);
    failures.extend(until_done("label db-2", || label(&apps, "db-2", "recovery-2")).await);
    failures.extend(until_done("delete db-3", || delete(&apps, "db-3")).await);
    failures.extend(until_done("delete db-4", || delete(&apps, "db-4")).await);
    assert!(
        eventually(Duration::from_secs(60), || harness.cache.upstream_watches()
            > watches_before)
        .await,
        "the server's cache did not watch kube-apiserver again"
    );
    let resumed = etcd_revision(private.etcd_port()).await;
    let recovered_after = started.elapsed();

    // After.
    for name in ["db-7", "db-8"] {
        create(&apps, name).await.expect("create after");
    }
    for name in ["db-0", "db-6", "db-7"] {
        label(&apps, name, "after").await.expect("label after");
    }
    delete(&apps, "db-1").await.expect("delete db-1");
    delete(&apps, "db-7").await.expect("delete db-7");
    assert!(
        eventually(Duration::from_secs(10), || etcd
            .changes()
            .last()
            .is_some_and(|c| c.name == "db-7" && c.kind == "DELETED"))
        .await
    );
    let truth = etcd.changes();
    let last = truth.last().expect("changes").rv;
    let caught_up = eventually(Duration::from_secs(60), || {
        watchers
            .iter()
            .all(|(.., w)| w.log().events.last().is_some_and(|e| e.rv >= last))
    })
    .await;

    // Outside the recovery window (changes etcd made while the cache was
    // reconnecting) every watcher saw exactly etcd's changes; inside it, a
    // re-list folds the changes of each object into its last one, never
    // loses, invents, repeats or reorders one. The list does not say when
    // an object was deleted: the cache reports its deletions at the latest
    // revisions of the window that no other change of the re-list holds,
    // so taken together they are no earlier than etcd's.
    let exact = |c: &&Change| c.rv <= before || c.rv > resumed;
    let expected: Vec<&Change> = truth.iter().filter(exact).collect();
    let final_truth = final_state(&truth);
    let mut window_exact = 0;
    let mut relisted = 0;
    for (i, (repr, bookmarks, watcher)) in watchers.into_iter().enumerate() {
        let log = watcher.finish().await;
        let who = format!("watcher {i} ({repr:?}, bookmarks {bookmarks})");
        assert!(
            log.errors.is_empty(),
            "{who}: unreadable events {:?}",
            log.errors
        );
        assert!(
            log.events.windows(2).all(|w| w[0].rv < w[1].rv),
            "{who}: events repeated or out of order: {:?}",
            log.events
        );
        assert_eq!(
            log.store, final_truth,
            "{who}: ends with another state than etcd"
        );
        if log.relists > 0 {
            relisted += 1;
            continue;
        }
        let seen: Vec<&Change> = log.events.iter().filter(exact).collect();
        assert_eq!(seen, expected, "{who}: lost or extra changes");
        let window: Vec<&Change> = truth.iter().filter(|c| !exact(c)).collect();
        let seen_window: Vec<&Change> = log.events.iter().filter(|c| !exact(c)).collect();
        let last = |changes: &[&Change]| -> BTreeMap<String, Change> {
            changes
                .iter()
                .map(|c| (c.name.clone(), (*c).clone()))
                .collect()
        };
        let (truth_last, seen_last) = (last(&window), last(&seen_window));
        assert_eq!(
            truth_last.keys().collect::<Vec<_>>(),
            seen_last.keys().collect::<Vec<_>>(),
            "{who}: objects changed while the cache reconnected: etcd {window:?}, seen {seen_window:?}"
        );
        for (name, truth) in &truth_last {
            let seen = &seen_last[name];
            let same = if truth.kind == "DELETED" {
                seen.kind == "DELETED"
            } else {
                seen.kind != "DELETED" && seen.rv == truth.rv
            };
            assert!(same, "{who}: {name} ended as {seen:?}, etcd {truth:?}");
        }
        let deletions = |last: &BTreeMap<String, Change>| -> Vec<u64> {
            let mut at: Vec<u64> = last
                .values()
                .filter(|c| c.kind == "DELETED")
                .map(|c| c.rv)
                .collect();
            at.sort_unstable();
            at
        };
        let (truth_deleted, seen_deleted) = (deletions(&truth_last), deletions(&seen_last));
        assert!(
            truth_deleted
                .iter()
                .zip(&seen_deleted)
                .all(|(truth, seen)| seen >= truth && *seen <= resumed),
            "{who}: deletions reported at {seen_deleted:?}, before etcd's {truth_deleted:?} or after the window"
        );
        if seen_window == window {
            window_exact += 1;
        }
    }
    assert!(caught_up, "not every watcher reached etcd's last change");

    // The same server serves a fresh consistent list of etcd's state.
    let listed: BTreeMap<String, u64> = apps
        .list(&ListParams::default())
        .await
        .expect("list after the restart")
        .items
        .into_iter()
        .map(|a| {
            (
                a.metadata.name.unwrap_or_default(),
                a.metadata
                    .resource_version
                    .unwrap_or_default()
                    .parse()
                    .unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(listed, final_truth);
    eprintln!(
        "kube-apiserver restart: plane+server up in {plane_ready:?}, kube-apiserver down for {downtime:?}, \
         stopped by {stop}, cache watching again at {recovered_after:?}; {} etcd changes ({} in the recovery window); \
         {WATCHERS} watchers: {window_exact} saw the window change by change, {relisted} re-listed; \
         retried write failures {failures:?}; total {:?}",
        truth.len(),
        truth.len() - expected.len(),
        started.elapsed()
    );
}
