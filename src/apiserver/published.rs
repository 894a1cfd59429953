//! The documents the server publishes about its kinds — discovery
//! ([`super::discovery`]) and OpenAPI ([`super::openapi`]) — built once per
//! registry snapshot and kept encoded with their ETags, so that serving one
//! costs a copy of its bytes, not a build, an encoding and a SHA-512 each
//! time. Kinds are data: a reloaded definition set is a new snapshot, and
//! the first request after it builds the new documents.
//!
//! Discovery is small and built with the snapshot's entry; the OpenAPI
//! documents are built on their first request (v2 alone, in JSON and in
//! gnostic's protobuf at once; v3 all group-versions at once, the core
//! `api/v1` of a standalone server included, since the v3 root carries
//! every document's hash).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use super::openapi::{self, OpenApiOptions};
use super::{discovery, gnostic};
use crate::kinds::registry::Snapshot;

/// One encoded document and its ETag value (quoted).
#[derive(Debug, Clone)]
pub(crate) struct Document {
    /// The JSON body.
    pub body: Bytes,
    /// The `ETag` header value, quotes included.
    pub etag: String,
}

/// An OpenAPI document and its hash (the `ETag`, and for v3 the `?hash=`
/// clients pin).
#[derive(Debug, Clone)]
pub(crate) struct HashedDocument {
    /// The body: JSON, or protobuf for v2's.
    pub body: Bytes,
    /// Upper-case hex SHA-512 of the body.
    pub hash: String,
}

impl HashedDocument {
    fn of(doc: &serde_json::Value) -> HashedDocument {
        HashedDocument {
            body: encode(doc),
            hash: openapi::hash_of(doc),
        }
    }
}

/// `/openapi/v2` in both encodings, each with its own hash.
///
/// kube-openapi's handler gives both the JSON's `ETag`; here the protobuf
/// body has its own. Earlier versions answered client-go's protobuf request
/// with JSON under the JSON's `ETag`, which kubectl keeps in its HTTP cache
/// (`~/.kube/cache/http`, by URL and `Accept`): with a shared `ETag` its
/// revalidation would get 304 and it would go on failing to decode that
/// cached JSON until the document changed.
#[derive(Debug)]
pub(crate) struct OpenApiV2 {
    /// The JSON document and its hash.
    pub json: HashedDocument,
    /// The document as gnostic's protobuf `openapi_v2.Document` and the
    /// hash of those bytes, or why it could not be converted.
    pub protobuf: Result<HashedDocument, gnostic::Error>,
}

impl OpenApiV2 {
    fn of(doc: &serde_json::Value) -> OpenApiV2 {
        let protobuf = gnostic::encode(doc).map(|bytes| HashedDocument {
            hash: openapi::hash_of_bytes(&bytes),
            body: Bytes::from(bytes),
        });
        if let Err(e) = &protobuf {
            tracing::error!("OpenAPI v2 will not be served as protobuf: {e}");
        }
        OpenApiV2 {
            json: HashedDocument::of(doc),
            protobuf,
        }
    }
}

/// Every document served for one snapshot.
#[derive(Debug)]
pub(crate) struct Published {
    snapshot: Arc<Snapshot>,
    options: OpenApiOptions,
    /// `/apis` (`APIGroupList`).
    pub group_list: Bytes,
    /// `/apis` as aggregated discovery, with its ETag.
    pub aggregated: Document,
    groups: HashMap<String, Bytes>,
    resource_lists: HashMap<(String, String), Bytes>,
    v2: OnceLock<OpenApiV2>,
    v3: OnceLock<OpenApiV3>,
}

/// The v3 root and every group-version's document.
#[derive(Debug)]
struct OpenApiV3 {
    root: Bytes,
    documents: HashMap<(String, String), HashedDocument>,
}

/// `/api` as aggregated discovery (a standalone server's core group,
/// [`crate::apiserver::handlers::namespaces::api_aggregated`]): the same
/// for the life of the process, its ETag the hash of its body.
pub(crate) fn core_aggregated() -> &'static Document {
    static DOC: std::sync::LazyLock<Document> = std::sync::LazyLock::new(|| {
        let body = encode(&super::handlers::namespaces::api_aggregated());
        let etag = discovery::etag_of_body(&body);
        Document { body, etag }
    });
    &DOC
}

fn encode(doc: &serde_json::Value) -> Bytes {
    Bytes::from(serde_json::to_vec(doc).unwrap_or_default())
}

impl Published {
    /// The documents of `snapshot`; discovery is built now.
    pub(crate) fn new(snapshot: Arc<Snapshot>, options: OpenApiOptions) -> Published {
        let mut groups = HashMap::new();
        let mut resource_lists = HashMap::new();
        for (group, versions) in discovery::groups(&snapshot) {
            if let Some(doc) = discovery::api_group(&snapshot, &group) {
                groups.insert(group.clone(), encode(&doc));
            }
            for version in versions {
                if let Some(doc) = discovery::api_resource_list(&snapshot, &group, &version) {
                    resource_lists.insert((group.clone(), version), encode(&doc));
                }
            }
        }
        Published {
            group_list: encode(&discovery::api_group_list(&snapshot)),
            aggregated: Document {
                body: encode(&discovery::aggregated(&snapshot)),
                etag: discovery::etag(&snapshot),
            },
            groups,
            resource_lists,
            v2: OnceLock::new(),
            v3: OnceLock::new(),
            snapshot,
            options,
        }
    }

    /// The snapshot these documents describe.
    pub(crate) fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    /// `/apis/<group>` (`APIGroup`), if the group is served.
    pub(crate) fn group(&self, group: &str) -> Option<&Bytes> {
        self.groups.get(group)
    }

    /// `/apis/<group>/<version>` (`APIResourceList`), if served.
    pub(crate) fn resource_list(&self, group: &str, version: &str) -> Option<&Bytes> {
        self.resource_lists
            .get(&(group.to_owned(), version.to_owned()))
    }

    /// `/openapi/v2`, built (in both encodings) on first use.
    pub(crate) fn openapi_v2(&self) -> &OpenApiV2 {
        self.v2
            .get_or_init(|| OpenApiV2::of(&openapi::v2(&self.snapshot, &self.options)))
    }

    fn openapi_v3(&self) -> &OpenApiV3 {
        self.v3.get_or_init(|| {
            let mut documents = HashMap::new();
            // The core group first, as kube-apiserver lists it.
            let mut order = vec![(String::new(), "v1".to_owned())];
            if let Some(doc) = openapi::v3_core_v1(&self.options) {
                documents.insert((String::new(), "v1".to_owned()), HashedDocument::of(&doc));
            }
            for (group, versions) in discovery::groups(&self.snapshot) {
                for version in versions {
                    if let Some(doc) =
                        openapi::v3_group_version(&self.snapshot, &group, &version, &self.options)
                    {
                        documents
                            .insert((group.clone(), version.clone()), HashedDocument::of(&doc));
                    }
                    order.push((group.clone(), version));
                }
            }
            let root = openapi::v3_root_from(order.iter().filter_map(|key| {
                documents
                    .get(key)
                    .map(|doc| (key.0.as_str(), key.1.as_str(), doc.hash.as_str()))
            }));
            OpenApiV3 {
                root: encode(&root),
                documents,
            }
        })
    }

    /// `/openapi/v3`, built (with every group-version's document) on first use.
    pub(crate) fn openapi_v3_root(&self) -> &Bytes {
        &self.openapi_v3().root
    }

    /// `/openapi/v3/apis/<group>/<version>` (`/openapi/v3/api/<version>`
    /// for group `""`), if served.
    pub(crate) fn openapi_v3_group_version(
        &self,
        group: &str,
        version: &str,
    ) -> Option<&HashedDocument> {
        self.openapi_v3()
            .documents
            .get(&(group.to_owned(), version.to_owned()))
    }
}

/// The documents of the registry's current snapshot, kept until the next
/// snapshot asks for its own.
#[derive(Debug)]
pub(crate) struct PublishedCache {
    options: OpenApiOptions,
    current: Mutex<Option<Arc<Published>>>,
}

impl PublishedCache {
    /// An empty cache; OpenAPI documents are built with `options`.
    pub(crate) fn new(options: OpenApiOptions) -> PublishedCache {
        PublishedCache {
            options,
            current: Mutex::new(None),
        }
    }

    /// The documents of `snapshot`: the kept ones when they are its, else
    /// new ones, which are kept instead.
    pub(crate) fn of(&self, snapshot: &Arc<Snapshot>) -> Arc<Published> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(published) = current.as_ref()
            && Arc::ptr_eq(published.snapshot(), snapshot)
        {
            return published.clone();
        }
        let published = Arc::new(Published::new(snapshot.clone(), self.options));
        *current = Some(published.clone());
        published
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::load;

    fn snapshot(text: &str) -> Arc<Snapshot> {
        Arc::new(Snapshot::build(load::load_text(text, "test.yaml").unwrap()).unwrap())
    }

    const PG: &str = "kind: Postgres\nplural: postgreses\nopenAPISchema: {type: object}\n\
                      release: {chart: {name: postgres, sourceRef: {kind: HelmRepository, name: r}}}\n";

    #[test]
    fn documents_are_the_builders_own_and_kept_per_snapshot() {
        for core_namespaces in [false, true] {
            let options = OpenApiOptions {
                field_validation: true,
                core_namespaces,
            };
            let a = snapshot(PG);
            let cache = PublishedCache::new(options);
            let published = cache.of(&a);
            assert!(Arc::ptr_eq(&published, &cache.of(&a)), "kept");

            assert_eq!(published.group_list, encode(&discovery::api_group_list(&a)));
            assert_eq!(published.aggregated.etag, discovery::etag(&a));
            assert_eq!(
                published.resource_list("apps.cozystack.io", "v1alpha1"),
                discovery::api_resource_list(&a, "apps.cozystack.io", "v1alpha1")
                    .map(|d| encode(&d))
                    .as_ref()
            );
            assert!(published.group("example.com").is_none());

            let v2 = openapi::v2(&a, &options);
            assert_eq!(published.openapi_v2().json.body, encode(&v2));
            assert_eq!(published.openapi_v2().json.hash, openapi::hash_of(&v2));
            let protobuf = published.openapi_v2().protobuf.as_ref().unwrap();
            let bytes = gnostic::encode(&v2).unwrap();
            assert_eq!(protobuf.body, bytes);
            assert_eq!(protobuf.hash, openapi::hash_of_bytes(&bytes));
            assert_ne!(protobuf.hash, published.openapi_v2().json.hash);
            let v3 =
                openapi::v3_group_version(&a, "apps.cozystack.io", "v1alpha1", &options).unwrap();
            let doc = published
                .openapi_v3_group_version("apps.cozystack.io", "v1alpha1")
                .unwrap();
            assert_eq!(
                (&doc.body, &doc.hash),
                (&encode(&v3), &openapi::hash_of(&v3))
            );
            let core = published.openapi_v3_group_version("", "v1");
            assert_eq!(
                core.map(|doc| (&doc.body, &doc.hash)),
                openapi::v3_core_v1(&options)
                    .map(|v3| (encode(&v3), openapi::hash_of(&v3)))
                    .as_ref()
                    .map(|(body, hash)| (body, hash))
            );
            assert_eq!(core.is_some(), core_namespaces);
            assert_eq!(
                published.openapi_v3_root(),
                &encode(&openapi::v3_root(&a, &options))
            );
        }

        let options = OpenApiOptions::default();
        let a = snapshot(PG);
        let cache = PublishedCache::new(options);
        let published = cache.of(&a);
        // A new snapshot (a reload, even of the same text) gets its own.
        let b = snapshot(PG);
        assert!(!Arc::ptr_eq(&published, &cache.of(&b)));
    }

    /// A document gnostic's messages cannot hold is still served as JSON;
    /// its protobuf is an error saying where (answered 503, as kube-openapi
    /// answers when its conversion fails).
    #[test]
    fn a_document_protobuf_cannot_hold_stays_json() {
        let kind = PG.replace(
            "openAPISchema: {type: object}",
            "openAPISchema: {type: object, properties: {a: {type: string, externalDocs: {description: d}}}}",
        );
        let published = PublishedCache::new(OpenApiOptions::default()).of(&snapshot(&kind));
        let v2 = published.openapi_v2();
        assert!(!v2.json.body.is_empty());
        let err = v2.protobuf.as_ref().expect_err("no url");
        assert_eq!(
            err.pointer,
            "/definitions/io.cozystack.apps.v1alpha1.Postgres/properties/spec/properties/a/externalDocs"
        );
        assert_eq!(err.problem, "missing required url");
    }
}
