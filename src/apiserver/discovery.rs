//! API discovery documents built from a kinds [`Snapshot`]:
//!
//! - `GET /api` of a standalone server (its core group) as aggregated
//!   discovery is `handlers::namespaces::api_aggregated`, its ETag
//!   [`etag_of_body`];
//! - `GET /apis` → [`api_group_list`] (`APIGroupList`), or, when the client
//!   asks for it ([`wants_aggregated`]), [`aggregated`]
//!   (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`, served with
//!   [`AGGREGATED_CONTENT_TYPE`], `ETag: `[`etag`] and `Vary: Accept`);
//! - `GET /apis/<g>` → [`api_group`] (`APIGroup`);
//! - `GET /apis/<g>/<v>` → [`api_resource_list`] (`APIResourceList`), what
//!   the aggregator's availability probe and legacy discovery read.
//!
//! Every kind is namespaced and offers `create`, `delete`,
//! `deletecollection`, `get`, `list`, `patch`, `update` and `watch`; its
//! `status` subresource offers `get` only. Versions of a group are listed in
//! Kubernetes' version priority order (GA before beta before alpha, higher
//! numbers first), and the first is the preferred version.

use std::cmp::Ordering;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};

use super::negotiate::parse_accept;
use crate::kinds::definition::KindDefinition;
use crate::kinds::registry::Snapshot;

/// The `Content-Type` of an aggregated discovery response, exactly as
/// kube-apiserver writes it (`generateMediaTypeWithGVK`: `g`, `v`, `as`);
/// the aggregator only accepts v2 when the response carries these parameters.
pub(crate) const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Verbs of every served resource.
pub(crate) const RESOURCE_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Verbs of the `status` subresource.
pub(crate) const STATUS_VERBS: [&str; 1] = ["get"];

/// A Kubernetes-style version (`v1`, `v2beta3`, `v1alpha1`) as a sort key:
/// (stability rank, major, minor); anything else ranks last.
fn version_key(version: &str) -> (u8, u64, u64) {
    let Some(rest) = version.strip_prefix('v') else {
        return (3, 0, 0);
    };
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let Ok(major) = rest[..digits_end].parse::<u64>() else {
        return (3, 0, 0);
    };
    let suffix = &rest[digits_end..];
    if suffix.is_empty() {
        return (0, major, 0);
    }
    for (rank, label) in [(1, "beta"), (2, "alpha")] {
        if let Some(n) = suffix.strip_prefix(label)
            && let Ok(minor) = n.parse::<u64>()
        {
            return (rank, major, minor);
        }
    }
    (3, 0, 0)
}

/// Orders versions as kube-apiserver prefers them.
fn compare_versions(a: &str, b: &str) -> Ordering {
    let (ra, ma, na) = version_key(a);
    let (rb, mb, nb) = version_key(b);
    ra.cmp(&rb)
        .then(mb.cmp(&ma))
        .then(nb.cmp(&na))
        .then_with(|| a.cmp(b))
}

/// Groups in order of first appearance, each with its versions in priority
/// order (the preferred version first).
pub(crate) fn groups(snapshot: &Snapshot) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for kind in snapshot.kinds() {
        let d = &kind.resolved.definition;
        let entry = match groups.iter_mut().position(|(g, _)| *g == d.group) {
            Some(i) => &mut groups[i],
            None => {
                groups.push((d.group.clone(), Vec::new()));
                let last = groups.len() - 1;
                &mut groups[last]
            }
        };
        if !entry.1.contains(&d.version) {
            entry.1.push(d.version.clone());
        }
    }
    for (_, versions) in &mut groups {
        versions.sort_by(|a, b| compare_versions(a, b));
    }
    groups
}

fn group_version_for_discovery(group: &str, version: &str) -> Value {
    json!({"groupVersion": format!("{group}/{version}"), "version": version})
}

/// The `APIGroup` body without `kind`/`apiVersion`, as list entries carry it.
fn group_entry(group: &str, versions: &[String]) -> Value {
    let listed: Vec<Value> = versions
        .iter()
        .map(|v| group_version_for_discovery(group, v))
        .collect();
    let mut entry = Map::new();
    entry.insert("name".into(), group.into());
    entry.insert("versions".into(), Value::Array(listed));
    if let Some(preferred) = versions.first() {
        entry.insert(
            "preferredVersion".into(),
            group_version_for_discovery(group, preferred),
        );
    }
    Value::Object(entry)
}

/// `GET /apis`: `{"kind":"APIGroupList","apiVersion":"v1","groups":[…]}`.
pub(crate) fn api_group_list(snapshot: &Snapshot) -> Value {
    let groups: Vec<Value> = groups(snapshot)
        .iter()
        .map(|(g, versions)| group_entry(g, versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/<group>`: the `APIGroup`, or `None` if no kind is in `group`.
pub(crate) fn api_group(snapshot: &Snapshot, group: &str) -> Option<Value> {
    let (name, versions) = groups(snapshot).into_iter().find(|(g, _)| g == group)?;
    let mut out = Map::new();
    out.insert("kind".into(), "APIGroup".into());
    out.insert("apiVersion".into(), "v1".into());
    if let Value::Object(entry) = group_entry(&name, &versions) {
        out.extend(entry);
    }
    Some(Value::Object(out))
}

fn kinds_in<'a>(
    snapshot: &'a Snapshot,
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'a KindDefinition> + 'a {
    snapshot
        .kinds()
        .iter()
        .map(|k| &k.resolved.definition)
        .filter(move |d| d.group == group && d.version == version)
}

/// `GET /apis/<group>/<version>`: the `APIResourceList` (each kind, then its
/// `status` subresource), or `None` if nothing is served there.
pub(crate) fn api_resource_list(snapshot: &Snapshot, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for d in kinds_in(snapshot, group, version) {
        let mut resource = Map::new();
        resource.insert("name".into(), d.plural.clone().into());
        resource.insert("singularName".into(), d.singular.clone().into());
        resource.insert("namespaced".into(), true.into());
        resource.insert("kind".into(), d.kind.clone().into());
        resource.insert("verbs".into(), json!(RESOURCE_VERBS));
        if !d.short_names.is_empty() {
            resource.insert("shortNames".into(), json!(d.short_names));
        }
        if !d.categories.is_empty() {
            resource.insert("categories".into(), json!(d.categories));
        }
        resources.push(Value::Object(resource));
        resources.push(json!({
            "name": format!("{}/status", d.plural),
            "singularName": "",
            "namespaced": true,
            "kind": d.kind,
            "verbs": STATUS_VERBS,
        }));
    }
    if resources.is_empty() {
        return None;
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": format!("{group}/{version}"),
        "resources": resources,
    }))
}

/// The `APIResourceList` of a group/version that serves no resource (the
/// reachability probe's, [`super::handlers::ApiState::reachability_probe`]).
pub(crate) fn empty_resource_list(group: &str, version: &str) -> Value {
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": format!("{group}/{version}"),
        "resources": [],
    })
}

/// `GET /apis` with `Accept: `[`AGGREGATED_CONTENT_TYPE`]: every group and
/// version with its resources and subresources, versions in preference order.
pub(crate) fn aggregated(snapshot: &Snapshot) -> Value {
    let items: Vec<Value> = groups(snapshot)
        .iter()
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| {
                    let resources: Vec<Value> = kinds_in(snapshot, group, version)
                        .map(|d| resource_discovery(d, group, version))
                        .collect();
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": group}, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

fn resource_discovery(d: &KindDefinition, group: &str, version: &str) -> Value {
    let response_kind = json!({"group": group, "version": version, "kind": d.kind});
    let mut resource = Map::new();
    resource.insert("resource".into(), d.plural.clone().into());
    resource.insert("responseKind".into(), response_kind.clone());
    resource.insert("scope".into(), "Namespaced".into());
    resource.insert("singularResource".into(), d.singular.clone().into());
    resource.insert("verbs".into(), json!(RESOURCE_VERBS));
    if !d.short_names.is_empty() {
        resource.insert("shortNames".into(), json!(d.short_names));
    }
    if !d.categories.is_empty() {
        resource.insert("categories".into(), json!(d.categories));
    }
    resource.insert(
        "subresources".into(),
        json!([{"subresource": "status", "responseKind": response_kind, "verbs": STATUS_VERBS}]),
    );
    Value::Object(resource)
}

/// The aggregated-discovery `ETag`: a quoted upper-case hex SHA-512 of the
/// snapshot hash and this build's version, so it changes whenever the served
/// documents can.
pub(crate) fn etag(snapshot: &Snapshot) -> String {
    let mut hasher = Sha512::new();
    hasher.update(b"apidiscovery.k8s.io/v2\0");
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    hasher.update([0]);
    hasher.update(snapshot.hash().as_bytes());
    quoted_upper_hex(&hasher.finalize())
}

/// The `ETag` of a document that depends on nothing but this build: a
/// quoted upper-case hex SHA-512 of its body, as [`etag`] writes one.
pub(crate) fn etag_of_body(body: &[u8]) -> String {
    quoted_upper_hex(&Sha512::digest(body))
}

fn quoted_upper_hex(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
    format!("\"{hex}\"")
}

/// Whether `Accept` selects aggregated discovery: the first media range (by
/// `q`, then order) that discovery can serve is `application/json` with
/// `g=apidiscovery.k8s.io`, `v=v2`, `as=APIGroupDiscoveryList` (rather than
/// plain JSON, `application/*` or `*/*`).
pub(crate) fn wants_aggregated(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    for range in parse_accept(accept) {
        if !range.accepts_json() {
            continue;
        }
        let (g, v, as_) = (range.param("g"), range.param("v"), range.param("as"));
        if g.is_none() && v.is_none() && as_.is_none() {
            return false;
        }
        if range.type_ == "application"
            && range.subtype == "json"
            && g == Some("apidiscovery.k8s.io")
            && v == Some("v2")
            && as_ == Some("APIGroupDiscoveryList")
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Registry;
    use crate::kinds::load;

    fn snapshot(text: &str) -> Snapshot {
        Snapshot::build(load::load_text(text, "test.yaml").unwrap()).unwrap()
    }

    const KINDS: &str = r#"
kind: Flunder
plural: flunders
shortNames: [fl]
categories: [all]
group: wardle.example.com
openAPISchema: {type: object}
release: {chart: {name: flunder, sourceRef: {kind: HelmRepository, name: r}}}
---
kind: Fischer
group: wardle.example.com
version: v1beta1
openAPISchema: {type: object}
release: {chart: {name: fischer, sourceRef: {kind: HelmRepository, name: r}}}
---
kind: Postgres
plural: postgreses
openAPISchema: {type: object}
release: {chart: {name: postgres, sourceRef: {kind: HelmRepository, name: r}}}
"#;

    #[test]
    fn version_priority() {
        let mut v = vec![
            "v1alpha1",
            "v1",
            "v2beta1",
            "v1beta2",
            "v2",
            "foo",
            "v1beta1",
            "v10alpha3",
        ];
        v.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            v,
            [
                "v2",
                "v1",
                "v2beta1",
                "v1beta2",
                "v1beta1",
                "v10alpha3",
                "v1alpha1",
                "foo"
            ]
        );
    }

    #[test]
    fn group_list_and_group() {
        let s = snapshot(KINDS);
        assert_eq!(
            api_group_list(&s),
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": "wardle.example.com",
                 "versions": [
                    {"groupVersion": "wardle.example.com/v1beta1", "version": "v1beta1"},
                    {"groupVersion": "wardle.example.com/v1alpha1", "version": "v1alpha1"}],
                 "preferredVersion": {"groupVersion": "wardle.example.com/v1beta1", "version": "v1beta1"}},
                {"name": "apps.cozystack.io",
                 "versions": [{"groupVersion": "apps.cozystack.io/v1alpha1", "version": "v1alpha1"}],
                 "preferredVersion": {"groupVersion": "apps.cozystack.io/v1alpha1", "version": "v1alpha1"}}
            ]})
        );
        let g = api_group(&s, "apps.cozystack.io").unwrap();
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            r#"{"kind":"APIGroup","apiVersion":"v1","name":"apps.cozystack.io","versions":[{"groupVersion":"apps.cozystack.io/v1alpha1","version":"v1alpha1"}],"preferredVersion":{"groupVersion":"apps.cozystack.io/v1alpha1","version":"v1alpha1"}}"#
        );
        assert!(api_group(&s, "example.com").is_none());
        assert_eq!(
            api_group_list(&Snapshot::default()),
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": []})
        );
    }

    #[test]
    fn resource_list_matches_contract() {
        let s = snapshot(KINDS);
        // The contract's §3.1 example, except that status is read-only here.
        assert_eq!(
            serde_json::to_string(
                &api_resource_list(&s, "wardle.example.com", "v1alpha1").unwrap()
            )
            .unwrap(),
            r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"wardle.example.com/v1alpha1","resources":[{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["fl"],"categories":["all"]},{"name":"flunders/status","singularName":"","namespaced":true,"kind":"Flunder","verbs":["get"]}]}"#
        );
        let fischers = api_resource_list(&s, "wardle.example.com", "v1beta1").unwrap();
        assert_eq!(fischers["resources"][0]["name"], "fischers");
        assert!(fischers["resources"][0].get("shortNames").is_none());
        assert!(api_resource_list(&s, "wardle.example.com", "v1").is_none());
        assert!(api_resource_list(&s, "nope", "v1alpha1").is_none());
    }

    #[test]
    fn aggregated_matches_contract() {
        let s = snapshot(KINDS);
        let doc = aggregated(&s);
        assert_eq!(doc["kind"], "APIGroupDiscoveryList");
        assert_eq!(doc["apiVersion"], "apidiscovery.k8s.io/v2");
        assert_eq!(doc["metadata"], json!({}));
        let wardle = &doc["items"][0];
        assert_eq!(wardle["metadata"], json!({"name": "wardle.example.com"}));
        assert_eq!(wardle["versions"][0]["version"], "v1beta1");
        let v1alpha1 = &wardle["versions"][1];
        assert_eq!(v1alpha1["freshness"], "Current");
        assert_eq!(
            v1alpha1["resources"][0],
            json!({
                "resource": "flunders",
                "responseKind": {"group": "wardle.example.com", "version": "v1alpha1", "kind": "Flunder"},
                "scope": "Namespaced",
                "singularResource": "flunder",
                "verbs": RESOURCE_VERBS,
                "shortNames": ["fl"],
                "categories": ["all"],
                "subresources": [{
                    "subresource": "status",
                    "responseKind": {"group": "wardle.example.com", "version": "v1alpha1", "kind": "Flunder"},
                    "verbs": ["get"]
                }]
            })
        );
        assert_eq!(doc["items"][1]["metadata"]["name"], "apps.cozystack.io");
    }

    /// Every discovery document of the example kinds, member for member.
    #[test]
    fn documents_from_example_kinds() {
        let s = Registry::from_path(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/kinds"
        )))
        .unwrap()
        .snapshot();
        let text = |doc: &Value| serde_json::to_string_pretty(doc).unwrap();
        insta::assert_snapshot!("apis", text(&api_group_list(&s)));
        insta::assert_snapshot!(
            "apis_apps_cozystack_io",
            text(&api_group(&s, "apps.cozystack.io").unwrap())
        );
        insta::assert_snapshot!(
            "apis_apps_cozystack_io_v1alpha1",
            text(&api_resource_list(&s, "apps.cozystack.io", "v1alpha1").unwrap())
        );
        insta::assert_snapshot!("apis_aggregated", text(&aggregated(&s)));
    }

    #[test]
    fn etags_follow_definitions() {
        let a = snapshot(KINDS);
        let b = snapshot(KINDS);
        let c = snapshot(&KINDS.replace("shortNames: [fl]", "shortNames: [fln]"));
        assert_eq!(etag(&a), etag(&b));
        assert_ne!(etag(&a), etag(&c));
        let e = etag(&a);
        assert!(
            e.starts_with('"') && e.ends_with('"') && e.len() == 130,
            "{e}"
        );
        assert!(
            e[1..129]
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        );
    }

    #[test]
    fn aggregated_negotiation() {
        assert!(wants_aggregated(Some(AGGREGATED_CONTENT_TYPE)));
        assert!(wants_aggregated(Some(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        )));
        assert!(wants_aggregated(Some(
            "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        )));
        assert!(!wants_aggregated(None));
        assert!(!wants_aggregated(Some("application/json")));
        assert!(!wants_aggregated(Some("*/*")));
        assert!(!wants_aggregated(Some(
            "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        )));
        assert!(!wants_aggregated(Some(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        )));
    }
}
