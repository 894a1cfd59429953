//! Kind definitions changed under a running `serve --standalone`, as
//! kube-apiserver treats a CRD whose schema changes or that is deleted: the
//! kind's open watches end (kube-apiserver tears the custom resource's
//! storage down, closing its watches without an error event), watches of
//! other kinds go on, and reads follow the new schema (kube-apiserver
//! prunes and defaults a custom resource as it reads it from etcd, without
//! writing it back). The same steps against kube-apiserver and a CRD show
//! what it does.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use kube::client::Body;
use serde_json::{Value, json};

use crate::support::plane;
use crate::support::standalone::Standalone;

const GROUP_VERSION: &str = "/apis/apps.cozystack.io/v1alpha1/namespaces/default";
/// The CRD's group on kube-apiserver.
const CRD_GROUP: &str = "reloads.diff.cozystack.io";

/// A kind with `properties` as its schema.
fn kind(name: &str, properties: &str) -> String {
    format!(
        "kind: {name}\nopenAPISchema: {{type: object, properties: {properties}}}\n\
         release: {{chartRef: {{kind: ExternalArtifact, name: {}}}}}\n",
        name.to_lowercase()
    )
}

async fn client(server: &Standalone) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(server.kubeconfig()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

async fn call(
    client: &kube::Client,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(
            body.map(|b| serde_json::to_vec(&b).unwrap())
                .unwrap_or_default(),
        ))
        .unwrap();
    let response = client.send(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, body)
}

async fn create(client: &kube::Client, kind: &str, plural: &str, name: &str, spec: Value) {
    create_at(
        client,
        "apps.cozystack.io",
        GROUP_VERSION,
        kind,
        plural,
        name,
        spec,
    )
    .await;
}

/// Creates `kind` `name` under `base` (`/apis/<group>/<version>/namespaces/<ns>`).
async fn create_at(
    client: &kube::Client,
    group: &str,
    base: &str,
    kind: &str,
    plural: &str,
    name: &str,
    spec: Value,
) {
    let (status, body) = call(
        client,
        Method::POST,
        &format!("{base}/{plural}"),
        Some(
            json!({"apiVersion": format!("{group}/v1alpha1"), "kind": kind,
            "metadata": {"name": name}, "spec": spec}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// An open watch: its events, line by line.
struct Watch {
    body: http_body_util::BodyDataStream<Body>,
    buf: Vec<u8>,
}

impl Watch {
    async fn open(client: &kube::Client, plural: &str) -> Watch {
        Watch::open_at(client, &format!("{GROUP_VERSION}/{plural}")).await
    }

    /// A watch of the collection at `path`.
    async fn open_at(client: &kube::Client, path: &str) -> Watch {
        let request = Request::get(format!("{path}?watch=true"))
            .body(Body::empty())
            .unwrap();
        let response = client.send(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        Watch {
            body: response.into_body().into_data_stream(),
            buf: Vec::new(),
        }
    }

    /// The next event, or `None` once the stream ended; panics when neither
    /// comes within 30 s.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return Some(serde_json::from_slice(&line).unwrap());
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.body.next())
                .await
                .expect("an event or the end of the watch within 30 s")?;
            self.buf
                .extend_from_slice(&chunk.expect("the watch's body"));
        }
    }

    /// The next event, which must be `event_type` of the app `name`.
    async fn expect(&mut self, event_type: &str, name: &str) -> Value {
        let event = self.next().await.expect("an event");
        assert_eq!(event["type"], event_type, "{event}");
        assert_eq!(event["object"]["metadata"]["name"], name, "{event}");
        event
    }

    /// Reads to the end of the stream, which must come with no more
    /// events (kube-apiserver sends no error event when it ends a watch
    /// for a changed or deleted CRD).
    async fn expect_end(&mut self) {
        if let Some(event) = self.next().await {
            panic!("the watch went on after its kind changed: {event}");
        }
    }
}

fn write(dir: &Path, file: &str, text: &str) {
    std::fs::write(dir.join(file), text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_end_and_reads_follow_when_a_kind_changes() {
    let kinds = tempfile::tempdir().unwrap();
    let widget_v1 = kind("Widget", "{size: {type: integer}, color: {type: string}}");
    write(kinds.path(), "widget.yaml", &widget_v1);
    write(
        kinds.path(),
        "gadget.yaml",
        &kind("Gadget", "{size: {type: integer}}"),
    );
    let server = Standalone::serving("--kinds", kinds.path());
    let client = client(&server).await;

    create(
        &client,
        "Widget",
        "widgets",
        "w1",
        json!({"size": 1, "color": "red"}),
    )
    .await;
    create(&client, "Gadget", "gadgets", "g0", json!({"size": 1})).await;
    let mut widgets = Watch::open(&client, "widgets").await;
    widgets.expect("ADDED", "w1").await;
    let mut gadgets = Watch::open(&client, "gadgets").await;
    gadgets.expect("ADDED", "g0").await;

    // Widget drops `color` and gains a defaulted `shape`.
    write(
        kinds.path(),
        "widget.yaml",
        &kind(
            "Widget",
            "{size: {type: integer}, shape: {type: string, default: round}}",
        ),
    );
    widgets.expect_end().await;

    // The unchanged kind's watch goes on.
    create(&client, "Gadget", "gadgets", "g1", json!({"size": 2})).await;
    gadgets.expect("ADDED", "g1").await;

    // Reads follow the new schema: the dropped field is pruned, the new
    // default applied, in a get, a list and a new watch alike.
    let w1 = format!("{GROUP_VERSION}/widgets/w1");
    let (status, got) = call(&client, Method::GET, &w1, None).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got["spec"], json!({"size": 1, "shape": "round"}), "{got}");
    let (_, list) = call(
        &client,
        Method::GET,
        &format!("{GROUP_VERSION}/widgets"),
        None,
    )
    .await;
    assert_eq!(
        list["items"][0]["spec"],
        json!({"size": 1, "shape": "round"}),
        "{list}"
    );
    let mut widgets = Watch::open(&client, "widgets").await;
    let added = widgets.expect("ADDED", "w1").await;
    assert_eq!(
        added["object"]["spec"],
        json!({"size": 1, "shape": "round"}),
        "{added}"
    );

    // What is stored is not rewritten by a read: the field comes back with
    // the schema that has it.
    write(kinds.path(), "widget.yaml", &widget_v1);
    widgets.expect_end().await;
    let (_, got) = call(&client, Method::GET, &w1, None).await;
    assert_eq!(got["spec"], json!({"size": 1, "color": "red"}), "{got}");

    // A kind no longer served ends its watches; it is then not found.
    let mut widgets = Watch::open(&client, "widgets").await;
    widgets.expect("ADDED", "w1").await;
    std::fs::remove_file(kinds.path().join("widget.yaml")).unwrap();
    widgets.expect_end().await;
    let (status, got) = call(&client, Method::GET, &w1, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{got}");
    create(&client, "Gadget", "gadgets", "g2", json!({"size": 3})).await;
    gadgets.expect("ADDED", "g2").await;
}

/// A CRD of `reloads.diff.cozystack.io` for the kind Widget, its spec's
/// `properties` as given.
fn widget_crd(properties: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{CRD_GROUP}")},
        "spec": {
            "group": CRD_GROUP,
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": properties}}}}}],
        }
    })
}

/// What the test above expects of serve, kube-apiserver does for a CRD:
/// a schema change ends the open watch without an error event, and reads
/// prune the dropped field and apply the new default without rewriting
/// what etcd holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_apiserver_ends_watches_and_prunes_reads_when_a_crd_changes() {
    let plane = plane::plane();
    let client = plane.client().await;
    let ns = plane.namespace("reloads").await;
    let name = format!("widgets.{CRD_GROUP}");
    let v1 = widget_crd(json!({"size": {"type": "integer"}, "color": {"type": "string"}}));
    crate::differential::install(plane, &v1, &name);
    let base = format!("/apis/{CRD_GROUP}/v1alpha1/namespaces/{ns}");
    let spec = json!({"size": 1, "color": "red"});
    create_at(&client, CRD_GROUP, &base, "Widget", "widgets", "w1", spec).await;
    let mut widgets = Watch::open_at(&client, &format!("{base}/widgets")).await;
    widgets.expect("ADDED", "w1").await;

    let v2 = widget_crd(json!({"size": {"type": "integer"},
        "shape": {"type": "string", "default": "round"}}));
    crate::differential::install(plane, &v2, &name);
    widgets.expect_end().await;
    let w1 = format!("{base}/widgets/w1");
    let (status, got) = call(&client, Method::GET, &w1, None).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got["spec"], json!({"size": 1, "shape": "round"}), "{got}");

    // Once the CRD's storage is made anew (its watches end), the field is back.
    let mut widgets = Watch::open_at(&client, &format!("{base}/widgets")).await;
    widgets.expect("ADDED", "w1").await;
    crate::differential::install(plane, &v1, &name);
    widgets.expect_end().await;
    let (_, got) = call(&client, Method::GET, &w1, None).await;
    assert_eq!(got["spec"], json!({"size": 1, "color": "red"}), "{got}");
    let _ = plane
        .kubectl()
        .args(["delete", "crd", &name, "--wait=false"])
        .output();
}

/// Validation ratcheting through the write path: an app stored under a
/// looser schema keeps its unchanged invalid values through updates under
/// a tightened one (its labels can change; a CEL rule failing on an
/// unchanged value warns), while a changed value is judged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_made_invalid_by_a_tightened_kind_can_still_be_updated() {
    let kinds = tempfile::tempdir().unwrap();
    let limits = "limits: {type: object, properties: {cpu: {type: integer}}";
    write(
        kinds.path(),
        "widget.yaml",
        &kind(
            "Widget",
            &format!("{{size: {{type: integer}}, color: {{type: string}}, {limits}}}}}"),
        ),
    );
    let server = Standalone::serving("--kinds", kinds.path());
    let client = client(&server).await;
    create(
        &client,
        "Widget",
        "widgets",
        "w1",
        json!({"size": 50, "color": "red", "limits": {"cpu": 9}}),
    )
    .await;
    write(
        kinds.path(),
        "widget.yaml",
        &kind(
            "Widget",
            &format!(
                "{{size: {{type: integer, maximum: 10}}, color: {{type: string, maxLength: 2}}, {limits}, \
                 x-kubernetes-validations: [{{rule: 'self.cpu < 5', message: 'cpu must be below 5'}}]}}}}"
            ),
        ),
    );
    // Reloaded once a create of the stored spec is refused.
    let widgets = format!("{GROUP_VERSION}/widgets");
    let started = std::time::Instant::now();
    loop {
        let probe = json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Widget",
                           "metadata": {"name": "probe"}, "spec": {"size": 50}});
        let (status, _) = call(
            &client,
            Method::POST,
            &format!("{widgets}?dryRun=All"),
            Some(probe),
        )
        .await;
        if status == StatusCode::UNPROCESSABLE_ENTITY {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "not reloaded"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let patch = |body: Value| {
        let client = client.clone();
        let uri = format!("{widgets}/w1");
        async move {
            let request = Request::builder()
                .method(Method::PATCH)
                .uri(uri)
                .header("content-type", "application/merge-patch+json")
                .body(Body::from(serde_json::to_vec(&body).unwrap()))
                .unwrap();
            let response = client.send(request).await.unwrap();
            let status = response.status();
            let warnings: Vec<String> = response
                .headers()
                .get_all(http::header::WARNING)
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .collect();
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            let body: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            (status, body, warnings)
        }
    };
    // Its labels change; the rule failing on the unchanged limits warns.
    let (status, body, warnings) = patch(json!({"metadata": {"labels": {"team": "a"}}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        warnings,
        [r#"299 - "spec.limits: Invalid value: cpu must be below 5""#],
        "{body}"
    );
    // A changed value is judged, the unchanged invalid ones are not.
    let (status, body, _) = patch(json!({"spec": {"size": 60}})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let causes: Vec<&str> = body["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert_eq!(causes, ["spec.size"], "{body}");
    let (status, body, _) = patch(json!({"spec": {"size": 5}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["spec"]["color"], "red", "{body}");
    // A changed ruled value is refused by its rule.
    let (status, body, _) = patch(json!({"spec": {"limits": {"cpu": 8}}})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.to_string().contains("cpu must be below 5"), "{body}");
}

/// A release prefix changed while no server ran: the next start says which
/// HelmReleases carry the kind's labels without its prefix (their apps are
/// not served), where a reload would have refused the change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_changed_while_stopped_is_said_at_the_start() {
    let kinds = tempfile::tempdir().unwrap();
    let widget = |prefix: &str| {
        format!(
            "kind: Widget\nopenAPISchema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}\n\
             release: {{prefix: {prefix}, chartRef: {{kind: ExternalArtifact, name: widget}}}}\n"
        )
    };
    write(kinds.path(), "widget.yaml", &widget("widget-"));
    let mut server = Standalone::serving("--kinds", kinds.path());
    create(&client(&server).await, "Widget", "widgets", "w1", json!({})).await;
    server.kill();
    write(kinds.path(), "widget.yaml", &widget("wd-"));
    server.start_again().expect("start again");
    let (status, list) = call(
        &client(&server).await,
        Method::GET,
        &format!("{GROUP_VERSION}/widgets"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["items"], json!([]), "{list}");
    let said = server.interrupt();
    assert!(
        said.contains(
            "kind Widget: 1 HelmRelease (default/widget-w1) with its labels but without its release prefix \
             \"wd-\" is not served"
        ),
        "{said}"
    );
}
