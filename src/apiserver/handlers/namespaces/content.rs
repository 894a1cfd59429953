//! What a standalone server's Terminating namespace still holds, counted
//! as kube-controller-manager's namespace controller counts it for the
//! namespace's deletion conditions
//! ([`crate::storage::namespace_conditions`]): its apps per resource
//! (`postgreses.apps.cozystack.io`, the served kind owning each app's
//! release), and per finalizer the apps it holds.

use serde_json::Value;

use crate::kinds::Registry;
use crate::kinds::registry::Snapshot;
use crate::storage::StoreError;
use crate::storage::embedded_store::EmbeddedStore;
use crate::storage::helm_release::owned_by;
use crate::storage::namespace_conditions::Remaining;

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

/// The resource (`plural.group`) `release` is served as: that of the
/// served kind owning it ([`owned_by`], as lists and watches decide).
fn resource_of(snapshot: &Snapshot, release: &Value) -> String {
    snapshot
        .kinds()
        .iter()
        .find(|k| owned_by(&k.resolved, release))
        .map_or_else(
            || RELEASES.to_owned(),
            |k| {
                let d = &k.resolved.definition;
                format!("{}.{}", d.plural, d.group)
            },
        )
}
