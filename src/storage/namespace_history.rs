//! The history of the standalone server's namespaces, so that a watch
//! resumed from a resourceVersion is told everything after it — removals
//! included — or 410 Expired when that is older than the history, as
//! kube-apiserver's watch cache answers.
//!
//! Every stored change of a namespace ([`super::namespace_store`]) appends
//! one [`NamespaceEvent`] at its own resourceVersion to the SQLite table
//! `namespace_events`: the namespace as stored after it (as last stored, at
//! the removal's resourceVersion, for a removal) and as it was before, which
//! a watch with selectors needs to tell a namespace leaving them (DELETED)
//! or entering them (ADDED). The last [`KEPT_EVENTS`] are kept; the meta key
//! `namespace_history_from` says from which resourceVersion on the history
//! is whole (the namespaces' resourceVersion when the table was made, for a
//! store from before it, then the newest pruned event's).

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{StoreError, internal};

/// How many namespace events are kept (kube-apiserver's watch cache keeps
/// at least 100 per resource, more under load).
pub const KEPT_EVENTS: i64 = 1000;

/// What a namespace event says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Created.
    Added,
    /// Changed (marked Terminating too).
    Modified,
    /// Removed.
    Deleted,
}

impl EventKind {
    fn code(self) -> &'static str {
        match self {
            EventKind::Added => "ADDED",
            EventKind::Modified => "MODIFIED",
            EventKind::Deleted => "DELETED",
        }
    }

    fn from_code(code: &str) -> Result<EventKind, StoreError> {
        match code {
            "ADDED" => Ok(EventKind::Added),
            "MODIFIED" => Ok(EventKind::Modified),
            "DELETED" => Ok(EventKind::Deleted),
            other => Err(internal(format!("namespace event of type {other:?}"))),
        }
    }
}

/// One stored change of a namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct NamespaceEvent {
    /// What happened.
    pub kind: EventKind,
    /// Its resourceVersion.
    pub revision: u64,
    /// The namespace after it (for a removal, as last stored, at the
    /// removal's resourceVersion).
    pub object: Value,
    /// The namespace before it (none for a creation).
    pub previous: Option<Value>,
}

/// The events after a resourceVersion, or why they cannot be told.
#[derive(Debug, Clone, PartialEq)]
pub enum History {
    /// Every event after it, oldest first, and the namespaces'
    /// resourceVersion they lead to.
    Events(Vec<NamespaceEvent>, u64),
    /// It is older than the history: the oldest resourceVersion a watch may
    /// resume from.
    Expired(u64),
}

/// Makes the table; a store from before it has a history from its current
/// namespace resourceVersion (`revision`) on.
pub(super) fn prepare(conn: &Connection, revision: u64) -> Result<(), StoreError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS namespace_events (
           revision INTEGER PRIMARY KEY, kind TEXT NOT NULL, body TEXT NOT NULL, previous TEXT);",
    )
    .map_err(internal)?;
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('namespace_history_from', ?1)
         ON CONFLICT(key) DO NOTHING",
        [revision as i64],
    )
    .map_err(internal)?;
    Ok(())
}

/// Appends the event at `revision`, and forgets the ones older than the
/// last [`KEPT_EVENTS`].
pub(super) fn record(
    conn: &Connection,
    kind: EventKind,
    revision: i64,
    object: &Value,
    previous: Option<&Value>,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO namespace_events (revision, kind, body, previous) VALUES (?1, ?2, ?3, ?4)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            revision,
            kind.code(),
            object.to_string(),
            previous.map(Value::to_string)
        ])
    })
    .map_err(internal)?;
    let horizon = revision - KEPT_EVENTS;
    if horizon > 0 {
        let pruned = conn
            .prepare_cached("DELETE FROM namespace_events WHERE revision <= ?1")
            .and_then(|mut stmt| stmt.execute([horizon]))
            .map_err(internal)?;
        if pruned > 0 {
            conn.prepare_cached(
                "UPDATE meta SET value = MAX(value, ?1) WHERE key = 'namespace_history_from'",
            )
            .and_then(|mut stmt| stmt.execute([horizon]))
            .map_err(internal)?;
        }
    }
    Ok(())
}

/// The events after resourceVersion `after`, up to the namespaces' current
/// resourceVersion `current`.
pub(super) fn since(conn: &Connection, after: u64, current: u64) -> Result<History, StoreError> {
    let from: u64 = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'namespace_history_from'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .optional()
        .map_err(internal)?
        .map_or(0, |v| u64::try_from(v).unwrap_or(0));
    if after < from {
        return Ok(History::Expired(from));
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT revision, kind, body, previous FROM namespace_events
             WHERE revision > ?1 ORDER BY revision",
        )
        .map_err(internal)?;
    let rows = stmt
        .query_map([i64::try_from(after).unwrap_or(i64::MAX)], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })
        .map_err(internal)?;
    let mut events = Vec::new();
    for row in rows {
        let (revision, kind, body, previous) = row.map_err(internal)?;
        events.push(NamespaceEvent {
            kind: EventKind::from_code(&kind)?,
            revision: u64::try_from(revision).unwrap_or(0),
            object: serde_json::from_str(&body).map_err(internal)?,
            previous: previous
                .map(|p| serde_json::from_str(&p))
                .transpose()
                .map_err(internal)?,
        });
    }
    Ok(History::Events(events, current.max(after)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);")
            .unwrap();
        conn
    }

    fn ns(rv: i64) -> Value {
        json!({"metadata": {"name": "a", "resourceVersion": rv.to_string()}})
    }

    #[test]
    fn a_store_from_before_the_history_answers_from_its_revision_on() {
        let conn = store();
        prepare(&conn, 7).unwrap();
        assert_eq!(since(&conn, 6, 7).unwrap(), History::Expired(7));
        assert_eq!(since(&conn, 7, 7).unwrap(), History::Events(Vec::new(), 7));
        record(&conn, EventKind::Added, 8, &ns(8), None).unwrap();
        let History::Events(events, at) = since(&conn, 7, 8).unwrap() else {
            panic!("expired");
        };
        assert_eq!((events.len(), events[0].kind, at), (1, EventKind::Added, 8));
        // Made again on the next open: the history stays as it was.
        prepare(&conn, 8).unwrap();
        assert!(matches!(since(&conn, 7, 8).unwrap(), History::Events(e, 8) if e.len() == 1));
    }

    #[test]
    fn the_last_thousand_events_are_kept_and_older_resumes_expire() {
        let conn = store();
        prepare(&conn, 0).unwrap();
        let last = KEPT_EVENTS + 5;
        for rv in 1..=last {
            let previous = (rv > 1).then(|| ns(rv - 1));
            record(&conn, EventKind::Modified, rv, &ns(rv), previous.as_ref()).unwrap();
        }
        let count: i64 = conn
            .query_row("SELECT COUNT(*) FROM namespace_events", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, KEPT_EVENTS);
        assert_eq!(since(&conn, 4, last as u64).unwrap(), History::Expired(5));
        let History::Events(events, _) = since(&conn, 5, last as u64).unwrap() else {
            panic!("expired");
        };
        assert_eq!(events.len() as i64, KEPT_EVENTS);
        assert_eq!(events[0].revision, 6);
        assert_eq!(events[0].previous, Some(ns(5)));
        // A resourceVersion not reached yet: nothing yet, and the watch
        // goes on from it.
        assert_eq!(
            since(&conn, last as u64 + 10, last as u64).unwrap(),
            History::Events(Vec::new(), last as u64 + 10)
        );
    }
}
