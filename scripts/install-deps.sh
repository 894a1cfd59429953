#!/usr/bin/env bash
# Installs what building and testing kubectl-cozy needs, skipping what is
# already there: a Rust toolchain with rustfmt and clippy, and Go (>= 1.26)
# for building the test control plane from Go modules.
set -euo pipefail

if ! command -v cargo >/dev/null; then
  echo "cargo not found: install Rust (https://rustup.rs) first" >&2
  exit 1
fi
if command -v rustup >/dev/null; then
  for c in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
  done
fi

if ! command -v go >/dev/null; then
  echo "go not found: the test control plane is built from Go modules and needs Go >= 1.26" >&2
  exit 1
fi
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
if ((go_minor < 26)); then
  echo "Go $(go env GOVERSION) is too old: the test control plane (Kubernetes 1.36) needs Go >= 1.26" >&2
  exit 1
fi
echo "rust: $(rustc --version); go: $(go env GOVERSION)"
