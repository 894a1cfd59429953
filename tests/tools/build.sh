#!/usr/bin/env bash
# Builds the Go test tools under tests/tools/ (today: informer, a client-go
# informer used by tests/it/informer.rs). Go only builds test tools here; the
# product is Rust.
#
# Output goes to the same machine-wide cache as tests/control-plane/build.sh,
# in a directory keyed by the tools' go.mod, go.sum and sources, so a second
# run (or a second checkout) does no work. Prints the directory holding the
# binaries on its last line.
#
# Environment:
#   COZY_TEST_TOOLS_DIR use prebuilt tools from this directory; nothing is built
#   COZY_CACHE_DIR      machine-wide cache root (default /var/cache/kubectl-cozy,
#                       or ~/.cache/kubectl-cozy when that is not writable)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools=(informer)

if [[ -n "${COZY_TEST_TOOLS_DIR:-}" ]]; then
  for t in "${tools[@]}"; do
    [[ -x "$COZY_TEST_TOOLS_DIR/$t" ]] || { echo "COZY_TEST_TOOLS_DIR=$COZY_TEST_TOOLS_DIR lacks $t" >&2; exit 1; }
  done
  echo "$COZY_TEST_TOOLS_DIR"
  exit 0
fi

cache_root="${COZY_CACHE_DIR:-/var/cache/kubectl-cozy}"
if ! mkdir -p "$cache_root" 2>/dev/null || [[ ! -w "$cache_root" ]]; then
  cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-cozy"
  mkdir -p "$cache_root"
fi
# The key covers what the binaries are built from (module files and Go
# sources, with their names), not this script's text.
key="$(cd "$here" && for t in "${tools[@]}"; do
  find "$t" -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) | LC_ALL=C sort
done | while read -r f; do printf '%s\n' "$f"; cat "$f"; done | sha256sum | cut -c1-12)"
out="$cache_root/test-tools-$key"
if [[ -f "$out/.complete" ]]; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "go is required to build the test tools" >&2; exit 1; }
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
tmp="$out.partial.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

log() { printf '[test-tools] %s\n' "$*" >&2; }

start=$SECONDS
for t in "${tools[@]}"; do
  log "building $t (client-go; a cold build takes a few minutes)"
  (cd "$here/$t" && go build -trimpath -ldflags "-s -w" -o "$tmp/$t" .)
done

touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
log "built in $((SECONDS - start))s into $out"
echo "$out"
