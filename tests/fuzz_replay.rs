//! Replays every committed fuzz input on stable: each file of
//! `fuzz/seeds/<target>/` (hand-written realistic inputs),
//! `fuzz/corpus/<target>/` (the minimized corpora) and
//! `fuzz/regressions/<target>/` (inputs that once crashed, hung or broke a
//! property) goes through the same `kubectl_cozy::fuzzing` function the
//! libFuzzer target calls, so CI checks them without nightly or
//! `cargo fuzz`. Needs no cluster.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kubectl_cozy::fuzzing::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files directly in `dir` (none if it does not exist), sorted.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .map(|e| e.expect("read a fuzz input directory").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `target` on every input of `files`; returns the failures.
fn replay(target: fn(&[u8]), files: &[PathBuf]) -> Vec<String> {
    let mut failures = Vec::new();
    for file in files {
        let data = std::fs::read(file).expect("read a fuzz input");
        let started = Instant::now();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| target(&data))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failures.push(format!("{}: {message}", file.display()));
        }
        // libFuzzer's default -timeout is 1200 s; ours is much tighter.
        let took = started.elapsed();
        if took > Duration::from_secs(5) {
            failures.push(format!("{}: took {took:?}", file.display()));
        }
    }
    failures
}

#[test]
fn corpora_and_regressions_replay_cleanly() {
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut total = 0;
    for (name, target) in TARGETS {
        let seeds = inputs(&fuzz_dir().join("seeds").join(name));
        assert!(!seeds.is_empty(), "fuzz/seeds/{name} is empty");
        for dir in ["seeds", "corpus", "regressions"] {
            let files = inputs(&fuzz_dir().join(dir).join(name));
            total += files.len();
            failures.extend(replay(*target, &files));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} fuzz inputs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!(
        "replayed {total} fuzz inputs of {} targets in {:?}",
        TARGETS.len(),
        started.elapsed()
    );
}

#[test]
fn every_target_has_a_fuzz_target_file() {
    for (name, _) in TARGETS {
        let file = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            text.contains(&format!("kubectl_cozy::fuzzing::{name}(data)")),
            "{} does not call kubectl_cozy::fuzzing::{name}",
            file.display()
        );
    }
}
