//! Unknown fields outside `spec`, found and dropped as kube-apiserver's
//! decoder of a custom resource finds and drops them: the keys of an app
//! that are neither `apiVersion`, `kind`, `metadata`, `spec` nor `status`
//! (`sepc`), the keys of `metadata` that `ObjectMeta` does not have
//! (`metadata.lables`, `metadata.ownerReferences[0].bogus`), and the keys
//! of `status` its published schema does not declare (`status.foo`). The
//! kind's schema prunes `spec` itself (`CompiledSchema`).
//!
//! kube-apiserver refuses them under `fieldValidation=Strict` and warns
//! about them under `Warn`; in every mode they are gone from the object
//! before the field manager records it, so nobody owns them. It names the
//! metadata's first, sorted, then the rest (the pruned ones, `spec`'s
//! included), sorted as strings: [`UnknownFields::paths`].
//!
//! The walk allocates nothing unless it finds an unknown field.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// What a field holds, as far as unknown fields go.
enum Shape {
    /// Anything (its type is checked elsewhere, or every key is allowed).
    Any,
    /// An object with these fields.
    Fields(&'static [(&'static str, Shape)]),
    /// A list of these.
    Items(&'static Shape),
}

/// `metav1.OwnerReference`.
const OWNER_REFERENCE: Shape = Shape::Fields(&[
    ("apiVersion", Shape::Any),
    ("kind", Shape::Any),
    ("name", Shape::Any),
    ("uid", Shape::Any),
    ("controller", Shape::Any),
    ("blockOwnerDeletion", Shape::Any),
]);

/// `metav1.ManagedFieldsEntry` (`fieldsV1` is free-form).
const MANAGED_FIELDS_ENTRY: Shape = Shape::Fields(&[
    ("manager", Shape::Any),
    ("operation", Shape::Any),
    ("apiVersion", Shape::Any),
    ("time", Shape::Any),
    ("fieldsType", Shape::Any),
    ("fieldsV1", Shape::Any),
    ("subresource", Shape::Any),
]);

/// `metav1.ObjectMeta`.
const OBJECT_META: Shape = Shape::Fields(&[
    ("name", Shape::Any),
    ("generateName", Shape::Any),
    ("namespace", Shape::Any),
    ("selfLink", Shape::Any),
    ("uid", Shape::Any),
    ("resourceVersion", Shape::Any),
    ("generation", Shape::Any),
    ("creationTimestamp", Shape::Any),
    ("deletionTimestamp", Shape::Any),
    ("deletionGracePeriodSeconds", Shape::Any),
    ("labels", Shape::Any),
    ("annotations", Shape::Any),
    ("ownerReferences", Shape::Items(&OWNER_REFERENCE)),
    ("finalizers", Shape::Any),
    ("managedFields", Shape::Items(&MANAGED_FIELDS_ENTRY)),
]);

/// A condition of the status (`crate::apiserver::openapi`'s status schema).
const CONDITION: Shape = Shape::Fields(&[
    ("lastTransitionTime", Shape::Any),
    ("message", Shape::Any),
    ("observedGeneration", Shape::Any),
    ("reason", Shape::Any),
    ("status", Shape::Any),
    ("type", Shape::Any),
]);

/// The status every kind publishes (`crate::apiserver::openapi`).
const STATUS: Shape = Shape::Fields(&[
    ("conditions", Shape::Items(&CONDITION)),
    ("observedGeneration", Shape::Any),
    ("version", Shape::Any),
]);

/// An app, `spec` left to the kind's schema.
const APP: Shape = Shape::Fields(&[
    ("apiVersion", Shape::Any),
    ("kind", Shape::Any),
    ("metadata", OBJECT_META),
    ("spec", Shape::Any),
    ("status", STATUS),
]);

/// The unknown fields found in an app, in two groups as kube-apiserver
/// names them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct UnknownFields {
    /// Under `metadata`.
    pub(crate) metadata: Vec<String>,
    /// Elsewhere (top level and `status`); the caller adds `spec`'s.
    pub(crate) rest: Vec<String>,
}

impl UnknownFields {
    /// Whether none were found.
    pub fn is_empty(&self) -> bool {
        self.metadata.is_empty() && self.rest.is_empty()
    }

    /// Every path in kube-apiserver's order, with `spec`'s pruned paths
    /// added to the rest: the metadata's sorted, then the others sorted.
    pub(crate) fn paths(mut self, spec: Vec<String>) -> Vec<String> {
        if self.is_empty() {
            return spec_sorted(spec);
        }
        self.metadata.sort_unstable();
        self.rest.extend(spec);
        self.rest.sort_unstable();
        self.metadata.extend(self.rest);
        self.metadata
    }
}

/// `spec`'s pruned paths sorted as strings (the schema sorts them by path
/// segments, kube-apiserver as strings: `spec.users-` before `spec.users.a`).
fn spec_sorted(mut spec: Vec<String>) -> Vec<String> {
    if spec.len() > 1 {
        spec.sort_unstable();
    }
    spec
}

/// Removes the unknown fields outside `spec` from `app` and names them.
pub fn prune(app: &mut Value) -> UnknownFields {
    let mut found = UnknownFields::default();
    walk(app, &APP, At::Root, &mut found);
    found
}

/// Where a value sits, rendered only when a path is needed.
#[derive(Clone, Copy)]
enum At<'a> {
    Root,
    Field(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    fn render(&self, out: &mut String) {
        match self {
            At::Root => {}
            At::Field(parent, name) => {
                parent.render(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            At::Index(parent, i) => {
                parent.render(out);
                let _ = write!(out, "[{i}]");
            }
        }
    }

    /// Whether this is under `metadata`.
    fn in_metadata(&self) -> bool {
        match self {
            At::Root => false,
            At::Field(At::Root, name) => *name == "metadata",
            At::Field(parent, _) | At::Index(parent, _) => parent.in_metadata(),
        }
    }
}

fn walk_fields(
    object: &mut Map<String, Value>,
    fields: &'static [(&'static str, Shape)],
    at: At<'_>,
    found: &mut UnknownFields,
) {
    let known = |key: &str| fields.iter().find(|(name, _)| *name == key);
    if object.keys().any(|key| known(key).is_none()) {
        object.retain(|key, _| {
            if known(key).is_some() {
                return true;
            }
            let mut path = String::new();
            At::Field(&at, key).render(&mut path);
            if At::Field(&at, key).in_metadata() {
                found.metadata.push(path);
            } else {
                found.rest.push(path);
            }
            false
        });
    }
    for (key, value) in object.iter_mut() {
        let Some((_, shape)) = known(key) else {
            continue;
        };
        walk(value, shape, At::Field(&at, key), found);
    }
}

fn walk(value: &mut Value, shape: &'static Shape, at: At<'_>, found: &mut UnknownFields) {
    match (shape, value) {
        (Shape::Any, _) => {}
        (Shape::Fields(fields), Value::Object(object)) => walk_fields(object, fields, at, found),
        (Shape::Items(item), Value::Array(items)) => {
            for (i, v) in items.iter_mut().enumerate() {
                walk(v, item, At::Index(&at, i), found);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_clean_app_keeps_everything() {
        let mut app = json!({
            "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": "a", "labels": {"x": "y"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "controller": true}],
                "managedFields": [{"manager": "m", "operation": "Update", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"anything": 1},
            "status": {"version": "1.0", "conditions": [{"type": "Ready", "status": "True"}]}
        });
        let before = app.clone();
        assert!(prune(&mut app).is_empty());
        assert_eq!(app, before);
    }

    /// kube-apiserver (1.36, a CRD with the kind's schema and status):
    /// `unknown field "metadata.aa", unknown field "metadata.zz", unknown
    /// field "alpha", unknown field "spec.aa", ..., unknown field "zeta"`.
    #[test]
    fn unknown_fields_are_dropped_and_named_as_kube_apiserver_names_them() {
        let mut app = json!({
            "zeta": 1,
            "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
            "metadata": {"name": "a", "zz": 1, "lables": {"a": "b"}, "aa": 2,
                "ownerReferences": [{"uid": "u"}, {"uid": "v", "bogus": 1}],
                "managedFields": [{"manager": "m", "zork": 1}]},
            "sepc": {"replicas": 5},
            "spec": {"replicas": 3},
            "status": {"foo": 1, "conditions": [{"type": "Ready", "extra": true}]},
            "alpha": 2
        });
        let found = prune(&mut app);
        assert_eq!(
            found.paths(vec!["spec.users.a.zz".into(), "spec.users-".into()]),
            [
                "metadata.aa",
                "metadata.lables",
                "metadata.managedFields[0].zork",
                "metadata.ownerReferences[1].bogus",
                "metadata.zz",
                "alpha",
                "sepc",
                "spec.users-",
                "spec.users.a.zz",
                "status.conditions[0].extra",
                "status.foo",
                "zeta",
            ]
        );
        assert_eq!(
            app,
            json!({
                "apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
                "metadata": {"name": "a", "ownerReferences": [{"uid": "u"}, {"uid": "v"}],
                    "managedFields": [{"manager": "m"}]},
                "spec": {"replicas": 3},
                "status": {"conditions": [{"type": "Ready"}]}
            })
        );
    }

    #[test]
    fn values_of_other_types_are_left_to_the_type_checks() {
        let mut app = json!({"metadata": "x", "status": [1], "spec": 5});
        assert!(prune(&mut app).is_empty());
        let mut app = json!({"metadata": {"ownerReferences": {"bogus": 1}}});
        assert!(prune(&mut app).is_empty());
    }

    /// The status fields known here are the ones the OpenAPI documents
    /// publish.
    #[test]
    fn the_status_is_the_published_one() {
        let schema = crate::apiserver::openapi::status_schema();
        let names = |v: &Value| -> Vec<String> {
            let mut n: Vec<String> = v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            n.sort();
            n
        };
        let known = |shape: &Shape| -> Vec<String> {
            let mut n: Vec<String> = fields_of(shape)
                .iter()
                .map(|(k, _)| (*k).to_owned())
                .collect();
            n.sort();
            n
        };
        assert_eq!(names(&schema), known(&STATUS));
        assert_eq!(
            names(&schema["properties"]["conditions"]["items"]),
            known(&CONDITION)
        );
    }

    fn fields_of(shape: &Shape) -> &[(&'static str, Shape)] {
        match shape {
            Shape::Fields(fields) => fields,
            _ => &[],
        }
    }
}
