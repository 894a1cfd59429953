//! The standalone server's namespace watches against kube-apiserver's: a
//! watch resumed from a list's resourceVersion is told what happened after
//! it — a namespace leaving the label selector, one removed, one created —
//! alike; one from before the kept history gets kube-apiserver's 410
//! `ERROR` event; one from a resourceVersion not reached yet waits, or with
//! initial events gets the same 504 `ERROR` event (custom resources too).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use http::Method;
use serde_json::{Value, json};

use super::namespace_options::{JSON, MERGE, client_of, send};
use crate::support::plane;
use crate::support::standalone::Standalone;

/// The raw text of a GET of `uri`.
pub(super) async fn get(client: &kube::Client, uri: &str) -> (u16, String) {
    let (code, _, text) = get_accepting(client, uri, None).await;
    (code, text)
}

/// [`get`] with `Accept: accept` (none when `None`), also answering the
/// content type.
pub(super) async fn get_accepting(
    client: &kube::Client,
    uri: &str,
    accept: Option<&str>,
) -> (u16, String, String) {
    let mut request = http::Request::get(uri);
    if let Some(accept) = accept {
        request = request.header(http::header::ACCEPT, accept);
    }
    let request = request.body(kube::client::Body::empty()).expect("request");
    let response = client.send(request).await.expect("send");
    let code = response.status().as_u16();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body")
        .to_bytes();
    (
        code,
        content_type,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

/// A client of the plane's kube-apiserver without kube-rs's retries of a
/// 503 or 504 (when the answer itself is compared).
pub(super) async fn without_retries(plane: &plane::Plane) -> kube::Client {
    let mut config = plane.config().await;
    config.default_retry = false;
    kube::Client::try_from(config).expect("client")
}

/// The events of a watch's `text`.
fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// Waits until namespace `name` is gone (kube-controller-manager empties and
/// removes it on the plane; the standalone server at once).
async fn gone(client: &kube::Client, name: &str) {
    let started = Instant::now();
    while get(client, &format!("/api/v1/namespaces/{name}")).await.0 != 404 {
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "namespace {name} still there"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn namespace_watches_resume_like_kube_apiserver() {
    let plane = plane::plane();
    let theirs = plane.client().await;
    let standalone = Standalone::start();
    let ours = client_of(&standalone).await;
    let run = format!("diff-ns-watch-{}", std::process::id());
    let create = |suffix: &str| {
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": format!("NAME-{suffix}"), "labels": {"diffwatch": run, "team": "x"}}})
        .to_string()
    };
    let selector = format!("diffwatch%3D{run}%2Cteam%3Dx");
    let mut told = Vec::new();
    for client in [&ours, &theirs] {
        for suffix in ["a", "b"] {
            let a = send(client, Method::POST, "", "", JSON, &create(suffix), &run).await;
            assert_eq!(a["code"], 201, "{a}");
        }
        let (code, list) = get(
            client,
            &format!("/api/v1/namespaces?labelSelector={selector}"),
        )
        .await;
        assert_eq!(code, 200, "{list}");
        let list: Value = serde_json::from_str(&list).expect("list");
        let listed: u64 = list["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|rv| rv.parse().ok())
            .expect("a list's resourceVersion");

        // After the list: a leaves the selector, b is removed, c created.
        let relabel = r#"{"metadata":{"labels":{"team":"y"}}}"#;
        let a = send(client, Method::PATCH, "/NAME-a", "", MERGE, relabel, &run).await;
        assert_eq!(a["code"], 200, "{a}");
        let a = send(client, Method::DELETE, "/NAME-b", "", JSON, "", &run).await;
        assert_eq!(a["code"], 200, "{a}");
        let a = send(client, Method::POST, "", "", JSON, &create("c"), &run).await;
        assert_eq!(a["code"], 201, "{a}");
        gone(client, &format!("{run}-b")).await;

        let (code, text) = get(
            client,
            &format!(
                "/api/v1/namespaces?watch=1&labelSelector={selector}&resourceVersion={listed}&timeoutSeconds=2"
            ),
        )
        .await;
        assert_eq!(code, 200, "{text}");
        // Each namespace's events in order, a run of one type told once
        // (kube-apiserver's namespace controller writes a Terminating
        // namespace several times before it removes it).
        let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for event in events(&text) {
            let name = event["object"]["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .replace(&run, "NAME");
            let kind = event["type"].as_str().unwrap_or_default().to_owned();
            let rv: u64 = event["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|rv| rv.parse().ok())
                .unwrap_or(0);
            assert!(rv > listed, "an event from before the list: {event}");
            if kind == "DELETED" && name == "NAME-a" {
                // Told as it was before it left the selector.
                assert_eq!(
                    event["object"]["metadata"]["labels"]["team"], "x",
                    "{event}"
                );
            }
            let seen = by_name.entry(name).or_default();
            if seen.last() != Some(&kind) {
                seen.push(kind);
            }
        }
        told.push(by_name);

        if std::ptr::eq(client, &ours) {
            expired_like_kube_apiserver(client, &run, listed).await;
        }

        for suffix in ["a", "c"] {
            send(
                client,
                Method::DELETE,
                &format!("/NAME-{suffix}"),
                "",
                JSON,
                "",
                &run,
            )
            .await;
        }
        for suffix in ["a", "c"] {
            gone(client, &format!("{run}-{suffix}")).await;
        }
    }
    assert_eq!(told[0], told[1], "ours, then kube-apiserver's");
    let expected: BTreeMap<String, Vec<String>> = [
        ("NAME-a", vec!["DELETED"]),
        ("NAME-b", vec!["MODIFIED", "DELETED"]),
        ("NAME-c", vec!["ADDED"]),
    ]
    .into_iter()
    .map(|(n, e)| (n.to_owned(), e.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(told[1], expected, "kube-apiserver's");
}

/// A watch from before the standalone server's kept history (the last 1,000
/// namespace events) gets kube-apiserver's answer to one from before its
/// watch cache's (`staging/src/k8s.io/apiserver/pkg/storage/cacher/
/// watch_cache.go`: `errors.NewResourceExpired("too old resource version:
/// %d (%d)")`, sent as the watch's one `ERROR` event): the test plane's
/// cache holds every event since it started, so it cannot be made to answer
/// it here.
async fn expired_like_kube_apiserver(client: &kube::Client, run: &str, from: u64) {
    for i in 0..1001 {
        let note = format!(r#"{{"metadata":{{"annotations":{{"n":"{i}"}}}}}}"#);
        let a = send(client, Method::PATCH, "/NAME-a", "", MERGE, &note, run).await;
        assert_eq!(a["code"], 200, "{a}");
    }
    let (code, text) = get(
        client,
        &format!("/api/v1/namespaces?watch=1&resourceVersion={from}&timeoutSeconds=2"),
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let events = events(&text);
    assert_eq!(events.len(), 1, "{text}");
    assert_eq!(events[0]["type"], "ERROR", "{text}");
    let status = &events[0]["object"];
    assert_eq!(
        (
            &status["kind"],
            &status["status"],
            &status["code"],
            &status["reason"]
        ),
        (
            &json!("Status"),
            &json!("Failure"),
            &json!(410),
            &json!("Expired")
        ),
        "{text}"
    );
    let message = status["message"].as_str().unwrap_or_default();
    let oldest: u64 = message
        .strip_prefix(&format!("too old resource version: {from} ("))
        .and_then(|rest| rest.strip_suffix(')'))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(oldest > from, "{text}");
    // From there on, the watch resumes.
    let (code, text) = get(
        client,
        &format!("/api/v1/namespaces?watch=1&resourceVersion={oldest}&timeoutSeconds=1"),
    )
    .await;
    assert_eq!(code, 200, "{text}");
    assert!(
        self::events(&text).iter().all(|e| e["type"] == "MODIFIED"),
        "{text}"
    );
}

/// A watch from a resourceVersion not reached yet: a plain one waits for
/// events after it (none come here before its timeout); one asking for
/// initial events waits 3 s for it, then its one event is the 504 with
/// cause `ResourceVersionTooLarge` — for namespaces and for custom
/// resources (the standalone server's apps, kube-apiserver's HelmReleases).
#[tokio::test]
async fn watches_from_a_resource_version_not_reached_yet_agree_with_kube_apiserver() {
    let plane = plane::plane();
    let theirs = without_retries(plane).await;
    let standalone = Standalone::start();
    let ours = client_of(&standalone).await;
    let future = "resourceVersion=99999999";
    let initial =
        "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    let mut told = Vec::new();
    for (client, apps) in [
        (&ours, "/apis/apps.cozystack.io/v1alpha1/postgreses"),
        (&theirs, "/apis/helm.toolkit.fluxcd.io/v2/helmreleases"),
    ] {
        let mut answers = Vec::new();
        for resource in ["/api/v1/namespaces", apps] {
            for query in [
                format!("watch=1&{future}&timeoutSeconds=1"),
                format!("watch=1&{future}&timeoutSeconds=10&{initial}"),
            ] {
                let (code, text) = get(client, &format!("{resource}?{query}")).await;
                let mut events = events(&text);
                for event in &mut events {
                    // The resourceVersion each has reached differs.
                    if let Some(message) = event["object"]["message"].as_str() {
                        let normal = message.split(", current: ").next().unwrap_or_default();
                        event["object"]["message"] = json!(normal);
                    }
                }
                answers.push((code, events));
            }
        }
        told.push(answers);
    }
    assert_eq!(told[0], told[1], "ours, then kube-apiserver's");
    let (code, events) = &told[1][1];
    assert_eq!(*code, 200);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["object"]["code"], 504, "{events:?}");
}
