//! Benchmark: the CPU of each stage of a write through the server, in
//! process and without the network, for the Postgres app that
//! `benches/server.rs writes` creates and updates: the work that the writes
//! benchmark's stage spans (`BENCH_SPANS=1`) time inside the running server,
//! here with warm caches and nothing else on the cores. It shows what a change to
//! one stage saves without the noise of a kube-apiserver round trip that is
//! a hundred times longer.
//!
//! Baseline in the same run: parsing the request body from JSON, which any
//! server pays. Each stage is printed in µs per write and as a ratio to that
//! baseline. Each stage runs over 5,000 inputs built before its timer starts
//! and has its outputs dropped after it stops (the server frees them off the
//! request's path, see `drop_later`); best of 5 rounds.
//!
//! Each stage is also timed **cold**: 300 inputs, each run alone after a
//! 3 ms pause (about a write's wait on kube-apiserver), median. The server
//! runs each stage once per request, between waits on the network, with
//! caches and branch predictors left cold by the pause; the cold column is
//! what a stage costs there even on a core of its own, and the cold / warm
//! ratio says how much of a stage's time in the server (its span) comes from
//! running cold rather than from its CPU.
//!
//! Each stage also shows its heap allocations per write (and the bytes
//! they ask for), counted by a global allocator that wraps the system's
//! malloc, which the server uses: unlike a time, that count is exact and
//! the same on any machine, and malloc and free are a quarter of a
//! request's CPU in the server (`docs/performance.md`). The counting adds
//! two uncontended atomic increments per allocation, to every stage and to
//! the baseline alike.
//!
//! Run: `cargo bench --bench write_stages`

#![allow(
    unreachable_pub,
    reason = "the benches' shared app helpers have pub items"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use kubectl_cozy::apiserver::{patch, unknown_fields};
use kubectl_cozy::storage::cache::Stored;
use kubectl_cozy::storage::helm_release;
use serde_json::{Value, json};

#[allow(
    dead_code,
    reason = "shared with the server benches, which use all of it"
)]
mod apps;

/// Inputs per round.
const WRITES: usize = 5_000;
/// Rounds; the best is kept.
const ROUNDS: usize = 5;
/// Inputs of the cold pass, each run alone after [`PAUSE`].
const COLD_WRITES: usize = 300;
/// The pause before each cold input: about a write's wait on kube-apiserver.
const PAUSE: std::time::Duration = std::time::Duration::from_millis(3);
const NOW: &str = "2026-12-04T12:00:00Z";

/// The system's malloc, counting allocations (a `realloc` counts as one)
/// and the bytes they ask for.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);

fn count(bytes: usize) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    ALLOCATED_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

// SAFETY: every call is passed on to `System` unchanged; counting touches
// only two atomics.
#[expect(
    unsafe_code,
    reason = "GlobalAlloc is unsafe to implement; this one counts and passes each call on"
)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One stage's cost per write.
#[derive(Clone, Copy)]
struct Cost {
    /// Best time over [`ROUNDS`], µs.
    micros: f64,
    /// Median time of one input run alone after [`PAUSE`] idle, µs.
    cold_micros: f64,
    /// Heap allocations (exact, the same every round).
    allocations: f64,
    /// Bytes those allocations ask for.
    bytes: f64,
}

/// Best time per input over [`ROUNDS`], and allocations per input:
/// `inputs` builds each round's inputs before the timer starts, `stage`
/// runs on each.
fn per_write<I, O>(mut inputs: impl FnMut() -> Vec<I>, mut stage: impl FnMut(I) -> O) -> Cost {
    let mut best = f64::MAX;
    let (mut allocations, mut bytes) = (0, 0);
    for _ in 0..ROUNDS {
        let batch = inputs();
        let mut outputs = Vec::with_capacity(batch.len());
        let (allocations_before, bytes_before) = (
            ALLOCATIONS.load(Ordering::Relaxed),
            ALLOCATED_BYTES.load(Ordering::Relaxed),
        );
        let start = Instant::now();
        for input in batch {
            outputs.push(black_box(stage(input)));
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / WRITES as f64);
        allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations_before;
        bytes = ALLOCATED_BYTES.load(Ordering::Relaxed) - bytes_before;
        drop(outputs);
    }
    // Cold: each input alone after a pause, as the server runs a stage once
    // per request, between waits on the network.
    let mut batch = inputs();
    batch.truncate(COLD_WRITES);
    let mut times = Vec::with_capacity(batch.len());
    for input in batch {
        std::thread::sleep(PAUSE);
        let start = Instant::now();
        let output = black_box(stage(input));
        times.push(start.elapsed().as_secs_f64() * 1e6);
        drop(output);
    }
    times.sort_by(f64::total_cmp);
    Cost {
        cold_micros: times[times.len() / 2],
        micros: best,
        allocations: allocations as f64 / WRITES as f64,
        bytes: bytes as f64 / WRITES as f64,
    }
}

fn copies<T: Clone>(value: &T) -> Vec<T> {
    vec![value.clone(); WRITES]
}

/// kube-apiserver's answer to the create of `release`: the server-set
/// metadata and the HelmRelease's own managedFields added, as JSON text.
fn upstream_answer(release: &Value) -> String {
    let mut answer = release.clone();
    let meta = &mut answer["metadata"];
    meta["uid"] = json!("0f6a3c1e-8d2b-4c57-9b1a-2e4f6d8c0a13");
    meta["resourceVersion"] = json!("48213");
    meta["generation"] = json!(1);
    meta["creationTimestamp"] = json!(NOW);
    patch::record_update_with_schema(
        None,
        &mut answer,
        "kubectl-cozy",
        NOW,
        "helm.toolkit.fluxcd.io/v2",
        &json!({}),
    );
    answer.to_string()
}

fn main() {
    let kind = apps::postgres(&apps::examples_registry());
    let resolved = &kind.resolved;
    let group_version = resolved.group_version();
    let schema = &resolved.definition.open_api_schema;

    // Create: the body, then each stage's input as the stage before leaves it.
    let body = apps::user_app(&resolved.definition.group, "bench", "pg-1", 1).to_string();
    let parsed: Value = serde_json::from_str(&body).expect("body");
    let mut validated = parsed.clone();
    let outcome = kind
        .schema
        .default_and_validate(&mut validated["spec"], "spec");
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    let mut recorded = validated.clone();
    let managed = patch::record_update_text(
        None,
        &mut recorded,
        "kubectl-create",
        NOW,
        &group_version,
        schema,
    );
    let release =
        helm_release::to_helm_release(resolved, &recorded, None, managed.clone()).expect("convert");
    let answer_text = upstream_answer(&release);
    let (_, kept) = Stored::from_answer(&answer_text, &kind).expect("answer");
    let view = kept.app_view(&kind).expect("the kind's");

    // Update: the client sends back the app it got with one field changed.
    let current = view.value();
    let mut update_body_value = current.clone();
    update_body_value["spec"]["replicas"] = json!(3);
    let update_body = update_body_value.to_string();
    let existing = kept.write_base();
    let mut update_validated = update_body_value.clone();
    let outcome = kind.schema.default_and_validate_update(
        &mut update_validated["spec"],
        Some(&current["spec"]),
        "spec",
    );
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    let mut update_recorded = update_validated.clone();
    let update_managed = patch::record_update_text(
        Some(&current),
        &mut update_recorded,
        "kubectl-edit",
        NOW,
        &group_version,
        schema,
    );

    let baseline = per_write(|| copies(&body), |b| serde_json::from_str::<Value>(&b));
    let update_baseline = per_write(
        || copies(&update_body),
        |b| serde_json::from_str::<Value>(&b),
    );
    let stages: Vec<(&str, Cost, Cost)> = vec![
        (
            "create: unknown fields outside spec (none)",
            per_write(
                || copies(&parsed),
                // The app is an output, freed after the timer: the stage
                // is the walk.
                |mut app| {
                    let found = unknown_fields::prune(&mut app);
                    (app, found)
                },
            ),
            baseline,
        ),
        (
            "create: validate and default the spec",
            per_write(
                || copies(&parsed),
                |mut app| kind.schema.default_and_validate(&mut app["spec"], "spec"),
            ),
            baseline,
        ),
        (
            "create: managedFields",
            per_write(
                || copies(&validated),
                |mut app| {
                    patch::record_update_text(
                        None,
                        &mut app,
                        "kubectl-create",
                        NOW,
                        &group_version,
                        schema,
                    )
                },
            ),
            baseline,
        ),
        (
            "create: to HelmRelease, encoded for upstream",
            per_write(
                || copies(&managed),
                |managed| {
                    helm_release::release_object(resolved, &recorded, None, managed)
                        .map(|r| serde_json::to_vec(&r))
                },
            ),
            baseline,
        ),
        (
            "upstream's answer kept for the cache, and its app encoded (the response)",
            per_write(
                || copies(&answer_text),
                |text| Stored::from_answer(&text, &kind),
            ),
            baseline,
        ),
        (
            "update: the current app, from its kept view",
            per_write(|| vec![(); WRITES], |()| view.value()),
            update_baseline,
        ),
        (
            "update: unknown fields outside spec (none)",
            per_write(
                || copies(&update_body_value),
                // The app is an output, freed after the timer: the stage
                // is the walk.
                |mut app| {
                    let found = unknown_fields::prune(&mut app);
                    (app, found)
                },
            ),
            update_baseline,
        ),
        (
            "update: validate and default against the current spec",
            per_write(
                || copies(&update_body_value),
                |mut app| {
                    kind.schema.default_and_validate_update(
                        &mut app["spec"],
                        Some(&current["spec"]),
                        "spec",
                    )
                },
            ),
            update_baseline,
        ),
        (
            "update: managedFields",
            per_write(
                || copies(&update_validated),
                |mut app| {
                    patch::record_update_text(
                        Some(&current),
                        &mut app,
                        "kubectl-edit",
                        NOW,
                        &group_version,
                        schema,
                    )
                },
            ),
            update_baseline,
        ),
        (
            "update: to HelmRelease over the stored one, encoded",
            per_write(
                || copies(&update_managed),
                |managed| {
                    helm_release::release_object(
                        resolved,
                        &update_recorded,
                        Some(&existing),
                        managed,
                    )
                    .map(|r| serde_json::to_vec(&r))
                },
            ),
            update_baseline,
        ),
    ];

    println!(
        "sizes: create body {} B, update body {} B, upstream's answer {} B",
        body.len(),
        update_body.len(),
        answer_text.len()
    );
    println!(
        "| stage | µs per write | ratio to parsing the body | cold: µs after a 3 ms pause | cold / warm | allocations per write | bytes allocated per write |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let row = |stage: &str, cost: &Cost, base: &Cost| {
        println!(
            "| {stage} | {:.2} | {:.2} x | {:.2} | {:.1} x | {:.0} | {:.0} |",
            cost.micros,
            cost.micros / base.micros,
            cost.cold_micros,
            cost.cold_micros / cost.micros,
            cost.allocations,
            cost.bytes
        );
    };
    row("baseline: parse the create body", &baseline, &baseline);
    row(
        "baseline: parse the update body",
        &update_baseline,
        &update_baseline,
    );
    let add = |a: Cost, b: &Cost| Cost {
        micros: a.micros + b.micros,
        cold_micros: a.cold_micros + b.cold_micros,
        allocations: a.allocations + b.allocations,
        bytes: a.bytes + b.bytes,
    };
    let mut create_total = baseline;
    let mut update_total = update_baseline;
    for (stage, cost, base) in &stages {
        row(stage, cost, base);
        if !stage.starts_with("update:") {
            create_total = add(create_total, cost);
        }
        if !stage.starts_with("create:") {
            update_total = add(update_total, cost);
        }
    }
    row(
        "create, every stage above but the update's, with the body parsed",
        &create_total,
        &baseline,
    );
    row(
        "update, every stage above but the create's, with the body parsed",
        &update_total,
        &update_baseline,
    );
}
