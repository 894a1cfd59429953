//! Asking which actions of a `doctor --fix` plan to apply ([`confirm`]):
//! through a [`Confirmer`] (the terminal, in `cmd/doctor.rs`), or all of
//! them with `--yes`. Session reaping and finalizer removal share one
//! question; each APIService deletion needs the name typed back; each
//! `/finalize` gets its own question with its warning.

use std::collections::BTreeSet;

use crate::doctor::findings::{Action, FixReport};

/// How the plan's questions are asked: at the terminal in `cmd/doctor.rs`,
/// from a script in tests.
pub trait Confirmer {
    /// Why asking failed.
    type Error;
    /// A yes/no question whose default is no.
    fn yes_no(&mut self, question: &str) -> Result<bool, Self::Error>;
    /// A question answered by typing (an empty answer is allowed).
    fn type_in(&mut self, question: &str) -> Result<String, Self::Error>;
}

/// Asks which actions to apply. `None` means a dry run (no `--yes` and no
/// `confirmer`, i.e. no terminal to ask on). Session reaping, finalizer
/// removal and deleting finalized namespaces again share one question; each APIService deletion needs the name typed
/// back; each `/finalize` gets its own question with its warning.
pub fn confirm<C: Confirmer>(
    fix: &FixReport,
    yes: bool,
    confirmer: Option<&mut C>,
) -> Result<Option<BTreeSet<usize>>, C::Error> {
    if fix.actions.is_empty() {
        return Ok(None);
    }
    if yes {
        return Ok(Some(fix.actions.iter().map(|a| a.id).collect()));
    }
    let Some(confirmer) = confirmer else {
        return Ok(None);
    };
    let mut approved = BTreeSet::new();
    let general: Vec<usize> = fix
        .actions
        .iter()
        .filter(|a| {
            matches!(
                a.action,
                Action::ReapSession { .. }
                    | Action::RemoveFinalizers { .. }
                    | Action::DeleteNamespace { .. }
            )
        })
        .map(|a| a.id)
        .collect();
    if !general.is_empty() {
        let list = general
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        // Name only what the plan holds.
        let has = |kind: fn(&Action) -> bool| fix.actions.iter().any(|a| kind(&a.action));
        let what = [
            (
                has(|a| matches!(a, Action::ReapSession { .. })),
                "reap sessions",
            ),
            (
                has(|a| matches!(a, Action::RemoveFinalizers { .. })),
                "remove finalizers",
            ),
            (
                has(|a| matches!(a, Action::DeleteNamespace { .. })),
                "delete namespaces again",
            ),
        ]
        .into_iter()
        .filter_map(|(held, what)| held.then_some(what))
        .collect::<Vec<_>>()
        .join(", ");
        if confirmer.yes_no(&format!("Apply action(s) {list} ({what})?"))? {
            approved.extend(general);
        }
    }
    for a in &fix.actions {
        match &a.action {
            Action::DeleteApiService { name, .. } => {
                let typed = confirmer.type_in(&format!(
                    "Action {}: delete APIService {name}? Type its name to confirm (empty skips)",
                    a.id
                ))?;
                match typed.trim() {
                    "" => {}
                    typed if typed == name => {
                        approved.insert(a.id);
                    }
                    typed => eprintln!("{typed:?} is not {name}: action {} skipped", a.id),
                }
            }
            Action::FinalizeNamespace { name } => {
                let question = format!(
                    "Action {}: finalize namespace {name} if it is still stuck? {}",
                    a.id,
                    a.warning.clone().unwrap_or_default()
                );
                let yes = confirmer.yes_no(&question)?;
                if yes {
                    approved.insert(a.id);
                }
            }
            _ => {}
        }
    }
    Ok(Some(approved))
}

#[cfg(test)]
mod tests {
    use super::super::plan::plan;
    use super::super::test_support::{finalizer_finding, ns_report, opts, report};
    use super::*;
    use crate::doctor::findings::{FixMode, PlannedAction};

    /// Answers from a script, recording the questions.
    #[derive(Default)]
    struct Scripted {
        yes_no: Vec<bool>,
        typed: Vec<&'static str>,
        asked: Vec<String>,
    }

    impl Confirmer for Scripted {
        type Error = std::convert::Infallible;

        fn yes_no(&mut self, question: &str) -> Result<bool, Self::Error> {
            self.asked.push(question.to_owned());
            Ok(self.yes_no.remove(0))
        }

        fn type_in(&mut self, question: &str) -> Result<String, Self::Error> {
            self.asked.push(question.to_owned());
            Ok(self.typed.remove(0).to_owned())
        }
    }

    #[test]
    fn dry_run_without_yes_or_terminal() {
        let r = report(vec![finalizer_finding()], vec![ns_report("team-b")]);
        let fix = plan(&r, &opts(false));
        assert_eq!(confirm::<Scripted>(&fix, false, None).unwrap(), None);
        assert_eq!(
            confirm::<Scripted>(&fix, true, None).unwrap(),
            Some(BTreeSet::from([1]))
        );
    }

    #[test]
    fn apiservice_deletions_need_the_name_typed_back() {
        let mut r = report(Vec::new(), Vec::new());
        let fix_of = |names: &[&str]| FixReport {
            mode: FixMode::DryRun,
            actions: names
                .iter()
                .enumerate()
                .map(|(i, n)| PlannedAction {
                    id: i + 1,
                    action: Action::DeleteApiService {
                        name: (*n).to_owned(),
                        uid: None,
                    },
                    description: String::new(),
                    command: String::new(),
                    fixes: Vec::new(),
                    warning: None,
                })
                .collect(),
            not_planned: Vec::new(),
            results: Vec::new(),
            after: None,
        };
        r.findings.clear();
        let fix = fix_of(&["v1.a.example.com", "v1.b.example.com"]);
        let mut asker = Scripted {
            typed: vec!["v1.a.example.com ", "yes"],
            ..Scripted::default()
        };
        let approved = confirm(&fix, false, Some(&mut asker)).unwrap();
        assert_eq!(approved, Some(BTreeSet::from([1])));
        assert_eq!(
            asker.asked[1],
            "Action 2: delete APIService v1.b.example.com? Type its name to confirm (empty skips)"
        );

        // One question covers finalizer removals; declining leaves nothing.
        let r = report(vec![finalizer_finding()], vec![ns_report("team-b")]);
        let fix = plan(&r, &opts(false));
        let mut asker = Scripted {
            yes_no: vec![false],
            ..Scripted::default()
        };
        assert_eq!(
            confirm(&fix, false, Some(&mut asker)).unwrap(),
            Some(BTreeSet::new())
        );
        assert_eq!(asker.asked, vec!["Apply action(s) 1 (remove finalizers)?"]);
    }
}
