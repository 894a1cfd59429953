#!/usr/bin/env bash
# The server measured the way users reach it (benches/clients.rs): a real
# `kubectl-cozy serve` registered through kube-apiserver's aggregator
# (external-name route) against direct HelmRelease access through the same
# kube-apiserver, with the real kubectl binary (one process per request)
# and with a kube-rs client; 5,000 apps; every subject interleaved with its
# baseline. The kube-rs rows also have the aggregated floor: the same
# HelmReleases through a pass-through proxy registered as an APIService.
# Prints ratios and the load average; nothing asserts a time.
#
# Usage: benches/clients.sh [kubectl|client]
# The full output goes to $CARGO_TARGET_DIR/bench-clients.log (or target/);
# the tables are printed at the end. Needs the control plane
# (tests/control-plane/build.sh, cached).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
filter="${1:-}"
target="${CARGO_TARGET_DIR:-target}"
log="$target/bench-clients.log"
mkdir -p "$target"

conditions() {
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
  echo "busiest processes (%CPU, command):"
  ps -eo pcpu=,comm= --sort=-pcpu | head -5 | sed 's/^/  /'
}

cargo bench --locked --bench clients --no-run
{
  echo "## kubectl-cozy through the aggregator, kubectl and kube-rs clients — $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo
  echo "machine at the start:"
  conditions
} | tee "$log"
cargo bench --locked --bench clients -- "$filter" 2>&1 | tee -a "$log"
{
  echo
  echo "machine at the end:"
  conditions
} | tee -a "$log"

echo
echo "================ results (full log: $log) ================"
grep -E '^(##|\||kubectl.s own floor|load average|machine|  )' "$log" || true
