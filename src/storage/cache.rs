//! One watch cache per server: a single upstream list+watch of every owned
//! HelmRelease feeds an in-memory copy that serves every get, list and client
//! watch, however many there are.
//!
//! - The object set is a persistent map (imbl), so every revision's snapshot
//!   costs O(1) to keep: recent snapshots serve paginated lists consistently
//!   (a `continue` token older than them gets 410 Expired).
//! - A bounded event history lets client watches resume from a
//!   resourceVersion; older ones get 410 Expired.
//! - History and snapshots are kept by count and by age: past
//!   [`FRESH`] (kube-apiserver's watch-cache event freshness, 75 s) only
//!   the newest [`HISTORY_MIN`] events and the newest snapshot stay, so a
//!   burst of writes does not hold its objects in memory once it is over.
//! - The upstream list and watch, and what they keep, run on a thread of
//!   their own (`cache_thread`), apart from the request workers.
//! - Upstream reconnects resume from the last seen revision; when upstream
//!   says 410, the cache re-lists and emits the difference as events (in
//!   resourceVersion order, see [`Sync::replace`]), so no client event is
//!   lost or duplicated; several changes of one object while the cache was
//!   not watching reach clients as one.
//! - Writes ahead of the watch: a write made through the server hands
//!   upstream's answer to the cache at once ([`WatchCache::take_kept_write`],
//!   [`WatchCache::take_delete`]), so it does not wait for its own watch
//!   event to read its write. The object is kept aside, keyed by its
//!   resourceVersion, and read by single-object reads only; snapshots,
//!   lists and watches keep exactly the watch's state. The watch event of
//!   the same version later confirms it (reusing the kept object, app view
//!   included); a newer event or write always wins, and an older one never
//!   replaces it. A delete kube-apiserver answers with a bare `Status` (as
//!   it answers a custom resource deleted outright) carries no
//!   resourceVersion: it is taken by the version of the object it deleted
//!   ([`WatchCache::take_delete_of`]) and holds until the watch's state no
//!   longer has that version.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::StreamExt;
use imbl::OrdMap;
use serde_json::Value;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use crate::kinds::registry::ServedKind;

use super::helm_release::{self, AppView};
use super::{Backend, ReadScope, StoreError, StoreEvent, UpstreamState, resource_version};

/// Events kept for watch resumption.
pub const HISTORY: usize = 10_000;
/// Snapshots kept for paginated lists.
const SNAPSHOTS: usize = 256;
/// How long events and snapshots are kept beyond the minimum.
pub const FRESH: Duration = Duration::from_secs(75);
/// Events kept however old they are.
pub const HISTORY_MIN: usize = 100;
/// How often old history is dropped when no write comes to do it.
const PRUNE_EVERY: Duration = Duration::from_secs(5);

pub use super::key::Key;
/// The stored objects at one revision.
pub type Objects = OrdMap<Key, Arc<Stored>>;

/// A HelmRelease as the cache keeps it: its compact JSON, parsed on use,
/// and the few fields scans check without parsing. A parsed
/// `serde_json::Value` takes about six times the memory of its JSON, and the
/// cache holds every owned HelmRelease of the cluster.
///
/// Of the HelmRelease's `spec`, only `values` (the app's spec) is kept: the
/// rest (chart, interval, install and upgrade settings, maxHistory) is the
/// kind definition's, made again by every write, and nothing that reads the
/// cache looks at it (about 260 of the 1,600 bytes of a typical object).
///
/// The app it converts to is made on first use and kept with it, so lists
/// and gets of an unchanged object cost a copy of its JSON, not a parse,
/// conversion and encoding each time.
#[derive(Debug)]
pub struct Stored {
    json: Box<str>,
    resource_version: u64,
    kind_label: Option<Box<str>>,
    app: Mutex<Option<AppMemo>>,
}

/// The app view of a [`Stored`] for one served kind (`stamp`, see
/// [`crate::kinds::registry::ServedKind::stamp`]); `None` when the
/// HelmRelease is not that kind's.
#[derive(Debug)]
struct AppMemo {
    stamp: u64,
    view: Option<Arc<AppView>>,
}

/// A HelmRelease as [`Stored`] encodes it: every field, but of `spec` only
/// `values`.
struct Kept<'a>(&'a Value);

impl serde::Serialize for Kept<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(fields) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (key, value) in fields {
            match value {
                Value::Object(spec) if key == "spec" => {
                    map.serialize_entry(key, &SpecValues(spec))?;
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// A HelmRelease's `spec` as [`Stored`] keeps it: `values` alone.
struct SpecValues<'a>(&'a serde_json::Map<String, Value>);

impl serde::Serialize for SpecValues<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let values = self.0.get("values");
        let mut map = serializer.serialize_map(Some(usize::from(values.is_some())))?;
        if let Some(values) = values {
            map.serialize_entry("values", values)?;
        }
        map.end()
    }
}

/// Upstream's answer to a delete, kept ([`Stored::from_delete_answer`]).
pub struct DeleteAnswer {
    /// The key the answer names (empty for a `Status`).
    pub key: Key,
    /// The answer as the cache keeps a release.
    pub stored: Arc<Stored>,
    /// Whether the answer is the release as upstream last had it (it has a
    /// `spec`) rather than a `Status`.
    pub is_release: bool,
    /// Whether finalizers still hold the release (it is marked for
    /// deletion, not gone).
    pub held: bool,
}

impl Stored {
    /// Keeps `object` compactly, of its `spec` only `values`.
    pub fn new(object: &Value) -> Stored {
        Stored {
            json: helm_release::compact_json(&Kept(object)),
            resource_version: resource_version(object),
            kind_label: object
                .pointer("/metadata/labels")
                .and_then(|labels| labels.get(helm_release::KIND_LABEL))
                .and_then(Value::as_str)
                .map(Into::into),
            app: Mutex::new(None),
        }
    }

    /// Keeps upstream's JSON text of a HelmRelease, made straight from the
    /// text ([`super::kept_text`]); with its key. Fails where parsing it as
    /// a [`super::release_json::Release`] fails.
    pub fn from_text(text: &str) -> Result<(Key, Stored), serde_json::Error> {
        Ok(Stored::kept(super::kept_text::keep(text)?, None))
    }

    /// Keeps upstream's answer `text` to a write of an app of the served
    /// `kind`, with its app view made on the way: the answer is read once
    /// for both ([`super::kept_text::keep_with_parts`]).
    pub fn from_answer(text: &str, kind: &ServedKind) -> Result<(Key, Stored), serde_json::Error> {
        let (kept, app) = Stored::read_answer(text, kind)?;
        Ok(Stored::kept(kept, Some(app)))
    }

    /// Keeps upstream's answer `text` to a delete of an app of `kind` as
    /// [`Stored::from_answer`] keeps the answer to a write, and reads on the
    /// way what the delete does next ([`DeleteAnswer`]).
    pub fn from_delete_answer(
        text: &str,
        kind: &ServedKind,
    ) -> Result<DeleteAnswer, serde_json::Error> {
        let (kept, app) = Stored::read_answer(text, kind)?;
        let (is_release, held) = (kept.has_spec, kept.has_finalizers);
        let (key, stored) = Stored::kept(kept, Some(app));
        Ok(DeleteAnswer {
            key,
            stored: Arc::new(stored),
            is_release,
            held,
        })
    }

    /// [`Stored::from_delete_answer`] of the embedded store's answer, a
    /// `Value`.
    pub fn from_delete_value(answer: &Value) -> DeleteAnswer {
        DeleteAnswer {
            key: Key::of(answer),
            stored: Arc::new(Stored::new(answer)),
            is_release: answer.get("spec").is_some(),
            held: answer
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty()),
        }
    }

    /// Upstream's answer `text` kept, and the app of `kind` made from the
    /// parts read on the way.
    fn read_answer(
        text: &str,
        kind: &ServedKind,
    ) -> Result<(super::kept_text::KeptText, AppMemo), serde_json::Error> {
        let mut parts = super::app_text::ReleaseParts::default();
        let kept = super::kept_text::keep_with_parts(text, &mut parts)?;
        let view = helm_release::app_view_of_parts(&kind.resolved, Some(&kind.schema), &parts)
            .map(Arc::new);
        Ok((
            kept,
            AppMemo {
                stamp: kind.stamp,
                view,
            },
        ))
    }

    /// The object `kept` made, with its key, and its app view if made.
    fn kept(kept: super::kept_text::KeptText, app: Option<AppMemo>) -> (Key, Stored) {
        let stored = Stored {
            json: kept.json,
            resource_version: kept.resource_version,
            kind_label: kept.kind_label,
            app: Mutex::new(app),
        };
        (kept.key, stored)
    }

    /// The kept JSON.
    pub(crate) fn json(&self) -> &str {
        &self.json
    }

    /// The app this HelmRelease is for the served `kind` (identified by its
    /// stamp), made once from the kept JSON and kept; `None` when it is not
    /// that kind's. Its spec is the stored values as a read shows them,
    /// pruned and defaulted by the kind's schema ([`super::spec_on_read`]).
    /// A write makes it for its answer before handing the object to the
    /// cache, so the reads after the write find it made.
    pub fn app_view(&self, kind: &ServedKind) -> Option<Arc<AppView>> {
        let stamp = kind.stamp;
        let mut memo = self.app.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(memo) = memo.as_ref()
            && memo.stamp == stamp
        {
            return memo.view.clone();
        }
        let parts = super::app_text::read(&self.json);
        let view = helm_release::app_view_of_parts(&kind.resolved, Some(&kind.schema), &parts)
            .map(Arc::new);
        *memo = Some(AppMemo {
            stamp,
            view: view.clone(),
        });
        view
    }

    /// Keeps `view` as the app view of the served kind `stamp` unless one
    /// is kept already: a write whose answer the cache had from the watch
    /// first hands over the view it made, so the next read of the app does
    /// not convert the HelmRelease again.
    pub fn keep_app_view(&self, stamp: u64, view: Arc<AppView>) {
        let mut memo = self.app.lock().unwrap_or_else(|p| p.into_inner());
        if memo.is_none() {
            *memo = Some(AppMemo {
                stamp,
                view: Some(view),
            });
        }
    }

    /// The object, parsed (about 10 µs for a typical HelmRelease).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }

    /// What a write of the app keeps of this HelmRelease (see
    /// [`helm_release::to_helm_release`]): its labels, annotations and
    /// status, parsed without the rest (the chart values above all).
    pub fn write_base(&self) -> Value {
        #[derive(serde::Deserialize)]
        struct Base {
            #[serde(default)]
            metadata: Option<Meta>,
            #[serde(default)]
            status: Option<Value>,
        }
        #[derive(serde::Deserialize)]
        struct Meta {
            #[serde(default)]
            labels: Option<Value>,
            #[serde(default)]
            annotations: Option<Value>,
        }
        let Ok(base) = serde_json::from_str::<Base>(&self.json) else {
            return Value::Null;
        };
        let mut metadata = serde_json::Map::new();
        if let Some(meta) = base.metadata {
            for (key, value) in [("labels", meta.labels), ("annotations", meta.annotations)] {
                if let Some(value) = value {
                    metadata.insert(key.into(), value);
                }
            }
        }
        let mut object = serde_json::Map::new();
        object.insert("metadata".into(), Value::Object(metadata));
        if let Some(status) = base.status {
            object.insert("status".into(), status);
        }
        Value::Object(object)
    }

    /// `metadata.resourceVersion`, as a number.
    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// The app kind label, if any.
    pub fn kind_label(&self) -> Option<&str> {
        self.kind_label.as_deref()
    }
}

/// Past events after a revision, and a receiver for the ones to come.
pub type Subscription = (Vec<Arc<CacheEvent>>, broadcast::Receiver<Arc<CacheEvent>>);

/// What happened to a HelmRelease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Created (or first seen).
    Added,
    /// Changed.
    Modified,
    /// Gone.
    Deleted,
}

/// One change, at one revision.
#[derive(Debug, Clone)]
pub struct CacheEvent {
    /// What happened.
    pub event_type: EventType,
    /// The object after the change (its last state, for deletions).
    pub object: Arc<Stored>,
    /// The object before the change, if the cache had it.
    pub previous: Option<Arc<Stored>>,
    /// The revision the change brought the cache to.
    pub revision: u64,
    /// `(namespace, name)` of the object.
    pub key: Key,
}

struct State {
    objects: Objects,
    revision: u64,
    /// Events, with when they were recorded.
    history: VecDeque<(Instant, Arc<CacheEvent>)>,
    /// Watches may resume from this revision or later.
    oldest: u64,
    /// Snapshots `(revision, objects)`, with when they were taken.
    snapshots: VecDeque<(Instant, u64, Objects)>,
    /// Writes upstream has answered and the watch has not yet delivered,
    /// each newer than `revision` (dropped once the watch reaches it).
    ahead: HashMap<Key, Ahead>,
}

/// An upstream event made ready to apply outside the cache's write lock.
enum Prepared {
    /// Added or changed: the object as the cache keeps it.
    Put(Key, Arc<Stored>),
    /// Gone: its last state.
    Delete(Key, Arc<Stored>),
    /// No change up to this revision.
    Bookmark(u64),
}

/// A write's result taken before its watch event: the object as upstream
/// answered (`None` when the write deleted it) at `resource_version`.
#[derive(Debug, Clone)]
struct Ahead {
    /// The write's resourceVersion; for a delete upstream answered without
    /// one (`exact` false), the version of the object it deleted (the
    /// delete's own is newer, and unknown until its watch event).
    resource_version: u64,
    object: Option<Arc<Stored>>,
    exact: bool,
}

impl State {
    /// The object under `key` as single-object reads see it: a write taken
    /// ahead of the watch, else the watch's state.
    fn current(&self, key: &str) -> Option<Arc<Stored>> {
        match self.ahead.get(key) {
            Some(ahead) => ahead.object.clone(),
            None => self.objects.get(key).cloned(),
        }
    }

    /// Takes a write upstream answered at `resource_version` unless the
    /// cache already knows that version or a newer one of the object.
    fn take_write(&mut self, key: Key, resource_version: u64, object: Option<Arc<Stored>>) -> bool {
        if resource_version == 0 || resource_version <= self.revision {
            return false; // the watch has delivered it (or something newer)
        }
        if self
            .ahead
            .get(&key)
            .is_some_and(|a| a.resource_version >= resource_version)
        {
            return false; // a newer write was taken first
        }
        self.ahead.insert(
            key,
            Ahead {
                resource_version,
                object,
                exact: true,
            },
        );
        true
    }

    /// Takes a delete upstream answered without its resourceVersion, of the
    /// object under `key` as of version `deleted`, unless the watch has
    /// already brought that delete or something newer of the object (or a
    /// newer write was taken first).
    fn take_delete_of(&mut self, key: Key, deleted: u64) -> bool {
        let watched = self.objects.get(&key).map(|o| o.resource_version());
        if deleted == 0 || watched.is_none_or(|rv| rv > deleted) {
            return false; // gone or newer in the watch's state already
        }
        if self
            .ahead
            .get(&key)
            .is_some_and(|a| a.resource_version > deleted)
        {
            return false; // a newer write was taken first
        }
        self.ahead.insert(
            key,
            Ahead {
                resource_version: deleted,
                object: None,
                exact: false,
            },
        );
        true
    }

    /// The object a write through this server handed the cache at exactly
    /// `resource_version` under `key`, if it is still kept aside.
    fn taken(&self, key: &Key, resource_version: u64) -> Option<Arc<Stored>> {
        match self.ahead.get(key) {
            Some(Ahead {
                resource_version: taken,
                object: Some(object),
                exact: true,
            }) if *taken == resource_version => Some(object.clone()),
            _ => None,
        }
    }

    /// Drops the writes the watch has now delivered: up to its revision, and
    /// a delete without a resourceVersion once the watch's state no longer
    /// holds the version it deleted.
    fn confirm_writes(&mut self) {
        if !self.ahead.is_empty() {
            let (revision, objects) = (self.revision, &self.objects);
            self.ahead.retain(|key, a| {
                if a.exact {
                    a.resource_version > revision
                } else {
                    objects
                        .get(key)
                        .is_some_and(|o| o.resource_version() <= a.resource_version)
                }
            });
        }
    }

    /// Drops what is past its keep: beyond the count limits, and older
    /// than [`FRESH`] beyond [`HISTORY_MIN`] events and one snapshot.
    fn prune(&mut self, now: Instant) {
        let stale = |at: &Instant| now.saturating_duration_since(*at) > FRESH;
        while self.history.len() > HISTORY
            || (self.history.len() > HISTORY_MIN
                && self.history.front().is_some_and(|(at, _)| stale(at)))
        {
            if let Some((_, old)) = self.history.pop_front() {
                self.oldest = old.revision;
            }
        }
        while self.snapshots.len() > SNAPSHOTS
            || (self.snapshots.len() > 1
                && self.snapshots.front().is_some_and(|(at, ..)| stale(at)))
        {
            self.snapshots.pop_front();
        }
    }
}

/// The shared cache.
#[derive(Clone)]
pub struct WatchCache {
    state: Arc<RwLock<State>>,
    events: broadcast::Sender<Arc<CacheEvent>>,
    revision_tx: Arc<watch::Sender<u64>>,
    ready_tx: Arc<watch::Sender<bool>>,
    upstream_watches: Arc<AtomicU64>,
    task: Arc<tokio::task::JoinHandle<()>>,
}

/// Why a watch cannot start where asked.
#[derive(Debug, Clone, thiserror::Error)]
#[error("too old resource version: {requested} ({oldest})")]
pub struct Expired {
    /// The requested revision.
    pub requested: u64,
    /// The oldest available.
    pub oldest: u64,
}

impl WatchCache {
    /// Starts syncing from `backend`, on the caches' own thread
    /// (`cache_thread`); [`WatchCache::ready`] turns true after the first list.
    pub fn start(backend: Backend) -> WatchCache {
        let state = Arc::new(RwLock::new(State {
            objects: OrdMap::new(),
            revision: 0,
            history: VecDeque::new(),
            oldest: 0,
            snapshots: VecDeque::new(),
            ahead: HashMap::new(),
        }));
        let (events, _) = broadcast::channel(4096);
        let (revision_tx, _) = watch::channel(0);
        let (ready_tx, _) = watch::channel(false);
        let revision_tx = Arc::new(revision_tx);
        let ready_tx = Arc::new(ready_tx);
        let upstream_watches = Arc::new(AtomicU64::new(0));
        let sync = Sync {
            state: state.clone(),
            events: events.clone(),
            revision_tx: revision_tx.clone(),
            ready_tx: ready_tx.clone(),
            upstream_watches: upstream_watches.clone(),
        };
        // On a thread of its own, so what the cache keeps is allocated
        // apart from the requests' short-lived blocks (`cache_thread`).
        let runtime = super::cache_thread::handle();
        let task = runtime.spawn(sync.run(backend));
        runtime.spawn(prune_while_alive(Arc::downgrade(&state)));
        WatchCache {
            state,
            events,
            revision_tx,
            ready_tx,
            upstream_watches,
            task: Arc::new(task),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the first list has completed.
    pub fn ready(&self) -> bool {
        *self.ready_tx.borrow()
    }

    /// Waits until the cache is ready.
    pub async fn wait_ready(&self) {
        let mut rx = self.ready_tx.subscribe();
        let _ = rx.wait_for(|r| *r).await;
    }

    /// The revision the cache has reached.
    pub fn revision(&self) -> u64 {
        self.read().revision
    }

    /// A receiver told of every change of the cache's revision.
    pub fn revision_changes(&self) -> watch::Receiver<u64> {
        self.revision_tx.subscribe()
    }

    /// Waits (up to `timeout`) until the cache has seen `revision`.
    pub async fn wait_for_revision(&self, revision: u64, timeout: Duration) -> bool {
        let mut rx = self.revision_tx.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|r| *r >= revision))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Waits (up to `timeout`) until the cache reflects `upstream` within
    /// `scope`: it has reached upstream's revision, or (when upstream's
    /// revision also counts changes the cache never sees) the scope holds
    /// exactly the objects and versions upstream listed. Returns false on
    /// timeout.
    pub async fn wait_until_current(
        &self,
        upstream: &UpstreamState,
        scope: &ReadScope,
        timeout: Duration,
    ) -> bool {
        let mut rx = self.revision_tx.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            rx.borrow_and_update();
            if self.is_current(upstream, scope) {
                return true;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return self.is_current(upstream, scope),
            }
        }
    }

    fn is_current(&self, upstream: &UpstreamState, scope: &ReadScope) -> bool {
        let state = self.read();
        // One object's read also sees a write taken ahead of the watch.
        if let (Some(ns), Some(name), Some(versions)) =
            (&scope.namespace, &scope.release, &upstream.versions)
        {
            let key = Key::new(ns, name);
            if let Some(ahead) = state.ahead.get(key.as_str()) {
                if state.revision >= upstream.revision {
                    return true;
                }
                return match &ahead.object {
                    Some(o) if scope.contains(&key, o) => {
                        versions.len() == 1 && versions.get(&key) == Some(&ahead.resource_version)
                    }
                    _ => versions.is_empty(),
                };
            }
        }
        snapshot_is_current(&state.objects, state.revision, upstream, scope)
    }

    /// Takes upstream's answer to a write made through the server at once,
    /// so that reads of the object see it before its watch event arrives:
    /// the object `key` deleted at `resource_version` (gone). Ignored when
    /// the cache already has that version or a newer one of the object (a
    /// concurrent newer event or write wins) or there is no resourceVersion.
    /// Returns whether it was taken.
    pub fn take_delete(&self, key: Key, resource_version: u64) -> bool {
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        state.take_write(key, resource_version, None)
    }

    /// Takes a delete upstream answered without its resourceVersion
    /// (kube-apiserver answers a custom resource deleted outright with a
    /// bare `Status`): the object `key`, whose newest version the server
    /// knew was `deleted`, is gone for single-object reads until the watch
    /// brings its delete (or a newer version). Ignored when the watch has
    /// already, or a newer write was taken. Returns whether it was taken.
    pub fn take_delete_of(&self, key: Key, deleted: u64) -> bool {
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        state.take_delete_of(key, deleted)
    }

    /// Takes upstream's answer to a write of an object that exists, kept
    /// already (as [`Stored::from_answer`] keeps it), as
    /// [`WatchCache::take_delete`] takes a delete: keyed by its
    /// resourceVersion, and on the same terms.
    pub fn take_kept_write(&self, key: Key, written: Arc<Stored>) -> bool {
        let rv = written.resource_version();
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        state.take_write(key, rv, Some(written))
    }

    /// How many upstream watches have been opened (1 while healthy).
    pub fn upstream_watches(&self) -> u64 {
        self.upstream_watches.load(Ordering::Relaxed)
    }

    /// The current objects and their revision (O(1)).
    pub fn snapshot(&self) -> (Objects, u64) {
        let state = self.read();
        (state.objects.clone(), state.revision)
    }

    /// The objects as of `revision`, if that snapshot is still kept.
    pub fn snapshot_at(&self, revision: u64) -> Option<Objects> {
        let state = self.read();
        if state.revision == revision {
            return Some(state.objects.clone());
        }
        state
            .snapshots
            .iter()
            .rev()
            .find(|(_, r, _)| *r == revision)
            .map(|(_, _, o)| o.clone())
    }

    /// The kept snapshots from `revision` on (the current one last), oldest
    /// first, to find one that matches a page of upstream's.
    pub fn snapshots_since(&self, revision: u64) -> Vec<(u64, Objects)> {
        let state = self.read();
        let mut found: Vec<(u64, Objects)> = state
            .snapshots
            .iter()
            .filter(|(_, r, _)| *r >= revision && *r < state.revision)
            .map(|(_, r, o)| (*r, o.clone()))
            .collect();
        found.dedup_by_key(|(r, _)| *r);
        found.push((state.revision, state.objects.clone()));
        found
    }

    /// One object.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<Value>> {
        Some(Arc::new(self.stored(namespace, name)?.value()))
    }

    /// The HelmRelease `namespace/name` as it is kept, unparsed (a write
    /// taken ahead of the watch included).
    pub fn stored(&self, namespace: &str, name: &str) -> Option<Arc<Stored>> {
        self.read().current(&Key::text(namespace, name))
    }

    /// Events after `revision` (from history) and a receiver for later ones,
    /// without gap or overlap.
    pub fn subscribe(&self, revision: u64) -> Result<Subscription, Expired> {
        let state = self.read();
        if revision < state.oldest {
            return Err(Expired {
                requested: revision,
                oldest: state.oldest,
            });
        }
        let backlog = state
            .history
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e.revision > revision)
            .cloned()
            .collect();
        Ok((backlog, self.events.subscribe()))
    }
}

/// Drops old history every [`PRUNE_EVERY`] until the cache is gone.
async fn prune_while_alive(state: std::sync::Weak<RwLock<State>>) {
    let mut tick = tokio::time::interval(PRUNE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(state) = state.upgrade() else { return };
        let mut state = state.write().unwrap_or_else(|p| p.into_inner());
        state.prune(Instant::now());
    }
}

/// Whether a snapshot (`objects` at `revision`) reflects `upstream` within
/// `scope`: it is at or past upstream's revision, or (when upstream listed
/// the scope's versions) its objects in the scope are exactly those.
pub fn snapshot_is_current(
    objects: &Objects,
    revision: u64,
    upstream: &UpstreamState,
    scope: &ReadScope,
) -> bool {
    if revision >= upstream.revision {
        return true;
    }
    let Some(versions) = &upstream.versions else {
        return false;
    };
    let candidates: Box<dyn Iterator<Item = (&Key, &Arc<Stored>)>> =
        match (&scope.namespace, &scope.release) {
            (Some(ns), Some(name)) => Box::new(
                objects
                    .get_key_value(Key::text(ns, name).as_str())
                    .into_iter(),
            ),
            (Some(ns), None) => Box::new(
                objects
                    .range::<_, str>((
                        Bound::Included(Key::namespace_start(ns).as_str()),
                        Bound::Unbounded,
                    ))
                    .take_while(move |(key, _)| key.namespace() == ns),
            ),
            _ => Box::new(objects.iter()),
        };
    let mut seen = 0;
    for (key, release) in candidates {
        if !scope.contains(key, release) {
            continue;
        }
        if versions.get(key) != Some(&release.resource_version()) {
            return false;
        }
        seen += 1;
    }
    seen == versions.len()
}

/// How two keys compare in kube-apiserver's order (etcd's, by the key
/// string `<namespace>/<name>`): `a-b/x` comes before `a/x`, where the
/// cache's map, ordered by `(namespace, name)`, puts `a` first.
pub fn key_order(a: &Key, b: &Key) -> std::cmp::Ordering {
    namespace_order(a.namespace(), b.namespace()).then_with(|| a.name().cmp(b.name()))
}

/// How two namespaces compare in kube-apiserver's key order (`<ns>/`).
fn namespace_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes()
        .chain(std::iter::once(b'/'))
        .cmp(b.bytes().chain(std::iter::once(b'/')))
}

/// The objects of `namespace` (or all), after `after`, in kube-apiserver's
/// key order ([`key_order`]), so that pages line up with upstream's.
/// Within a namespace that is the map's own order; across namespaces the
/// map's namespaces are visited in key order (finding them costs a lookup
/// per namespace, not a scan).
pub fn in_key_order<'a>(
    objects: &'a Objects,
    namespace: Option<&str>,
    after: Option<&Key>,
) -> impl Iterator<Item = (&'a Key, &'a Arc<Stored>)> + 'a {
    let namespaces: Vec<String> = match namespace {
        Some(ns) => vec![ns.to_owned()],
        None => {
            let mut found = Vec::new();
            let mut next = objects.get_min().map(|(key, _)| key.namespace().to_owned());
            while let Some(ns) = next {
                // The first key of a later namespace.
                next = objects
                    .range::<_, str>((
                        Bound::Included(Key::namespace_end(&ns).as_str()),
                        Bound::Unbounded,
                    ))
                    .next()
                    .map(|(key, _)| key.namespace().to_owned());
                found.push(ns);
            }
            found.sort_by(|a, b| namespace_order(a, b));
            found
        }
    };
    let after = after.cloned();
    namespaces
        .into_iter()
        .filter_map(move |ns| {
            let start = match &after {
                None => Bound::Included(Key::namespace_start(&ns)),
                Some(key) => match namespace_order(key.namespace(), &ns) {
                    std::cmp::Ordering::Less => Bound::Included(Key::namespace_start(&ns)),
                    std::cmp::Ordering::Equal => Bound::Excluded(key.as_str().to_owned()),
                    std::cmp::Ordering::Greater => return None,
                },
            };
            Some((ns, start))
        })
        .flat_map(move |(ns, start)| {
            objects
                .range::<_, str>((start.as_ref().map(String::as_str), Bound::Unbounded))
                .take_while(move |(key, _)| key.namespace() == ns)
        })
}

/// Whether `objects`, within `scope`, hold exactly `upstream`'s objects
/// and versions in the key range upstream's page covers: after `after`,
/// up to and including its last item, or to the end when `last_page`.
/// Upstream's items come in key order ([`key_order`]), as the cache's are
/// read.
pub fn range_is_current(
    objects: &Objects,
    scope: &ReadScope,
    after: Option<&Key>,
    upstream: &[super::metadata_list::Item],
    last_page: bool,
) -> bool {
    let end = match upstream.last() {
        _ if last_page => None,
        Some(item) => Some(Key::new(&item.namespace, &item.name)),
        None => return true, // an empty range
    };
    let mut cached = in_key_order(objects, scope.namespace.as_deref(), after)
        .take_while(|(key, _)| {
            end.as_ref()
                .is_none_or(|end| key_order(key, end) != std::cmp::Ordering::Greater)
        })
        .filter(|(key, stored)| scope.contains(key, stored));
    for item in upstream {
        match cached.next() {
            Some((key, stored))
                if key.parts() == (item.namespace.as_str(), item.name.as_str())
                    && stored.resource_version() == item.resource_version => {}
            _ => return false,
        }
    }
    cached.next().is_none()
}

impl Drop for WatchCache {
    fn drop(&mut self) {
        if Arc::strong_count(&self.task) == 1 {
            self.task.abort();
        }
    }
}

struct Sync {
    state: Arc<RwLock<State>>,
    events: broadcast::Sender<Arc<CacheEvent>>,
    revision_tx: Arc<watch::Sender<u64>>,
    ready_tx: Arc<watch::Sender<bool>>,
    upstream_watches: Arc<AtomicU64>,
}

impl Sync {
    async fn run(self, backend: Backend) {
        let mut backoff = Duration::from_millis(200);
        let mut need_list = true;
        loop {
            if need_list {
                match backend.list().await {
                    Ok(listing) => {
                        self.replace(listing.items, listing.resource_version);
                        // The pages parsed for the list are freed between the kept objects.
                        crate::allocator::trim();
                        self.ready_tx.send_replace(true);
                        need_list = false;
                        backoff = Duration::from_millis(200);
                    }
                    Err(err) => {
                        tracing::warn!("listing HelmReleases for the cache: {err}");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(Duration::from_secs(10));
                        continue;
                    }
                }
            }
            let from = self.state.read().map(|s| s.revision).unwrap_or(0);
            let mut stream = match backend.watch(from).await {
                Ok(stream) => {
                    self.upstream_watches.fetch_add(1, Ordering::Relaxed);
                    stream
                }
                Err(StoreError::Gone(_)) => {
                    need_list = true;
                    continue;
                }
                Err(err) => {
                    tracing::warn!("watching HelmReleases for the cache: {err}");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                    continue;
                }
            };
            while let Some(event) = stream.next().await {
                match event {
                    Ok(event) => {
                        backoff = Duration::from_millis(200);
                        if let Err(err) = self.apply(event) {
                            tracing::warn!("HelmRelease watch ended: {err}");
                            break;
                        }
                    }
                    Err(StoreError::Gone(_)) => {
                        need_list = true;
                        break;
                    }
                    Err(err) => {
                        tracing::warn!("HelmRelease watch ended: {err}");
                        break;
                    }
                }
            }
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies one upstream event. Fails only when a changed object's text
    /// does not parse (the watch is then ended and resumed, as for an event
    /// that did not parse in the stream).
    ///
    /// What the cache keeps of a changed object is made before the write
    /// lock is taken (readers wait on it), and not at all when a write
    /// through this server handed the cache that version already: its
    /// event then keeps the taken object, app view included, and a changed
    /// object's text is never parsed.
    fn apply(&self, event: StoreEvent) -> Result<(), StoreError> {
        let revision = event.resource_version();
        let prepared = match event {
            StoreEvent::Bookmark(rv) => Prepared::Bookmark(rv),
            StoreEvent::Added(o) | StoreEvent::Modified(o) => {
                match self.put_unless_seen(Key::of(&o), revision, || Ok(Stored::new(&o)))? {
                    Some(put) => put,
                    None => return Ok(()),
                }
            }
            StoreEvent::Changed(text) => {
                let parse = || {
                    text.keep().map_err(|e| {
                        StoreError::Internal(format!(
                            "parse the HelmRelease {}/{} of a watch event: {e}",
                            text.key.namespace(),
                            text.key.name()
                        ))
                    })
                };
                match self.put_unless_seen(text.key.clone(), revision, parse)? {
                    Some(put) => put,
                    None => return Ok(()),
                }
            }
            StoreEvent::Deleted(o) => Prepared::Delete(Key::of(&o), Arc::new(Stored::new(&o))),
        };
        let mut state = self.write();
        if revision <= state.revision && !matches!(prepared, Prepared::Bookmark(_)) {
            return Ok(()); // already seen (a resumed watch may repeat)
        }
        let cache_event = match prepared {
            Prepared::Bookmark(rv) => {
                if rv > state.revision {
                    state.revision = rv;
                    state.confirm_writes();
                    drop(state);
                    self.revision_tx.send_replace(rv);
                }
                return Ok(());
            }
            Prepared::Put(key, object) => {
                // A write taken since the look above wins, app view and all.
                let object = state.taken(&key, revision).unwrap_or(object);
                let previous = state.objects.insert(key.clone(), object.clone());
                let event_type = if previous.is_some() {
                    EventType::Modified
                } else {
                    EventType::Added
                };
                CacheEvent {
                    event_type,
                    object,
                    previous,
                    revision,
                    key,
                }
            }
            Prepared::Delete(key, object) => {
                let previous = state.objects.remove(&key);
                CacheEvent {
                    event_type: EventType::Deleted,
                    object,
                    previous,
                    revision,
                    key,
                }
            }
        };
        self.record(&mut state, vec![Arc::new(cache_event)], revision);
        Ok(())
    }

    /// The put of `key` at `revision`: `None` when the cache has seen
    /// `revision` already; otherwise the object a write took at exactly
    /// that version, or else the one `make` builds (outside any lock).
    fn put_unless_seen(
        &self,
        key: Key,
        revision: u64,
        make: impl FnOnce() -> Result<Stored, StoreError>,
    ) -> Result<Option<Prepared>, StoreError> {
        let taken = {
            let state = self.state.read().unwrap_or_else(|p| p.into_inner());
            if revision <= state.revision {
                return Ok(None);
            }
            state.taken(&key, revision)
        };
        let object = match taken {
            Some(taken) => taken,
            None => Arc::new(make()?),
        };
        Ok(Some(Prepared::Put(key, object)))
    }

    /// Replaces the whole set after a (re-)list, emitting the difference.
    ///
    /// Each added or modified object's event is at the object's own
    /// resourceVersion (all of them are past the cache's revision: it saw
    /// every change before). The list does not say when the missing objects
    /// were deleted, only that it was after the cache's revision and at a
    /// revision no listed object holds: each deletion takes the latest such
    /// revision still free (the list's own, then the ones below it), its
    /// object carrying it as kube-apiserver's DELETED events carry the
    /// deletion's. Every event has a revision of its own and they are sent
    /// in that order, so resuming from any of them neither repeats nor skips
    /// one.
    fn replace(&self, items: Vec<(Key, Arc<Stored>)>, revision: u64) {
        let mut state = self.write();
        let mut next: Objects = OrdMap::new();
        for (key, item) in items {
            next.insert(key, item);
        }
        let after = (state.revision + 1).min(revision);
        let at = |object: &Stored| object.resource_version().clamp(after, revision);
        let mut changes = Vec::new();
        for (key, object) in &next {
            match state.objects.get(key) {
                None => changes.push(CacheEvent {
                    event_type: EventType::Added,
                    object: object.clone(),
                    previous: None,
                    revision: at(object),
                    key: key.clone(),
                }),
                Some(old) if old.resource_version() != object.resource_version() => {
                    changes.push(CacheEvent {
                        event_type: EventType::Modified,
                        object: object.clone(),
                        previous: Some(old.clone()),
                        revision: at(object),
                        key: key.clone(),
                    })
                }
                Some(_) => {}
            }
        }
        let deleted: Vec<(&Key, &Arc<Stored>)> = state
            .objects
            .iter()
            .filter(|(key, _)| !next.contains_key(*key))
            .collect();
        let held: HashSet<u64> = changes.iter().map(|c| c.revision).collect();
        let slots = deletion_revisions(deleted.len(), after, revision, &held);
        for ((key, object), at) in deleted.into_iter().zip(slots) {
            let mut last = object.value();
            if let Some(metadata) = last.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.insert("resourceVersion".into(), at.to_string().into());
            }
            changes.push(CacheEvent {
                event_type: EventType::Deleted,
                object: Arc::new(Stored::new(&last)),
                previous: Some(object.clone()),
                revision: at,
                key: key.clone(),
            });
        }
        changes.sort_by_key(|c| c.revision);
        state.objects = next;
        let first_list = state.revision == 0 && state.history.is_empty();
        if first_list {
            // Nothing to resume from before the first list.
            state.oldest = revision;
            changes.clear();
        }
        self.record(
            &mut state,
            changes.into_iter().map(Arc::new).collect(),
            revision,
        );
    }

    fn record(&self, state: &mut State, events: Vec<Arc<CacheEvent>>, revision: u64) {
        state.revision = state.revision.max(revision);
        state.confirm_writes();
        let now = Instant::now();
        let snapshot = (now, state.revision, state.objects.clone());
        state.snapshots.push_back(snapshot);
        for event in events {
            state.history.push_back((now, event.clone()));
            // Sent under the write lock: subscribers see history and live events without a gap.
            let _ = self.events.send(event);
        }
        state.prune(now);
        self.revision_tx.send_replace(state.revision);
    }
}

/// The revisions `count` deletions found by a re-list are reported at, in
/// ascending order: the latest ones in `after..=revision` that no other
/// event of the re-list `held`. Should the range run out (it holds a
/// revision for every change upstream made in it, so only an upstream that
/// skips revisions could make it), the rest are at `revision`.
fn deletion_revisions(count: usize, after: u64, revision: u64, held: &HashSet<u64>) -> Vec<u64> {
    let mut slots: Vec<u64> = (after..=revision)
        .rev()
        .filter(|r| !held.contains(r))
        .take(count)
        .collect();
    slots.reverse();
    slots.resize(count, revision);
    slots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::embedded_store::EmbeddedStore;
    use serde_json::json;

    /// A Postgres kind that accepts any spec, served (each call under a
    /// stamp of its own).
    fn postgres() -> ServedKind {
        let text = "kind: Postgres\nopenAPISchema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
                    release:\n  chart: {name: postgres, version: 0.1.0, sourceRef: {kind: HelmRepository, name: apps}}\n";
        let resolved = crate::kinds::load::load_text(text, "test")
            .unwrap()
            .kinds
            .remove(0);
        let schema =
            crate::kinds::schema::CompiledSchema::new(&resolved.definition.open_api_schema)
                .unwrap();
        ServedKind::new(resolved, schema)
    }

    fn hr(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {}})
    }

    #[test]
    fn app_views_are_made_once_per_served_kind() {
        let kind = postgres();
        let app = json!({
            "apiVersion": kind.resolved.group_version(), "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "ns", "labels": {"team": "a"}},
            "spec": {"size": "1Gi"},
        });
        let mut release = helm_release::to_helm_release(&kind.resolved, &app, None, None).unwrap();
        release["metadata"]["resourceVersion"] = json!("7");
        let stored = Stored::new(&release);

        let view = stored.app_view(&kind).expect("owned");
        assert_eq!(view.labels().get("team"), Some(&json!("a")));
        assert_eq!(view.value()["spec"], json!({"size": "1Gi"}));
        assert_eq!(view.value(), helm_release::to_app(&kind.resolved, &release));
        // Kept: the same view again for the same kind, a new one for a reloaded kind.
        assert!(Arc::ptr_eq(&view, &stored.app_view(&kind).unwrap()));
        assert!(!Arc::ptr_eq(&view, &stored.app_view(&postgres()).unwrap()));
        // Not this kind's (another kind's name prefix): no view.
        let other = Stored::new(&hr("db"));
        assert!(other.app_view(&kind).is_none());
    }

    #[test]
    fn an_answer_is_kept_with_its_view_as_a_watch_event_would_be() {
        let kind = postgres();
        let app = json!({
            "apiVersion": kind.resolved.group_version(), "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "ns", "labels": {"team": "a"},
                         "annotations": {"note": "<&>"}},
            "spec": {"size": "1Gi", "replicas": 2},
        });
        let mut release = helm_release::to_helm_release(&kind.resolved, &app, None, None).unwrap();
        release["metadata"]["resourceVersion"] = json!("7");
        release["metadata"]["managedFields"] =
            json!([{"manager": "kubectl-cozy", "fieldsV1": {"f:spec": {}}}]);
        release["status"] =
            json!({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]});
        // As kube-apiserver escapes it.
        let answer = release.to_string().replace("<&>", "\\u003c\\u0026\\u003e");
        assert!(answer.contains("\\u0026"));

        let (key, stored) = Stored::from_answer(&answer, &kind).unwrap();
        let (watched_key, watched) = Stored::from_text(&answer).unwrap();
        assert_eq!((&key, key.name()), (&watched_key, "postgres-db"));
        assert_eq!(stored.json, watched.json);
        // What parsing the answer as a watch event's object kept (without
        // the release's own managedFields).
        let super::super::release_json::Release(parsed) = serde_json::from_str(&answer).unwrap();
        assert_eq!(stored.value(), Stored::new(&parsed).value());
        assert!(stored.value()["metadata"].get("managedFields").is_none());
        assert_eq!(
            (stored.resource_version(), stored.kind_label()),
            (7, Some("Postgres"))
        );
        // The view made on the way is kept, and is the one a read makes.
        let view = stored.app_view(&kind).unwrap();
        assert_eq!(view.json, watched.app_view(&kind).unwrap().json);
        assert_eq!(view.value(), helm_release::to_app(&kind.resolved, &release));
        assert_eq!(
            view.value()["metadata"]["annotations"],
            json!({"note": "<&>"})
        );
        assert!(Arc::ptr_eq(&view, &stored.app_view(&kind).unwrap()));
        // Not this kind's answer: kept, without a view.
        let (_, other) = Stored::from_answer(&hr("db").to_string(), &kind).unwrap();
        assert!(other.app_view(&kind).is_none());
        assert!(Stored::from_answer("{\"kind\": \"Status\"", &kind).is_err());
    }

    #[test]
    fn stored_keeps_of_the_spec_only_the_values() {
        let kind = postgres();
        let app = json!({
            "apiVersion": kind.resolved.group_version(), "kind": "Postgres",
            "metadata": {"name": "db", "namespace": "ns", "labels": {"team": "a"},
                         "annotations": {"note": "x"}},
            "spec": {"size": "1Gi", "spec": {"values": 1}},
        });
        let mut release = helm_release::to_helm_release(&kind.resolved, &app, None, None).unwrap();
        release["metadata"]["resourceVersion"] = json!("7");
        release["status"] = json!({"lastAttemptedRevision": "0.1.0", "observedGeneration": 1,
            "conditions": [{"type": "Ready", "status": "True"}]});
        assert!(release["spec"].get("chart").is_some());
        let stored = Stored::new(&release);

        let kept = stored.value();
        assert_eq!(
            kept["spec"],
            json!({"values": {"size": "1Gi", "spec": {"values": 1}}})
        );
        for field in ["apiVersion", "kind", "metadata", "status"] {
            assert_eq!(kept[field], release[field], "{field}");
        }
        assert_eq!(stored.kind_label(), Some("Postgres"));
        // The app is the same as from the whole HelmRelease.
        let view = stored.app_view(&kind).expect("owned");
        assert_eq!(view.value(), helm_release::to_app(&kind.resolved, &release));
        // Kept again (a re-list's deletion keeps what the cache had): unchanged.
        assert_eq!(Stored::new(&kept).value(), kept);
        // An update made over the parts a write keeps is the update made
        // over the whole HelmRelease (labels, annotations, status).
        let mut changed = app.clone();
        changed["spec"]["size"] = json!("2Gi");
        changed["metadata"]["labels"] = json!({"team": "b"});
        let base = stored.write_base();
        assert!(base.get("spec").is_none());
        assert_eq!(
            helm_release::to_helm_release(&kind.resolved, &changed, Some(&base), None).unwrap(),
            helm_release::to_helm_release(&kind.resolved, &changed, Some(&release), None).unwrap()
        );
        // Not an object, or a spec that is not one: kept as it is.
        assert_eq!(Stored::new(&json!({"spec": 1})).value(), json!({"spec": 1}));
    }

    #[tokio::test]
    async fn serves_snapshots_history_and_live_events() {
        let store = EmbeddedStore::open(std::path::Path::new(":memory:")).unwrap();
        store.create(hr("a"), false).await.unwrap();
        let cache = WatchCache::start(Backend::Embedded(store.clone()));
        cache.wait_ready().await;
        assert_eq!(cache.revision(), 1);
        let (_, mut rx) = cache.subscribe(1).unwrap();

        let b = store.create(hr("b"), false).await.unwrap();
        let event = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!((event.event_type, event.revision), (EventType::Added, 2));
        assert!(cache.wait_for_revision(2, Duration::from_secs(1)).await);
        assert!(cache.get("ns", "b").is_some());

        // Snapshots stay readable after later changes (pagination).
        let mut b2 = b.clone();
        b2["spec"]["x"] = json!(1);
        store.update(b2, false).await.unwrap();
        assert!(cache.wait_for_revision(3, Duration::from_secs(5)).await);
        let old = cache.snapshot_at(2).unwrap();
        assert!(
            old.get(Key::text("ns", "b").as_str()).unwrap().value()["spec"]
                .get("x")
                .is_none()
        );

        // Resuming: history after 1 holds both changes; before the first list is too old.
        let (backlog, _) = cache.subscribe(1).unwrap();
        assert_eq!(
            backlog.iter().map(|e| e.revision).collect::<Vec<_>>(),
            [2, 3]
        );
        assert!(cache.subscribe(0).is_err());
        assert_eq!(cache.upstream_watches(), 1);
    }

    /// A cache whose upstream events the test applies itself, in the order
    /// it chooses, starting from an empty list at revision 10.
    fn driven() -> (WatchCache, Sync) {
        let cache = WatchCache {
            state: Arc::new(RwLock::new(State {
                objects: OrdMap::new(),
                revision: 0,
                history: VecDeque::new(),
                oldest: 0,
                snapshots: VecDeque::new(),
                ahead: HashMap::new(),
            })),
            events: broadcast::channel(64).0,
            revision_tx: Arc::new(watch::channel(0).0),
            ready_tx: Arc::new(watch::channel(false).0),
            upstream_watches: Arc::new(AtomicU64::new(0)),
            task: Arc::new(tokio::spawn(async {})),
        };
        let sync = Sync {
            state: cache.state.clone(),
            events: cache.events.clone(),
            revision_tx: cache.revision_tx.clone(),
            ready_tx: cache.ready_tx.clone(),
            upstream_watches: cache.upstream_watches.clone(),
        };
        sync.replace(Vec::new(), 10);
        (cache, sync)
    }

    fn at(name: &str, rv: u64, x: i64) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv.to_string(),
            "labels": {crate::storage::helm_release::KIND_LABEL: "Postgres"}}, "spec": {"values": {"x": x}}})
    }

    /// Takes the write answered with `written` (gone unless `exists`).
    fn take_value(cache: &WatchCache, written: &Value, exists: bool) -> bool {
        if exists {
            cache.take_kept_write(Key::of(written), Arc::new(Stored::new(written)))
        } else {
            cache.take_delete(Key::of(written), resource_version(written))
        }
    }

    fn x_of(cache: &WatchCache, name: &str) -> Option<i64> {
        cache
            .get("ns", name)
            .map(|o| o["spec"]["values"]["x"].as_i64().unwrap())
    }

    /// The event of `object` as the cluster store's watch delivers it.
    fn changed(object: &Value) -> StoreEvent {
        let text = serde_json::value::to_raw_value(object).unwrap();
        StoreEvent::Changed(Arc::new(
            crate::storage::release_json::ReleaseText::new(text).unwrap(),
        ))
    }

    #[tokio::test]
    async fn a_changed_objects_text_is_parsed_only_when_no_write_took_it() {
        let (cache, sync) = driven();
        let (_, mut rx) = cache.subscribe(10).unwrap();
        assert!(take_value(&cache, &at("a", 11, 1), true));
        let taken = cache.stored("ns", "a").unwrap();
        sync.apply(changed(&at("a", 11, 1))).unwrap();
        let event = rx.try_recv().unwrap();
        assert_eq!((event.event_type, event.revision), (EventType::Added, 11));
        assert!(
            Arc::ptr_eq(&event.object, &taken),
            "the taken object is kept"
        );
        assert!(cache.read().ahead.is_empty());

        // Changes no write took are parsed: made elsewhere, or newer.
        assert!(take_value(&cache, &at("a", 12, 2), true));
        sync.apply(changed(&at("a", 13, 3))).unwrap();
        sync.apply(changed(&at("b", 14, 4))).unwrap();
        let kinds: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| (e.event_type, e.key.name().to_owned(), e.revision))
            .collect();
        assert_eq!(
            kinds,
            [
                (EventType::Modified, "a".to_owned(), 13),
                (EventType::Added, "b".to_owned(), 14)
            ]
        );
        assert_eq!((x_of(&cache, "a"), x_of(&cache, "b")), (Some(3), Some(4)));
        assert_eq!(
            cache.stored("ns", "a").unwrap().value(),
            serde_json::from_value::<crate::storage::release_json::Release>(at("a", 13, 3))
                .unwrap()
                .0,
            "kept as the cache keeps any object"
        );
        // Seen already: ignored, whatever its text.
        sync.apply(changed(&at("a", 12, 9))).unwrap();
        assert_eq!(x_of(&cache, "a"), Some(3));
        assert_eq!(cache.revision(), 14);
    }

    #[tokio::test]
    async fn a_write_is_read_before_its_watch_event_and_confirmed_by_it() {
        let (cache, sync) = driven();
        let (_, mut rx) = cache.subscribe(10).unwrap();
        assert!(take_value(&cache, &at("a", 11, 1), true));
        // Single-object reads see it; the revision, snapshots and watchers do not yet.
        assert_eq!(x_of(&cache, "a"), Some(1));
        assert_eq!(cache.revision(), 10);
        assert!(cache.snapshot().0.is_empty());
        assert!(rx.try_recv().is_err());
        let taken = cache.stored("ns", "a").unwrap();

        // Its watch event: delivered to watchers as usual, with the object taken.
        sync.apply(StoreEvent::Added(Arc::new(at("a", 11, 1))))
            .unwrap();
        let event = rx.try_recv().unwrap();
        assert_eq!((event.event_type, event.revision), (EventType::Added, 11));
        assert!(Arc::ptr_eq(&event.object, &taken));
        assert!(Arc::ptr_eq(&cache.stored("ns", "a").unwrap(), &taken));
        assert!(cache.read().ahead.is_empty());
        assert_eq!(cache.snapshot().0.len(), 1);
    }

    #[tokio::test]
    async fn never_backwards_a_newer_event_or_write_wins() {
        let (cache, sync) = driven();
        // Another client's newer change reached the watch before our answer: ours is old.
        sync.apply(StoreEvent::Added(Arc::new(at("a", 11, 1))))
            .unwrap();
        sync.apply(StoreEvent::Modified(Arc::new(at("a", 12, 2))))
            .unwrap();
        assert!(!take_value(&cache, &at("a", 11, 1), true));
        assert!(!take_value(&cache, &at("a", 12, 2), true));
        assert_eq!(x_of(&cache, "a"), Some(2));

        // Two writes answered out of order: the newer one stays.
        assert!(take_value(&cache, &at("a", 14, 4), true));
        assert!(!take_value(&cache, &at("a", 13, 3), true));
        assert_eq!(x_of(&cache, "a"), Some(4));
        // The watch delivers 13 first: watchers get it, reads keep 14.
        let (_, mut rx) = cache.subscribe(12).unwrap();
        sync.apply(StoreEvent::Modified(Arc::new(at("a", 13, 3))))
            .unwrap();
        assert_eq!(rx.try_recv().unwrap().revision, 13);
        assert_eq!(x_of(&cache, "a"), Some(4));
        // Then 14: confirmed, with the previous state for watchers.
        sync.apply(StoreEvent::Modified(Arc::new(at("a", 14, 4))))
            .unwrap();
        let event = rx.try_recv().unwrap();
        assert_eq!(event.previous.as_ref().unwrap().resource_version(), 13);
        assert_eq!(x_of(&cache, "a"), Some(4));
        assert!(cache.read().ahead.is_empty());

        // Without a resourceVersion there is nothing to order by: ignored.
        let mut bare = at("a", 0, 9);
        bare["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
        assert!(!take_value(&cache, &bare, true));
        assert_eq!(x_of(&cache, "a"), Some(4));
    }

    #[tokio::test]
    async fn a_delete_is_read_as_gone_at_once_and_revisions_confirm_writes() {
        let (cache, sync) = driven();
        sync.apply(StoreEvent::Added(Arc::new(at("a", 11, 1))))
            .unwrap();
        assert!(take_value(&cache, &at("a", 12, 1), false));
        assert_eq!(x_of(&cache, "a"), None);
        assert_eq!(cache.snapshot().0.len(), 1, "lists follow the watch");
        // A re-create answered before the delete's event: it is back.
        assert!(take_value(&cache, &at("a", 13, 3), true));
        assert_eq!(x_of(&cache, "a"), Some(3));
        // The delete's event does not undo the newer re-create; the create's confirms it.
        sync.apply(StoreEvent::Deleted(Arc::new(at("a", 12, 1))))
            .unwrap();
        assert_eq!(x_of(&cache, "a"), Some(3));
        sync.apply(StoreEvent::Added(Arc::new(at("a", 13, 3))))
            .unwrap();
        assert!(cache.read().ahead.is_empty());
        assert_eq!(x_of(&cache, "a"), Some(3));
        // Whatever brings the revision past a taken write drops it (here a bookmark).
        assert!(take_value(&cache, &at("a", 15, 5), true));
        sync.apply(StoreEvent::Bookmark(15)).unwrap();
        assert!(cache.read().ahead.is_empty());
        assert_eq!(x_of(&cache, "a"), Some(3), "the watch's state");
    }

    /// kube-apiserver answers a custom resource deleted outright with a bare
    /// `Status`: no resourceVersion to key the delete by. Taken by the
    /// version the server knew, it holds until the watch's state no longer
    /// has that version, whatever else the watch brings first.
    #[tokio::test]
    async fn a_delete_answered_without_its_revision_is_read_as_gone_until_the_watch_has_it() {
        let (cache, sync) = driven();
        sync.apply(StoreEvent::Added(Arc::new(at("a", 11, 1))))
            .unwrap();
        sync.apply(StoreEvent::Added(Arc::new(at("b", 12, 2))))
            .unwrap();
        assert!(cache.take_delete_of(Key::new("ns", "a"), 11));
        assert_eq!(x_of(&cache, "a"), None);
        assert_eq!(cache.snapshot().0.len(), 2, "lists follow the watch");
        // Other objects' events, and bookmarks, move the revision past 11:
        // the delete's own revision is unknown, so it stays taken.
        sync.apply(StoreEvent::Modified(Arc::new(at("b", 13, 3))))
            .unwrap();
        sync.apply(StoreEvent::Bookmark(14)).unwrap();
        assert_eq!(x_of(&cache, "a"), None);
        // Its event confirms it.
        sync.apply(StoreEvent::Deleted(Arc::new(at("a", 15, 1))))
            .unwrap();
        assert!(cache.read().ahead.is_empty());
        assert_eq!(x_of(&cache, "a"), None);

        // Nothing to take when the watch has the delete, or something newer.
        assert!(!cache.take_delete_of(Key::new("ns", "a"), 11));
        assert!(!cache.take_delete_of(Key::new("ns", "b"), 12));
        assert!(!cache.take_delete_of(Key::new("ns", "b"), 0));
        // A re-create the watch brings before the delete's event replaces
        // the deleted version: the watch's state is read again.
        assert!(cache.take_delete_of(Key::new("ns", "b"), 13));
        sync.apply(StoreEvent::Deleted(Arc::new(at("b", 16, 3))))
            .unwrap();
        sync.apply(StoreEvent::Added(Arc::new(at("b", 17, 7))))
            .unwrap();
        assert_eq!(x_of(&cache, "b"), Some(7));
        // A newer write taken after the delete wins; an older one does not.
        assert!(cache.take_delete_of(Key::new("ns", "b"), 17));
        assert!(!take_value(&cache, &at("b", 17, 9), true));
        assert!(take_value(&cache, &at("b", 18, 8), true));
        assert_eq!(x_of(&cache, "b"), Some(8));
        assert!(!cache.take_delete_of(Key::new("ns", "b"), 17));
    }

    #[tokio::test]
    async fn a_deletes_answer_is_read_once_for_the_cache_and_the_app() {
        let (cache, sync) = driven();
        let kind = postgres();
        // The HelmRelease of the app `name` at `rv`, as upstream stores it.
        let release = |name: &str, rv: u64| {
            let app = json!({
                "apiVersion": kind.resolved.group_version(), "kind": "Postgres",
                "metadata": {"name": name, "namespace": "ns"}, "spec": {"replicas": 2},
            });
            let mut release =
                helm_release::to_helm_release(&kind.resolved, &app, None, None).unwrap();
            release["metadata"]["resourceVersion"] = json!(rv.to_string());
            release
        };
        for name in ["held", "gone"] {
            sync.apply(StoreEvent::Added(Arc::new(release(name, 11))))
                .unwrap();
        }
        // Finalizers hold it: still there, marked, at once.
        let mut held = release("held", 12);
        held["metadata"]["finalizers"] = json!(["example.com/hold"]);
        held["metadata"]["deletionTimestamp"] = json!("2026-12-04T20:00:00Z");
        let answer = Stored::from_delete_answer(&held.to_string(), &kind).unwrap();
        assert!(answer.is_release && answer.held);
        assert_eq!(answer.key, Key::new("ns", "postgres-held"));
        let view = answer.stored.app_view(&kind).expect("made on the way");
        assert_eq!(view.value()["metadata"]["name"], "held");
        assert!(view.value()["metadata"]["deletionTimestamp"].is_string());
        assert!(cache.take_kept_write(answer.key, answer.stored));
        assert!(
            cache.get("ns", "postgres-held").unwrap()["metadata"]["deletionTimestamp"].is_string()
        );
        // Deleted outright: gone at once.
        let answer = Stored::from_delete_answer(&release("gone", 13).to_string(), &kind).unwrap();
        assert!(answer.is_release && !answer.held);
        let rv = answer.stored.resource_version();
        assert!(cache.take_delete(answer.key, rv));
        assert!(cache.get("ns", "postgres-gone").is_none());
        // A Status instead of the release: nothing to take.
        let status = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}"#;
        let answer = Stored::from_delete_answer(status, &kind).unwrap();
        assert!(!answer.is_release && !answer.held);
        assert_eq!(answer.stored.resource_version(), 0);
    }

    #[tokio::test]
    async fn a_single_object_read_is_current_with_a_write_taken_ahead() {
        let (cache, _sync) = driven();
        assert!(take_value(&cache, &at("pg-a", 11, 1), true));
        let one = ReadScope {
            kind: "Postgres".into(),
            namespace: Some("ns".into()),
            release: Some("pg-a".into()),
            labels: None,
        };
        let upstream = |versions: &[u64]| UpstreamState {
            revision: 20,
            versions: Some(
                versions
                    .iter()
                    .map(|rv| (Key::new("ns", "pg-a"), *rv))
                    .collect(),
            ),
        };
        let quick = Duration::from_millis(20);
        assert!(
            cache
                .wait_until_current(&upstream(&[11]), &one, quick)
                .await
        );
        assert!(
            !cache
                .wait_until_current(&upstream(&[15]), &one, quick)
                .await
        );
        assert!(!cache.wait_until_current(&upstream(&[]), &one, quick).await);
        // A list of the namespace follows the watch, which has not seen it yet.
        let all = ReadScope {
            release: None,
            ..one.clone()
        };
        assert!(
            !cache
                .wait_until_current(&upstream(&[11]), &all, quick)
                .await
        );
        // A delete taken ahead is current when upstream has no such object.
        assert!(take_value(&cache, &at("pg-a", 12, 1), false));
        assert!(cache.wait_until_current(&upstream(&[]), &one, quick).await);
    }

    #[test]
    fn old_history_and_snapshots_are_dropped_after_a_burst() {
        let start = Instant::now();
        let mut state = State {
            objects: OrdMap::new(),
            revision: 0,
            history: VecDeque::new(),
            oldest: 0,
            snapshots: VecDeque::new(),
            ahead: HashMap::new(),
        };
        let stored = Arc::new(Stored::new(&hr("a")));
        for revision in 1..=1000u64 {
            let event = CacheEvent {
                event_type: EventType::Modified,
                object: stored.clone(),
                previous: None,
                revision,
                key: Key::new("ns", "a"),
            };
            state.history.push_back((start, Arc::new(event)));
            state.snapshots.push_back((start, revision, OrdMap::new()));
        }
        state.prune(start + Duration::from_secs(1));
        assert_eq!(state.history.len(), 1000, "fresh history is kept");
        assert_eq!(state.snapshots.len(), SNAPSHOTS);
        state.prune(start + FRESH + Duration::from_secs(1));
        assert_eq!(state.history.len(), HISTORY_MIN);
        assert_eq!(state.snapshots.len(), 1);
        assert_eq!(state.snapshots[0].1, 1000, "the newest snapshot stays");
        // Watches may resume only from what is kept.
        assert_eq!(state.oldest, 1000 - HISTORY_MIN as u64);
        assert_eq!(state.history.front().unwrap().1.revision, state.oldest + 1);
    }

    fn listed(name: &str, rv: u64) -> (Key, Arc<Stored>) {
        let mut object = hr(name);
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        (Key::new("ns", name), Arc::new(Stored::new(&object)))
    }

    /// Regression: a re-list's difference used to go out as events all at
    /// the list's revision, of which a client watch sent only the first.
    #[test]
    fn a_relist_emits_its_difference_in_resource_version_order() {
        let (events, mut rx) = broadcast::channel(16);
        let sync = Sync {
            state: Arc::new(RwLock::new(State {
                objects: OrdMap::new(),
                revision: 0,
                history: VecDeque::new(),
                oldest: 0,
                snapshots: VecDeque::new(),
                ahead: HashMap::new(),
            })),
            events,
            revision_tx: Arc::new(watch::channel(0).0),
            ready_tx: Arc::new(watch::channel(false).0),
            upstream_watches: Arc::new(AtomicU64::new(0)),
        };
        sync.replace(
            vec![
                listed("a", 5),
                listed("b", 6),
                listed("c", 7),
                listed("d", 8),
            ],
            10,
        );
        assert!(rx.try_recv().is_err(), "the first list emits nothing");
        // While the cache was away: d changed (rv 14), a new e (12), b and c deleted.
        sync.replace(vec![listed("a", 5), listed("d", 14), listed("e", 12)], 20);
        let got: Vec<(EventType, String, u64, u64)> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| {
                (
                    e.event_type,
                    e.key.name().to_owned(),
                    e.revision,
                    e.object.resource_version(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (EventType::Added, "e".into(), 12, 12),
                (EventType::Modified, "d".into(), 14, 14),
                (EventType::Deleted, "b".into(), 19, 19),
                (EventType::Deleted, "c".into(), 20, 20),
            ]
        );
        // Resuming after e's event repeats nothing and skips nothing.
        let state = sync.state.read().unwrap();
        let after_e: Vec<&str> = state
            .history
            .iter()
            .filter(|(_, e)| e.revision > 12)
            .map(|(_, e)| e.key.name())
            .collect();
        assert_eq!(after_e, ["d", "b", "c"]);
        drop(state);

        // The list's revision is the last object's own (its write was the
        // last change): the deletions take the free revisions below it.
        sync.replace(vec![listed("d", 14), listed("f", 30)], 30);
        let got: Vec<(EventType, String, u64)> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| (e.event_type, e.key.name().to_owned(), e.revision))
            .collect();
        assert_eq!(
            got,
            [
                (EventType::Deleted, "a".into(), 28),
                (EventType::Deleted, "e".into(), 29),
                (EventType::Added, "f".into(), 30),
            ]
        );
    }

    #[test]
    fn deletions_found_by_a_relist_take_free_revisions() {
        let held = HashSet::from([20, 18]);
        assert_eq!(deletion_revisions(3, 11, 20, &held), [16, 17, 19]);
        assert_eq!(deletion_revisions(0, 11, 20, &held), Vec::<u64>::new());
        // More deletions than free revisions (an upstream that skips some).
        assert_eq!(deletion_revisions(3, 19, 20, &held), [19, 20, 20]);
    }

    fn owned(name: &str, kind: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns",
            "labels": {crate::storage::helm_release::KIND_LABEL: kind}}, "spec": {}})
    }

    #[tokio::test]
    async fn is_current_by_revision_or_by_the_scopes_versions() {
        let store = EmbeddedStore::open(std::path::Path::new(":memory:")).unwrap();
        store
            .create(owned("pg-a", "Postgres"), false)
            .await
            .unwrap();
        store
            .create(owned("redis-b", "Redis"), false)
            .await
            .unwrap();
        let cache = WatchCache::start(Backend::Embedded(store.clone()));
        cache.wait_ready().await;
        let scope = ReadScope {
            kind: "Postgres".into(),
            namespace: Some("ns".into()),
            release: None,
            labels: None,
        };
        let quick = Duration::from_millis(50);
        let at = |revision, versions: &[(&str, u64)]| UpstreamState {
            revision,
            versions: Some(
                versions
                    .iter()
                    .map(|(n, rv)| (Key::new("ns", n), *rv))
                    .collect(),
            ),
        };
        // Upstream moved on (other objects changed) but the scope matches.
        assert!(
            cache
                .wait_until_current(&at(90, &[("pg-a", 1)]), &scope, quick)
                .await
        );
        // The scope changed upstream and the cache has not heard: not current.
        assert!(
            !cache
                .wait_until_current(&at(90, &[("pg-a", 7)]), &scope, quick)
                .await
        );
        assert!(!cache.wait_until_current(&at(90, &[]), &scope, quick).await);
        assert!(
            !cache
                .wait_until_current(&at(90, &[("pg-a", 1), ("pg-c", 9)]), &scope, quick)
                .await
        );
        // Objects of other kinds are out of scope.
        let one = ReadScope {
            release: Some("pg-a".into()),
            ..scope.clone()
        };
        assert!(
            cache
                .wait_until_current(&at(90, &[("pg-a", 1)]), &one, quick)
                .await
        );
        // Without versions only the revision counts; the cache waits for it.
        let exact = |revision| UpstreamState {
            revision,
            versions: None,
        };
        assert!(cache.wait_until_current(&exact(2), &scope, quick).await);
        assert!(!cache.wait_until_current(&exact(3), &scope, quick).await);
        let waiter = {
            let cache = cache.clone();
            let scope = scope.clone();
            tokio::spawn(async move {
                cache
                    .wait_until_current(&exact(3), &scope, Duration::from_secs(5))
                    .await
            })
        };
        store
            .create(owned("pg-c", "Postgres"), false)
            .await
            .unwrap();
        assert!(waiter.await.unwrap());
    }
    fn in_ns(ns: &str, name: &str, rv: u64, kind: &str) -> (Key, Arc<Stored>) {
        let object = json!({"metadata": {"name": name, "namespace": ns,
            "resourceVersion": rv.to_string(),
            "labels": {crate::storage::helm_release::KIND_LABEL: kind}}});
        (Key::new(ns, name), Arc::new(Stored::new(&object)))
    }

    fn keys<'a>(it: impl Iterator<Item = (&'a Key, &'a Arc<Stored>)>) -> Vec<String> {
        it.map(|(key, _)| format!("{}/{}", key.namespace(), key.name()))
            .collect()
    }

    /// etcd orders by `<namespace>/<name>`: `a-b/x` before `a/x`, where the
    /// map's `(namespace, name)` order puts `a` first; pages follow etcd.
    #[test]
    fn objects_are_read_in_kube_apiservers_key_order() {
        let objects: Objects = [
            in_ns("a", "x", 1, "Postgres"),
            in_ns("a", "y", 2, "Postgres"),
            in_ns("a-b", "x", 3, "Postgres"),
            in_ns("a0", "x", 4, "Postgres"),
            in_ns("b", "a.b", 5, "Postgres"),
            in_ns("b", "a-b", 6, "Postgres"),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            keys(in_key_order(&objects, None, None)),
            ["a-b/x", "a/x", "a/y", "a0/x", "b/a-b", "b/a.b"]
        );
        let mut etcd: Vec<String> = keys(objects.iter());
        etcd.sort();
        assert_eq!(keys(in_key_order(&objects, None, None)), etcd);
        // Continuing after any key yields exactly the keys after it.
        for (i, after) in etcd.iter().enumerate() {
            let (ns, name) = after.split_once('/').unwrap();
            let key = Key::new(ns, name);
            assert_eq!(
                keys(in_key_order(&objects, None, Some(&key))),
                etcd[i + 1..]
            );
        }
        assert_eq!(
            keys(in_key_order(&objects, Some("a"), None)),
            ["a/x", "a/y"]
        );
        let a_x = Key::new("a", "x");
        assert_eq!(keys(in_key_order(&objects, Some("a"), Some(&a_x))), ["a/y"]);
        // A position in a namespace before (after) the listed one: all (none) of it.
        let a_b = Key::new("a-b", "x");
        assert_eq!(
            keys(in_key_order(&objects, Some("a"), Some(&a_b))),
            ["a/x", "a/y"]
        );
        let a0 = Key::new("a0", "x");
        assert!(keys(in_key_order(&objects, Some("a"), Some(&a0))).is_empty());
        assert_eq!(key_order(&a_b, &a_x), std::cmp::Ordering::Less);
    }

    #[test]
    fn a_range_is_current_when_it_holds_exactly_upstreams_page() {
        use crate::storage::metadata_list::Item;
        let objects: Objects = [
            in_ns("a", "x", 1, "Postgres"),
            in_ns("a", "y", 2, "Redis"),
            in_ns("a", "z", 3, "Postgres"),
            in_ns("a-b", "x", 4, "Postgres"),
        ]
        .into_iter()
        .collect();
        let scope = ReadScope {
            kind: "Postgres".into(),
            namespace: None,
            release: None,
            labels: None,
        };
        let item = |ns: &str, name: &str, rv| Item {
            namespace: ns.into(),
            name: name.into(),
            resource_version: rv,
        };
        // Page 1 of 2: `a-b/x`, `a/x` (Redis is out of scope).
        let page1 = [item("a-b", "x", 4), item("a", "x", 1)];
        assert!(range_is_current(&objects, &scope, None, &page1, false));
        let after = Key::new("a", "x");
        assert!(range_is_current(
            &objects,
            &scope,
            Some(&after),
            &[item("a", "z", 3)],
            true
        ));
        // A newer version, a missing object, an extra object in the range.
        assert!(!range_is_current(
            &objects,
            &scope,
            None,
            &[item("a-b", "x", 5), item("a", "x", 1)],
            false
        ));
        assert!(!range_is_current(
            &objects,
            &scope,
            None,
            &[item("a", "x", 1)],
            false
        ));
        assert!(!range_is_current(
            &objects,
            &scope,
            None,
            &[item("a-b", "x", 4), item("a", "w", 9), item("a", "x", 1)],
            false
        ));
        // The last page also covers what follows its last item.
        assert!(!range_is_current(&objects, &scope, None, &page1, true));
        // In tuple order the range would be `a/x`, `a/z`, `a-b/x`: not upstream's.
        assert!(!range_is_current(
            &objects,
            &scope,
            None,
            &[item("a", "x", 1), item("a", "z", 3)],
            false
        ));
        // An empty last page: current only when nothing of the scope is left.
        let end = Key::new("a", "z");
        assert!(range_is_current(&objects, &scope, Some(&end), &[], true));
        assert!(!range_is_current(&objects, &scope, Some(&after), &[], true));
    }
}
