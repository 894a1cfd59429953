#!/usr/bin/env bash
# Coverage-guided fuzzing with cargo fuzz (libFuzzer, nightly toolchain).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Runs each target (default: all of them, see `cargo fuzz list`) for SECONDS
# (default 60) of libFuzzer's -max_total_time, one job at a time, starting
# from the committed corpus fuzz/corpus/<target> and the hand-written seeds
# fuzz/seeds/<target> (realistic kinds, charts, kubeconfigs, patches), then
# minimizes the corpus with `cargo fuzz cmin` and trims it to
# FUZZ_CORPUS_KIB (default 16) KiB, dropping its largest inputs first, so
# the committed corpora stay small. A crash, panic or timeout (10 s per input) ends
# that target's run (the others still run, the script exits 1): its input is
# under fuzz/artifacts/<target>/; reproduce with
# `cargo +nightly fuzz run <target> fuzz/artifacts/<target>/<file>`, fix the
# library, and commit the input as fuzz/regressions/<target>/<name> (replayed
# on stable by tests/fuzz_replay.rs).
#
# Environment: FUZZ_TOOLCHAIN (default nightly), FUZZ_ARGS (extra libFuzzer
# flags, e.g. "-max_len=65536"), CARGO_TARGET_DIR (shared with the build).
# The build uses no sanitizer (the crate's only unsafe code is a few libc
# calls in allocator.rs and kube_client, which no target reaches; overflow
# and debug assertions stay on), which multiplies executions per second.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${1:-60}
[[ $# -gt 0 ]] && shift
toolchain=${FUZZ_TOOLCHAIN:-nightly}
fuzz=(cargo "+$toolchain" fuzz)
build_flags=(--sanitizer none --debug-assertions)

if ! "${fuzz[@]}" --version >/dev/null 2>&1; then
    echo "fuzz.sh: needs cargo-fuzz and the $toolchain toolchain: cargo install cargo-fuzz" >&2
    exit 2
fi
if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <("${fuzz[@]}" list)
fi

"${fuzz[@]}" build "${build_flags[@]}"
summary=()
failed=0
for target in "${targets[@]}"; do
    corpus=fuzz/corpus/$target
    mkdir -p "$corpus" "fuzz/artifacts/$target"
    log=$(mktemp)
    echo "== $target: ${seconds}s" >&2
    status=0
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    "${fuzz[@]}" run "${build_flags[@]}" "$target" "$corpus" "fuzz/seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        ${FUZZ_ARGS:-} 2>&1 | tee "$log" >&2 || status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    rm -f "$log"
    if [[ $status -ne 0 ]]; then
        summary+=("$target: FAILED (exit $status) after ${execs:-?} runs; input in fuzz/artifacts/$target/")
        failed=1
        continue
    fi
    "${fuzz[@]}" cmin "${build_flags[@]}" "$target" "$corpus" >/dev/null 2>&1
    budget=$((${FUZZ_CORPUS_KIB:-16} * 1024))
    total=$(find "$corpus" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    while read -r size file; do
        ((total > budget)) || break
        rm -f "$file"
        total=$((total - size))
    done < <(find "$corpus" -type f -printf '%s %p\n' | sort -rn)
    summary+=("$target: ${seconds}s, ${execs:-?} runs, ${speed:-?}/s, coverage ${cov:-?}, corpus $(find "$corpus" -type f | wc -l) files, $(du -sk --apparent-size "$corpus" | cut -f1) KiB")
done
printf '%s\n' "${summary[@]}"
exit "$failed"
