//! get and list, served from the watch cache: resourceVersion semantics
//! (unset: consistent with upstream's current state, `0`: whatever the cache
//! holds, `NotOlderThan`, `Exact`), `limit`/`continue` over a kept
//! snapshot (410 Expired once it is gone), label and field selectors, and the
//! representations kubectl and controllers ask for (JSON, Table,
//! PartialObjectMetadata(List)).

use base64::Engine as _;
use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::Call;
use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::query::Query;
use crate::apimachinery::status::ApiError;
use crate::apiserver::negotiate::{self, Representation};
use crate::apiserver::response::{self, Body};
use crate::apiserver::table;
use crate::storage::app_filter::AppFilter;
use crate::storage::app_store::{AppSnapshot, CheckedPosition, LatestPage, ReadAt};
use crate::storage::cache::Key;

/// get (also `/status`).
pub(super) async fn get(call: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let repr = negotiate::negotiate(
        call.accept(),
        call.query.get("includeObject").map(String::as_str),
        false,
    )?;
    check_resource_version(call)?;
    let apps = call.apps();
    match call.query.get("resourceVersion").map(String::as_str) {
        None | Some("") => {
            apps.ensure_current(call.req.namespace.as_deref(), Some(call.name()))
                .await?;
        }
        // Not older than that: once the cache has reached it (504 after
        // the wait a list's gets), never an older state.
        Some(rv) => {
            if let Ok(revision) = rv.parse::<u64>()
                && revision > 0
            {
                apps.wait_for_revision(revision).await?;
            }
        }
    }
    let view = apps.get(call.namespace(), call.name())?;
    if repr == Representation::Json {
        return Ok(super::app_json(
            StatusCode::OK,
            &view,
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

/// Whether a list asks for the most recent state (no resourceVersion, no
/// continue token).
fn is_most_recent(call: &Call<'_>) -> bool {
    let unset = |key: &str| call.query.get(key).is_none_or(|v| v.is_empty());
    unset("resourceVersion") && unset("resourceVersionMatch") && unset("continue")
}

/// The apps a list, watch or deletecollection selects: its kind, its
/// namespace (or all), and the `labelSelector` and `fieldSelector` of the
/// query (400 when either does not parse). A watch of one object
/// (`/watch/…/<plural>/<name>`, the one such request with a name) selects
/// that name, as kube-apiserver makes it `metadata.name=<name>`; a
/// `fieldSelector` beside it must pin the same name (else 400).
pub(super) fn filter(call: &Call<'_>) -> Result<AppFilter, ApiError> {
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
    let fields = match call.req.name.as_deref() {
        Some(name) => fields.for_name(name).map_err(ApiError::bad_request)?,
        None => fields,
    };
    Ok(AppFilter::new(
        call.kind.clone(),
        call.req.namespace.clone(),
        labels,
        fields,
    ))
}

/// A `continue` token: the list's resourceVersion and the last key
/// returned; for a consistent list checked page by page, also upstream's
/// continue token and the snapshot the page was served from.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Continue {
    pub(super) rv: u64,
    pub(super) ns: String,
    pub(super) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    up: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    snap: Option<u64>,
}

impl Continue {
    /// The token of a page of the namespaces at `rv` whose last is `name`.
    pub(super) fn after_namespace(rv: u64, name: &str) -> Continue {
        Continue {
            rv,
            ns: String::new(),
            name: name.to_owned(),
            up: None,
            snap: None,
        }
    }

    /// The token of a page of the snapshot at `rv` whose last app is `key`.
    fn after(rv: u64, key: &Key) -> Continue {
        Continue {
            rv,
            ns: key.namespace().to_owned(),
            name: key.name().to_owned(),
            up: None,
            snap: None,
        }
    }
}

pub(super) fn encode_continue(token: &Continue) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(token).unwrap_or_default())
}

/// Reads a `continue` token of a list in `namespace` (all when `None`):
/// 400 `invalid continue token: continue key is not valid: <why>` like
/// kube-apiserver's when it does not decode, names another namespace,
/// holds a NUL in a namespace or name, or carries an empty upstream token.
/// Text that is not base64 or not JSON gets kube-apiserver's own reason
/// (Go's base64 and JSON errors); a token that is JSON but not ours cannot
/// get Go's (ours have another shape than kube-apiserver's), so its
/// reason is [`NOT_OURS`].
pub(super) fn decode_continue(text: &str, namespace: Option<&str>) -> Result<Continue, ApiError> {
    let bytes = crate::golang::base64::decode_raw_url(text).map_err(invalid_continue)?;
    crate::golang::json_syntax::check(&bytes).map_err(invalid_continue)?;
    let token: Continue = serde_json::from_slice(&bytes).map_err(|_| invalid_continue(NOT_OURS))?;
    let other_namespace = namespace.is_some_and(|ns| !token.ns.is_empty() && token.ns != ns);
    // A NUL would move the position: the cache's keys join namespace and name with one.
    let not_a_name = token.ns.contains('\0') || token.name.contains('\0');
    if other_namespace || not_a_name || token.up.as_deref() == Some("") {
        return Err(invalid_continue(NOT_OURS));
    }
    Ok(token)
}

/// The reason a token that decodes is refused for: not one this server
/// gave for this list.
pub(super) const NOT_OURS: &str = "not a token of this list";

/// 400 for a `continue` token, worded as kube-apiserver's storage words it.
pub(super) fn invalid_continue(reason: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!(
        "invalid continue token: continue key is not valid: {reason}"
    ))
}

/// A `resourceVersion` that is no number, as apiserver's
/// `APIObjectVersioner.ParseResourceVersion` says so (`strconv.ParseUint`;
/// empty and `0` are the same): `resourceVersion: Invalid value: "abc":
/// strconv.ParseUint: parsing "abc": invalid syntax`. kube-apiserver
/// answers it with a 500 that has no reason for a get or a watch, and a
/// 400 `invalid resource version: …` for a list.
pub(super) fn resource_version_error(rv: &str) -> Option<String> {
    use crate::kinds::schema::FieldErrorKind;
    if rv.is_empty() {
        return None;
    }
    let why = crate::golang::parse_uint(rv).err()?;
    let error = super::validate::field_error(
        "resourceVersion",
        FieldErrorKind::Invalid,
        Some(Value::from(rv)),
        &why,
    );
    Some(error.to_string())
}

/// A get's or a watch's `resourceVersion` that is no number: the 500
/// kube-apiserver passes through from its storage (no reason, no details).
pub(super) fn check_resource_version(call: &Call<'_>) -> Result<(), ApiError> {
    let rv = call.query.get("resourceVersion").map_or("", String::as_str);
    match resource_version_error(rv) {
        Some(message) => Err(ApiError::new(500, "", message)),
        None => Ok(()),
    }
}

/// The page size `limit` asks for, decoded as [`int_param`]; as etcd3's
/// store, a limit of 0 or less (or none) is no limit.
pub(super) fn page_limit(call: &Call<'_>) -> Result<usize, ApiError> {
    page_limit_of(call.query)
}

/// [`page_limit`] of a bare query.
pub(super) fn page_limit_of(query: &Query) -> Result<usize, ApiError> {
    Ok(match int_query_param(query, "limit")? {
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => usize::MAX,
    })
}

/// An integer query parameter (`limit`, `timeoutSeconds`,
/// `gracePeriodSeconds`) as kube-apiserver's parameter codec decodes it:
/// `strconv.ParseInt`, a malformed one 400 with Go's message.
pub(super) fn int_param(call: &Call<'_>, key: &str) -> Result<Option<i64>, ApiError> {
    int_query_param(call.query, key)
}

/// [`int_param`] of a bare query.
pub(super) fn int_query_param(query: &Query, key: &str) -> Result<Option<i64>, ApiError> {
    query
        .get(key)
        .map(|v| crate::golang::parse_int(v).map_err(ApiError::bad_request))
        .transpose()
}

/// kube-apiserver's `ValidateListOptions` (apimachinery's
/// `meta/internalversion/validation`, WatchList on): how
/// `resourceVersionMatch`, `resourceVersion`, `continue` and
/// `sendInitialEvents` may combine, for a list or a watch; every broken
/// rule is one cause of a 422 `ListOptions.meta.k8s.io "" is invalid`.
pub(super) fn validate_list_options(call: &Call<'_>, watch: bool) -> Result<(), ApiError> {
    validate_list_query(call.query, watch)
}

/// [`validate_list_options`] of a bare query.
pub(super) fn validate_list_query(query: &Query, watch: bool) -> Result<(), ApiError> {
    use crate::kinds::schema::FieldErrorKind;
    let get = |key: &str| query.get(key).map(String::as_str).unwrap_or("");
    let (rv, matched, cont) = (
        get("resourceVersion"),
        get("resourceVersionMatch"),
        get("continue"),
    );
    let send_initial = query.contains_key("sendInitialEvents");
    let forbidden = |field: &str, detail: &str| {
        super::validate::field_error(field, FieldErrorKind::Forbidden, None, detail)
    };
    let not_supported = |supported: &[&str]| {
        let quoted: Vec<String> = supported.iter().map(|v| crate::golang::quote(v)).collect();
        super::validate::field_error(
            "resourceVersionMatch",
            FieldErrorKind::NotSupported,
            Some(Value::from(matched)),
            &format!("supported values: {}", quoted.join(", ")),
        )
    };
    let rvm = "resourceVersionMatch";
    let mut errors = Vec::new();
    if watch {
        if send_initial && matched != "NotOlderThan" {
            errors.push(forbidden(
                rvm,
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !matched.is_empty() {
            if !send_initial {
                errors.push(forbidden(
                    rvm,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if matched != "NotOlderThan" {
                errors.push(not_supported(&["NotOlderThan"]));
            }
            if !cont.is_empty() {
                errors.push(forbidden(
                    rvm,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if !matched.is_empty() {
            if rv.is_empty() {
                errors.push(forbidden(
                    rvm,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                errors.push(forbidden(
                    rvm,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if matched != "Exact" && matched != "NotOlderThan" {
                errors.push(not_supported(&["Exact", "NotOlderThan", ""]));
            }
            if matched == "Exact" && rv == "0" {
                errors.push(forbidden(
                    rvm,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if send_initial {
            errors.push(forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("ListOptions", "meta.k8s.io", "", &errors))
    }
}

/// Which state a list or deletecollection asks for: `resourceVersion` and
/// `resourceVersionMatch` (400 `invalid resource version: …` for a
/// version that is no number, 422 for a match that makes no sense).
pub(super) fn read_at(call: &Call<'_>) -> Result<ReadAt, ApiError> {
    read_at_query(call.query)
}

/// [`read_at`] of a bare query.
pub(super) fn read_at_query(query: &Query) -> Result<ReadAt, ApiError> {
    let rv = query
        .get("resourceVersion")
        .map(String::as_str)
        .unwrap_or("");
    let rv_match = query
        .get("resourceVersionMatch")
        .map(String::as_str)
        .unwrap_or("");
    if let Some(error) = resource_version_error(rv) {
        return Err(ApiError::bad_request(format!(
            "invalid resource version: {error}"
        )));
    }
    let number = |rv: &str| crate::golang::parse_uint(rv).map_err(ApiError::bad_request);
    match (rv, rv_match) {
        ("", "") => Ok(ReadAt::Latest),
        ("0", "") | ("0", "NotOlderThan") => Ok(ReadAt::Cached),
        ("", _) => Err(ApiError::invalid_query(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        )),
        (rv, "Exact") => Ok(ReadAt::Exact(number(rv)?)),
        (rv, "" | "NotOlderThan") => Ok(ReadAt::NotOlderThan(number(rv)?)),
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
    let filter = filter(call)?;
    int_param(call, "timeoutSeconds")?;
    let limit = page_limit(call)?;
    validate_list_options(call, false)?;
    let apps = call.apps();
    let namespace = call.req.namespace.as_deref();
    let page = |snapshot: &AppSnapshot, after: Option<&Key>| {
        render_list(
            call,
            repr,
            &filter,
            snapshot,
            Paging::Snapshot { after, limit },
        )
    };
    let checked = |checked: LatestPage, after: Option<&Key>, list_rv: Option<u64>| match checked {
        LatestPage::Snapshot(snapshot) => page(&snapshot, after),
        LatestPage::Checked {
            snapshot,
            until,
            upstream,
        } => {
            let list_rv = list_rv.unwrap_or(snapshot.revision());
            render_list(
                call,
                repr,
                &filter,
                &snapshot,
                Paging::Checked {
                    after,
                    until: until.as_ref(),
                    upstream: upstream.as_deref(),
                    list_rv,
                },
            )
        }
    };
    match continue_token(call, namespace)? {
        Some(token) => {
            let after = Key::new(&token.ns, &token.name);
            if let Some(upstream) = token.up {
                // A consistent list checked page by page: the next range.
                let position = CheckedPosition {
                    after,
                    upstream,
                    snapshot: token.snap.unwrap_or(token.rv),
                };
                let next = apps
                    .latest_page(&filter, limit, Some(&position))
                    .await?
                    .ok_or_else(|| invalid_continue(NOT_OURS))?;
                return checked(next, Some(&position.after), Some(token.rv));
            }
            page(&continued_snapshot(call, token.rv)?, Some(&after))
        }
        None if is_most_recent(call) => {
            // A page of a consistent list (`kubectl get` asks for 500) is
            // checked upstream for its own key range only.
            if limit != usize::MAX
                && let Some(first) = apps.latest_page(&filter, limit, None).await?
            {
                return checked(first, None, None);
            }
            apps.render_latest(&filter, |snapshot| page(snapshot, None))
                .await
        }
        None => {
            let snapshot = apps.snapshot_at(namespace, read_at(call)?).await?;
            page(&snapshot, None)
        }
    }
}

/// The `continue` token of a list or deletecollection in `namespace` (all
/// when `None`), read as kube-apiserver's storage reads it: the token
/// first, then that no `resourceVersion` but `0` comes with it.
fn continue_token(call: &Call<'_>, namespace: Option<&str>) -> Result<Option<Continue>, ApiError> {
    let Some(text) = call.query.get("continue").filter(|c| !c.is_empty()) else {
        return Ok(None);
    };
    let token = decode_continue(text, namespace)?;
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
    Ok(Some(token))
}

/// The kept snapshot at `revision` a `continue` token names, or 410 Expired.
fn continued_snapshot(call: &Call<'_>, revision: u64) -> Result<AppSnapshot, ApiError> {
    call.apps().kept_snapshot(revision).ok_or_else(|| {
        ApiError::expired(
            "The provided continue parameter is too old to display a consistent list result. You can start \
             a new list without the continue parameter.",
        )
    })
}

/// What a deletecollection deletes: the apps its list options select,
/// listed as kube-apiserver's generic store lists them for it — one page of
/// `limit` (with the page's `continue` token) when a limit is given, else
/// all; from the `continue` token's snapshot, or as a list without one
/// reads (consistent unless `resourceVersion` says otherwise).
pub(super) struct ToDelete {
    /// The names of the apps, in key order.
    pub names: Vec<String>,
    /// The apps as listed (the answer's items).
    pub items: Vec<Value>,
    /// The answer's list metadata.
    pub list_meta: Value,
}

/// Lists what a deletecollection deletes ([`ToDelete`]), at most `limit`
/// ([`page_limit`]); its list options must have been validated.
pub(super) async fn list_to_delete(
    call: &Call<'_>,
    filter: &AppFilter,
    limit: usize,
) -> Result<ToDelete, ApiError> {
    let namespace = call.req.namespace.as_deref();
    let (snapshot, after) = match continue_token(call, namespace)? {
        Some(token) => (
            continued_snapshot(call, token.snap.unwrap_or(token.rv))?,
            Some(Key::new(&token.ns, &token.name)),
        ),
        None => (
            call.apps().snapshot_at(namespace, read_at(call)?).await?,
            None,
        ),
    };
    let mut listed = ToDelete {
        names: Vec::new(),
        items: Vec::new(),
        list_meta: json!({"resourceVersion": snapshot.revision().to_string()}),
    };
    let mut last = None;
    let mut apps = snapshot.named_apps(filter, after.as_ref());
    for (key, name, app) in apps.by_ref().take(limit) {
        listed.names.push(name.to_owned());
        listed.items.push(app.value());
        last = Some(key);
    }
    if let Some(key) = last
        && apps.next().is_some()
    {
        let token = Continue::after(snapshot.revision(), key);
        listed.list_meta["continue"] = json!(encode_continue(&token));
        if !filter.has_selector() {
            listed.list_meta["remainingItemCount"] =
                json!(snapshot.apps(filter, Some(key)).count());
        }
    }
    Ok(listed)
}

/// Which apps of a snapshot a list page holds, and what its continue
/// token says.
enum Paging<'a> {
    /// At most `limit` apps after `after`; the token names the snapshot.
    Snapshot {
        after: Option<&'a Key>,
        limit: usize,
    },
    /// Every app after `after` up to `until` (to the end when `None`), the
    /// key range checked against upstream's page; the token carries
    /// `upstream`'s continue token and the list's resourceVersion `list_rv`.
    Checked {
        after: Option<&'a Key>,
        until: Option<&'a Key>,
        upstream: Option<&'a str>,
        list_rv: u64,
    },
}

/// Renders one page of a list from `snapshot`, as `paging` says.
fn render_list(
    call: &Call<'_>,
    repr: Representation,
    filter: &AppFilter,
    snapshot: &AppSnapshot,
    paging: Paging<'_>,
) -> Result<Response<Body>, ApiError> {
    // Plain JSON (the big lists: controllers, `kubectl get -o json`) and
    // Tables (`kubectl get`) are encoded app by app as the scan goes, from
    // the app's kept JSON and Table row, so a list of thousands never holds
    // every converted app at once; metadata lists collect them.
    let resolved = &call.kind.resolved;
    let now = jiff::Timestamp::now();
    let (after, until, limit) = match paging {
        Paging::Snapshot { after, limit } => (after, None, limit),
        Paging::Checked { after, until, .. } => (after, until, usize::MAX),
    };
    let mut encoded = Vec::new();
    let mut items = Vec::new();
    let mut count = 0usize;
    let mut last_key = None;
    let mut more = false;
    for (key, app) in snapshot.apps_until(filter, after, until) {
        if count == limit {
            more = true;
            break;
        }
        count += 1;
        match repr {
            Representation::Json | Representation::Table { .. } if count > 1 => {
                encoded.push(b',');
            }
            _ => {}
        }
        match repr {
            Representation::Json => encoded.extend_from_slice(app.json.as_bytes()),
            Representation::Table { include_object } => {
                let row = table::kept_row(&app, resolved);
                table::render_row(row, &app.json, include_object, now, &mut encoded);
            }
            _ => items.push(app.value()),
        }
        last_key = Some(key);
    }
    let (revision, next) = match paging {
        Paging::Snapshot { .. } => {
            let revision = snapshot.revision();
            let next = last_key
                .filter(|_| more)
                .map(|key| Continue::after(revision, key));
            (revision, next)
        }
        Paging::Checked {
            until,
            upstream,
            list_rv,
            ..
        } => {
            let next = upstream.zip(until).map(|(up, key)| Continue {
                rv: list_rv,
                ns: key.namespace().to_owned(),
                name: key.name().to_owned(),
                up: Some(up.to_owned()),
                snap: Some(snapshot.revision()),
            });
            (list_rv, next)
        }
    };
    let mut list_meta = json!({"resourceVersion": revision.to_string()});
    if let Some(token) = next {
        list_meta["continue"] = json!(encode_continue(&token));
        // What the next pages hold, as kube-apiserver estimates it for a
        // list no selector narrows (ListMeta's `remainingItemCount`).
        if !filter.has_selector() {
            let from = match paging {
                Paging::Snapshot { .. } => last_key,
                Paging::Checked { until, .. } => until,
            };
            list_meta["remainingItemCount"] = json!(snapshot.apps(filter, from).count());
        }
    }
    let refs: Vec<&Value> = items.iter().collect();
    let body = match repr {
        Representation::Table { .. } => {
            let mut bytes = table::table_head(resolved, list_meta);
            bytes.reserve(encoded.len() + 2);
            bytes.extend_from_slice(&encoded);
            bytes.extend_from_slice(b"]}");
            return Ok(response::encoded_json(
                StatusCode::OK,
                bytes,
                negotiate::content_type_of(repr),
            ));
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

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_bad_ones_are_400() {
        let checked = Continue {
            rv: 41,
            ns: "t".into(),
            name: "pg-a".into(),
            up: Some("upstream-token".into()),
            snap: Some(42),
        };
        let text = encode_continue(&checked);
        assert_eq!(decode_continue(&text, Some("t")).unwrap(), checked);
        assert_eq!(decode_continue(&text, None).unwrap(), checked);
        let plain = Continue {
            rv: 41,
            ns: "t".into(),
            name: "pg-a".into(),
            up: None,
            snap: None,
        };
        let text = encode_continue(&plain);
        assert!(
            !String::from_utf8(URL_SAFE_NO_PAD.decode(&text).unwrap())
                .unwrap()
                .contains("up")
        );
        assert_eq!(decode_continue(&text, Some("t")).unwrap(), plain);

        let code = |text: &str, ns| decode_continue(text, ns).unwrap_err().code;
        assert_eq!(code("not base64!", Some("t")), 400);
        assert_eq!(code(&URL_SAFE_NO_PAD.encode(b"{\"rv\":1}"), None), 400);
        // Another namespace's token, an empty upstream token, unknown fields.
        assert_eq!(code(&encode_continue(&checked), Some("u")), 400);
        let empty_up = Continue {
            up: Some(String::new()),
            ..plain
        };
        assert_eq!(code(&encode_continue(&empty_up), None), 400);
        let extra = br#"{"rv":1,"ns":"t","name":"a","x":1}"#;
        assert_eq!(code(&URL_SAFE_NO_PAD.encode(extra), None), 400);
        // A NUL would move the position (the cache's keys join namespace and name with one).
        for (ns, name) in [("t\0x", "a"), ("", "a\0b")] {
            let nul = Continue {
                rv: 1,
                ns: ns.into(),
                name: name.into(),
                up: None,
                snap: None,
            };
            assert_eq!(code(&encode_continue(&nul), None), 400, "{ns:?}/{name:?}");
        }
        // kube-apiserver's words: Go's base64 and JSON errors, else ours.
        let message = |text: &str| decode_continue(text, Some("u")).unwrap_err().message;
        let prefix = "invalid continue token: continue key is not valid: ";
        for (text, reason) in [
            ("!!", "illegal base64 data at input byte 0"),
            (
                "abc",
                "invalid character 'i' looking for beginning of value",
            ),
            ("eyJ", "unexpected end of JSON input"),
            ("e30", NOT_OURS),
            (&encode_continue(&checked), NOT_OURS),
        ] {
            assert_eq!(message(text), format!("{prefix}{reason}"), "{text}");
        }
    }

    #[test]
    fn resource_versions_are_read_as_parse_uint() {
        for rv in ["", "0", "1", "007", "18446744073709551615"] {
            assert_eq!(resource_version_error(rv), None, "{rv}");
        }
        assert_eq!(
            resource_version_error("abc").as_deref(),
            Some(
                r#"resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax"#
            )
        );
        assert_eq!(
            resource_version_error("+5").as_deref(),
            Some(
                r#"resourceVersion: Invalid value: "+5": strconv.ParseUint: parsing "+5": invalid syntax"#
            )
        );
    }
}
