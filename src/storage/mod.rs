//! Where apps live: as Flux HelmReleases, in a cluster or in the embedded
//! store of `serve --standalone`. Both backends speak in HelmRelease objects
//! (`serde_json::Value`) with Kubernetes semantics — monotonic
//! resourceVersions, preconditions, finalizers, watch — so the server above
//! them runs the same code either way; the [`app_store`] on top speaks in
//! apps.
//!
//! - [`app_store`]: apps of a served kind — get, list, watch, create,
//!   update, delete — over the cache and a backend (sample-apiserver's REST
//!   storage); what the handlers use
//! - [`app_filter`]: which apps a list or watch selects, and what a change
//!   is to a watcher
//! - [`helm_release`]: App ⇄ HelmRelease, pure functions
//! - [`view_labels`]: an app's labels, read from its kept JSON without the rest
//! - [`cache`]: one shared watch per server serving every read and watch
//! - [`embedded_store`]: the SQLite-backed backend for standalone mode
//! - [`cluster_store`]: the backend of HelmReleases in a real cluster, through kube-rs
//! - [`metadata_list`]: a page of the consistent-read check (upstream's
//!   metadata list, protobuf or JSON), read for versions only
//! - [`namespace_store`]: the namespaces of standalone mode
//! - [`store_lock`]: the one-server-per-store lock of standalone mode
//! - [`private_files`]: owner-only files and directories for the store
//!
//! Writes name the user they are made for, so that `serve --impersonate`
//! can make them upstream as that user.

pub(crate) mod app_filter;
pub mod app_store;
mod app_text;
pub mod cache;
pub(crate) mod cache_thread;
pub mod cluster_store;
pub mod embedded_store;
pub mod helm_release;
mod json_slices;
mod kept_text;
pub mod key;
pub mod metadata_list;
pub mod namespace_conditions;
pub mod namespace_history;
pub mod namespace_store;
pub mod private_files;
pub mod release_json;
mod release_naming;
mod spec_on_read;
pub mod store_lock;
mod stranded;
mod view_labels;

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use serde_json::Value;

use self::helm_release::ReleaseObject;
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::user::UserInfo;
use crate::kinds::registry::ServedKind;

/// A change to a stored HelmRelease.
#[derive(Debug, Clone)]
pub enum StoreEvent {
    /// Created.
    Added(Arc<Value>),
    /// Changed.
    Modified(Arc<Value>),
    /// Gone (the last state).
    Deleted(Arc<Value>),
    /// No change to our objects up to this resourceVersion.
    Bookmark(u64),
    /// Created or changed upstream (the cluster store's watch): the object
    /// as upstream's text, parsed only if the cache does not hold this
    /// version already (see [`release_json`]).
    Changed(Arc<release_json::ReleaseText>),
}

impl StoreEvent {
    /// The resourceVersion this event brings the store to.
    pub fn resource_version(&self) -> u64 {
        match self {
            StoreEvent::Added(o) | StoreEvent::Modified(o) | StoreEvent::Deleted(o) => {
                resource_version(o)
            }
            StoreEvent::Bookmark(rv) => *rv,
            StoreEvent::Changed(text) => text.resource_version,
        }
    }
}

/// Upstream's answer to a create, an update or a delete: the HelmRelease as
/// stored (a delete's answer may be a `Status`), as it came. The app store
/// keeps it for the cache and makes the answer's app from it in one reading
/// ([`cache::Stored::from_answer`], [`cache::Stored::from_delete_answer`]).
#[derive(Debug)]
pub enum Written {
    /// A cluster's answer: its JSON text.
    Text(String),
    /// The embedded store's answer.
    Value(Value),
}

/// A consistent list of every owned HelmRelease at one resourceVersion,
/// kept compactly as it arrives (see [`cache::Stored`]).
#[derive(Debug, Clone)]
pub struct Listing {
    /// The objects, by `(namespace, name)`.
    pub items: Vec<(cache::Key, Arc<cache::Stored>)>,
    /// The resourceVersion of the list.
    pub resource_version: u64,
}

/// The owned HelmReleases a consistent read must reflect: one kind's, in
/// one namespace or all, optionally one release, optionally only the apps a
/// label selector picks.
#[derive(Debug, Clone, Default)]
pub struct ReadScope {
    /// The app kind (the value of the kind label).
    pub kind: String,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only this HelmRelease name.
    pub release: Option<String>,
    /// Only the apps this label selector picks, upstream and in the cache.
    pub labels: Option<ScopeLabels>,
}

impl ReadScope {
    /// Whether the stored HelmRelease `stored` under `key` is in the scope.
    pub fn contains(&self, key: &cache::Key, stored: &cache::Stored) -> bool {
        let (namespace, name) = key.parts();
        self.namespace.as_ref().is_none_or(|ns| ns == namespace)
            && self.release.as_ref().is_none_or(|release| release == name)
            && stored.kind_label() == Some(self.kind.as_str())
            && self.labels.as_ref().is_none_or(|l| l.selects(stored))
    }
}

/// A list's label selector as a consistent read's scope: upstream is asked
/// for the HelmReleases whose labels (the app's, stored under
/// [`helm_release::USER_KEY_PREFIX`]) it picks, and the cache's side of the
/// comparison keeps the apps it picks, so a check of `kubectl get -l` costs
/// what the selected apps cost upstream rather than the whole scope. Both
/// sides select by the same labels, so the comparison stays exact: an app
/// whose labels changed is on one side only until the cache has the change.
#[derive(Debug, Clone)]
pub struct ScopeLabels {
    kind: Arc<ServedKind>,
    /// In the app's terms.
    selector: LabelSelector,
    /// The same in the HelmRelease's terms, as a query value.
    upstream: String,
}

impl ScopeLabels {
    /// The scope of `selector` over `kind`'s apps; `None` when it selects
    /// everything, or when a stored key would not be a valid label key (no
    /// such label can be stored, and upstream would refuse the selector).
    pub(crate) fn new(kind: Arc<ServedKind>, selector: &LabelSelector) -> Option<ScopeLabels> {
        if selector.is_empty() {
            return None;
        }
        let upstream = selector
            .with_key_prefix(helm_release::USER_KEY_PREFIX)?
            .to_string();
        Some(ScopeLabels {
            kind,
            selector: selector.clone(),
            upstream,
        })
    }

    /// The selector upstream is asked with (besides the ownership labels).
    pub fn upstream_selector(&self) -> &str {
        &self.upstream
    }

    /// Whether the app `stored` holds is picked (read from its kept view).
    /// A HelmRelease that carries the kind's labels but is no app of it (a
    /// name without the release prefix) is picked by nothing here while
    /// upstream's selector may list it: the comparison then fails and the
    /// read waits for the cache to reach upstream's revision, which is
    /// slower, never wrong.
    fn selects(&self, stored: &cache::Stored) -> bool {
        stored
            .app_view(&self.kind)
            .is_some_and(|view| self.selector.matches(Some(&view.labels())))
    }
}

/// Where upstream is right now, for a consistent read.
#[derive(Debug, Clone)]
pub struct UpstreamState {
    /// Upstream's current resourceVersion: a cache at or past it is current.
    pub revision: u64,
    /// The resourceVersion of every HelmRelease in the scope at `revision`,
    /// when upstream's revision also counts changes the cache never sees
    /// (a cluster's etcd revision): a cache behind `revision` whose scope
    /// holds exactly these is current too.
    pub versions: Option<HashMap<cache::Key, u64>>,
}

/// Options of a delete.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// Only delete this uid.
    pub uid: Option<String>,
    /// Only delete at this resourceVersion.
    pub resource_version: Option<String>,
    /// `Orphan`, `Background` or `Foreground`.
    pub propagation_policy: Option<String>,
    /// Do not persist.
    pub dry_run: bool,
}

/// Store errors, each mapping to a Kubernetes Status.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// 404.
    #[error("not found")]
    NotFound,
    /// 409 AlreadyExists; `being_deleted` when the object in the way has a
    /// deletionTimestamp (kube-apiserver's message then says so).
    #[error("already exists")]
    AlreadyExists {
        /// The existing object is being deleted.
        being_deleted: bool,
    },
    /// 409 Conflict (stale resourceVersion or failed precondition).
    #[error("{0}")]
    Conflict(String),
    /// 410: the requested resourceVersion is no longer available.
    #[error("too old resource version: {0}")]
    Gone(String),
    /// An error Status from the upstream kube-apiserver, passed through.
    #[error("{message}")]
    Upstream {
        /// HTTP code.
        code: u16,
        /// Status reason.
        reason: String,
        /// Status message.
        message: String,
        /// `details.retryAfterSeconds` (APF's 429, a 503 while
        /// kube-apiserver starts), passed on to the client.
        retry_after: Option<u64>,
    },
    /// The cluster's kube-apiserver could not be reached (connection
    /// refused, reset or failed).
    #[error("{0}")]
    Unavailable(String),
    /// Anything else (I/O, database, encoding).
    #[error("{0}")]
    Internal(String),
}

/// etcd's default `--max-request-bytes` (1.5 MiB): kube-apiserver cannot
/// store an object whose JSON is longer (etcd refuses the write), and the
/// embedded store keeps none either.
pub(crate) const MAX_STORED_BYTES: usize = 1536 * 1024;

/// Refuses an object's stored JSON `body` longer than [`MAX_STORED_BYTES`] as
/// kube-apiserver does when etcd refuses it: a 500 whose message is etcd's,
/// `etcdserver: request is too large`, with no reason (kubectl prints
/// `Error from server: etcdserver: request is too large`).
pub(crate) fn fits_in_etcd(body: &str) -> Result<(), StoreError> {
    if body.len() <= MAX_STORED_BYTES {
        return Ok(());
    }
    Err(StoreError::Upstream {
        code: 500,
        reason: String::new(),
        message: "etcdserver: request is too large".to_owned(),
        retry_after: None,
    })
}

/// Whether a stored object (an app's HelmRelease, a namespace) is being
/// deleted: it has a deletionTimestamp.
pub(crate) fn being_deleted(object: &Value) -> bool {
    object.pointer("/metadata/deletionTimestamp").is_some()
}

/// An [`StoreError::Internal`] from anything printable (SQLite, I/O, JSON).
pub(crate) fn internal(e: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(e.to_string())
}

/// The current time as Kubernetes writes timestamps (RFC 3339, seconds, UTC).
/// Formatted once a second per thread: every write asks for it.
pub fn now() -> String {
    thread_local! {
        static LAST: std::cell::RefCell<(i64, String)> =
            const { std::cell::RefCell::new((0, String::new())) };
    }
    let now = jiff::Timestamp::now();
    LAST.with_borrow_mut(|(second, text)| {
        if *second != now.as_second() || text.is_empty() {
            *second = now.as_second();
            *text = now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        }
        text.clone()
    })
}

/// A stream of store events (errors end it; callers re-list).
pub type EventStream = BoxStream<'static, Result<StoreEvent, StoreError>>;

/// The backends.
#[derive(Clone)]
pub enum Backend {
    /// The embedded SQLite store.
    Embedded(embedded_store::EmbeddedStore),
    /// A real cluster.
    Cluster(Box<cluster_store::ClusterStore>),
}

impl Backend {
    /// Lists every owned HelmRelease.
    pub async fn list(&self) -> Result<Listing, StoreError> {
        match self {
            Backend::Embedded(s) => s.list().await,
            Backend::Cluster(s) => s.list().await,
        }
    }

    /// Events after `resource_version`.
    pub async fn watch(&self, resource_version: u64) -> Result<EventStream, StoreError> {
        match self {
            Backend::Embedded(s) => s.watch(resource_version),
            Backend::Cluster(s) => s.watch(resource_version).await,
        }
    }

    /// The HelmRelease `namespace/name` as upstream holds it now (read for
    /// `user`), `None` when there is none.
    pub async fn get(
        &self,
        namespace: &str,
        name: &str,
        user: &UserInfo,
    ) -> Result<Option<Value>, StoreError> {
        match self {
            Backend::Embedded(s) => s.get(namespace, name).await,
            Backend::Cluster(s) => s.get(namespace, name, user).await,
        }
    }

    /// Creates a HelmRelease for `user`.
    pub async fn create(
        &self,
        release: &ReleaseObject<'_>,
        dry_run: bool,
        user: &UserInfo,
    ) -> Result<Written, StoreError> {
        match self {
            Backend::Embedded(s) => s
                .create(release.to_value(), dry_run)
                .await
                .map(Written::Value),
            Backend::Cluster(s) => s.create(release, dry_run, user).await,
        }
    }

    /// Replaces a HelmRelease for `user`; its `metadata.resourceVersion` is a
    /// precondition.
    pub async fn update(
        &self,
        release: &ReleaseObject<'_>,
        dry_run: bool,
        user: &UserInfo,
    ) -> Result<Written, StoreError> {
        match self {
            Backend::Embedded(s) => s
                .update(release.to_value(), dry_run)
                .await
                .map(Written::Value),
            Backend::Cluster(s) => s.update(release, dry_run, user).await,
        }
    }

    /// Deletes a HelmRelease for `user` (or marks it, when finalizers remain).
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
        user: &UserInfo,
    ) -> Result<Written, StoreError> {
        match self {
            Backend::Embedded(s) => s.delete(namespace, name, options).await.map(Written::Value),
            Backend::Cluster(s) => s.delete(namespace, name, options, user).await,
        }
    }

    /// Upstream's current state within `scope`, to make a read consistent:
    /// the embedded store's revision (exact), or a metadata-only list of the
    /// scope from the cluster (one small request).
    pub async fn current_state(&self, scope: &ReadScope) -> Result<UpstreamState, StoreError> {
        match self {
            Backend::Embedded(s) => Ok(UpstreamState {
                revision: s.revision(),
                versions: None,
            }),
            Backend::Cluster(s) => s.current_state(scope).await,
        }
    }
}

/// The numeric resourceVersion of an object (0 when absent or not numeric).
pub fn resource_version(object: &Value) -> u64 {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// `(namespace, name)` of an object.
pub fn object_key(object: &Value) -> (String, String) {
    let text = |p: &str| {
        object
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (text("/metadata/namespace"), text("/metadata/name"))
}

#[cfg(test)]
mod tests {
    use super::now;

    #[test]
    fn now_is_the_current_second_in_kubernetes_form() {
        for _ in 0..3 {
            let before = jiff::Timestamp::now().as_second();
            let text = now();
            let after = jiff::Timestamp::now().as_second();
            let parsed: jiff::Timestamp = text.parse().expect("RFC 3339");
            assert!((before..=after).contains(&parsed.as_second()), "{text}");
            assert_eq!(text.len(), "2026-12-03T22:22:18Z".len(), "{text}");
            assert!(text.ends_with('Z'), "{text}");
        }
    }
}
