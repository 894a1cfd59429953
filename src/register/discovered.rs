//! Whether kube-apiserver's **aggregated discovery** (`/apis` as an
//! `APIGroupDiscoveryList`, the document kubectl reads first) lists serve's
//! group-versions, fresh and with their resources.
//!
//! An APIService turning `Available` is not the end of the story: the
//! aggregator's discovery manager fetches the new backend's discovery and
//! merges it into `/apis` a moment later, and a taken-over APIService may
//! still be listed there as `Stale` from its previous backend. Until then
//! `kubectl get <kind>` answers "the server doesn't have a resource type".
//! Serve says `Ready` only once [`wait_listed`] has seen every served
//! group-version in the document. A kube-apiserver without aggregated
//! discovery (before 1.26) answers with the legacy `APIGroupList`, whose
//! per-group documents the aggregator proxies live: nothing to wait for.

use std::time::{Duration, Instant};

use kube::Client;
use kube::core::discovery::v2::{ACCEPT_AGGREGATED_DISCOVERY_V2, APIGroupDiscoveryList};

use super::apiservice::GroupVersion;

/// What the aggregated discovery says of one group-version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// Listed, fresh, with resources.
    Listed,
    /// Not in the document yet.
    Missing,
    /// Listed but `Stale` (the aggregator could not refresh it yet).
    Stale,
    /// Listed, fresh, but without resources.
    Empty,
}

/// Why waiting failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryWaitError {
    /// The limit passed.
    #[error(
        "kube-apiserver's discovery does not list {group_version} after {waited:?} ({listing:?})"
    )]
    Timeout {
        /// The group-version not listed.
        group_version: String,
        /// How long was waited.
        waited: Duration,
        /// Its last listing.
        listing: Listing,
    },
    /// Reading `/apis` failed.
    #[error("read kube-apiserver's discovery (/apis)")]
    Read(#[source] kube::Error),
}

/// How `gv` appears in `list`.
pub fn listing(list: &APIGroupDiscoveryList, gv: &GroupVersion) -> Listing {
    let version = list
        .items
        .iter()
        .filter(|g| g.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some(&gv.group))
        .flat_map(|g| &g.versions)
        .find(|v| v.version.as_deref() == Some(&gv.version));
    match version {
        None => Listing::Missing,
        Some(v) if v.freshness.as_deref() == Some("Stale") => Listing::Stale,
        Some(v) if v.resources.is_empty() => Listing::Empty,
        Some(_) => Listing::Listed,
    }
}

/// Reads `/apis` as aggregated discovery; `None` when the server answers
/// with the legacy document.
async fn read(client: &Client) -> Result<Option<APIGroupDiscoveryList>, kube::Error> {
    let request = http::Request::get("/apis")
        .header(http::header::ACCEPT, ACCEPT_AGGREGATED_DISCOVERY_V2)
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    let text = client.request_text(request).await?;
    // Parsed once: the kind decides, then the same tree becomes the list.
    let Ok(document) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(None);
    };
    if document.get("kind").and_then(serde_json::Value::as_str) != Some("APIGroupDiscoveryList") {
        return Ok(None);
    }
    serde_json::from_value(document)
        .map(Some)
        .map_err(kube::Error::SerdeError)
}

/// Polls `/apis` until every group-version of `served` is [`Listing::Listed`],
/// calling `progress` with the first one that is not; gives up after `limit`.
pub async fn wait_listed(
    client: &Client,
    served: &[GroupVersion],
    limit: Duration,
    mut progress: impl FnMut(&GroupVersion, &Listing),
) -> Result<(), DiscoveryWaitError> {
    let started = Instant::now();
    loop {
        let Some(list) = read(client).await.map_err(DiscoveryWaitError::Read)? else {
            return Ok(());
        };
        let pending = served
            .iter()
            .map(|gv| (gv, listing(&list, gv)))
            .find(|(_, l)| *l != Listing::Listed);
        let Some((gv, last)) = pending else {
            return Ok(());
        };
        progress(gv, &last);
        if started.elapsed() >= limit {
            return Err(DiscoveryWaitError::Timeout {
                group_version: gv.to_string(),
                waited: limit,
                listing: last,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(versions: serde_json::Value) -> APIGroupDiscoveryList {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apidiscovery.k8s.io/v2",
            "kind": "APIGroupDiscoveryList",
            "metadata": {},
            "items": [
                {"metadata": {"name": "apps"}, "versions": [{"version": "v1", "resources": [
                    {"resource": "deployments", "scope": "Namespaced", "verbs": ["get"]}]}]},
                {"metadata": {"name": "apps.cozystack.io"}, "versions": versions}
            ]
        }))
        .unwrap()
    }

    fn gv(version: &str) -> GroupVersion {
        GroupVersion {
            group: "apps.cozystack.io".into(),
            version: version.into(),
        }
    }

    #[test]
    fn a_version_is_listed_only_when_fresh_and_with_resources() {
        let postgres = serde_json::json!([
            {"resource": "postgreses", "scope": "Namespaced", "verbs": ["get", "list"]}
        ]);
        let fresh = list(serde_json::json!([{"version": "v1alpha1", "resources": postgres}]));
        assert_eq!(listing(&fresh, &gv("v1alpha1")), Listing::Listed);
        assert_eq!(listing(&fresh, &gv("v1beta1")), Listing::Missing);
        let stale = list(serde_json::json!([
            {"version": "v1alpha1", "resources": postgres, "freshness": "Stale"}
        ]));
        assert_eq!(listing(&stale, &gv("v1alpha1")), Listing::Stale);
        let empty = list(serde_json::json!([{"version": "v1alpha1", "freshness": "Current"}]));
        assert_eq!(listing(&empty, &gv("v1alpha1")), Listing::Empty);
        let other_group = GroupVersion {
            group: "apps".into(),
            version: "v1alpha1".into(),
        };
        assert_eq!(listing(&fresh, &other_group), Listing::Missing);
    }
}
