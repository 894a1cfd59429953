//! Answers in YAML, the standalone server's against kube-apiserver's: a
//! client that prefers `application/yaml` gets an object, a list and an
//! error `Status` as YAML documents with the same content; one that names
//! JSON first gets JSON; a watch that accepts only YAML is 406. And an app
//! read in YAML is the app read in JSON, from the standalone server and
//! through kube-apiserver's aggregator (which passes `Accept` through).

use serde_json::Value;

use super::namespace_options::client_of;
use super::namespace_watches::get_accepting;
use crate::support::aggregated::aggregated;
use crate::support::plane;
use crate::support::standalone::Standalone;

/// A GET of `path` with `Accept: accept`: the code, the content type and
/// the body read as YAML (JSON is YAML too), or `Null`.
async fn get(client: &kube::Client, path: &str, accept: &str) -> (u16, String, Value) {
    let (code, content_type, text) = get_accepting(client, path, Some(accept)).await;
    (
        code,
        content_type,
        serde_saphyr::from_str(&text).unwrap_or(Value::Null),
    )
}

/// What is compared of an answer: code, content type, and the fields that
/// do not differ between two servers (a 406's message lists the media
/// types each serves: kube-apiserver's protobuf too).
fn view((code, content_type, body): &(u16, String, Value)) -> Value {
    let names: Vec<Value> = body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| item["metadata"]["name"].clone())
        .filter(|name| name == "default")
        .collect();
    serde_json::json!({
        "code": code,
        "contentType": content_type,
        "kind": body["kind"],
        "apiVersion": body["apiVersion"],
        "name": body["metadata"]["name"],
        "phase": body["status"]["phase"],
        "reason": body["reason"],
        "message": if *code == 406 { Value::Null } else { body["message"].clone() },
        "default listed": names,
    })
}

#[tokio::test]
async fn answers_in_yaml_agree_with_kube_apiserver() {
    let plane = plane::plane();
    let theirs = plane.client().await;
    let standalone = Standalone::start();
    let ours = client_of(&standalone).await;
    let yaml = "application/yaml";
    for (what, path, accept) in [
        ("an object", "/api/v1/namespaces/default", yaml),
        ("a list", "/api/v1/namespaces", yaml),
        (
            "an error",
            "/api/v1/namespaces/no-such-namespace-for-yaml",
            yaml,
        ),
        (
            "YAML preferred by q",
            "/api/v1/namespaces/default",
            "application/json;q=0.5, application/yaml",
        ),
        (
            "JSON named first",
            "/api/v1/namespaces/default",
            "application/json, application/yaml",
        ),
        ("a watch in YAML only", "/api/v1/namespaces?watch=1", yaml),
    ] {
        let ours = get(&ours, path, accept).await;
        let theirs = get(&theirs, path, accept).await;
        assert_eq!(
            view(&ours),
            view(&theirs),
            "{what}: ours (left) and kube-apiserver's (right)"
        );
        match what {
            "a watch in YAML only" => {
                assert_eq!(ours.0, 406, "{what}: {ours:?}");
                assert_eq!(
                    ours.2["message"],
                    "only the following media types are accepted: application/json;stream=watch",
                    "{what}: {ours:?}"
                );
            }
            "JSON named first" => assert_eq!(ours.1, "application/json", "{what}: {ours:?}"),
            _ => assert_eq!(ours.1, yaml, "{what}: {ours:?}"),
        }
    }

    // An app reads the same in YAML as in JSON.
    crate::support::standalone::ok(&standalone.kubectl_stdin(
        &["apply", "-f", "-"],
        "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: db1\n  labels: {\"on\": \"yes\"}\nspec:\n  replicas: 3\n",
    ));
    let path = "/apis/apps.cozystack.io/v1alpha1/namespaces/default/postgreses/db1";
    let (code, content_type, in_yaml) = get(&ours, path, yaml).await;
    assert_eq!((code, content_type.as_str()), (200, yaml), "{in_yaml}");
    let (_, _, in_json) = get(&ours, path, "application/json").await;
    assert_eq!(in_yaml, in_json);
    assert_eq!(in_yaml["metadata"]["labels"]["on"], "yes", "{in_yaml}");
}

#[tokio::test]
async fn apps_read_in_yaml_through_the_aggregator() {
    let plane = plane::plane();
    let _registered = aggregated();
    let client = plane.client().await;
    let ns = plane.namespace("yaml-agg").await;
    crate::support::standalone::ok(&crate::support::standalone::kubectl(
        &plane.kubeconfig,
        &["-n", &ns, "apply", "-f", "-"],
        Some(
            "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: db1\nspec:\n  replicas: 3\n",
        ),
    ));
    let path = format!("/apis/apps.cozystack.io/v1alpha1/namespaces/{ns}/postgreses");
    for path in [format!("{path}/db1"), path.clone()] {
        let (code, content_type, in_yaml) = get(&client, &path, "application/yaml").await;
        assert_eq!(
            (code, content_type.as_str()),
            (200, "application/yaml"),
            "{path}: {in_yaml}"
        );
        let (_, _, in_json) = get(&client, &path, "application/json").await;
        // (A list's own resourceVersion moves with any write in the
        // cluster: its items are compared.)
        match in_json.get("items") {
            Some(items) => assert_eq!(&in_yaml["items"], items, "{path}"),
            None => assert_eq!(in_yaml, in_json, "{path}"),
        }
    }
    let (code, content_type, status) =
        get(&client, &format!("{path}/missing"), "application/yaml").await;
    assert_eq!(
        (code, content_type.as_str()),
        (404, "application/yaml"),
        "{status}"
    );
    assert_eq!(status["reason"], "NotFound", "{status}");
}
