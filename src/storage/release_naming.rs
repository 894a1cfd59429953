//! How an app and its HelmRelease name each other: the HelmRelease's name
//! (the kind's release prefix and the app's name), the labels that say
//! which kind owns it, the prefix user labels and annotations are stored
//! under, and the metadata that is the HelmRelease's own. Both directions of
//! the conversion ([`super::helm_release`], [`super::app_text`]) follow
//! these rules; they live here so that neither imports the other for them.

use serde_json::Value;

use crate::kinds::definition::ResolvedKind;

/// The HelmRelease API version objects are stored as.
pub const HELMRELEASE_API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";
/// Label holding the app's kind.
pub const KIND_LABEL: &str = "apps.cozystack.io/application.kind";
/// Label holding the app's group.
pub const GROUP_LABEL: &str = "apps.cozystack.io/application.group";
/// Label holding the app's name.
pub const NAME_LABEL: &str = "apps.cozystack.io/application.name";
/// Prefix of user labels and annotations stored on the HelmRelease.
pub const USER_KEY_PREFIX: &str = "apps.cozystack.io-";
/// Annotation holding the app's managedFields (the HelmRelease has its own).
pub const MANAGED_FIELDS_ANNOTATION: &str = "apps.cozystack.io/managed-fields";

/// Metadata fields that are the HelmRelease's own and pass through unchanged.
pub(super) const PASSTHROUGH_METADATA: [&str; 7] = [
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "ownerReferences",
];

/// The HelmRelease name of app `name`.
pub fn release_name(kind: &ResolvedKind, name: &str) -> String {
    format!("{}{}", kind.release_prefix, name)
}

/// The app name of a HelmRelease, if it belongs to `kind`.
pub fn app_name<'a>(kind: &ResolvedKind, release_name: &'a str) -> Option<&'a str> {
    release_name.strip_prefix(kind.release_prefix.as_str())
}

/// The label selector that picks `kind`'s HelmReleases.
pub fn ownership_selector(kind: &ResolvedKind) -> String {
    format!(
        "{KIND_LABEL}={},{GROUP_LABEL}={}",
        kind.definition.kind, kind.definition.group
    )
}

/// Whether a HelmRelease belongs to `kind`.
pub fn owned_by(kind: &ResolvedKind, release: &Value) -> bool {
    let labels = release.pointer("/metadata/labels");
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    owns(
        kind,
        label(KIND_LABEL),
        label(GROUP_LABEL),
        release.pointer("/metadata/name").and_then(Value::as_str),
    )
}

/// Whether a HelmRelease with these kind and group labels and this name
/// belongs to `kind`: the labels name the kind, and the name carries its
/// release prefix.
pub(super) fn owns(
    kind: &ResolvedKind,
    kind_label: Option<&str>,
    group_label: Option<&str>,
    name: Option<&str>,
) -> bool {
    kind_label == Some(kind.definition.kind.as_str())
        && group_label == Some(kind.definition.group.as_str())
        && name.and_then(|n| app_name(kind, n)).is_some()
}
