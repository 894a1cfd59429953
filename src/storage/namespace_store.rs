//! The namespaces of `serve --standalone`, kept in the embedded store's
//! SQLite file beside the objects: a minimal `v1` Namespace (name, uid,
//! resourceVersion from its own counter, creationTimestamp, the
//! `kubernetes.io/metadata.name` label, phase `Active` or `Terminating`).
//!
//! `default` always exists, and so does every namespace that already holds
//! objects when the store is opened (stores from before namespaces were
//! kept). Deleting a namespace marks it `Terminating`; it is removed once
//! no object is left in it (see [`crate::apiserver::handlers`]).

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use super::StoreError;
use super::embedded_store::{EmbeddedStore, internal, now};

/// The namespace every store has.
pub const DEFAULT_NAMESPACE: &str = "default";

/// A namespace's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Usable.
    Active,
    /// Being deleted: no new objects.
    Terminating,
}

/// Creates the table and the namespaces that must exist.
pub(super) fn prepare(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS namespaces (name TEXT PRIMARY KEY, body TEXT NOT NULL);",
    )
    .map_err(internal)?;
    let mut names: Vec<String> = conn
        .prepare("SELECT DISTINCT namespace FROM objects")
        .and_then(|mut stmt| {
            stmt.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()
        })
        .map_err(internal)?;
    names.push(DEFAULT_NAMESPACE.to_owned());
    for name in names {
        let exists: Option<i64> = conn
            .query_row("SELECT 1 FROM namespaces WHERE name = ?1", [&name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(internal)?;
        if exists.is_none() {
            insert(conn, new_namespace(&name, &Value::Null))?;
        }
    }
    Ok(())
}

fn new_namespace(name: &str, labels: &Value) -> Value {
    let mut labels = labels.as_object().cloned().unwrap_or_default();
    labels.insert("kubernetes.io/metadata.name".into(), json!(name));
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": uuid::Uuid::new_v4().to_string(),
            "creationTimestamp": now(),
            "labels": labels,
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

/// Stores `namespace` with the next namespace resourceVersion.
fn insert(conn: &Connection, mut namespace: Value) -> Result<Value, StoreError> {
    let revision: i64 = conn
        .query_row(
            "INSERT INTO meta (key, value) VALUES ('namespace_revision', 1)
             ON CONFLICT(key) DO UPDATE SET value = value + 1 RETURNING value",
            [],
            |r| r.get(0),
        )
        .map_err(internal)?;
    namespace["metadata"]["resourceVersion"] = json!(revision.to_string());
    let name = namespace["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    conn.execute(
        "INSERT OR REPLACE INTO namespaces (name, body) VALUES (?1, ?2)",
        params![name, namespace.to_string()],
    )
    .map_err(internal)?;
    Ok(namespace)
}

fn load(conn: &Connection, name: &str) -> Result<Option<Value>, StoreError> {
    conn.query_row("SELECT body FROM namespaces WHERE name = ?1", [name], |r| {
        r.get::<_, String>(0)
    })
    .optional()
    .map_err(internal)?
    .map(|body| serde_json::from_str(&body).map_err(internal))
    .transpose()
}

impl EmbeddedStore {
    /// One namespace.
    pub fn namespace(&self, name: &str) -> Result<Option<Value>, StoreError> {
        load(&self.lock().conn, name)
    }

    /// The phase of a namespace, `None` when it does not exist.
    pub fn namespace_phase(&self, name: &str) -> Result<Option<Phase>, StoreError> {
        Ok(self.namespace(name)?.map(|ns| {
            if ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating") {
                Phase::Terminating
            } else {
                Phase::Active
            }
        }))
    }

    /// Every namespace, by name.
    pub fn namespaces(&self) -> Result<Vec<Value>, StoreError> {
        let inner = self.lock();
        let mut stmt = inner
            .conn
            .prepare_cached("SELECT body FROM namespaces ORDER BY name")
            .map_err(internal)?;
        stmt.query_map([], |r| r.get::<_, String>(0))
            .map_err(internal)?
            .map(|body| {
                body.map_err(internal)
                    .and_then(|b| serde_json::from_str(&b).map_err(internal))
            })
            .collect()
    }

    /// Creates namespace `name` with these labels (409 when it exists).
    pub fn create_namespace(
        &self,
        name: &str,
        labels: &Value,
        dry_run: bool,
    ) -> Result<Value, StoreError> {
        let inner = self.lock();
        if load(&inner.conn, name)?.is_some() {
            return Err(StoreError::AlreadyExists);
        }
        let namespace = new_namespace(name, labels);
        if dry_run {
            return Ok(namespace);
        }
        insert(&inner.conn, namespace)
    }

    /// Marks namespace `name` Terminating (once) and returns it.
    pub fn terminate_namespace(&self, name: &str) -> Result<Value, StoreError> {
        let inner = self.lock();
        let mut namespace = load(&inner.conn, name)?.ok_or(StoreError::NotFound)?;
        if namespace.pointer("/metadata/deletionTimestamp").is_some() {
            return Ok(namespace);
        }
        namespace["metadata"]["deletionTimestamp"] = json!(now());
        namespace["status"]["phase"] = json!("Terminating");
        insert(&inner.conn, namespace)
    }

    /// Removes namespace `name` if it holds no objects; true if it is gone.
    pub fn finish_namespace(&self, name: &str) -> Result<bool, StoreError> {
        let inner = self.lock();
        let left: i64 = inner
            .conn
            .query_row(
                "SELECT COUNT(*) FROM objects WHERE namespace = ?1",
                [name],
                |r| r.get(0),
            )
            .map_err(internal)?;
        if left > 0 {
            return Ok(false);
        }
        inner
            .conn
            .execute("DELETE FROM namespaces WHERE name = ?1", [name])
            .map_err(internal)?;
        Ok(true)
    }

    /// The names of the objects in namespace `name`.
    pub fn object_names_in(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let inner = self.lock();
        let mut stmt = inner
            .conn
            .prepare_cached("SELECT name FROM objects WHERE namespace = ?1 ORDER BY name")
            .map_err(internal)?;
        stmt.query_map([name], |r| r.get::<_, String>(0))
            .map_err(internal)?
            .collect::<Result<_, _>>()
            .map_err(internal)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[tokio::test]
    async fn default_exists_and_deletion_waits_for_the_objects() {
        let store = EmbeddedStore::open(Path::new(":memory:")).unwrap();
        assert_eq!(
            store.namespace_phase("default").unwrap(),
            Some(Phase::Active)
        );
        assert_eq!(store.namespace_phase("team-a").unwrap(), None);
        let created = store
            .create_namespace("team-a", &json!({"team": "a"}), false)
            .unwrap();
        assert_eq!(
            created["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "team-a"
        );
        assert_eq!(created["metadata"]["labels"]["team"], "a");
        assert!(matches!(
            store.create_namespace("team-a", &Value::Null, false),
            Err(StoreError::AlreadyExists)
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
        assert!(
            !store.finish_namespace("team-a").unwrap(),
            "an object is left"
        );
        assert_eq!(store.object_names_in("team-a").unwrap(), ["x"]);
        store
            .delete("team-a", "x", &Default::default())
            .await
            .unwrap();
        assert!(store.finish_namespace("team-a").unwrap());
        assert_eq!(store.namespace_phase("team-a").unwrap(), None);
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
