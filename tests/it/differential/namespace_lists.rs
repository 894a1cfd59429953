//! The standalone server's namespace lists against kube-apiserver's: pages
//! of `limit` with a `continue` token that goes on in the snapshot of the
//! first page (a namespace created or relabelled meanwhile is not in it),
//! `remainingItemCount` only without selectors, `resourceVersionMatch=Exact`
//! reading the namespaces as they were, and the refusals of a token that is
//! not one, a token beside a resourceVersion, and a version not reached yet.

use http::Method;
use serde_json::{Value, json};

use super::namespace_finalizers::differences;
use super::namespace_options::{JSON, MERGE, client_of, send};
use super::namespace_watches::{get, without_retries};
use crate::support::plane;
use crate::support::standalone::Standalone;

/// What is compared of a list answer: its code, the names of its items
/// (the run's prefix written `NAME`), whether it continues and its
/// `remainingItemCount`; of a Status, its reason and message.
fn view(code: u16, text: &str, name: &str) -> Value {
    let body: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    if body["kind"] == "Status" {
        return json!({"code": code, "reason": body["reason"], "message": body["message"]});
    }
    let names: Vec<String> = body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|ns| ns["metadata"]["name"].as_str())
        .map(|n| n.replace(name, "NAME"))
        .collect();
    json!({
        "code": code,
        "names": names,
        "continues": body["metadata"]["continue"].is_string(),
        "remainingItemCount": body["metadata"]["remainingItemCount"],
    })
}

#[tokio::test]
async fn namespace_lists_page_and_read_the_past_like_kube_apiserver() {
    let plane = plane::plane();
    // Without kube-rs's retries of a 504 (the answer compared).
    let theirs = without_retries(plane).await;
    let standalone = Standalone::start();
    let ours = client_of(&standalone).await;
    let name = format!("diff-ns-list-{}", std::process::id());
    let selector = format!("difflist%3D{name}");
    let mut answers: [Vec<(String, Value)>; 2] = [Vec::new(), Vec::new()];
    for (client, said) in [&ours, &theirs].into_iter().zip(answers.iter_mut()) {
        // A list sent with `query`, kept as `what` was answered; its body.
        macro_rules! list {
            ($what:expr, $query:expr) => {{
                let query: String = $query;
                let (code, text) = get(client, &format!("/api/v1/namespaces?{query}")).await;
                said.push(($what.to_owned(), view(code, &text, &name)));
                serde_json::from_str::<Value>(&text).unwrap_or(Value::Null)
            }};
        }
        for suffix in ["a", "b", "c"] {
            let body = json!({"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": format!("NAME-{suffix}"), "labels": {"difflist": "NAME"}}});
            let created = send(client, Method::POST, "", "", JSON, &body.to_string(), &name).await;
            assert_eq!(created["code"], 201, "{created}");
        }
        let all = list!("the three", format!("labelSelector={selector}"));
        let listed_rv = all["metadata"]["resourceVersion"]
            .as_str()
            .expect("rv")
            .to_owned();
        let first = list!("a first page", format!("labelSelector={selector}&limit=2"));
        let token = first["metadata"]["continue"]
            .as_str()
            .expect("a token")
            .to_owned();
        // Meanwhile: one more, and one leaves the selector.
        let body = json!({"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": "NAME-d", "labels": {"difflist": "NAME"}}});
        let created = send(client, Method::POST, "", "", JSON, &body.to_string(), &name).await;
        assert_eq!(created["code"], 201, "{created}");
        let relabel = r#"{"metadata":{"labels":{"difflist":"gone"}}}"#;
        let patched = send(client, Method::PATCH, "/NAME-c", "", MERGE, relabel, &name).await;
        assert_eq!(patched["code"], 200, "{patched}");
        list!(
            "the next page, from the first page's snapshot",
            format!("labelSelector={selector}&limit=2&continue={token}")
        );
        list!(
            "as they were",
            format!(
                "labelSelector={selector}&resourceVersion={listed_rv}&resourceVersionMatch=Exact"
            )
        );
        list!("as they are", format!("labelSelector={selector}"));
        // Without a selector, a page counts what remains (each server has
        // namespaces of its own: only that it does is compared).
        let page = list!("one of all", "limit=1".to_owned());
        let counted = &mut said.last_mut().expect("said").1;
        counted["remainingItemCount"] = json!(page["metadata"]["remainingItemCount"].is_number());
        counted["names"] = json!(page["items"].as_array().map(Vec::len));
        list!(
            "a token that is not one",
            "continue=bm90LWEtdG9rZW4".to_owned()
        );
        list!(
            "a token and a resourceVersion",
            format!("continue={token}&resourceVersion={listed_rv}")
        );
        list!(
            "an exact list at 0",
            "resourceVersion=0&resourceVersionMatch=Exact".to_owned()
        );
        list!(
            "a match without a resourceVersion",
            "resourceVersionMatch=NotOlderThan".to_owned()
        );
        let ahead = listed_rv.parse::<u64>().expect("a number") + 1_000_000;
        let answer = list!(
            "a version not reached yet",
            format!("resourceVersion={ahead}&resourceVersionMatch=Exact")
        );
        // The message names each server's own current resourceVersion.
        said.last_mut().expect("said").1["message"] = json!(
            answer["message"]
                .as_str()
                .map(|m| m.split(':').next().unwrap_or(m).to_owned())
        );
        for suffix in ["a", "b", "c", "d"] {
            let path = format!("/NAME-{suffix}");
            let deleted = send(client, Method::DELETE, &path, "", JSON, "", &name).await;
            assert_eq!(deleted["code"], 200, "{deleted}");
        }
    }
    let [ours_said, theirs_said] = answers;
    let differ = differences(&ours_said, &theirs_said);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
