//! Benchmark: validation and defaulting throughput of app specs against a
//! kind's structural schema (the example Postgres kind), in objects per
//! second. Baseline in the same run: parsing the same specs from JSON, the
//! cost every request pays anyway; the ratio shows what validation adds.
//!
//! A second case adds CEL rules (`x-kubernetes-validations`) of the kinds
//! real charts carry to the same schema, and runs them as an update (so the
//! transition rules compare with an old spec): what the rules add per object.
//!
//! Run: `cargo bench --bench validation`

#![allow(
    unreachable_pub,
    reason = "the benches' shared app helpers have pub items"
)]

use std::hint::black_box;
use std::time::Instant;

use kubectl_cozy::kinds::schema::CompiledSchema;
use serde_json::{Value, json};

#[allow(
    dead_code,
    reason = "shared with the server benches, which use all of it"
)]
mod apps;

/// The Postgres schema with rules added: an immutable field, a quantity
/// bound, a regex, a map-membership check over map entries and a
/// cross-field rule with a message expression.
fn with_rules(schema: &Value) -> Value {
    let mut s = schema.clone();
    s["x-kubernetes-validations"] = json!([
        {"rule": "quantity(self.size).isGreaterThan(quantity('512Mi'))", "message": "size must exceed 512Mi",
         "fieldPath": ".size"},
        {"rule": "self.replicas <= 9 || self.version != '16'",
         "messageExpression": "'version ' + self.version + ' supports at most 9 replicas'"},
        {"rule": "self.version.matches('^1[6-8]$')", "message": "unsupported version"},
        {"rule": "self.databases.all(d, self.databases[d].owner in self.users)",
         "message": "database owners must be users"}
    ]);
    // Bounds, without which kube-apiserver (and the kind's load) refuses the
    // iteration over databases as too costly.
    s["properties"]["users"]["maxProperties"] = json!(20);
    s["properties"]["databases"]["maxProperties"] = json!(20);
    s["properties"]["version"]["x-kubernetes-validations"] = json!([{"rule": "self in ['16', '17', '18']"}, {"rule": "self >= oldSelf", "message": "no downgrades"}]);
    s["properties"]["storageClass"]["x-kubernetes-validations"] =
        json!([{"rule": "self == oldSelf", "message": "storageClass is immutable"}]);
    s
}

const VERSIONS: [&str; 3] = ["16", "17", "18"];

fn main() {
    let kind = apps::postgres(&apps::examples_registry());
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

    let rules = CompiledSchema::new(&with_rules(&kind.resolved.definition.open_api_schema))
        .expect("schema with rules compiles");
    let olds: Vec<Value> = specs
        .iter()
        .map(|s| {
            let mut v: Value = serde_json::from_str(s).expect("json");
            rules.default_and_validate(&mut v, "spec");
            v
        })
        .collect();
    let mut best_rules = f64::MAX;
    for _ in 0..rounds {
        let start = Instant::now();
        for (s, old) in specs.iter().zip(&olds) {
            let mut v: Value = serde_json::from_str(s).expect("json");
            let outcome = rules.default_and_validate_update(&mut v, Some(old), "spec");
            errors += outcome.errors.len();
            black_box(v);
        }
        best_rules = best_rules.min(start.elapsed().as_secs_f64());
    }
    assert_eq!(errors, 0, "benchmark specs must pass the rules");
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
    println!(
        "subject   parse + default + validate + 7 CEL rules (update) {:>10.0} objects/s",
        n / best_rules
    );
    println!(
        "CEL rules add {:.1} us per object ({:.2}x the rule-less time)",
        (best_rules - best_validate) / n * 1e6,
        best_rules / best_validate
    );
}
