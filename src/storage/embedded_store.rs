//! The embedded store of `serve --standalone`: HelmRelease objects in one
//! SQLite file (the way k3s's kine keeps Kubernetes objects in SQLite), with
//! what kube-apiserver would do for them — monotonic resourceVersions, uid,
//! creationTimestamp and generation, optimistic concurrency, graceful deletion
//! with finalizers, a whole number written as a float (`3.0`) stored as the
//! integer Go writes for it — and a watch fed by an in-memory event log, kept by
//! count and, past the minimum, for [`super::cache::FRESH`] (so a burst of
//! writes is not held in memory once it is over).

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::time::Instant;

use super::cache::{Key, Stored};
use super::namespace_conditions;
use super::namespace_history::{self, History};
use super::namespace_store::{self, Finish, Phase};
use super::{
    DeleteOptions, EventStream, Listing, StoreError, StoreEvent, fits_in_etcd, internal, now,
    object_key, resource_version,
};
use crate::golang;

/// Events kept in memory for watch resumption.
const EVENT_LOG: usize = 4096;
/// Events kept however old they are.
const EVENT_LOG_MIN: usize = 100;

pub(super) struct Inner {
    pub(super) conn: Connection,
    revision: u64,
    /// Events, with when they were committed.
    log: VecDeque<(Instant, StoreEvent)>,
    /// The oldest revision a watch may resume from.
    compacted: u64,
    tx: broadcast::Sender<StoreEvent>,
}

impl Inner {
    /// Drops events past [`EVENT_LOG`], and those older than
    /// [`super::cache::FRESH`] beyond [`EVENT_LOG_MIN`].
    fn prune(&mut self, now: Instant) {
        let stale = |at: &Instant| now.saturating_duration_since(*at) > super::cache::FRESH;
        while self.log.len() > EVENT_LOG
            || (self.log.len() > EVENT_LOG_MIN && self.log.front().is_some_and(|(at, _)| stale(at)))
        {
            if let Some((_, old)) = self.log.pop_front() {
                self.compacted = old.resource_version();
            }
        }
    }
}

/// Drops old events every few seconds until the store is gone.
async fn prune_while_alive(inner: std::sync::Weak<Mutex<Inner>>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        let mut inner = inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.prune(Instant::now());
    }
}

/// A SQLite-backed HelmRelease store.
#[derive(Clone)]
pub struct EmbeddedStore {
    inner: Arc<Mutex<Inner>>,
    /// Told of every stored change of a namespace (namespace watches wait on it).
    namespace_changes: Arc<tokio::sync::watch::Sender<()>>,
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store at `path`; `:memory:` keeps it in memory.
    ///
    /// A file store is owner-only: its directory is created 0700, the file
    /// 0600, and SQLite gives its `-wal` and `-shm` the file's permissions
    /// (existing ones are narrowed too), as they hold app specs.
    pub fn open(path: &Path) -> Result<EmbeddedStore, StoreError> {
        if path != Path::new(":memory:") {
            secure(path).map_err(|e| internal(format!("secure {}: {e}", path.display())))?;
        }
        let conn = Connection::open(path)
            .map_err(|e| internal(format!("open {}: {e}", path.display())))?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS objects (
               namespace TEXT NOT NULL, name TEXT NOT NULL, revision INTEGER NOT NULL, body TEXT NOT NULL,
               PRIMARY KEY (namespace, name));
             CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);",
        )
        .map_err(internal)?;
        namespace_store::prepare(&conn)?;
        let revision: u64 = conn
            .query_row("SELECT value FROM meta WHERE key = 'revision'", [], |r| {
                r.get::<_, i64>(0)
            })
            .optional()
            .map_err(internal)?
            .map_or(0, |v| v as u64);
        let (tx, _) = broadcast::channel(1024);
        let inner = Arc::new(Mutex::new(Inner {
            conn,
            revision,
            log: VecDeque::new(),
            compacted: revision,
            tx,
        }));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(prune_while_alive(Arc::downgrade(&inner)));
        }
        Ok(EmbeddedStore {
            inner,
            namespace_changes: Arc::new(tokio::sync::watch::channel(()).0),
        })
    }

    /// Moves everything the write-ahead log holds into the store's file and
    /// empties the log (`PRAGMA wal_checkpoint(TRUNCATE)`), so that the file
    /// alone is the whole store: done on a clean stop, where a backup or a
    /// copy of the file is likeliest to follow.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let inner = self.lock();
        let (busy, _, _): (i64, i64, i64) = inner
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .map_err(internal)?;
        if busy != 0 {
            return Err(internal("checkpoint: the store is busy".to_owned()));
        }
        Ok(())
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current revision.
    pub fn revision(&self) -> u64 {
        self.lock().revision
    }

    /// Every object and the current revision.
    pub async fn list(&self) -> Result<Listing, StoreError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || {
            let inner = store.lock();
            let mut stmt = inner
                .conn
                .prepare_cached("SELECT body FROM objects ORDER BY namespace, name")
                .map_err(internal)?;
            let items = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(internal)?
                .map(|body| {
                    body.map_err(internal).and_then(|b| {
                        let value: Value = serde_json::from_str(&b).map_err(internal)?;
                        Ok((Key::of(&value), Arc::new(Stored::new(&value))))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Listing {
                items,
                resource_version: inner.revision,
            })
        })
        .await
        .map_err(internal)?
    }

    /// Events after `from` (410 when they are no longer kept).
    pub fn watch(&self, from: u64) -> Result<EventStream, StoreError> {
        let inner = self.lock();
        if from < inner.compacted {
            return Err(StoreError::Gone(format!(
                "{from} (oldest available {})",
                inner.compacted
            )));
        }
        let backlog: Vec<StoreEvent> = inner
            .log
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e.resource_version() > from)
            .cloned()
            .collect();
        let rx = inner.tx.subscribe();
        drop(inner);
        let last = backlog.last().map_or(from, StoreEvent::resource_version);
        let live = futures::stream::unfold((rx, last), |(mut rx, last)| async move {
            loop {
                match rx.recv().await {
                    Ok(event) if event.resource_version() <= last => continue,
                    Ok(event) => {
                        let rv = event.resource_version();
                        return Some((Ok(event), (rx, rv)));
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        return Some((
                            Err(StoreError::Gone(format!(
                                "watcher fell behind after {last}"
                            ))),
                            (rx, last),
                        ));
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        });
        Ok(futures::stream::iter(backlog.into_iter().map(Ok))
            .chain(live)
            .boxed())
    }

    /// The object `namespace/name`, if there is one.
    pub async fn get(&self, namespace: &str, name: &str) -> Result<Option<Value>, StoreError> {
        let (store, namespace, name) = (self.clone(), namespace.to_owned(), name.to_owned());
        tokio::task::spawn_blocking(move || load(&store.lock().conn, &namespace, &name))
            .await
            .map_err(internal)?
    }

    /// Creates an object.
    pub async fn create(&self, mut object: Value, dry_run: bool) -> Result<Value, StoreError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut inner = store.lock();
            let (namespace, name) = object_key(&object);
            if let Some(existing) = load(&inner.conn, &namespace, &name)? {
                return Err(StoreError::AlreadyExists {
                    being_deleted: super::being_deleted(&existing),
                });
            }
            let revision = inner.revision + 1;
            golang::json::integral_floats_as_integers(&mut object);
            let meta = metadata_mut(&mut object);
            meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
            meta.insert("creationTimestamp".into(), json!(now()));
            meta.insert("generation".into(), json!(1));
            meta.remove("deletionTimestamp");
            // As kube-apiserver: a dry run is never stored, so it has no
            // resourceVersion.
            if dry_run {
                meta.remove("resourceVersion");
                return Ok(object);
            }
            meta.insert("resourceVersion".into(), json!(revision.to_string()));
            commit(
                &mut inner,
                revision,
                &namespace,
                &name,
                Some(&object),
                StoreEvent::Added(Arc::new(object.clone())),
            )?;
            Ok(object)
        })
        .await
        .map_err(internal)?
    }

    /// Replaces an object; a stale resourceVersion is a conflict.
    pub async fn update(&self, mut object: Value, dry_run: bool) -> Result<Value, StoreError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut inner = store.lock();
            let (namespace, name) = object_key(&object);
            let current = load(&inner.conn, &namespace, &name)?.ok_or(StoreError::NotFound)?;
            let given = object.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("");
            if !given.is_empty() && given != resource_version(&current).to_string() {
                return Err(StoreError::Conflict(
                    "the object has been modified; please apply your changes to the latest version and try again"
                        .into(),
                ));
            }
            let revision = inner.revision + 1;
            // As kube-apiserver's semantic equality, `3.0` is not `3`: a new
            // generation, though what is stored is the same `3`.
            let spec_changed = object.get("spec") != current.get("spec");
            golang::json::integral_floats_as_integers(&mut object);
            let generation = current.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(1);
            let meta = metadata_mut(&mut object);
            for key in ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"] {
                match current.pointer(&format!("/metadata/{key}")) {
                    Some(v) => meta.insert(key.into(), v.clone()),
                    None => meta.remove(key),
                };
            }
            meta.insert("generation".into(), json!(if spec_changed { generation + 1 } else { generation }));
            // As kube-apiserver: a dry run answers with the current version,
            // and an update that changes nothing is not written (no new
            // version, no event).
            meta.insert("resourceVersion".into(), json!(resource_version(&current).to_string()));
            let finalizers_left = meta.get("finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
            let terminating = meta.contains_key("deletionTimestamp");
            if dry_run || object == current {
                return Ok(object);
            }
            metadata_mut(&mut object).insert("resourceVersion".into(), json!(revision.to_string()));
            if terminating && !finalizers_left {
                // As kube-apiserver: the update is not written, the object
                // is deleted as stored (its finalizers included: what the
                // watch's DELETED carries), and the answer is the update.
                let mut gone = current;
                metadata_mut(&mut gone).insert("resourceVersion".into(), json!(revision.to_string()));
                commit(&mut inner, revision, &namespace, &name, None, StoreEvent::Deleted(Arc::new(gone)))?;
            } else {
                let event = StoreEvent::Modified(Arc::new(object.clone()));
                commit(&mut inner, revision, &namespace, &name, Some(&object), event)?;
            }
            Ok(object)
        })
        .await
        .map_err(internal)?
    }

    /// Deletes an object, or marks it for deletion while finalizers remain.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Value, StoreError> {
        let (store, namespace, name, options) = (
            self.clone(),
            namespace.to_owned(),
            name.to_owned(),
            options.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let mut inner = store.lock();
            let mut object = load(&inner.conn, &namespace, &name)?.ok_or(StoreError::NotFound)?;
            if let Some(uid) = &options.uid
                && object.pointer("/metadata/uid").and_then(Value::as_str) != Some(uid)
            {
                return Err(StoreError::Conflict(format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    object.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("")
                )));
            }
            if let Some(rv) = &options.resource_version
                && *rv != resource_version(&object).to_string()
            {
                return Err(StoreError::Conflict(format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    resource_version(&object)
                )));
            }
            let revision = inner.revision + 1;
            let meta = metadata_mut(&mut object);
            let finalizers: Vec<Value> = meta.get("finalizers").and_then(Value::as_array).cloned().unwrap_or_default();
            let already_terminating = meta.contains_key("deletionTimestamp");
            // The propagation policy adds no `foregroundDeletion` or `orphan`
            // finalizer: a standalone server has no garbage collector to
            // remove them, so the object would never go. kube-apiserver run
            // without one does the same (`deletionFinalizersForGarbageCollection`
            // in k8s.io/apiserver's generic registry store).
            if finalizers.is_empty() {
                if options.dry_run {
                    return Ok(object);
                }
                metadata_mut(&mut object).insert("resourceVersion".into(), json!(revision.to_string()));
                commit(&mut inner, revision, &namespace, &name, None, StoreEvent::Deleted(Arc::new(object.clone())))?;
                return Ok(object);
            }
            if already_terminating {
                // Nothing changes: report the object as it is.
                return load(&inner.conn, &namespace, &name)?.ok_or(StoreError::NotFound);
            }
            meta.insert("finalizers".into(), Value::Array(finalizers));
            meta.insert("deletionTimestamp".into(), json!(now()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            // As kube-apiserver's BeforeDelete: marking an object for
            // deletion is a change of its generation.
            if let Some(generation) = meta.get("generation").and_then(Value::as_i64)
                && generation > 0
            {
                meta.insert("generation".into(), json!(generation + 1));
            }
            if options.dry_run {
                return Ok(object);
            }
            meta.insert("resourceVersion".into(), json!(revision.to_string()));
            let event = StoreEvent::Modified(Arc::new(object.clone()));
            commit(&mut inner, revision, &namespace, &name, Some(&object), event)?;
            Ok(object)
        })
        .await
        .map_err(internal)?
    }
}

/// Makes the store's directory, file and SQLite side files owner-only.
fn secure(path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        super::private_files::create_dir(parent)?;
    }
    super::private_files::open(path)?;
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        super::private_files::restrict_path(Path::new(&side))?;
    }
    Ok(())
}

fn metadata_mut(object: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !object.get("metadata").is_some_and(Value::is_object) {
        object["metadata"] = json!({});
    }
    object["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

fn load(conn: &Connection, namespace: &str, name: &str) -> Result<Option<Value>, StoreError> {
    let body: Option<String> = conn
        .prepare_cached("SELECT body FROM objects WHERE namespace = ?1 AND name = ?2")
        .and_then(|mut s| {
            s.query_row(params![namespace, name], |r| r.get(0))
                .optional()
        })
        .map_err(internal)?;
    body.map(|b| serde_json::from_str(&b).map_err(internal))
        .transpose()
}

fn commit(
    inner: &mut Inner,
    revision: u64,
    namespace: &str,
    name: &str,
    object: Option<&Value>,
    event: StoreEvent,
) -> Result<(), StoreError> {
    let body = match object {
        Some(object) => {
            let body = serde_json::to_string(object).map_err(internal)?;
            fits_in_etcd(&body)?;
            Some(body)
        }
        None => None,
    };
    let tx = inner.conn.transaction().map_err(internal)?;
    match body {
        Some(body) => {
            tx.execute(
                "INSERT INTO objects (namespace, name, revision, body) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (namespace, name) DO UPDATE SET revision = excluded.revision, body = excluded.body",
                params![namespace, name, revision as i64, body],
            )
            .map_err(internal)?;
        }
        None => {
            tx.execute(
                "DELETE FROM objects WHERE namespace = ?1 AND name = ?2",
                params![namespace, name],
            )
            .map_err(internal)?;
        }
    }
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('revision', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![revision as i64],
    )
    .map_err(internal)?;
    tx.commit().map_err(internal)?;
    inner.revision = revision;
    let now = Instant::now();
    inner.log.push_back((now, event.clone()));
    inner.prune(now);
    let _ = inner.tx.send(event);
    Ok(())
}

impl EmbeddedStore {
    /// One namespace.
    pub fn namespace(&self, name: &str) -> Result<Option<Value>, StoreError> {
        namespace_store::get(&self.lock().conn, name)
    }

    /// The phase of a namespace, `None` when it does not exist.
    pub fn namespace_phase(&self, name: &str) -> Result<Option<Phase>, StoreError> {
        Ok(self.namespace(name)?.as_ref().map(namespace_store::phase))
    }

    /// Every namespace, by name.
    pub fn namespaces(&self) -> Result<Vec<Value>, StoreError> {
        namespace_store::list(&self.lock().conn)
    }

    /// Every namespace and the resourceVersion of the namespaces' latest
    /// change (a removal included), read together.
    pub fn namespaces_at(&self) -> Result<(Vec<Value>, u64), StoreError> {
        let inner = self.lock();
        Ok((
            namespace_store::list(&inner.conn)?,
            namespace_store::revision(&inner.conn)?,
        ))
    }

    /// Every namespace as it was at resourceVersion `revision` (not later
    /// than the namespaces' latest change), by name: today's, with the kept
    /// history's changes after it undone; `None` when the history does not
    /// reach back that far.
    pub fn namespaces_as_of(&self, revision: u64) -> Result<Option<Vec<Value>>, StoreError> {
        let inner = self.lock();
        let now = namespace_store::list(&inner.conn)?;
        let current = namespace_store::revision(&inner.conn)?;
        let events = match namespace_history::since(&inner.conn, revision, current)? {
            History::Events(events, _) => events,
            History::Expired(_) => return Ok(None),
        };
        drop(inner);
        let name_of = |ns: &Value| {
            ns["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        let mut by_name: std::collections::BTreeMap<String, Value> =
            now.into_iter().map(|ns| (name_of(&ns), ns)).collect();
        for event in events.into_iter().rev() {
            let name = name_of(&event.object);
            match (event.kind, event.previous) {
                (namespace_history::EventKind::Added, _) => {
                    by_name.remove(&name);
                }
                (_, Some(previous)) => {
                    by_name.insert(name, previous);
                }
                (_, None) => {}
            }
        }
        Ok(Some(by_name.into_values().collect()))
    }

    /// The resourceVersion of the namespaces' latest change.
    pub fn namespace_revision(&self) -> Result<u64, StoreError> {
        namespace_store::revision(&self.lock().conn)
    }

    /// The namespace events after resourceVersion `after` and the
    /// resourceVersion they lead to, read together; or the oldest a watch
    /// may resume from, when `after` is older.
    pub fn namespace_events_since(&self, after: u64) -> Result<History, StoreError> {
        let inner = self.lock();
        let current = namespace_store::revision(&inner.conn)?;
        namespace_history::since(&inner.conn, after, current)
    }

    /// A receiver told of every stored change of a namespace (created,
    /// updated, marked Terminating, removed) from now on.
    pub fn namespace_changes(&self) -> tokio::sync::watch::Receiver<()> {
        self.namespace_changes.subscribe()
    }

    /// Tells [`EmbeddedStore::namespace_changes`]' receivers when `stored`
    /// (the result of a namespace write) changed something.
    fn told<T>(&self, stored: Result<T, StoreError>, changed: bool) -> Result<T, StoreError> {
        if stored.is_ok() && changed {
            self.namespace_changes.send_replace(());
        }
        stored
    }

    /// Creates `namespace`, made by [`namespace_store::new_namespace`]
    /// (409 when one of its name exists).
    pub fn create_namespace(&self, namespace: Value, dry_run: bool) -> Result<Value, StoreError> {
        let created = namespace_store::create(&self.lock().conn, namespace, dry_run);
        self.told(created, !dry_run)
    }

    /// Replaces the client's metadata (labels, annotations, finalizers,
    /// ownerReferences, managedFields) of namespace `name` with
    /// `metadata`'s, and for a `/finalize` its `spec.finalizers`, for a
    /// `/status` its `status` ([`namespace_store::Subresource`]); a conflict
    /// when `resource_version` is not the stored one. A Terminating namespace
    /// left with no finalizer and no objects is removed.
    pub fn update_namespace(
        &self,
        name: &str,
        metadata: &serde_json::Map<String, Value>,
        subresource: namespace_store::Subresource<'_>,
        resource_version: Option<&str>,
        dry_run: bool,
    ) -> Result<Value, StoreError> {
        let updated = namespace_store::update(
            &self.lock().conn,
            name,
            metadata,
            subresource,
            resource_version,
            dry_run,
        );
        self.told(updated, !dry_run)
    }

    /// Marks namespace `name` Terminating (once) and returns it.
    pub fn terminate_namespace(&self, name: &str) -> Result<Value, StoreError> {
        let terminating = namespace_store::terminate(&self.lock().conn, name);
        self.told(terminating, true)
    }

    /// Once Terminating namespace `name` holds no objects, takes
    /// [`namespace_store::CONTENT_FINALIZER`] off it, and removes it if no
    /// other finalizer holds it.
    pub fn finish_namespace(&self, name: &str) -> Result<Finish, StoreError> {
        let finished = namespace_store::finish(&self.lock().conn, name);
        // Told even when nothing changed: a spare wake-up costs a watch a
        // read of the history.
        let changed = finished.as_ref().is_ok_and(|f| *f != Finish::ContentLeft);
        self.told(finished, changed)
    }

    /// The names of the objects in namespace `name`.
    pub fn object_names_in(&self, name: &str) -> Result<Vec<String>, StoreError> {
        namespace_store::object_names_in(&self.lock().conn, name)
    }

    /// The objects (stored releases) in namespace `name`.
    pub fn objects_of(&self, name: &str) -> Result<Vec<Value>, StoreError> {
        namespace_store::objects_of(&self.lock().conn, name)
    }

    /// Records what is left in Terminating namespace `name` as its deletion
    /// conditions, as the namespace controller does after each pass.
    pub fn report_namespace_content(
        &self,
        name: &str,
        remaining: &namespace_conditions::Remaining,
    ) -> Result<(), StoreError> {
        let reported = namespace_store::report_content(&self.lock().conn, name, remaining);
        let changed = reported.as_ref().is_ok_and(|c| *c);
        self.told(reported, changed).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::storage::namespace_store::Subresource;

    fn hr(name: &str) -> Value {
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
               "metadata": {"name": name, "namespace": "ns"}, "spec": {"values": {"a": 1}}})
    }

    /// `3.0` is stored as `3`, as kube-apiserver stores it; written over a
    /// `3` it is still a change of the spec (a new generation and version),
    /// as kube-apiserver's semantic equality has it.
    #[tokio::test]
    async fn whole_floats_are_stored_as_integers() {
        let store = EmbeddedStore::open(Path::new(":memory:")).unwrap();
        let mut float = hr("f");
        float["spec"]["values"] = serde_json::from_str(r#"{"a": 3.0, "b": [2.0, 2.5]}"#).unwrap();
        let created = store.create(float.clone(), false).await.unwrap();
        assert_eq!(
            created["spec"]["values"].to_string(),
            r#"{"a":3,"b":[2,2.5]}"#
        );
        assert_eq!(store.get("ns", "f").await.unwrap().unwrap(), created);
        let updated = store.update(float, false).await.unwrap();
        assert_eq!(
            updated["spec"]["values"].to_string(),
            r#"{"a":3,"b":[2,2.5]}"#
        );
        assert_eq!(updated["metadata"]["generation"], 2);
        assert_ne!(
            updated["metadata"]["resourceVersion"],
            created["metadata"]["resourceVersion"]
        );
    }

    /// kube-apiserver stores no object etcd refuses (over 1.5 MiB): neither
    /// does this store, with kube-apiserver's 500, and it keeps what it had.
    #[tokio::test]
    async fn objects_etcd_would_refuse_are_not_stored() {
        let store = EmbeddedStore::open(Path::new(":memory:")).unwrap();
        let too_large = |e: StoreError| {
            matches!(e, StoreError::Upstream { code: 500, ref message, .. }
                if message == "etcdserver: request is too large")
        };
        let mut big = hr("big");
        big["spec"]["values"]["pad"] = json!("x".repeat(super::super::MAX_STORED_BYTES));
        assert!(too_large(
            store.create(big.clone(), false).await.unwrap_err()
        ));
        assert_eq!(
            (store.revision(), store.get("ns", "big").await.unwrap()),
            (0, None)
        );
        // A dry run stores nothing, so etcd never sees it (as kube-apiserver).
        assert!(store.create(big.clone(), true).await.is_ok());

        let created = store.create(hr("big"), false).await.unwrap();
        big["metadata"] = created["metadata"].clone();
        assert!(too_large(store.update(big, false).await.unwrap_err()));
        assert_eq!(store.get("ns", "big").await.unwrap(), Some(created));

        let mut meta = serde_json::Map::new();
        meta.insert(
            "annotations".into(),
            json!({"note": "x".repeat(super::super::MAX_STORED_BYTES)}),
        );
        let namespace = namespace_store::new_namespace("team-a", &meta, &[]);
        assert!(too_large(
            store.create_namespace(namespace, false).unwrap_err()
        ));
        assert_eq!(store.namespace("team-a").unwrap(), None);
    }

    #[tokio::test]
    async fn crud_with_kubernetes_semantics() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(&dir.path().join("db.sqlite")).unwrap();
        let created = store.create(hr("a"), false).await.unwrap();
        assert_eq!(created["metadata"]["resourceVersion"], "1");
        assert_eq!(created["metadata"]["generation"], 1);
        assert!(matches!(
            store.create(hr("a"), false).await,
            Err(StoreError::AlreadyExists {
                being_deleted: false
            })
        ));
        // A dry run is not stored: no resourceVersion (as kube-apiserver),
        // but the rest of what a create sets.
        let dry = store.create(hr("dry"), true).await.unwrap();
        assert!(dry["metadata"].get("resourceVersion").is_none(), "{dry}");
        assert!(dry["metadata"]["uid"].is_string());
        assert_eq!(dry["metadata"]["generation"], 1);
        assert_eq!(store.list().await.unwrap().items.len(), 1);

        let mut stale = created.clone();
        stale["spec"]["values"]["a"] = json!(2);
        let updated = store.update(stale.clone(), false).await.unwrap();
        assert_eq!(updated["metadata"]["generation"], 2);
        assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
        assert!(matches!(
            store.update(stale, false).await,
            Err(StoreError::Conflict(_))
        ));

        // Finalizers make deletion graceful; removing them completes it.
        let mut with_finalizer = updated.clone();
        with_finalizer["metadata"]["finalizers"] = json!(["example.com/block"]);
        let with_finalizer = store.update(with_finalizer, false).await.unwrap();
        let marked = store
            .delete("ns", "a", &DeleteOptions::default())
            .await
            .unwrap();
        assert!(marked["metadata"]["deletionTimestamp"].is_string());
        // As kube-apiserver: marking it for deletion bumps the generation,
        // once (a second delete changes nothing).
        assert_eq!(with_finalizer["metadata"]["generation"], 2);
        assert_eq!(marked["metadata"]["generation"], 3);
        let again = store
            .delete("ns", "a", &DeleteOptions::default())
            .await
            .unwrap();
        assert_eq!(again, marked);
        let mut release = marked.clone();
        release["metadata"]["finalizers"] = json!([]);
        let mut watch = store
            .watch(store.list().await.unwrap().resource_version)
            .unwrap();
        let answer = store.update(release, false).await.unwrap();
        assert!(store.list().await.unwrap().items.is_empty());
        // The answer is the update; the watch's DELETED is the object as it
        // was stored, finalizers and all, at the deletion's version.
        assert_eq!(answer["metadata"]["finalizers"], json!([]), "{answer}");
        let StoreEvent::Deleted(gone) = watch.next().await.unwrap().unwrap() else {
            panic!("not a DELETED event");
        };
        assert_eq!(
            gone["metadata"]["finalizers"],
            json!(["example.com/block"]),
            "{gone}"
        );
        assert_eq!(
            gone["metadata"]["resourceVersion"],
            answer["metadata"]["resourceVersion"]
        );
        let _ = with_finalizer;

        // No garbage collector: a foreground or orphan delete is a delete
        // (kubectl delete --cascade=foreground would wait for ever).
        for policy in ["Foreground", "Orphan", "Background"] {
            store.create(hr("c"), false).await.unwrap();
            let options = DeleteOptions {
                propagation_policy: Some(policy.to_owned()),
                ..Default::default()
            };
            let gone = store.delete("ns", "c", &options).await.unwrap();
            assert!(gone["metadata"]["finalizers"].is_null(), "{policy}: {gone}");
            assert!(store.list().await.unwrap().items.is_empty(), "{policy}");
        }

        // Revisions survive a reopen.
        drop(store);
        let store = EmbeddedStore::open(&dir.path().join("db.sqlite")).unwrap();
        assert_eq!(store.list().await.unwrap().resource_version, 11);
    }

    #[tokio::test]
    async fn after_a_checkpoint_the_file_alone_is_the_whole_store() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("db.sqlite");
        let store = EmbeddedStore::open(&file).unwrap();
        store.create(hr("a"), false).await.unwrap();
        store.checkpoint().unwrap();
        assert_eq!(
            std::fs::metadata(dir.path().join("db.sqlite-wal"))
                .map(|m| m.len())
                .unwrap_or(0),
            0
        );
        // A copy of the file alone, as a backup takes it.
        let copy = dir.path().join("copy.sqlite");
        std::fs::copy(&file, &copy).unwrap();
        let copied = EmbeddedStore::open(&copy).unwrap();
        assert_eq!(copied.list().await.unwrap().items.len(), 1);
        assert_eq!(copied.revision(), 1);
    }

    #[tokio::test]
    async fn dry_runs_and_updates_that_change_nothing_keep_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(&dir.path().join("db.sqlite")).unwrap();
        let created = store.create(hr("a"), false).await.unwrap();
        let rv = |o: &Value| o["metadata"]["resourceVersion"].clone();
        let dry_run = DeleteOptions {
            dry_run: true,
            ..Default::default()
        };

        let same = store.update(created.clone(), false).await.unwrap();
        assert_eq!(same, created);
        let mut unconditional = created.clone();
        unconditional["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
        assert_eq!(store.update(unconditional, false).await.unwrap(), created);

        let mut changed = created.clone();
        changed["spec"]["values"]["a"] = json!(2);
        let dry = store.update(changed.clone(), true).await.unwrap();
        assert_eq!(rv(&dry), rv(&created));
        assert_eq!(dry["spec"]["values"]["a"], 2);
        let dry = store.delete("ns", "a", &dry_run).await.unwrap();
        assert_eq!(rv(&dry), rv(&created));
        let mut finalized = created.clone();
        finalized["metadata"]["finalizers"] = json!(["example.com/block"]);
        let finalized = store.update(finalized, false).await.unwrap();
        assert_eq!(rv(&finalized), "2");
        let dry = store.delete("ns", "a", &dry_run).await.unwrap();
        assert_eq!(rv(&dry), "2");
        assert!(dry["metadata"]["deletionTimestamp"].is_string());

        // Only the create and the finalizer were written.
        assert_eq!(store.revision(), 2);
        let stored = load(&store.lock().conn, "ns", "a").unwrap().unwrap();
        assert_eq!(rv(&stored), "2");
        assert!(stored["metadata"]["deletionTimestamp"].is_null());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn store_directory_and_files_are_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        let file = dir.join("db.sqlite");
        let store = EmbeddedStore::open(&file).unwrap();
        store.create(hr("secret"), false).await.unwrap();
        assert_eq!(mode(&dir), 0o700);
        for suffix in ["", "-wal", "-shm"] {
            let path = PathBuf::from(format!("{}{suffix}", file.display()));
            assert!(path.exists(), "{} missing", path.display());
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
        // A store left world-readable by an older version is narrowed.
        drop(store);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        EmbeddedStore::open(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
    }

    #[tokio::test]
    async fn watch_resumes_from_a_revision() {
        let store = EmbeddedStore::open(Path::new(":memory:")).unwrap();
        store.create(hr("a"), false).await.unwrap();
        let mut watch = store.watch(0).unwrap();
        store.create(hr("b"), false).await.unwrap();
        let first = watch.next().await.unwrap().unwrap();
        let second = watch.next().await.unwrap().unwrap();
        assert_eq!(
            (first.resource_version(), second.resource_version()),
            (1, 2)
        );
        let precondition = DeleteOptions {
            uid: Some("nope".into()),
            ..Default::default()
        };
        assert!(matches!(
            store.delete("ns", "a", &precondition).await,
            Err(StoreError::Conflict(_))
        ));
        store
            .delete("ns", "a", &DeleteOptions::default())
            .await
            .unwrap();
        assert!(matches!(
            watch.next().await.unwrap().unwrap(),
            StoreEvent::Deleted(_)
        ));
    }

    #[tokio::test]
    async fn namespace_watches_are_told_of_stored_namespace_changes_only() {
        let store = EmbeddedStore::open(Path::new(":memory:")).unwrap();
        let mut changes = store.namespace_changes();
        let new = || namespace_store::new_namespace("team-a", &Default::default(), &[]);
        store.create_namespace(new(), true).unwrap();
        assert!(!changes.has_changed().unwrap(), "a dry run stores nothing");
        assert!(store.create_namespace(new(), false).is_ok());
        assert!(changes.has_changed().unwrap());
        changes.mark_unchanged();
        assert!(store.create_namespace(new(), false).is_err());
        assert!(!changes.has_changed().unwrap(), "a refused write");
        store.terminate_namespace("team-a").unwrap();
        assert!(changes.has_changed().unwrap());
        changes.mark_unchanged();
        assert_eq!(store.finish_namespace("team-a").unwrap(), Finish::Gone);
        assert!(changes.has_changed().unwrap());
    }

    #[tokio::test]
    async fn default_exists_and_deletion_waits_for_the_objects() {
        let store = EmbeddedStore::open(Path::new(":memory:")).unwrap();
        assert_eq!(
            store.namespace_phase("default").unwrap(),
            Some(Phase::Active)
        );
        assert_eq!(store.namespace_phase("team-a").unwrap(), None);
        let meta =
            json!({"labels": {"team": "a"}, "annotations": {"owner": "ops"}, "finalizers": []});
        let created = store
            .create_namespace(
                namespace_store::new_namespace("team-a", meta.as_object().unwrap(), &[]),
                false,
            )
            .unwrap();
        assert_eq!(
            created["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "team-a"
        );
        assert_eq!(created["metadata"]["labels"]["team"], "a");
        assert_eq!(created["metadata"]["annotations"]["owner"], "ops");
        assert!(created["metadata"].get("finalizers").is_none());
        assert!(matches!(
            store.create_namespace(
                namespace_store::new_namespace("team-a", &Default::default(), &[]),
                false
            ),
            Err(StoreError::AlreadyExists {
                being_deleted: false
            })
        ));
        // Updates change the client's metadata only; a no-op keeps the
        // resourceVersion, a stale one is a conflict.
        let rv = created["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned();
        let same = store
            .update_namespace(
                "team-a",
                meta.as_object().unwrap(),
                Subresource::None,
                Some(&rv),
                false,
            )
            .unwrap();
        assert_eq!(same, created);
        let changed = json!({"labels": {"team": "b"}, "uid": "ignored"});
        let updated = store
            .update_namespace(
                "team-a",
                changed.as_object().unwrap(),
                Subresource::None,
                Some(&rv),
                false,
            )
            .unwrap();
        assert_eq!(updated["metadata"]["labels"]["team"], "b");
        assert!(updated["metadata"].get("annotations").is_none());
        assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
        assert_ne!(updated["metadata"]["resourceVersion"], rv.as_str());
        assert!(matches!(
            store.update_namespace(
                "team-a",
                changed.as_object().unwrap(),
                Subresource::None,
                Some(&rv),
                false
            ),
            Err(StoreError::Conflict(_))
        ));
        store
            .create(
                json!({"metadata": {"name": "x", "namespace": "team-a"}, "spec": {}}),
                false,
            )
            .await
            .unwrap();
        let terminating = store.terminate_namespace("team-a").unwrap();
        assert_eq!(terminating["status"]["phase"], "Terminating");
        assert_eq!(
            store.namespace_phase("team-a").unwrap(),
            Some(Phase::Terminating)
        );
        assert_eq!(
            store.finish_namespace("team-a").unwrap(),
            Finish::ContentLeft,
            "an object is left"
        );
        assert_eq!(store.object_names_in("team-a").unwrap(), ["x"]);
        store
            .delete("team-a", "x", &Default::default())
            .await
            .unwrap();
        // A finalizer of the namespace's own holds it too: the content's
        // finalizer goes, and the update that removes the last one removes it.
        let held = json!({"finalizers": ["example.com/hold"]});
        store
            .update_namespace(
                "team-a",
                held.as_object().unwrap(),
                Subresource::None,
                None,
                false,
            )
            .unwrap();
        assert_eq!(store.finish_namespace("team-a").unwrap(), Finish::Held);
        let finalized = store.namespace("team-a").unwrap().unwrap();
        assert_eq!(finalized["spec"], json!({}));
        let removed = store
            .update_namespace(
                "team-a",
                &Default::default(),
                Subresource::None,
                None,
                false,
            )
            .unwrap();
        assert_eq!(removed["metadata"]["name"], "team-a");
        assert_eq!(store.namespace_phase("team-a").unwrap(), None);
        // A client's spec.finalizers are kept, `kubernetes` added; only a
        // /finalize changes them, and clearing them removes the namespace.
        let created = store
            .create_namespace(
                namespace_store::new_namespace(
                    "team-b",
                    &Default::default(),
                    &["example.com/x".into()],
                ),
                false,
            )
            .unwrap();
        assert_eq!(
            created["spec"]["finalizers"],
            json!(["example.com/x", "kubernetes"])
        );
        store.terminate_namespace("team-b").unwrap();
        assert_eq!(store.finish_namespace("team-b").unwrap(), Finish::Held);
        let held = store.namespace("team-b").unwrap().unwrap();
        assert_eq!(held["spec"]["finalizers"], json!(["example.com/x"]));
        let relabelled = json!({"labels": {"a": "b"}});
        store
            .update_namespace(
                "team-b",
                relabelled.as_object().unwrap(),
                Subresource::None,
                None,
                false,
            )
            .unwrap();
        assert_eq!(
            store.namespace_phase("team-b").unwrap(),
            Some(Phase::Terminating)
        );
        store
            .update_namespace(
                "team-b",
                &Default::default(),
                Subresource::Finalize(&[]),
                None,
                false,
            )
            .unwrap();
        assert_eq!(store.namespace_phase("team-b").unwrap(), None);
        let names: Vec<Value> = store
            .namespaces()
            .unwrap()
            .iter()
            .map(|n| n["metadata"]["name"].clone())
            .collect();
        assert_eq!(names, [json!("default")]);
    }

    #[tokio::test]
    async fn namespaces_of_existing_objects_are_adopted_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let store = EmbeddedStore::open(&path).unwrap();
        store
            .create(
                json!({"metadata": {"name": "x", "namespace": "old"}, "spec": {}}),
                false,
            )
            .await
            .unwrap();
        store
            .lock()
            .conn
            .execute("DELETE FROM namespaces", [])
            .unwrap();
        drop(store);
        let store = EmbeddedStore::open(&path).unwrap();
        assert_eq!(store.namespace_phase("old").unwrap(), Some(Phase::Active));
        assert_eq!(
            store.namespace_phase("default").unwrap(),
            Some(Phase::Active)
        );
    }
}
