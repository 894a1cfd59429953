//! The Postgres app the server benchmarks write, and the HelmRelease the
//! server stores for it (defaulted, with its managedFields), shared by
//! `benches/server.rs` and `benches/clients.rs`.

use kubectl_cozy::apiserver::patch;
use kubectl_cozy::kinds::registry::ServedKind;
use kubectl_cozy::storage::helm_release;
use serde_json::{Value, json};

/// The examples' kinds' version.
const VERSION: &str = "v1alpha1";

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
