//! `serve --standalone` stopped under load: SIGTERM lets requests in
//! flight finish, refuses new connections at once, ends watches cleanly and
//! exits within the drain timeout; `kill -9` in the middle of a write burst
//! loses no acknowledged write, and the reopened store goes on with
//! monotonic resourceVersions and resumable (or 410) watches.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{AsyncBufReadExt, StreamExt};
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::postgres_resource;
use super::standalone_proc::Standalone;

const NS: &str = "default";

fn postgres(name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
        "metadata": {"name": name}, "spec": {"replicas": 1},
    }))
    .expect("app")
}

fn rv_of(object: &DynamicObject) -> u64 {
    object
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or_default()
        .parse()
        .expect("resourceVersion")
}

async fn names_and_versions(client: &kube::Client) -> BTreeMap<String, u64> {
    Api::<DynamicObject>::namespaced_with(client.clone(), NS, &postgres_resource())
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|a| (a.metadata.name.clone().unwrap_or_default(), rv_of(a)))
        .collect()
}

/// What a load task saw: acknowledged creates and how its requests failed.
#[derive(Debug, Default)]
struct Load {
    acked: Vec<(String, u64)>,
    failures: Vec<String>,
}

/// Creates apps as fast as it can until a request fails `limit` times.
async fn load(client: kube::Client, task: usize, log: Arc<Mutex<Load>>) {
    let apps = Api::<DynamicObject>::namespaced_with(client, NS, &postgres_resource());
    for i in 0.. {
        let name = format!("load-{task}-{i}");
        match apps.create(&PostParams::default(), &postgres(&name)).await {
            Ok(created) => log.lock().unwrap().acked.push((name, rv_of(&created))),
            Err(e) => {
                let failures = {
                    let mut log = log.lock().unwrap();
                    log.failures.push(match &e {
                        kube::Error::Api(s) => format!("status {} {}", s.code, s.reason),
                        other => format!("transport: {other}"),
                    });
                    log.failures.len()
                };
                if failures >= 3 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_finishes_in_flight_refuses_new_and_exits_within_the_drain() {
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let drain = Duration::from_secs(5);
    let mut server = Standalone::start(dir.path(), "5s").await;
    let client = server.client().await;
    let raw = server.raw();

    // Watches, each recording when and how its stream ended.
    let path = format!("/apis/apps.cozystack.io/v1alpha1/namespaces/{NS}/postgreses");
    let mut watches = Vec::new();
    for _ in 0..10 {
        let request = http::Request::get(format!("{path}?watch=true"))
            .body(Vec::new())
            .expect("request");
        let stream = client.request_stream(request).await.expect("watch");
        watches.push(tokio::spawn(async move {
            let mut lines = stream.lines();
            let mut events = 0;
            loop {
                match lines.next().await {
                    Some(Ok(_)) => events += 1,
                    Some(Err(e)) => return (Instant::now(), events, Some(e.to_string())),
                    None => return (Instant::now(), events, None),
                }
            }
        }));
    }
    // Writers.
    let loads: Vec<_> = (0..6)
        .map(|task| {
            let log = Arc::new(Mutex::new(Load::default()));
            let handle = tokio::spawn(load(client.clone(), task, log.clone()));
            (log, handle)
        })
        .collect();
    // A write whose body is half sent when the signal comes.
    let body = serde_json::to_vec(&postgres("in-flight")).expect("body");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        server.addr,
        body.len()
    );
    let (first, rest) = body.split_at(body.len() / 2);
    let mut in_flight = raw.send(&head, first).await.expect("in-flight request");

    tokio::time::sleep(Duration::from_secs(1)).await;
    let signalled = Instant::now();
    server.signal(libc::SIGTERM);

    // New connections are refused once the server is shutting down.
    let refused = loop {
        match tokio::net::TcpStream::connect(server.addr).await {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                break signalled.elapsed();
            }
            _ => {
                assert!(
                    signalled.elapsed() < Duration::from_secs(2),
                    "new connections still accepted {:?} after SIGTERM",
                    signalled.elapsed()
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };

    // The request in flight finishes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    in_flight.write_all(rest).await.expect("rest of the body");
    let mut response = Vec::new();
    let read = tokio::time::timeout(drain, in_flight.read_to_end(&mut response)).await;
    let response = String::from_utf8_lossy(&response);
    assert!(
        response.starts_with("HTTP/1.1 201"),
        "the request in flight at SIGTERM: {read:?} {response}"
    );

    let status = tokio::time::timeout(drain + Duration::from_secs(2), server.child.wait())
        .await
        .expect("serve exits within the drain timeout")
        .expect("wait");
    let exited = signalled.elapsed();
    assert!(status.success(), "serve exited with {status}");
    // The server gives in-flight requests the drain timeout, plus a second to close.
    assert!(
        exited < drain + Duration::from_secs(1),
        "exit took {exited:?}, drain timeout {drain:?}"
    );

    for watch in watches {
        let (ended, events, error) = watch.await.expect("watch task");
        assert!(
            error.is_none(),
            "a watch broke instead of ending: {error:?}"
        );
        assert!(
            ended >= signalled,
            "a watch ended before the signal ({events} events)"
        );
        assert!(ended.duration_since(signalled) < drain);
    }
    let mut acked = Vec::new();
    let mut failures = Vec::new();
    for (log, handle) in loads {
        handle.abort();
        let log = log.lock().unwrap();
        acked.extend(log.acked.iter().cloned());
        failures.extend(log.failures.iter().cloned());
    }
    // Refused or closed connections, never an error status.
    assert!(
        failures.iter().all(|f| f.starts_with("transport")),
        "load failures: {failures:?}"
    );

    // Every acknowledged write is there after a restart.
    let server = Standalone::start(dir.path(), "5s").await;
    let stored = names_and_versions(&server.client().await).await;
    let lost: Vec<_> = acked
        .iter()
        .filter(|(name, _)| !stored.contains_key(name))
        .collect();
    assert!(lost.is_empty(), "acknowledged writes lost: {lost:?}");
    assert!(stored.contains_key("in-flight"));
    eprintln!(
        "SIGTERM under load: {} writes acknowledged, new connections refused after {refused:?}, \
         in-flight request finished, exit after {exited:?} (drain {drain:?}); total {:?}",
        acked.len(),
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_write_burst_loses_no_acknowledged_write() {
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Standalone::start(dir.path(), "5s").await;
    let client = server.client().await;
    let path = format!("/apis/apps.cozystack.io/v1alpha1/namespaces/{NS}/postgreses");

    // A watcher recording every resourceVersion it sees.
    let seen = Arc::new(Mutex::new(Vec::<u64>::new()));
    let request = http::Request::get(format!("{path}?watch=true&resourceVersion=0"))
        .body(Vec::new())
        .expect("request");
    let stream = client.request_stream(request).await.expect("watch");
    let sink = seen.clone();
    let watcher = tokio::spawn(async move {
        let mut lines = stream.lines();
        while let Some(Ok(line)) = lines.next().await {
            let event: Value = serde_json::from_str(&line).unwrap_or_default();
            if let Some(rv) = event["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|v| v.parse().ok())
            {
                sink.lock().unwrap().push(rv);
            }
        }
    });

    let loads: Vec<_> = (0..8)
        .map(|task| {
            let log = Arc::new(Mutex::new(Load::default()));
            let handle = tokio::spawn(load(client.clone(), task, log.clone()));
            (log, handle)
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.signal(libc::SIGKILL);
    let _ = server.child.wait().await;
    let mut acked = Vec::new();
    for (log, handle) in loads {
        let _ = handle.await;
        acked.extend(log.lock().unwrap().acked.iter().cloned());
    }
    let _ = watcher.await;
    let seen = seen.lock().unwrap().clone();
    assert!(
        acked.len() > 10,
        "too few writes before the kill: {}",
        acked.len()
    );
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "the watch saw resourceVersions out of order"
    );
    let last_seen = *seen.last().expect("the watch saw writes");
    let max_acked = acked.iter().map(|(_, rv)| *rv).max().unwrap_or(0);

    // Reopened: every acknowledged write is there, at its version or later.
    let server = Standalone::start(dir.path(), "5s").await;
    let client = server.client().await;
    let stored = names_and_versions(&client).await;
    let lost: Vec<_> = acked
        .iter()
        .filter(|(name, rv)| stored.get(name).is_none_or(|stored| stored < rv))
        .collect();
    assert!(lost.is_empty(), "acknowledged writes lost: {lost:?}");

    // A watch resumed from the last version seen continues or says 410.
    let request = http::Request::get(format!("{path}?watch=true&resourceVersion={last_seen}"))
        .body(Vec::new())
        .expect("request");
    let resumed = client.request_stream(request).await;
    let apps = Api::<DynamicObject>::namespaced_with(client.clone(), NS, &postgres_resource());
    let after = apps
        .create(&PostParams::default(), &postgres("after-restart"))
        .await
        .expect("write after the restart");
    let after_rv = rv_of(&after);
    let before_max = max_acked
        .max(last_seen)
        .max(stored.values().copied().max().unwrap_or(0));
    assert!(
        after_rv > before_max,
        "resourceVersion went back: {after_rv} after {before_max}"
    );
    let outcome = match resumed {
        Err(kube::Error::Api(status)) if status.code == 410 => "410 Expired".to_owned(),
        Err(e) => panic!("resuming the watch: {e}"),
        Ok(stream) => {
            let mut lines = stream.lines();
            let mut rvs = Vec::new();
            let mut expired = false;
            while let Ok(Some(Ok(line))) =
                tokio::time::timeout(Duration::from_secs(10), lines.next()).await
            {
                let event: Value = serde_json::from_str(&line).expect("event");
                if event["type"] == "ERROR" {
                    assert_eq!(event["object"]["code"], 410, "{event}");
                    expired = true;
                    break;
                }
                let rv: u64 = event["object"]["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|v| v.parse().ok())
                    .expect("resourceVersion");
                rvs.push(rv);
                if rv == after_rv {
                    break;
                }
            }
            if expired {
                "410 in the stream".to_owned()
            } else {
                assert_eq!(rvs.last(), Some(&after_rv), "the resumed watch: {rvs:?}");
                assert!(rvs.iter().all(|rv| *rv > last_seen));
                assert!(rvs.windows(2).all(|w| w[0] < w[1]));
                format!("continued with {} events", rvs.len())
            }
        }
    };
    eprintln!(
        "kill -9: {} writes acknowledged before the kill, none lost; resumed watch from {last_seen}: {outcome}; \
         total {:?}",
        acked.len(),
        started.elapsed()
    );
}
