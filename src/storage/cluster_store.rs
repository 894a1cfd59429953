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
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
    Preconditions, PropagationPolicy, WatchEvent, WatchParams,
};
use serde_json::value::RawValue;
use tracing::Instrument;

use super::cache::{Key, Stored};
use super::helm_release::{GROUP_LABEL, KIND_LABEL, ReleaseObject};
use super::metadata_list;
use super::release_json::{ObjectText, Release, ReleaseText};
use super::{
    DeleteOptions, EventStream, Listing, ReadScope, StoreError, StoreEvent, UpstreamState, Written,
};
use crate::apimachinery::user::UserInfo;
use crate::error_chain::error_chain;
use crate::kube_client::Unbuffered;

/// Page size of the consistent-read check's metadata list: large enough that
/// a 5,000-app scope takes 3 round trips, small enough that a page stays a
/// few MiB (in JSON, ~5 KB an object, managedFields included).
const CHECK_PAGE: u32 = 2000;

/// One page of the cache's list. Its items are kept as they are read
/// ([`stored_items`]): a page of 500 HelmReleases parsed whole is a tree of
/// small allocations ten times the size of what the cache keeps of it, and
/// the kept objects, allocated between them, would be left scattered across
/// the heap once the tree is freed (glibc cannot return a page that still
/// holds one kept object).
#[derive(serde::Deserialize)]
struct StoredPage {
    metadata: PageMeta,
    #[serde(default, deserialize_with = "stored_items")]
    items: Vec<(Key, Arc<Stored>)>,
}

/// The list metadata a [`StoredPage`] reads.
#[derive(serde::Deserialize)]
struct PageMeta {
    #[serde(default, rename = "resourceVersion")]
    resource_version: Option<String>,
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
}

impl PageMeta {
    fn resource_version(&self) -> u64 {
        self.resource_version
            .as_deref()
            .and_then(|rv| rv.parse().ok())
            .unwrap_or(0)
    }
}

/// The items of a HelmRelease list, each kept as the cache keeps it
/// straight from its text ([`Stored::from_text`]); `null` is no items.
fn stored_items<'de, D>(deserializer: D) -> Result<Vec<(Key, Arc<Stored>)>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct Items;
    impl<'de> serde::de::Visitor<'de> for Items {
        type Value = Vec<(Key, Arc<Stored>)>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of HelmReleases")
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }

        fn visit_seq<A>(self, mut seq: A) -> Result<Self::Value, A::Error>
        where
            A: serde::de::SeqAccess<'de>,
        {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(text) = seq.next_element::<Box<RawValue>>()? {
                let (key, stored) =
                    Stored::from_text(text.get()).map_err(serde::de::Error::custom)?;
                items.push((key, Arc::new(stored)));
            }
            Ok(items)
        }
    }
    deserializer.deserialize_any(Items)
}

/// HelmReleases of a cluster.
#[derive(Clone)]
pub struct ClusterStore {
    /// The list and the watch (streams).
    client: kube::Client,
    /// Writes and consistency checks: request/response calls on the path
    /// of a request to the server, over `client`'s stack and connections
    /// without its queue ([`Unbuffered`]).
    requests: Unbuffered,
    resource: ApiResource,
    selector: String,
    impersonate: bool,
}

impl ClusterStore {
    /// The store as `serve` runs it over `config`'s cluster, owning
    /// HelmReleases whose group label is `group`: its clients set
    /// `TCP_NODELAY` ([`crate::kube_client`]), writes and consistency checks
    /// skip `kube::Client`'s queue ([`Unbuffered`]), and kube-rs's own
    /// retries of 429, 503 and 504 are off, so that kube-apiserver's
    /// throttling (with its `Retry-After`) reaches the server's client as it
    /// was sent, rather than holding the request while kube-rs waits and
    /// retries (up to 15 times); the client then retries as it sees fit, as
    /// client-go does.
    pub fn connect(config: &kube::Config, group: &str) -> Result<ClusterStore, kube::Error> {
        let mut config = config.clone();
        config.default_retry = false;
        let (client, requests) = crate::kube_client::clients(config)?;
        Ok(ClusterStore {
            client,
            requests,
            resource: ApiResource::from_gvk(&GroupVersionKind::gvk(
                "helm.toolkit.fluxcd.io",
                "v2",
                "HelmRelease",
            )),
            selector: format!("{GROUP_LABEL}={group}"),
            impersonate: false,
        })
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

    /// Sends a write of a HelmRelease (create, update or delete) for
    /// `user`; answers with upstream's answer as its text (the app store
    /// reads it, see [`Written`]).
    async fn send_write(
        &self,
        request: BuiltRequest,
        user: &UserInfo,
    ) -> Result<Written, StoreError> {
        self.send_text(request, user).await.map(Written::Text)
    }

    /// Sends `request` for `user`; answers with the answer's text.
    async fn send_text(
        &self,
        request: BuiltRequest,
        user: &UserInfo,
    ) -> Result<String, StoreError> {
        let mut request =
            request.map_err(|e| StoreError::Internal(format!("build the request: {e}")))?;
        if self.impersonate {
            impersonation_headers(user, request.headers_mut())?;
        }
        self.requests
            .request_text(request)
            .instrument(tracing::debug_span!("send"))
            .await
            .map_err(upstream)
    }

    /// Whether this store may list its HelmReleases at all (one metadata
    /// list of at most one item, across namespaces as the cache lists):
    /// kube's error otherwise, a 404 where the cluster serves no
    /// HelmReleases (no Flux) and a 403 where its identity may not list
    /// them, either of which would keep the cache from ever filling.
    pub async fn check_list_access(&self) -> Result<(), kube::Error> {
        let api = kube::Api::<DynamicObject>::all_with(self.client.clone(), &self.resource);
        let params = ListParams::default().labels(&self.selector).limit(1);
        // A cluster that just started (or a CRD just established) answers
        // 429 "storage is (re)initializing" for a moment: asked again, as
        // kube-apiserver says to, for up to ten seconds.
        let mut tries = 0;
        loop {
            match api.list_metadata(&params).await {
                Err(kube::Error::Api(status))
                    if (status.code == 429 || status.code >= 500) && tries < 10 =>
                {
                    tries += 1;
                    tracing::debug!(code = status.code, message = %status.message, "list HelmReleases: retrying");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
                other => return other.map(drop),
            }
        }
    }

    /// Lists every owned HelmRelease, in pages. Each item of a page is made
    /// into what the cache keeps as the page is parsed ([`StoredPage`]), so
    /// only one parsed object at a time is alive beside the kept ones.
    pub async fn list(&self) -> Result<Listing, StoreError> {
        let mut items = Vec::new();
        let mut params = ListParams::default().labels(&self.selector).limit(500);
        let request = kube::core::Request::new(<DynamicObject as kube::Resource>::url_path(
            &self.resource,
            None,
        ));
        loop {
            let page: StoredPage = self
                .client
                .request(
                    request
                        .list(&params)
                        .map_err(|e| StoreError::Internal(format!("build the request: {e}")))?,
                )
                .await
                .map_err(upstream)?;
            items.extend(page.items);
            let resource_version = page.metadata.resource_version();
            match page.metadata.continue_token.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => {
                    return Ok(Listing {
                        items,
                        resource_version,
                    });
                }
            }
        }
    }

    /// The resourceVersions of the owned HelmReleases in `scope`, from a
    /// metadata-only list that kube-apiserver answers consistently (a quorum
    /// read, or its cache once it has caught up with etcd).
    pub async fn current_state(&self, scope: &ReadScope) -> Result<UpstreamState, StoreError> {
        // In pages (all at the first page's resourceVersion), so that only
        // the versions are ever held.
        let mut versions = HashMap::new();
        let mut revision = None;
        let mut continue_token = None;
        loop {
            let page = self
                .metadata_page(scope, CHECK_PAGE, continue_token.as_deref())
                .await?;
            revision.get_or_insert(page.resource_version);
            for item in page.items {
                versions.insert(Key::new(&item.namespace, &item.name), item.resource_version);
            }
            match page.continue_token {
                Some(token) => continue_token = Some(token),
                None => break,
            }
        }
        Ok(UpstreamState {
            revision: revision.unwrap_or(0),
            versions: Some(versions),
        })
    }

    /// One page of at most `limit` owned HelmReleases in `scope` (after
    /// `continue_token`; with the scope's label selector in the stored
    /// labels' terms), metadata only, read for versions only: protobuf
    /// when kube-apiserver serves it, JSON otherwise ([`metadata_list`]).
    pub async fn metadata_page(
        &self,
        scope: &ReadScope,
        limit: u32,
        continue_token: Option<&str>,
    ) -> Result<metadata_list::Page, StoreError> {
        let mut selector = format!("{},{KIND_LABEL}={}", self.selector, scope.kind);
        if let Some(labels) = &scope.labels {
            selector.push(',');
            selector.push_str(labels.upstream_selector());
        }
        let mut params = ListParams::default().labels(&selector).limit(limit);
        if let Some(name) = &scope.release {
            params = params.fields(&format!("metadata.name={name}"));
        }
        if let Some(token) = continue_token {
            params = params.continue_token(token);
        }
        let mut request = kube::core::Request::new(<DynamicObject as kube::Resource>::url_path(
            &self.resource,
            scope.namespace.as_deref(),
        ))
        .list_metadata(&params)
        .map_err(|e| StoreError::Internal(format!("build the request: {e}")))?;
        request.headers_mut().insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static(metadata_list::ACCEPT),
        );
        let body = self
            .requests
            .request_bytes(request)
            .await
            .map_err(upstream)?;
        metadata_list::decode(body)
            .map_err(|e| StoreError::Internal(format!("HelmRelease API: {}", error_chain(&e))))
    }

    /// Watches owned HelmReleases after `from`, with bookmarks.
    pub async fn watch(&self, from: u64) -> Result<EventStream, StoreError> {
        let mut params = WatchParams::default().labels(&self.selector).timeout(290);
        params.bookmarks = true;
        // An added or modified object is kept as its text with its key and
        // resourceVersion read ([`ReleaseText`]): the cache parses it only
        // when it does not hold that version yet. A deleted one is parsed
        // at once, straight into what the cache keeps ([`Release`]).
        let request = kube::core::Request::new(<DynamicObject as kube::Resource>::url_path(
            &self.resource,
            None,
        ))
        .watch(&params, &from.to_string())
        .map_err(|e| StoreError::Internal(format!("build the request: {e}")))?;
        let stream = self
            .client
            .request_events::<ObjectText>(request)
            .await
            .map_err(upstream)?;
        let unreadable = |e: serde_json::Error| {
            StoreError::Internal(format!("parse a HelmRelease watch event: {e}"))
        };
        Ok(stream
            .map(|event| event.map_err(upstream))
            .and_then(move |event| async move {
                match event {
                    WatchEvent::Added(ObjectText(text))
                    | WatchEvent::Modified(ObjectText(text)) => ReleaseText::new(text)
                        .map(|text| StoreEvent::Changed(Arc::new(text)))
                        .map_err(unreadable),
                    WatchEvent::Deleted(ObjectText(text)) => {
                        serde_json::from_str::<Release>(text.get())
                            .map(|Release(o)| StoreEvent::Deleted(Arc::new(o)))
                            .map_err(unreadable)
                    }
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

    /// The HelmRelease `namespace/name` as upstream holds it now, read for
    /// `user` (`None` when there is none).
    pub async fn get(
        &self,
        namespace: &str,
        name: &str,
        user: &UserInfo,
    ) -> Result<Option<serde_json::Value>, StoreError> {
        let request = self
            .raw(namespace)
            .get(name, &kube::api::GetParams::default());
        match self.send_text(request, user).await {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| StoreError::Internal(format!("parse kube-apiserver's answer: {e}"))),
            Err(StoreError::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates a HelmRelease for `user`.
    pub async fn create(
        &self,
        release: &ReleaseObject<'_>,
        dry_run: bool,
        user: &UserInfo,
    ) -> Result<Written, StoreError> {
        let request = self.write_request(release, |raw, _, body| {
            raw.create(&write_params(dry_run), body)
        })?;
        self.send_write(request, user).await
    }

    /// Replaces a HelmRelease for `user`; `metadata.resourceVersion` is the
    /// precondition.
    pub async fn update(
        &self,
        release: &ReleaseObject<'_>,
        dry_run: bool,
        user: &UserInfo,
    ) -> Result<Written, StoreError> {
        let request = self.write_request(release, |raw, name, body| {
            raw.replace(name, &write_params(dry_run), body)
        })?;
        self.send_write(request, user).await
    }

    /// The request of a write of `release`: `build` gets its namespace's
    /// requests, its name and its encoding (a `debug` span,
    /// `encode to=upstream`), written straight from the release's parts.
    fn write_request(
        &self,
        release: &ReleaseObject<'_>,
        build: impl FnOnce(kube::core::Request, &str, Vec<u8>) -> BuiltRequest,
    ) -> Result<BuiltRequest, StoreError> {
        tracing::debug_span!("encode", to = "upstream").in_scope(|| {
            let body = serde_json::to_vec(release)
                .map_err(|e| StoreError::Internal(format!("encode: {e}")))?;
            Ok(build(self.raw(release.namespace()), release.name(), body))
        })
    }

    /// Deletes a HelmRelease for `user`, with preconditions and propagation;
    /// answers with upstream's answer as its text: the release as it was
    /// last stored, or a `Status` (the app store reads it, see [`Written`]).
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
        user: &UserInfo,
    ) -> Result<Written, StoreError> {
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
        self.send_write(self.raw(namespace).delete(name, &params), user)
            .await
    }
}

fn write_params(dry_run: bool) -> PostParams {
    PostParams {
        dry_run,
        field_manager: Some("kubectl-cozy".into()),
    }
}

/// A request as kube's request builders make it.
type BuiltRequest = Result<http::Request<Vec<u8>>, kube::core::request::Error>;

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

fn upstream(err: kube::Error) -> StoreError {
    match err {
        kube::Error::Api(status) => match (status.code, status.reason.as_str()) {
            (404, _) => StoreError::NotFound,
            (409, "AlreadyExists") => StoreError::AlreadyExists {
                being_deleted: status.message.starts_with("object is being deleted: "),
            },
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
    #[test]
    fn list_pages_keep_each_item_as_the_cache_does() {
        let empty: super::StoredPage = serde_json::from_str(
            r#"{"kind":"HelmReleaseList","metadata":{"resourceVersion":"7"},"items":null}"#,
        )
        .unwrap();
        assert_eq!(empty.metadata.resource_version(), 7);
        assert!(empty.items.is_empty());
        let page: super::StoredPage = serde_json::from_str(
            r#"{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmReleaseList",
                "metadata":{"resourceVersion":"50","continue":"abc"},"items":[
                {"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease",
                 "metadata":{"name":"pg-a","namespace":"t","resourceVersion":"44",
                  "managedFields":[{"manager":"x","operation":"Update","fieldsV1":{"f:spec":{}}}],
                  "labels":{"apps.cozystack.io/application.kind":"Postgres"}},
                 "spec":{"values":{"size":"1Gi"}}},
                {"metadata":{"name":"pg-b","namespace":"t","resourceVersion":"45"},"spec":{}}]}"#,
        )
        .unwrap();
        assert_eq!(page.metadata.continue_token.as_deref(), Some("abc"));
        let keys: Vec<_> = page.items.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(
            keys,
            [super::Key::new("t", "pg-a"), super::Key::new("t", "pg-b")]
        );
        let (_, a) = &page.items[0];
        assert_eq!(a.resource_version(), 44);
        assert_eq!(a.kind_label(), Some("Postgres"));
        let value = a.value();
        assert!(
            value.pointer("/metadata/managedFields").is_none(),
            "{value}"
        );
        assert_eq!(value["spec"]["values"]["size"], "1Gi");
        // An item without apiVersion and kind gets the HelmRelease's.
        assert_eq!(page.items[1].1.value()["kind"], "HelmRelease");
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
