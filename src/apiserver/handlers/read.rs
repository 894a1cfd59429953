//! get and list, served from the watch cache: resourceVersion semantics
//! (unset: consistent with upstream's current state, `0`: whatever the cache
//! holds, `NotOlderThan`, `Exact`), `limit`/`continue` over a kept
//! snapshot (410 Expired once it is gone), label and field selectors, and the
//! representations kubectl and controllers ask for (JSON, Table,
//! PartialObjectMetadata(List)).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::Call;
use crate::apiserver::negotiate::{self, Representation};
use crate::apiserver::response::{self, Body};
use crate::apiserver::selectors::{FieldSelector, LabelSelector};
use crate::apiserver::status::{ApiError, from_store};
use crate::apiserver::table;
use crate::kinds::registry::ServedKind;
use crate::storage::cache::{Key, Objects, Stored, snapshot_is_current};
use crate::storage::convert::{self, AppView};
use crate::storage::{ReadScope, UpstreamState};

/// get (also `/status`).
pub(super) async fn get(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let namespace = call.req.namespace.as_deref().unwrap_or_default();
    let name = call.req.name.as_deref().unwrap_or_default();
    let repr = negotiate::negotiate(
        call.accept(),
        call.query.get("includeObject").map(String::as_str),
        false,
    )?;
    if call
        .query
        .get("resourceVersion")
        .is_none_or(|rv| rv.is_empty())
    {
        ensure_current(call, Some(name)).await?;
    }
    let view = current_view(call, namespace, name)?;
    if repr == Representation::Json {
        return Ok(response::encoded_json(
            StatusCode::OK,
            view.json.as_bytes().to_vec(),
            negotiate::content_type_of(repr),
        ));
    }
    let app = view.value();
    let body = match repr {
        Representation::Json => app,
        Representation::Table { include_object } => table::build_table(
            &call.kind.resolved,
            &[&app],
            include_object,
            json!({}),
            true,
        ),
        Representation::PartialObjectMetadata => table::partial_object_metadata(&app),
        Representation::PartialObjectMetadataList => {
            return Err(ApiError::not_acceptable(
                "a single object cannot be a PartialObjectMetadataList",
            ));
        }
    };
    Ok(response::json_with(
        StatusCode::OK,
        &body,
        negotiate::content_type_of(repr),
    ))
}

/// How long a read with no resourceVersion waits for the cache to catch up
/// with upstream (kube-apiserver waits as long for its own cache).
const CONSISTENT_READ_WAIT: Duration = Duration::from_secs(3);

/// Makes a read with no resourceVersion ("the most recent state") consistent:
/// asks upstream where it is now within the request's scope, then waits for
/// the cache to be there. `name` narrows the scope to one app.
pub(super) async fn ensure_current(call: &Call<'_>, name: Option<&str>) -> Result<(), ApiError> {
    let scope = read_scope(call, name);
    let upstream = call
        .state
        .backend
        .current_state(&scope)
        .await
        .map_err(|e| from_store(&e, &call.group_resource(), name.unwrap_or_default()))?;
    wait_for_cache(call, &upstream, &scope).await
}

/// The HelmReleases a read of this request covers: its kind, its namespace
/// (or all), and `name` (one app) if given.
fn read_scope(call: &Call<'_>, name: Option<&str>) -> ReadScope {
    let resolved = &call.kind.resolved;
    ReadScope {
        kind: resolved.definition.kind.clone(),
        namespace: call.req.namespace.clone(),
        release: name.map(|n| convert::release_name(resolved, n)),
    }
}

/// Waits until the cache reflects `upstream` within `scope`; kube-apiserver's
/// 504 when it does not in time.
async fn wait_for_cache(
    call: &Call<'_>,
    upstream: &UpstreamState,
    scope: &ReadScope,
) -> Result<(), ApiError> {
    let cache = &call.state.cache;
    if cache
        .wait_until_current(upstream, scope, CONSISTENT_READ_WAIT)
        .await
    {
        Ok(())
    } else {
        Err(ApiError::timeout(format!(
            "Too large resource version: {}, current: {}",
            upstream.revision,
            cache.revision()
        )))
    }
}

/// Whether a list asks for the most recent state (no resourceVersion, no
/// continue token).
fn is_most_recent(call: &Call<'_>) -> bool {
    let unset = |key: &str| call.query.get(key).is_none_or(|v| v.is_empty());
    unset("resourceVersion") && unset("resourceVersionMatch") && unset("continue")
}

/// The app `name` as the cache holds it, or 404.
pub(super) fn current_app(call: &Call<'_>, namespace: &str, name: &str) -> Result<Value, ApiError> {
    current_view(call, namespace, name).map(|view| view.value())
}

/// [`current_app`], as the view kept with the cached object.
fn current_view(call: &Call<'_>, namespace: &str, name: &str) -> Result<Arc<AppView>, ApiError> {
    let kind = &call.kind;
    call.state
        .cache
        .stored(namespace, &convert::release_name(&kind.resolved, name))
        .and_then(|stored| stored.app_view(&kind.resolved, kind.stamp))
        .ok_or_else(|| ApiError::not_found(&call.group_resource(), name))
}

/// Selectors and paging of a list or watch.
pub(super) struct Filter {
    pub(super) namespace: Option<String>,
    pub(super) labels: LabelSelector,
    pub(super) fields: FieldSelector,
}

impl Filter {
    pub(super) fn from_call(call: &Call<'_>) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(
            call.query
                .get("labelSelector")
                .map(String::as_str)
                .unwrap_or(""),
        )
        .map_err(ApiError::bad_request)?;
        let fields = FieldSelector::parse(
            call.query
                .get("fieldSelector")
                .map(String::as_str)
                .unwrap_or(""),
        )
        .map_err(ApiError::bad_request)?;
        Ok(Filter {
            namespace: call.req.namespace.clone(),
            labels,
            fields,
        })
    }

    /// The app for `stored` (at `key`) if it is of this kind and matches;
    /// HelmReleases of other kinds are skipped without parsing them, and the
    /// app itself is the one kept with the cached object.
    pub(super) fn app(
        &self,
        kind: &ServedKind,
        (namespace, release): &Key,
        stored: &Stored,
    ) -> Option<Arc<AppView>> {
        if stored.kind_label() != Some(kind.resolved.definition.kind.as_str()) {
            return None;
        }
        if self.namespace.as_ref().is_some_and(|ns| ns != namespace) {
            return None;
        }
        let name = convert::app_name(&kind.resolved, release)?;
        if !self.fields.matches(name, namespace) {
            return None;
        }
        let view = stored.app_view(&kind.resolved, kind.stamp)?;
        (self.labels.is_empty() || self.labels.matches(Some(&view.labels()))).then_some(view)
    }
}

/// A `continue` token: the snapshot revision and the last key returned.
#[derive(serde::Serialize, serde::Deserialize)]
struct Continue {
    rv: u64,
    ns: String,
    name: String,
}

fn encode_continue(token: &Continue) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(token).unwrap_or_default())
}

fn decode_continue(text: &str) -> Result<Continue, ApiError> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| ApiError::bad_request(format!("continue key is not valid: {text}")))
}

/// The snapshot a list reads, honouring resourceVersion semantics.
pub(super) async fn list_snapshot(call: &Call<'_>) -> Result<(Objects, u64), ApiError> {
    let rv = call
        .query
        .get("resourceVersion")
        .map(String::as_str)
        .unwrap_or("");
    let rv_match = call
        .query
        .get("resourceVersionMatch")
        .map(String::as_str)
        .unwrap_or("");
    let cache = &call.state.cache;
    match (rv, rv_match) {
        ("", "") => {
            ensure_current(call, None).await?;
            Ok(cache.snapshot())
        }
        ("0", "") | ("0", "NotOlderThan") => Ok(cache.snapshot()),
        ("", _) => Err(ApiError::invalid_query(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        )),
        (rv, "Exact") => {
            let rv: u64 = rv
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?;
            if rv > cache.revision() && !cache.wait_for_revision(rv, Duration::from_secs(3)).await {
                return Err(ApiError::timeout(format!(
                    "Too large resource version: {rv}, current: {}",
                    cache.revision()
                )));
            }
            cache.snapshot_at(rv).map(|o| (o, rv)).ok_or_else(|| {
                ApiError::expired(format!(
                    "too old resource version: {rv} ({})",
                    cache.revision()
                ))
            })
        }
        (rv, "" | "NotOlderThan") => {
            let rv: u64 = rv
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?;
            if rv > cache.revision() && !cache.wait_for_revision(rv, Duration::from_secs(3)).await {
                return Err(ApiError::timeout(format!(
                    "Too large resource version: {rv}, current: {}",
                    cache.revision()
                )));
            }
            Ok(cache.snapshot())
        }
        (_, other) => Err(ApiError::invalid_query(
            "resourceVersionMatch",
            &format!(
                "Unsupported value: \"{other}\": supported values: \"Exact\", \"NotOlderThan\""
            ),
        )),
    }
}

/// list.
pub(super) async fn list(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let repr = negotiate::negotiate(
        call.accept(),
        call.query.get("includeObject").map(String::as_str),
        true,
    )?;
    let filter = Filter::from_call(call)?;
    let limit: usize = match call.query.get("limit").map(String::as_str) {
        None | Some("") | Some("0") => usize::MAX,
        Some(l) => l
            .parse()
            .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
    };
    let (objects, revision, start_after) = match call
        .query
        .get("continue")
        .filter(|c| !c.is_empty())
    {
        Some(token) => {
            if call
                .query
                .get("resourceVersion")
                .is_some_and(|r| !r.is_empty() && r != "0")
            {
                return Err(ApiError::invalid_query(
                    "resourceVersion",
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let token = decode_continue(token)?;
            let objects = call.state.cache.snapshot_at(token.rv).ok_or_else(|| {
                ApiError::expired(
                    "The provided continue parameter is too old to display a consistent list result. You can start \
                     a new list without the continue parameter.",
                )
            })?;
            (objects, token.rv, Some((token.ns, token.name)))
        }
        None if is_most_recent(call) => return consistent_list(call, repr, &filter, limit).await,
        None => {
            let (objects, revision) = list_snapshot(call).await?;
            (objects, revision, None)
        }
    };
    render_list(call, repr, &filter, limit, &objects, revision, start_after)
}

/// A list with no resourceVersion, consistent with upstream: upstream is
/// asked where it stands (a metadata-only list of the scope) while the list
/// is rendered from the cache's current snapshot, so the check costs the
/// longer of the two rather than their sum. When the snapshot turns out to be
/// behind, the list waits for the cache and renders again.
async fn consistent_list(
    call: &Call<'_>,
    repr: Representation,
    filter: &Filter,
    limit: usize,
) -> Result<Response<Body>, ApiError> {
    let scope = read_scope(call, None);
    let probe = {
        let backend = call.state.backend.clone();
        let scope = scope.clone();
        tokio::spawn(async move { backend.current_state(&scope).await })
    };
    let cache = &call.state.cache;
    let (objects, revision) = cache.snapshot();
    let rendered = render_list(call, repr, filter, limit, &objects, revision, None);
    let upstream = probe
        .await
        .map_err(|e| ApiError::internal(format!("upstream state check: {e}")))?
        .map_err(|e| from_store(&e, &call.group_resource(), ""))?;
    if snapshot_is_current(&objects, revision, &upstream, &scope) {
        return rendered;
    }
    wait_for_cache(call, &upstream, &scope).await?;
    let (objects, revision) = cache.snapshot();
    render_list(call, repr, filter, limit, &objects, revision, None)
}

/// Renders one page of a list from `objects` (a snapshot at `revision`),
/// after `start_after` when continuing.
fn render_list(
    call: &Call<'_>,
    repr: Representation,
    filter: &Filter,
    limit: usize,
    objects: &Objects,
    revision: u64,
    start_after: Option<(String, String)>,
) -> Result<Response<Body>, ApiError> {
    // Plain JSON (the big lists: controllers, `kubectl get -o json`) is
    // encoded app by app as the scan goes, so a list of thousands never holds
    // every converted app at once; tables and metadata lists collect them.
    let streaming = matches!(repr, Representation::Json);
    let mut encoded = Vec::new();
    let mut items = Vec::new();
    let mut count = 0usize;
    let mut last_key = None;
    let mut more = false;
    let range = match &start_after {
        Some(key) => objects.range((
            std::ops::Bound::Excluded(key.clone()),
            std::ops::Bound::Unbounded,
        )),
        None => objects.range::<_, (String, String)>(..),
    };
    for (key, release) in range {
        if let Some(app) = filter.app(&call.kind, key, release) {
            if count == limit {
                more = true;
                break;
            }
            count += 1;
            if streaming {
                if count > 1 {
                    encoded.push(b',');
                }
                encoded.extend_from_slice(app.json.as_bytes());
            } else {
                items.push(app.value());
            }
            last_key = Some(key.clone());
        }
    }
    let mut list_meta = json!({"resourceVersion": revision.to_string()});
    if more && let Some((ns, name)) = last_key {
        list_meta["continue"] = json!(encode_continue(&Continue {
            rv: revision,
            ns,
            name
        }));
    }
    let refs: Vec<&Value> = items.iter().collect();
    let body = match repr {
        Representation::Table { include_object } => {
            table::build_table(&call.kind.resolved, &refs, include_object, list_meta, true)
        }
        Representation::PartialObjectMetadataList | Representation::PartialObjectMetadata => {
            table::partial_object_metadata_list(&refs, list_meta)
        }
        Representation::Json => {
            let d = &call.kind.resolved.definition;
            let head = json!({
                "apiVersion": call.kind.resolved.group_version(),
                "kind": format!("{}List", d.kind),
                "metadata": list_meta,
            });
            let mut bytes = serde_json::to_vec(&head).unwrap_or_default();
            bytes.pop(); // the closing brace
            bytes.reserve(encoded.len() + 12);
            bytes.extend_from_slice(b",\"items\":[");
            bytes.extend_from_slice(&encoded);
            bytes.extend_from_slice(b"]}");
            return Ok(response::encoded_json(
                StatusCode::OK,
                bytes,
                negotiate::content_type_of(repr),
            ));
        }
    };
    Ok(response::json_with(
        StatusCode::OK,
        &body,
        negotiate::content_type_of(repr),
    ))
}
