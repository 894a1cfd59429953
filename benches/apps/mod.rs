//! The examples' Postgres kind, the app the server benchmarks write, and
//! the HelmRelease the server stores for it (defaulted, with its
//! managedFields), shared by `benches/server.rs`, `benches/clients.rs`,
//! `benches/validation.rs` and `benches/write_stages.rs`.

use std::path::Path;
use std::sync::Arc;

use kubectl_cozy::apiserver::patch;
use kubectl_cozy::kinds::Registry;
use kubectl_cozy::kinds::registry::ServedKind;
use kubectl_cozy::storage::helm_release;
use serde_json::{Value, json};

/// The examples' kinds' group.
pub const GROUP: &str = "apps.cozystack.io";
/// The examples' kinds' version.
pub const VERSION: &str = "v1alpha1";
/// The Postgres kind's plural.
pub const PLURAL: &str = "postgreses";

/// The kinds of `examples/kinds`.
pub fn examples_registry() -> Registry {
    Registry::from_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds"))
        .expect("examples/kinds")
}

/// The Postgres kind of `registry` (the examples').
pub fn postgres(registry: &Registry) -> Arc<ServedKind> {
    registry
        .snapshot()
        .get(GROUP, VERSION, PLURAL)
        .cloned()
        .expect("the Postgres kind")
}

/// A Postgres app of `group` as a user writes it; `i` varies its spec.
pub fn user_app(group: &str, ns: &str, name: &str, i: usize) -> Value {
    json!({
        "apiVersion": format!("{group}/{VERSION}"),
        "kind": "Postgres",
        "metadata": {"name": name, "namespace": ns, "labels": {"team": format!("team-{}", i % 10)}},
        "spec": {
            "replicas": 1 + i % 9,
            "synchronousCommit": "on",
            "users": {"app": {"role": "owner"}},
            "databases": {"app": {"owner": "app", "extensions": ["pg_trgm"]}},
        },
    })
}

/// The HelmRelease the server stores for [`user_app`] written by `manager`:
/// defaulted, with its managedFields.
pub fn stored_release(kind: &ServedKind, ns: &str, name: &str, i: usize, manager: &str) -> Value {
    let mut app = user_app(&kind.resolved.definition.group, ns, name, i);
    let outcome = kind.schema.default_and_validate(&mut app["spec"], "spec");
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    patch::record_update_with_schema(
        None,
        &mut app,
        manager,
        &kubectl_cozy::storage::now(),
        &kind.resolved.group_version(),
        &kind.resolved.definition.open_api_schema,
    );
    helm_release::to_helm_release(&kind.resolved, &app, None, None).expect("convert")
}
