//! Whole writes, sent to both servers: the same requests (create, update,
//! merge and JSON patch, server-side apply, delete) to our server through
//! the real aggregator (the shared cluster-backed server with the example
//! kinds, apps stored as HelmReleases) and to kube-apiserver serving the
//! Postgres kind's schema as a CRD (under a group of its own, with the
//! status our OpenAPI publishes and a status subresource, as our main
//! resource treats status). The answers must agree: status code, reason,
//! message (the group named alike), warnings, a Status's details, and of
//! an accepted object its spec, labels, managedFields (but their times),
//! generation and whether its resourceVersion moved. (Not its status: an
//! app's is its HelmRelease's, which Flux's CRD defaults.)

use std::sync::OnceLock;

use http::{Method, Request};
use http_body_util::BodyExt as _;
use kubectl_cozy::kinds::Registry;
use serde_json::{Value, json};

use super::oracle::crd_schema;
use crate::support::aggregated::aggregated;
use crate::support::plane;

/// Our group (the shared aggregated server's).
const OURS: &str = "apps.cozystack.io";
/// The CRD's group on kube-apiserver.
const THEIRS: &str = "postgres.writes.diff.cozystack.io";
const VERSION: &str = "v1alpha1";

/// One answer, normalised for the comparison.
#[derive(Debug, Clone)]
struct Answer {
    code: u16,
    reason: String,
    message: String,
    warnings: Vec<String>,
    /// Of a Status: its `details` (causes and all).
    details: Value,
    /// Of an accepted object: spec, labels, managedFields without times,
    /// generation and resourceVersion; of a list, also its items' names.
    object: Value,
    /// Of a list that continues, its `continue` token (each server's own:
    /// not compared).
    token: String,
}

impl PartialEq for Answer {
    fn eq(&self, other: &Answer) -> bool {
        (
            self.code,
            &self.reason,
            &self.message,
            &self.warnings,
            &self.details,
            &self.object,
        ) == (
            other.code,
            &other.reason,
            &other.message,
            &other.warnings,
            &other.details,
            &other.object,
        )
    }
}

/// Both servers, each with a namespace of its own for one test.
struct Both {
    client: kube::Client,
    ours_ns: String,
    theirs_ns: String,
}

/// Installs the CRD once per test binary.
fn crd_installed() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let kinds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds");
        let registry = Registry::from_path(&kinds).expect("kinds");
        let snapshot = registry.snapshot();
        let kind = snapshot
            .kinds()
            .iter()
            .find(|k| k.resolved.definition.kind == "Postgres")
            .expect("Postgres")
            .clone();
        let d = &kind.resolved.definition;
        let spec = crd_schema(&d.open_api_schema, &mut Vec::new());
        let manifest = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{}.{THEIRS}", d.plural)},
            "spec": {
                "group": THEIRS,
                "scope": "Namespaced",
                "names": {"kind": d.kind, "plural": d.plural, "singular": d.singular},
                "versions": [{
                    "name": VERSION, "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": spec,
                        "status": published_status(),
                    }}}
                }]
            }
        });
        super::install(plane::plane(), &manifest, &format!("{}.{THEIRS}", d.plural));
    });
}

/// The status schema our server publishes (OpenAPI v3), read through the
/// aggregator (which may take a while to pick up a new APIService's document).
fn published_status() -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let out = loop {
        let out = plane::plane()
            .kubectl()
            .args([
                "get",
                "--raw",
                &format!("/openapi/v3/apis/{OURS}/{VERSION}"),
            ])
            .output()
            .expect("kubectl");
        if out.status.success() {
            break out;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    let doc: Value = serde_json::from_slice(&out.stdout).expect("OpenAPI v3");
    let mut status =
        doc["components"]["schemas"]["io.cozystack.apps.v1alpha1.Postgres"]["properties"]["status"]
            .clone();
    assert!(status.is_object(), "no status in {doc}");
    strip_descriptions(&mut status);
    status
}

fn strip_descriptions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.shift_remove("description");
            m.values_mut().for_each(strip_descriptions);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

impl Both {
    async fn new(prefix: &str) -> Both {
        let _ = aggregated();
        crd_installed();
        let plane = plane::plane();
        Both {
            client: plane.client().await,
            ours_ns: plane.namespace(&format!("{prefix}-ours")).await,
            theirs_ns: plane.namespace(&format!("{prefix}-ref")).await,
        }
    }

    /// Sends one request to both: `path` after `.../namespaces/<ns>/postgreses`
    /// (`""` or `/name`), `query` without `?`, `body` with `APIVERSION` in
    /// place of the apiVersion.
    async fn send(
        &self,
        method: Method,
        path: &str,
        query: &str,
        content_type: &str,
        body: &str,
    ) -> (Answer, Answer) {
        let ours = self
            .one(
                OURS,
                &self.ours_ns,
                method.clone(),
                path,
                query,
                content_type,
                body,
            )
            .await;
        let theirs = self
            .one(
                THEIRS,
                &self.theirs_ns,
                method,
                path,
                query,
                content_type,
                body,
            )
            .await;
        (ours, theirs)
    }

    /// Applies each configuration of `cases` (`APPNAME` standing for the
    /// app's name) to `p1`, which exists, and to `p2`, which does not,
    /// with each query of `queries` after `fieldManager=m`: the answers
    /// must agree, and be kube-apiserver's 500.
    async fn applies_answer_500(&self, queries: &[&str], cases: &[(&str, String)]) {
        for query in queries {
            for (what, config) in cases {
                for name in ["p1", "p2"] {
                    let a = self
                        .agree(
                            &format!("{what}, {name}, {query:?}"),
                            Method::PATCH,
                            &format!("/{name}"),
                            &format!("fieldManager=m{query}"),
                            APPLY,
                            &config.replace("APPNAME", name),
                        )
                        .await;
                    assert_eq!(a.code, 500, "{what}: {a:?}");
                }
            }
        }
    }

    /// [`Both::send`], and the two answers must agree.
    async fn agree(
        &self,
        what: &str,
        method: Method,
        path: &str,
        query: &str,
        content_type: &str,
        body: &str,
    ) -> Answer {
        let (ours, theirs) = self.send(method, path, query, content_type, body).await;
        assert_eq!(
            ours, theirs,
            "{what}: ours (left) and kube-apiserver's (right) differ"
        );
        ours
    }

    #[allow(clippy::too_many_arguments, reason = "one request, spelt out")]
    async fn one(
        &self,
        group: &str,
        namespace: &str,
        method: Method,
        path: &str,
        query: &str,
        content_type: &str,
        body: &str,
    ) -> Answer {
        let uri = format!(
            "/apis/{group}/{VERSION}/namespaces/{namespace}/postgreses{path}{}{query}",
            if query.is_empty() { "" } else { "?" }
        );
        let body = body
            .replace("APIVERSION", &format!("{group}/{VERSION}"))
            .replace("NAMESPACE", namespace);
        let request = Request::builder()
            .method(method)
            .uri(&uri)
            .header("content-type", content_type)
            .body(kube::client::Body::from(body.into_bytes()))
            .expect("request");
        let response = self.client.send(request).await.expect("send");
        let code = response.status().as_u16();
        let warnings = response
            .headers()
            .get_all(http::header::WARNING)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let normal = |s: &str| s.replace(group, "GROUP").replace(namespace, "NAMESPACE");
        let text = |key: &str| normal(body.get(key).and_then(Value::as_str).unwrap_or_default());
        let object = if body.get("kind").and_then(Value::as_str) == Some("Status") {
            Value::Null
        } else {
            let meta = &body["metadata"];
            let mut managed: Vec<Value> = meta["managedFields"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| {
                    let mut e = e.clone();
                    e.as_object_mut().expect("entry").shift_remove("time");
                    serde_json::from_str(&normal(&e.to_string())).expect("JSON")
                })
                .collect();
            // kube sorts entries by operation, then time to the second,
            // then manager: two writes a moment apart fall in one second on
            // one server and in two on the other, so the times (left out)
            // cannot order them here; the rest of kube's order can.
            let key = |e: &Value| {
                ["operation", "manager", "apiVersion", "subresource"]
                    .map(|k| e[k].as_str().unwrap_or_default().to_owned())
            };
            managed.sort_by_key(key);
            let mut object = json!({
                "spec": body["spec"],
                "labels": meta["labels"],
                "managedFields": managed,
                "generation": meta["generation"],
                "resourceVersion": meta["resourceVersion"],
            });
            // Of a list: the names of its items, whether it continues and
            // how many items kube-apiserver says the next pages hold.
            if let Some(items) = body.get("items").and_then(Value::as_array) {
                object["items"] = items
                    .iter()
                    .map(|i| i["metadata"]["name"].clone())
                    .collect();
                object["continues"] =
                    json!(meta["continue"].as_str().is_some_and(|c| !c.is_empty()));
                object["remainingItemCount"] = meta["remainingItemCount"].clone();
            }
            object
        };
        let details = match body.get("details") {
            Some(d) if body.get("kind").and_then(Value::as_str) == Some("Status") => {
                serde_json::from_str(&normal(&d.to_string())).expect("JSON")
            }
            _ => Value::Null,
        };
        let token = body["metadata"]["continue"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        Answer {
            token,
            code,
            reason: text("reason"),
            message: text("message"),
            warnings,
            details,
            object,
        }
    }
}

/// `resourceVersion` of an accepted answer.
fn rv(a: &Answer) -> String {
    a.object["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The answers agree on everything but the resourceVersions themselves
/// (each server counts its own): those are compared as moved or not.
fn without_rv(mut a: Answer) -> Answer {
    if let Some(m) = a.object.as_object_mut() {
        let had = m
            .shift_remove("resourceVersion")
            .is_some_and(|v| v.is_string());
        m.insert("hasResourceVersion".into(), json!(had));
    }
    a
}

impl Both {
    /// A server-side apply by `kubectl` of the Postgres `name` whose spec
    /// is the YAML lines `spec`, on both servers (their answers must agree
    /// but for resourceVersions).
    async fn apply_postgres(&self, what: &str, name: &str, spec: &str) -> (Answer, Answer) {
        let body = format!(
            "apiVersion: APIVERSION\nkind: Postgres\nmetadata:\n  name: {name}\nspec:\n{spec}"
        );
        self.agree_but_rv(
            what,
            Method::PATCH,
            &format!("/{name}"),
            "fieldManager=kubectl",
            APPLY,
            &body,
        )
        .await
    }

    /// Each `(label, body)` sent as a dry-run create and as a dry-run
    /// update of `p1`: the cases whose answers differ (code, reason and
    /// message, and `details` when `with_details`), or whose code from
    /// kube-apiserver is not `code`.
    async fn refusals_differing(
        &self,
        cases: &[(String, String)],
        code: u16,
        with_details: bool,
    ) -> Vec<String> {
        let mut differ = Vec::new();
        for (label, body) in cases {
            for (method, path) in [(Method::POST, ""), (Method::PUT, "/p1")] {
                let (ours, theirs) = self
                    .send(method.clone(), path, "dryRun=All", JSON, body)
                    .await;
                let answer = |a: &Answer| {
                    (
                        a.code,
                        a.reason.clone(),
                        a.message.clone(),
                        with_details.then(|| a.details.clone()),
                    )
                };
                if answer(&ours) != answer(&theirs) || theirs.code != code {
                    differ.push(format!(
                        "{method} {label}:\n  ours:   {:?}\n  theirs: {:?}",
                        answer(&ours),
                        answer(&theirs)
                    ));
                }
            }
        }
        differ
    }

    /// Creates a Postgres of each name with an empty spec on both servers
    /// (their answers must agree).
    async fn create_postgreses(&self, names: &[&str]) {
        for name in names {
            self.agree_but_rv(
                "create",
                Method::POST,
                "",
                "",
                JSON,
                &json!({"apiVersion": "APIVERSION", "kind": "Postgres",
                        "metadata": {"name": name}, "spec": {}})
                .to_string(),
            )
            .await;
        }
    }

    /// [`Both::agree`], resourceVersions compared as present or not.
    async fn agree_but_rv(
        &self,
        what: &str,
        method: Method,
        path: &str,
        query: &str,
        content_type: &str,
        body: &str,
    ) -> (Answer, Answer) {
        let (ours, theirs) = self.send(method, path, query, content_type, body).await;
        assert_eq!(
            without_rv(ours.clone()),
            without_rv(theirs.clone()),
            "{what}: ours (left) and kube-apiserver's (right) differ"
        );
        (ours, theirs)
    }
}

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";
const JSON_PATCH: &str = "application/json-patch+json";

/// Unknown fields at the top level, in metadata (nested ones too), in
/// status and in spec: one 400 naming them all under Strict (create and
/// update), a warning each under Warn and without the parameter, nothing
/// under Ignore; dropped from the object and owned by nobody.
#[tokio::test]
async fn unknown_fields_outside_spec_agree_with_kube_apiserver() {
    let both = Both::new("diff-unknown").await;
    let body = |name: &str| {
        json!({
            "zeta": 1,
            "apiVersion": "APIVERSION", "kind": "Postgres",
            "metadata": {"name": name, "lables": {"team": "a"}, "zz": 1},
            "sepc": {"replicas": 5},
            "spec": {"replicas": 3, "users-": 1, "users": {"u": {"zz": 1}}},
            "status": {"foo": 1},
            "alpha": 2
        })
        .to_string()
    };
    let strict = both
        .agree(
            "create, Strict",
            Method::POST,
            "",
            "fieldValidation=Strict",
            JSON,
            &body("strict"),
        )
        .await;
    assert_eq!(strict.code, 400, "{strict:?}");
    for (name, query) in [
        ("warn", "fieldValidation=Warn"),
        ("default", ""),
        ("ignore", "fieldValidation=Ignore"),
    ] {
        let (ours, _) = both
            .agree_but_rv(
                &format!("create, {query:?}"),
                Method::POST,
                "",
                query,
                JSON,
                &body(name),
            )
            .await;
        assert_eq!(ours.code, 201, "{ours:?}");
        let owned = ours.object["managedFields"].to_string();
        for phantom in ["sepc", "lables", "zz", "zeta", "f:status"] {
            assert!(!owned.contains(phantom), "{phantom} owned: {owned}");
        }
    }
    // An update with them: the same 400, and the same warnings.
    let get = |ns: &str, group: &str| {
        let out = plane::plane()
            .kubectl()
            .args([
                "get",
                "--raw",
                &format!("/apis/{group}/{VERSION}/namespaces/{ns}/postgreses/warn"),
            ])
            .output()
            .expect("kubectl");
        serde_json::from_slice::<Value>(&out.stdout).expect("object")
    };
    let ours = get(&both.ours_ns, OURS);
    let theirs = get(&both.theirs_ns, THEIRS);
    let mut typo: Value = serde_json::from_str(&body("warn")).unwrap();
    for (mode, expected) in [("Strict", 400), ("Warn", 200)] {
        // Each sends back its own object (its resourceVersion) with the typos.
        let mut to = |object: &Value| {
            typo["metadata"]["resourceVersion"] = object["metadata"]["resourceVersion"].clone();
            typo.to_string()
        };
        let (ours_body, theirs_body) = (to(&ours), to(&theirs));
        let a = both
            .one(
                OURS,
                &both.ours_ns,
                Method::PUT,
                "/warn",
                &format!("fieldValidation={mode}"),
                JSON,
                &ours_body,
            )
            .await;
        let b = both
            .one(
                THEIRS,
                &both.theirs_ns,
                Method::PUT,
                "/warn",
                &format!("fieldValidation={mode}"),
                JSON,
                &theirs_body,
            )
            .await;
        assert_eq!(a.code, expected, "{a:?}");
        assert_eq!(
            without_rv(a),
            without_rv(b),
            "update, {mode}: ours (left) and kube-apiserver's (right) differ"
        );
    }
    // A merge patch under Strict: kube-apiserver's 422 quoting the patched
    // object (which differs between the servers: uid, times); the rest agrees.
    let (ours, theirs) = both
        .send(
            Method::PATCH,
            "/warn",
            "fieldValidation=Strict",
            MERGE,
            r#"{"sepc":1,"metadata":{"lables":{"a":"b"}},"spec":{"bogus":1}}"#,
        )
        .await;
    let tail = |a: &Answer| {
        a.message
            .split_once("\": strict decoding error: ")
            .map(|(_, t)| t.to_owned())
    };
    assert_eq!(
        (ours.code, ours.reason.as_str()),
        (422, "Invalid"),
        "{ours:?}"
    );
    assert_eq!((ours.code, &ours.reason), (theirs.code, &theirs.reason));
    assert!(
        ours.message
            .starts_with(" \"\" is invalid: patch: Invalid value: \"{"),
        "{ours:?}"
    );
    assert!(
        theirs
            .message
            .starts_with(" \"\" is invalid: patch: Invalid value: \"{"),
        "{theirs:?}"
    );
    assert_eq!(tail(&ours), tail(&theirs));
    assert!(tail(&ours).is_some(), "{ours:?}");
}

/// The field manager sees the object as stored: a create owns the defaults
/// it got (so an apply of another value for one conflicts), and fields
/// dropped (pruned, status) are owned by nobody.
#[tokio::test]
async fn managed_fields_of_defaults_and_dropped_fields_agree_with_kube_apiserver() {
    let both = Both::new("diff-owned").await;
    let created = |name: &str, spec: Value| {
        json!({"apiVersion": "APIVERSION", "kind": "Postgres",
               "metadata": {"name": name}, "spec": spec, "status": {"version": "1.0"}})
        .to_string()
    };
    both.agree_but_rv(
        "kubectl create",
        Method::POST,
        "",
        "fieldManager=kubectl-create&fieldValidation=Strict",
        JSON,
        &created("p1", json!({"replicas": 3})),
    )
    .await;
    let applied =
        "apiVersion: APIVERSION\nkind: Postgres\nmetadata: {name: p1}\nspec: {version: \"16\"}\n";
    let conflict = both
        .agree(
            "apply of a defaulted field",
            Method::PATCH,
            "/p1",
            "fieldManager=ops&fieldValidation=Strict",
            APPLY,
            applied,
        )
        .await;
    assert_eq!(conflict.code, 409, "{conflict:?}");
    // Forced, it moves to the applier.
    both.agree_but_rv(
        "forced apply",
        Method::PATCH,
        "/p1",
        "fieldManager=ops&force=true",
        APPLY,
        applied,
    )
    .await;
    // A pruned field in a create (Warn): dropped, owned by nobody.
    both.agree_but_rv(
        "create with a pruned field",
        Method::POST,
        "",
        "fieldManager=kubectl-create",
        JSON,
        &created("p2", json!({"replicas": 3, "unknown": {"a": 1}})),
    )
    .await;
}

/// Writes that change nothing — a merge patch of a field that is pruned,
/// or of the value already there, an update of the object as it is —
/// answer the object as it is, resourceVersion and managedFields unchanged
/// (kubectl prints `patched (no change)`), and our server writes no
/// HelmRelease. (The value already there written as a float does change
/// it, as it changes a custom resource.)
#[tokio::test]
async fn writes_that_change_nothing_agree_with_kube_apiserver() {
    let both = Both::new("diff-noop").await;
    let (ours0, theirs0) = both
        .agree_but_rv(
            "create",
            Method::POST,
            "",
            "fieldManager=kubectl-create",
            JSON,
            &json!({"apiVersion": "APIVERSION", "kind": "Postgres",
                    "metadata": {"name": "p1", "labels": {"team": "a"}}, "spec": {"replicas": 3}})
            .to_string(),
        )
        .await;
    let release_rv = || {
        let out = plane::plane()
            .kubectl()
            .args([
                "get",
                "helmreleases.helm.toolkit.fluxcd.io",
                "-n",
                &both.ours_ns,
                "postgres-p1",
                "-o",
                "jsonpath={.metadata.resourceVersion}",
            ])
            .output()
            .expect("kubectl");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let release_before = release_rv();
    assert!(!release_before.is_empty(), "no HelmRelease postgres-p1");
    for (what, patch) in [
        ("a pruned field", r#"{"spec":{"unknown":1}}"#),
        ("the same value", r#"{"spec":{"replicas":3}}"#),
        ("the same label", r#"{"metadata":{"labels":{"team":"a"}}}"#),
        ("a default's own value", r#"{"spec":{"version":"17"}}"#),
    ] {
        let (ours, theirs) = both
            .agree_but_rv(
                what,
                Method::PATCH,
                "/p1",
                "fieldManager=kubectl-patch",
                MERGE,
                patch,
            )
            .await;
        assert_eq!(ours.code, 200, "{what}: {ours:?}");
        assert_eq!(rv(&theirs), rv(&theirs0), "{what}: kube-apiserver's moved");
        assert_eq!(rv(&ours), rv(&ours0), "{what}: ours moved");
        assert_eq!(ours.object, ours0.object, "{what}");
    }
    assert_eq!(release_rv(), release_before, "a HelmRelease was written");
    // `3.0` over `3` is a change to kube-apiserver, whose semantic equality
    // tells a float64 from an int64: a new generation and version, though
    // `3` is what it stores.
    let (ours, theirs) = both
        .agree_but_rv(
            "the same value as a float",
            Method::PATCH,
            "/p1",
            "fieldManager=kubectl-patch",
            MERGE,
            r#"{"spec":{"replicas":3.0}}"#,
        )
        .await;
    assert_ne!(rv(&theirs), rv(&theirs0), "kube-apiserver's did not move");
    assert_ne!(rv(&ours), rv(&ours0), "ours did not move");
    assert_eq!(ours.object["generation"], 2, "{ours:?}");
    assert_eq!(ours.object["spec"]["replicas"].to_string(), "3", "{ours:?}");
}

/// The small ones: a server-side dry-run create has no resourceVersion; a
/// delete held by a finalizer bumps the generation (once); a merge patch
/// that is not a JSON object is refused with kube-apiserver's message.
#[tokio::test]
async fn dry_runs_finalizers_and_bad_merge_patches_agree_with_kube_apiserver() {
    let both = Both::new("diff-small").await;
    let object = |name: &str, finalizers: Value| {
        json!({"apiVersion": "APIVERSION", "kind": "Postgres",
               "metadata": {"name": name, "finalizers": finalizers}, "spec": {}})
        .to_string()
    };
    let (dry, _) = both
        .agree_but_rv(
            "dry-run create",
            Method::POST,
            "",
            "dryRun=All",
            JSON,
            &object("dry", json!([])),
        )
        .await;
    assert_eq!(dry.code, 201, "{dry:?}");
    assert_eq!(rv(&dry), "", "{dry:?}");

    both.agree_but_rv(
        "create held by a finalizer",
        Method::POST,
        "",
        "",
        JSON,
        &object("held", json!(["example.com/hold"])),
    )
    .await;
    for attempt in ["first", "second"] {
        let (ours, _) = both
            .agree_but_rv(
                &format!("{attempt} delete"),
                Method::DELETE,
                "/held",
                "",
                JSON,
                "",
            )
            .await;
        assert_eq!(ours.object["generation"], 2, "{ours:?}");
    }
    let again = both
        .agree(
            "create while it is being deleted",
            Method::POST,
            "",
            "",
            JSON,
            &object("held", json!([])),
        )
        .await;
    assert_eq!(again.code, 409, "{again:?}");
    assert!(
        again.message.starts_with("object is being deleted: "),
        "{again:?}"
    );
    // Let it go.
    both.send(
        Method::PATCH,
        "/held",
        "",
        MERGE,
        r#"{"metadata":{"finalizers":null}}"#,
    )
    .await;

    both.agree_but_rv(
        "create",
        Method::POST,
        "",
        "",
        JSON,
        &object("p1", json!([])),
    )
    .await;
    for body in ["[1,2]", "\"x\"", "5", "null"] {
        let bad = both
            .agree(
                &format!("merge patch {body}"),
                Method::PATCH,
                "/p1",
                "",
                MERGE,
                body,
            )
            .await;
        assert_eq!(bad.code, 400, "{bad:?}");
    }
}

/// JSON patches that do not decode or do not apply, as
/// gopkg.in/evanphx/json-patch.v4 under kube-apiserver answers them: a
/// body that does not decode is 400 (`error decoding patch: ...` unless
/// `fieldValidation=Ignore`, which words the library's own decoding), an
/// operation that does not apply is 422 with the generic message and no
/// causes; and its leniencies: `null` is an empty patch, a missing `value`
/// is `null`, `replace` of a missing key and `copy` from one add `null`,
/// indices may be negative or have leading zeros, a `test` of a missing key
/// against `null` passes. Strategic merge patch is 415, and merge patches
/// that are not JSON word Go's syntax errors.
#[tokio::test]
async fn bad_json_patches_agree_with_kube_apiserver() {
    let both = Both::new("diff-jsonpatch").await;
    let extensions = |list: Value| {
        json!({"apiVersion": "APIVERSION", "kind": "Postgres",
        "metadata": {"name": "p1", "labels": {"a": "1"}},
        "spec": {"replicas": 2, "databases": {"d": {"extensions": list}}}})
    };
    both.agree_but_rv(
        "create",
        Method::POST,
        "",
        "",
        JSON,
        &extensions(json!(["a", "b"])).to_string(),
    )
    .await;
    let ext = "/spec/databases/d/extensions";
    let patches: Vec<(&str, String)> = vec![
        ("malformed", "[{".into()),
        ("empty", String::new()),
        ("not JSON", "x".into()),
        ("trailing", "[] x".into()),
        ("bare key", "[{op:1}]".into()),
        ("an object", r#"{"op":"add"}"#.into()),
        ("a string", "\"x\"".into()),
        ("null", "null".into()),
        ("a number in the array", "[1]".into()),
        ("an array in the array", "[[1]]".into()),
        ("null in the array", "[null]".into()),
        ("op a number", r#"[{"op":1,"path":"/spec/replicas"}]"#.into()),
        ("path a number", r#"[{"op":"remove","path":1}]"#.into()),
        ("from a number", r#"[{"op":"move","from":2,"path":"/spec/x"}]"#.into()),
        ("unknown op", r#"[{"op":"frob","path":"/spec/replicas"}]"#.into()),
        ("no op", r#"[{"path":"/spec/replicas"}]"#.into()),
        ("Op", r#"[{"Op":"replace","path":"/spec/replicas","value":4}]"#.into()),
        ("add without path", r#"[{"op":"add","value":1}]"#.into()),
        ("path without slash", r#"[{"op":"remove","path":"spec"}]"#.into()),
        ("move without from", r#"[{"op":"move","path":"/spec/x"}]"#.into()),
        ("copy without from", r#"[{"op":"copy","path":"/spec/x"}]"#.into()),
        ("failed test", r#"[{"op":"test","path":"/spec/replicas","value":3}]"#.into()),
        ("test of 2 as 2.0", r#"[{"op":"test","path":"/spec/replicas","value":2.0}]"#.into()),
        ("test without value", r#"[{"op":"test","path":"/spec/replicas"}]"#.into()),
        ("test of a missing key", r#"[{"op":"test","path":"/spec/nope","value":1}]"#.into()),
        ("test of a missing key as null", r#"[{"op":"test","path":"/spec/nope","value":null}]"#.into()),
        ("test of a missing key without value", r#"[{"op":"test","path":"/spec/nope"}]"#.into()),
        ("test after a replace", r#"[{"op":"replace","path":"/spec/replicas","value":4},{"op":"test","path":"/spec/replicas","value":3}]"#.into()),
        ("remove of a missing key", r#"[{"op":"remove","path":"/spec/nope"}]"#.into()),
        ("remove under a missing key", r#"[{"op":"remove","path":"/spec/nope/deeper"}]"#.into()),
        ("add under a missing key", r#"[{"op":"add","path":"/spec/nope/x","value":1}]"#.into()),
        ("add under a scalar", r#"[{"op":"add","path":"/spec/replicas/x","value":1}]"#.into()),
        ("move of a missing key", r#"[{"op":"move","from":"/spec/nope","path":"/spec/x"}]"#.into()),
        ("move into itself", r#"[{"op":"move","from":"/spec","path":"/spec/x"}]"#.into()),
        ("add at the root", r#"[{"op":"add","path":"","value":{}}]"#.into()),
        ("remove of the root", r#"[{"op":"remove","path":""}]"#.into()),
        ("test of the root", r#"[{"op":"test","path":"","value":{}}]"#.into()),
        ("replace of the root by an array", r#"[{"op":"replace","path":"","value":[1]}]"#.into()),
        ("replace of the root by null", r#"[{"op":"replace","path":"","value":null}]"#.into()),
        ("replace of the root by a string", r#"[{"op":"replace","path":"","value":"x"}]"#.into()),
        ("replace past the end", format!(r#"[{{"op":"replace","path":"{ext}/2","value":"c"}}]"#)),
        ("remove past the end", format!(r#"[{{"op":"remove","path":"{ext}/5"}}]"#)),
        ("add past the end", format!(r#"[{{"op":"add","path":"{ext}/3","value":"c"}}]"#)),
        ("add at a non-index", format!(r#"[{{"op":"add","path":"{ext}/x","value":"c"}}]"#)),
        ("remove before the start", format!(r#"[{{"op":"remove","path":"{ext}/-3"}}]"#)),
        ("replace at -", format!(r#"[{{"op":"replace","path":"{ext}/-","value":"c"}}]"#)),
        // What evanphx/json-patch.v4 accepts.
        ("an empty patch", "[]".into()),
        ("add without value", r#"[{"op":"add","path":"/spec/replicas"}]"#.into()),
        ("replace without value", r#"[{"op":"replace","path":"/spec/replicas"}]"#.into()),
        ("replace of a missing key", r#"[{"op":"replace","path":"/spec/nope","value":1}]"#.into()),
        ("copy of a missing key", r#"[{"op":"copy","from":"/spec/nope","path":"/spec/x"}]"#.into()),
        ("negative indices", format!(
            r#"[{{"op":"replace","path":"{ext}/-1","value":"c"}},{{"op":"add","path":"{ext}/-1","value":"d"}},{{"op":"remove","path":"{ext}/-3"}},{{"op":"test","path":"{ext}/-1","value":"d"}}]"#
        )),
        ("leading zeros and signs", format!(
            r#"[{{"op":"replace","path":"{ext}/01","value":"e"}},{{"op":"test","path":"{ext}/+1","value":"e"}},{{"op":"add","path":"{ext}/+0","value":"f"}}]"#
        )),
        ("an unknown field in an operation", r#"[{"op":"replace","path":"/spec/replicas","value":4,"extra":1}]"#.into()),
        ("a repeated field in an operation", r#"[{"op":"replace","path":"/spec/replicas","value":4,"value":5}]"#.into()),
        ("a repeated key in a value", r#"[{"op":"replace","path":"/metadata/labels","value":{"a":"1","a":"2"}}]"#.into()),
    ];
    for query in ["", "fieldValidation=Ignore"] {
        for (what, patch) in &patches {
            both.agree_but_rv(
                &format!("{what} ({query:?})"),
                Method::PATCH,
                "/p1",
                query,
                JSON_PATCH,
                patch,
            )
            .await;
        }
        // Back to the same object for the next round.
        both.agree_but_rv(
            "reset",
            Method::PATCH,
            "/p1",
            "",
            MERGE,
            &json!({"spec": {"replicas": 2, "databases": {"d": {"extensions": ["a", "b"]}}}})
                .to_string(),
        )
        .await;
    }
    let codes = |patch: &str, query: &'static str| {
        let both = &both;
        let patch = patch.to_owned();
        async move {
            both.agree_but_rv(&patch, Method::PATCH, "/p1", query, JSON_PATCH, &patch)
                .await
                .0
                .code
        }
    };
    assert_eq!(codes("null", "").await, 200);
    assert_eq!(codes("[null]", "").await, 422);
    assert_eq!(codes(r#"[{"op":1,"path":"/spec"}]"#, "").await, 400);
    assert_eq!(
        codes(r#"[{"op":1,"path":"/spec"}]"#, "fieldValidation=Ignore").await,
        422
    );
    assert_eq!(
        codes(r#"[{"op":"add","path":"","value":{}}]"#, "").await,
        422
    );

    // Under Strict, an operation's unknown field is refused with the
    // patched object quoted (which differs between the servers: uid,
    // times); the rest agrees.
    let (ours, theirs) = both
        .send(
            Method::PATCH,
            "/p1",
            "fieldValidation=Strict",
            JSON_PATCH,
            r#"[{"op":"replace","path":"/spec/replicas","value":4,"extra":1,"op":"replace"}]"#,
        )
        .await;
    let tail = |a: &Answer| {
        a.message
            .split_once("\": strict decoding error: ")
            .map(|(_, t)| t.to_owned())
    };
    assert_eq!(
        (ours.code, &ours.reason),
        (422, &"Invalid".to_owned()),
        "{ours:?}"
    );
    assert_eq!((ours.code, &ours.reason), (theirs.code, &theirs.reason));
    assert_eq!(tail(&ours), tail(&theirs), "{ours:?} {theirs:?}");
    assert!(tail(&ours).is_some(), "{ours:?}");

    for (what, content_type, body) in [
        (
            "strategic merge patch",
            "application/strategic-merge-patch+json",
            r#"{"spec":{}}"#,
        ),
        ("plain text", "text/plain", r#"{"spec":{}}"#),
        ("merge patch, not JSON", MERGE, "x"),
        ("merge patch, trailing", MERGE, "{} x"),
        ("merge patch, malformed", MERGE, "{"),
        ("merge patch, a bare key", MERGE, "{a:1}"),
        ("merge patch, a bad escape", MERGE, r#"{"a":"\x"}"#),
        ("merge patch, a bad number", MERGE, r#"{"a":-x}"#),
        ("merge patch, a bad literal", MERGE, r#"{"a":tru}"#),
    ] {
        both.agree(what, Method::PATCH, "/p1", "", content_type, body)
            .await;
    }
    // Under Ignore only evanphx/json-patch reads a merge patch.
    for body in ["x", "{", "", "5", "\"x\"", "null", "[1,null]", "[]"] {
        both.agree(
            &format!("merge patch {body:?} under Ignore"),
            Method::PATCH,
            "/p1",
            "fieldValidation=Ignore",
            MERGE,
            body,
        )
        .await;
    }
}

/// Server-side apply of a configuration with a field its schema does not
/// declare (in spec, in a typed object under it, in metadata, at the top,
/// in status): kube-apiserver's field manager fails to build the typed
/// patch and answers 500 with structured-merge-diff's message, whatever
/// `fieldValidation` and `force` say, on create and on update; nothing is
/// stored and nobody owns anything.
#[tokio::test]
async fn applies_with_undeclared_fields_agree_with_kube_apiserver() {
    let both = Both::new("diff-apply-unknown").await;
    let applied = |name: &str, meta: &str, top: &str, spec: &str| {
        format!(
            "apiVersion: APIVERSION\nkind: Postgres\nmetadata:\n  name: {name}\n{meta}{top}spec:\n  replicas: 2\n{spec}"
        )
    };
    let created = both
        .agree_but_rv(
            "apply",
            Method::PATCH,
            "/p1",
            "fieldManager=m",
            APPLY,
            &applied("p1", "", "", ""),
        )
        .await
        .0;
    assert_eq!(created.code, 201, "{created:?}");
    let cases: Vec<(&str, String)> = [
        ("spec.sepc", "", "", "  sepc: 1\n"),
        ("spec.backup.bogus", "", "", "  backup:\n    bogus: 1\n"),
        ("spec.users.u.zz", "", "", "  users:\n    u:\n      zz: 1\n"),
        ("metadata.lables", "  lables: {a: b}\n", "", ""),
        ("sepc", "", "sepc: 1\n", ""),
        ("status.foo", "", "status: {foo: 1}\n", ""),
        (
            "metadata.namespace and spec.sepc",
            "  namespace: NAMESPACE\n",
            "",
            "  sepc: 1\n",
        ),
    ]
    .into_iter()
    .map(|(what, meta, top, spec)| (what, applied("APPNAME", meta, top, spec)))
    .collect();
    both.applies_answer_500(
        &[
            "",
            "&fieldValidation=Strict",
            "&fieldValidation=Warn",
            "&fieldValidation=Ignore",
            "&force=true",
            "&fieldValidation=Strict&force=true",
        ],
        &cases,
    )
    .await;
    // Declared free-form places take anything.
    let (ok, _) = both
        .agree_but_rv(
            "preserved unknown fields",
            Method::PATCH,
            "/p1",
            "fieldManager=m",
            APPLY,
            &applied("p1", "", "", "  resources:\n    cpu: {x: 1}\n"),
        )
        .await;
    assert_ne!(ok.code, 500, "{ok:?}");
}

/// The same apply again and again, with a map entry applied empty that its
/// defaults filled (`users: {app: {}}` becomes `{app: {role: readwrite}}`),
/// first by itself and after a client-side apply's create: nothing changes
/// (structured-merge-diff's prune reads the emptied entry as still there),
/// where ours dropped the entry on every other apply (a new generation, and
/// a Helm upgrade, each time).
#[tokio::test]
async fn reapplying_entries_filled_by_defaults_changes_nothing_as_on_kube_apiserver() {
    let both = Both::new("diff-reapply").await;
    let users = |user: &str| format!("  users:\n    {user}: {{}}\n");
    let (first, _) = both.apply_postgres("apply", "ff", &users("app")).await;
    assert_eq!(first.code, 201, "{first:?}");
    for round in 1..=3 {
        let (ours, _) = both
            .apply_postgres(
                &format!("the same apply, round {round}"),
                "ff",
                &users("app"),
            )
            .await;
        assert_eq!(ours.object["generation"], 1, "round {round}: {ours:?}");
        assert_eq!(
            ours.object["spec"]["users"],
            json!({"app": {"role": "readwrite"}}),
            "round {round}: {ours:?}"
        );
    }
    // Created by a client-side apply (a create, managed by an Update), then
    // moved to server-side apply with another entry.
    both.agree_but_rv(
        "client-side apply's create",
        Method::POST,
        "",
        "fieldManager=kubectl-client-side-apply",
        JSON,
        &json!({"apiVersion": "APIVERSION", "kind": "Postgres", "metadata": {"name": "csa"},
                "spec": {"users": {"bob": {}}}})
        .to_string(),
    )
    .await;
    let (ours, _) = both
        .apply_postgres("server-side apply after it", "csa", &users("bob"))
        .await;
    assert_eq!(
        ours.object["spec"]["users"],
        json!({"bob": {"role": "readwrite"}}),
        "{ours:?}"
    );
    // An applier that leaves out what it applied before: its entry's field
    // goes, and what the prune empties is settled as kube-apiserver does.
    for (what, before, after) in [
        (
            "a map entry's field left out",
            "  users:\n    app: {role: admin}\n",
            "  users:\n    app: {}\n",
        ),
        (
            "the whole map left out",
            "  users:\n    app: {role: admin}\n",
            "  replicas: 2\n",
        ),
        (
            "one entry of two left out",
            "  users:\n    app: {role: admin}\n    ops: {role: readonly}\n",
            "  users:\n    ops: {role: readonly}\n",
        ),
    ] {
        let name = format!("rm{}", what.len());
        both.apply_postgres(what, &name, before).await;
        both.apply_postgres(what, &name, after).await;
    }
}

/// Server-side apply of a configuration whose declared fields hold values of
/// another type (a string for an integer or a boolean, a list for a map, a
/// map for a string): kube-apiserver's field manager cannot type it and
/// answers 500 with structured-merge-diff's message, whatever
/// `fieldValidation` says, before and after the app exists. A fraction for
/// an integer types (both are numeric there) and is validation's 422.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applies_with_wrongly_typed_fields_agree_with_kube_apiserver() {
    let both = Both::new("diff-apply-types").await;
    let applied = |name: &str, spec: &str| {
        format!("apiVersion: APIVERSION\nkind: Postgres\nmetadata:\n  name: {name}\nspec:\n{spec}")
    };
    let created = both
        .agree_but_rv(
            "apply",
            Method::PATCH,
            "/p1",
            "fieldManager=m",
            APPLY,
            &applied("p1", "  replicas: 2\n"),
        )
        .await
        .0;
    assert_eq!(created.code, 201, "{created:?}");
    let cases: Vec<(&str, String)> = [
        ("a string for an integer", "  replicas: \"x\"\n"),
        ("a string for a boolean", "  external: \"yes\"\n"),
        ("a list for a map", "  users: [1]\n"),
        ("a map for a string", "  version: {a: 1}\n"),
        (
            "a number in an atomic list of strings",
            "  databases:\n    d:\n      extensions: [x, 1]\n",
        ),
    ]
    .into_iter()
    .map(|(what, spec)| (what, applied("APPNAME", spec)))
    .collect();
    both.applies_answer_500(
        &["", "&fieldValidation=Strict", "&fieldValidation=Ignore"],
        &cases,
    )
    .await;
}

/// A fraction where the schema wants an integer fails the type check and
/// then the int64 range check, which kube-apiserver reports at `<nil>`
/// after the field's own error: the same order for a create, a merge patch
/// and an apply. A whole number written as a float (`3.0`, `4e0`) is an
/// integer, stored and answered as one (Go's float64 writes `3`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fraction_for_an_integer_is_refused_as_kube_apiserver_refuses_it() {
    let both = Both::new("diff-fraction").await;
    let create = |name: &str, replicas: &str| {
        format!(
            r#"{{"apiVersion":"APIVERSION","kind":"Postgres","metadata":{{"name":"{name}"}},"spec":{{"replicas":{replicas}}}}}"#
        )
    };
    let refused = both
        .agree("create", Method::POST, "", "", JSON, &create("c1", "2.5"))
        .await;
    assert_eq!(refused.code, 422, "{refused:?}");
    assert!(
        refused
            .message
            .contains(r#"[spec.replicas: Invalid value: "number""#),
        "{refused:?}"
    );
    let created = both
        .agree_but_rv("create", Method::POST, "", "", JSON, &create("c2", "2"))
        .await
        .0;
    assert_eq!(created.code, 201, "{created:?}");
    for (what, path, content_type, body) in [
        ("merge patch", "/c2", MERGE, r#"{"spec":{"replicas":2.5}}"#),
        (
            "apply",
            "/a1",
            APPLY,
            "apiVersion: APIVERSION\nkind: Postgres\nmetadata:\n  name: a1\nspec:\n  replicas: 2.5\n",
        ),
    ] {
        let a = both
            .agree(
                what,
                Method::PATCH,
                path,
                "fieldManager=m",
                content_type,
                body,
            )
            .await;
        assert_eq!(a.code, 422, "{what}: {a:?}");
    }
    let (whole, _) = both
        .agree_but_rv("create", Method::POST, "", "", JSON, &create("c3", "3.0"))
        .await;
    assert_eq!(whole.code, 201, "{whole:?}");
    assert_eq!(
        whole.object["spec"]["replicas"].to_string(),
        "3",
        "{whole:?}"
    );
    for (what, path, content_type, body, replicas) in [
        (
            "merge patch",
            "/c3",
            MERGE,
            r#"{"spec":{"replicas":5.0}}"#,
            "5",
        ),
        (
            "apply",
            "/a2",
            APPLY,
            "apiVersion: APIVERSION\nkind: Postgres\nmetadata:\n  name: a2\nspec:\n  replicas: 4.0\n",
            "4",
        ),
    ] {
        let (a, _) = both
            .agree_but_rv(
                what,
                Method::PATCH,
                path,
                "fieldManager=m",
                content_type,
                body,
            )
            .await;
        assert!(a.code < 300, "{what}: {a:?}");
        assert_eq!(
            a.object["spec"]["replicas"].to_string(),
            replicas,
            "{what}: {a:?}"
        );
    }
}

/// Query parameters of reads and deletes, and subresources, as kubectl
/// users meet them: a field selector's terms all hold (two on
/// `metadata.name` select nothing, `=p1,!=p2` selects p1); a limit of 0
/// or less is no limit; a malformed integer parameter is 400 with Go's
/// `strconv.ParseInt` message (a delete with one deletes nothing);
/// `resourceVersionMatch`, `resourceVersion` and `sendInitialEvents`
/// combine as `ValidateListOptions` allows; a
/// subresource the kind lacks is the object not found (`kubectl scale`),
/// whatever the verb; `status` takes no delete or create.
#[tokio::test]
async fn query_parameters_and_subresources_agree_with_kube_apiserver() {
    let both = Both::new("diff-query").await;
    both.create_postgreses(&["p1", "p2", "p3"]).await;
    for (query, names) in [
        (
            "fieldSelector=metadata.name%3Dp1%2Cmetadata.name%3Dp2",
            json!([]),
        ),
        (
            "fieldSelector=metadata.name%3Dp1%2Cmetadata.name%21%3Dp2",
            json!(["p1"]),
        ),
        (
            "fieldSelector=metadata.name%21%3Dp1%2Cmetadata.name%21%3Dp2",
            json!(["p3"]),
        ),
        ("limit=-1", json!(["p1", "p2", "p3"])),
        // A page: `remainingItemCount` unless a selector narrows the list.
        // (With `resourceVersion=0` kube-apiserver's watch cache ignores the
        // limit, which the API allows; ours pages from its cache.)
        ("limit=1", json!(["p1"])),
        // A repeated parameter: its first value.
        ("limit=1&limit=3", json!(["p1"])),
        ("limit=1&fieldSelector=metadata.name%21%3Dp1", json!(["p2"])),
        ("limit=1&labelSelector=team%21%3Dx", json!(["p1"])),
    ] {
        let (ours, _) = both
            .agree_but_rv(query, Method::GET, "", query, JSON, "")
            .await;
        assert_eq!((ours.code, &ours.object["items"]), (200, &names), "{query}");
        if query == "limit=1" {
            assert_eq!(ours.object["remainingItemCount"], 2, "{ours:?}");
        }
    }
    for (method, path, query) in [
        (Method::GET, "", "limit=x"),
        (Method::GET, "", "limit=99999999999999999999"),
        (Method::GET, "", "timeoutSeconds=1.5"),
        (Method::GET, "", "watch=1&timeoutSeconds=x"),
        (Method::GET, "", "watch=1&timeoutSeconds=1&limit=x"),
        (Method::DELETE, "/p1", "gracePeriodSeconds=x"),
        (Method::DELETE, "/p1", "gracePeriodSeconds=x&dryRun=All"),
    ] {
        let a = both.agree(query, method, path, query, JSON, "").await;
        assert_eq!(a.code, 400, "{query}: {a:?}");
    }
    // ListOptions that do not combine: 422 `ListOptions.meta.k8s.io "" is
    // invalid`, a cause per broken rule.
    for query in [
        "resourceVersionMatch=NotOlderThan",
        "resourceVersionMatch=Bogus&resourceVersion=5",
        "resourceVersionMatch=Exact&resourceVersion=0",
        "resourceVersionMatch=Bogus",
        "sendInitialEvents=true",
        "watch=1&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
        "watch=1&sendInitialEvents=true&timeoutSeconds=1",
        "watch=1&sendInitialEvents=false&resourceVersionMatch=Exact&timeoutSeconds=1",
        // A bool parameter is true unless `false` or `0`, as kube-apiserver's
        // parameter codec reads it: `x` asks for the initial events.
        "watch=1&sendInitialEvents=x&timeoutSeconds=1",
    ] {
        let a = both.agree(query, Method::GET, "", query, JSON, "").await;
        assert_eq!(a.code, 422, "{query}: {a:?}");
    }
    // An update without a resourceVersion: the generic store's 422, which
    // names the resource, not the kind.
    let body = json!({"apiVersion": "APIVERSION", "kind": "Postgres",
                      "metadata": {"name": "p1"}, "spec": {}});
    let a = both
        .agree(
            "update without resourceVersion",
            Method::PUT,
            "/p1",
            "",
            JSON,
            &body.to_string(),
        )
        .await;
    assert_eq!(a.code, 422, "{a:?}");
    // `watch=yes` and a bare `watch` are watches (kube-apiserver's request
    // info and codec read a bool so), not lists.
    for query in ["watch=yes&timeoutSeconds=1", "watch&timeoutSeconds=1"] {
        let a = both.agree(query, Method::GET, "", query, JSON, "").await;
        assert_eq!((a.code, &a.object["items"]), (200, &Value::Null), "{a:?}");
    }
    // A watch from a version older than the history: 200, and its one
    // event the 410 (kube-apiserver's watch cache starts it and ends it).
    let query = "watch=1&resourceVersion=1&timeoutSeconds=5";
    let a = both.agree(query, Method::GET, "", query, JSON, "").await;
    assert_eq!(a.code, 200, "{a:?}");
    let p1 = both
        .agree_but_rv("p1 is still there", Method::GET, "/p1", "", JSON, "")
        .await;
    assert_eq!(p1.0.code, 200, "{p1:?}");
    for (method, path, content_type, body, code) in [
        (Method::GET, "/p1/scale", JSON, "", 404),
        (Method::PATCH, "/p1/scale", MERGE, "{}", 404),
        (Method::PUT, "/p1/scale", JSON, "{}", 404),
        (Method::GET, "/nope/bogus", JSON, "", 404),
        (Method::DELETE, "/p1/bogus", JSON, "", 404),
        (Method::DELETE, "/p1/status", JSON, "", 405),
        (Method::POST, "/p1/status", JSON, "{}", 405),
    ] {
        let what = format!("{method} {path}");
        let a = both
            .agree(&what, method, path, "", content_type, body)
            .await;
        assert_eq!(a.code, code, "{what}: {a:?}");
    }
    // A create sent to an object's path is a create: kube-apiserver's
    // handler reads the name from the body, as for the collection's path.
    let named = |name: &str| {
        json!({"apiVersion": "APIVERSION", "kind": "Postgres",
               "metadata": {"name": name}, "spec": {}})
        .to_string()
    };
    for (path, name) in [("/p7", "p7"), ("/p1", "p8")] {
        let (ours, _) = both
            .agree_but_rv(path, Method::POST, path, "dryRun=All", JSON, &named(name))
            .await;
        assert_eq!(ours.code, 201, "{ours:?}");
    }
    // kubectl's view of the first: `kubectl scale` finds nothing to scale.
    let scale = |group: &str, ns: &str| {
        let out = plane::plane()
            .kubectl()
            .args([
                "scale",
                "-n",
                ns,
                &format!("postgreses.{group}/p1"),
                "--replicas=3",
            ])
            .output()
            .expect("kubectl");
        String::from_utf8_lossy(&out.stderr).replace(group, "GROUP")
    };
    assert_eq!(scale(OURS, &both.ours_ns), scale(THEIRS, &both.theirs_ns));
}

/// Malformed options of deletes and reads, as kube-apiserver answers them
/// for a custom resource: `DeleteOptions` (from the query or the body, of
/// one object or a collection) that `ValidateDeleteOptions` refuses are a
/// 422 `DeleteOptions.meta.k8s.io "" is invalid` with a cause per broken
/// rule; a `continue` token that does not decode is a 400 `invalid continue
/// token: …` (Go's base64 or JSON error), checked before `resourceVersion`
/// is refused beside it; a `resourceVersion` that is no number
/// (`strconv.ParseUint`'s) is a 500 without a reason for a get or a watch,
/// a 400 `invalid resource version` for a list or a deletecollection. A
/// collection's ListOptions are validated before its DeleteOptions.
#[tokio::test]
async fn malformed_delete_and_read_options_agree_with_kube_apiserver() {
    let both = Both::new("diff-options").await;
    both.create_postgreses(&["p1", "p2"]).await;
    // (path, query, body, code); a collection's deletes select nothing,
    // should an option be taken.
    let none = "labelSelector=none%3Dnone";
    let mut cases: Vec<(&str, String, &str, u16)> = Vec::new();
    for (query, code) in [
        ("dryRun=Bogus", 422),
        ("dryRun=", 422),
        ("propagationPolicy=Bogus", 422),
        ("propagationPolicy=", 422),
        ("orphanDependents=true&propagationPolicy=Orphan", 422),
        (
            "orphanDependents=false&propagationPolicy=Bogus&dryRun=Bogus",
            422,
        ),
        ("gracePeriodSeconds=x&dryRun=Bogus", 400),
        // `dryRun` is a list: every value counts.
        ("dryRun=All&dryRun=Bogus", 422),
        ("dryRun=All&dryRun=", 422),
    ] {
        cases.push(("/p1", query.to_owned(), "", code));
        cases.push(("", format!("{none}&{query}"), "", code));
    }
    // A collection's ListOptions are read and validated before its
    // DeleteOptions.
    cases.push(("", format!("{none}&resourceVersion=abc"), "", 400));
    cases.push((
        "",
        format!("{none}&resourceVersionMatch=Bogus&resourceVersion=1&dryRun=Bogus"),
        "",
        422,
    ));
    for body in [
        r#"{"dryRun":["Bogus"]}"#,
        r#"{"dryRun":["All","Bogus"]}"#,
        r#"{"propagationPolicy":"Bogus"}"#,
        r#"{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","propagationPolicy":"Bogus"}"#,
        r#"{"orphanDependents":true,"propagationPolicy":"Orphan"}"#,
        r#"{"orphanDependents":false,"propagationPolicy":"","dryRun":[""]}"#,
    ] {
        cases.push(("/p1", String::new(), body, 422));
        cases.push(("", none.to_owned(), body, 422));
    }
    let mut differ = Vec::new();
    for (path, query, body, code) in &cases {
        let (ours, theirs) = both.send(Method::DELETE, path, query, JSON, body).await;
        if ours != theirs || theirs.code != *code {
            differ.push(format!(
                "DELETE {path:?} {query:?} {body}:\n  ours:   {ours:?}\n  theirs: {theirs:?}"
            ));
        }
    }
    for (path, query, code) in [
        ("", "limit=1&continue=abc", 400),
        ("", "continue=abc", 400),
        ("", "limit=1&continue=%21%21", 400),
        ("", "limit=1&continue=eyJ", 400),
        ("", "limit=1&continue=abc&resourceVersion=5", 400),
        ("/p1", "resourceVersion=abc", 500),
        ("", "resourceVersion=abc", 400),
        ("", "limit=1&resourceVersion=abc", 400),
        ("", "resourceVersion=abc&resourceVersionMatch=Exact", 400),
        ("/p1", "resourceVersion=%2B5", 500),
        ("", "watch=1&resourceVersion=abc&timeoutSeconds=1", 500),
    ] {
        let (ours, theirs) = both.send(Method::GET, path, query, JSON, "").await;
        if ours != theirs || theirs.code != code {
            differ.push(format!(
                "GET {path:?} {query:?}:\n  ours:   {ours:?}\n  theirs: {theirs:?}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // Nothing was deleted.
    let (ours, _) = both
        .agree_but_rv("list", Method::GET, "", "", JSON, "")
        .await;
    assert_eq!(ours.object["items"], json!(["p1", "p2"]), "{ours:?}");
}

/// Malformed options of creates, updates, patches and applies, as
/// kube-apiserver answers them for a custom resource: what
/// `ValidateCreateOptions`, `ValidateUpdateOptions` and
/// `ValidatePatchOptions` refuse (a `fieldManager` over 128 bytes or with a
/// character that is not printable, a `dryRun` other than `All`, empty
/// included, a `fieldValidation` that is none of the three, `force` on a
/// patch that is no apply, an apply without `fieldManager`) is a 422
/// `CreateOptions.meta.k8s.io "" is invalid` (`UpdateOptions`,
/// `PatchOptions`) with a cause per broken rule, in the order they check
/// them; the options are validated after the content type is accepted and
/// before the body is decoded or the object looked up. `force` is true
/// unless `false` or `0` (of any case).
#[tokio::test]
async fn malformed_write_options_agree_with_kube_apiserver() {
    let both = Both::new("diff-write-options").await;
    both.create_postgreses(&["p1"]).await;
    let long = "m".repeat(129);
    let created =
        r#"{"apiVersion":"APIVERSION","kind":"Postgres","metadata":{"name":"p9"},"spec":{}}"#;
    let updated = r#"{"apiVersion":"APIVERSION","kind":"Postgres","metadata":{"name":"p1","resourceVersion":"1"},"spec":{}}"#;
    let applied = "apiVersion: APIVERSION\nkind: Postgres\nmetadata: {name: p1}\nspec: {}\n";
    // (method, path, content type, body) of each verb, with a good body
    // but for options (the update's resourceVersion is stale: a conflict
    // after the options).
    let verbs = [
        (Method::POST, "", JSON, created),
        (Method::PUT, "/p1", JSON, updated),
        (Method::PATCH, "/p1", MERGE, "{}"),
        (Method::PATCH, "/p1", APPLY, applied),
    ];
    let mut queries: Vec<String> = [
        "dryRun=Bogus",
        "dryRun=",
        "dryRun=All&fieldValidation=Bogus",
        "fieldValidation=",
        "fieldManager=a%07b%C2%A0c",
        "fieldManager=&dryRun=Bogus",
        "force=true",
        "force=x&dryRun=Bogus",
        "force=false",
        // `dryRun` is a list: every value counts, the whole list the bad
        // value.
        "dryRun=All&dryRun=Bogus",
        "dryRun=All&dryRun=All",
    ]
    .iter()
    .map(|q| (*q).to_owned())
    .collect();
    queries.push(format!("fieldManager={long}"));
    queries.push(format!(
        "fieldManager={long}%0A&dryRun=Bogus&fieldValidation=Bogus&force=true"
    ));
    let mut differ = Vec::new();
    let mut check = |what: String, ours: Answer, theirs: Answer, code: Option<u16>| {
        if ours != theirs || code.is_some_and(|c| theirs.code != c) {
            differ.push(format!("{what}:\n  ours:   {ours:?}\n  theirs: {theirs:?}"));
        }
    };
    for (method, path, content_type, body) in &verbs {
        for query in &queries {
            // An apply names its manager unless the query is about it.
            let query = if *content_type == APPLY && !query.contains("fieldManager") {
                format!("fieldManager=m&{query}")
            } else {
                query.clone()
            };
            // What passes is sent as a dry run, changing nothing.
            let query = if query.contains("dryRun") {
                query
            } else {
                format!("{query}&dryRun=All")
            };
            let (ours, theirs) = both
                .send(method.clone(), path, &query, content_type, body)
                .await;
            check(
                format!("{method} {path:?} {content_type} {query:?}"),
                without_rv(ours),
                without_rv(theirs),
                None,
            );
        }
    }
    // An apply without a manager, with others broken beside it.
    for query in [
        "",
        "dryRun=Bogus&force=x",
        "fieldManager=&fieldValidation=x",
    ] {
        let (ours, theirs) = both.send(Method::PATCH, "/p1", query, APPLY, applied).await;
        check(format!("apply {query:?}"), ours, theirs, Some(422));
    }
    // Bad options and a bad body, a missing object: the options first.
    for (method, path, content_type, body) in [
        (Method::POST, "", JSON, "{"),
        (Method::POST, "", JSON, r#"{"kind":"Nope"}"#),
        (Method::PUT, "/p1", JSON, "{"),
        (Method::PUT, "/nope", JSON, "{}"),
        (Method::PATCH, "/p1", MERGE, "{"),
        (Method::PATCH, "/nope", MERGE, "{}"),
        (Method::PATCH, "/p1", JSON_PATCH, "[{}]"),
        (Method::PATCH, "/p1", APPLY, "{"),
        (Method::PATCH, "/nope", APPLY, applied),
    ] {
        let query = "fieldManager=m&dryRun=Bogus";
        let (ours, theirs) = both
            .send(method.clone(), path, query, content_type, body)
            .await;
        check(
            format!("{method} {path:?} {content_type} {body:?}"),
            ours,
            theirs,
            Some(422),
        );
    }
    // A content type refused comes before the options of a create and a
    // patch, after those of an update; a create's or update's 415 names
    // the types kube-apiserver's serializers take, whatever was sent.
    for (method, content_type) in [
        (Method::POST, "text/plain"),
        (Method::POST, "application/merge-patch+json"),
        (Method::PUT, "application/apply-patch+yaml"),
    ] {
        let path = if method == Method::PUT { "/p1" } else { "" };
        let query = if method == Method::PUT {
            ""
        } else {
            "dryRun=Bogus"
        };
        let (ours, theirs) = both
            .send(method.clone(), path, query, content_type, "{}")
            .await;
        check(format!("{method} {content_type}"), ours, theirs, Some(415));
    }
    for (method, content_type, code) in [
        (Method::PUT, "text/plain", 422),
        (Method::PATCH, "application/strategic-merge-patch+json", 415),
    ] {
        let (ours, theirs) = both
            .send(method.clone(), "/p1", "dryRun=Bogus", content_type, "{}")
            .await;
        check(format!("{method} {content_type}"), ours, theirs, Some(code));
    }
    // `force` is true but for `false` and `0`: an apply of a field the
    // creator owns (a default) conflicts unless forced.
    let conflicting =
        "apiVersion: APIVERSION\nkind: Postgres\nmetadata: {name: p1}\nspec: {version: \"16\"}\n";
    for (force, code) in [
        ("x", 200),
        ("", 200),
        ("TRUE", 200),
        ("False", 409),
        ("0", 409),
    ] {
        let query = format!("fieldManager=ops&dryRun=All&force={force}");
        let (ours, theirs) = both
            .send(Method::PATCH, "/p1", &query, APPLY, conflicting)
            .await;
        check(
            format!("apply {query:?}"),
            without_rv(ours),
            without_rv(theirs),
            Some(code),
        );
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // Nothing was written.
    let (ours, _) = both
        .agree_but_rv("list", Method::GET, "", "", JSON, "")
        .await;
    assert_eq!(ours.object["items"], json!(["p1"]), "{ours:?}");
}

/// deletecollection as kube-apiserver's generic store runs it: with
/// `limit`, one page of that many is deleted and the answer is that page as
/// listed, with its `continue` token and the count of what is left; the
/// token continues a deletecollection; without `limit`, every app the
/// selectors select; a dry run (`dryRun` given twice) deletes nothing.
#[tokio::test]
async fn deletecollection_pages_agree_with_kube_apiserver() {
    let both = Both::new("diff-deletecollection").await;
    both.create_postgreses(&["p1", "p2", "p3", "p4", "p5"])
        .await;
    let names = |a: &Answer| a.object["items"].clone();
    let dry = both
        .agree_but_rv(
            "dry run",
            Method::DELETE,
            "",
            "dryRun=All&dryRun=All",
            JSON,
            "",
        )
        .await
        .0;
    assert_eq!(
        names(&dry),
        json!(["p1", "p2", "p3", "p4", "p5"]),
        "{dry:?}"
    );
    let (ours_page, theirs_page) = both
        .agree_but_rv("limit=2", Method::DELETE, "", "limit=2", JSON, "")
        .await;
    assert_eq!(names(&ours_page), json!(["p1", "p2"]), "{ours_page:?}");
    assert_eq!(
        (
            &ours_page.object["continues"],
            &ours_page.object["remainingItemCount"]
        ),
        (&json!(true), &json!(3)),
        "{ours_page:?}"
    );
    let (ours, _) = both
        .agree_but_rv("what is left", Method::GET, "", "", JSON, "")
        .await;
    assert_eq!(names(&ours), json!(["p3", "p4", "p5"]), "{ours:?}");
    // Each server's own token continues a deletecollection, from the
    // version the page was listed at, with `limit` again.
    let continued = |answer: &Answer| format!("limit=1&continue={}", answer.token);
    let ours_next = both
        .one(
            OURS,
            &both.ours_ns,
            Method::DELETE,
            "",
            &continued(&ours_page),
            JSON,
            "",
        )
        .await;
    let theirs_next = both
        .one(
            THEIRS,
            &both.theirs_ns,
            Method::DELETE,
            "",
            &continued(&theirs_page),
            JSON,
            "",
        )
        .await;
    assert_eq!(without_rv(ours_next.clone()), without_rv(theirs_next));
    assert_eq!(names(&ours_next), json!(["p3"]), "{ours_next:?}");
    let (ours, _) = both
        .agree_but_rv("what is left", Method::GET, "", "", JSON, "")
        .await;
    assert_eq!(names(&ours), json!(["p4", "p5"]), "{ours:?}");
    let (ours, _) = both
        .agree_but_rv(
            "a selector",
            Method::DELETE,
            "",
            "fieldSelector=metadata.name%21%3Dp4",
            JSON,
            "",
        )
        .await;
    assert_eq!(names(&ours), json!(["p5"]), "{ours:?}");
    let (ours, _) = both
        .agree_but_rv("what is left", Method::GET, "", "", JSON, "")
        .await;
    assert_eq!(names(&ours), json!(["p4"]), "{ours:?}");
}

/// Metadata fields of the wrong type (a name that is a boolean, a
/// namespace that is a number, metadata that is no object) are refused as
/// kube-apiserver refuses them for a custom resource, on create and update,
/// before the name is looked for or the namespace compared with the URL's.
#[tokio::test]
async fn wrongly_typed_metadata_is_refused_like_kube_apiserver() {
    let both = Both::new("diff-meta-types").await;
    both.create_postgreses(&["p1"]).await;
    let metas = [
        r#"{"name":true}"#,
        r#"{"name":5}"#,
        r#"{"generateName":5}"#,
        r#"{"name":"p1","namespace":5}"#,
        r#"{"name":"p1","labels":{"a":true}}"#,
        r#"{"name":"p1","finalizers":"zz"}"#,
        r#"5"#,
        r#""p1""#,
        r#"[]"#,
        r#"{"name":"p1","generation":1.5}"#,
        r#"{"name":"p1","generation":"1"}"#,
        r#"{"name":"p1","generation":99999999999999999999}"#,
        r#"{"name":"p1","creationTimestamp":5}"#,
        r#"{"name":"p1","annotations":"x"}"#,
        r#"{"name":"p1","labels":[]}"#,
        r#"{"name":"p1","finalizers":[1]}"#,
        r#"{"name":"p1","uid":5}"#,
        r#"{"name":"p1","resourceVersion":5}"#,
        r#"{"name":"p1","ownerReferences":{}}"#,
        r#"{"name":"p1","ownerReferences":[5]}"#,
        r#"{"name":"p1","ownerReferences":[{"name":5}]}"#,
        r#"{"name":"p1","ownerReferences":[{"controller":"yes"}]}"#,
        r#"{"name":"p1","managedFields":"x"}"#,
        r#"{"name":"p1","managedFields":[{"manager":5}]}"#,
        r#"{"name":"p1","deletionGracePeriodSeconds":"5"}"#,
        r#"{"name":"p1","selfLink":true}"#,
        r#"{"name":"p1","labels":{"a":"b"},"namespace":[1]}"#,
        // Several wrong: the first in sorted order, a timestamp's at once.
        r#"{"name":true,"generateName":5}"#,
        r#"{"name":"p1","labels":{"b":1,"a":true}}"#,
        r#"{"name":"p1","ownerReferences":[{"name":5,"controller":"yes"}]}"#,
        r#"{"name":"p1","annotations":"x","creationTimestamp":5}"#,
        r#"{"name":"p1","zz":1,"uid":5,"deletionTimestamp":"soon"}"#,
        r#"{"name":"p1","managedFields":[{"time":"now","manager":5}]}"#,
        // Timestamps that are strings but no RFC 3339 time.
        r#"{"name":"p1","creationTimestamp":"yesterday"}"#,
        r#"{"name":"p1","creationTimestamp":""}"#,
        r#"{"name":"p1","creationTimestamp":"2026-13-01T00:00:00Z"}"#,
        r#"{"name":"p1","creationTimestamp":"2026-02-30T00:00:00Z"}"#,
        r#"{"name":"p1","creationTimestamp":"2026-01-01T10:00:00"}"#,
        r#"{"name":"p1","creationTimestamp":"2026-01-01T10:00:00+25:00"}"#,
        r#"{"name":"p1","creationTimestamp":"2026-01-01T10:00:00Zjunk"}"#,
    ];
    let cases = metas.map(|meta| {
        (
            meta.to_owned(),
            format!(
                r#"{{"apiVersion":"APIVERSION","kind":"Postgres","metadata":{meta},"spec":{{}}}}"#
            ),
        )
    });
    let differ = both.refusals_differing(&cases, 400, false).await;
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A `spec` that is not an object is the schema's type error, worded as
/// kube-apiserver words it (the type's name as the value), on create and
/// update alike.
#[tokio::test]
async fn a_spec_that_is_not_an_object_is_refused_like_kube_apiserver() {
    let both = Both::new("diff-spec-types").await;
    both.create_postgreses(&["p1"]).await;
    let cases = ["5", "5.5", "5.0", "\"x\"", "true", "[1]"].map(|spec| {
        (
            format!("spec {spec}"),
            format!(
                r#"{{"apiVersion":"APIVERSION","kind":"Postgres","metadata":{{"name":"p1"}},"spec":{spec}}}"#
            ),
        )
    });
    let differ = both.refusals_differing(&cases, 422, true).await;
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// kube-apiserver warns about a finalizer a write adds to a custom resource
/// unless it is domain-qualified with a path (or one of Kubernetes' own):
/// on create, on an update and on patches, never about one already there.
#[tokio::test]
async fn finalizer_names_are_warned_about_like_kube_apiserver() {
    let both = Both::new("diff-finalizers").await;
    let object = |finalizers: Value| {
        json!({"apiVersion": "APIVERSION", "kind": "Postgres",
               "metadata": {"name": "held", "finalizers": finalizers}, "spec": {}})
        .to_string()
    };
    let (created, _) = both
        .agree_but_rv(
            "create",
            Method::POST,
            "",
            "",
            JSON,
            &object(json!([
                "cleanup",
                "example.com/hold",
                "kubernetes",
                "a.b",
                "example.com",
                "cleanup"
            ])),
        )
        .await;
    assert!(!created.warnings.is_empty(), "{created:?}");
    let (patched, _) = both
        .agree_but_rv(
            "merge patch adding two",
            Method::PATCH,
            "/held",
            "",
            MERGE,
            r#"{"metadata":{"finalizers":["cleanup","example.com/hold","zz","orphan"]}}"#,
        )
        .await;
    assert_eq!(patched.warnings.len(), 1, "{patched:?}");
    both.agree_but_rv(
        "JSON patch adding one",
        Method::PATCH,
        "/held",
        "",
        JSON_PATCH,
        r#"[{"op":"add","path":"/metadata/finalizers/-","value":"Upper"}]"#,
    )
    .await;
    both.agree_but_rv(
        "apply adding one",
        Method::PATCH,
        "/held",
        "fieldManager=m",
        APPLY,
        &json!({"apiVersion": "APIVERSION", "kind": "Postgres",
                "metadata": {"name": "held", "finalizers": ["applied"]}})
        .to_string(),
    )
    .await;
    both.send(
        Method::PATCH,
        "/held",
        "",
        MERGE,
        r#"{"metadata":{"finalizers":null}}"#,
    )
    .await;
}

/// A body without `apiVersion` or `kind`, or with another kind's or
/// group's: refused (or not) as kube-apiserver refuses it for a custom
/// resource, on create and on update.
#[tokio::test]
async fn bodies_without_or_with_another_type_agree_with_kube_apiserver() {
    let both = Both::new("diff-body-types").await;
    both.create_postgreses(&["p1"]).await;
    let bodies = [
        r#"{"metadata":{"name":"p1"},"spec":{}}"#,
        r#"{"kind":"Postgres","metadata":{"name":"p1"},"spec":{}}"#,
        // (The group after the 30 bytes the message quotes: the servers'
        // groups differ.)
        r#"{"metadata":{"name":"p1"},"spec":{},"apiVersion":"APIVERSION"}"#,
        r#"{"apiVersion":"APIVERSION","kind":"Redis","metadata":{"name":"p1"},"spec":{}}"#,
        r#"{"apiVersion":"other.example.com/v1","kind":"Postgres","metadata":{"name":"p1"},"spec":{}}"#,
        r#"{"apiVersion":"","kind":"","metadata":{"name":"p1"},"spec":{}}"#,
        r#"{"apiVersion":5,"kind":"Postgres","metadata":{"name":"p1"},"spec":{}}"#,
        // Not JSON: Go's syntax errors (the group again past the quote).
        r#"{"metadata":{"name":"p1"},"spec":{},"apiVersion":"APIVERSION","kind":"Postgres""#,
        r#"{"kind":"Postgres","apiVersion" "APIVERSION"}"#,
        "apiVersion: v1",
        r#"{"kind":"Postgres"}}"#,
    ];
    let mut differ = Vec::new();
    for body in bodies {
        for (method, path) in [(Method::POST, ""), (Method::PUT, "/p1")] {
            let (ours, theirs) = both
                .send(method.clone(), path, "dryRun=All", JSON, body)
                .await;
            let answer = |a: &Answer| (a.code, a.reason.clone(), a.message.clone());
            if answer(&ours) != answer(&theirs) {
                differ.push(format!(
                    "{method} {body}:\n  ours:   {:?}\n  theirs: {:?}",
                    answer(&ours),
                    answer(&theirs)
                ));
            }
        }
    }
    // YAML that does not parse, or is no object (a create sent as
    // application/yaml), its group past the 30 bytes quoted: a syntax
    // error is compared by its frame (`yaml: line N: …`), not by the
    // parser's words or the line it blames (Go's yaml.v2 names where an
    // unclosed bracket opened, ours where it found it unclosed).
    for body in [
        "kind: Postgres\nmetadata:\n  name: [p1\napiVersion: APIVERSION\n",
        "kind: Postgres\nmetadata:\n  name: p1\n    x: 1\napiVersion: APIVERSION\n",
        "kind: Postgres\nkind: Redis\n",
        "- a\n- b\n",
        "just text",
    ] {
        let (ours, theirs) = both
            .send(Method::POST, "", "dryRun=All", "application/yaml", body)
            .await;
        let frame = |message: &str| match (message.find("yaml: line "), message.rfind(" (")) {
            (Some(at), Some(summary)) => {
                let line_end = at + "yaml: line ".len();
                format!("{}…{}", &message[..line_end], &message[summary..])
            }
            _ => message.to_owned(),
        };
        let answer = |a: &Answer| (a.code, a.reason.clone(), frame(&a.message));
        if answer(&ours) != answer(&theirs) {
            differ.push(format!(
                "YAML {body:?}:\n  ours:   {:?}\n  theirs: {:?}",
                answer(&ours),
                answer(&theirs)
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A YAML body's repeated keys, as kube-apiserver's strict YAML decoding
/// reports them (Go's yaml.v2: `line 5: key "name" already set in map`):
/// one 400 under Strict (before the unknown fields), a warning each under
/// Warn and without the parameter, nothing under Ignore; the last value is
/// the one kept.
#[tokio::test]
async fn repeated_keys_in_yaml_bodies_agree_with_kube_apiserver() {
    let both = Both::new("diff-yaml-dup").await;
    let body = "apiVersion: APIVERSION\nkind: Postgres\nmetadata:\n  name: p1\n  name: p2\nspec:\n  replicas: 2\n  replicas: 3\n";
    let unknown = body.replace("spec:\n", "sepc: 1\nspec:\n");
    for query in [
        "fieldValidation=Strict",
        "fieldValidation=Warn",
        "",
        "fieldValidation=Ignore",
    ] {
        for (what, body) in [
            ("repeated keys", body),
            ("and an unknown field", unknown.as_str()),
        ] {
            let (ours, _) = both
                .agree_but_rv(
                    &format!("{what}, {query}"),
                    Method::POST,
                    "",
                    &format!("dryRun=All&{query}"),
                    "application/yaml",
                    body,
                )
                .await;
            match query {
                "fieldValidation=Strict" => assert_eq!(ours.code, 400, "{ours:?}"),
                _ => assert_eq!(ours.object["spec"]["replicas"], 3, "{ours:?}"),
            }
        }
    }
}
