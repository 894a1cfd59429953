//! What a standalone server's Terminating namespace still holds, counted
//! as kube-controller-manager's namespace controller counts it for the
//! namespace's deletion conditions
//! ([`crate::storage::namespace_conditions`]): its apps per resource
//! (`postgreses.apps.cozystack.io`, by the kind labels each app's release
//! carries and the kinds served now), and per finalizer the apps it holds.

use serde_json::Value;

use crate::kinds::Registry;
use crate::kinds::registry::Snapshot;
use crate::storage::StoreError;
use crate::storage::embedded_store::EmbeddedStore;
use crate::storage::namespace_conditions::Remaining;

/// The release labels naming an app's kind and group.
const KIND_LABEL: &str = "apps.cozystack.io/application.kind";
const GROUP_LABEL: &str = "apps.cozystack.io/application.group";
/// What a release of no served kind is counted as: what it is stored as.
const RELEASES: &str = "helmreleases.helm.toolkit.fluxcd.io";

/// What is left in namespace `name`.
pub(super) fn remaining_in(
    store: &EmbeddedStore,
    registry: &Registry,
    name: &str,
) -> Result<Remaining, StoreError> {
    let snapshot = registry.snapshot();
    let mut remaining = Remaining::default();
    for release in store.objects_of(name)? {
        *remaining
            .resources
            .entry(resource_of(&snapshot, &release))
            .or_default() += 1;
        let finalizers = release
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        for finalizer in finalizers {
            *remaining
                .finalizers
                .entry(finalizer.to_owned())
                .or_default() += 1;
        }
    }
    Ok(remaining)
}

/// The resource (`plural.group`) `release` is served as.
fn resource_of(snapshot: &Snapshot, release: &Value) -> String {
    let label = |key: &str| {
        release
            .pointer("/metadata/labels")
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
    };
    let (Some(kind), Some(group)) = (label(KIND_LABEL), label(GROUP_LABEL)) else {
        return RELEASES.to_owned();
    };
    snapshot
        .kinds()
        .iter()
        .map(|k| &k.resolved.definition)
        .find(|d| d.kind == kind && d.group == group)
        .map_or_else(
            || RELEASES.to_owned(),
            |d| format!("{}.{}", d.plural, d.group),
        )
}
