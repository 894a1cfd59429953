//! The standalone server's namespaces against kube-apiserver's own: the
//! options of their writes and deletes (`dryRun`, `fieldManager`,
//! `fieldValidation`, `force`, `propagationPolicy`, `gracePeriodSeconds`),
//! malformed or not, are answered alike (code, reason, message and causes),
//! and whatever is refused changes nothing.

use http::{Method, Request};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};

use super::namespace_watches::get;
use crate::support::plane;
use crate::support::standalone::Standalone;

/// One request to `/api/v1/namespaces<path>` (`NAME` in the path and body
/// written `name`) and its answer: its code and body, `name` written
/// `NAME`.
pub(super) async fn exchange(
    client: &kube::Client,
    method: Method,
    path: &str,
    content_type: &str,
    body: &str,
    name: &str,
) -> (u16, Value) {
    let request = Request::builder()
        .method(method)
        .uri(format!("/api/v1/namespaces{}", path.replace("NAME", name)))
        .header("content-type", content_type)
        .body(kube::client::Body::from(
            body.replace("NAME", name).into_bytes(),
        ))
        .expect("request");
    let response = client.send(request).await.expect("send");
    let code = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let text = String::from_utf8_lossy(&bytes).replace(name, "NAME");
    (code, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// One answer, normalised for the comparison: code, reason, message,
/// details of a Status, and for an object only that it is a Namespace.
pub(super) async fn send(
    client: &kube::Client,
    method: Method,
    path: &str,
    query: &str,
    content_type: &str,
    body: &str,
    name: &str,
) -> Value {
    let path = format!("{path}{}{query}", if query.is_empty() { "" } else { "?" });
    let (code, body) = exchange(client, method, &path, content_type, body, name).await;
    if body["kind"] == "Status" {
        json!({"code": code, "reason": body["reason"], "message": body["message"],
               "details": body["details"]})
    } else {
        json!({"code": code, "kind": body["kind"]})
    }
}

#[tokio::test]
async fn standalone_namespace_options_agree_with_kube_apiserver() {
    let plane = plane::plane();
    let theirs = plane.client().await;
    let standalone = Standalone::start();
    let ours = client_of(&standalone).await;
    // A namespace of each server's: its name differs, normalised away.
    let name = format!("diff-ns-options-{}", std::process::id());
    let created = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"NAME"}}"#;
    for client in [&ours, &theirs] {
        let a = send(client, Method::POST, "", "", JSON, created, &name).await;
        assert_eq!(a["code"], 201, "{a}");
    }
    let long = "m".repeat(129);
    let applied = "apiVersion: v1\nkind: Namespace\nmetadata: {name: NAME}\n";
    let renamed = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"NAME-new"}}"#;
    let updated = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"NAME","resourceVersion":"1"}}"#;
    let writes = [
        (Method::POST, "", JSON, renamed),
        (Method::PUT, "/NAME", JSON, updated),
        (Method::PATCH, "/NAME", MERGE, "{}"),
        (Method::PATCH, "/NAME", APPLY, applied),
    ];
    let long_manager = format!("fieldManager={long}");
    let write_queries = [
        "dryRun=Bogus",
        "dryRun=",
        "dryRun=All&dryRun=Bogus",
        "dryRun=All&fieldValidation=Bogus",
        "fieldManager=a%07b&dryRun=All",
        "force=true&dryRun=All",
        long_manager.as_str(),
    ];
    let mut differ = Vec::new();
    for (method, path, content_type, body) in &writes {
        for query in write_queries {
            let query = if *content_type == APPLY && !query.contains("fieldManager") {
                format!("fieldManager=m&{query}")
            } else {
                query.to_owned()
            };
            let a = send(
                &ours,
                method.clone(),
                path,
                &query,
                content_type,
                body,
                &name,
            )
            .await;
            let b = send(
                &theirs,
                method.clone(),
                path,
                &query,
                content_type,
                body,
                &name,
            )
            .await;
            // `force` is refused on a patch that is no apply only.
            let refused = !query.contains("force") || *content_type == MERGE;
            if a != b || (b["code"] == 422) != refused {
                differ.push(format!(
                    "{method} {path} {content_type} {query}:\n  ours:   {a}\n  theirs: {b}"
                ));
            }
        }
    }
    // An apply without a manager.
    let a = send(
        &ours,
        Method::PATCH,
        "/NAME",
        "dryRun=All",
        APPLY,
        applied,
        &name,
    )
    .await;
    let b = send(
        &theirs,
        Method::PATCH,
        "/NAME",
        "dryRun=All",
        APPLY,
        applied,
        &name,
    )
    .await;
    if a != b || b["code"] != 422 {
        differ.push(format!(
            "apply without a manager:\n  ours:   {a}\n  theirs: {b}"
        ));
    }
    // Deletes: options from the body or, without one, the query; the
    // options come before the namespace is looked up or protected.
    for (path, query, body, code) in [
        ("/NAME", "dryRun=Bogus", "", 422),
        ("/NAME", "dryRun=All&dryRun=Bogus", "", 422),
        ("/NAME", "propagationPolicy=Bogus", "", 422),
        ("/NAME", "gracePeriodSeconds=x", "", 400),
        ("/NAME", "", r#"{"dryRun":["Bogus"]}"#, 422),
        (
            "/NAME",
            "",
            r#"{"orphanDependents":true,"propagationPolicy":"Orphan"}"#,
            422,
        ),
        ("/default", "dryRun=Bogus", "", 422),
        ("/NAME", "dryRun=All", "", 200),
        ("/NAME", "", r#"{"dryRun":["All"]}"#, 200),
        // A body's options are the options: the query is not read then.
        (
            "/NAME",
            "propagationPolicy=Bogus",
            r#"{"dryRun":["All"]}"#,
            200,
        ),
    ] {
        let a = send(&ours, Method::DELETE, path, query, JSON, body, &name).await;
        let b = send(&theirs, Method::DELETE, path, query, JSON, body, &name).await;
        if a != b || b["code"] != code {
            differ.push(format!(
                "DELETE {path} {query} {body}:\n  ours:   {a}\n  theirs: {b}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // Nothing was written: each namespace is still there and Active, no
    // other was created.
    for client in [&ours, &theirs] {
        let a = send(client, Method::GET, "/NAME", "", JSON, "", &name).await;
        assert_eq!(a["code"], 200, "{a}");
        let a = send(client, Method::GET, "/NAME-new", "", JSON, "", &name).await;
        assert_eq!(a["code"], 404, "{a}");
        let a = send(client, Method::DELETE, "/NAME", "", JSON, "", &name).await;
        assert_eq!(a["code"], 200, "{a}");
    }
}

/// A client of `standalone`'s, through the kubeconfig it wrote.
pub(super) async fn client_of(standalone: &Standalone) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(standalone.kubeconfig()).expect("kubeconfig"),
        &Default::default(),
    )
    .await
    .expect("config");
    // The server's answers as it gives them: kube-rs would retry a 503 or
    // 504 for minutes.
    let mut config = config;
    config.default_retry = false;
    kube::Client::try_from(config).expect("client")
}

pub(super) const JSON: &str = "application/json";
pub(super) const MERGE: &str = "application/merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

/// Namespace lists and watches by field selector: the fields kube-apiserver
/// knows for a Namespace (`metadata.name`, `status.phase`) select alike, and
/// any other is the same 400.
#[tokio::test]
async fn namespace_field_selectors_agree_with_kube_apiserver() {
    let plane = plane::plane();
    let theirs = plane.client().await;
    let standalone = Standalone::start();
    let ours = client_of(&standalone).await;
    let name = format!("diff-ns-fields-{}", std::process::id());
    let created = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"NAME"}}"#;
    for client in [&ours, &theirs] {
        let a = send(client, Method::POST, "", "", JSON, created, &name).await;
        assert_eq!(a["code"], 201, "{a}");
    }
    let selectors = [
        "status.phase=Active,metadata.name=NAME",
        "status.phase==Active,metadata.name=NAME",
        "status.phase!=Active,metadata.name=NAME",
        "status.phase=Terminating,metadata.name=NAME",
        "status.phase=active,metadata.name=NAME",
        "status.phase!=Terminating,metadata.name=NAME",
        "metadata.namespace=x",
        "metadata.namespace=,metadata.name=NAME",
        "spec.finalizers=kubernetes",
        "status.phase",
    ];
    let mut differ = Vec::new();
    for selector in selectors {
        let mut answers = Vec::new();
        for client in [&ours, &theirs] {
            for watch in [false, true] {
                let query = format!(
                    "fieldSelector={}{}",
                    selector
                        .replace("NAME", &name)
                        .replace('=', "%3D")
                        .replace(',', "%2C"),
                    if watch {
                        "&watch=1&timeoutSeconds=1"
                    } else {
                        ""
                    }
                );
                let (code, text) = get(client, &format!("/api/v1/namespaces?{query}")).await;
                let text = text.replace(&name, "NAME");
                // A list: the names of its items; a watch: the names its
                // ADDED events carry; an error: its message.
                let said: Vec<String> = if code != 200 {
                    let status: Value = serde_json::from_str(&text).unwrap_or_default();
                    vec![status["message"].as_str().unwrap_or_default().to_owned()]
                } else if watch {
                    text.lines()
                        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                        .filter_map(|e| e["object"]["metadata"]["name"].as_str().map(str::to_owned))
                        .collect()
                } else {
                    let list: Value = serde_json::from_str(&text).unwrap_or_default();
                    list["items"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_owned))
                        .collect()
                };
                answers.push((watch, code, said));
            }
        }
        if answers[..2] != answers[2..] {
            differ.push(format!(
                "{selector}:\n  ours:   {:?}\n  theirs: {:?}",
                &answers[..2],
                &answers[2..]
            ));
        }
    }
    for client in [&ours, &theirs] {
        send(client, Method::DELETE, "/NAME", "", JSON, "", &name).await;
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
