//! The `v1` namespaces resource of `serve --standalone` (there is no
//! kube-apiserver to serve it): discovery under `/api`, and get, list,
//! watch, create, update, patch and delete of
//! [`crate::storage::namespace_store`]'s namespaces, so that `kubectl create
//! ns`, `get ns [-w]`, `apply -f ns.yaml` (again and again, client- or
//! server-side), `label`/`annotate ns` and `delete ns` work.
//!
//! A namespace keeps the metadata a client gives it (labels, annotations,
//! finalizers, ownerReferences, generateName) and tracks field managers in
//! managedFields as kube-apiserver does; `spec` and `status` are the
//! server's (writes leave them as they are). PATCH takes merge patch, JSON
//! patch, server-side apply and strategic merge patch, the last read as a
//! merge patch with its `$` directives left out, except that
//! `metadata.finalizers` merge as a set (as strategic merge patch merges
//! them); the writes live in `namespaces/write.rs`, the watch (sent as the
//! store tells of changes) in `namespaces/watch.rs`.
//!
//! Lists page by `limit` with `continue` tokens and read the past with
//! `resourceVersionMatch=Exact`, both from the store's kept history
//! ([`listed`]).
//!
//! A namespace's `spec.finalizers` are the client's with `kubernetes` added
//! on create; updates and patches leave them, `PUT
//! /api/v1/namespaces/<name>/finalize` sets them (with the metadata), as
//! kube-apiserver's finalize subresource does. Its `status` subresource is
//! kube-apiserver's too: get, and update or patch of the status (with the
//! metadata; `spec` stays), its phase held to its deletion (`Active`, or
//! `Terminating` once deleted), its conditions merged by `type` under a
//! strategic merge patch.
//!
//! Deleting a namespace marks it `Terminating` and answers; like
//! kube-controller-manager's namespace controller, a background task then
//! deletes every app in it — after [`CONTENT_DELETION_DELAY`], so that
//! deletes sent right after the namespace's (`kubectl delete -f` of a
//! namespace and its apps) still find their apps, as they do in a cluster —
//! and once nothing is left in it (apps held by finalizers keep it
//! `Terminating` until they go, its deletion conditions saying what is
//! left, as the controller's do) takes `kubernetes` off its `spec.finalizers`
//! and removes it, unless other finalizers (`spec` or `metadata`) hold it:
//! then the write that removes the last one removes it, as in a cluster. A
//! server started over a store with Terminating namespaces finishes their
//! deletion ([`resume_deletions`]). Unlike kube-apiserver, a namespace whose
//! apps remain (held by their finalizers) is not removed by a write that
//! clears its finalizers, nor by a second delete: it goes with its last app
//! (kube-apiserver would leave the apps orphaned in etcd).
//! In cluster mode the cluster serves namespaces and none of this is
//! reached. The OpenAPI documents describe get, list, create and delete
//! (`openapi/namespaces.rs`), for `kubectl explain ns` and kubectl's
//! validation of Namespace manifests; they declare no PATCH operation, so
//! that kubectl keeps validating manifests itself.

mod content;
mod watch;
mod write;

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use serde_json::{Value, json};

use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::meta_decode::{self, Text};
use crate::apimachinery::object_meta;
use crate::apimachinery::protobuf_meta;
use crate::apimachinery::query::Query;
use crate::apimachinery::request_info::{ResourceRequest, Verb};
use crate::apimachinery::status::ApiError;
use crate::apiserver::negotiate::{self, IncludeObject, Representation};
use crate::apiserver::response::{self, Body};
use crate::apiserver::table;
use crate::kinds::Registry;
use crate::storage::StoreError;
use crate::storage::embedded_store::EmbeddedStore;
use crate::storage::namespace_store::{self, DEFAULT_NAMESPACE, Finish, Phase};
use write::Target;

const GROUP_RESOURCE: &str = "namespaces";

/// `GET /api`.
pub(crate) fn api_versions() -> Response<Body> {
    response::json(
        StatusCode::OK,
        &json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
        }),
    )
}

/// The verbs of `namespaces` (no `deletecollection`, as kube-apiserver's).
const NAMESPACE_VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];
/// The verbs of `namespaces/finalize`.
const FINALIZE_VERBS: [&str; 1] = ["update"];
/// The verbs of `namespaces/status`.
const STATUS_VERBS: [&str; 3] = ["get", "patch", "update"];

/// `GET /api/v1`.
pub(crate) fn api_resource_list() -> Response<Body> {
    response::json(
        StatusCode::OK,
        &json!({
            "kind": "APIResourceList",
            "groupVersion": "v1",
            "resources": [{
                "name": "namespaces",
                "singularName": "namespace",
                "namespaced": false,
                "kind": "Namespace",
                "verbs": NAMESPACE_VERBS,
                "shortNames": ["ns"],
            }, {
                "name": "namespaces/finalize",
                "singularName": "",
                "namespaced": false,
                "kind": "Namespace",
                "verbs": FINALIZE_VERBS,
            }, {
                "name": "namespaces/status",
                "singularName": "",
                "namespaced": false,
                "kind": "Namespace",
                "verbs": STATUS_VERBS,
            }],
        }),
    )
}

/// `GET /api` as aggregated discovery (`apidiscovery.k8s.io/v2`): the core
/// group (no name) with the same resources as [`api_resource_list`], so
/// that kubectl learns them from `/api` alone, as from kube-apiserver,
/// instead of falling back to `/api/v1`.
pub(crate) fn api_aggregated() -> Value {
    // kube-apiserver writes the core group's response kinds with an empty
    // version (its legacy group installs them so; measured on 1.36).
    let kind = json!({"group": "", "version": "", "kind": "Namespace"});
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": [{
            "metadata": {},
            "versions": [{
                "version": "v1",
                "resources": [{
                    "resource": "namespaces",
                    "responseKind": kind,
                    "scope": "Cluster",
                    "singularResource": "namespace",
                    "verbs": NAMESPACE_VERBS,
                    "shortNames": ["ns"],
                    "subresources": [{
                        "subresource": "finalize",
                        "responseKind": kind,
                        "verbs": FINALIZE_VERBS,
                    }, {
                        "subresource": "status",
                        "responseKind": kind,
                        "verbs": STATUS_VERBS,
                    }],
                }],
                "freshness": "Current",
            }],
        }],
    })
}

/// Whether `req` is for the namespaces resource.
pub(crate) fn is_namespaces(req: &ResourceRequest) -> bool {
    req.group.is_empty() && req.version == "v1" && req.resource == "namespaces"
}

/// How long after a namespace's deletion its apps are deleted.
pub(crate) const CONTENT_DELETION_DELAY: Duration = Duration::from_secs(1);

/// One request for `/api/v1/namespaces[/<name>[/finalize|/status]]`.
pub(crate) async fn handle(
    store: &EmbeddedStore,
    registry: &Registry,
    req: &ResourceRequest,
    query: &Query,
    headers: &HeaderMap,
    body: &Bytes,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> Result<Response<Body>, ApiError> {
    // `/api/v1/namespaces/<name>/finalize` and `…/status`: in its own
    // namespace.
    let of_itself = req.namespace.is_some() && req.namespace == req.name;
    let finalize = of_itself && req.subresource.as_deref() == Some("finalize");
    let status = of_itself && req.subresource.as_deref() == Some("status");
    if (req.namespace.is_some() || req.subresource.is_some()) && !finalize && !status {
        return Err(ApiError::not_found_route(
            "the server could not find the requested resource",
        ));
    }
    let accept = headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    let include = query.get("includeObject").map(String::as_str);
    match (req.verb, req.name.as_deref()) {
        (Verb::Update, Some(name)) if finalize => {
            write::put(store, name, query, headers, body, Target::Finalize)
        }
        _ if finalize => Err(crate::apiserver::response::method_not_allowed()),
        (Verb::Update, Some(name)) if status => {
            write::put(store, name, query, headers, body, Target::Status)
        }
        (Verb::Patch, Some(name)) if status => {
            write::patch(store, name, query, headers, body, Target::Status)
        }
        // A get of `…/status` is one of the namespace, as kube-apiserver's.
        _ if status && !matches!(req.verb, Verb::Get) => {
            Err(crate::apiserver::response::method_not_allowed())
        }
        (Verb::List, None) => list(store, query, accept, include),
        (Verb::Get, Some(name)) => {
            let found = store.namespace(name).map_err(store_error)?;
            if let Some(ns) = &found {
                finish_if_terminating(store, ns);
            }
            let ns = store
                .namespace(name)
                .map_err(store_error)?
                .ok_or_else(|| ApiError::not_found(GROUP_RESOURCE, name))?;
            Ok(match negotiate::negotiate(accept, include, false)? {
                Representation::Table { include_object } => {
                    let table = namespace_table(&[&ns], include_object, object_revision(&ns));
                    response::json(StatusCode::OK, &table)
                }
                Representation::PartialObjectMetadata
                | Representation::PartialObjectMetadataList => {
                    response::json(StatusCode::OK, &table::partial_object_metadata(&ns))
                }
                Representation::Json => response::json(StatusCode::OK, &ns),
            })
        }
        (Verb::Create, None) => create(store, query, headers, body),
        (Verb::Update, Some(name)) => {
            write::put(store, name, query, headers, body, Target::Namespace)
        }
        (Verb::Patch, Some(name)) => {
            write::patch(store, name, query, headers, body, Target::Namespace)
        }
        (Verb::Delete, Some(name)) => delete(store, registry, name, query, body).await,
        (Verb::Watch, name) => watch::watch(store, name, query, accept, shutdown),
        _ => Err(crate::apiserver::response::method_not_allowed()),
    }
}

/// A Namespace sent as the body of a create or update: protobuf (what
/// kubectl's client may send for core kinds) or JSON/YAML, of kind Namespace
/// and with every field of its Go type (else kube-apiserver's 400).
pub(super) fn namespace_body(headers: &HeaderMap, body: &Bytes) -> Result<Value, ApiError> {
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if content_type.is_some_and(|c| c.starts_with(protobuf_meta::CONTENT_TYPE)) {
        let object = protobuf_meta::decode(body).map_err(ApiError::bad_request)?;
        check_kind(&object)?;
        return Ok(object);
    }
    let object = super::parse_typed_body(body, content_type, "Namespace")?;
    check_kind(&object)?;
    // YAML reaches kube-apiserver's decoder as JSON encoded from a map.
    let text = match content_type.is_some_and(|c| c.contains("yaml")) {
        true => Text::Reencoded,
        false => Text::Body,
    };
    if let Some(error) = object
        .as_object()
        .and_then(|object| meta_decode::namespace_decode_error(object, text))
    {
        return Err(ApiError::bad_request(format!(
            "Namespace in version \"v1\" cannot be handled as a Namespace: {error}"
        )));
    }
    Ok(object)
}

fn create(
    store: &EmbeddedStore,
    query: &Query,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    super::options::validate(query, super::options::Write::Create)?;
    let object = namespace_body(headers, body)?;
    let mut meta = object
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    object_meta::check_types(&meta).map_err(ApiError::bad_request)?;
    let generate = meta
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if name.is_empty() && !generate.is_empty() {
        name = generate_name(&generate);
        meta.insert("name".into(), json!(name));
    }
    let mut errors = object_meta::validate_namespace(&meta);
    let spec_finalizers = namespace_store::spec_finalizers(&object);
    errors.extend(object_meta::validate_namespace_spec_finalizers(
        &spec_finalizers,
    ));
    if name.is_empty() {
        errors.insert(
            0,
            crate::kinds::schema::FieldError {
                field: "metadata.name".into(),
                kind: crate::kinds::schema::FieldErrorKind::Required,
                bad_value: None,
                detail: "name or generateName is required".into(),
            },
        );
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid("Namespace", "", &name, &errors));
    }
    let dry_run = dry_run(query);
    let mut namespace = namespace_store::new_namespace(&name, &meta, &spec_finalizers);
    if !generate.is_empty() {
        namespace["metadata"]["generateName"] = json!(generate);
    }
    write::record_managed_fields(None, &mut namespace, &write::field_manager(query, headers));
    match store.create_namespace(namespace, dry_run) {
        Ok(ns) => Ok(response::json(StatusCode::CREATED, &ns)),
        Err(e) => Err(create_error(e, &name)),
    }
}

/// The `Status` of a failed create of namespace `name`: 409 when it
/// exists (`object is being deleted: …` while it is Terminating, as
/// kube-apiserver says it).
pub(super) fn create_error(e: StoreError, name: &str) -> ApiError {
    match e {
        StoreError::AlreadyExists { being_deleted } => {
            ApiError::already_exists(GROUP_RESOURCE, name).when_being_deleted(being_deleted)
        }
        e => store_error(e),
    }
}

/// A body's kind, when it has one, must be Namespace.
fn check_kind(object: &Value) -> Result<(), ApiError> {
    match object.get("kind").and_then(Value::as_str) {
        Some(kind) if kind != "Namespace" => Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind (Namespace)"
        ))),
        _ => Ok(()),
    }
}

/// Whether a write is a dry run: `dryRun` given (the options' validation
/// has checked it holds only `All`).
fn dry_run(query: &Query) -> bool {
    query.contains_key("dryRun")
}

/// kube-apiserver's generateName: the base cut to 58 characters plus five
/// random characters from an alphabet without vowels or look-alikes.
fn generate_name(base: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let base: String = base.chars().take(58).collect();
    let random = uuid::Uuid::new_v4();
    let suffix: String = random
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect();
    format!("{base}{suffix}")
}

/// Namespaces kube-apiserver's `NamespaceLifecycle` admission refuses to
/// delete.
const IMMORTAL: [&str; 3] = [DEFAULT_NAMESPACE, "kube-system", "kube-public"];

async fn delete(
    store: &EmbeddedStore,
    registry: &Registry,
    name: &str,
    query: &Query,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    // The options are read and validated first, as kube-apiserver's
    // handler reads them before admission.
    let options = super::delete::delete_options(body, query)?;
    if IMMORTAL.contains(&name) {
        // Admission comes before dry-run and before the existence check.
        return Err(ApiError::forbidden(format!(
            "namespaces \"{name}\" is forbidden: this namespace may not be deleted"
        )));
    }
    if options.dry_run {
        let ns = store
            .namespace(name)
            .map_err(store_error)?
            .ok_or_else(|| ApiError::not_found(GROUP_RESOURCE, name))?;
        return Ok(response::json(StatusCode::OK, &ns));
    }
    let was_terminating =
        store.namespace_phase(name).map_err(store_error)? == Some(Phase::Terminating);
    let ns = match store.terminate_namespace(name) {
        Ok(ns) => ns,
        Err(StoreError::NotFound) => return Err(ApiError::not_found(GROUP_RESOURCE, name)),
        Err(e) => return Err(store_error(e)),
    };
    if !was_terminating {
        delete_content_later(store, registry, &ns, CONTENT_DELETION_DELAY);
    }
    Ok(response::json(StatusCode::OK, &ns))
}

/// Deletes the apps of Terminating namespace `name` after `delay`, then,
/// checking every second until no app is left (apps held by finalizers
/// stay until theirs are removed; meanwhile its deletion conditions say
/// what is left, [`content`]), takes the `kubernetes` finalizer off it
/// and removes it unless other finalizers hold it: then the write that
/// removes the last one removes the namespace.
///
/// The task acts on `namespace` only (by its uid): if it went meanwhile
/// (removed as soon as it was empty) and one of its name was created, that
/// one and its apps are left alone.
fn delete_content_later(
    store: &EmbeddedStore,
    registry: &Registry,
    namespace: &Value,
    delay: Duration,
) {
    let name = object_name(namespace).to_owned();
    let uid = namespace["metadata"]["uid"].clone();
    let store = store.clone();
    let registry = registry.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let still_this_one = || {
            store.namespace(&name).ok().flatten().is_some_and(|ns| {
                ns["metadata"]["uid"] == uid && namespace_store::phase(&ns) == Phase::Terminating
            })
        };
        if !still_this_one() {
            return;
        }
        if let Err(e) = delete_content(&store, &name).await {
            tracing::warn!("delete the apps of namespace {name}: {e}");
        }
        loop {
            if !still_this_one() {
                return;
            }
            match store.finish_namespace(&name) {
                Ok(Finish::Gone | Finish::Held) => return,
                Ok(Finish::ContentLeft) => {
                    let reported = content::remaining_in(&store, &registry, &name)
                        .and_then(|left| store.report_namespace_content(&name, &left));
                    if let Err(e) = reported {
                        tracing::warn!("report what is left in namespace {name}: {e}");
                    }
                }
                Err(e) => {
                    tracing::warn!("finish deleting namespace {name}: {e}");
                    return;
                }
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
}

async fn delete_content(store: &EmbeddedStore, name: &str) -> Result<(), StoreError> {
    for object in store.object_names_in(name)? {
        match store.delete(name, &object, &Default::default()).await {
            Ok(_) | Err(StoreError::NotFound) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Finishes the deletion of every namespace a store holds as Terminating
/// (a server stopped before their apps were gone); called when a
/// standalone server starts.
pub(crate) fn resume_deletions(store: &EmbeddedStore, registry: &Registry) {
    let Ok(namespaces) = store.namespaces() else {
        return;
    };
    for ns in namespaces {
        if namespace_store::phase(&ns) == Phase::Terminating {
            delete_content_later(store, registry, &ns, Duration::ZERO);
        }
    }
}

/// Finishes a Terminating namespace whose objects are gone (its
/// `kubernetes` finalizer, and the namespace if nothing else holds it) as
/// it is read, so that a get or list right after its apps went (or after a
/// restart interrupted its deletion) does not show it lingering.
fn finish_if_terminating(store: &EmbeddedStore, ns: &Value) {
    if ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating")
        && let Some(name) = ns.pointer("/metadata/name").and_then(Value::as_str)
        && let Err(e) = store.finish_namespace(name)
    {
        tracing::warn!("finish deleting namespace {name}: {e}");
    }
}

/// Refuses objects in a namespace that does not exist (404) or is being
/// deleted (403), as kube-apiserver's NamespaceLifecycle admission does.
pub(crate) fn admit_create(store: &EmbeddedStore, namespace: &str) -> Result<(), ApiError> {
    match store.namespace_phase(namespace).map_err(store_error)? {
        Some(Phase::Active) => Ok(()),
        Some(Phase::Terminating) => Err(ApiError::namespace_terminating(
            namespace,
            format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ),
        )),
        None => Err(ApiError::not_found(GROUP_RESOURCE, namespace)),
    }
}

/// A namespace's name.
fn object_name(ns: &Value) -> &str {
    ns.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A list of namespaces (JSON, Table or metadata), paged by `limit`.
fn list(
    store: &EmbeddedStore,
    query: &Query,
    accept: Option<&str>,
    include: Option<&str>,
) -> Result<Response<Body>, ApiError> {
    let items = store.namespaces().map_err(store_error)?;
    for ns in &items {
        finish_if_terminating(store, ns);
    }
    let limit = super::read::page_limit_of(query)?;
    super::read::validate_list_query(query, false)?;
    let (mut items, revision, after) = listed(store, query)?;
    if let Some(selector) = query.get("fieldSelector").filter(|s| !s.is_empty()) {
        let selector =
            FieldSelector::parse_for_namespaces(selector).map_err(ApiError::bad_request)?;
        // Every term (`metadata.name!=default` too).
        items.retain(|ns| selector.matches_namespace(ns));
    }
    if let Some(selector) = query.get("labelSelector").filter(|s| !s.is_empty()) {
        let selector = LabelSelector::parse(selector).map_err(ApiError::bad_request)?;
        items.retain(|ns| {
            selector.matches(ns.pointer("/metadata/labels").and_then(Value::as_object))
        });
    }
    let selected = query.get("fieldSelector").is_some_and(|s| !s.is_empty())
        || query.get("labelSelector").is_some_and(|s| !s.is_empty());
    // The list's resourceVersion, from which a watch (`kubectl get
    // ns -w`) goes on without repeating what the list said.
    let mut list_meta = json!({"resourceVersion": revision.to_string()});
    if let Some(after) = &after {
        items.retain(|ns| object_name(ns) > after.as_str());
    }
    if items.len() > limit {
        let rest = items.split_off(limit);
        let last = items.last().map(object_name).unwrap_or_default();
        let token = super::read::Continue::after_namespace(revision, last);
        list_meta["continue"] = json!(super::read::encode_continue(&token));
        // As etcd's count of the keys after the page: only when no
        // selector filters them.
        if !selected {
            list_meta["remainingItemCount"] = json!(rest.len());
        }
    }
    let refs: Vec<&Value> = items.iter().collect();
    Ok(match negotiate::negotiate(accept, include, true)? {
        Representation::Table { include_object } => {
            let mut table = namespace_table(&refs, include_object, &revision.to_string());
            for key in ["continue", "remainingItemCount"] {
                if let Some(v) = list_meta.get(key) {
                    table["metadata"][key] = v.clone();
                }
            }
            response::json(StatusCode::OK, &table)
        }
        Representation::PartialObjectMetadataList | Representation::PartialObjectMetadata => {
            response::json(
                StatusCode::OK,
                &table::partial_object_metadata_list(&refs, list_meta),
            )
        }
        Representation::Json => response::json(
            StatusCode::OK,
            &json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": list_meta, "items": items}),
        ),
    })
}

/// The namespaces a list reads, its resourceVersion and the name a
/// `continue` token goes on after, as kube-apiserver reads them: the
/// latest (also for `resourceVersion=0`, and for one not newer than the
/// latest); with `resourceVersionMatch=Exact` the namespaces as they were
/// then; with a `continue` token the snapshot it names — both rebuilt from
/// the kept history, and 410 Expired before it.
fn listed(
    store: &EmbeddedStore,
    query: &Query,
) -> Result<(Vec<Value>, u64, Option<String>), ApiError> {
    use crate::storage::app_store::ReadAt;
    if let Some(text) = query.get("continue").filter(|c| !c.is_empty()) {
        let token = super::read::decode_continue(text, None)?;
        if !token.ns.is_empty() {
            return Err(super::read::invalid_continue(super::read::NOT_OURS));
        }
        if query
            .get("resourceVersion")
            .is_some_and(|r| !r.is_empty() && r != "0")
        {
            // kube-apiserver's watch cache words it (a 400), not its
            // storage (a custom resource's 422).
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let items = store
            .namespaces_as_of(token.rv)
            .map_err(store_error)?
            .ok_or_else(|| {
                ApiError::expired(
                    "The provided continue parameter is too old to display a consistent list result. You can \
                     start a new list without the continue parameter.",
                )
            })?;
        return Ok((items, token.rv, Some(token.name)));
    }
    let (items, current) = store.namespaces_at().map_err(store_error)?;
    match super::read::read_at_query(query)? {
        ReadAt::Latest | ReadAt::Cached => Ok((items, current, None)),
        ReadAt::NotOlderThan(wanted) | ReadAt::Exact(wanted) if wanted > current => {
            Err(ApiError::too_large_resource_version(wanted, current))
        }
        ReadAt::NotOlderThan(_) => Ok((items, current, None)),
        ReadAt::Exact(wanted) => {
            let items = store
                .namespaces_as_of(wanted)
                .map_err(store_error)?
                .ok_or_else(|| {
                    ApiError::expired("The resourceVersion for the provided list is too old.")
                })?;
            Ok((items, wanted, None))
        }
    }
}

/// A namespace's resourceVersion.
pub(super) fn object_revision(ns: &Value) -> &str {
    ns.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `items` as kube-apiserver's Table of namespaces, whose resourceVersion
/// is the list's (or the one object's): a `kubectl get ns -w` watches on
/// from it.
pub(super) fn namespace_table(
    items: &[&Value],
    include_object: IncludeObject,
    resource_version: &str,
) -> Value {
    let now = jiff::Timestamp::now();
    let rows: Vec<Value> = items
        .iter()
        .map(|ns| {
            let text = |p: &str| ns.pointer(p).and_then(Value::as_str).unwrap_or_default();
            let object = match include_object {
                IncludeObject::None => Value::Null,
                IncludeObject::Metadata => table::partial_object_metadata(ns),
                IncludeObject::Object => (*ns).clone(),
            };
            json!({
                "cells": [
                    text("/metadata/name"),
                    text("/status/phase"),
                    table::human_readable_date(text("/metadata/creationTimestamp"), now),
                ],
                "object": object,
            })
        })
        .collect();
    let column = |name: &str, format: &str, description: &str| json!({"name": name, "type": "string", "format": format, "description": description, "priority": 0});
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": [
            column("Name", "name", "Name must be unique within a namespace."),
            column("Status", "", "The status of the namespace"),
            column("Age", "", "CreationTimestamp is a timestamp representing the server time when this object was created."),
        ],
        "rows": rows,
    })
}

/// A store error of a namespace write: one kube-apiserver would answer
/// too (etcd's refusal of a too large object) keeps its code and message,
/// anything else is a 500 naming namespaces.
pub(super) fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::Upstream {
            code,
            reason,
            message,
            retry_after,
        } => ApiError::upstream(code, &reason, message, retry_after),
        e => ApiError::internal(format!("namespaces: {e}")),
    }
}
