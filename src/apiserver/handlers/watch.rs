//! Watch streams over the shared cache: newline-delimited JSON events,
//! flushed as they happen. resourceVersion unset or `0` starts with a
//! synthetic ADDED per existing object; `X` resumes after X (when X is older
//! than the kept history, the stream's one event is an `ERROR` with the 410
//! Expired, as kube-apiserver's watch cache answers); `sendInitialEvents=true` ends the
//! initial state with a bookmark annotated `k8s.io/initial-events-end`;
//! bookmarks, `timeoutSeconds`, selectors (objects leaving a selector are
//! sent as DELETED), and JSON / Table / PartialObjectMetadata events.
//!
//! A watcher that stops reading is cut off as kube-apiserver cuts off an
//! unresponsive watcher: once its buffer ([`BUFFERED_BYTES`] of encoded
//! events, after what the connection itself holds) is full and stays full
//! for [`UNRESPONSIVE_AFTER`], its stream ends (no error event; the client
//! watches again from its last resourceVersion), so a reader that never
//! drains holds a bounded amount of memory for a bounded time.
//!
//! A watch ends as kube-apiserver ends a custom resource's watches when its
//! CRD changes or is deleted (it tears the resource's storage down, which
//! closes them; no error event): once the kinds are reloaded and no longer
//! serve the watched kind as it was ([`ServedKind::stamp`]), the stream
//! ends and the client watches again — the new definition's apps, or a
//! 404 for a kind no longer served.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt as _;
use futures::channel::{mpsc, oneshot};
use http::Response;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, broadcast};

use crate::kinds::registry::{ServedKind, Snapshot};
use crate::woken::Woken;

use super::Call;
use crate::apimachinery::query::flag;
use crate::apimachinery::status::ApiError;
use crate::apiserver::negotiate::{self, Representation};
use crate::apiserver::response::{self, Body};
use crate::apiserver::table;
use crate::storage::app_filter::{AppFilter, WatchEventType};
use crate::storage::cache::CacheEvent;
use crate::storage::helm_release::AppView;

/// How often an idle watch with bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(30);
/// Bytes of encoded events a watch holds for a client that is slow to
/// read (one larger event takes the whole budget).
pub(crate) const BUFFERED_BYTES: usize = 256 * 1024;
/// How long a watch waits for a client whose buffer is full before ending
/// its stream.
pub(crate) const UNRESPONSIVE_AFTER: Duration = Duration::from_secs(1);

/// Starts a watch.
pub(super) async fn watch(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let repr = negotiate::negotiate_watch(
        call.accept(),
        call.query.get("includeObject").map(String::as_str),
    )?;
    let filter = super::read::filter(call)?;
    let timeout_seconds = super::read::int_param(call, "timeoutSeconds")?;
    super::read::int_param(call, "limit")?;
    let send_initial = flag(call.query, "sendInitialEvents");
    super::read::validate_list_options(call, true)?;
    // A version that is no number: the 500 kube-apiserver's storage gives.
    super::read::check_resource_version(call)?;
    let bookmarks = flag(call.query, "allowWatchBookmarks");
    let rv = call
        .query
        .get("resourceVersion")
        .cloned()
        .unwrap_or_default();
    if send_initial {
        if !bookmarks {
            return Err(ApiError::invalid_query(
                "allowWatchBookmarks",
                "allowWatchBookmarks must be true when sendInitialEvents is set",
            ));
        }
        if call.query.get("resourceVersionMatch").map(String::as_str) != Some("NotOlderThan") {
            return Err(ApiError::invalid_query(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
    }
    let timeout = match timeout_seconds.and_then(|t| u64::try_from(t).ok()) {
        Some(t) if t > 0 => Duration::from_secs(t),
        _ => Duration::from_secs(1800 + u64::from(std::process::id() % 1800)),
    };
    let apps = call.apps();

    let (initial, from) = if rv.is_empty() || rv == "0" || send_initial {
        if rv.is_empty() {
            apps.ensure_selection_current(&filter).await?;
        }
        if !rv.is_empty() && rv != "0" {
            let wanted = crate::golang::parse_uint(&rv).map_err(ApiError::internal)?;
            // As kube-apiserver's watch cache: the watch starts (200) and,
            // when the cache does not reach it in time, its one event is
            // the 504.
            if let Err(too_large) = apps.wait_for_revision(wanted).await {
                return Ok(ended_with(repr, &too_large));
            }
        }
        let snapshot = apps.snapshot();
        let initial: Vec<Arc<AppView>> = snapshot.apps(&filter, None).map(|(_, app)| app).collect();
        (initial, snapshot.revision())
    } else {
        let wanted = crate::golang::parse_uint(&rv).map_err(ApiError::internal)?;
        (Vec::new(), wanted)
    };
    let (backlog, rx) = match apps.subscribe(from) {
        Ok(subscription) => subscription,
        // As kube-apiserver's watch cache answers a version older than its
        // history: the watch starts (200) and its one event is the 410.
        Err(expired) => return Ok(ended_with(repr, &expired)),
    };
    let kinds = call.state.registry.subscribe();

    // Unbounded in count, bounded in bytes by `budget`: a permit per byte
    // queued, given back as the response body takes the bytes. futures'
    // channel allocates per queued event, where tokio's preallocates a
    // block of 32 slots (1.3 KB) for every open watch, mostly idle.
    let budget = Arc::new(Semaphore::new(BUFFERED_BYTES));
    let (tx, body_rx) = mpsc::unbounded::<(Bytes, u32)>();
    // Dropped with the body (the client left): wakes the stream's task.
    let (client_gone, body_alive) = oneshot::channel::<()>();
    let body = {
        let budget = budget.clone();
        body_rx.map(move |(bytes, permits)| {
            let _alive = &body_alive;
            budget.add_permits(permits as usize);
            bytes
        })
    };
    let stream = Stream {
        budget,
        filter,
        repr,
        tx,
        client_gone,
        sent_columns: false,
        revision: from,
        bookmarks,
        shutdown: call.shutdown.clone(),
    };
    let kind_changed = kind_changed(kinds, call.kind.clone());
    tokio::spawn(stream.run(initial, send_initial, backlog, rx, timeout, kind_changed));
    Ok(response::stream(negotiate::content_type_of(repr), body))
}

/// A watch whose only event is `error`, an `ERROR` event with its Status.
fn ended_with(repr: Representation, error: &ApiError) -> Response<Body> {
    let mut line = serde_json::to_vec(&json!({"type": "ERROR", "object": error.to_status()}))
        .unwrap_or_default();
    line.push(b'\n');
    response::stream(
        negotiate::content_type_of(repr),
        futures::stream::once(std::future::ready(Bytes::from(line))),
    )
}

/// Resolves once the kinds `kinds` publishes no longer serve `kind` as it
/// was taken (changed or removed); checks the current kinds first, which
/// may have changed since the request took `kind`.
async fn kind_changed(
    mut kinds: tokio::sync::watch::Receiver<Arc<Snapshot>>,
    kind: Arc<ServedKind>,
) {
    loop {
        if !kinds.borrow_and_update().still_serves(&kind) {
            return;
        }
        if kinds.changed().await.is_err() {
            // The registry is gone with the server: the server's shutdown
            // ends the watch.
            std::future::pending::<()>().await;
        }
    }
}

struct Stream {
    filter: AppFilter,
    repr: Representation,
    tx: mpsc::UnboundedSender<(Bytes, u32)>,
    /// Resolves its cancellation once the response body is dropped.
    client_gone: oneshot::Sender<()>,
    budget: Arc<Semaphore>,
    sent_columns: bool,
    revision: u64,
    bookmarks: bool,
    shutdown: tokio::sync::watch::Receiver<bool>,
}

impl Stream {
    async fn run(
        mut self,
        initial: Vec<Arc<AppView>>,
        send_initial: bool,
        backlog: Vec<std::sync::Arc<CacheEvent>>,
        mut rx: broadcast::Receiver<std::sync::Arc<CacheEvent>>,
        timeout: Duration,
        kind_changed: impl Future<Output = ()>,
    ) {
        // By value: the list of existing apps is freed once sent, not held
        // for the watch's life.
        for app in initial {
            if !self.send(WatchEventType::Added, &app).await {
                return;
            }
        }
        if send_initial && !self.bookmark(true).await {
            return;
        }
        for event in backlog {
            if !self.event(&event).await {
                return;
            }
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        // Polled only when the kinds change, not with every event.
        let mut kind_changed = Woken::new(kind_changed);
        let mut ticker = tokio::time::interval(BOOKMARK_EVERY);
        ticker.tick().await;
        loop {
            tokio::select! {
                _ = &mut deadline => return,
                () = &mut kind_changed => {
                    tracing::debug!(kind = %self.filter.kind().resolved.resource_group(), "ending a watch: its kind changed or is no longer served");
                    return;
                }
                _ = self.shutdown.changed() => return,
                () = self.client_gone.cancellation() => return,
                _ = ticker.tick(), if self.bookmarks => {
                    if !self.bookmark(false).await { return; }
                }
                received = rx.recv() => match received {
                    Ok(event) => {
                        // Deletions after a re-list share its revision: only
                        // older events are already sent.
                        if event.revision < self.revision { continue; }
                        if !self.event(&event).await { return; }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let status = ApiError::expired(format!(
                            "too old resource version: {}: the watcher fell behind", self.revision
                        )).to_status();
                        let _ = self.line("ERROR", &status).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    }

    /// Sends the client's view of one cache event, if it has one; false
    /// when the client left.
    async fn event(&mut self, event: &CacheEvent) -> bool {
        self.revision = event.revision;
        match self.filter.watch_event(event) {
            Some((event_type, app)) => self.send(event_type, &app).await,
            None => true,
        }
    }

    /// Sends one event. Plain JSON copies the app's kept encoding.
    async fn send(&mut self, event_type: WatchEventType, app: &AppView) -> bool {
        let event_type = event_type.as_str();
        let object = match self.repr {
            Representation::Json => return self.raw_line(event_type, app.json.as_bytes()).await,
            Representation::PartialObjectMetadata | Representation::PartialObjectMetadataList => {
                table::partial_object_metadata(&app.value())
            }
            Representation::Table { include_object } => {
                let mut t = table::build_table(
                    &self.filter.kind().resolved,
                    &[&app.value()],
                    include_object,
                    json!({}),
                    true,
                );
                if self.sent_columns
                    && let Some(obj) = t.as_object_mut()
                {
                    obj.insert("columnDefinitions".into(), json!([]));
                }
                self.sent_columns = true;
                t
            }
        };
        self.line(event_type, &object).await
    }

    async fn bookmark(&mut self, initial_events_end: bool) -> bool {
        let mut metadata = json!({"resourceVersion": self.revision.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let resolved = &self.filter.kind().resolved;
        let object = match self.repr {
            Representation::Json => {
                json!({"apiVersion": resolved.group_version(), "kind": resolved.definition.kind, "metadata": metadata})
            }
            Representation::PartialObjectMetadata | Representation::PartialObjectMetadataList => {
                json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": metadata})
            }
            Representation::Table { include_object: _ } => json!({
                "apiVersion": "meta.k8s.io/v1", "kind": "Table", "metadata": metadata,
                "columnDefinitions": [], "rows": [],
            }),
        };
        self.line("BOOKMARK", &object).await
    }

    /// `{"type":…,"object":…}` and a newline, around an already encoded object.
    async fn raw_line(&mut self, event_type: &str, object_json: &[u8]) -> bool {
        let mut bytes = Vec::with_capacity(object_json.len() + 32);
        bytes.extend_from_slice(b"{\"type\":\"");
        bytes.extend_from_slice(event_type.as_bytes());
        bytes.extend_from_slice(b"\",\"object\":");
        bytes.extend_from_slice(object_json);
        bytes.extend_from_slice(b"}\n");
        self.deliver(Bytes::from(bytes)).await
    }

    async fn line(&mut self, event_type: &str, object: &Value) -> bool {
        let mut bytes =
            serde_json::to_vec(&json!({"type": event_type, "object": object})).unwrap_or_default();
        bytes.push(b'\n');
        self.deliver(Bytes::from(bytes)).await
    }

    /// Queues one encoded event; false when the client left, or did not
    /// make room for it within [`UNRESPONSIVE_AFTER`] (the stream then ends,
    /// as kube-apiserver ends an unresponsive watcher's), or the server is
    /// shutting down.
    async fn deliver(&mut self, bytes: Bytes) -> bool {
        let permits = bytes.len().min(BUFFERED_BYTES);
        let permit = match self.budget.clone().try_acquire_many_owned(permits as u32) {
            Ok(permit) => permit,
            Err(tokio::sync::TryAcquireError::Closed) => return false,
            // Boxed: the wait's state (a timer, the semaphore's waiter, the
            // select) would otherwise sit in every watch's task for its whole
            // life, and only a watcher that stopped reading ever needs it.
            Err(tokio::sync::TryAcquireError::NoPermits) => {
                match Box::pin(self.wait_for_room(permits)).await {
                    Some(permit) => permit,
                    None => return false,
                }
            }
        };
        permit.forget();
        self.tx.unbounded_send((bytes, permits as u32)).is_ok()
    }

    /// Waits for the client to make room for `permits` bytes; `None` when it
    /// did not within [`UNRESPONSIVE_AFTER`], left, or the server is shutting
    /// down.
    async fn wait_for_room(&mut self, permits: usize) -> Option<OwnedSemaphorePermit> {
        let mut shutdown = self.shutdown.clone();
        let room = self.budget.clone().acquire_many_owned(permits as u32);
        tokio::select! {
            room = tokio::time::timeout(UNRESPONSIVE_AFTER, room) => match room {
                Ok(Ok(permit)) => Some(permit),
                Ok(Err(_)) => None,
                Err(_) => {
                    tracing::debug!("ending a watch whose client stopped reading");
                    None
                }
            },
            _ = shutdown.changed() => None,
            () = self.client_gone.cancellation() => None,
        }
    }
}
