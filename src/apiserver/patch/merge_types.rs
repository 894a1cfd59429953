//! The merge-relevant shape of an object, read from the kind's structural
//! schema the way kube-openapi's `schemaconv` turns a CRD schema into a
//! structured-merge-diff schema.
//!
//! The object root has `apiVersion`, `kind`, `metadata` (Kubernetes'
//! `ObjectMeta`: granular `labels`/`annotations`, `finalizers` a set,
//! `ownerReferences` a map keyed by `uid` with atomic items), `spec` (the
//! kind's schema) and `status` (untyped for merging; an applied
//! configuration's is checked against the published status schema).
//!
//! In a schema node:
//! - `type: object` is a map: granular unless `x-kubernetes-map-type:
//!   atomic`; `properties` are its named fields, other keys take
//!   `additionalProperties`' schema, or are *deduced*;
//! - `type: array` is a list: `x-kubernetes-list-type` `atomic` (the
//!   default), `set` (items by value) or `map` (items by
//!   `x-kubernetes-list-map-keys`);
//! - no `type` (`x-kubernetes-int-or-string`, free-form
//!   `x-kubernetes-preserve-unknown-fields`) may be any of these.
//!
//! *Deduced* is structured-merge-diff's `__untyped_deduced_`: maps granular
//! with deduced values, lists atomic, scalars. Everything outside the
//! schema is deduced. A field a closed map does not declare
//! ([`MapType::closed`]) is refused in an applied configuration before any
//! merge (`merge::validate_config`, kube-apiserver's 500); elsewhere it is
//! deduced, and the caller prunes or rejects it when it validates the
//! result.

use std::sync::LazyLock;

use serde_json::{Value, json};

/// `ObjectMeta` as Kubernetes' OpenAPI describes it for merging.
static OBJECT_META: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "generateName": {"type": "string"},
            "namespace": {"type": "string"},
            "selfLink": {"type": "string"},
            "uid": {"type": "string"},
            "resourceVersion": {"type": "string"},
            "generation": {"type": "integer"},
            "creationTimestamp": {"type": "string"},
            "deletionTimestamp": {"type": "string"},
            "deletionGracePeriodSeconds": {"type": "integer"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "ownerReferences": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["uid"],
                "items": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "name": {"type": "string"},
                        "uid": {"type": "string"},
                        "controller": {"type": "boolean"},
                        "blockOwnerDeletion": {"type": "boolean"}
                    }
                }
            },
            "finalizers": {
                "type": "array",
                "x-kubernetes-list-type": "set",
                "items": {"type": "string"}
            },
            "managedFields": {
                "type": "array",
                "x-kubernetes-list-type": "atomic",
                "items": {"type": "object"}
            }
        }
    })
});

static STRING: LazyLock<Value> = LazyLock::new(|| json!({"type": "string"}));

/// The `status` schema every kind publishes: what kube-apiserver's field
/// manager checks an applied configuration's `status` against.
static STATUS: LazyLock<Value> = LazyLock::new(crate::apiserver::openapi::status_schema);

const ROOT_FIELDS: [&str; 5] = ["apiVersion", "kind", "metadata", "spec", "status"];

/// Where a value sits in the schema.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Node<'s> {
    /// The object root; holds the schema of `spec`.
    Root(&'s Value),
    /// A node of a structural schema.
    Schema(&'s Value),
    /// No schema: granular maps of deduced values, atomic lists.
    Deduced,
    /// Inside an untyped atomic list: everything atomic.
    UntypedAtomic,
    /// No type at all (a field of a list, an element of a map):
    /// structured-merge-diff's empty type reference. Only reachable from
    /// field sets, never from values.
    Nothing,
}

/// How a list merges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType<'s> {
    /// Replaced as a whole.
    Atomic,
    /// Items are scalars merged by value.
    Set,
    /// Items are maps merged by these key fields.
    Map(Vec<&'s str>),
}

/// The map aspect of a node.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MapType<'s> {
    node: Node<'s>,
    /// Replaced as a whole.
    pub(crate) atomic: bool,
}

/// The list aspect of a node.
#[derive(Debug, Clone)]
pub(crate) struct ListInfo<'s> {
    /// How items merge.
    pub(crate) list_type: ListType<'s>,
    /// The schema of the items.
    pub(crate) element: Node<'s>,
}

fn type_of(s: &Value) -> Option<&str> {
    s.get("type").and_then(Value::as_str)
}

impl<'s> Node<'s> {
    /// The object root for a kind whose `spec` has this schema.
    pub(crate) fn root(spec: &'s Value) -> Node<'s> {
        Node::Root(spec)
    }

    /// The map aspect, if values here may be maps.
    pub(crate) fn map(self) -> Option<MapType<'s>> {
        match self {
            Node::Root(_) | Node::Deduced => Some(MapType {
                node: self,
                atomic: false,
            }),
            Node::UntypedAtomic => Some(MapType {
                node: self,
                atomic: true,
            }),
            Node::Schema(s) => match type_of(s) {
                Some("object") | None => Some(MapType {
                    node: self,
                    atomic: s.get("x-kubernetes-map-type").and_then(Value::as_str)
                        == Some("atomic"),
                }),
                Some(_) => None,
            },
            Node::Nothing => None,
        }
    }

    /// The list aspect, if values here may be lists.
    pub(crate) fn list(self) -> Option<ListInfo<'s>> {
        match self {
            Node::Root(_) | Node::Nothing => None,
            Node::Deduced | Node::UntypedAtomic => Some(ListInfo {
                list_type: ListType::Atomic,
                element: Node::UntypedAtomic,
            }),
            Node::Schema(s) => match type_of(s) {
                Some("array") | None => {
                    let list_type = match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                        Some("set") => ListType::Set,
                        Some("map") => {
                            let keys: Vec<&str> = s
                                .get("x-kubernetes-list-map-keys")
                                .and_then(Value::as_array)
                                .map(|k| k.iter().filter_map(Value::as_str).collect())
                                .unwrap_or_default();
                            if keys.is_empty() {
                                ListType::Atomic
                            } else {
                                ListType::Map(keys)
                            }
                        }
                        _ => ListType::Atomic,
                    };
                    let element = match s.get("items") {
                        Some(items) if items.is_object() => Node::Schema(items),
                        _ => Node::UntypedAtomic,
                    };
                    Some(ListInfo { list_type, element })
                }
                Some(_) => None,
            },
        }
    }

    /// Whether scalars may sit here (structured-merge-diff resolves a
    /// value-less node to its map aspect first, then scalar, then list).
    pub(crate) fn scalar(self) -> bool {
        match self {
            Node::Root(_) | Node::Nothing => false,
            Node::Deduced | Node::UntypedAtomic => true,
            Node::Schema(s) => !matches!(type_of(s), Some("object" | "array")),
        }
    }

    /// Whether this is a free-form map whose children are all deduced
    /// (`isUntypedDeducedMap`).
    pub(crate) fn is_deduced_map(self) -> bool {
        match self {
            Node::Deduced => true,
            Node::Schema(s) => {
                s.get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(|p| p.is_empty())
                    && !s.get("additionalProperties").is_some_and(Value::is_object)
            }
            _ => false,
        }
    }

    /// The `type` a schema node declares (`object`, `array`, `string`,
    /// `integer`, `number`, `boolean`); `None` elsewhere and for a node
    /// that may hold any of them.
    pub(crate) fn declared_type(self) -> Option<&'s str> {
        match self {
            Node::Schema(s) => type_of(s),
            _ => None,
        }
    }

    /// Whether this schema node opts itself and everything under it into
    /// keeping unknown fields (`x-kubernetes-preserve-unknown-fields`).
    pub(crate) fn preserves_unknown_fields(self) -> bool {
        matches!(self, Node::Schema(s)
            if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)))
    }

    /// The default of a key field of an associative list's items.
    pub(crate) fn key_default(self, key: &str) -> Option<&'s Value> {
        match self {
            Node::Schema(s) => s.get("properties")?.get(key)?.get("default"),
            _ => None,
        }
    }
}

impl<'s> MapType<'s> {
    /// Whether `key` is a declared field (`FindField`).
    pub(crate) fn is_named_field(self, key: &str) -> bool {
        match self.node {
            Node::Root(_) => ROOT_FIELDS.contains(&key),
            Node::Schema(s) => s
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key(key)),
            _ => false,
        }
    }

    /// Whether keys the map does not declare are refused ("field not
    /// declared in schema"): `schemaconv` gives a map no element type when
    /// it has `properties` and no `additionalProperties` (or `false`), and
    /// neither it nor an ancestor preserves unknown fields (the caller's
    /// `preserved`). The object root declares its five fields.
    pub(crate) fn closed(self, preserved: bool) -> bool {
        match self.node {
            Node::Root(_) => true,
            Node::Schema(s) => {
                !preserved
                    && !self.node.preserves_unknown_fields()
                    && s.get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| !p.is_empty())
                    && s.get("additionalProperties")
                        .is_none_or(|a| a == &Value::Bool(false))
            }
            _ => false,
        }
    }

    /// The schema an applied configuration's value under `key` is checked
    /// against: [`MapType::field`], but the root's `status` is the
    /// published status schema (merges leave status out).
    pub(crate) fn checked_field(self, key: &str) -> Node<'s> {
        match self.node {
            Node::Root(_) if key == "status" => Node::Schema(&STATUS),
            _ => self.field(key),
        }
    }

    /// The schema of the value under `key`.
    pub(crate) fn field(self, key: &str) -> Node<'s> {
        match self.node {
            Node::Root(spec) => match key {
                "apiVersion" | "kind" => Node::Schema(&STRING),
                "metadata" => Node::Schema(&OBJECT_META),
                "spec" => Node::Schema(spec),
                _ => Node::Deduced,
            },
            Node::Schema(s) => {
                if let Some(p) = s.get("properties").and_then(|p| p.get(key))
                    && p.is_object()
                {
                    return Node::Schema(p);
                }
                self.element()
            }
            Node::UntypedAtomic => Node::UntypedAtomic,
            _ => Node::Deduced,
        }
    }

    /// The schema of values under undeclared keys.
    pub(crate) fn element(self) -> Node<'s> {
        match self.node {
            Node::Schema(s) => match s.get("additionalProperties") {
                Some(ap) if ap.is_object() => Node::Schema(ap),
                _ => Node::Deduced,
            },
            Node::UntypedAtomic => Node::UntypedAtomic,
            _ => Node::Deduced,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_metadata() {
        let spec = json!({"type": "object", "properties": {"replicas": {"type": "integer"}}});
        let root = Node::root(&spec).map().unwrap();
        assert!(root.is_named_field("spec"));
        assert!(!root.is_named_field("other"));
        let meta = root.field("metadata").map().unwrap();
        assert!(!meta.atomic);
        let finalizers = meta.field("finalizers").list().unwrap();
        assert_eq!(finalizers.list_type, ListType::Set);
        let owners = meta.field("ownerReferences").list().unwrap();
        assert_eq!(owners.list_type, ListType::Map(vec!["uid"]));
        assert!(owners.element.map().unwrap().atomic);
        let labels = meta.field("labels").map().unwrap();
        assert!(!labels.is_named_field("app"));
        assert!(labels.field("app").scalar());
        assert!(matches!(root.field("status"), Node::Deduced));
    }

    #[test]
    fn schema_nodes() {
        let s = json!({
            "type": "object",
            "properties": {
                "list": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}}
                },
                "atomicMap": {"type": "object", "x-kubernetes-map-type": "atomic"},
                "plain": {"type": "array", "items": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "ios": {"x-kubernetes-int-or-string": true}
            }
        });
        let m = Node::Schema(&s).map().unwrap();
        let list = m.field("list").list().unwrap();
        assert_eq!(list.list_type, ListType::Map(vec!["name"]));
        assert_eq!(list.element.key_default("name"), Some(&json!("x")));
        assert!(m.field("atomicMap").map().unwrap().atomic);
        assert_eq!(m.field("plain").list().unwrap().list_type, ListType::Atomic);
        assert!(m.field("free").is_deduced_map());
        assert!(matches!(m.field("unknown"), Node::Deduced));
        let ios = m.field("ios");
        assert!(ios.scalar() && ios.map().is_some() && ios.list().is_some());
        assert!(m.field("plain").map().is_none());
    }
}
