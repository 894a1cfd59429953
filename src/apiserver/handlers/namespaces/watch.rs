//! Watching a standalone server's namespaces (`kubectl get ns -w`, and the
//! wait of `kubectl delete ns`): the store is read again whenever it tells
//! of a namespace change ([`EmbeddedStore::namespace_changes`]), and what
//! changed since the last read is sent — ADDED, MODIFIED, DELETED (with the
//! namespace as last seen, at the resourceVersion of its removal) — as
//! newline-delimited JSON events, plain, as Table rows or as
//! PartialObjectMetadata. A watch from no resourceVersion or `0` starts with
//! an ADDED event per namespace; one from a resourceVersion (a list's, which
//! is the namespaces' latest change) with the namespaces changed after it,
//! in resourceVersion order (as ADDED; namespaces removed in between are not
//! told: the store keeps no history of namespaces);
//! `sendInitialEvents=true` ends the initial events with a bookmark
//! annotated `k8s.io/initial-events-end`. Field
//! (`metadata.name`) and label selectors apply. The watch ends after
//! `timeoutSeconds`, when the client leaves, or when the server stops.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use http::Response;
use serde_json::{Value, json};

use super::{namespace_table, store_error};
use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::query::Query;
use crate::apimachinery::status::ApiError;
use crate::apiserver::negotiate::{self, Representation};
use crate::apiserver::response::{self, Body};
use crate::apiserver::table;
use crate::storage::embedded_store::EmbeddedStore;

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
    let repr = match negotiate::negotiate(
        accept,
        query.get("includeObject").map(String::as_str),
        false,
    )? {
        Representation::PartialObjectMetadataList => Representation::PartialObjectMetadata,
        other => other,
    };
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
    let (first, current) = filter.read(store)?;
    let (tx, rx) = mpsc::unbounded::<Bytes>();
    let mut stream = Stream {
        tx,
        repr,
        sent_columns: false,
    };
    let store = store.clone();
    tokio::spawn(async move {
        let mut known = BTreeMap::new();
        let mut first = first;
        first.sort_by_key(revision);
        for ns in first {
            let changed_after = from.is_none_or(|from| revision(&ns) > from);
            if (changed_after || send_initial) && !stream.send("ADDED", &ns) {
                return;
            }
            known.insert(name_of(&ns), ns);
        }
        if send_initial && !stream.bookmark(current) {
            return;
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut shutdown = shutdown;
        loop {
            tokio::select! {
                _ = &mut deadline => return,
                _ = shutdown.changed() => return,
                told = changes.changed() => {
                    if told.is_err() {
                        return;
                    }
                }
                _ = tokio::time::sleep(IDLE_CHECK) => {
                    if stream.tx.is_closed() {
                        return;
                    }
                    continue;
                }
            }
            if stream.tx.is_closed() {
                return;
            }
            let Ok((now, now_revision)) = filter.read(&store) else {
                return;
            };
            let mut seen = BTreeMap::new();
            for ns in now {
                let key = name_of(&ns);
                let event = match known.get(&key) {
                    None => Some("ADDED"),
                    Some(before) if revision(before) != revision(&ns) => Some("MODIFIED"),
                    Some(_) => None,
                };
                if let Some(event) = event
                    && !stream.send(event, &ns)
                {
                    return;
                }
                seen.insert(key, ns);
            }
            for (key, gone) in &known {
                if seen.contains_key(key) {
                    continue;
                }
                // As last seen, at the resourceVersion of its removal (or
                // later), not of its last change.
                let mut gone = gone.clone();
                gone["metadata"]["resourceVersion"] = json!(now_revision.to_string());
                if !stream.send("DELETED", &gone) {
                    return;
                }
            }
            known = seen;
        }
    });
    Ok(response::stream(negotiate::content_type_of(repr), rx))
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
        items.retain(|ns| {
            self.only.as_deref().is_none_or(|n| name_of(ns) == n)
                && self.fields.matches_namespace(ns)
                && self.labels.as_ref().is_none_or(|s| {
                    s.matches(ns.pointer("/metadata/labels").and_then(Value::as_object))
                })
        });
        Ok((items, revision))
    }
}

fn name_of(ns: &Value) -> String {
    ns.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
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
                let mut t = namespace_table(&[ns], include_object);
                if self.sent_columns {
                    t["columnDefinitions"] = json!([]);
                }
                self.sent_columns = true;
                t
            }
        };
        self.line(event_type, &object)
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
