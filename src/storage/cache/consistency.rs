//! Consistent reads from the watch cache's snapshots: whether a snapshot
//! reflects upstream within a read's scope ([`snapshot_is_current`]) or
//! holds exactly the objects of a page upstream listed
//! ([`range_is_current`]), and kube-apiserver's key order ([`key_order`],
//! [`in_key_order`]), in which the cache's pages are read so that they line
//! up with upstream's.

use std::ops::Bound;
use std::sync::Arc;

use crate::storage::metadata_list::Item;
use crate::storage::{ReadScope, UpstreamState};

use super::{Key, Objects, Stored};

/// Whether a snapshot (`objects` at `revision`) reflects `upstream` within
/// `scope`: it is at or past upstream's revision, or (when upstream listed
/// the scope's versions) its objects in the scope are exactly those.
pub(crate) fn snapshot_is_current(
    objects: &Objects,
    revision: u64,
    upstream: &UpstreamState,
    scope: &ReadScope,
) -> bool {
    if revision >= upstream.revision {
        return true;
    }
    let Some(versions) = &upstream.versions else {
        return false;
    };
    let candidates: Box<dyn Iterator<Item = (&Key, &Arc<Stored>)>> =
        match (&scope.namespace, &scope.release) {
            (Some(ns), Some(name)) => Box::new(
                objects
                    .get_key_value(Key::text(ns, name).as_str())
                    .into_iter(),
            ),
            (Some(ns), None) => Box::new(
                objects
                    .range::<_, str>((
                        Bound::Included(Key::namespace_start(ns).as_str()),
                        Bound::Unbounded,
                    ))
                    .take_while(move |(key, _)| key.namespace() == ns),
            ),
            _ => Box::new(objects.iter()),
        };
    let mut seen = 0;
    for (key, release) in candidates {
        if !scope.contains(key, release) {
            continue;
        }
        if versions.get(key) != Some(&release.resource_version()) {
            return false;
        }
        seen += 1;
    }
    seen == versions.len()
}

/// How two keys compare in kube-apiserver's order (etcd's, by the key
/// string `<namespace>/<name>`): `a-b/x` comes before `a/x`, where the
/// cache's map, ordered by `(namespace, name)`, puts `a` first.
pub(crate) fn key_order(a: &Key, b: &Key) -> std::cmp::Ordering {
    namespace_order(a.namespace(), b.namespace()).then_with(|| a.name().cmp(b.name()))
}

/// How two namespaces compare in kube-apiserver's key order (`<ns>/`).
fn namespace_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes()
        .chain(std::iter::once(b'/'))
        .cmp(b.bytes().chain(std::iter::once(b'/')))
}

/// The objects of `namespace` (or all), after `after`, in kube-apiserver's
/// key order ([`key_order`]), so that pages line up with upstream's.
/// Within a namespace that is the map's own order; across namespaces the
/// map's namespaces are visited in key order (finding them costs a lookup
/// per namespace, not a scan).
pub(crate) fn in_key_order<'a>(
    objects: &'a Objects,
    namespace: Option<&str>,
    after: Option<&Key>,
) -> impl Iterator<Item = (&'a Key, &'a Arc<Stored>)> + 'a {
    let namespaces: Vec<String> = match namespace {
        Some(ns) => vec![ns.to_owned()],
        None => {
            let mut found = Vec::new();
            let mut next = objects.get_min().map(|(key, _)| key.namespace().to_owned());
            while let Some(ns) = next {
                // The first key of a later namespace.
                next = objects
                    .range::<_, str>((
                        Bound::Included(Key::namespace_end(&ns).as_str()),
                        Bound::Unbounded,
                    ))
                    .next()
                    .map(|(key, _)| key.namespace().to_owned());
                found.push(ns);
            }
            found.sort_by(|a, b| namespace_order(a, b));
            found
        }
    };
    let after = after.cloned();
    namespaces
        .into_iter()
        .filter_map(move |ns| {
            let start = match &after {
                None => Bound::Included(Key::namespace_start(&ns)),
                Some(key) => match namespace_order(key.namespace(), &ns) {
                    std::cmp::Ordering::Less => Bound::Included(Key::namespace_start(&ns)),
                    std::cmp::Ordering::Equal => Bound::Excluded(key.as_str().to_owned()),
                    std::cmp::Ordering::Greater => return None,
                },
            };
            Some((ns, start))
        })
        .flat_map(move |(ns, start)| {
            objects
                .range::<_, str>((start.as_ref().map(String::as_str), Bound::Unbounded))
                .take_while(move |(key, _)| key.namespace() == ns)
        })
}

/// Whether `objects`, within `scope`, hold exactly `upstream`'s objects
/// and versions in the key range upstream's page covers: after `after`,
/// up to and including its last item, or to the end when `last_page`.
/// Upstream's items come in key order ([`key_order`]), as the cache's are
/// read.
pub(crate) fn range_is_current(
    objects: &Objects,
    scope: &ReadScope,
    after: Option<&Key>,
    upstream: &[Item],
    last_page: bool,
) -> bool {
    let end = match upstream.last() {
        _ if last_page => None,
        Some(item) => Some(Key::new(&item.namespace, &item.name)),
        None => return true, // an empty range
    };
    let mut cached = in_key_order(objects, scope.namespace.as_deref(), after)
        .take_while(|(key, _)| {
            end.as_ref()
                .is_none_or(|end| key_order(key, end) != std::cmp::Ordering::Greater)
        })
        .filter(|(key, stored)| scope.contains(key, stored));
    for item in upstream {
        match cached.next() {
            Some((key, stored))
                if key.parts() == (item.namespace.as_str(), item.name.as_str())
                    && stored.resource_version() == item.resource_version => {}
            _ => return false,
        }
    }
    cached.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn in_ns(ns: &str, name: &str, rv: u64, kind: &str) -> (Key, Arc<Stored>) {
        let object = json!({"metadata": {"name": name, "namespace": ns,
            "resourceVersion": rv.to_string(),
            "labels": {crate::storage::helm_release::KIND_LABEL: kind}}});
        (Key::new(ns, name), Arc::new(Stored::new(&object)))
    }

    fn keys<'a>(it: impl Iterator<Item = (&'a Key, &'a Arc<Stored>)>) -> Vec<String> {
        it.map(|(key, _)| format!("{}/{}", key.namespace(), key.name()))
            .collect()
    }

    /// etcd orders by `<namespace>/<name>`: `a-b/x` before `a/x`, where the
    /// map's `(namespace, name)` order puts `a` first; pages follow etcd.
    #[test]
    fn objects_are_read_in_kube_apiservers_key_order() {
        let objects: Objects = [
            in_ns("a", "x", 1, "Postgres"),
            in_ns("a", "y", 2, "Postgres"),
            in_ns("a-b", "x", 3, "Postgres"),
            in_ns("a0", "x", 4, "Postgres"),
            in_ns("b", "a.b", 5, "Postgres"),
            in_ns("b", "a-b", 6, "Postgres"),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            keys(in_key_order(&objects, None, None)),
            ["a-b/x", "a/x", "a/y", "a0/x", "b/a-b", "b/a.b"]
        );
        let mut etcd: Vec<String> = keys(objects.iter());
        etcd.sort();
        assert_eq!(keys(in_key_order(&objects, None, None)), etcd);
        // Continuing after any key yields exactly the keys after it.
        for (i, after) in etcd.iter().enumerate() {
            let (ns, name) = after.split_once('/').unwrap();
            let key = Key::new(ns, name);
            assert_eq!(
                keys(in_key_order(&objects, None, Some(&key))),
                etcd[i + 1..]
            );
        }
        assert_eq!(
            keys(in_key_order(&objects, Some("a"), None)),
            ["a/x", "a/y"]
        );
        let a_x = Key::new("a", "x");
        assert_eq!(keys(in_key_order(&objects, Some("a"), Some(&a_x))), ["a/y"]);
        // A position in a namespace before (after) the listed one: all (none) of it.
        let a_b = Key::new("a-b", "x");
        assert_eq!(
            keys(in_key_order(&objects, Some("a"), Some(&a_b))),
            ["a/x", "a/y"]
        );
        let a0 = Key::new("a0", "x");
        assert!(keys(in_key_order(&objects, Some("a"), Some(&a0))).is_empty());
        assert_eq!(key_order(&a_b, &a_x), std::cmp::Ordering::Less);
    }

    #[test]
    fn a_range_is_current_when_it_holds_exactly_upstreams_page() {
        let objects: Objects = [
            in_ns("a", "x", 1, "Postgres"),
            in_ns("a", "y", 2, "Redis"),
            in_ns("a", "z", 3, "Postgres"),
            in_ns("a-b", "x", 4, "Postgres"),
        ]
        .into_iter()
        .collect();
        let scope = ReadScope {
            kind: "Postgres".into(),
            namespace: None,
            release: None,
            labels: None,
        };
        let item = |ns: &str, name: &str, rv| Item {
            namespace: ns.into(),
            name: name.into(),
            resource_version: rv,
        };
        // Page 1 of 2: `a-b/x`, `a/x` (Redis is out of scope).
        let page1 = [item("a-b", "x", 4), item("a", "x", 1)];
        assert!(range_is_current(&objects, &scope, None, &page1, false));
        let after = Key::new("a", "x");
        assert!(range_is_current(
            &objects,
            &scope,
            Some(&after),
            &[item("a", "z", 3)],
            true
        ));
        // A newer version, a missing object, an extra object in the range.
        assert!(!range_is_current(
            &objects,
            &scope,
            None,
            &[item("a-b", "x", 5), item("a", "x", 1)],
            false
        ));
        assert!(!range_is_current(
            &objects,
            &scope,
            None,
            &[item("a", "x", 1)],
            false
        ));
        assert!(!range_is_current(
            &objects,
            &scope,
            None,
            &[item("a-b", "x", 4), item("a", "w", 9), item("a", "x", 1)],
            false
        ));
        // The last page also covers what follows its last item.
        assert!(!range_is_current(&objects, &scope, None, &page1, true));
        // In tuple order the range would be `a/x`, `a/z`, `a-b/x`: not upstream's.
        assert!(!range_is_current(
            &objects,
            &scope,
            None,
            &[item("a", "x", 1), item("a", "z", 3)],
            false
        ));
        // An empty last page: current only when nothing of the scope is left.
        let end = Key::new("a", "z");
        assert!(range_is_current(&objects, &scope, Some(&end), &[], true));
        assert!(!range_is_current(&objects, &scope, Some(&after), &[], true));
    }
}
