//! Apps, as the handlers read and write them (sample-apiserver's REST
//! storage): [`AppStore`] owns the round trip every request makes between
//! the cache, the conversion and the backend — read the cache, convert to
//! the app; convert to the HelmRelease, write it upstream, hand upstream's
//! answer to the cache, convert back — so a handler speaks apps only.
//!
//! A write does not wait for its watch event: the cache takes upstream's
//! answer at once ([`WatchCache::take_kept_write`],
//! [`WatchCache::take_delete`]), so a read right after the write sees it
//! (read-your-writes) while lists and watches still follow the watch. The
//! answer of a create, update or delete is read once from its text, for
//! the cache and for the app made from it; that app is encoded once: it is
//! the write's answer and the view the cache keeps for the next read. Each
//! stage is a `debug` tracing span (`convert`, `upstream` with the backend's
//! `send` and `parse`, `cache`), free when debug logging is off.
//!
//! An update that would leave the HelmRelease as upstream holds it is not
//! sent (kube-apiserver's no-op update): the answer is the app as it is,
//! its resourceVersion kept, and no write means no Flux reconcile.
//!
//! Reads are served from the shared watch cache, with the app views kept
//! with each cached object ([`Stored::app_view`]): a get or list of an
//! unchanged app copies its kept JSON. Consistency follows kube-apiserver's
//! resourceVersion semantics ([`ReadAt`]); a consistent read asks upstream
//! where it stands and waits for the cache to be there.
//!
//! Errors are the `Status` the client gets, named after the app
//! (`postgreses.apps.cozystack.io "db" not found`); a failure inside the
//! store is a generic 500 whose cause is only logged.

// The errors are the `ApiError` a handler answers with (see
// `crate::apimachinery`): larger than clippy likes in a `Result`, and the
// cold path of every call here.
#![allow(
    clippy::result_large_err,
    reason = "ApiError is the error type of every request path"
)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tracing::Instrument as _;

use super::app_filter::AppFilter;
use super::cache::consistency::{in_key_order, key_order, range_is_current, snapshot_is_current};
use super::cache::{DeleteAnswer, Key, Objects, Stored, Subscription, WatchCache};
use super::helm_release::{self, AppView, ConvertError};
use super::{
    Backend, DeleteOptions, ReadScope, ScopeLabels, StoreError, UpstreamState, Written,
    resource_version,
};
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::UserInfo;
use crate::drop_later::drop_later;
use crate::kinds::registry::ServedKind;
use crate::kinds::schema::{FieldError, FieldErrorKind};

/// How long a patch that lost a race waits for the newer state to reach
/// the cache before it retries.
const RETRY_WAIT: Duration = Duration::from_secs(3);
/// How long a read waits for the cache to reach upstream's state or a
/// resourceVersion it asked for (kube-apiserver waits as long for its own
/// cache).
const CACHE_CATCH_UP: Duration = Duration::from_secs(3);

/// Where the apps of every served kind are read and written.
#[derive(Clone)]
pub struct AppStore {
    cache: WatchCache,
    backend: Backend,
}

/// Which state a list or watch reads (`resourceVersion` and
/// `resourceVersionMatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadAt {
    /// Unset: upstream's current state.
    Latest,
    /// `0`: whatever the cache holds.
    Cached,
    /// `NotOlderThan` (the default match): the cache once it has reached it.
    NotOlderThan(u64),
    /// `Exact`: the snapshot at exactly this revision, while it is kept.
    Exact(u64),
}

/// Where a consistent list checked page by page ([`Apps::latest_page`])
/// stands after a page: what its continue token carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CheckedPosition {
    /// The last key of the ranges served so far.
    pub(crate) after: Key,
    /// Upstream's continue token for the next range.
    pub(crate) upstream: String,
    /// The cache snapshot the last page was served from (tried first).
    pub(crate) snapshot: u64,
}

/// One page of a consistent list.
pub(crate) enum LatestPage {
    /// The cache is at or past upstream's revision: the whole list is this
    /// snapshot, paged as a kept snapshot.
    Snapshot(AppSnapshot),
    /// The cache matched upstream's page of the same key range: serve the
    /// snapshot's apps in the range.
    Checked {
        /// The snapshot that matched.
        snapshot: AppSnapshot,
        /// The range's last key (`None`: to the end of the list).
        until: Option<Key>,
        /// Upstream's continue token after the range (`None`: the last page).
        upstream: Option<String>,
    },
}

/// The objects of the cache at one revision, to read apps from.
pub(crate) struct AppSnapshot {
    objects: Objects,
    revision: u64,
}

impl AppSnapshot {
    /// The revision of the snapshot (a list's resourceVersion).
    pub(crate) fn revision(&self) -> u64 {
        self.revision
    }

    /// The apps `filter` selects, in kube-apiserver's key order
    /// ([`key_order`]), each with its position; after `after` when
    /// continuing a paginated list.
    pub(crate) fn apps<'a>(
        &'a self,
        filter: &'a AppFilter,
        after: Option<&Key>,
    ) -> impl Iterator<Item = (&'a Key, Arc<AppView>)> + 'a {
        // A namespace's objects are one range of the ordered map: the scan
        // reads only those (50 apps of a namespace among 5,000 cost 50).
        in_key_order(&self.objects, filter.namespace(), after)
            .filter_map(|(key, stored)| filter.app(key, stored).map(|app| (key, app)))
    }

    /// [`AppSnapshot::apps`] up to and including `until` (to the end when `None`).
    pub(crate) fn apps_until<'a>(
        &'a self,
        filter: &'a AppFilter,
        after: Option<&Key>,
        until: Option<&'a Key>,
    ) -> impl Iterator<Item = (&'a Key, Arc<AppView>)> + 'a {
        self.apps(filter, after).take_while(move |(key, _)| {
            until.is_none_or(|until| key_order(key, until) != std::cmp::Ordering::Greater)
        })
    }

    /// [`AppSnapshot::apps`], each with the app's name.
    pub(crate) fn named_apps<'a>(
        &'a self,
        filter: &'a AppFilter,
        after: Option<&Key>,
    ) -> impl Iterator<Item = (&'a Key, &'a str, Arc<AppView>)> + 'a {
        let kind = &filter.kind().resolved;
        self.apps(filter, after).filter_map(move |(key, app)| {
            helm_release::app_name(kind, key.name()).map(|name| (key, name, app))
        })
    }
}

impl AppStore {
    /// Apps over `cache` (fed by `backend`), written through `backend`.
    pub fn new(cache: WatchCache, backend: Backend) -> AppStore {
        AppStore { cache, backend }
    }

    /// The embedded store, in standalone mode (its namespaces).
    pub fn embedded(&self) -> Option<&super::embedded_store::EmbeddedStore> {
        match &self.backend {
            Backend::Embedded(store) => Some(store),
            Backend::Cluster(_) => None,
        }
    }

    /// What the registry asks before it serves a change of the kinds:
    /// whether stored apps would be left unserved ([`super::stranded`]).
    /// It reads the cache without keeping it alive (the registry outlives
    /// the store; the cache's upstream watch ends with the store).
    pub fn kind_change_check(&self) -> crate::kinds::registry::ChangeCheck {
        let objects = self.cache.weak_objects();
        let in_cluster = matches!(self.backend, Backend::Cluster(_));
        std::sync::Arc::new(move |previous, next| match objects.objects() {
            Some(objects) => super::stranded::verdict(&objects, previous, next, in_cluster),
            None => crate::kinds::registry::ChangeVerdict::default(),
        })
    }

    /// Logs, once the cache is filled, the HelmReleases that carry a
    /// served kind's labels but are no kind's ([`super::stranded::unserved`]).
    pub fn say_unserved(&self, kinds: &crate::kinds::registry::Snapshot) {
        for warning in super::stranded::unserved(&self.cache.snapshot().0, kinds) {
            tracing::warn!("{warning}");
        }
    }

    /// The cache the apps are read from.
    pub(crate) fn cache(&self) -> &WatchCache {
        &self.cache
    }

    /// Whether the cache has made its first list.
    pub fn ready(&self) -> bool {
        self.cache.ready()
    }

    /// Waits until the cache has made its first list.
    pub async fn wait_ready(&self) {
        self.cache.wait_ready().await;
    }

    /// The apps of `kind`.
    pub(crate) fn of<'a>(&'a self, kind: &'a ServedKind) -> Apps<'a> {
        Apps { store: self, kind }
    }
}

/// The apps of one served kind.
pub(crate) struct Apps<'a> {
    store: &'a AppStore,
    kind: &'a ServedKind,
}

impl Apps<'_> {
    /// `<plural>.<group>`, as messages name the resource.
    pub(crate) fn group_resource(&self) -> String {
        self.kind.resolved.resource_group()
    }

    fn cache(&self) -> &WatchCache {
        &self.store.cache
    }

    /// The revision the cache has reached.
    pub(crate) fn revision(&self) -> u64 {
        self.cache().revision()
    }

    /// The HelmReleases a read covers: this kind's, in `namespace` (or
    /// all), and the app `name` if given.
    fn scope(&self, namespace: Option<&str>, name: Option<&str>) -> ReadScope {
        let resolved = &self.kind.resolved;
        ReadScope {
            kind: resolved.definition.kind.clone(),
            namespace: namespace.map(str::to_owned),
            release: name.map(|n| helm_release::release_name(resolved, n)),
            labels: None,
        }
    }

    /// The HelmReleases a list of `filter`'s apps covers: its namespace
    /// (or all), and only the apps its label selector picks, so upstream's
    /// side of the check is as selective as the list ([`ScopeLabels`]).
    fn list_scope(&self, filter: &AppFilter) -> ReadScope {
        ReadScope {
            labels: ScopeLabels::new(filter.kind().clone(), filter.labels()),
            ..self.scope(filter.namespace(), None)
        }
    }

    /// Makes a read of "the most recent state" consistent: asks upstream
    /// where it is now within the read's scope (`namespace`, and the app
    /// `name` if given), then waits for the cache to be there.
    pub(crate) async fn ensure_current(
        &self,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Result<(), ApiError> {
        self.ensure_scope_current(&self.scope(namespace, name), name.unwrap_or_default())
            .await
    }

    /// [`Self::ensure_current`] for the apps `filter` selects (its namespace
    /// and label selector; see [`ScopeLabels`]): what a watch without a
    /// resourceVersion starts from.
    pub(crate) async fn ensure_selection_current(
        &self,
        filter: &AppFilter,
    ) -> Result<(), ApiError> {
        self.ensure_scope_current(&self.list_scope(filter), "")
            .await
    }

    async fn ensure_scope_current(&self, scope: &ReadScope, name: &str) -> Result<(), ApiError> {
        let upstream = self
            .store
            .backend
            .current_state(scope)
            .await
            .map_err(|e| self.store_error(e, name))?;
        self.wait_until_current(&upstream, scope).await
    }

    /// Waits until the cache reflects `upstream` within `scope`;
    /// kube-apiserver's 504 when it does not in time.
    async fn wait_until_current(
        &self,
        upstream: &UpstreamState,
        scope: &ReadScope,
    ) -> Result<(), ApiError> {
        let cache = self.cache();
        if cache
            .wait_until_current(upstream, scope, CACHE_CATCH_UP)
            .await
        {
            Ok(())
        } else {
            Err(ApiError::too_large_resource_version(
                upstream.revision,
                cache.revision(),
            ))
        }
    }

    /// Waits until the cache has reached `revision`; 504 when it does not in time.
    pub(crate) async fn wait_for_revision(&self, revision: u64) -> Result<(), ApiError> {
        let cache = self.cache();
        if revision > cache.revision() && !cache.wait_for_revision(revision, CACHE_CATCH_UP).await {
            return Err(ApiError::too_large_resource_version(
                revision,
                cache.revision(),
            ));
        }
        Ok(())
    }

    /// The app `namespace/name` as the cache holds it (its kept view), or 404.
    pub(crate) fn get(&self, namespace: &str, name: &str) -> Result<Arc<AppView>, ApiError> {
        let kind = self.kind;
        self.cache()
            .stored(namespace, &helm_release::release_name(&kind.resolved, name))
            .and_then(|stored| stored.app_view(kind))
            .ok_or_else(|| ApiError::not_found(&self.group_resource(), name))
    }

    /// [`Apps::get`], parsed: the app a write starts from.
    pub(crate) fn current(&self, namespace: &str, name: &str) -> Result<Value, ApiError> {
        self.get(namespace, name).map(|view| view.value())
    }

    /// The cache's current snapshot, as it is.
    pub(crate) fn snapshot(&self) -> AppSnapshot {
        let (objects, revision) = self.cache().snapshot();
        AppSnapshot { objects, revision }
    }

    /// The snapshot a list or watch in `namespace` reads at `at`: 504 when
    /// the cache does not reach a version in time, 410 Expired when an exact
    /// one is no longer kept.
    pub(crate) async fn snapshot_at(
        &self,
        namespace: Option<&str>,
        at: ReadAt,
    ) -> Result<AppSnapshot, ApiError> {
        match at {
            ReadAt::Latest => {
                self.ensure_current(namespace, None).await?;
                Ok(self.snapshot())
            }
            ReadAt::Cached => Ok(self.snapshot()),
            ReadAt::NotOlderThan(revision) => {
                self.wait_for_revision(revision).await?;
                Ok(self.snapshot())
            }
            ReadAt::Exact(revision) => {
                self.wait_for_revision(revision).await?;
                self.kept_snapshot(revision).ok_or_else(|| {
                    ApiError::expired(format!(
                        "too old resource version: {revision} ({})",
                        self.revision()
                    ))
                })
            }
        }
    }

    /// The snapshot at `revision`, if it is still kept (a `continue` token's).
    pub(crate) fn kept_snapshot(&self, revision: u64) -> Option<AppSnapshot> {
        self.cache()
            .snapshot_at(revision)
            .map(|objects| AppSnapshot { objects, revision })
    }

    /// Renders a read of upstream's current state of `filter`'s namespace
    /// (or all) and labels: upstream is asked where it stands (a
    /// metadata-only list of the scope, with the list's label selector) while
    /// `render` reads the cache's current snapshot, so the check costs the
    /// longer of the two rather than their sum. When the snapshot turns out
    /// to be behind, the read waits for the cache and renders again.
    pub(crate) async fn render_latest<T>(
        &self,
        filter: &AppFilter,
        render: impl Fn(&AppSnapshot) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let scope = self.list_scope(filter);
        let probe = {
            let backend = self.store.backend.clone();
            let scope = scope.clone();
            tokio::spawn(async move { backend.current_state(&scope).await })
        };
        let snapshot = self.snapshot();
        let rendered = render(&snapshot);
        let upstream = probe
            .await
            .map_err(|e| ApiError::internal_hidden(format!("upstream state check: {e}")))?
            .map_err(|e| self.store_error(e, ""))?;
        if snapshot_is_current(&snapshot.objects, snapshot.revision, &upstream, &scope) {
            return rendered;
        }
        self.wait_until_current(&upstream, &scope).await?;
        render(&self.snapshot())
    }

    /// One page of at most `limit` apps of a consistent list of `filter`'s
    /// apps, after `position` (a continued list), checked upstream page by
    /// page: upstream lists the same scope with the same `limit` (metadata
    /// only, at one resourceVersion across the list's pages), and a cache
    /// snapshot whose objects in the key range upstream's page covers are
    /// exactly upstream's is served for that range. A page then costs
    /// about what the page costs upstream, and the pages together are
    /// exactly upstream's list. `None` when the backend has no such check
    /// (the embedded store's is exact by revision and costs nothing).
    ///
    /// The first page is served from the current snapshot (waiting for
    /// the cache if it is behind upstream), or, when that snapshot is at or
    /// past upstream's revision, as the whole list ([`LatestPage::Snapshot`]).
    /// A later page tries the previous page's snapshot first, then newer
    /// ones; when the cache has moved past upstream's revision and none
    /// matches the range, the list is 410 Expired, as kube-apiserver's own
    /// continue tokens expire.
    pub(crate) async fn latest_page(
        &self,
        filter: &AppFilter,
        limit: usize,
        position: Option<&CheckedPosition>,
    ) -> Result<Option<LatestPage>, ApiError> {
        let Backend::Cluster(store) = &self.store.backend else {
            return Ok(None);
        };
        let scope = self.list_scope(filter);
        let upstream_limit = u32::try_from(limit).unwrap_or(u32::MAX);
        let after = position.map(|p| &p.after);
        let page = store
            .metadata_page(
                &scope,
                upstream_limit,
                position.map(|p| p.upstream.as_str()),
            )
            .await
            .map_err(|e| self.store_error(e, ""))?;
        let revision = page.resource_version;
        let cache = self.cache();
        let deadline = tokio::time::Instant::now() + CACHE_CATCH_UP;
        let mut changed = cache.revision_changes();
        let snapshot = 'found: loop {
            changed.borrow_and_update();
            let since = position.map_or_else(|| cache.revision(), |p| p.snapshot);
            for (at, objects) in cache.snapshots_since(since) {
                if position.is_none() && at >= revision {
                    return Ok(Some(LatestPage::Snapshot(AppSnapshot {
                        objects,
                        revision: at,
                    })));
                }
                if range_is_current(
                    &objects,
                    &scope,
                    after,
                    &page.items,
                    page.continue_token.is_none(),
                ) {
                    break 'found AppSnapshot {
                        objects,
                        revision: at,
                    };
                }
            }
            if position.is_some() && cache.revision() >= revision {
                return Err(ApiError::expired(
                    "The provided continue parameter is too old to display a consistent list result. You can start \
                     a new list without the continue parameter.",
                ));
            }
            match tokio::time::timeout_at(deadline, changed.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => {
                    return Err(ApiError::too_large_resource_version(
                        revision,
                        cache.revision(),
                    ));
                }
            }
        };
        let key_of = |item: &super::metadata_list::Item| Key::new(&item.namespace, &item.name);
        let mut until = match page.continue_token {
            Some(_) => Some(
                page.items
                    .last()
                    .map(key_of)
                    .or_else(|| after.cloned())
                    .unwrap_or_default(),
            ),
            None => None,
        };
        let mut upstream = page.continue_token;
        // A label or field selector may leave the page short: the next
        // ranges fill it while the same snapshot matches them.
        let mut served = snapshot.apps_until(filter, after, until.as_ref()).count();
        while served < limit
            && let Some(token) = upstream.as_deref()
        {
            let next = store
                .metadata_page(
                    &scope,
                    u32::try_from(limit - served).unwrap_or(u32::MAX),
                    Some(token),
                )
                .await
                .map_err(|e| self.store_error(e, ""))?;
            let last = next.continue_token.is_none();
            if !range_is_current(&snapshot.objects, &scope, until.as_ref(), &next.items, last) {
                break; // the next request checks this range again
            }
            let next_until = (!last).then(|| {
                next.items
                    .last()
                    .map(key_of)
                    .or_else(|| until.clone())
                    .unwrap_or_default()
            });
            served += snapshot
                .apps_until(filter, until.as_ref(), next_until.as_ref())
                .count();
            until = next_until;
            upstream = next.continue_token;
        }
        Ok(Some(LatestPage::Checked {
            snapshot,
            until,
            upstream,
        }))
    }

    /// Changes after `revision` (from the kept history) and a receiver for
    /// later ones, without gap or overlap; 410 Expired when `revision` is
    /// older than the history.
    pub(crate) fn subscribe(&self, revision: u64) -> Result<Subscription, ApiError> {
        self.cache().subscribe(revision).map_err(|e| {
            ApiError::expired(format!(
                "too old resource version: {} ({})",
                e.requested, e.oldest
            ))
        })
    }

    /// Stores a new app (validated and defaulted) for `user`, with
    /// `managed_fields` (their JSON text) when the write recorded them apart
    /// from the app; answers with the app as stored (its view, kept with the
    /// cached HelmRelease). The namespace is checked by kube-apiserver's
    /// NamespaceLifecycle admission on the HelmRelease create itself (dry
    /// runs included); its refusals are reworded for the app.
    pub(crate) async fn create(
        &self,
        app: Value,
        managed_fields: Option<String>,
        dry_run: bool,
        user: &UserInfo,
    ) -> Result<Arc<AppView>, ApiError> {
        let resolved = &self.kind.resolved;
        let (namespace, name) = super::object_key(&app);
        let release = tracing::debug_span!("convert", to = "HelmRelease")
            .in_scope(|| helm_release::release_object(resolved, &app, None, managed_fields))
            .map_err(|e| self.convert_error(&name, e))?;
        let created = self
            .store
            .backend
            .create(&release, dry_run, user)
            .instrument(tracing::debug_span!("upstream", verb = "create"))
            .await;
        drop(release);
        drop_later(app);
        let created = created.map_err(|e| match e {
                StoreError::NotFound => ApiError::not_found("namespaces", &namespace),
                StoreError::AlreadyExists { being_deleted } => {
                    self.already_exists(&namespace, &name, being_deleted)
                }
                StoreError::Upstream {
                    code: 403,
                    message,
                    ..
                } if message.ends_with("because it is being terminated") => {
                    ApiError::namespace_terminating(
                        &namespace,
                        format!(
                            "{} \"{name}\" is forbidden: unable to create new content in namespace {namespace} \
                             because it is being terminated",
                            self.group_resource()
                        ),
                    )
                }
                other => self.store_error(other, &name),
            })?;
        self.answer_write(&name, created, dry_run)
    }

    /// Replaces the app `current` with `app` (validated and defaulted; its
    /// `metadata.resourceVersion` is the precondition: 409 when stale) for
    /// `user`, with `managed_fields` as on create. The main resource ignores
    /// status changes, as for CRDs with a status subresource. An update that
    /// leaves the spec as read changes the HelmRelease's metadata only
    /// ([`Apps::stored_at`]); one that changes nothing is not written.
    pub(crate) async fn update(
        &self,
        current: &Value,
        mut app: Value,
        managed_fields: Option<String>,
        dry_run: bool,
        user: &UserInfo,
    ) -> Result<Arc<AppView>, ApiError> {
        let resolved = &self.kind.resolved;
        let (namespace, name) = super::object_key(&app);
        if let Some(status) = current.get("status") {
            app["status"] = status.clone();
        }
        let convert = tracing::debug_span!("convert", to = "HelmRelease").entered();
        let kept = self
            .cache()
            .stored(&namespace, &helm_release::release_name(resolved, &name))
            .ok_or_else(|| ApiError::not_found(&self.group_resource(), &name))?;
        let stored = kept.write_base();
        let mut release =
            helm_release::release_object(resolved, &app, Some(&stored), managed_fields)
                .map_err(|e| self.convert_error(&name, e))?;
        drop(convert);
        // The spec as read (pruned and defaulted by the kind as it is now)
        // unchanged: keep the stored HelmRelease's spec as it is, so that
        // `kubectl label` after an edit of the kind neither rewrites the
        // values nor moves the chart (a Helm upgrade), and write nothing at
        // all when the metadata is unchanged too.
        if current.get("spec") == app.get("spec")
            && let Some(mut upstream) = self.stored_at(&kept, &release, &app, user).await
        {
            if let Some(spec) = upstream.get_mut("spec").map(Value::take) {
                release.keep_spec(spec);
            }
            if release.unchanged(&upstream) {
                drop_later((app, stored, upstream));
                return Ok(self.written_view(&kept));
            }
            drop_later(upstream);
        }
        release.set_resource_version(app["metadata"]["resourceVersion"].clone());
        let updated = self
            .store
            .backend
            .update(&release, dry_run, user)
            .instrument(tracing::debug_span!("upstream", verb = "update"))
            .await;
        drop(release);
        drop_later((app, stored));
        let updated = updated.map_err(|e| match e {
                StoreError::Conflict(_) => ApiError::conflict(
                    &self.group_resource(),
                    &name,
                    "the object has been modified; please apply your changes to the latest version and try again",
                ),
                other => self.store_error(other, &name),
            })?;
        self.answer_write(&name, updated, dry_run)
    }

    /// The HelmRelease upstream holds, read (for `user`) when `app` was made
    /// from `kept`, the HelmRelease as the cache holds it (its
    /// resourceVersion, the update's precondition, is `kept`'s), and
    /// upstream is still at that version. Read because the cache keeps only
    /// part of it (of `spec` only `values`) and may lag, as kube-apiserver
    /// reads its storage again before it answers an update that changes
    /// nothing without writing (no new resourceVersion, no reconcile).
    /// `None` (also when the read fails): write what the app makes.
    async fn stored_at(
        &self,
        kept: &Arc<Stored>,
        release: &helm_release::ReleaseObject<'_>,
        app: &Value,
        user: &UserInfo,
    ) -> Option<Value> {
        let precondition = app
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .and_then(|rv| rv.parse::<u64>().ok());
        if precondition != Some(kept.resource_version()) {
            return None;
        }
        let upstream = self
            .store
            .backend
            .get(release.namespace(), release.name(), user)
            .instrument(tracing::debug_span!("upstream", verb = "get"))
            .await
            .ok()??;
        if resource_version(&upstream) == kept.resource_version() {
            Some(upstream)
        } else {
            drop_later(upstream);
            None
        }
    }

    /// Deletes the app `namespace/name` for `user`; answers with its last
    /// state, or its terminating state while finalizers hold it.
    pub(crate) async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
        user: &UserInfo,
    ) -> Result<Arc<AppView>, ApiError> {
        let resolved = &self.kind.resolved;
        let release = helm_release::release_name(resolved, name);
        let kept = self.cache().stored(namespace, &release);
        let current = kept
            .as_ref()
            .and_then(|stored| stored.app_view(self.kind))
            .ok_or_else(|| ApiError::not_found(&self.group_resource(), name))?;
        let written = self
            .store
            .backend
            .delete(namespace, &release, options, user)
            .instrument(tracing::debug_span!("upstream", verb = "delete"))
            .await
            .map_err(|e| self.store_error(e, name))?;
        let answer = self.delete_answer(name, written)?;
        let rv = answer.stored.resource_version();
        if !options.dry_run {
            let _span = tracing::debug_span!("cache").entered();
            if !answer.is_release {
                // Deleted outright, answered with a bare Status: gone from
                // the version we had (or a newer one the watch brings).
                let deleted = kept.map_or(0, |k| k.resource_version());
                self.cache()
                    .take_delete_of(Key::new(namespace, &release), deleted);
            } else if answer.held {
                // Still there while finalizers hold it (marked for deletion).
                self.cache()
                    .take_kept_write(answer.key, answer.stored.clone());
            } else if rv > 0 {
                self.cache().take_delete(answer.key, rv);
            }
        }
        // A release deleted at once may come back as a bare Status: answered
        // with the app we had.
        Ok(if answer.is_release {
            self.written_view(&answer.stored)
        } else {
            current
        })
    }

    /// The error of upstream's answer about the app `name` that did not
    /// parse as a HelmRelease.
    fn answer_error(&self, name: &str, e: serde_json::Error) -> ApiError {
        let cause = StoreError::Internal(format!("parse kube-apiserver's answer: {e}"));
        self.store_error(cause, name)
    }

    /// Upstream's answer to a delete of the app `name`, kept: read once
    /// from a cluster's text, as the answers to writes are.
    fn delete_answer(&self, name: &str, written: Written) -> Result<DeleteAnswer, ApiError> {
        match written {
            Written::Text(text) => {
                let _span = tracing::debug_span!("parse").entered();
                Stored::from_delete_answer(&text, self.kind).map_err(|e| self.answer_error(name, e))
            }
            Written::Value(value) => Ok(Stored::from_delete_value(&value)),
        }
    }

    /// Waits (a bounded time) until the cache has seen a change after the
    /// app `seen`: a write that lost a race retries from the newer state.
    pub(crate) async fn wait_for_change_after(&self, seen: &Value) {
        self.cache()
            .wait_for_revision(resource_version(seen) + 1, RETRY_WAIT)
            .await;
    }

    /// The answer to a create or update of the app `name` that upstream
    /// stored as `written`: its app view, made as the answer is read for
    /// the cache and kept with it. Unless `dry_run`, the object is handed to
    /// the cache at once, view and all, so that a read right after the write
    /// sees it and finds its view made (or, when the watch brought that
    /// version first, the view is handed to the cache's object).
    fn answer_write(
        &self,
        name: &str,
        written: Written,
        dry_run: bool,
    ) -> Result<Arc<AppView>, ApiError> {
        let (key, stored) = match written {
            Written::Text(text) => {
                let _span = tracing::debug_span!("parse").entered();
                Stored::from_answer(&text, self.kind).map_err(|e| self.answer_error(name, e))?
            }
            Written::Value(value) => (Key::of(&value), Stored::new(&value)),
        };
        let view = self.written_view(&stored);
        if dry_run {
            return Ok(view);
        }
        let _span = tracing::debug_span!("cache").entered();
        let rv = stored.resource_version();
        if !self.cache().take_kept_write(key.clone(), Arc::new(stored)) {
            // The watch brought this version first: its object gets the view.
            let (namespace, name) = key.parts();
            if let Some(cached) = self.cache().stored(namespace, name)
                && cached.resource_version() == rv
            {
                cached.keep_app_view(self.kind.stamp, view.clone());
            }
        }
        Ok(view)
    }

    /// The app of upstream's answer to a write (see [`Stored::app_view`]);
    /// an answer that is not this kind's (a webhook took its labels) is
    /// converted all the same.
    fn written_view(&self, written: &Stored) -> Arc<AppView> {
        let _span = tracing::debug_span!("convert", to = "app").entered();
        let resolved = &self.kind.resolved;
        written.app_view(self.kind).unwrap_or_else(|| {
            Arc::new(AppView {
                json: helm_release::app_json_of_text(
                    resolved,
                    Some(&self.kind.schema),
                    written.json(),
                ),
                table_row: std::sync::OnceLock::new(),
            })
        })
    }

    /// The 422 of an app that cannot be stored as a HelmRelease.
    fn convert_error(&self, name: &str, err: ConvertError) -> ApiError {
        let (field, detail, value) = match &err {
            ConvertError::NameTooLong { max, release, .. } => (
                "metadata.name".to_owned(),
                format!(
                    "must be no more than {max} characters (it names the HelmRelease {release:?}, and Helm's release names are at most {} characters)",
                    crate::kinds::definition::HELM_RELEASE_NAME_MAX
                ),
                Some(json!(name)),
            ),
            ConvertError::Invalid { field, message } => (field.clone(), message.clone(), None),
        };
        let d = &self.kind.resolved.definition;
        ApiError::invalid(
            &d.kind,
            &d.group,
            name,
            &[FieldError {
                field,
                kind: FieldErrorKind::Invalid,
                bad_value: value,
                detail,
            }],
        )
    }

    /// 409 AlreadyExists for a create whose HelmRelease name is taken. When
    /// the HelmRelease belongs to an app of another kind (kinds that share a
    /// release prefix), the message names that app, since `kubectl get` of
    /// this kind finds nothing under the name. While it is being deleted the
    /// message says so first, as kube-apiserver's does.
    fn already_exists(&self, namespace: &str, name: &str, being_deleted: bool) -> ApiError {
        let release = helm_release::release_name(&self.kind.resolved, name);
        let plain = ApiError::already_exists(&self.group_resource(), name)
            .when_being_deleted(being_deleted);
        let Some(existing) = self.cache().get(namespace, &release) else {
            return plain;
        };
        let label = |key: &str| {
            existing
                .pointer("/metadata/labels")
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let (Some(kind), Some(group)) = (
            label(helm_release::KIND_LABEL),
            label(helm_release::GROUP_LABEL),
        ) else {
            return plain;
        };
        let d = &self.kind.resolved.definition;
        if kind == d.kind && group == d.group {
            return plain;
        }
        let owner = label(helm_release::NAME_LABEL).unwrap_or_default();
        ApiError {
            message: format!(
                "{} \"{name}\" cannot be created: its HelmRelease {namespace}/{release} already belongs to \
                 {kind}.{group} \"{owner}\" (the two kinds share the release prefix {:?})",
                self.group_resource(),
                self.kind.resolved.release_prefix,
            ),
            ..plain
        }
    }

    /// The `Status` of a store error about the app `name`.
    fn store_error(&self, err: StoreError, name: &str) -> ApiError {
        store_error(err, &self.group_resource(), name)
    }
}

/// Seconds a client is told to wait when kube-apiserver is unreachable.
const UNAVAILABLE_RETRY_AFTER: u64 = 1;

/// Maps a store error about the object `name` of `group_resource`:
/// NotFound → 404, AlreadyExists → 409 AlreadyExists, Conflict → 409
/// Conflict with the store's message, Gone → 410 Expired (`too old resource
/// version: …`), Upstream → its own code, reason (unknown reasons become
/// `InternalError`), message and `retryAfterSeconds` (also sent as
/// `Retry-After`), Unavailable → 503 with a `Retry-After` of
/// [`UNAVAILABLE_RETRY_AFTER`] (its cause only logged), Internal → a generic 500 whose cause is
/// only logged.
fn store_error(err: StoreError, group_resource: &str, name: &str) -> ApiError {
    match err {
        StoreError::NotFound => ApiError::not_found(group_resource, name),
        StoreError::AlreadyExists { being_deleted } => {
            ApiError::already_exists(group_resource, name).when_being_deleted(being_deleted)
        }
        StoreError::Conflict(msg) => ApiError::conflict(group_resource, name, msg),
        StoreError::Gone(_) => ApiError::expired(err.to_string()),
        StoreError::Upstream {
            code,
            reason,
            message,
            retry_after,
        } => ApiError::upstream(code, &reason, message, retry_after),
        StoreError::Unavailable(cause) => ApiError {
            hidden_cause: Some(format!("storage of {group_resource} {name:?}: {cause}")),
            ..ApiError::service_unavailable(format!(
                "the storage of {group_resource} (the cluster's kube-apiserver) is unreachable; try again"
            ))
            .with_retry_after(UNAVAILABLE_RETRY_AFTER)
        },
        StoreError::Internal(cause) => {
            ApiError::internal_hidden(format!("storage of {group_resource} {name:?}: {cause}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::fields::FieldSelector;
    use crate::apimachinery::labels::LabelSelector;
    use crate::kinds::registry::Snapshot;
    use crate::storage::app_filter::WatchEventType;
    use crate::storage::embedded_store::EmbeddedStore;

    const GR: &str = "postgreses.apps.cozystack.io";

    fn postgres() -> Arc<ServedKind> {
        let text = "kind: Postgres\nplural: postgreses\n\
                    openAPISchema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
                    release: {chart: {name: postgres, sourceRef: {kind: HelmRepository, name: r}}}\n";
        let snapshot =
            Snapshot::build(crate::kinds::load::load_text(text, "test").unwrap()).unwrap();
        snapshot.kinds()[0].clone()
    }

    fn app(name: &str, team: &str) -> Value {
        json!({
            "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": name, "namespace": "ns", "labels": {"team": team}},
            "spec": {"size": "1Gi"},
        })
    }

    /// Kinds with the same release prefix: the second app named alike is
    /// refused with a message naming the app that owns the HelmRelease.
    #[tokio::test]
    async fn a_taken_release_name_names_its_owner() {
        let text = "kind: Tenant\nopenAPISchema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
                    release: {prefix: \"\", chart: {name: tenant, sourceRef: {kind: HelmRepository, name: r}}}\n---\n\
                    kind: Etcd\nopenAPISchema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
                    release: {prefix: \"\", chart: {name: etcd, sourceRef: {kind: HelmRepository, name: r}}}\n";
        let snapshot =
            Snapshot::build(crate::kinds::load::load_text(text, "test").unwrap()).unwrap();
        let (tenant, etcd) = (snapshot.kinds()[0].clone(), snapshot.kinds()[1].clone());
        let backend =
            Backend::Embedded(EmbeddedStore::open(std::path::Path::new(":memory:")).unwrap());
        let store = AppStore::new(WatchCache::start(backend.clone()), backend);
        store.wait_ready().await;
        let user = UserInfo::default();
        let object = |kind: &str| {
            json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": kind,
                   "metadata": {"name": "demo", "namespace": "ns"}, "spec": {}})
        };
        store
            .of(&tenant)
            .create(object("Tenant"), None, false, &user)
            .await
            .unwrap();
        let err = store
            .of(&etcd)
            .create(object("Etcd"), None, false, &user)
            .await
            .unwrap_err();
        assert_eq!((err.code, err.reason), (409, "AlreadyExists"));
        assert_eq!(
            err.message,
            "etcds.apps.cozystack.io \"demo\" cannot be created: its HelmRelease ns/demo already belongs to \
             Tenant.apps.cozystack.io \"demo\" (the two kinds share the release prefix \"\")"
        );
        // The same kind twice keeps Kubernetes' own message.
        let again = store
            .of(&tenant)
            .create(object("Tenant"), None, false, &user)
            .await
            .unwrap_err();
        assert_eq!(
            again.message,
            "tenants.apps.cozystack.io \"demo\" already exists"
        );
    }

    /// The registry's change check outlives the store: it must not keep the
    /// cache (and its upstream watch) alive.
    #[tokio::test]
    async fn the_kinds_change_check_does_not_keep_the_cache_alive() {
        let backend =
            Backend::Embedded(EmbeddedStore::open(std::path::Path::new(":memory:")).unwrap());
        let store = AppStore::new(WatchCache::start(backend.clone()), backend);
        store.wait_ready().await;
        let objects = store.cache().weak_objects();
        let check = store.kind_change_check();
        assert!(objects.objects().is_some());
        drop(store);
        // The last cache gone, its sync task is aborted and its state freed
        // (the check's hold would have kept both, and the upstream watch).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while objects.objects().is_some() {
            assert!(std::time::Instant::now() < deadline, "the cache lives on");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let none = crate::kinds::registry::Snapshot::default();
        assert_eq!(check(&none, &none), Default::default());
    }

    /// Create, read back, update (and a stale one), select, watch and delete,
    /// in apps only, over the embedded store.
    #[tokio::test]
    async fn apps_round_trip_through_the_cache_and_the_backend() {
        let backend =
            Backend::Embedded(EmbeddedStore::open(std::path::Path::new(":memory:")).unwrap());
        let store = AppStore::new(WatchCache::start(backend.clone()), backend);
        store.wait_ready().await;
        let kind = postgres();
        let apps = store.of(&kind);
        let user = UserInfo::default();

        let view = apps
            .create(app("db", "a"), None, false, &user)
            .await
            .unwrap();
        let created = view.value();
        assert_eq!(created["metadata"]["name"], "db");
        let rv = created["metadata"]["resourceVersion"].clone();
        // Read your write: the cache has it as soon as create answers, with
        // the answer's view kept (the next read converts nothing).
        assert_eq!(apps.current("ns", "db").unwrap(), created);
        assert!(Arc::ptr_eq(&apps.get("ns", "db").unwrap(), &view));
        assert_eq!(apps.get("ns", "nope").unwrap_err().code, 404);
        let dry = apps
            .create(app("dry", "a"), None, true, &user)
            .await
            .unwrap()
            .value();
        assert_eq!(dry["metadata"]["name"], "dry");
        assert_eq!(apps.get("ns", "dry").unwrap_err().code, 404);

        // The create answered before its watch event: watch from after it.
        apps.wait_for_revision(resource_version(&created))
            .await
            .unwrap();
        let from = apps.revision();
        let (_, mut events) = apps.subscribe(from).unwrap();
        let mut changed = app("db", "b");
        changed["metadata"]["resourceVersion"] = rv.clone();
        let updated = apps
            .update(&created, changed.clone(), None, false, &user)
            .await
            .unwrap()
            .value();
        assert_eq!(updated["metadata"]["labels"]["team"], "b");
        let stale = apps
            .update(&created, changed, None, false, &user)
            .await
            .unwrap_err();
        assert_eq!((stale.code, stale.reason), (409, "Conflict"));

        // The change moved the app out of `team=a`: a DELETED to that watcher.
        let team_a = AppFilter::new(
            kind.clone(),
            Some("ns".into()),
            LabelSelector::parse("team=a").unwrap(),
            FieldSelector::default(),
        );
        let event = events.recv().await.unwrap();
        let (event_type, view) = team_a.watch_event(&event).unwrap();
        assert_eq!(event_type, WatchEventType::Deleted);
        assert_eq!(view.value()["metadata"]["labels"]["team"], "b");
        let snapshot = apps.snapshot();
        assert_eq!(snapshot.apps(&team_a, None).count(), 0);
        let everyone = AppFilter::new(
            kind.clone(),
            None,
            LabelSelector::default(),
            FieldSelector::default(),
        );
        let names: Vec<&str> = snapshot
            .named_apps(&everyone, None)
            .map(|(_, name, _)| name)
            .collect();
        assert_eq!(names, ["db"]);

        let deleted = apps
            .delete("ns", "db", &DeleteOptions::default(), &user)
            .await
            .unwrap();
        assert_eq!(deleted.value()["metadata"]["name"], "db");
        assert_eq!(apps.get("ns", "db").unwrap_err().code, 404);
        let gone = apps
            .delete("ns", "db", &DeleteOptions::default(), &user)
            .await
            .unwrap_err();
        assert_eq!(gone.code, 404);
    }

    #[test]
    fn store_errors_map() {
        let e = store_error(StoreError::NotFound, GR, "x");
        assert_eq!((e.code, e.reason), (404, "NotFound"));
        let e = store_error(
            StoreError::AlreadyExists {
                being_deleted: false,
            },
            GR,
            "x",
        );
        assert_eq!((e.code, e.reason), (409, "AlreadyExists"));
        let e = store_error(StoreError::Conflict("stale".into()), GR, "x");
        assert_eq!((e.code, e.reason), (409, "Conflict"));
        assert!(e.message.ends_with("\"x\": stale"));
        let e = store_error(StoreError::Gone("12".into()), GR, "x");
        assert_eq!(
            (e.code, e.reason, e.message.as_str()),
            (410, "Expired", "too old resource version: 12")
        );
        let e = store_error(
            StoreError::Upstream {
                code: 429,
                reason: "TooManyRequests".into(),
                message: "slow".into(),
                retry_after: Some(3),
            },
            GR,
            "x",
        );
        assert_eq!(
            (e.code, e.reason, e.message.as_str(), e.retry_after),
            (429, "TooManyRequests", "slow", Some(3))
        );
        let e = store_error(
            StoreError::Upstream {
                code: 500,
                reason: "Weird".into(),
                message: "m".into(),
                retry_after: None,
            },
            GR,
            "x",
        );
        assert_eq!(e.reason, "InternalError");
    }

    /// kube-apiserver unreachable (fault test: restarted): a 503 that says
    /// so and asks to retry, not a generic 500.
    #[test]
    fn an_unreachable_cluster_is_a_503_with_retry_after() {
        let e = store_error(
            StoreError::Unavailable("HelmRelease API: connection refused (10.0.0.1:6443)".into()),
            GR,
            "x",
        );
        assert_eq!(
            (e.code, e.reason, e.retry_after),
            (503, "ServiceUnavailable", Some(1))
        );
        assert!(e.message.contains("unreachable"), "{}", e.message);
        assert!(!e.message.contains("10.0.0.1"), "the cause is only logged");
        assert!(e.hidden_cause.unwrap().contains("connection refused"));
    }

    /// Regression: a store failure used to be copied into the 500 body.
    #[test]
    fn a_store_failure_is_a_generic_500_with_the_cause_kept_for_the_log() {
        let e = store_error(
            StoreError::Internal("database is locked (/var/lib/cozy/db.sqlite)".into()),
            GR,
            "x",
        );
        assert_eq!((e.code, e.reason), (500, "InternalError"));
        let body = String::from_utf8(e.to_body()).unwrap();
        assert!(!body.contains("database"), "{body}");
        assert!(!body.contains("sqlite"), "{body}");
        assert_eq!(
            e.hidden_cause.as_deref(),
            Some(
                "storage of postgreses.apps.cozystack.io \"x\": database is locked (/var/lib/cozy/db.sqlite)"
            )
        );
    }
}
