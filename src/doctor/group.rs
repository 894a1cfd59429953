//! Namespaces stuck on one cause, said once in the human output: which
//! namespace findings share their cause and their text but for the
//! namespace's name ([`findings`]), which Terminating namespaces read the
//! same but for their name and times ([`namespaces`]), and the wrapped,
//! capped list that names them ([`name_list`]). Pure functions over the
//! report; `-o json|yaml` keeps every finding as it is.

use super::findings::{Condition, Evidence, Finding, NamespaceReport, RemainingObject};

/// Names listed at most in one [`name_list`]; the rest are counted.
pub const LISTED: usize = 30;

/// Width a [`name_list`] wraps at.
const WIDTH: usize = 110;

/// `a, b, c, …` wrapped at [`WIDTH`] (the first line starting at column
/// `start`, the next ones indented by `indent` spaces), at most [`LISTED`]
/// names, then `… and N more (-o json lists all)`.
pub fn name_list<S: AsRef<str>>(names: &[S], start: usize, indent: usize) -> String {
    let mut items: Vec<String> = names
        .iter()
        .take(LISTED)
        .map(|n| n.as_ref().to_owned())
        .collect();
    if names.len() > LISTED {
        items.push(format!(
            "… and {} more (-o json lists all)",
            names.len() - LISTED
        ));
    }
    let mut out = String::new();
    let mut line = start;
    let count = items.len();
    for (i, item) in items.into_iter().enumerate() {
        let piece = if i + 1 < count && !items_is_more(&item) {
            format!("{item},")
        } else {
            item
        };
        if i > 0 {
            if line + 1 + piece.chars().count() > WIDTH {
                out.push('\n');
                out.push_str(&" ".repeat(indent));
                line = indent;
            } else {
                out.push(' ');
                line += 1;
            }
        }
        line += piece.chars().count();
        out.push_str(&piece);
    }
    out
}

fn items_is_more(item: &str) -> bool {
    item.starts_with("… and ")
}

/// `text` with each occurrence of the name `name` (not inside a longer
/// name) replaced by `…`: what two namespaces' findings have in common.
pub fn without_name(text: &str, name: &str) -> String {
    if name.is_empty() {
        return text.to_owned();
    }
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(name) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + name.len()..].chars().next();
        // A dot followed by no name ends a sentence.
        let after_is_name = match after {
            Some('.') => rest[at + name.len() + 1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-'),
            Some(c) => part_of_name(c),
            None => false,
        };
        out.push_str(&rest[..at]);
        if before.is_some_and(part_of_name) || after_is_name {
            out.push_str(name);
        } else {
            out.push('…');
        }
        rest = &rest[at + name.len()..];
    }
    out.push_str(rest);
    out
}

/// An observation without its trailing ` (since <time>, <age> ago)`, which
/// differs between namespaces deleted at different times.
pub fn without_since(observed: &str) -> &str {
    match observed.rfind(" (since ") {
        Some(at) if observed.ends_with(')') => &observed[..at],
        _ => observed,
    }
}

/// The namespace a namespace finding is about, when it is one.
fn namespace_of(f: &Finding) -> Option<&str> {
    (f.subject.kind == "Namespace" && f.subject.namespace.is_none())
        .then_some(f.subject.name.as_str())
}

/// Whether two findings about namespaces say the same but for the
/// namespace: the same code, severity and cause (a cause they share, such
/// as an unavailable APIService), the same text but for the name, the same
/// fix, and evidence that differs only in the namespace's own observations.
fn alike(a: &Finding, b: &Finding) -> bool {
    let (Some(na), Some(nb)) = (namespace_of(a), namespace_of(b)) else {
        return false;
    };
    let generic = |f: &Finding, name: &str| {
        (
            without_name(&f.what, name),
            without_name(&f.why, name),
            f.owner.as_ref().map(|o| without_name(o, name)),
            f.hint.as_ref().map(|h| without_name(h, name)),
        )
    };
    let remedy = |f: &Finding| {
        f.remedy
            .as_ref()
            .map(|r| (r.command.clone(), r.description.clone(), r.automatic))
    };
    let shared = |f: &Finding, name: &str| -> Vec<Evidence> {
        f.evidence
            .iter()
            .filter(|e| !own_evidence(e, name))
            .cloned()
            .collect()
    };
    !a.caused_by.is_empty()
        && a.code == b.code
        && a.severity == b.severity
        && a.caused_by == b.caused_by
        && a.blocks == [na]
        && b.blocks == [nb]
        && generic(a, na) == generic(b, nb)
        && remedy(a) == remedy(b)
        && shared(a, na) == shared(b, nb)
}

/// Evidence read from the namespace itself (`Namespace <name> …`).
pub fn own_evidence(e: &Evidence, namespace: &str) -> bool {
    e.source.starts_with(&format!("Namespace {namespace} "))
}

/// The findings in their order, those about namespaces that say the same
/// but for the namespace ([`alike`]) gathered into one group at the place
/// of the first; every other finding is a group of one.
pub fn findings(all: &[Finding]) -> Vec<Vec<&Finding>> {
    let mut groups: Vec<Vec<&Finding>> = Vec::new();
    'next: for f in all {
        for g in groups.iter_mut() {
            if alike(g[0], f) {
                g.push(f);
                continue 'next;
            }
        }
        groups.push(vec![f]);
    }
    groups
}

/// The namespace's own evidence of a grouped finding, without the name and
/// the times: alike in every member when the namespaces' states are.
pub fn own_evidence_shape(f: &Finding) -> Vec<(String, String)> {
    let name = namespace_of(f).unwrap_or_default();
    f.evidence
        .iter()
        .filter(|e| own_evidence(e, name))
        .map(|e| {
            (
                without_name(&e.source, name),
                without_name(without_since(&e.observed), name),
            )
        })
        .collect()
}

/// What a Terminating namespace's detail says but for its name and times.
#[derive(PartialEq)]
struct DetailShape {
    phase: String,
    deleting: bool,
    spec_finalizers: Vec<String>,
    finalizers: Vec<String>,
    /// Type, status, reason and message (without the name) of each.
    conditions: Vec<[Option<String>; 4]>,
    /// Each object (kubectl's name) and its finalizers.
    remaining: Vec<(String, Vec<String>)>,
}

fn detail_shape(n: &NamespaceReport) -> DetailShape {
    DetailShape {
        phase: n.phase.clone(),
        deleting: n.deletion_timestamp.is_some(),
        spec_finalizers: n.spec_finalizers.clone(),
        finalizers: n.finalizers.clone(),
        conditions: n
            .conditions
            .iter()
            .map(|c: &Condition| {
                [
                    Some(c.type_.clone()),
                    Some(c.status.clone()),
                    c.reason.clone(),
                    c.message.as_ref().map(|m| without_name(m, &n.name)),
                ]
            })
            .collect(),
        remaining: n
            .remaining
            .iter()
            .map(|o: &RemainingObject| (o.object.kubectl_name(), o.finalizers.clone()))
            .collect(),
    }
}

/// The namespaces in their order, those whose details read the same but
/// for the name and the times gathered at the place of the first.
pub fn namespaces<'a>(all: &[&'a NamespaceReport]) -> Vec<Vec<&'a NamespaceReport>> {
    let mut groups: Vec<Vec<&NamespaceReport>> = Vec::new();
    'next: for n in all {
        for g in groups.iter_mut() {
            if detail_shape(g[0]) == detail_shape(n) {
                g.push(n);
                continue 'next;
            }
        }
        groups.push(vec![n]);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_replaced_only_where_they_stand_alone() {
        assert_eq!(
            without_name("namespace team-a cannot finish deleting", "team-a"),
            "namespace … cannot finish deleting"
        );
        assert_eq!(
            without_name("team-ab and team-a.", "team-a"),
            "team-ab and …."
        );
        assert_eq!(
            without_name("configmaps.team-a.example.com/x", "team-a"),
            "configmaps.team-a.example.com/x"
        );
    }

    #[test]
    fn the_time_is_cut_from_an_observation() {
        assert_eq!(
            without_since("True DiscoveryFailed: x (since 2026-09-01T11:50:01Z, 9m59s ago)"),
            "True DiscoveryFailed: x"
        );
        assert_eq!(without_since("not found"), "not found");
    }

    #[test]
    fn long_lists_wrap_and_stop_at_the_cap() {
        let names: Vec<String> = (0..43).map(|i| format!("team-{i:02}")).collect();
        let text = name_list(&names, 4, 4);
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(text.starts_with("team-00, team-01,"), "{text}");
        assert!(
            text.ends_with("team-29, … and 13 more (-o json lists all)"),
            "{text}"
        );
        assert!(text.lines().skip(1).all(|l| l.starts_with("    team-")));
        assert_eq!(name_list(&["team-a"], 4, 4), "team-a");
        assert_eq!(name_list(&["a", "b"], 0, 0), "a, b");
    }
}
