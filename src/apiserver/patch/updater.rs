//! Field ownership bookkeeping for one write: structured-merge-diff's
//! `merge.Updater` (`update`, `Update`, `Apply` and pruning), for a kind
//! served in a single version.
//!
//! - An apply merges the configuration into the live object, gives the
//!   applier exactly the fields of its configuration, and removes what the
//!   applier set last time and set no more, unless another manager owns it.
//! - Any write then checks the other managers: a field that changed value
//!   (or appeared) and is owned by someone else is a conflict; forced, or
//!   for a non-apply write, the field moves to the writer. Removed fields
//!   leave every set.
//! - Entries recorded for another apiVersion are dropped first (the kind is
//!   not served in that version), and sets are adjusted to schema changes
//!   (granular lists or maps that became atomic).
//!
//! `status` is never owned: changes to it are ignored, as kube-apiserver's
//! main resource endpoint resets them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fieldpath::{PathElement, Set, values_equal};
use super::managed_fields::{Entry, Managed, Operation, print_manager};
use super::merge::{
    Comparison, compare, ensure_named_fields_are_members, merge, reconcile_with_schema,
    remove_items, to_field_set,
};
use super::merge_types::Node;

/// Fields that belong to other managers and changed, by manager
/// identifier: how a message names the manager, and the fields. The
/// applier may not take them without `force`.
pub(crate) type Conflicts = BTreeMap<String, (String, Set)>;

/// Ownership bookkeeping against one schema and apiVersion.
pub(crate) struct Updater<'s> {
    root: Node<'s>,
    version: &'s str,
    ignored: &'static Set,
}

/// The fields nobody owns: `status`.
fn ignored() -> &'static Set {
    static IGNORED: std::sync::LazyLock<Set> =
        std::sync::LazyLock::new(|| Set::from_paths([&[PathElement::Field("status".into())][..]]));
    &IGNORED
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

impl<'s> Updater<'s> {
    /// An updater for objects of this shape, served as `version`.
    pub(crate) fn new(root: Node<'s>, version: &'s str) -> Updater<'s> {
        Updater {
            root,
            version,
            ignored: ignored(),
        }
    }

    /// The served apiVersion.
    pub(crate) fn version(&self) -> &'s str {
        self.version
    }

    /// The schema root.
    pub(crate) fn root(&self) -> Node<'s> {
        self.root
    }

    /// The fields of `v` that are owned: all but `status`.
    pub(crate) fn owned_fields(&self, v: &Value) -> Set {
        let mut set = to_field_set(self.root, v);
        set.subtract_recursive(self.ignored);
        set
    }

    /// Drops entries of other versions and reconciles sets with the schema
    /// (`reconcileManagedFieldsWithSchemaChanges`).
    fn reconcile(&self, managed: &mut Managed) {
        managed.entries.retain(|_, e| e.api_version == self.version);
        for e in managed.entries.values_mut() {
            if let Some(s) = reconcile_with_schema(self.root, &e.set) {
                e.set = s;
            }
        }
    }

    /// structured-merge-diff's `update`: conflicts with, and removals from,
    /// every manager but `workflow`.
    fn check(
        &self,
        live: &Value,
        new: &Value,
        managed: &mut Managed,
        workflow: &str,
        force: bool,
    ) -> Result<Comparison, Conflicts> {
        let cmp = compare(self.root, live, new).exclude(self.ignored);
        if managed.entries.keys().all(|id| id == workflow) {
            // Nobody else to take fields from.
            managed.entries.retain(|_, e| !e.set.is_empty());
            return Ok(cmp);
        }
        let mut changed = cmp.modified.clone();
        changed.union_with(&cmp.added);
        let mut conflicts = Conflicts::new();
        for (id, e) in &managed.entries {
            if id == workflow {
                continue;
            }
            let c = e.set.intersection(&changed);
            if !c.is_empty() {
                conflicts.insert(id.clone(), (print_manager(Some(e), id), c));
            }
        }
        if !force && !conflicts.is_empty() {
            return Err(conflicts);
        }
        for (id, (_, c)) in &conflicts {
            if let Some(e) = managed.entries.get_mut(id) {
                e.set.subtract(c);
            }
        }
        if !cmp.removed.is_empty() {
            for (id, e) in managed.entries.iter_mut() {
                if id != workflow {
                    e.set.subtract(&cmp.removed);
                }
            }
        }
        managed.entries.retain(|_, e| !e.set.is_empty());
        Ok(cmp)
    }

    /// A non-apply write by `id` (`Updater.Update`): the writer owns what
    /// it added or changed, nobody owns what it removed.
    pub(crate) fn update(&self, live: &Value, new: &Value, managed: &mut Managed, id: &str) {
        self.reconcile(managed);
        let Ok(cmp) = self.check(live, new, managed, id, true) else {
            return;
        };
        let (mut set, time) = match managed.entries.remove(id) {
            Some(previous) => (previous.set, previous.time),
            None => (Set::new(), None),
        };
        set.subtract(&cmp.removed);
        set.absorb(cmp.modified);
        set.absorb(cmp.added);
        set.subtract_recursive(self.ignored);
        if set.is_empty() {
            return;
        }
        managed.entries.insert(
            id.to_string(),
            Entry {
                manager: String::new(),
                operation: Operation::Update,
                subresource: String::new(),
                api_version: self.version.to_string(),
                time,
                set,
            },
        );
    }

    /// An apply of `config` by the entry `entry` (`Updater.Apply`). Returns
    /// the new object, or `None` when it equals `live`.
    pub(crate) fn apply(
        &self,
        live: &Value,
        config: &Value,
        managed: &mut Managed,
        entry: Entry,
        id: &str,
        force: bool,
    ) -> Result<Option<Value>, Conflicts> {
        self.reconcile(managed);
        let merged = merge(self.root, Some(live), Some(config)).unwrap_or_else(empty_object);
        let last = managed.entries.get(id).map(|e| e.set.clone());
        let time = managed.entries.get(id).and_then(|e| e.time.clone());
        managed.entries.insert(
            id.to_string(),
            Entry {
                set: self.owned_fields(config),
                time,
                ..entry
            },
        );
        let merged = self.prune(merged, managed, last.as_ref());
        self.check(live, &merged, managed, id, force)?;
        if values_equal(live, &merged) {
            Ok(None)
        } else {
            Ok(Some(merged))
        }
    }

    /// Removes what the applier owned last time and no longer applies,
    /// keeping what any manager (the applier included) still owns and what
    /// the applier never owned.
    fn prune(&self, merged: Value, managed: &Managed, last: Option<&Set>) -> Value {
        let Some(last) = last.filter(|s| !s.is_empty()) else {
            return merged;
        };
        let root = self.root;
        let ensure = |s: &Set| ensure_named_fields_are_members(root, s);
        let fields = |v: &Value| ensure(&to_field_set(root, v));
        let remove = |s: &Set| match remove_items(root, &merged, s) {
            Value::Null => empty_object(),
            kept => kept,
        };

        let last = ensure(last);
        let pruned = remove(&last);

        // Add back whatever some manager still owns.
        let owned = managed
            .entries
            .values()
            .fold(Set::new(), |acc, e| acc.union(&e.set));
        let merged_set = fields(&merged);
        let pruned = remove(&merged_set.difference(&fields(&pruned).union(&ensure(&owned))));

        // Add back what the applier did not own last time.
        let dangling = merged_set.difference(&fields(&pruned)).intersection(&last);
        remove(&dangling)
    }
}
