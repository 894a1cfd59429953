//! Fuzz target of App ⇄ HelmRelease: the round trip must be the identity
//! on everything the app owns.

use serde_json::{Map, Value};

use crate::apimachinery::object_meta;
use crate::storage::cache::{Key, Stored};
use crate::storage::helm_release::{app_view, owned_by, to_app, to_helm_release};

/// Metadata an app owns and gets back from its HelmRelease.
const OWNED_METADATA: [&str; 13] = [
    "name",
    "generateName",
    "namespace",
    "labels",
    "annotations",
    "managedFields",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "ownerReferences",
];

/// `helm_release`: the input is an app of the example kind Postgres, as
/// JSON. Apps that could not be stored (metadata the API server refuses,
/// no name yet) are skipped; for the others:
///
/// - app → HelmRelease → app gives back the app's metadata (less nulls
///   and empty maps and lists, which Kubernetes does not distinguish from
///   absent ones), finalizers and spec;
/// - the HelmRelease is owned by the kind, and converting the app back
///   against the stored HelmRelease gives the same HelmRelease;
/// - the app view the cache keeps (encoded straight from the HelmRelease)
///   is the app read back, encoded;
/// - the HelmRelease kept straight from its text (as upstream's answers
///   are) is what keeping its value keeps, and has the same app view.
pub fn helm_release(data: &[u8]) {
    let Ok(Value::Object(mut app)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Some(Value::Object(meta)) = app.get("metadata") else {
        return;
    };
    if object_meta::check_types(meta).is_err() || !object_meta::validate(meta).is_empty() {
        return;
    }
    // Stored apps have a name (the server generates one first).
    if meta
        .get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return;
    }
    let kind = &super::example_kinds()[0];
    app.insert("apiVersion".into(), kind.group_version().into());
    app.insert("kind".into(), kind.definition.kind.clone().into());
    let app = Value::Object(app);
    let Ok(release) = to_helm_release(kind, &app, None, None) else {
        return;
    };
    assert!(
        owned_by(kind, &release),
        "the kind does not own its HelmRelease: {release}"
    );
    let back = to_app(kind, &release);
    let view = app_view(kind, &release).expect("owned");
    assert_eq!(
        &*view.json,
        serde_json::to_string(&back).expect("encode"),
        "the app view is not the app read back"
    );
    // As upstream's answer: kept straight from the text, as from the value.
    let (key, kept) = Stored::from_text(&release.to_string()).expect("a release is kept");
    assert_eq!(key, Key::of(&release));
    assert_eq!(
        kept.value(),
        Stored::new(&release).value(),
        "kept from the text is not kept from the value"
    );
    let kept_view = kept
        .app_view(super::example_served())
        .expect("owned when kept");
    assert_eq!(kept_view.json, view.json, "the kept object's view differs");
    assert_eq!(
        owned(&back),
        owned(&app),
        "app → HelmRelease → app changed the app\nrelease: {release}"
    );
    let again = to_helm_release(kind, &back, Some(&release), None)
        .unwrap_or_else(|e| panic!("the app read back cannot be stored again: {e}"));
    assert_eq!(
        again, release,
        "storing the app read back changed the HelmRelease"
    );
}

/// What an app owns: its `spec` (absent is `{}`), `finalizers` and
/// [`OWNED_METADATA`], nulls and empty collections dropped.
fn owned(app: &Value) -> Value {
    let meta = app.get("metadata").and_then(Value::as_object);
    let mut out = Map::new();
    for key in OWNED_METADATA.iter().copied().chain(["finalizers"]) {
        let Some(v) = meta.and_then(|m| m.get(key)) else {
            continue;
        };
        let empty = match v {
            Value::Null => true,
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => false,
        };
        if !empty {
            out.insert(key.to_owned(), v.clone());
        }
    }
    let spec = app
        .get("spec")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    serde_json::json!({"metadata": out, "spec": spec})
}
