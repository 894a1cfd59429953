//! The standalone server's namespace finalizers against kube-apiserver's
//! (with kube-controller-manager's namespace controller): a client's
//! `spec.finalizers` are kept with `kubernetes` added, updates leave them,
//! `PUT …/finalize` sets them (its refusals alike), deletion takes
//! `kubernetes` off once the content is gone and leaves the namespace
//! `Terminating` under the client's finalizer (a create of its name is
//! refused as `object is being deleted`), and the `/finalize` that clears
//! it removes the namespace.

use std::time::{Duration, Instant};

use http::Method;
use serde_json::{Value, json};

use super::namespace_options::{JSON, client_of, exchange};
use crate::support::plane;
use crate::support::standalone::Standalone;

/// What is compared of an answer: a Status as it is (code, reason,
/// message, causes), a Namespace by its finalizers, phase and deletion.
fn view((code, body): &(u16, Value)) -> Value {
    if body["kind"] == "Status" {
        return json!({"code": code, "reason": body["reason"], "message": body["message"],
                      "details": body["details"]});
    }
    json!({
        "code": code,
        "kind": body["kind"],
        "spec": body["spec"],
        "phase": body["status"]["phase"],
        "finalizers": body["metadata"]["finalizers"],
        "labels": body["metadata"]["labels"],
        "deleting": body["metadata"]["deletionTimestamp"].is_string(),
    })
}

/// The namespace's body for a `/finalize` with `finalizers`.
fn finalize_body(finalizers: &[&str], resource_version: Option<&str>) -> Value {
    let mut body = json!({"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": "NAME", "labels": {"finalized": "yes"}},
                          "spec": {"finalizers": finalizers}});
    if let Some(rv) = resource_version {
        body["metadata"]["resourceVersion"] = json!(rv);
    }
    body
}

/// Clears the plane's namespace `name` if the test stops halfway, so that
/// no namespace is left Terminating under a finalizer nobody removes.
struct Finalized<'a>(&'a plane::Plane, String);

impl Drop for Finalized<'_> {
    fn drop(&mut self) {
        let body = finalize_body(&[], None)
            .to_string()
            .replace("NAME", &self.1);
        let _ = self.0.kubectl_stdin(
            &[
                "replace",
                "--raw",
                &format!("/api/v1/namespaces/{}/finalize", self.1),
                "-f",
                "-",
            ],
            &body,
        );
    }
}

/// Where two servers' answers to the same steps differ, one paragraph each
/// (a step missing on one side is a difference too).
pub(super) fn differences(ours: &[(String, Value)], theirs: &[(String, Value)]) -> Vec<String> {
    let mut differ: Vec<String> = ours
        .iter()
        .zip(theirs)
        .filter(|((_, a), (_, b))| a != b)
        .map(|((what, a), (_, b))| format!("{what}:\n  ours:   {a}\n  theirs: {b}"))
        .collect();
    if ours.len() != theirs.len() {
        differ.push(format!(
            "{} steps ours, {} theirs",
            ours.len(),
            theirs.len()
        ));
    }
    differ
}

/// Keeps what is compared of `answer` under `what`, and gives it back.
fn keep(said: &mut Vec<(String, Value)>, what: &str, answer: (u16, Value)) -> (u16, Value) {
    said.push((what.to_owned(), view(&answer)));
    answer
}

#[tokio::test]
async fn namespace_finalizers_and_finalize_agree_with_kube_apiserver() {
    let plane = plane::plane();
    let theirs = plane.client().await;
    let standalone = Standalone::start();
    let ours = client_of(&standalone).await;
    let name = format!("diff-ns-final-{}", std::process::id());
    let _cleanup = Finalized(plane, name.clone());
    let namespace = |finalizers: Value| {
        Some(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "NAME"},
                    "spec": {"finalizers": finalizers}}),
        )
    };
    let mut answers: [Vec<(String, Value)>; 2] = [Vec::new(), Vec::new()];
    for (client, said) in [&ours, &theirs].into_iter().zip(answers.iter_mut()) {
        let send = async |method: Method, path: &str, body: Option<Value>| {
            let body = body.map(|b| b.to_string()).unwrap_or_default();
            exchange(client, method, path, JSON, &body, &name).await
        };
        let created = send(Method::POST, "", namespace(json!(["example.com/hold"]))).await;
        let created = keep(said, "create with a finalizer of the client's", created);
        assert_eq!(created.0, 201, "{}", created.1);
        let answer = send(Method::PUT, "/NAME", namespace(json!([]))).await;
        keep(said, "an update leaves spec.finalizers", answer);
        let invalid = finalize_body(&["example.com/a/b"], None);
        let answer = send(Method::PUT, "/NAME/finalize", Some(invalid)).await;
        keep(said, "a finalize with an invalid finalizer", answer);
        let other = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}, "spec": {}});
        let answer = send(Method::PUT, "/NAME/finalize", Some(other)).await;
        keep(said, "a finalize of another name", answer);
        let answer = send(Method::GET, "/NAME/finalize", None).await;
        keep(said, "a GET of finalize", answer);
        let answer = send(
            Method::PUT,
            "/NAME-missing/finalize",
            Some(finalize_body(&[], None)),
        )
        .await;
        keep(
            said,
            "a finalize of a namespace that does not exist",
            answer,
        );
        let answer = send(Method::DELETE, "/NAME", None).await;
        keep(said, "delete", answer);
        // kube-controller-manager empties the namespace and takes its
        // finalizer off: the client's holds it Terminating.
        let started = Instant::now();
        let held = loop {
            let (code, ns) = send(Method::GET, "/NAME", None).await;
            assert_eq!(code, 200, "{ns}");
            if ns["spec"]["finalizers"] == json!(["example.com/hold"]) {
                break (code, ns);
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "the kubernetes finalizer was never taken off: {ns}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        keep(said, "held by the client's finalizer", held);
        let answer = send(Method::POST, "", namespace(json!([]))).await;
        let again = keep(said, "a create while it is being deleted", answer);
        assert_eq!(again.0, 409, "{}", again.1);
        let answer = send(
            Method::PUT,
            "/NAME/finalize",
            Some(finalize_body(&[], Some("1"))),
        )
        .await;
        keep(said, "a finalize at a stale resourceVersion", answer);
        let answer = send(
            Method::PUT,
            "/NAME/finalize?dryRun=All",
            Some(finalize_body(&[], None)),
        )
        .await;
        keep(said, "a dry-run finalize", answer);
        let answer = send(Method::GET, "/NAME", None).await;
        keep(said, "still there", answer);
        let answer = send(
            Method::PUT,
            "/NAME/finalize",
            Some(finalize_body(&[], None)),
        )
        .await;
        keep(said, "the finalize that clears it", answer);
        let answer = send(Method::GET, "/NAME", None).await;
        keep(said, "gone", answer);
    }
    let [ours_said, theirs_said] = answers;
    let differ = differences(&ours_said, &theirs_said);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
