#!/usr/bin/env bash
# The doctor figure: 200 namespaces (20 of them Terminating, each held by a
# finalizer), 60 CRDs (each its own group, so 60 more APIServices to probe),
# one dead APIService; times full `kubectl cozy doctor` runs of the release
# binary against the local control plane and prints the ratio to the 3 s target.
#
#   benches/doctor.sh            # build the release binary, run the benchmark
#
# Needs what `cargo test` needs (the control plane binaries; see README).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --bin kubectl-cozy
COZY_DOCTOR_BENCH_BIN="$(cd "$target/release" && pwd)/kubectl-cozy" \
  cargo test --test it doctor::benchmark -- --ignored --nocapture --test-threads=1
