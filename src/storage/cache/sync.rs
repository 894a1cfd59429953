//! The upstream list and watch that feed the watch cache ([`Sync`]), on the
//! caches' own thread (`cache_thread`), apart from the request workers.
//!
//! - Upstream reconnects resume from the last seen revision; when upstream
//!   says 410, the cache re-lists and emits the difference as events (in
//!   resourceVersion order, see [`Sync::replace`]), so no client event is
//!   lost or duplicated; several changes of one object while the cache was
//!   not watching reach clients as one.
//! - The watch event of a version that a write through the server handed
//!   the cache already keeps the object taken, app view included, and its
//!   text is never parsed ([`Sync::apply`]).
//! - Every change goes into the cache's history and snapshots and out to the
//!   client watches under the cache's write lock, so that subscribers see
//!   history and live events without a gap.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt;
use imbl::OrdMap;
use serde_json::Value;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use crate::storage::{Backend, StoreError, StoreEvent};

use super::{CacheEvent, EventType, Key, Objects, State, Stored};

/// What feeds a [`WatchCache`](super::WatchCache): the state the upstream
/// list and watch write, and the channels told of every change.
pub(super) struct Sync {
    pub(super) state: Arc<RwLock<State>>,
    pub(super) events: broadcast::Sender<Arc<CacheEvent>>,
    pub(super) revision_tx: Arc<watch::Sender<u64>>,
    pub(super) ready_tx: Arc<watch::Sender<bool>>,
    pub(super) upstream_watches: Arc<AtomicU64>,
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

impl Sync {
    pub(super) async fn run(self, backend: Backend) {
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
    pub(super) fn apply(&self, event: StoreEvent) -> Result<(), StoreError> {
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
    pub(super) fn replace(&self, items: Vec<(Key, Arc<Stored>)>, revision: u64) {
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
    use std::collections::{HashMap, VecDeque};

    use super::super::tests::{at, driven, hr, take_value, x_of};
    use super::*;
    use serde_json::json;

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
}
