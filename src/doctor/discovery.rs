//! API discovery as doctor needs it: which namespaced resource types exist
//! (the preferred version of each group, listable ones only) and which
//! group-versions fail. Aggregated discovery (`/api` and `/apis` as
//! `APIGroupDiscoveryList`, one request each) when the server offers it, else
//! the legacy per-group documents in parallel. [`from_aggregated`] is pure.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::join_all;
use kube::api::ApiResource;
use kube::core::discovery::v2::{ACCEPT_AGGREGATED_DISCOVERY_V2, APIGroupDiscoveryList};

use super::findings::Unchecked;
use super::requester::{CallError, Requester};

/// A resource type discovery reported (the preferred version of its group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// API group (empty for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Verbs it supports.
    pub verbs: Vec<String>,
}

impl ResourceType {
    /// `group/version`, or `version` for core.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `plural` or `plural.group`, as kubectl names the type.
    pub fn label(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The kube-rs resource description.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }
}

/// What discovery returned.
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    /// Namespaced, listable resource types of each group's preferred version.
    pub resources: Vec<ResourceType>,
    /// Group-versions whose discovery fails (`group/version` → why).
    pub failed: BTreeMap<String, String>,
    /// Every group served (group → kinds).
    pub groups: BTreeMap<String, BTreeSet<String>>,
    /// Whether aggregated discovery (one request) was used.
    pub aggregated: bool,
}

/// Runs discovery: aggregated (`/api`, `/apis` as `APIGroupDiscoveryList`)
/// when the server offers it, else the legacy per-group documents in parallel.
pub async fn discover(req: &Requester) -> (Discovered, Vec<Unchecked>) {
    let timeout = req.timeout();
    let (core, apis) = tokio::join!(
        req.get_raw("/api", Some(ACCEPT_AGGREGATED_DISCOVERY_V2), timeout),
        req.get_raw("/apis", Some(ACCEPT_AGGREGATED_DISCOVERY_V2), timeout)
    );
    let parse = |r: &Result<(u16, Vec<u8>), CallError>| -> Option<APIGroupDiscoveryList> {
        match r {
            Ok((200, body)) => {
                let value: serde_json::Value = serde_json::from_slice(body).ok()?;
                (value["kind"] == "APIGroupDiscoveryList")
                    .then(|| serde_json::from_value(value).ok())
                    .flatten()
            }
            _ => None,
        }
    };
    if let (Some(core), Some(apis)) = (parse(&core), parse(&apis)) {
        let mut discovered = from_aggregated(core);
        let more = from_aggregated(apis);
        discovered.resources.extend(more.resources);
        discovered.failed.extend(more.failed);
        discovered.groups.extend(more.groups);
        discovered.aggregated = true;
        return (discovered, Vec::new());
    }
    legacy_discover(req).await
}

/// Reads an aggregated discovery document. Versions come in preference order;
/// a `Stale` version is one whose discovery fails (an unavailable APIService).
pub fn from_aggregated(list: APIGroupDiscoveryList) -> Discovered {
    let mut out = Discovered::default();
    for group in list.items {
        let name = group
            .metadata
            .as_ref()
            .and_then(|m| m.name.clone())
            .unwrap_or_default();
        let mut kinds = BTreeSet::new();
        for (index, version) in group.versions.iter().enumerate() {
            let v = version.version.clone().unwrap_or_default();
            let gv = if name.is_empty() {
                v.clone()
            } else {
                format!("{name}/{v}")
            };
            if version.freshness.as_deref() == Some("Stale") {
                out.failed
                    .insert(gv, "stale GroupVersion discovery".to_owned());
                continue;
            }
            for r in &version.resources {
                let kind = r
                    .response_kind
                    .as_ref()
                    .and_then(|k| k.kind.clone())
                    .unwrap_or_default();
                kinds.insert(kind.clone());
                if index != 0 {
                    continue;
                }
                let plural = r.resource.clone().unwrap_or_default();
                let namespaced = r.scope.as_deref() == Some("Namespaced");
                if namespaced && r.verbs.iter().any(|v| v == "list") && !plural.contains('/') {
                    out.resources.push(ResourceType {
                        group: name.clone(),
                        version: v.clone(),
                        kind,
                        plural,
                        namespaced,
                        verbs: r.verbs.clone(),
                    });
                }
            }
        }
        out.groups.insert(name, kinds);
    }
    out
}

async fn legacy_discover(req: &Requester) -> (Discovered, Vec<Unchecked>) {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList};
    let mut out = Discovered::default();
    let mut unchecked = Vec::new();
    let client = req.client().clone();
    let groups = match req.call(client.list_api_groups()).await {
        Ok(list) => list,
        Err(err) => {
            unchecked.push(err.unchecked("discovery (GET /apis)"));
            APIGroupList { groups: Vec::new() }
        }
    };
    let mut wanted: Vec<(String, String)> = vec![(String::new(), "v1".to_owned())];
    for g in groups.groups {
        let preferred = g
            .preferred_version
            .map(|p| p.version)
            .or_else(|| g.versions.first().map(|v| v.version.clone()));
        if let Some(v) = preferred {
            wanted.push((g.name, v));
        }
    }
    let results = join_all(wanted.iter().map(|(g, v)| {
        let client = client.clone();
        let (g, v) = (g.clone(), v.clone());
        async move {
            let r: Result<APIResourceList, CallError> = if g.is_empty() {
                req.call(client.list_core_api_resources(&v)).await
            } else {
                req.call(client.list_api_group_resources(&format!("{g}/{v}")))
                    .await
            };
            (g, v, r)
        }
    }))
    .await;
    for (g, v, r) in results {
        let gv = if g.is_empty() {
            v.clone()
        } else {
            format!("{g}/{v}")
        };
        match r {
            Ok(list) => {
                let kinds = out.groups.entry(g.clone()).or_default();
                for r in list.resources {
                    kinds.insert(r.kind.clone());
                    if r.namespaced && r.verbs.iter().any(|v| v == "list") && !r.name.contains('/')
                    {
                        out.resources.push(ResourceType {
                            group: g.clone(),
                            version: v.clone(),
                            kind: r.kind,
                            plural: r.name,
                            namespaced: true,
                            verbs: r.verbs,
                        });
                    }
                }
            }
            Err(err) => {
                out.groups.entry(g.clone()).or_default();
                out.failed.insert(gv, err.to_string());
            }
        }
    }
    (out, unchecked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregated_discovery_marks_stale_versions_failed() {
        let list: APIGroupDiscoveryList = serde_json::from_value(serde_json::json!({
            "kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "items": [
                {"metadata": {"name": "apps"}, "versions": [{"version": "v1", "freshness": "Current", "resources": [
                    {"resource": "deployments", "responseKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                     "scope": "Namespaced", "verbs": ["list", "delete"]},
                    {"resource": "deployments/status", "responseKind": {"kind": "Deployment"}, "scope": "Namespaced", "verbs": ["get"]}
                ]}]},
                {"metadata": {"name": "doctor-test.example.com"}, "versions": [{"version": "v1alpha1", "freshness": "Stale"}]}
            ]
        }))
        .unwrap();
        let d = from_aggregated(list);
        assert_eq!(d.resources.len(), 1);
        assert_eq!(d.resources[0].label(), "deployments.apps");
        assert!(d.failed.contains_key("doctor-test.example.com/v1alpha1"));
    }
}
