//! The cases sent to both validators, reproducible from a seed: a proptest
//! runner seeded from `COZY_DIFF_SEED` (fixed by default, so CI always sends
//! the same cases) and the kind's name; `COZY_DIFF_CASES` sets how many per
//! kind. A quarter of the cases are valid objects, the rest valid objects
//! with one or two mutations; half are sent with `fieldValidation=Strict`.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use super::{generate, mutate};

/// The seed CI uses.
pub const DEFAULT_SEED: u64 = 20_261_201;
/// Cases per kind in CI.
pub const DEFAULT_CASES: usize = 300;

/// The seed: `COZY_DIFF_SEED` or [`DEFAULT_SEED`].
pub fn seed() -> u64 {
    env_number("COZY_DIFF_SEED").unwrap_or(DEFAULT_SEED)
}

/// Cases per kind: `COZY_DIFF_CASES` or [`DEFAULT_CASES`].
pub fn count() -> usize {
    env_number("COZY_DIFF_CASES").map_or(DEFAULT_CASES, |n| n as usize)
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.trim()
            .parse()
            .unwrap_or_else(|e| panic!("{name}={text:?} is not a number: {e}")),
    )
}

/// Random choices from a seeded proptest runner.
pub struct Draw {
    runner: TestRunner,
}

impl Draw {
    /// A runner for `seed` and `salt` (the kind), always the same choices.
    pub fn new(seed: u64, salt: &str) -> Draw {
        // FNV-1a of the salt, mixed with the seed into ChaCha's 32 bytes.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in salt.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let mut bytes = [0u8; 32];
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let word = (seed ^ h.rotate_left(i as u32 * 16)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
        Draw {
            runner: TestRunner::new_with_rng(Config::default(), rng),
        }
    }

    /// A value of `strategy`, or `fallback` when it rejected too many.
    pub fn value_or<S: Strategy>(&mut self, strategy: S, fallback: S::Value) -> S::Value {
        strategy
            .new_tree(&mut self.runner)
            .map_or(fallback, |t| t.current())
    }

    /// A number below `n` (which is not 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.value_or(0..n, 0)
    }
}

/// One object sent to both validators.
#[derive(Debug, Clone)]
pub struct Case {
    /// Its index among the kind's cases (the object's name is `case-<index>`).
    pub index: usize,
    /// The `spec` sent.
    pub spec: Value,
    /// Whether it is sent with `fieldValidation=Strict` (else `Warn`).
    pub strict: bool,
    /// The mutations applied to a valid object, none for a valid one.
    pub mutations: Vec<String>,
}

/// `count` cases for a kind with `schema`, from `seed`.
pub fn generate(schema: &Value, kind: &str, seed: u64, count: usize) -> Vec<Case> {
    let mut draw = Draw::new(seed, kind);
    let valid = generate::valid(schema);
    (0..count)
        .map(|index| {
            let mut spec = draw.value_or(valid.clone(), Value::Object(Default::default()));
            let n = match draw.below(4) {
                0 => 0,
                1 => 2,
                _ => 1,
            };
            let mutations = (0..n)
                .map(|_| mutate::mutate(schema, &mut spec, &mut draw))
                .collect();
            if !spec.is_object() {
                spec = Value::Object(Default::default());
            }
            let strict = draw.below(2) == 0;
            Case {
                index,
                spec,
                strict,
                mutations,
            }
        })
        .collect()
}
