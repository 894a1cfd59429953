#!/usr/bin/env bash
# Benchmark: `kubectl cozy kinds list` over local definitions, cold (a new
# process per run, as a user types it). Target: <= 10 ms wall (docs/design.md).
# Baseline measured in the same run: `kubectl-cozy --version`, the cost of
# starting this binary at all; the ratio shows what loading, validating and
# compiling the definitions adds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
cargo build --release --locked --quiet
bin="${CARGO_TARGET_DIR:-target}/release/kubectl-cozy"
out="$(mktemp)"
hyperfine -N --warmup 3 --runs 50 --export-json "$out" \
  "$bin --version" \
  "$bin kinds list --kinds examples/kinds" >/dev/null
python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base, subject = r[0], r[1]
ms = lambda x: x * 1000
print(f"baseline  kubectl-cozy --version           mean {ms(base['mean']):6.2f} ms  median {ms(base['median']):6.2f} ms")
print(f"subject   kinds list --kinds examples/kinds mean {ms(subject['mean']):6.2f} ms  median {ms(subject['median']):6.2f} ms")
print(f"ratio subject/baseline (median): {subject['median']/base['median']:.2f}x")
print(f"target 10 ms: median is {ms(subject['median'])/10:.2f} of the budget")
PY
rm -f "$out"
