//! The standalone server's `namespaces/status` against kube-apiserver's: a
//! get is the namespace; an update or patch writes the status and the
//! metadata but never `spec`; the phase is held to the namespace's deletion
//! (the same 422 otherwise) and defaulted to `Active`; a strategic merge
//! patch merges conditions by `type` (changed in place, added after, `$patch:
//! delete` removing one); other verbs, a missing namespace and a renaming
//! body are refused alike.

use http::Method;
use serde_json::{Value, json};

use super::namespace_options::{JSON, MERGE, client_of, exchange};
use crate::support::plane;
use crate::support::standalone::Standalone;

const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

/// What is compared of an answer: a Status as it is (code, reason,
/// message, causes), a Namespace by its spec, status, labels and deletion.
fn view((code, body): &(u16, Value)) -> Value {
    if body["kind"] == "Status" {
        return json!({"code": code, "reason": body["reason"], "message": body["message"],
                      "details": body["details"]});
    }
    json!({
        "code": code,
        "kind": body["kind"],
        "spec": body["spec"],
        "status": body["status"],
        "labels": body["metadata"]["labels"],
        "deleting": body["metadata"]["deletionTimestamp"].is_string(),
    })
}

/// The namespace as read through its status, changed by `change`, as the
/// body of a PUT to its status (with its resourceVersion).
async fn read_changed(client: &kube::Client, name: &str, change: impl Fn(&mut Value)) -> String {
    let (code, mut object) = exchange(client, Method::GET, "/NAME/status", JSON, "", name).await;
    assert_eq!(code, 200, "{object}");
    change(&mut object);
    object.to_string()
}

#[tokio::test]
async fn standalone_namespace_status_agrees_with_kube_apiserver() {
    let plane = plane::plane();
    let theirs = plane.client().await;
    let standalone = Standalone::start();
    let ours = client_of(&standalone).await;
    let name = format!("diff-ns-status-{}", std::process::id());
    let created = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"NAME"}}"#;
    for client in [&ours, &theirs] {
        let (code, body) = exchange(client, Method::POST, "", JSON, created, &name).await;
        assert_eq!(code, 201, "{body}");
    }

    // Each step to both servers, in order; the answers must agree, and
    // each must be answered with the code given.
    type Body = Box<dyn Fn(&mut Value)>;
    enum Step {
        Send(Method, &'static str, &'static str, &'static str),
        Put(Body),
    }
    let steps: Vec<(&str, Step, u16)> = vec![
        (
            "get",
            Step::Send(Method::GET, "/NAME/status", JSON, ""),
            200,
        ),
        (
            "get a missing one",
            Step::Send(Method::GET, "/NAME-missing/status", JSON, ""),
            404,
        ),
        (
            "post",
            Step::Send(Method::POST, "/NAME/status", JSON, created),
            405,
        ),
        (
            "delete",
            Step::Send(Method::DELETE, "/NAME/status", JSON, ""),
            405,
        ),
        (
            "merge: metadata and status written, spec not",
            Step::Send(
                Method::PATCH,
                "/NAME/status",
                MERGE,
                r#"{"metadata":{"labels":{"l":"1"}},"spec":{"finalizers":["example.com/x"]},
                    "status":{"conditions":[{"type":"A","status":"True","reason":"Set","message":"by a test"}]}}"#,
            ),
            200,
        ),
        (
            "strategic: a condition of another type is added",
            Step::Send(
                Method::PATCH,
                "/NAME/status",
                STRATEGIC,
                r#"{"status":{"conditions":[{"type":"B","status":"False"}]}}"#,
            ),
            200,
        ),
        (
            "strategic: one of the same type is changed in place",
            Step::Send(
                Method::PATCH,
                "/NAME/status",
                STRATEGIC,
                r#"{"status":{"conditions":[{"type":"A","status":"False","message":null}]}}"#,
            ),
            200,
        ),
        (
            "strategic: $patch delete removes one",
            Step::Send(
                Method::PATCH,
                "/NAME/status",
                STRATEGIC,
                r#"{"status":{"conditions":[{"type":"A","$patch":"delete"}]}}"#,
            ),
            200,
        ),
        (
            "strategic: new ones and a changed one interleaved by the live order",
            Step::Send(
                Method::PATCH,
                "/NAME/status",
                STRATEGIC,
                r#"{"status":{"conditions":[{"type":"E","status":"True"},{"type":"B","reason":"Again"},{"type":"F","status":"False"}]}}"#,
            ),
            200,
        ),
        (
            "strategic: $setElementOrder orders them",
            Step::Send(
                Method::PATCH,
                "/NAME/status",
                STRATEGIC,
                r#"{"status":{"$setElementOrder/conditions":[{"type":"F"},{"type":"B"},{"type":"E"}],
                    "conditions":[{"type":"B","status":"True"}]}}"#,
            ),
            200,
        ),
        (
            "strategic: $patch replace makes the patch's the list",
            Step::Send(
                Method::PATCH,
                "/NAME/status",
                STRATEGIC,
                r#"{"status":{"conditions":[{"$patch":"replace"},{"type":"G","status":"True"},{"type":"B","status":"False"}]}}"#,
            ),
            200,
        ),
        (
            "strategic: the phase held to the deletion",
            Step::Send(
                Method::PATCH,
                "/NAME/status",
                STRATEGIC,
                r#"{"status":{"phase":"Terminating"}}"#,
            ),
            422,
        ),
        (
            "apply: the status applied",
            Step::Send(
                Method::PATCH,
                "/NAME/status?fieldManager=status-test",
                APPLY,
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: NAME}\nstatus:\n  conditions:\n  - {type: C, status: \"True\"}\n",
            ),
            200,
        ),
        (
            "apply: a live one changed in place (forced: a PATCH set it), another manager's kept",
            Step::Send(
                Method::PATCH,
                "/NAME/status?fieldManager=status-other&force=true",
                APPLY,
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: NAME}\nstatus:\n  conditions:\n  - {type: G, status: \"False\", reason: Applied}\n",
            ),
            200,
        ),
        (
            "apply to a missing one",
            Step::Send(
                Method::PATCH,
                "/NAME-missing/status?fieldManager=status-test",
                APPLY,
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: NAME-missing}\n",
            ),
            404,
        ),
        (
            "put: a status without a phase is Active",
            Step::Put(Box::new(|object| {
                object["status"] = json!({"conditions": [{"type": "D", "status": "Unknown"}]});
                object["spec"] = json!({"finalizers": []});
            })),
            200,
        ),
        (
            "put: Terminating while not deleted",
            Step::Put(Box::new(|object| {
                object["status"]["phase"] = json!("Terminating");
            })),
            422,
        ),
        (
            "put: renamed",
            Step::Put(Box::new(|object| {
                object["metadata"]["name"] = json!("other");
            })),
            400,
        ),
    ];
    let mut differ = Vec::new();
    for (what, step, code) in &steps {
        let mut answers = Vec::new();
        for client in [&ours, &theirs] {
            let answer = match step {
                Step::Send(method, path, content_type, body) => {
                    exchange(client, method.clone(), path, content_type, body, &name).await
                }
                Step::Put(change) => {
                    let body = read_changed(client, &name, change).await;
                    exchange(client, Method::PUT, "/NAME/status", JSON, &body, &name).await
                }
            };
            answers.push(view(&answer));
        }
        if answers[0] != answers[1] || answers[1]["code"] != *code {
            differ.push(format!(
                "{what}:\n  ours:   {}\n  theirs: {}",
                answers[0], answers[1]
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));

    // Deleted, the namespace's status may only say Terminating. The plane
    // keeps it Terminating while a finalizer of the test's holds it.
    let held = r#"{"metadata":{"finalizers":["example.com/hold"]}}"#;
    let mut answers = Vec::new();
    for client in [&ours, &theirs] {
        let (code, body) = exchange(client, Method::PATCH, "/NAME", MERGE, held, &name).await;
        assert_eq!(code, 200, "{body}");
        let (code, body) = exchange(client, Method::DELETE, "/NAME", JSON, "", &name).await;
        assert_eq!(code, 200, "{body}");
        let active = r#"{"status":{"phase":"Active"}}"#;
        let refused = exchange(client, Method::PATCH, "/NAME/status", MERGE, active, &name).await;
        answers.push(view(&refused));
        let released = r#"{"metadata":{"finalizers":null}}"#;
        let (code, body) = exchange(client, Method::PATCH, "/NAME", MERGE, released, &name).await;
        assert_eq!(code, 200, "{body}");
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[1]["code"], 422, "{}", answers[1]);
}
