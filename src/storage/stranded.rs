//! Stored apps a change of the kinds would leave unserved. An app is its
//! HelmRelease, found by its kind's labels and release prefix; a reload
//! that changes a kind's prefix, or drops the kind, leaves the HelmReleases
//! of its apps where they are — Flux keeps reconciling them — but no longer
//! served: `kubectl get` stops showing them, and creating one again under
//! a new prefix would install a second Helm release of the same app.
//!
//! So, before a changed set of kinds is served ([`verdict`], installed on
//! the registry by [`super::app_store::AppStore::kind_change_check`]): a
//! new release prefix for a kind with stored apps is refused (the previous
//! kinds keep serving), and a kind dropped with stored apps is a warning
//! naming them (dropping a kind is a choice; its apps keep running). At the
//! start, when no previous kinds are known, HelmReleases that carry a served
//! kind's labels without its prefix (the prefix changed while nothing ran)
//! are a warning ([`unserved`]).

use std::collections::HashMap;

use super::cache::Objects;
use super::release_naming::KIND_LABEL;
use crate::kinds::registry::{ChangeVerdict, ServedKind, Snapshot};

/// How many HelmReleases a message names before `and N more`.
const NAMED: usize = 3;

/// What serving `next` after `previous` would do to the apps in `objects`
/// (the watch cache's HelmReleases); `in_cluster`: they are a cluster's,
/// which kubectl can relabel (the embedded store's are not reachable so).
pub(crate) fn verdict(
    objects: &Objects,
    previous: &Snapshot,
    next: &Snapshot,
    in_cluster: bool,
) -> ChangeVerdict {
    // The previous kinds by their kind label (one group per store).
    let by_label: HashMap<&str, &ServedKind> = previous
        .kinds()
        .iter()
        .map(|k| (k.resolved.definition.kind.as_str(), k.as_ref()))
        .collect();
    // Each previous kind's apps, as `namespace/release`.
    let mut apps: HashMap<&str, Vec<String>> = HashMap::new();
    for (key, stored) in objects {
        let Some(kind) = stored.kind_label().and_then(|label| by_label.get(label)) else {
            continue;
        };
        if key
            .name()
            .starts_with(kind.resolved.release_prefix.as_str())
        {
            apps.entry(kind.resolved.definition.kind.as_str())
                .or_default()
                .push(format!("{}/{}", key.namespace(), key.name()));
        }
    }
    let mut verdict = ChangeVerdict::default();
    for kind in previous.kinds() {
        let d = &kind.resolved.definition;
        let Some(releases) = apps.get(d.kind.as_str()) else {
            continue;
        };
        let was = &kind.resolved.release_prefix;
        let now = next.kinds().iter().find(|k| {
            k.resolved.definition.kind == d.kind && k.resolved.definition.group == d.group
        });
        let (are, them) = if releases.len() == 1 {
            ("is", "it")
        } else {
            ("are", "them")
        };
        // A new kind of the group with the same prefix: most likely this
        // one renamed, which does not carry the apps' labels along.
        let renamed = next.kinds().iter().find(|k| {
            let n = &k.resolved.definition;
            n.group == d.group
                && &k.resolved.release_prefix == was
                && !by_label.contains_key(n.kind.as_str())
        });
        match (now, renamed) {
            (None, Some(renamed)) => {
                let new = &renamed.resolved.definition.kind;
                let manage = if in_cluster {
                    // One app: its own command; more: the command's shape.
                    let (namespace, name) = match releases.as_slice() {
                        [one] => one.split_once('/').unwrap_or(("NAMESPACE", "NAME")),
                        _ => ("NAMESPACE", "NAME"),
                    };
                    format!(
                        "to manage {them} as {new}, relabel {them}: kubectl label \
                         helmreleases.helm.toolkit.fluxcd.io -n {namespace} {name} {KIND_LABEL}={new} --overwrite"
                    )
                } else {
                    format!("name the kind {} again to manage {them}", d.kind)
                };
                verdict.warnings.push(format!(
                    "kind {} in {} is no longer defined, and the new kind {new} has its release prefix {}: \
                     if it was renamed, {} still {} the label {KIND_LABEL}={} and {are} not served as {new}; \
                     {manage}",
                    d.kind,
                    d.group,
                    crate::golang::quote(was),
                    stored_apps(releases),
                    if releases.len() == 1 { "carries" } else { "carry" },
                    d.kind,
                ));
            }
            (None, None) => verdict.warnings.push(format!(
                "kind {} in {} is no longer defined: {} {are} not served any more, and Flux keeps \
                 reconciling {them}; define the kind again to manage {them}",
                d.kind,
                d.group,
                stored_apps(releases)
            )),
            (Some(now), _) if &now.resolved.release_prefix != was => verdict.problems.push(format!(
                "kind {}: release prefix {} (it was {}) would leave {} unserved, and an app created \
                 again would be a second Helm release of it; keep the prefix {}",
                d.kind,
                crate::golang::quote(&now.resolved.release_prefix),
                crate::golang::quote(was),
                stored_apps(releases),
                crate::golang::quote(was),
            )),
            (Some(_), _) => {}
        }
    }
    verdict
}

/// At the start: for each served kind, the HelmReleases in `objects` that
/// carry its kind label but are no served kind's (their name lacks the
/// release prefix), as a warning.
pub(crate) fn unserved(objects: &Objects, served: &Snapshot) -> Vec<String> {
    let mut found: HashMap<&str, Vec<String>> = HashMap::new();
    for (key, stored) in objects {
        let Some(label) = stored.kind_label() else {
            continue;
        };
        let mut same_kind = served
            .kinds()
            .iter()
            .filter(|k| k.resolved.definition.kind == label)
            .peekable();
        if same_kind.peek().is_none()
            || same_kind.any(|k| key.name().starts_with(k.resolved.release_prefix.as_str()))
        {
            continue;
        }
        found
            .entry(label)
            .or_default()
            .push(format!("{}/{}", key.namespace(), key.name()));
    }
    let mut warnings = Vec::new();
    for kind in served.kinds() {
        let d = &kind.resolved.definition;
        if let Some(releases) = found.remove(d.kind.as_str()) {
            warnings.push(format!(
                "kind {}: {} with its labels but without its release prefix {} {} not served (an app created \
                 again would be a second Helm release); was the prefix changed?",
                d.kind,
                named_releases(&releases),
                crate::golang::quote(&kind.resolved.release_prefix),
                if releases.len() == 1 { "is" } else { "are" },
            ));
        }
    }
    warnings
}

/// `2 HelmReleases (team-a/postgres-db1, team-a/postgres-db2)`.
fn named_releases(releases: &[String]) -> String {
    let named = listed(releases);
    match releases.len() {
        1 => format!("1 HelmRelease ({named})"),
        n => format!("{n} HelmReleases ({named})"),
    }
}

/// `2 stored apps (HelmReleases team-a/postgres-db1, team-a/postgres-db2)`.
fn stored_apps(releases: &[String]) -> String {
    let named = listed(releases);
    match releases.len() {
        1 => format!("1 stored app (HelmRelease {named})"),
        n => format!("{n} stored apps (HelmReleases {named})"),
    }
}

/// `a, b, c and 2 more`: [`NAMED`] at most.
fn listed(releases: &[String]) -> String {
    let mut named = releases
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if releases.len() > NAMED {
        named.push_str(&format!(" and {} more", releases.len() - NAMED));
    }
    named
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::kinds::load;
    use crate::storage::cache::Stored;
    use crate::storage::key::Key;

    fn kinds(text: &str) -> Snapshot {
        Snapshot::build(load::load_text(text, "kinds.yaml").unwrap()).unwrap()
    }

    const PG: &str = "kind: Postgres\nrelease: {prefix: postgres-, chartRef: {kind: ExternalArtifact, name: pg}}\n";
    const REDIS: &str = "kind: Redis\nrelease: {chartRef: {kind: ExternalArtifact, name: redis}}\n";

    fn objects(releases: &[(&str, &str, &str)]) -> Objects {
        releases
            .iter()
            .map(|(namespace, name, kind)| {
                let object = json!({"metadata": {"namespace": namespace, "name": name,
                    "resourceVersion": "1",
                    "labels": {crate::storage::helm_release::KIND_LABEL: kind}}, "spec": {}});
                (Key::new(namespace, name), Arc::new(Stored::new(&object)))
            })
            .collect()
    }

    #[test]
    fn a_new_prefix_for_a_kind_with_apps_is_refused() {
        let stored = objects(&[
            ("team-a", "postgres-db1", "Postgres"),
            ("team-a", "postgres-db2", "Postgres"),
            ("team-b", "postgres-db3", "Postgres"),
            ("team-b", "postgres-db4", "Postgres"),
            ("team-a", "redis-r1", "Redis"),
        ]);
        let before = kinds(&format!("{PG}---\n{REDIS}"));
        let after = kinds(&format!("{}---\n{REDIS}", PG.replace("postgres-", "pg-")));
        let verdict = verdict(&stored, &before, &after, true);
        assert_eq!(
            verdict.problems,
            [
                "kind Postgres: release prefix \"pg-\" (it was \"postgres-\") would leave 4 stored apps \
                 (HelmReleases team-a/postgres-db1, team-a/postgres-db2, team-b/postgres-db3 and 1 more) \
                 unserved, and an app created again would be a second Helm release of it; keep the \
                 prefix \"postgres-\""
            ]
        );
        assert!(verdict.warnings.is_empty(), "{verdict:?}");
        // Without apps, the prefix is free to change.
        let verdict = super::verdict(
            &objects(&[("team-a", "redis-r1", "Redis")]),
            &before,
            &after,
            true,
        );
        assert!(
            verdict.problems.is_empty() && verdict.warnings.is_empty(),
            "{verdict:?}"
        );
    }

    #[test]
    fn releases_without_the_prefix_are_said_at_the_start() {
        let stored = objects(&[
            ("team-a", "postgres-db1", "Postgres"),
            ("team-a", "pg-db2", "Postgres"),
            ("team-a", "redis-r1", "Redis"),
            ("x", "other", "Bucket"),
        ]);
        let served = kinds(&format!("{}---\n{REDIS}", PG.replace("postgres-", "pg-")));
        assert_eq!(
            unserved(&stored, &served),
            [
                "kind Postgres: 1 HelmRelease (team-a/postgres-db1) with its labels but without its release \
                 prefix \"pg-\" is not served (an app created again would be a second Helm release); was the \
                 prefix changed?"
            ]
        );
        // Served as they are: nothing to say.
        let stored = objects(&[
            ("team-a", "postgres-db1", "Postgres"),
            ("team-a", "redis-r1", "Redis"),
        ]);
        assert!(unserved(&stored, &kinds(&format!("{PG}---\n{REDIS}"))).is_empty());
    }

    #[test]
    fn a_kind_dropped_with_apps_is_a_warning() {
        let stored = objects(&[("team-a", "redis-r1", "Redis"), ("x", "other", "Bucket")]);
        let before = kinds(&format!("{PG}---\n{REDIS}"));
        let verdict = verdict(&stored, &before, &kinds(PG), true);
        assert!(verdict.problems.is_empty(), "{verdict:?}");
        assert_eq!(
            verdict.warnings,
            [
                "kind Redis in apps.cozystack.io is no longer defined: 1 stored app (HelmRelease \
                 team-a/redis-r1) is not served any more, and Flux keeps reconciling it; define the \
                 kind again to manage it"
            ]
        );
        // Renamed (a new kind with its prefix): said so, with the relabel.
        let renamed = kinds(&format!(
            "{PG}---\nkind: RedisCache\nrelease: {{prefix: redis-, chartRef: {{kind: ExternalArtifact, name: redis}}}}\n"
        ));
        let verdict = super::verdict(&stored, &before, &renamed, true);
        assert_eq!(
            verdict.warnings,
            [
                "kind Redis in apps.cozystack.io is no longer defined, and the new kind RedisCache has its \
                 release prefix \"redis-\": if it was renamed, 1 stored app (HelmRelease team-a/redis-r1) still \
                 carries the label apps.cozystack.io/application.kind=Redis and is not served as RedisCache; to \
                 manage it as RedisCache, relabel it: kubectl label helmreleases.helm.toolkit.fluxcd.io -n \
                 team-a redis-r1 apps.cozystack.io/application.kind=RedisCache --overwrite"
            ]
        );
        // The embedded store's HelmReleases are not kubectl's to relabel.
        let verdict = super::verdict(&stored, &before, &renamed, false);
        assert!(
            verdict.warnings[0]
                .ends_with("is not served as RedisCache; name the kind Redis again to manage it"),
            "{verdict:?}"
        );
        // A change that keeps every kind's prefix says nothing.
        let verdict = super::verdict(&stored, &before, &before, true);
        assert!(
            verdict.problems.is_empty() && verdict.warnings.is_empty(),
            "{verdict:?}"
        );
    }
}
