//! Kind definitions that live in a cluster as Cozystack `ApplicationDefinition`
//! objects (`cozystack.io/v1alpha1`, cluster-scoped): a one-shot read, and a
//! watch that rebuilds the registry on every change (no restart, unlike the Go
//! original, which rolls its Deployment).

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::runtime::watcher;

use super::cozystack;
use super::load::{self, LoadError, Loaded};
use super::registry::Registry;

/// The API resource of Cozystack's ApplicationDefinition.
pub fn api_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cozystack.io", "v1alpha1", "ApplicationDefinition"),
        "applicationdefinitions",
    )
}

/// Converts a set of ApplicationDefinition objects (by name) into definitions.
pub(crate) fn convert_all<'a>(
    objects: impl IntoIterator<Item = &'a DynamicObject>,
) -> Result<Loaded, LoadError> {
    let mut kinds = Vec::new();
    let mut warnings = Vec::new();
    let mut problems = Vec::new();
    for object in objects {
        let value = serde_json::to_value(object).unwrap_or_default();
        let name = object.metadata.name.clone().unwrap_or_default();
        match cozystack::from_application_definition(&value) {
            Ok(converted) => {
                warnings.extend(
                    converted
                        .warnings
                        .iter()
                        .map(|w| format!("ApplicationDefinition {name}: {w}")),
                );
                match converted.definition.resolve(converted.origin) {
                    Ok(kind) => kinds.push(kind),
                    Err(found) => problems.extend(
                        found
                            .into_iter()
                            .map(|p| format!("ApplicationDefinition {name}: {p}")),
                    ),
                }
            }
            Err(why) => problems.push(why),
        }
    }
    if !problems.is_empty() {
        return Err(LoadError::Invalid { problems });
    }
    load::from_resolved(kinds, warnings)
}

/// Reads every ApplicationDefinition once.
pub(crate) async fn read(client: kube::Client) -> Result<Loaded, ReadError> {
    let api: Api<DynamicObject> = Api::all_with(client, &api_resource());
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(ReadError::List)?;
    convert_all(list.items.iter()).map_err(ReadError::Invalid)
}

/// Reading ApplicationDefinitions failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// The list call failed (no CRD, no access, no cluster).
    #[error("list ApplicationDefinitions (cozystack.io/v1alpha1)")]
    List(#[source] kube::Error),
    /// The objects are not valid definitions.
    #[error(transparent)]
    Invalid(LoadError),
}

/// Keeps `registry` in sync with the cluster's ApplicationDefinitions until
/// the returned task is aborted. Changes are debounced briefly so a burst of
/// edits produces one swap; an invalid set is refused and logged.
pub fn watch(client: kube::Client, registry: Registry) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let api: Api<DynamicObject> = Api::all_with(client, &api_resource());
        let mut stream = watcher(api, watcher::Config::default()).boxed();
        let mut objects: BTreeMap<String, DynamicObject> = BTreeMap::new();
        let mut initial: Option<BTreeMap<String, DynamicObject>> = None;
        loop {
            let event = match tokio::time::timeout(Duration::from_millis(200), stream.next()).await
            {
                Ok(Some(event)) => event,
                Ok(None) => return,
                Err(_) => continue,
            };
            let changed = match event {
                Ok(watcher::Event::Init) => {
                    initial = Some(BTreeMap::new());
                    false
                }
                Ok(watcher::Event::InitApply(obj)) => {
                    if let Some(init) = initial.as_mut() {
                        init.insert(obj.metadata.name.clone().unwrap_or_default(), obj);
                    }
                    false
                }
                Ok(watcher::Event::InitDone) => {
                    objects = initial.take().unwrap_or_default();
                    true
                }
                Ok(watcher::Event::Apply(obj)) => {
                    objects.insert(obj.metadata.name.clone().unwrap_or_default(), obj);
                    true
                }
                Ok(watcher::Event::Delete(obj)) => {
                    objects.remove(&obj.metadata.name.clone().unwrap_or_default());
                    true
                }
                Err(err) => {
                    tracing::warn!("watching ApplicationDefinitions: {err}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    false
                }
            };
            if changed {
                registry.apply(convert_all(objects.values()));
            }
        }
    })
}
