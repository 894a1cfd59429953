//! Differential validation against kube-apiserver, the oracle: for every
//! example kind (`examples/kinds`) and every kind scaffolded from
//! `examples/charts`, a CRD with the kind's schema is installed on the test
//! control plane under a group of its own, and generated objects (valid ones
//! and mutations of them, see `differential/`) are sent both to
//! kube-apiserver as server-side dry-run creates and to our validation and
//! defaulting in process. Accept vs reject, the defaulted object and the
//! unknown-field warnings must agree on every case; field paths, reasons
//! and messages too, except for the deliberate differences of
//! `docs/validation-differences.md` (each recognised by [`documented`]).
//! A kind of the test's own (`differential/keywords.yaml`) covers the
//! schema keywords the examples do not use.
//!
//! `differential/writes.rs` sends whole writes to our server and to
//! kube-apiserver alike and compares the answers: unknown fields outside
//! `spec`, managedFields, writes that change nothing, dry runs, finalizers.
//! `differential/namespace_*.rs` hold a standalone server's namespaces to
//! kube-apiserver's, and `differential/yaml_answers.rs` its answers in YAML.
//!
//! Seeded and reproducible: `COZY_DIFF_SEED` (default
//! [`cases::DEFAULT_SEED`]) and `COZY_DIFF_CASES` cases per kind (default
//! [`cases::DEFAULT_CASES`]) for longer runs.

mod cases;
mod generate;
mod mutate;
mod namespace_bodies;
mod namespace_finalizers;
mod namespace_lists;
mod namespace_options;
mod namespace_status;
mod namespace_watches;
mod oracle;
mod ratcheting;
mod writes;
mod yaml_answers;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use futures::StreamExt as _;
use kubectl_cozy::kinds::{KindSource, Registry};

use self::cases::Case;
use self::oracle::{Cause, Crd, Verdict};
use crate::support::plane;

/// Requests in flight to kube-apiserver at once.
const CONCURRENCY: usize = 8;

/// How the two answers to one case compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Agreement {
    /// Same answer, down to the messages.
    Same,
    /// Differs only as a row of the differences table says.
    Documented(&'static str),
    /// One accepted, the other refused (or refused differently: 400 vs 422).
    Verdict,
    /// Both accepted, different defaulted objects or warnings.
    Defaults,
    /// Both refused, different field paths or reasons.
    Causes,
    /// Same paths and reasons, different messages.
    Messages,
}

fn compare(case: &Case, ours: &Verdict, theirs: &Verdict) -> Agreement {
    if ours == theirs {
        return Agreement::Same;
    }
    if let (
        Verdict::Accepted {
            spec: a,
            warnings: x,
        },
        Verdict::Accepted {
            spec: b,
            warnings: y,
        },
    ) = (ours, theirs)
        && x == y
        && same_json(a, b)
    {
        return Agreement::Documented("numbers");
    }
    if let Some(row) = documented(case, ours, theirs) {
        return Agreement::Documented(row);
    }
    match (ours, theirs) {
        (Verdict::Accepted { .. }, Verdict::Accepted { .. }) => Agreement::Defaults,
        (Verdict::Invalid { causes: a }, Verdict::Invalid { causes: b }) => {
            let key = |c: &[Cause]| {
                let mut k: Vec<(String, String)> = c
                    .iter()
                    .map(|c| (c.field.clone(), c.reason.clone()))
                    .collect();
                k.sort();
                k
            };
            if key(a) == key(b) {
                Agreement::Messages
            } else {
                Agreement::Causes
            }
        }
        (Verdict::Strict { .. }, Verdict::Strict { .. }) => Agreement::Causes,
        _ => Agreement::Verdict,
    }
}

/// Equal JSON, numbers compared as float64 values to within 2 units in the
/// last place: kube-apiserver re-encodes numbers (`3.0` becomes `3`, `-0.0`
/// becomes `0`) and its decoder rounds some 17-digit decimals to a
/// neighbouring float64; ours keeps the number as sent.
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(i), Some(j)) = (x.as_i64(), y.as_i64()) {
                return i == j;
            }
            let (f, g) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            f == g || (f.to_bits() as i64 - g.to_bits() as i64).abs() <= 2
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// The path a junctor error (`"spec.backup" must validate ... (anyOf)`)
/// names, if `cause` is one.
fn junctor_path(cause: &Cause) -> Option<&str> {
    let junctor = ["(allOf)", "(anyOf)", "(oneOf)", "(not)"]
        .iter()
        .any(|j| cause.message.ends_with(j));
    if !junctor {
        return None;
    }
    let named = cause.message.strip_prefix("Invalid value: \"\": ")?;
    let start = cause.message.len() - named.len() + named.find('"')? + 1;
    let len = cause.message[start..].find('"')?;
    Some(&cause.message[start..start + len])
}

/// The row of `docs/validation-differences.md` that explains how `ours`
/// differs from `theirs`, if one does.
fn documented(_case: &Case, ours: &Verdict, theirs: &Verdict) -> Option<&'static str> {
    // A float-written integer (`3.0`, `-0.0`) read by a CEL rule:
    // kube-apiserver's conversion refuses it ("invalid data, expected int,
    // got float64"); ours evaluates it as a double.
    if let Verdict::Invalid { causes } = theirs
        && causes.iter().any(|c| {
            c.message
                .contains("invalid data, expected int, got float64")
        })
    {
        return Some("cel-float-int");
    }
    match (ours, theirs) {
        // allOf/anyOf/oneOf/not: kube-apiserver reports them at <nil> with
        // the errors of the branches inside; ours at the node, without the
        // branches' errors. Everything else must agree.
        (Verdict::Invalid { causes: a }, Verdict::Invalid { causes: b }) => {
            let under: Vec<&str> = a.iter().chain(b).filter_map(junctor_path).collect();
            if under.is_empty() {
                return None;
            }
            let inside = |c: &Cause| {
                junctor_path(c).is_some()
                    || under.iter().any(|p| {
                        c.field == *p
                            || c.field
                                .strip_prefix(p)
                                .is_some_and(|r| r.starts_with(['.', '[']))
                    })
            };
            let rest =
                |c: &[Cause]| -> Vec<Cause> { c.iter().filter(|c| !inside(c)).cloned().collect() };
            // Outside the junctors' nodes both must agree; inside, every
            // error of ours (but the junctors') must be one of theirs.
            let ours_inside_theirs = a
                .iter()
                .filter(|c| inside(c) && junctor_path(c).is_none())
                .all(|c| b.contains(c));
            (rest(a) == rest(b) && ours_inside_theirs).then_some("junctors")
        }
        _ => None,
    }
}

/// Tally of one kind.
#[derive(Default)]
struct Tally {
    cases: usize,
    accepted: usize,
    by: BTreeMap<Agreement, usize>,
    examples: Vec<String>,
}

fn run_source(label: &str, source: KindSource) {
    let started = Instant::now();
    let registry = Registry::from_source(&source).expect("kinds load");
    let snapshot = registry.snapshot();
    let plane = plane::plane();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let namespace = runtime.block_on(plane.namespace("diff"));
    let client = runtime.block_on(plane.client());
    let seed = cases::seed();
    let count = cases::count();
    let mut report = Vec::new();
    let mut failures = Vec::new();
    // How often each kind of mutation was applied, over all kinds.
    let mut mutations: BTreeMap<String, usize> = BTreeMap::new();
    for kind in snapshot.kinds() {
        let name = kind.resolved.definition.kind.clone();
        let group = format!("{}.{label}.diff.cozystack.io", name.to_lowercase());
        let (crd, manifest, dropped) = Crd::manifest(kind, &group);
        install(plane, &manifest, &format!("{}.{group}", crd.plural));
        let kind_started = Instant::now();
        let cases = cases::generate(
            &kind.resolved.definition.open_api_schema,
            &name,
            seed,
            count,
        );
        let answers: Vec<(Case, Verdict)> = runtime.block_on(async {
            futures::stream::iter(cases)
                .map(|case| {
                    let (client, crd, namespace) = (&client, &crd, &namespace);
                    async move {
                        let theirs = oracle::theirs(client, crd, namespace, &case).await;
                        (case, theirs)
                    }
                })
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await
        });
        let mut tally = Tally::default();
        for (case, theirs) in answers {
            let ours = oracle::ours(kind, &case);
            let agreement = compare(&case, &ours, &theirs);
            tally.cases += 1;
            tally.accepted += usize::from(theirs.accepted());
            *tally.by.entry(agreement).or_default() += 1;
            for m in &case.mutations {
                let what = m.rsplit_once(": ").map_or(m.as_str(), |(_, w)| w);
                *mutations.entry(what.to_owned()).or_default() += 1;
            }
            if !matches!(agreement, Agreement::Same | Agreement::Documented(_)) {
                let shown = serde_json::to_string(&case.spec).unwrap_or_default();
                let shown: String = shown.chars().take(1500).collect();
                tally.examples.push(format!(
                    "{name} case {} ({:?}, strict={}, mutations {:?}):\n  spec {shown}\n  ours   {}\n  theirs {}",
                    case.index,
                    agreement,
                    case.strict,
                    case.mutations,
                    brief(&ours),
                    brief(&theirs)
                ));
            }
        }
        report.push(format!(
            "{label}/{name}: {} cases ({} accepted by kube-apiserver) in {:.1}s: {:?}{}",
            tally.cases,
            tally.accepted,
            kind_started.elapsed().as_secs_f64(),
            tally.by,
            if dropped.is_empty() {
                String::new()
            } else {
                format!(" (not in the CRD: {dropped:?})")
            }
        ));
        failures.extend(tally.examples);
    }
    eprintln!(
        "differential {label}: seed {seed}, {count} cases per kind, {} kinds, {:.1}s\n{}\nmutations applied: {mutations:?}",
        snapshot.kinds().len(),
        started.elapsed().as_secs_f64(),
        report.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} cases disagree with kube-apiserver (seed {seed}); the first:\n{}",
        failures.len(),
        failures
            .iter()
            .take(15)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn brief(v: &Verdict) -> String {
    let s = match v {
        Verdict::Accepted { spec, warnings } => format!("accepted {spec} warnings {warnings:?}"),
        Verdict::Invalid { causes } => format!(
            "422 {:?}",
            causes
                .iter()
                .map(|c| format!("{} [{}] {}", c.field, c.reason, c.message))
                .collect::<Vec<_>>()
        ),
        other => format!("{other:?}"),
    };
    s.chars().take(1500).collect()
}

/// Applies a CRD and waits until it is Established.
pub(crate) fn install(plane: &plane::Plane, manifest: &serde_json::Value, name: &str) {
    crate::support::aggregated::apply(plane, &manifest.to_string())
        .unwrap_or_else(|e| panic!("CRD {name} installs: {e}"));
    let wait = plane
        .kubectl()
        .args([
            "wait",
            "--for",
            "condition=Established",
            "--timeout=60s",
            &format!("crd/{name}"),
        ])
        .output()
        .expect("kubectl wait");
    assert!(
        wait.status.success(),
        "{}",
        String::from_utf8_lossy(&wait.stderr)
    );
}

fn examples(dir: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(dir)
}

#[test]
fn example_kinds_agree_with_kube_apiserver() {
    run_source("kinds", KindSource::Definitions(examples("kinds")));
}

/// A kind of the test's own, for the keywords the examples do not use.
#[test]
fn every_schema_keyword_agrees_with_kube_apiserver() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/differential/keywords.yaml");
    run_source("keywords", KindSource::Definitions(file));
}

#[test]
fn chart_kinds_agree_with_kube_apiserver() {
    run_source("charts", KindSource::Charts(examples("charts")));
}
