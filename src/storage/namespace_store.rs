//! The namespaces of `serve --standalone`, kept in the embedded store's
//! SQLite file beside the objects: a `v1` Namespace with the metadata a
//! client gives it (labels, annotations, finalizers, ownerReferences,
//! managedFields), the server's (name, uid, resourceVersion from its own
//! counter, creationTimestamp, the `kubernetes.io/metadata.name` label) and
//! phase `Active` or `Terminating`.
//!
//! `default` always exists, and so does every namespace that already holds
//! objects when the store is opened (stores from before namespaces were
//! kept). Deleting a namespace marks it `Terminating`; it is removed once
//! no object is left in it and no `metadata.finalizers` hold it (see
//! [`crate::apiserver::handlers`]).
//!
//! Every stored change is also told to [`super::namespace_history`], which
//! watches resume from.
//!
//! Functions over the store's SQLite connection; [`super::embedded_store`]
//! calls them under its lock and offers them as `EmbeddedStore` methods.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value, json};

use super::namespace_conditions::{self, Remaining};
use super::namespace_history::{self, EventKind};
use super::{StoreError, fits_in_etcd, internal, now};

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
    namespace_history::prepare(conn, revision(conn)?)?;
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
            insert(conn, new_namespace(&name, &Map::new(), &[]), None)?;
        }
    }
    Ok(())
}

/// The metadata a client sets on a namespace, kept as given.
pub const CLIENT_METADATA: [&str; 5] = [
    "labels",
    "annotations",
    "finalizers",
    "ownerReferences",
    "managedFields",
];

/// The label kube-apiserver keeps on every namespace, its name.
pub const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The finalizer kube-controller-manager's namespace controller keeps in a
/// namespace's `spec.finalizers` until it has deleted the namespace's content
/// (here, [`finish`] plays that part).
pub const CONTENT_FINALIZER: &str = "kubernetes";

/// A new namespace `name` with the client's metadata of `meta` and the
/// client's `spec.finalizers`, to which [`CONTENT_FINALIZER`] is added as
/// kube-apiserver adds it (last, once).
pub fn new_namespace(name: &str, meta: &Map<String, Value>, spec_finalizers: &[String]) -> Value {
    let mut finalizers = spec_finalizers.to_vec();
    if !finalizers.iter().any(|f| f == CONTENT_FINALIZER) {
        finalizers.push(CONTENT_FINALIZER.to_owned());
    }
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(name));
    metadata.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    metadata.insert("creationTimestamp".into(), json!(now()));
    keep_client_metadata(&mut metadata, meta, name);
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": metadata,
        "spec": {"finalizers": finalizers},
        "status": {"phase": "Active"},
    })
}

/// Copies the client's metadata of `from` into `metadata` (a `null` or
/// empty field is left out) and sets the name label.
pub fn keep_client_metadata(
    metadata: &mut Map<String, Value>,
    from: &Map<String, Value>,
    name: &str,
) {
    for key in CLIENT_METADATA {
        metadata.remove(key);
        match from.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Array(a)) if a.is_empty() => {}
            Some(Value::Object(o)) if o.is_empty() => {}
            Some(value) => {
                metadata.insert(key.into(), value.clone());
            }
        }
    }
    let labels = metadata
        .entry("labels")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(NAME_LABEL.into(), json!(name));
    }
}

/// The next namespace resourceVersion (every change of a namespace, its
/// removal too, has one of its own).
fn bump(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row(
        "INSERT INTO meta (key, value) VALUES ('namespace_revision', 1)
         ON CONFLICT(key) DO UPDATE SET value = value + 1 RETURNING value",
        [],
        |r| r.get(0),
    )
    .map_err(internal)
}

/// The resourceVersion of the namespaces' latest change (a list's).
pub(super) fn revision(conn: &Connection) -> Result<u64, StoreError> {
    let value: Option<i64> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'namespace_revision'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(internal)?;
    Ok(value.and_then(|v| u64::try_from(v).ok()).unwrap_or(0))
}

/// Stores `namespace` with the next namespace resourceVersion, over
/// `previous` (as stored; none when it is new).
fn insert(
    conn: &Connection,
    mut namespace: Value,
    previous: Option<&Value>,
) -> Result<Value, StoreError> {
    // The namespace, its resourceVersion and its event, or none of them.
    let tx = conn.unchecked_transaction().map_err(internal)?;
    let revision = bump(conn)?;
    namespace["metadata"]["resourceVersion"] = json!(revision.to_string());
    let name = namespace["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let body = namespace.to_string();
    fits_in_etcd(&body)?;
    conn.execute(
        "INSERT OR REPLACE INTO namespaces (name, body) VALUES (?1, ?2)",
        params![name, body],
    )
    .map_err(internal)?;
    let kind = if previous.is_some() {
        EventKind::Modified
    } else {
        EventKind::Added
    };
    namespace_history::record(conn, kind, revision, &namespace, previous)?;
    tx.commit().map_err(internal)?;
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

/// One namespace.
pub(super) fn get(conn: &Connection, name: &str) -> Result<Option<Value>, StoreError> {
    load(conn, name)
}

/// The phase a stored namespace is in.
pub fn phase(namespace: &Value) -> Phase {
    if namespace.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating") {
        Phase::Terminating
    } else {
        Phase::Active
    }
}

/// Every namespace, by name.
pub(super) fn list(conn: &Connection) -> Result<Vec<Value>, StoreError> {
    let mut stmt = conn
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

/// Creates `namespace` (made by [`new_namespace`]; 409 when one of its
/// name exists).
pub(super) fn create(
    conn: &Connection,
    namespace: Value,
    dry_run: bool,
) -> Result<Value, StoreError> {
    let name = namespace["metadata"]["name"].as_str().unwrap_or_default();
    if let Some(existing) = load(conn, name)? {
        return Err(StoreError::AlreadyExists {
            being_deleted: super::being_deleted(&existing),
        });
    }
    if dry_run {
        return Ok(namespace);
    }
    insert(conn, namespace, None)
}

/// What an update of a namespace writes besides the client's metadata:
/// the subresource it was sent to.
#[derive(Clone, Copy, Debug)]
pub enum Subresource<'a> {
    /// None: the namespace itself (metadata only).
    None,
    /// `/finalize`: these `spec.finalizers`.
    Finalize(&'a [String]),
    /// `/status`: this `status`.
    Status(&'a Value),
}

/// Replaces the client's metadata of namespace `name` with `metadata`'s,
/// and what `subresource` writes (a `/finalize` its `spec.finalizers`, a
/// `/status` its `status`); everything else stays. With
/// `resource_version`, a stored namespace at another resourceVersion is a
/// conflict. A change that changes nothing keeps the resourceVersion, as
/// kube-apiserver does. A Terminating namespace left with no finalizer of
/// either kind and no objects is removed by the change ([`settle`]).
pub(super) fn update(
    conn: &Connection,
    name: &str,
    metadata: &Map<String, Value>,
    subresource: Subresource<'_>,
    resource_version: Option<&str>,
    dry_run: bool,
) -> Result<Value, StoreError> {
    let current = load(conn, name)?.ok_or(StoreError::NotFound)?;
    let stored_rv = current["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    if let Some(rv) = resource_version.filter(|rv| !rv.is_empty())
        && rv != stored_rv
    {
        return Err(StoreError::Conflict(
            "the object has been modified; please apply your changes to the latest version and try again".into(),
        ));
    }
    let mut updated = current.clone();
    if let Some(meta) = updated["metadata"].as_object_mut() {
        keep_client_metadata(meta, metadata, name);
    }
    match subresource {
        Subresource::None => {}
        Subresource::Finalize(finalizers) => set_spec_finalizers(&mut updated, finalizers.to_vec()),
        Subresource::Status(status) => updated["status"] = status.clone(),
    }
    if updated == current || dry_run {
        return Ok(updated);
    }
    settle(conn, updated, &current)
}

/// A namespace's `spec.finalizers`.
pub fn spec_finalizers(namespace: &Value) -> Vec<String> {
    crate::apimachinery::object_meta::strings_list(namespace.pointer("/spec/finalizers"))
}

/// Sets `namespace`'s `spec.finalizers` (an empty list leaves `spec: {}`, as
/// Go encodes it).
fn set_spec_finalizers(namespace: &mut Value, finalizers: Vec<String>) {
    if !namespace["spec"].is_object() {
        namespace["spec"] = json!({});
    }
    let Some(spec) = namespace["spec"].as_object_mut() else {
        return;
    };
    if finalizers.is_empty() {
        spec.remove("finalizers");
    } else {
        spec.insert("finalizers".into(), json!(finalizers));
    }
}

/// Whether `namespace` holds finalizers of either kind.
fn held(namespace: &Value) -> bool {
    ["/metadata/finalizers", "/spec/finalizers"]
        .iter()
        .any(|p| {
            namespace
                .pointer(p)
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty())
        })
}

/// The number of objects in namespace `name`.
fn objects_in(conn: &Connection, name: &str) -> Result<i64, StoreError> {
    conn.query_row(
        "SELECT COUNT(*) FROM objects WHERE namespace = ?1",
        [name],
        |r| r.get(0),
    )
    .map_err(internal)
}

/// Stores `namespace`'s change from `previous`, or — Terminating, with no
/// finalizer of either kind and no objects left — removes it, as
/// kube-apiserver deletes a namespace during the update that clears its
/// last finalizer. Returns the namespace as stored or as removed.
fn settle(conn: &Connection, namespace: Value, previous: &Value) -> Result<Value, StoreError> {
    let name = namespace["metadata"]["name"].as_str().unwrap_or_default();
    if phase(&namespace) == Phase::Terminating && !held(&namespace) && objects_in(conn, name)? == 0
    {
        remove(conn, namespace, previous)
    } else {
        insert(conn, namespace, Some(previous))
    }
}

/// Removes `namespace` (as last changed from `previous`) with a resourceVersion
/// of its own and its DELETED event.
fn remove(conn: &Connection, mut namespace: Value, previous: &Value) -> Result<Value, StoreError> {
    let name = namespace["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let tx = conn.unchecked_transaction().map_err(internal)?;
    conn.execute("DELETE FROM namespaces WHERE name = ?1", [&name])
        .map_err(internal)?;
    let revision = bump(conn)?;
    namespace["metadata"]["resourceVersion"] = json!(revision.to_string());
    namespace_history::record(
        conn,
        EventKind::Deleted,
        revision,
        &namespace,
        Some(previous),
    )?;
    tx.commit().map_err(internal)?;
    Ok(namespace)
}

/// Marks namespace `name` Terminating (once) and returns it.
pub(super) fn terminate(conn: &Connection, name: &str) -> Result<Value, StoreError> {
    let current = load(conn, name)?.ok_or(StoreError::NotFound)?;
    if current.pointer("/metadata/deletionTimestamp").is_some() {
        return Ok(current);
    }
    let mut namespace = current.clone();
    namespace["metadata"]["deletionTimestamp"] = json!(now());
    namespace["status"]["phase"] = json!("Terminating");
    insert(conn, namespace, Some(&current))
}

/// Where a Terminating namespace's deletion stands after [`finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// Removed (or already gone).
    Gone,
    /// Objects are left in it (held by their finalizers, or not deleted yet).
    ContentLeft,
    /// Its content is gone and [`CONTENT_FINALIZER`] with it; other
    /// finalizers hold it until clients remove them (the update that removes
    /// the last one removes the namespace). Also said of a namespace that is
    /// not Terminating (nothing to finish).
    Held,
}

/// The namespace controller's last step for Terminating namespace `name`:
/// once no object is left in it, [`CONTENT_FINALIZER`] leaves its
/// `spec.finalizers` and, if no other finalizer holds it, the namespace goes.
pub(super) fn finish(conn: &Connection, name: &str) -> Result<Finish, StoreError> {
    let Some(current) = load(conn, name)? else {
        return Ok(Finish::Gone);
    };
    if phase(&current) != Phase::Terminating {
        return Ok(Finish::Held);
    }
    if objects_in(conn, name)? > 0 {
        return Ok(Finish::ContentLeft);
    }
    let mut finalized = current.clone();
    let left: Vec<String> = spec_finalizers(&current)
        .into_iter()
        .filter(|f| f != CONTENT_FINALIZER)
        .collect();
    set_spec_finalizers(&mut finalized, left);
    if held(&finalized) {
        // Kept by other finalizers: the controller's last pass found
        // nothing left, and its conditions say so.
        with_conditions(&mut finalized, &Remaining::default());
        if finalized != current {
            insert(conn, finalized, Some(&current))?;
        }
        return Ok(Finish::Held);
    }
    remove(conn, finalized, &current)?;
    Ok(Finish::Gone)
}

/// Sets the deletion conditions of `namespace` for `remaining`
/// ([`namespace_conditions::updated`]), if they change.
fn with_conditions(namespace: &mut Value, remaining: &Remaining) {
    let existing = namespace
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(conditions) = namespace_conditions::updated(&existing, remaining, &now()) {
        namespace["status"]["conditions"] = Value::Array(conditions);
    }
}

/// Records what a pass over Terminating namespace `name` found `remaining`
/// in it as its deletion conditions; whether that changed the namespace.
pub(super) fn report_content(
    conn: &Connection,
    name: &str,
    remaining: &Remaining,
) -> Result<bool, StoreError> {
    let Some(current) = load(conn, name)? else {
        return Ok(false);
    };
    if phase(&current) != Phase::Terminating {
        return Ok(false);
    }
    let mut reported = current.clone();
    with_conditions(&mut reported, remaining);
    if reported == current {
        return Ok(false);
    }
    insert(conn, reported, Some(&current))?;
    Ok(true)
}

/// The objects (stored releases) in namespace `name`.
pub(super) fn objects_of(conn: &Connection, name: &str) -> Result<Vec<Value>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT body FROM objects WHERE namespace = ?1 ORDER BY name")
        .map_err(internal)?;
    let bodies: Vec<String> = stmt
        .query_map([name], |r| r.get::<_, String>(0))
        .map_err(internal)?
        .collect::<Result<_, _>>()
        .map_err(internal)?;
    bodies
        .iter()
        .map(|b| serde_json::from_str(b).map_err(internal))
        .collect()
}

/// The names of the objects in namespace `name`.
pub(super) fn object_names_in(conn: &Connection, name: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT name FROM objects WHERE namespace = ?1 ORDER BY name")
        .map_err(internal)?;
    stmt.query_map([name], |r| r.get::<_, String>(0))
        .map_err(internal)?
        .collect::<Result<_, _>>()
        .map_err(internal)
}
