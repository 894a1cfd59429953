//! The `status.conditions` kube-controller-manager's namespace controller
//! writes on a Terminating namespace after each pass over its content
//! (`pkg/controller/namespace/deletion/status_condition_utils.go`), for a
//! standalone server's namespaces: the five deletion conditions, `True`
//! with what is left (`NamespaceContentRemaining`: `Some resources are
//! remaining: postgreses.apps.cozystack.io has 1 resource instances`;
//! `NamespaceFinalizersRemaining`: `… example.com/block in 1 resource
//! instances`) and `False` with the controller's "ok" reason otherwise. A
//! condition keeps its `lastTransitionTime` while its status stays.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The conditions, in the controller's order, with their "ok" reason and
/// message.
const OK: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

/// What is left in a namespace after a pass: objects per resource
/// (`plural.group`), and per finalizer the objects it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remaining {
    /// `plural.group` → objects left.
    pub resources: BTreeMap<String, usize>,
    /// Finalizer → objects it holds.
    pub finalizers: BTreeMap<String, usize>,
}

/// `existing` (a namespace's `status.conditions`) as the controller leaves
/// them after a pass that found `remaining` at `now`; `None` when nothing
/// changed (the controller writes no status then).
pub fn updated(existing: &[Value], remaining: &Remaining, now: &str) -> Option<Vec<Value>> {
    let mut conditions = existing.to_vec();
    let mut changed = false;
    for (kind, ok_reason, ok_message) in OK {
        let (status, reason, message) = match kind {
            "NamespaceContentRemaining" if !remaining.resources.is_empty() => (
                "True",
                "SomeResourcesRemain",
                format!(
                    "Some resources are remaining: {}",
                    counted(&remaining.resources, "has", "resource instances")
                ),
            ),
            "NamespaceFinalizersRemaining" if !remaining.finalizers.is_empty() => (
                "True",
                "SomeFinalizersRemain",
                format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    counted(&remaining.finalizers, "in", "resource instances")
                ),
            ),
            _ => ("False", ok_reason, ok_message.to_owned()),
        };
        match conditions.iter_mut().find(|c| c["type"] == kind) {
            None => {
                conditions.push(json!({"type": kind, "status": status,
                    "lastTransitionTime": now, "reason": reason, "message": message}));
                changed = true;
            }
            Some(old)
                if old["status"] != status
                    || old["reason"] != reason
                    || old["message"] != message =>
            {
                if old["status"] != status {
                    old["lastTransitionTime"] = json!(now);
                }
                old["status"] = json!(status);
                old["reason"] = json!(reason);
                old["message"] = json!(message);
                changed = true;
            }
            Some(_) => {}
        }
    }
    changed.then_some(conditions)
}

/// `NAME WORD N UNIT` for each entry, sorted as text (as the controller
/// sorts its strings), joined by `, `.
fn counted(counts: &BTreeMap<String, usize>, word: &str, unit: &str) -> String {
    let mut parts: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(name, n)| format!("{name} {word} {n} {unit}"))
        .collect();
    parts.sort();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Remaining {
        Remaining {
            resources: BTreeMap::from([
                ("redises.apps.cozystack.io".to_owned(), 2),
                ("postgreses.apps.cozystack.io".to_owned(), 1),
            ]),
            finalizers: BTreeMap::from([("example.com/block".to_owned(), 3)]),
        }
    }

    #[test]
    fn a_pass_with_content_left_says_what_in_the_controllers_words() {
        let conditions = updated(&[], &held(), "2026-12-06T10:00:00Z").unwrap();
        let types: Vec<&str> = conditions
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "NamespaceDeletionDiscoveryFailure",
                "NamespaceDeletionGroupVersionParsingFailure",
                "NamespaceDeletionContentFailure",
                "NamespaceContentRemaining",
                "NamespaceFinalizersRemaining"
            ]
        );
        assert_eq!(
            conditions[3],
            json!({"type": "NamespaceContentRemaining", "status": "True",
                   "lastTransitionTime": "2026-12-06T10:00:00Z", "reason": "SomeResourcesRemain",
                   "message": "Some resources are remaining: postgreses.apps.cozystack.io has 1 resource instances, \
                               redises.apps.cozystack.io has 2 resource instances"})
        );
        assert_eq!(
            conditions[4]["message"],
            "Some content in the namespace has finalizers remaining: example.com/block in 3 resource instances"
        );
        assert_eq!(conditions[0]["status"], "False");
        assert_eq!(conditions[0]["reason"], "ResourcesDiscovered");
        assert_eq!(
            conditions[2]["message"],
            "All content successfully deleted, may be waiting on finalization"
        );
    }

    #[test]
    fn an_unchanged_pass_writes_nothing_and_a_transition_moves_its_time() {
        let first = updated(&[], &held(), "2026-12-06T10:00:00Z").unwrap();
        assert_eq!(updated(&first, &held(), "2026-12-06T10:00:05Z"), None);
        // One app left: the message changes, not the status or its time.
        let mut fewer = held();
        fewer.resources.remove("redises.apps.cozystack.io");
        let second = updated(&first, &fewer, "2026-12-06T10:00:09Z").unwrap();
        assert_eq!(second[3]["lastTransitionTime"], "2026-12-06T10:00:00Z");
        assert_ne!(second[3]["message"], first[3]["message"]);
        // All gone: False with the ok reason, at the new time.
        let done = updated(&second, &Remaining::default(), "2026-12-06T10:00:12Z").unwrap();
        assert_eq!(
            done[3],
            json!({"type": "NamespaceContentRemaining", "status": "False",
                   "lastTransitionTime": "2026-12-06T10:00:12Z", "reason": "ContentRemoved",
                   "message": "All content successfully removed"})
        );
        assert_eq!(done[4]["reason"], "ContentHasNoFinalizers");
        // Conditions of other types are kept as they are.
        let other = json!({"type": "Example", "status": "True"});
        let kept = updated(std::slice::from_ref(&other), &Remaining::default(), "t").unwrap();
        assert_eq!(kept[0], other);
        assert_eq!(kept.len(), 6);
    }
}
