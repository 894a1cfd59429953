#!/usr/bin/env bash
# Benchmarks of `kubectl cozy serve` registered in the real local control
# plane (the ignored `serve::bench` tests in tests/it/serve.rs):
#   - start → APIService Available, with the split (certificates, objects,
#     tunnel connected, Available), and SIGINT → exit;
#   - the agent's reap after SIGKILL with the default Lease (15 s), without
#     the local guard (`--no-session-guard`), which reaps within a second;
#   - get p50/p99 and a 5,000-app list through the tunnel vs the
#     external-name route vs straight to serve, interleaved in one run.
# Nothing asserts a time.
#
# Usage: benches/serve.sh [FILTER]   e.g. benches/serve.sh bench_get
# The full output goes to $CARGO_TARGET_DIR/bench-serve.log (or target/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
filter="serve::bench::${1:-}"
target="${CARGO_TARGET_DIR:-target}"
log="$target/bench-serve.log"
mkdir -p "$target"

conditions() {
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
}

cargo test --release --locked --test it --no-run
{
  echo "## kubectl cozy serve benchmarks — $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  conditions
} | tee "$log"
cargo test --release --locked --test it "$filter" -- --ignored --nocapture --test-threads=1 2>&1 | tee -a "$log"
conditions | tee -a "$log"
echo
echo "================ results (full log: $log) ================"
grep -E '^(##|\||tunnel −|load average|\[bench\])' "$log" || true
