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
//!   their own (`cache_thread`), apart from the request workers. Upstream
//!   reconnects resume from the last seen revision; after a 410 the cache
//!   re-lists and emits the difference as events, so no client event is
//!   lost or duplicated (`sync`).
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
//!
//! Its parts, one job each: this module holds the cache's state and serves
//! reads and watches from it; `stored` is a HelmRelease as the cache keeps
//! it ([`Stored`]), with its app view; `sync` is the upstream list and
//! watch that feed the state; `consistency` tells whether a snapshot
//! reflects upstream, and reads it in kube-apiserver's key order.

pub(super) mod consistency;
mod stored;
mod sync;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use imbl::OrdMap;
use serde_json::Value;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use super::{Backend, ReadScope, UpstreamState};

use consistency::snapshot_is_current;
use sync::Sync;

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
pub use stored::{DeleteAnswer, Stored};
/// The stored objects at one revision.
pub type Objects = OrdMap<Key, Arc<Stored>>;

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

/// The cache's state: what the upstream list and watch (`sync`) write, and
/// what reads and watches are served from.
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

/// The objects of a [`WatchCache`] while it lives ([`WatchCache::weak_objects`]).
#[derive(Clone)]
pub struct WeakObjects(std::sync::Weak<RwLock<State>>);

impl WeakObjects {
    /// The objects now, or `None` once the cache is gone.
    pub fn objects(&self) -> Option<Objects> {
        let state = self.0.upgrade()?;
        let state = state.read().unwrap_or_else(|p| p.into_inner());
        Some(state.objects.clone())
    }
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

    /// A reader of the objects that does not keep the cache alive: what
    /// outlives it (the kinds registry's change check) holds this, so that
    /// dropping the last [`WatchCache`] still stops its upstream watch.
    pub fn weak_objects(&self) -> WeakObjects {
        WeakObjects(Arc::downgrade(&self.state))
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

impl Drop for WatchCache {
    fn drop(&mut self) {
        if Arc::strong_count(&self.task) == 1 {
            self.task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::registry::ServedKind;
    use crate::storage::embedded_store::EmbeddedStore;
    use crate::storage::helm_release;
    use crate::storage::{StoreEvent, resource_version};
    use serde_json::json;

    /// A Postgres kind that accepts any spec, served (each call under a
    /// stamp of its own).
    pub(super) fn postgres() -> ServedKind {
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

    pub(super) fn hr(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {}})
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
    pub(super) fn driven() -> (WatchCache, Sync) {
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

    pub(super) fn at(name: &str, rv: u64, x: i64) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv.to_string(),
            "labels": {crate::storage::helm_release::KIND_LABEL: "Postgres"}}, "spec": {"values": {"x": x}}})
    }

    /// Takes the write answered with `written` (gone unless `exists`).
    pub(super) fn take_value(cache: &WatchCache, written: &Value, exists: bool) -> bool {
        if exists {
            cache.take_kept_write(Key::of(written), Arc::new(Stored::new(written)))
        } else {
            cache.take_delete(Key::of(written), resource_version(written))
        }
    }

    pub(super) fn x_of(cache: &WatchCache, name: &str) -> Option<i64> {
        cache
            .get("ns", name)
            .map(|o| o["spec"]["values"]["x"].as_i64().unwrap())
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
}
