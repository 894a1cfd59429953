//! What is in the namespaces in scope: the namespaces themselves (all for
//! `-A`, the one for `-n`, else the Terminating ones), every namespaced
//! resource type listed for their content (metadata only, in parallel, dead
//! groups skipped), and the CRDs by group when a finalizer's owner must be
//! named. All of it talks to the cluster; the conclusions are in
//! [`super::namespaces`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use futures::future::join_all;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams};

use super::discovery::ResourceType;
use super::findings::{ObjectRef, RemainingObject, ScopeKind, Unchecked};
use super::requester::{CallError, Requester};

/// The namespaces in scope.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Namespaces (all for `-A`, the one for `-n`, else the Terminating ones).
    pub namespaces: Vec<Namespace>,
    /// For `-n`: whether the namespace exists.
    pub missing: Option<String>,
    /// What could not be read.
    pub unchecked: Vec<Unchecked>,
}

/// Reads the namespaces in scope.
pub async fn load(req: &Requester, scope: ScopeKind, namespace: Option<&str>) -> Loaded {
    let api: Api<Namespace> = Api::all(req.client().clone());
    let mut loaded = Loaded::default();
    match (scope, namespace) {
        (ScopeKind::Namespace, Some(name)) => match req.call(api.get_opt(name)).await {
            Ok(Some(ns)) => loaded.namespaces.push(ns),
            Ok(None) => loaded.missing = Some(name.to_owned()),
            Err(err) => loaded
                .unchecked
                .push(err.unchecked(format!("get namespace {name}"))),
        },
        _ => match req.call(api.list(&ListParams::default())).await {
            Ok(list) => {
                loaded.namespaces = list
                    .items
                    .into_iter()
                    .filter(|ns| scope == ScopeKind::All || is_terminating(ns))
                    .collect();
            }
            Err(err) => loaded.unchecked.push(err.unchecked("list namespaces")),
        },
    }
    loaded
        .namespaces
        .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    loaded
}

/// Terminating: deletion requested (the phase follows the timestamp).
pub fn is_terminating(ns: &Namespace) -> bool {
    ns.metadata.deletion_timestamp.is_some()
        || ns.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating")
}

/// Objects found by listing content.
#[derive(Debug, Default)]
pub struct Content {
    /// Namespace → objects (all objects of Terminating namespaces; objects
    /// being deleted that still have finalizers, elsewhere).
    pub objects: BTreeMap<String, Vec<RemainingObject>>,
    /// Resource types listed successfully.
    pub types_listed: usize,
    /// Resource types that could not be listed (or were skipped).
    pub types_failed: usize,
    /// What could not be listed, and why.
    pub unchecked: Vec<Unchecked>,
    /// Groups whose lists timed out or answered 503 (the first answer): the
    /// namespace controller, which lists and deletes every type in a
    /// Terminating namespace, is stuck on them too.
    pub unresponsive: BTreeMap<String, String>,
}

/// Lists every namespaced resource type for the namespaces in `targets`
/// (`terminating` is the subset whose whole content is wanted). Groups in
/// `skip` are not listed (their discovery or APIService is known to fail: one
/// unchecked entry each, no request). A group whose list times out is marked
/// dead and its other types are not requested either.
pub async fn scan(
    req: &Requester,
    targets: &BTreeSet<String>,
    terminating: &BTreeSet<String>,
    resources: &[ResourceType],
    skip: &BTreeMap<String, String>,
) -> Content {
    let mut content = Content::default();
    if targets.is_empty() {
        return content;
    }
    let mut skipped: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut todo = Vec::new();
    for r in resources {
        if let Some(reason) = skip.get(&r.group) {
            skipped.entry(reason.as_str()).or_default().push(r.label());
        } else {
            todo.push(r);
        }
    }
    for (reason, labels) in skipped {
        content.types_failed += labels.len();
        content.unchecked.push(Unchecked {
            what: format!("list {}", labels.join(", ")),
            reason: reason.to_owned(),
            status: None,
        });
    }
    let dead: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    // A few namespaces: list in each (works with namespace-scoped RBAC too).
    // Many: one cluster-wide list per type, per-namespace only when forbidden.
    let per_namespace = targets.len() <= 3;
    let results = join_all(
        todo.iter()
            .map(|r| list_type(req, r, targets, per_namespace, dead.clone())),
    )
    .await;
    for result in results {
        match result {
            Ok(items) => {
                content.types_listed += 1;
                for (ns, object) in items {
                    let keep = terminating.contains(&ns)
                        || (object.deletion_timestamp.is_some() && !object.finalizers.is_empty());
                    if keep {
                        content.objects.entry(ns).or_default().push(object);
                    }
                }
            }
            Err(unchecked) => {
                content.types_failed += 1;
                content.unchecked.extend(unchecked);
            }
        }
    }
    collapse_forbidden(&mut content.unchecked);
    content.unresponsive = dead.lock().map(|d| d.clone()).unwrap_or_default();
    for objects in content.objects.values_mut() {
        objects.sort_by(|a, b| {
            (&a.object.api_version, &a.object.kind, &a.object.name).cmp(&(
                &b.object.api_version,
                &b.object.kind,
                &b.object.name,
            ))
        });
    }
    content
}

/// Many types forbidden alike (limited RBAC) read better as one entry that
/// names them all and quotes the first refusal.
fn collapse_forbidden(unchecked: &mut Vec<Unchecked>) {
    let (forbidden, mut rest): (Vec<Unchecked>, Vec<Unchecked>) = std::mem::take(unchecked)
        .into_iter()
        .partition(|u| matches!(u.status, Some(401 | 403)));
    if forbidden.len() <= 3 {
        rest.extend(forbidden);
    } else {
        // `list TYPE` or `list TYPE in namespace NS`: counted by type and
        // namespace, a few types named (a table cell, not a dump).
        const NAMED: usize = 10;
        let mut types: BTreeSet<&str> = BTreeSet::new();
        let mut namespaces: BTreeSet<&str> = BTreeSet::new();
        for u in &forbidden {
            let what = u.what.strip_prefix("list ").unwrap_or(&u.what);
            match what.split_once(" in namespace ") {
                Some((kind, ns)) => {
                    types.insert(kind);
                    namespaces.insert(ns);
                }
                None => {
                    types.insert(what);
                }
            }
        }
        let mut named: Vec<&str> = types.iter().copied().take(NAMED).collect();
        let more = types.len().saturating_sub(NAMED);
        let more = (more > 0).then(|| format!("and {more} more"));
        named.extend(more.as_deref());
        let scope = match namespaces.len() {
            0 => String::new(),
            1 => " in 1 namespace".to_owned(),
            n => format!(" in {n} namespaces"),
        };
        rest.push(Unchecked {
            what: format!(
                "list {} namespaced resource types{scope}: {}",
                types.len(),
                named.join(", ")
            ),
            reason: format!("{} (and alike for the others)", forbidden[0].reason),
            status: forbidden[0].status,
        });
    }
    *unchecked = rest;
}

type Listed = Vec<(String, RemainingObject)>;

async fn list_type(
    req: &Requester,
    r: &ResourceType,
    targets: &BTreeSet<String>,
    per_namespace: bool,
    dead: Arc<Mutex<BTreeMap<String, String>>>,
) -> Result<Listed, Vec<Unchecked>> {
    let ar = r.api_resource();
    if !per_namespace {
        let api: Api<DynamicObject> = Api::all_with(req.client().clone(), &ar);
        match list_all(req, r, &api, &dead).await {
            Ok(items) => {
                return Ok(items
                    .into_iter()
                    .filter(|(ns, _)| targets.contains(ns))
                    .collect());
            }
            Err(err) if err.is_forbidden() => {}
            Err(err) => return Err(vec![err.unchecked(format!("list {}", r.label()))]),
        }
    }
    let lists = join_all(targets.iter().map(|ns| {
        let api: Api<DynamicObject> = Api::namespaced_with(req.client().clone(), ns, &ar);
        let dead = dead.clone();
        async move { (ns, list_all(req, r, &api, &dead).await) }
    }))
    .await;
    let mut items = Vec::new();
    let mut unchecked = Vec::new();
    for (ns, result) in lists {
        match result {
            Ok(found) => items.extend(found),
            Err(err) => {
                unchecked.push(err.unchecked(format!("list {} in namespace {ns}", r.label())))
            }
        }
    }
    if unchecked.is_empty() {
        Ok(items)
    } else {
        Err(unchecked)
    }
}

/// Lists one type (all pages), metadata only.
async fn list_all(
    req: &Requester,
    r: &ResourceType,
    api: &Api<DynamicObject>,
    dead: &Mutex<BTreeMap<String, String>>,
) -> Result<Listed, CallError> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        if let Some(reason) = dead.lock().ok().and_then(|d| d.get(&r.group).cloned()) {
            return Err(CallError::Transport(format!(
                "not requested: an earlier list in group {} got {reason}",
                r.group
            )));
        }
        let mut params = ListParams::default().limit(500);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let page = match req.call(api.list_metadata(&params)).await {
            Ok(page) => page,
            Err(err) => {
                if (err.is_timeout() || err.status() == Some(503))
                    && let Ok(mut d) = dead.lock()
                {
                    d.entry(r.group.clone()).or_insert_with(|| err.to_string());
                }
                return Err(err);
            }
        };
        for item in page.items {
            let m = item.metadata;
            let ns = m.namespace.clone().unwrap_or_default();
            out.push((
                ns.clone(),
                RemainingObject {
                    object: ObjectRef {
                        api_version: r.api_version(),
                        kind: r.kind.clone(),
                        resource: r.plural.clone(),
                        namespace: Some(ns),
                        name: m.name.unwrap_or_default(),
                    },
                    finalizers: m.finalizers.unwrap_or_default(),
                    deletion_timestamp: m.deletion_timestamp.map(|t| t.0.to_string()),
                    resource_version: m.resource_version,
                    labels: m.labels.unwrap_or_default(),
                },
            ));
        }
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            return Ok(out);
        }
    }
}

/// CRDs by group (for naming the owners of finalizers), read only when some
/// finalizer needs it.
pub async fn crd_groups(req: &Requester) -> (BTreeMap<String, Vec<String>>, Vec<Unchecked>) {
    let api: Api<CustomResourceDefinition> = Api::all(req.client().clone());
    match req.call(api.list_metadata(&ListParams::default())).await {
        Ok(list) => {
            let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for crd in list.items {
                let name = crd.metadata.name.unwrap_or_default();
                if let Some((_, group)) = name.split_once('.') {
                    groups
                        .entry(group.to_owned())
                        .or_default()
                        .push(name.clone());
                }
            }
            (groups, Vec::new())
        }
        Err(err) => (
            BTreeMap::new(),
            vec![err.unchecked("list customresourcedefinitions (to name finalizer owners)")],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user who may list nothing, 36 types in 43 namespaces: one entry
    /// that counts types and namespaces and names a few, not 1,548 lines
    /// in one table cell.
    #[test]
    fn many_refusals_are_one_short_entry() {
        let mut unchecked: Vec<Unchecked> = (0..36)
            .flat_map(|t| {
                (0..43).map(move |n| Unchecked {
                    what: format!("list type{t:02} in namespace ns{n:02}"),
                    reason: "forbidden".into(),
                    status: Some(403),
                })
            })
            .collect();
        collapse_forbidden(&mut unchecked);
        assert_eq!(unchecked.len(), 1);
        assert_eq!(
            unchecked[0].what,
            "list 36 namespaced resource types in 43 namespaces: type00, type01, type02, type03, type04, \
             type05, type06, type07, type08, type09, and 26 more"
        );
        assert_eq!(unchecked[0].reason, "forbidden (and alike for the others)");
    }
}
