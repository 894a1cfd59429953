//! Benchmark: validation and defaulting throughput of app specs against a
//! kind's structural schema (the example Postgres kind), in objects per
//! second. Baseline in the same run: parsing the same specs from JSON, the
//! cost every request pays anyway; the ratio shows what validation adds.
//!
//! Run: `cargo bench --bench validation`

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use kubectl_cozy::kinds::Registry;
use serde_json::{Value, json};

const VERSIONS: [&str; 3] = ["16", "17", "18"];

fn main() {
    let registry =
        Registry::from_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kinds"))
            .expect("load examples/kinds");
    let snapshot = registry.snapshot();
    let kind = snapshot
        .get("apps.cozystack.io", "v1alpha1", "postgreses")
        .expect("postgres kind");
    let specs: Vec<String> = (0..10_000)
        .map(|i| {
            json!({
                "replicas": 1 + i % 9,
                "size": format!("{}Gi", 1 + i % 100),
                "version": VERSIONS[i % 3],
                "users": {format!("user{i}"): {"role": "readwrite"}},
                "databases": {format!("db{i}"): {"owner": format!("user{i}")}},
                "backup": {"enabled": i % 2 == 0, "schedule": "0 2 * * *", "retention": "30d",
                           "destinationPath": "s3://backups/pg"},
            })
            .to_string()
        })
        .collect();

    let rounds = 5;
    let mut best_parse = f64::MAX;
    let mut best_validate = f64::MAX;
    let mut errors = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        for s in &specs {
            black_box(serde_json::from_str::<Value>(s).expect("json"));
        }
        best_parse = best_parse.min(start.elapsed().as_secs_f64());

        let start = Instant::now();
        for s in &specs {
            let mut v: Value = serde_json::from_str(s).expect("json");
            let outcome = kind.schema.default_and_validate(&mut v, "spec");
            errors += outcome.errors.len();
            black_box(v);
        }
        best_validate = best_validate.min(start.elapsed().as_secs_f64());
    }
    assert_eq!(errors, 0, "benchmark specs must be valid");
    let n = specs.len() as f64;
    println!(
        "baseline  parse JSON spec                  {:>10.0} objects/s",
        n / best_parse
    );
    println!(
        "subject   parse + default + validate       {:>10.0} objects/s",
        n / best_validate
    );
    println!(
        "ratio subject/baseline time: {:.2}x",
        best_validate / best_parse
    );
}
