//! Smoke tests of the local control plane itself: kube-rs and the built
//! kubectl reach it, the HelmRelease CRD is served, and kube-controller-manager
//! really deletes namespaces and collects garbage.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
};

use crate::support::{CLUSTER_LOCK, plane};

fn helmrelease_resource() -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk(
        "helm.toolkit.fluxcd.io",
        "v2",
        "HelmRelease",
    ))
}

fn helmrelease(name: &str) -> DynamicObject {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "labels": {"apps.cozystack.io/application.kind": "Postgres"}},
        "spec": {
            "interval": "5m",
            "chart": {"spec": {"chart": "postgres", "version": "0.1.0",
                "sourceRef": {"kind": "HelmRepository", "name": "cozy-apps", "namespace": "cozy-public"}}},
            "values": {"replicas": 2, "sync": "on"}
        }
    }))
    .expect("HelmRelease")
}

async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("{what}: not within {timeout:?}");
}

#[tokio::test]
async fn kube_rs_lists_namespaces() {
    let client = plane().client().await;
    let names: Vec<String> = Api::<Namespace>::all(client)
        .list(&ListParams::default())
        .await
        .expect("list namespaces")
        .into_iter()
        .filter_map(|ns| ns.metadata.name)
        .collect();
    for expected in ["default", "kube-system"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }
}

#[tokio::test]
async fn helmrelease_round_trips() {
    let plane = plane();
    let ns = plane.namespace("smoke-hr").await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(plane.client().await, &ns, &helmrelease_resource());
    let created = api
        .create(&PostParams::default(), &helmrelease("postgres-db1"))
        .await
        .expect("create HelmRelease");
    assert!(created.metadata.resource_version.is_some());
    let read = api.get("postgres-db1").await.expect("get HelmRelease");
    assert_eq!(
        read.data["spec"]["values"],
        serde_json::json!({"replicas": 2, "sync": "on"})
    );
    assert_eq!(
        read.metadata.labels.unwrap()["apps.cozystack.io/application.kind"],
        "Postgres"
    );
}

#[tokio::test]
async fn deleting_a_namespace_with_a_helmrelease_completes() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let ns = plane.namespace("smoke-nsdel").await;
    let client = plane.client().await;
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &helmrelease_resource());
    api.create(&PostParams::default(), &helmrelease("redis-cache"))
        .await
        .expect("create HelmRelease");
    let namespaces = Api::<Namespace>::all(client);
    namespaces
        .delete(&ns, &DeleteParams::default())
        .await
        .expect("delete namespace");
    eventually(
        "namespace deletion by kube-controller-manager",
        Duration::from_secs(120),
        || async { matches!(namespaces.get_opt(&ns).await, Ok(None)) },
    )
    .await;
}

#[tokio::test]
async fn garbage_collector_removes_dependents() {
    let _serial = CLUSTER_LOCK.lock().await;
    let plane = plane();
    let ns = plane.namespace("smoke-gc").await;
    let api: Api<ConfigMap> = Api::namespaced(plane.client().await, &ns);
    let owner: ConfigMap =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "owner"}})).unwrap();
    let owner = api
        .create(&PostParams::default(), &owner)
        .await
        .expect("create owner");
    let dependent: ConfigMap = serde_json::from_value(serde_json::json!({"metadata": {
        "name": "dependent",
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                             "uid": owner.metadata.uid.clone().unwrap()}]
    }}))
    .unwrap();
    api.create(&PostParams::default(), &dependent)
        .await
        .expect("create dependent");
    api.delete("owner", &DeleteParams::background())
        .await
        .expect("delete owner");
    eventually(
        "garbage collection of the dependent",
        Duration::from_secs(120),
        || async { matches!(api.get_opt("dependent").await, Ok(None)) },
    )
    .await;
}

#[test]
fn built_kubectl_reaches_the_plane() {
    let plane = plane();
    let out = plane
        .kubectl()
        .args(["get", "namespace", "kube-system", "-o", "name"])
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "namespace/kube-system"
    );
    let out = plane
        .kubectl()
        .args(["version", "-o", "json"])
        .output()
        .expect("run kubectl version");
    let version: serde_json::Value = serde_json::from_slice(&out.stdout).expect("version json");
    let expected = include_str!("../control-plane/versions.env")
        .lines()
        .find_map(|l| l.strip_prefix("K8S_VERSION="))
        .expect("K8S_VERSION");
    assert_eq!(version["serverVersion"]["gitVersion"], expected);
    assert_eq!(version["clientVersion"]["gitVersion"], expected);
}
