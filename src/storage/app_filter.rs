//! Which apps a list, watch or deletecollection sees: one served kind's, in
//! one namespace or all, matching a label and a field selector; and, for a
//! watch, what each change of the cache looks like to it (k8s.io/apiserver's
//! cacher turns changes into a watcher's events the same way: an object
//! entering the selection is ADDED, leaving it DELETED).
//!
//! HelmReleases of other kinds are skipped without parsing them; the apps
//! handed out are the views kept with the cached objects
//! ([`Stored::app_view`]), so a thousand watchers cost one conversion per
//! change, not a thousand.

use std::sync::Arc;

use super::cache::{CacheEvent, EventType, Key, Stored};
use super::helm_release::{self, AppView};
use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::labels::LabelSelector;
use crate::kinds::registry::ServedKind;

/// The apps of one kind a request selects.
#[derive(Debug, Clone)]
pub(crate) struct AppFilter {
    kind: Arc<ServedKind>,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

/// What a change in the cache is to a watcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WatchEventType {
    /// The app entered the selection (created, or changed into it).
    Added,
    /// A selected app changed and is still selected.
    Modified,
    /// The app left the selection (deleted, or changed out of it).
    Deleted,
}

impl WatchEventType {
    /// The event's `type` on the wire.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WatchEventType::Added => "ADDED",
            WatchEventType::Modified => "MODIFIED",
            WatchEventType::Deleted => "DELETED",
        }
    }
}

impl AppFilter {
    /// The apps of `kind` in `namespace` (all when `None`) that match both selectors.
    pub(crate) fn new(
        kind: Arc<ServedKind>,
        namespace: Option<String>,
        labels: LabelSelector,
        fields: FieldSelector,
    ) -> AppFilter {
        AppFilter {
            kind,
            namespace,
            labels,
            fields,
        }
    }

    /// The served kind.
    pub(crate) fn kind(&self) -> &Arc<ServedKind> {
        &self.kind
    }

    /// The label selector.
    pub(crate) fn labels(&self) -> &LabelSelector {
        &self.labels
    }

    /// Whether a label or field selector narrows the selection (then a
    /// list page gives no `remainingItemCount`, as kube-apiserver's).
    pub(crate) fn has_selector(&self) -> bool {
        !self.labels.is_empty() || !self.fields.requirements().is_empty()
    }

    /// The namespace selected, if only one.
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The app `stored` (at `key`) is, if it is selected.
    pub(crate) fn app(&self, key: &Key, stored: &Stored) -> Option<Arc<AppView>> {
        let kind = &self.kind;
        let (namespace, release) = key.parts();
        if stored.kind_label() != Some(kind.resolved.definition.kind.as_str()) {
            return None;
        }
        if self.namespace.as_ref().is_some_and(|ns| ns != namespace) {
            return None;
        }
        let name = helm_release::app_name(&kind.resolved, release)?;
        if !self.fields.matches(name, namespace) {
            return None;
        }
        let view = stored.app_view(kind)?;
        (self.labels.is_empty() || self.labels.matches(Some(&view.labels()))).then_some(view)
    }

    /// What `event` is to a watcher of this selection, if anything.
    pub(crate) fn watch_event(&self, event: &CacheEvent) -> Option<(WatchEventType, Arc<AppView>)> {
        let before = event
            .previous
            .as_ref()
            .and_then(|previous| self.app(&event.key, previous));
        let after = match event.event_type {
            EventType::Deleted => None,
            _ => self.app(&event.key, &event.object),
        };
        match (before, after) {
            (None, Some(app)) => Some((WatchEventType::Added, app)),
            (Some(_), Some(app)) => Some((WatchEventType::Modified, app)),
            // Deleted, or no longer selected: its last state, if still an app of this kind.
            (Some(old), None) => {
                let kind = &self.kind;
                let last = event.object.app_view(kind).unwrap_or(old);
                Some((WatchEventType::Deleted, last))
            }
            (None, None) if event.event_type == EventType::Deleted && event.previous.is_none() => {
                // A deletion seen only after a relist: no previous state known.
                self.app(&event.key, &event.object)
                    .map(|app| (WatchEventType::Deleted, app))
            }
            (None, None) => None,
        }
    }
}
