//! Watching a standalone server's namespaces (`kubectl get ns -w`, the wait
//! of `kubectl delete ns`, informers): whenever the store tells of a
//! namespace change ([`EmbeddedStore::namespace_changes`]) the watch reads
//! the namespace history after the last event it sent
//! ([`crate::storage::namespace_history`]) and sends each event as
//! kube-apiserver's watch cache does — ADDED, MODIFIED, DELETED (the
//! namespace as last stored, at the resourceVersion of its removal), and
//! with selectors a namespace entering them as ADDED and one leaving them as
//! DELETED — as newline-delimited JSON events, plain, as Table rows or as
//! PartialObjectMetadata.
//!
//! A watch from no resourceVersion or `0` starts with an ADDED event per
//! namespace; one from a resourceVersion resumes after it: every event since
//! (removals included), or, when it is older than the kept history, a single
//! `ERROR` event with kube-apiserver's 410 Expired `too old resource
//! version` (the client lists again); from a resourceVersion the namespaces
//! have not reached, the events after it as they come.
//! `sendInitialEvents=true` sends the current namespaces as ADDED and ends
//! them with a bookmark annotated `k8s.io/initial-events-end`; at a
//! resourceVersion not reached yet it waits up to 3 s for it, then sends a
//! 504 `ERROR` event. Field
//! (`metadata.name`, `status.phase`) and label selectors apply. The watch
//! ends after `timeoutSeconds`, when the client leaves, or when the server
//! stops; one that fell behind the kept history ends with the 410.

use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use http::Response;
use serde_json::{Value, json};

use super::{namespace_table, object_revision, store_error};
use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::query::Query;
use crate::apimachinery::status::ApiError;
use crate::apiserver::negotiate::{self, Representation};
use crate::apiserver::response::{self, Body};
use crate::apiserver::table;
use crate::storage::embedded_store::EmbeddedStore;
use crate::storage::namespace_history::{EventKind, History, NamespaceEvent};

/// How often a watch without changes checks that its client is still there
/// (the changes themselves are sent as the store tells of them).
const IDLE_CHECK: Duration = Duration::from_secs(5);

/// Starts a watch of the namespaces (`name`: only that one).
pub(super) fn watch(
    store: &EmbeddedStore,
    name: Option<&str>,
    query: &Query,
    accept: Option<&str>,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> Result<Response<Body>, ApiError> {
    let repr = negotiate::negotiate_watch(accept, query.get("includeObject").map(String::as_str))?;
    let selector =
        FieldSelector::parse_for_namespaces(query.get("fieldSelector").map_or("", String::as_str))
            .map_err(ApiError::bad_request)?;
    // A watch of one namespace by its path: the name selects it (and a
    // selector naming another is a 400), as in kube-apiserver.
    let selector = match name {
        Some(name) => selector.for_name(name).map_err(ApiError::bad_request)?,
        None => selector,
    };
    let only = selector.exact_name().map(str::to_owned);
    let labels = match query.get("labelSelector").filter(|s| !s.is_empty()) {
        Some(s) => Some(LabelSelector::parse(s).map_err(ApiError::bad_request)?),
        None => None,
    };
    let send_initial = crate::apimachinery::query::flag(query, "sendInitialEvents");
    let from: Option<u64> = match query.get("resourceVersion").map(String::as_str) {
        None | Some("") | Some("0") => None,
        Some(rv) => Some(
            rv.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?,
        ),
    };
    let timeout = match query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
    {
        Some(t) if t > 0 => Duration::from_secs(t),
        _ => Duration::from_secs(1800),
    };
    let filter = Filter {
        only,
        fields: selector,
        labels,
    };
    // Subscribed before the first read: a change made after it is told.
    let mut changes = store.namespace_changes();
    let (tx, rx) = mpsc::unbounded::<Bytes>();
    let mut stream = Stream {
        tx,
        repr,
        sent_columns: false,
    };
    let store = store.clone();
    tokio::spawn(async move {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        // Initial events at a resourceVersion wait for it; a plain watch
        // from one the namespaces have not reached tells the events after
        // it when they come (kube-apiserver's watch cache does both).
        if let Some(from) = from.filter(|_| send_initial)
            && let Err(err) = caught_up(&store, &mut changes, from).await
        {
            stream.error(&err);
            return;
        }
        // Where the events sent so far lead.
        let mut last = match from.filter(|_| !send_initial) {
            Some(from) => from,
            None => {
                let Ok((mut first, current)) = filter.read(&store) else {
                    return;
                };
                first.sort_by_key(revision);
                for ns in &first {
                    if !stream.send("ADDED", ns) {
                        return;
                    }
                }
                if send_initial && !stream.bookmark(current) {
                    return;
                }
                current
            }
        };
        let mut shutdown = shutdown;
        loop {
            match store.namespace_events_since(last) {
                Ok(History::Events(events, current)) => {
                    for event in &events {
                        if let Some((event_type, object)) = filter.event(event)
                            && !stream.send(event_type, &object)
                        {
                            return;
                        }
                    }
                    last = current;
                }
                Ok(History::Expired(oldest)) => {
                    stream.error(&too_old(last, oldest));
                    return;
                }
                Err(_) => return,
            }
            loop {
                tokio::select! {
                    _ = &mut deadline => return,
                    _ = shutdown.changed() => return,
                    told = changes.changed() => {
                        if told.is_err() {
                            return;
                        }
                        break;
                    }
                    _ = tokio::time::sleep(IDLE_CHECK) => {
                        if stream.tx.is_closed() {
                            return;
                        }
                    }
                }
            }
            if stream.tx.is_closed() {
                return;
            }
        }
    });
    Ok(response::stream(negotiate::content_type_of(repr), rx))
}

/// How long a watch from a resourceVersion the namespaces have not reached
/// waits for it (kube-apiserver's watch cache: 3 s).
const CATCH_UP: Duration = Duration::from_secs(3);

/// Waits until the namespaces reach resourceVersion `wanted`, for up to
/// [`CATCH_UP`]; kube-apiserver's 504 otherwise.
async fn caught_up(
    store: &EmbeddedStore,
    changes: &mut tokio::sync::watch::Receiver<()>,
    wanted: u64,
) -> Result<(), ApiError> {
    let deadline = tokio::time::Instant::now() + CATCH_UP;
    loop {
        let current = store.namespace_revision().map_err(store_error)?;
        if current >= wanted {
            return Ok(());
        }
        match tokio::time::timeout_at(deadline, changes.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => {
                return Err(ApiError::too_large_resource_version(wanted, current));
            }
        }
    }
}

/// kube-apiserver's answer to a watch from before its history.
fn too_old(from: u64, oldest: u64) -> ApiError {
    ApiError::expired(format!("too old resource version: {from} ({oldest})"))
}

/// Which namespaces a watch sees.
struct Filter {
    only: Option<String>,
    fields: FieldSelector,
    labels: Option<LabelSelector>,
}

impl Filter {
    /// The namespaces it sees, and the namespaces' latest resourceVersion.
    fn read(&self, store: &EmbeddedStore) -> Result<(Vec<Value>, u64), ApiError> {
        let (mut items, revision) = store.namespaces_at().map_err(store_error)?;
        items.retain(|ns| self.sees(ns));
        Ok((items, revision))
    }

    /// Whether it sees namespace `ns`.
    fn sees(&self, ns: &Value) -> bool {
        self.only
            .as_deref()
            .is_none_or(|n| ns.pointer("/metadata/name").and_then(Value::as_str) == Some(n))
            && self.fields.matches_namespace(ns)
            && self.labels.as_ref().is_none_or(|s| {
                s.matches(ns.pointer("/metadata/labels").and_then(Value::as_object))
            })
    }

    /// What a watch with this filter is told of `event`, as kube-apiserver's
    /// watch cache tells it: a namespace entering the filter is ADDED, one
    /// leaving it (or removed) DELETED as it was before, at the event's
    /// resourceVersion; nothing when it was not seen before or after.
    fn event(&self, event: &NamespaceEvent) -> Option<(&'static str, Value)> {
        let now = event.kind != EventKind::Deleted && self.sees(&event.object);
        let before = event.previous.as_ref().is_some_and(|p| self.sees(p));
        match (now, before) {
            (true, false) => Some(("ADDED", event.object.clone())),
            (true, true) => Some(("MODIFIED", event.object.clone())),
            (false, true) => {
                let mut gone = event.previous.clone()?;
                gone["metadata"]["resourceVersion"] = json!(event.revision.to_string());
                Some(("DELETED", gone))
            }
            (false, false) => None,
        }
    }
}

fn revision(ns: &Value) -> u64 {
    ns.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

struct Stream {
    tx: mpsc::UnboundedSender<Bytes>,
    repr: Representation,
    sent_columns: bool,
}

impl Stream {
    /// Sends one event; false when the client left.
    fn send(&mut self, event_type: &str, ns: &Value) -> bool {
        let object = match self.repr {
            Representation::Json => ns.clone(),
            Representation::PartialObjectMetadata | Representation::PartialObjectMetadataList => {
                table::partial_object_metadata(ns)
            }
            Representation::Table { include_object } => {
                let mut t = namespace_table(&[ns], include_object, object_revision(ns));
                if self.sent_columns {
                    t["columnDefinitions"] = json!([]);
                }
                self.sent_columns = true;
                t
            }
        };
        self.line(event_type, &object)
    }

    /// Sends an `ERROR` event with `err`'s Status (the watch then ends).
    fn error(&mut self, err: &ApiError) -> bool {
        self.line("ERROR", &err.to_status())
    }

    fn bookmark(&mut self, revision: u64) -> bool {
        let metadata = json!({
            "resourceVersion": revision.to_string(),
            "annotations": {"k8s.io/initial-events-end": "true"},
        });
        let object = match self.repr {
            Representation::Json => {
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
            }
            Representation::PartialObjectMetadata | Representation::PartialObjectMetadataList => {
                json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": metadata})
            }
            Representation::Table { .. } => json!({
                "apiVersion": "meta.k8s.io/v1", "kind": "Table", "metadata": metadata,
                "columnDefinitions": [], "rows": [],
            }),
        };
        self.line("BOOKMARK", &object)
    }

    fn line(&mut self, event_type: &str, object: &Value) -> bool {
        let mut bytes =
            serde_json::to_vec(&json!({"type": event_type, "object": object})).unwrap_or_default();
        bytes.push(b'\n');
        self.tx.unbounded_send(Bytes::from(bytes)).is_ok()
    }
}
