//! HelmReleases in a real cluster, through kube-rs: every owned HelmRelease
//! (selected by the ownership group label), writes with the caller's
//! resourceVersion as a precondition and `dryRun` passed upstream, and
//! upstream error Statuses passed through unchanged.
//!
//! Writes use the server's identity, or with [`ClusterStore::with_impersonation`]
//! (`serve --impersonate`) the identity of the user every write is made for:
//! `Impersonate-User`, `-Uid`, `-Group` and `-Extra-*` headers. Reads and
//! watches feed the shared cache and always use the server's identity; the
//! SubjectAccessReview on the app itself governs them.

use std::collections::HashMap;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
    Preconditions, PropagationPolicy, WatchEvent, WatchParams,
};
use serde_json::Value;
use tracing::Instrument;

use super::cache::Stored;
use super::helm_release::{GROUP_LABEL, KIND_LABEL};
use super::{
    DeleteOptions, EventStream, Listing, ReadScope, StoreError, StoreEvent, UpstreamState,
    object_key,
};
use crate::apimachinery::user::UserInfo;

/// Page size of the consistent-read check's metadata list: large enough that
/// a 5,000-app scope takes 3 round trips, small enough that a page's parsed
/// metadata (~5 KB an object, managedFields included) stays a few MiB.
const CHECK_PAGE: u32 = 2000;

/// One page of the consistent-read check: a `PartialObjectMetadataList`
/// read for versions only.
#[derive(serde::Deserialize)]
struct VersionsPage {
    metadata: VersionsMeta,
    /// `null` when the list is empty.
    #[serde(default)]
    items: Option<Vec<VersionsItem>>,
}

#[derive(serde::Deserialize)]
struct VersionsItem {
    metadata: VersionsMeta,
}

/// The metadata fields the check reads (of the list and of each item).
#[derive(serde::Deserialize)]
struct VersionsMeta {
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    name: String,
    #[serde(default, rename = "resourceVersion")]
    resource_version: Option<String>,
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
}

impl VersionsMeta {
    fn resource_version(&self) -> u64 {
        self.resource_version
            .as_deref()
            .and_then(|rv| rv.parse().ok())
            .unwrap_or(0)
    }
}

/// HelmReleases of a cluster.
#[derive(Clone)]
pub struct ClusterStore {
    client: kube::Client,
    resource: ApiResource,
    selector: String,
    impersonate: bool,
}

impl ClusterStore {
    /// A store over `client`'s cluster, owning HelmReleases whose group label is `group`.
    pub fn new(client: kube::Client, group: &str) -> ClusterStore {
        ClusterStore {
            client,
            resource: ApiResource::from_gvk(&GroupVersionKind::gvk(
                "helm.toolkit.fluxcd.io",
                "v2",
                "HelmRelease",
            )),
            selector: format!("{GROUP_LABEL}={group}"),
            impersonate: false,
        }
    }

    /// Makes writes impersonate the user each is made for.
    pub fn with_impersonation(mut self, impersonate: bool) -> ClusterStore {
        self.impersonate = impersonate;
        self
    }

    fn raw(&self, namespace: &str) -> kube::core::Request {
        kube::core::Request::new(<DynamicObject as kube::Resource>::url_path(
            &self.resource,
            Some(namespace),
        ))
    }

    /// Sends a write, as `user` when impersonating, and parses the answer
    /// straight into the object as the watch cache keeps it ([`kept`]: the
    /// cache takes it before the watch delivers it; a
    /// `Status` answer comes back as an object of kind `Status`). The round
    /// trip and the parse are `debug` spans (`send`, `parse`).
    async fn send(
        &self,
        request: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
        user: &UserInfo,
    ) -> Result<Value, StoreError> {
        let mut request =
            request.map_err(|e| StoreError::Internal(format!("build the request: {e}")))?;
        if self.impersonate {
            impersonation_headers(user, request.headers_mut())?;
        }
        let text = self
            .client
            .request_text(request)
            .instrument(tracing::debug_span!("send"))
            .await
            .map_err(upstream)?;
        let _span = tracing::debug_span!("parse").entered();
        serde_json::from_str(&text)
            .map(kept)
            .map_err(|e| StoreError::Internal(format!("parse kube-apiserver's answer: {e}")))
    }

    fn all(&self) -> Api<DynamicObject> {
        Api::all_with(self.client.clone(), &self.resource)
    }

    /// Lists every owned HelmRelease, in pages.
    pub async fn list(&self) -> Result<Listing, StoreError> {
        let mut items = Vec::new();
        let mut params = ListParams::default().labels(&self.selector).limit(500);
        loop {
            let page = self.all().list(&params).await.map_err(upstream)?;
            let rv = page.metadata.resource_version.clone().unwrap_or_default();
            items.extend(page.items.into_iter().map(|o| {
                let value = cached(o);
                (object_key(&value), Arc::new(Stored::new(&value)))
            }));
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => {
                    return Ok(Listing {
                        items,
                        resource_version: rv.parse().unwrap_or(0),
                    });
                }
            }
        }
    }

    /// The resourceVersions of the owned HelmReleases in `scope`, from a
    /// metadata-only list that kube-apiserver answers consistently (a quorum
    /// read, or its cache once it has caught up with etcd).
    pub async fn current_state(&self, scope: &ReadScope) -> Result<UpstreamState, StoreError> {
        let selector = format!("{},{KIND_LABEL}={}", self.selector, scope.kind);
        let mut params = ListParams::default().labels(&selector).limit(CHECK_PAGE);
        if let Some(name) = &scope.release {
            params = params.fields(&format!("metadata.name={name}"));
        }
        let request = kube::core::Request::new(<DynamicObject as kube::Resource>::url_path(
            &self.resource,
            scope.namespace.as_deref(),
        ));
        // In pages (all at the first page's resourceVersion), so that only
        // the versions are ever held; each page is parsed for namespace,
        // name and resourceVersion only, skipping the rest of the metadata
        // (managedFields are most of it).
        let mut versions = HashMap::new();
        let mut revision = None;
        loop {
            let page: VersionsPage = self
                .client
                .request(
                    request
                        .list_metadata(&params)
                        .map_err(|e| StoreError::Internal(format!("build the request: {e}")))?,
                )
                .await
                .map_err(upstream)?;
            revision.get_or_insert(page.metadata.resource_version());
            for item in page.items.into_iter().flatten() {
                let rv = item.metadata.resource_version();
                versions.insert((item.metadata.namespace, item.metadata.name), rv);
            }
            match page.metadata.continue_token.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => break,
            }
        }
        Ok(UpstreamState {
            revision: revision.unwrap_or(0),
            versions: Some(versions),
        })
    }

    /// Watches owned HelmReleases after `from`, with bookmarks.
    pub async fn watch(&self, from: u64) -> Result<EventStream, StoreError> {
        let mut params = WatchParams::default().labels(&self.selector).timeout(290);
        params.bookmarks = true;
        let stream = self
            .all()
            .watch(&params, &from.to_string())
            .await
            .map_err(upstream)?;
        Ok(stream
            .map_err(upstream)
            .and_then(|event| async move {
                match event {
                    WatchEvent::Added(o) => Ok(StoreEvent::Added(Arc::new(cached(o)))),
                    WatchEvent::Modified(o) => Ok(StoreEvent::Modified(Arc::new(cached(o)))),
                    WatchEvent::Deleted(o) => Ok(StoreEvent::Deleted(Arc::new(cached(o)))),
                    WatchEvent::Bookmark(b) => Ok(StoreEvent::Bookmark(
                        b.metadata.resource_version.parse().unwrap_or(0),
                    )),
                    WatchEvent::Error(e) if e.code == 410 => Err(StoreError::Gone(e.message)),
                    WatchEvent::Error(e) => Err(StoreError::Upstream {
                        code: e.code,
                        reason: e.reason,
                        message: e.message,
                        retry_after: None,
                    }),
                }
            })
            .boxed())
    }

    /// Creates a HelmRelease for `user`.
    pub async fn create(
        &self,
        object: Value,
        dry_run: bool,
        user: &UserInfo,
    ) -> Result<Value, StoreError> {
        let namespace = namespace_of(&object);
        let body = encode(&object)?;
        self.send(
            self.raw(&namespace).create(&write_params(dry_run), body),
            user,
        )
        .await
    }

    /// Replaces a HelmRelease for `user`; `metadata.resourceVersion` is the
    /// precondition.
    pub async fn update(
        &self,
        object: Value,
        dry_run: bool,
        user: &UserInfo,
    ) -> Result<Value, StoreError> {
        let namespace = namespace_of(&object);
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let body = encode(&object)?;
        self.send(
            self.raw(&namespace)
                .replace(name, &write_params(dry_run), body),
            user,
        )
        .await
    }

    /// Deletes a HelmRelease for `user`, with preconditions and propagation.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
        user: &UserInfo,
    ) -> Result<Value, StoreError> {
        let params = DeleteParams {
            dry_run: options.dry_run,
            propagation_policy: match options.propagation_policy.as_deref() {
                Some("Orphan") => Some(PropagationPolicy::Orphan),
                Some("Foreground") => Some(PropagationPolicy::Foreground),
                Some("Background") => Some(PropagationPolicy::Background),
                _ => None,
            },
            preconditions: (options.uid.is_some() || options.resource_version.is_some()).then(
                || Preconditions {
                    uid: options.uid.clone(),
                    resource_version: options.resource_version.clone(),
                },
            ),
            ..DeleteParams::default()
        };
        let deleted = self
            .send(self.raw(namespace).delete(name, &params), user)
            .await?;
        if deleted.get("kind").and_then(Value::as_str) == Some("Status") {
            // Deleted at once; report the last state we can know.
            return Ok(serde_json::json!({"metadata": {"name": name, "namespace": namespace}}));
        }
        Ok(deleted)
    }
}

fn write_params(dry_run: bool) -> PostParams {
    PostParams {
        dry_run,
        field_manager: Some("kubectl-cozy".into()),
    }
}

fn encode(object: &Value) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(object).map_err(|e| StoreError::Internal(format!("encode: {e}")))
}

/// client-go's impersonation headers for `user` (`transport/round_trippers.go`):
/// extra keys are percent-escaped like `headerKeyEscape`.
fn impersonation_headers(user: &UserInfo, headers: &mut http::HeaderMap) -> Result<(), StoreError> {
    use http::{HeaderName, HeaderValue};
    let value = |v: &str| {
        HeaderValue::from_str(v).map_err(|_| {
            StoreError::Internal(
                "the requesting user cannot be impersonated: a name or value is not a valid header"
                    .to_owned(),
            )
        })
    };
    headers.insert("impersonate-user", value(&user.name)?);
    if !user.uid.is_empty() {
        headers.insert("impersonate-uid", value(&user.uid)?);
    }
    for group in &user.groups {
        headers.append("impersonate-group", value(group)?);
    }
    for (key, values) in &user.extra {
        let mut escaped = String::from("impersonate-extra-");
        for b in key.bytes() {
            // RFC 7230 token characters stay; everything else is %XX.
            if b.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&b) {
                escaped.push(b.to_ascii_lowercase() as char);
            } else {
                escaped.push_str(&format!("%{b:02X}"));
            }
        }
        let name = HeaderName::from_bytes(escaped.as_bytes())
            .map_err(|e| StoreError::Internal(format!("impersonation header: {e}")))?;
        for v in values {
            headers.append(name.clone(), value(v)?);
        }
    }
    Ok(())
}

fn namespace_of(object: &Value) -> String {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_owned()
}

/// A HelmRelease as the watch cache keeps it: without kube-apiserver's
/// `managedFields` (about 40% of the object, and never read: the app's own
/// managedFields live in an annotation). Updates built from a cached object
/// leave the HelmRelease's managedFields as they are upstream.
fn cached(mut object: DynamicObject) -> Value {
    object.metadata.managed_fields = None;
    to_value(object)
}

/// [`cached`] for an answer parsed as JSON: without `managedFields`, with
/// its type (kube-apiserver always sends it; a write's answer has it too).
fn kept(mut object: Value) -> Value {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.shift_remove("managedFields");
    }
    if object.get("apiVersion").is_none() {
        object["apiVersion"] = Value::from("helm.toolkit.fluxcd.io/v2");
        object["kind"] = Value::from("HelmRelease");
    }
    object
}

fn to_value(object: DynamicObject) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or_default();
    if value.get("apiVersion").is_none() {
        value["apiVersion"] = Value::from("helm.toolkit.fluxcd.io/v2");
        value["kind"] = Value::from("HelmRelease");
    }
    value
}

fn upstream(err: kube::Error) -> StoreError {
    match err {
        kube::Error::Api(status) => match (status.code, status.reason.as_str()) {
            (404, _) => StoreError::NotFound,
            (409, "AlreadyExists") => StoreError::AlreadyExists,
            (409, _) => StoreError::Conflict(status.message),
            (410, _) => StoreError::Gone(status.message),
            (code, reason) => StoreError::Upstream {
                code,
                reason: reason.to_owned(),
                retry_after: status
                    .details
                    .as_ref()
                    .map(|d| u64::from(d.retry_after_seconds))
                    .filter(|s| *s > 0),
                message: status.message,
            },
        },
        err @ (kube::Error::HyperError(_) | kube::Error::Service(_)) => {
            StoreError::Unavailable(format!("HelmRelease API: {err}"))
        }
        other => StoreError::Internal(format!("HelmRelease API: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::VersionsPage;

    #[test]
    fn a_write_answer_is_kept_as_the_watch_keeps_it() {
        let answer = serde_json::json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {
                "name": "postgres-db", "namespace": "t", "uid": "u", "resourceVersion": "7",
                "generation": 1, "creationTimestamp": "2026-12-01T23:00:00Z",
                "labels": {"apps.cozystack.io/application.group": "apps.cozystack.io"},
                "annotations": {"apps.cozystack.io/managed-fields": "[]"},
                "managedFields": [{"manager": "kubectl-cozy", "operation": "Update",
                    "apiVersion": "helm.toolkit.fluxcd.io/v2", "time": "2026-12-01T23:00:00Z",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
            },
            "spec": {"chart": {"spec": {"chart": "postgres"}}, "values": {"replicas": 2}},
            "status": {}
        });
        let kept = super::kept(answer.clone());
        assert!(kept["metadata"].get("managedFields").is_none(), "{kept}");
        let watched = super::cached(serde_json::from_value(answer).unwrap());
        assert_eq!(kept, watched);
    }

    #[test]
    fn consistency_check_pages_parse_versions_only() {
        let empty: VersionsPage =
            serde_json::from_str(r#"{"kind":"PartialObjectMetadataList","metadata":{"resourceVersion":"42"},"items":null}"#)
                .unwrap();
        assert_eq!(empty.metadata.resource_version(), 42);
        assert!(empty.items.is_none());
        let page: VersionsPage = serde_json::from_str(
            r#"{"metadata":{"resourceVersion":"50","continue":"abc"},"items":[
                {"metadata":{"name":"pg-a","namespace":"t","resourceVersion":"44",
                 "managedFields":[{"manager":"x","fieldsV1":{"f:spec":{}}}],"labels":{"a":"b"}}}]}"#,
        )
        .unwrap();
        assert_eq!(page.metadata.continue_token.as_deref(), Some("abc"));
        let items = page.items.unwrap();
        assert_eq!(
            (
                items[0].metadata.namespace.as_str(),
                items[0].metadata.name.as_str()
            ),
            ("t", "pg-a")
        );
        assert_eq!(items[0].metadata.resource_version(), 44);
    }

    #[test]
    fn impersonation_headers_like_client_go() {
        let user = crate::apimachinery::user::UserInfo {
            name: "alice".into(),
            uid: "u1".into(),
            groups: vec!["dev".into(), "system:authenticated".into()],
            extra: [(
                "acme.com/project".to_owned(),
                vec!["p1".to_owned(), "p2".to_owned()],
            )]
            .into(),
        };
        let mut headers = http::HeaderMap::new();
        super::impersonation_headers(&user, &mut headers).unwrap();
        assert_eq!(headers["impersonate-user"], "alice");
        assert_eq!(headers["impersonate-uid"], "u1");
        let groups: Vec<_> = headers.get_all("impersonate-group").iter().collect();
        assert_eq!(groups, ["dev", "system:authenticated"]);
        let extra: Vec<_> = headers
            .get_all("impersonate-extra-acme.com%2Fproject")
            .iter()
            .collect();
        assert_eq!(extra, ["p1", "p2"]);
    }

    #[test]
    fn resource_version_parsing() {
        let v = serde_json::json!({"metadata": {"resourceVersion": "42"}});
        assert_eq!(crate::storage::resource_version(&v), 42);
    }
}
