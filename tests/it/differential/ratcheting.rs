//! Validation ratcheting against kube-apiserver's (`CRDValidationRatcheting`,
//! on since 1.33): an object stored under a looser schema is updated under a
//! tightened one. kube-apiserver: a CRD whose schema is tightened after the
//! object was created, and server-side dry-run updates. Ours: the tightened
//! schema, compiled, through `default_and_validate_update` with the stored
//! spec as the old value (what the write path calls). Unchanged values keep
//! their errors to themselves; changed ones are judged; map-list items
//! correlate by key, atomic-list items do not; a CEL rule failing on an
//! unchanged value only warns.

use std::time::{Duration, Instant};

use http::Method;
use kubectl_cozy::kinds::schema::CompiledSchema;
use serde_json::{Value, json};

use super::oracle::{Verdict, causes_of, read};
use crate::support::plane;

/// The schema the object was made under.
fn loose() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string"},
        "note": {"type": "string"},
        "size": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ports": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "port": {"type": "integer"}
            }}
        },
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "limits": {"type": "object", "properties": {"cpu": {"type": "integer"}}}
    }})
}

/// The same, tightened: every value of [`stored`] breaks one rule.
fn tight() -> Value {
    let mut s = loose();
    let p = &mut s["properties"];
    p["name"]["maxLength"] = json!(3);
    p["size"]["maximum"] = json!(10);
    p["tags"]["items"]["maxLength"] = json!(2);
    p["ports"]["items"]["properties"]["port"]["maximum"] = json!(100);
    p["labels"]["additionalProperties"]["maxLength"] = json!(2);
    p["limits"]["x-kubernetes-validations"] =
        json!([{"rule": "self.cpu < 5", "message": "cpu must be below 5"}]);
    s
}

fn stored() -> Value {
    json!({
        "name": "toolong", "note": "a", "size": 50, "tags": ["abc"],
        "ports": [{"name": "a", "port": 500}, {"name": "b", "port": 1}],
        "labels": {"x": "long"}, "limits": {"cpu": 9}
    })
}

/// The updates, each a change of [`stored`].
fn updates() -> Vec<(&'static str, Value)> {
    let with = |f: &dyn Fn(&mut Value)| {
        let mut s = stored();
        f(&mut s);
        s
    };
    vec![
        ("unchanged", stored()),
        ("another field", with(&|s| s["note"] = json!("b"))),
        (
            "the invalid field, still invalid",
            with(&|s| s["name"] = json!("alsolong")),
        ),
        (
            "the invalid field, fixed",
            with(&|s| s["name"] = json!("ok")),
        ),
        ("an atomic list", with(&|s| s["tags"] = json!(["abc", "d"]))),
        (
            "another map-list item",
            with(&|s| s["ports"][1]["port"] = json!(2)),
        ),
        (
            "a map list reordered",
            with(&|s| s["ports"] = json!([{"name": "b", "port": 1}, {"name": "a", "port": 500}])),
        ),
        (
            "a map list item re-keyed",
            with(&|s| s["ports"][0]["name"] = json!("c")),
        ),
        (
            "a map entry added",
            with(&|s| s["labels"]["y"] = json!("ok")),
        ),
        ("a ruled value", with(&|s| s["limits"]["cpu"] = json!(8))),
        ("a ruled object's sibling", with(&|s| s["size"] = json!(60))),
    ]
}

/// `method` `uri` with `body`: the answer's code and body.
async fn call(client: &kube::Client, method: Method, uri: &str, body: &Value) -> (u16, Value) {
    let response = client.send(request(method, uri, body)).await.expect("send");
    let code = response.status().as_u16();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body")
        .to_bytes();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

fn request(method: Method, uri: &str, body: &Value) -> http::Request<kube::client::Body> {
    http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(kube::client::Body::from(
            serde_json::to_vec(body).expect("JSON"),
        ))
        .expect("request")
}

fn crd(group: &str, schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("ratchets.{group}")},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"kind": "Ratchet", "plural": "ratchets", "singular": "ratchet"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": schema}}}}]
        }
    })
}

#[tokio::test]
async fn updates_under_a_tightened_schema_are_ratcheted_like_kube_apiserver() {
    let plane = plane::plane();
    let client = plane.client().await;
    let group = format!("ratchet{}.example.com", std::process::id());
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (code, created) = call(&client, Method::POST, crds, &crd(&group, loose())).await;
    assert_eq!(code, 201, "{created}");
    let ns = plane.namespace("ratchet").await;
    let objects = format!("/apis/{group}/v1/namespaces/{ns}/ratchets");
    let object = json!({"apiVersion": format!("{group}/v1"), "kind": "Ratchet",
                        "metadata": {"name": "r"}, "spec": stored()});
    // The CRD is served a moment after it is created.
    let started = Instant::now();
    let stored_object = loop {
        let (code, body) = call(&client, Method::POST, &objects, &object).await;
        if code == 201 {
            break body;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{code} {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Tightened; served once a create of the stored spec is refused.
    let mut tightened = crd(&group, tight());
    let (_, current) = call(
        &client,
        Method::GET,
        &format!("{crds}/ratchets.{group}"),
        &Value::Null,
    )
    .await;
    tightened["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    let (code, body) = call(
        &client,
        Method::PUT,
        &format!("{crds}/ratchets.{group}"),
        &tightened,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let probe = json!({"apiVersion": format!("{group}/v1"), "kind": "Ratchet",
                       "metadata": {"name": "probe"}, "spec": stored()});
    let started = Instant::now();
    while call(
        &client,
        Method::POST,
        &format!("{objects}?dryRun=All"),
        &probe,
    )
    .await
    .0 != 422
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the tightened schema never served"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let schema = CompiledSchema::new(&tight()).expect("the tightened schema compiles");
    let mut differ = Vec::new();
    let mut theirs_all = Vec::new();
    for (what, spec) in updates() {
        let mut update = stored_object.clone();
        update["spec"] = spec.clone();
        let put = request(Method::PUT, &format!("{objects}/r?dryRun=All"), &update);
        let theirs = read(client.send(put).await.expect("send")).await;

        let mut ours_spec = spec.clone();
        let outcome = schema.default_and_validate_update(&mut ours_spec, Some(&stored()), "spec");
        let ours = if outcome.errors.is_empty() {
            let mut warnings: Vec<String> =
                outcome.ratcheted.iter().map(ToString::to_string).collect();
            warnings.sort();
            Verdict::Accepted {
                spec: ours_spec,
                warnings,
            }
        } else {
            Verdict::Invalid {
                causes: causes_of(&outcome.errors),
            }
        };
        if ours != theirs {
            differ.push(format!("{what}:\n  ours:   {ours:?}\n  theirs: {theirs:?}"));
        }
        theirs_all.push((what, theirs));
    }
    let _ = call(
        &client,
        Method::DELETE,
        &format!("{crds}/ratchets.{group}"),
        &Value::Null,
    )
    .await;
    let _ = call(
        &client,
        Method::DELETE,
        &format!("/api/v1/namespaces/{ns}"),
        &Value::Null,
    )
    .await;
    // Gone before the test ends: doctor's tests find no Terminating
    // namespace of ours.
    let started = Instant::now();
    while call(
        &client,
        Method::GET,
        &format!("/api/v1/namespaces/{ns}"),
        &Value::Null,
    )
    .await
    .0 != 404
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "namespace {ns} still there"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // Not vacuous: kube-apiserver let some through and refused others.
    let accepted = theirs_all.iter().filter(|(_, v)| v.accepted()).count();
    assert!(
        accepted >= 3 && accepted < theirs_all.len(),
        "{theirs_all:?}"
    );
}
