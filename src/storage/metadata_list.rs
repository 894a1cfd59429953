//! One page of the consistent-read check: a `PartialObjectMetadataList` of
//! HelmReleases as kube-apiserver answers it, read for the list's
//! resourceVersion and continue token and each item's namespace, name and
//! resourceVersion only.
//!
//! The check asks for protobuf first ([`ACCEPT`]): kube-apiserver encodes a
//! metadata list of custom resources in protobuf several times faster than
//! in JSON, and the answer is a third of the size. Only the messages and
//! fields read are declared here (apimachinery's `runtime.Unknown` envelope
//! and `meta/v1` `PartialObjectMetadataList`, `ListMeta`, `ObjectMeta`);
//! prost skips every other field (managedFields, labels, annotations, most
//! of each object) without allocating. An answer in JSON (a server that
//! does not serve protobuf for it) is read the same way.

use bytes::Bytes;
use prost::Message;

/// The `Accept` of the check: protobuf, else JSON, both as metadata lists.
pub const ACCEPT: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, \
     application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// The four bytes before a protobuf-encoded Kubernetes object.
pub const PROTOBUF_MAGIC: &[u8] = b"k8s\0";

/// One page of the check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The list's resourceVersion (0 when absent or not a number).
    pub resource_version: u64,
    /// Where the next page starts (`None` on the last page).
    pub continue_token: Option<String>,
    /// The objects of the page, in upstream's (key) order.
    pub items: Vec<Item>,
}

/// One object of a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Item {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.resourceVersion` (0 when absent or not a number).
    pub resource_version: u64,
}

/// Why a page could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// The protobuf envelope or list did not decode.
    #[error("metadata list (protobuf) does not decode")]
    Protobuf(#[source] prost::DecodeError),
    /// The envelope holds something else than a metadata list.
    #[error(
        "expected a PartialObjectMetadataList, got {kind:?} ({api_version:?}) encoded as {content_type:?}"
    )]
    NotAMetadataList {
        /// `typeMeta.kind` of the envelope.
        kind: String,
        /// `typeMeta.apiVersion` of the envelope.
        api_version: String,
        /// `contentType` of the envelope (empty: protobuf).
        content_type: String,
    },
    /// The JSON answer did not parse.
    #[error("metadata list (JSON) does not parse")]
    Json(#[source] serde_json::Error),
}

/// Reads a page in whichever encoding it came: protobuf when it starts with
/// [`PROTOBUF_MAGIC`], JSON otherwise.
pub fn decode(body: Bytes) -> Result<Page, PageError> {
    match body.strip_prefix(PROTOBUF_MAGIC) {
        Some(_) => decode_protobuf(body.slice(PROTOBUF_MAGIC.len()..)),
        None => decode_json(&body),
    }
}

fn decode_protobuf(envelope: Bytes) -> Result<Page, PageError> {
    let unknown = proto::Unknown::decode(envelope).map_err(PageError::Protobuf)?;
    let type_meta = unknown.type_meta.unwrap_or_default();
    let content_type = unknown.content_type.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    if kind != "PartialObjectMetadataList" || !content_type.is_empty() {
        return Err(PageError::NotAMetadataList {
            kind,
            api_version: type_meta.api_version.unwrap_or_default(),
            content_type,
        });
    }
    let list = proto::PartialObjectMetadataList::decode(unknown.raw.unwrap_or_default())
        .map_err(PageError::Protobuf)?;
    let meta = list.metadata.unwrap_or_default();
    Ok(Page {
        resource_version: number(meta.resource_version.as_deref()),
        continue_token: meta.continue_token.filter(|c| !c.is_empty()),
        items: list
            .items
            .into_iter()
            .map(|item| {
                let meta = item.metadata.unwrap_or_default();
                Item {
                    resource_version: number(meta.resource_version.as_deref()),
                    namespace: meta.namespace.unwrap_or_default(),
                    name: meta.name.unwrap_or_default(),
                }
            })
            .collect(),
    })
}

fn decode_json(body: &[u8]) -> Result<Page, PageError> {
    let page: json::List = serde_json::from_slice(body).map_err(PageError::Json)?;
    Ok(Page {
        resource_version: number(page.metadata.resource_version.as_deref()),
        continue_token: page.metadata.continue_token.filter(|c| !c.is_empty()),
        items: page
            .items
            .into_iter()
            .flatten()
            .map(|item| Item {
                resource_version: number(item.metadata.resource_version.as_deref()),
                namespace: item.metadata.namespace,
                name: item.metadata.name,
            })
            .collect(),
    })
}

fn number(rv: Option<&str>) -> u64 {
    rv.and_then(|rv| rv.parse().ok()).unwrap_or(0)
}

/// The JSON shape, read for the same fields (the rest is skipped).
mod json {
    #[derive(serde::Deserialize)]
    pub(super) struct List {
        pub(super) metadata: Meta,
        /// `null` when the list is empty.
        #[serde(default)]
        pub(super) items: Option<Vec<Item>>,
    }

    #[derive(serde::Deserialize)]
    pub(super) struct Item {
        pub(super) metadata: Meta,
    }

    #[derive(serde::Deserialize)]
    pub(super) struct Meta {
        #[serde(default)]
        pub(super) namespace: String,
        #[serde(default)]
        pub(super) name: String,
        #[serde(default, rename = "resourceVersion")]
        pub(super) resource_version: Option<String>,
        #[serde(default, rename = "continue")]
        pub(super) continue_token: Option<String>,
    }
}

/// The protobuf messages read, with apimachinery's field numbers
/// (`runtime/generated.proto`, `apis/meta/v1/generated.proto`); the
/// encoder side of the same messages builds the unit tests' pages.
pub(crate) mod proto {
    /// `runtime.Unknown`: the envelope after the magic.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Unknown {
        #[prost(message, optional, tag = "1")]
        pub(crate) type_meta: Option<TypeMeta>,
        #[prost(bytes = "bytes", optional, tag = "2")]
        pub(crate) raw: Option<bytes::Bytes>,
        #[prost(string, optional, tag = "3")]
        pub(crate) content_encoding: Option<String>,
        #[prost(string, optional, tag = "4")]
        pub(crate) content_type: Option<String>,
    }

    /// `runtime.TypeMeta`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct TypeMeta {
        #[prost(string, optional, tag = "1")]
        pub(crate) api_version: Option<String>,
        #[prost(string, optional, tag = "2")]
        pub(crate) kind: Option<String>,
    }

    /// `meta.v1.PartialObjectMetadataList`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct PartialObjectMetadataList {
        #[prost(message, optional, tag = "1")]
        pub(crate) metadata: Option<ListMeta>,
        #[prost(message, repeated, tag = "2")]
        pub(crate) items: Vec<PartialObjectMetadata>,
    }

    /// `meta.v1.PartialObjectMetadata`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct PartialObjectMetadata {
        #[prost(message, optional, tag = "1")]
        pub(crate) metadata: Option<ObjectMeta>,
    }

    /// `meta.v1.ListMeta`: resourceVersion and continue.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ListMeta {
        #[prost(string, optional, tag = "2")]
        pub(crate) resource_version: Option<String>,
        #[prost(string, optional, tag = "3")]
        pub(crate) continue_token: Option<String>,
    }

    /// `meta.v1.ObjectMeta`: name, namespace and resourceVersion.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ObjectMeta {
        #[prost(string, optional, tag = "1")]
        pub(crate) name: Option<String>,
        #[prost(string, optional, tag = "3")]
        pub(crate) namespace: Option<String>,
        #[prost(string, optional, tag = "6")]
        pub(crate) resource_version: Option<String>,
    }
}

#[cfg(test)]
mod tests {
    use super::proto::{ListMeta, ObjectMeta, PartialObjectMetadata, PartialObjectMetadataList};
    use super::*;

    fn item(ns: &str, name: &str, rv: &str) -> PartialObjectMetadata {
        PartialObjectMetadata {
            metadata: Some(ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                resource_version: Some(rv.into()),
            }),
        }
    }

    fn envelope(kind: &str, raw: Vec<u8>) -> Bytes {
        let unknown = proto::Unknown {
            type_meta: Some(proto::TypeMeta {
                api_version: Some("meta.k8s.io/v1".into()),
                kind: Some(kind.into()),
            }),
            raw: Some(raw.into()),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut bytes = PROTOBUF_MAGIC.to_vec();
        unknown.encode(&mut bytes).unwrap();
        bytes.into()
    }

    #[test]
    fn a_protobuf_page_reads_versions_and_continue() {
        let list = PartialObjectMetadataList {
            metadata: Some(ListMeta {
                resource_version: Some("50".into()),
                continue_token: Some("abc".into()),
            }),
            items: vec![item("t", "pg-a", "44"), item("t", "pg-b", "x")],
        };
        let page = decode(envelope("PartialObjectMetadataList", list.encode_to_vec())).unwrap();
        assert_eq!(
            page,
            Page {
                resource_version: 50,
                continue_token: Some("abc".into()),
                items: vec![
                    Item {
                        namespace: "t".into(),
                        name: "pg-a".into(),
                        resource_version: 44
                    },
                    Item {
                        namespace: "t".into(),
                        name: "pg-b".into(),
                        resource_version: 0
                    },
                ],
            }
        );
        // The last page: an empty continue is no continue.
        let last = PartialObjectMetadataList {
            metadata: Some(ListMeta {
                resource_version: Some("51".into()),
                continue_token: Some(String::new()),
            }),
            items: vec![],
        };
        let page = decode(envelope("PartialObjectMetadataList", last.encode_to_vec())).unwrap();
        assert_eq!((page.resource_version, page.continue_token), (51, None));
        assert!(page.items.is_empty());
    }

    /// A page as kube-apiserver writes it: every ObjectMeta field around the
    /// three read (uid, generation, timestamps, labels, managedFields with
    /// nested messages), which are skipped, and a `Status` envelope refused.
    #[test]
    fn a_captured_shape_page_skips_the_rest_of_the_metadata() {
        use prost::encoding::{self, WireType};
        // ObjectMeta as apimachinery encodes it, fields in tag order.
        let mut meta = Vec::new();
        encoding::string::encode(1, &"pg-a".to_owned(), &mut meta);
        encoding::string::encode(2, &String::new(), &mut meta);
        encoding::string::encode(3, &"tenant-x".to_owned(), &mut meta);
        encoding::string::encode(4, &String::new(), &mut meta);
        encoding::string::encode(5, &"0b0f-uid".to_owned(), &mut meta);
        encoding::string::encode(6, &"123456".to_owned(), &mut meta);
        encoding::int64::encode(7, &3, &mut meta);
        // creationTimestamp: Time { seconds = 1, nanos = 2 }.
        let mut time = Vec::new();
        encoding::int64::encode(1, &1_764_547_200, &mut time);
        encoding::int32::encode(2, &0, &mut time);
        encoding::bytes::encode(8, &time, &mut meta);
        // labels: map<string, string> entries.
        for (k, v) in [
            ("helm.toolkit.fluxcd.io/name", "pg-a"),
            ("apps.cozystack.io/kind", "Postgres"),
        ] {
            let mut entry = Vec::new();
            encoding::string::encode(1, &k.to_owned(), &mut entry);
            encoding::string::encode(2, &v.to_owned(), &mut entry);
            encoding::bytes::encode(11, &entry, &mut meta);
        }
        encoding::string::encode(14, &"finalizers.fluxcd.io".to_owned(), &mut meta);
        // managedFields: ManagedFieldsEntry { manager, operation, fieldsV1 { raw } }.
        let mut fields_v1 = Vec::new();
        encoding::bytes::encode(
            1,
            &br#"{"f:spec":{"f:values":{}}}"#.to_vec(),
            &mut fields_v1,
        );
        let mut entry = Vec::new();
        encoding::string::encode(1, &"kubectl-cozy".to_owned(), &mut entry);
        encoding::string::encode(2, &"Update".to_owned(), &mut entry);
        encoding::string::encode(3, &"helm.toolkit.fluxcd.io/v2".to_owned(), &mut entry);
        encoding::string::encode(6, &"FieldsV1".to_owned(), &mut entry);
        encoding::bytes::encode(7, &fields_v1, &mut entry);
        encoding::bytes::encode(17, &entry, &mut meta);
        // PartialObjectMetadata { metadata } in the list's items.
        let mut object = Vec::new();
        encoding::bytes::encode(1, &meta, &mut object);
        let mut list_meta = Vec::new();
        encoding::string::encode(1, &String::new(), &mut list_meta);
        encoding::string::encode(2, &"123500".to_owned(), &mut list_meta);
        encoding::string::encode(
            3,
            &"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ".to_owned(),
            &mut list_meta,
        );
        encoding::int64::encode(4, &4_999, &mut list_meta);
        let mut list = Vec::new();
        encoding::encode_key(1, WireType::LengthDelimited, &mut list);
        encoding::encode_varint(list_meta.len() as u64, &mut list);
        list.extend_from_slice(&list_meta);
        encoding::bytes::encode(2, &object, &mut list);
        encoding::bytes::encode(2, &object, &mut list);

        let page = decode(envelope("PartialObjectMetadataList", list)).unwrap();
        assert_eq!(page.resource_version, 123_500);
        assert_eq!(
            page.continue_token.as_deref(),
            Some("eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ")
        );
        assert_eq!(page.items.len(), 2);
        assert_eq!(
            page.items[0],
            Item {
                namespace: "tenant-x".into(),
                name: "pg-a".into(),
                resource_version: 123_456
            }
        );

        // Anything but a metadata list is refused, and so is garbage.
        let err = decode(envelope("Status", Vec::new())).unwrap_err();
        assert!(matches!(err, PageError::NotAMetadataList { ref kind, .. } if kind == "Status"));
        let mut truncated = envelope(
            "PartialObjectMetadataList",
            PartialObjectMetadataList {
                metadata: None,
                items: vec![item("t", "a", "1")],
            }
            .encode_to_vec(),
        )
        .to_vec();
        truncated.truncate(truncated.len() - 3);
        assert!(matches!(
            decode(truncated.into()),
            Err(PageError::Protobuf(_))
        ));
    }

    #[test]
    fn a_json_page_reads_the_same() {
        let empty = decode(Bytes::from_static(
            br#"{"kind":"PartialObjectMetadataList","metadata":{"resourceVersion":"42"},"items":null}"#,
        ))
        .unwrap();
        assert_eq!(
            empty,
            Page {
                resource_version: 42,
                continue_token: None,
                items: vec![]
            }
        );
        let page = decode(Bytes::from_static(
            br#"{"metadata":{"resourceVersion":"50","continue":"abc"},"items":[
                {"metadata":{"name":"pg-a","namespace":"t","resourceVersion":"44",
                 "managedFields":[{"manager":"x","fieldsV1":{"f:spec":{}}}],"labels":{"a":"b"}}}]}"#,
        ))
        .unwrap();
        assert_eq!(page.continue_token.as_deref(), Some("abc"));
        assert_eq!(
            page.items,
            [Item {
                namespace: "t".into(),
                name: "pg-a".into(),
                resource_version: 44
            }]
        );
        assert!(matches!(
            decode(Bytes::from_static(b"<html>")),
            Err(PageError::Json(_))
        ));
    }
}
