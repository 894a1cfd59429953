#!/usr/bin/env bash
# Benchmarks of the extension API server on the real local control plane
# (benches/server.rs): list, get, create/update, watch fan-out, memory. Each
# reports its subject against a baseline measured in the same run, as ratios
# and against the targets in docs/design.md; none of them asserts a time.
#
# Usage: benches/server.sh [FILTER]   e.g. benches/server.sh watch_fanout
# Environment (see benches/server.rs): BENCH_WRITE_ROUNDS=N, BENCH_SPANS=1
# (stage times), BENCH_CORES=split (writes: the control plane on CPU 0),
# BENCH_SERVER_WORKERS=N (the server's and the proxy's runtime workers),
# BENCH_MEMORY_BASELINE_BIN=path[:path...] (memory: other builds beside this
# one; the memory benchmark also builds the release artefact and checks its
# targets on it).
# The full output goes to $CARGO_TARGET_DIR/bench-server.log (or target/);
# the tables are printed at the end.
#
# Bounded on purpose (2-core machines): about 10,000 HelmReleases are
# created once per run, 16 at a time; each benchmark takes a few minutes at
# most. Needs the control plane (tests/control-plane/build.sh, cached).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
filter="${1:-}"
target="${CARGO_TARGET_DIR:-target}"
log="$target/bench-server.log"
mkdir -p "$target"

conditions() {
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores;" \
    "memory available: $(awk '/MemAvailable/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "busiest processes (%CPU, command):"
  ps -eo pcpu=,comm= --sort=-pcpu | head -5 | sed 's/^/  /'
}

[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; } || true  # peak RSS of short runs
cargo bench --locked --bench server --no-run
if [[ "memory" == *"$filter"* ]]; then
  # The memory benchmark checks its targets on the binary as released
  # (static-pie, packed relocations: scripts/release.sh), beside cargo's.
  host="$(rustc -vV | sed -n 's/^host: //p')"
  scripts/release.sh --profile release --out "$target/bench-dist" >/dev/null
  shipped="$target/$host/release/kubectl-cozy"
  [[ "$shipped" == /* ]] || shipped="$PWD/$shipped"
  export BENCH_MEMORY_SHIPPED_BIN="$shipped"
fi
{
  echo "## kubectl-cozy server benchmarks — $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo
  echo "machine at the start:"
  conditions
} | tee "$log"
cargo bench --locked --bench server -- "$filter" 2>&1 | tee -a "$log"
{
  echo
  echo "machine at the end:"
  conditions
} | tee -a "$log"

echo
echo "================ results (full log: $log) ================"
grep -E '^(##|\||[0-9]+ watches|load average|machine|cores:|targets checked|  )' "$log" || true
