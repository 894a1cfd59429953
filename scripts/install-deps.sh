#!/usr/bin/env bash
# Installs what building and testing kubectl-cozy needs, skipping what is
# already there: a Rust toolchain with rustfmt and clippy, Go (>= 1.26.7) for
# building the test control plane and test tools from Go modules, and the
# Debian packages below.
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
  echo "go not found: the test control plane is built from Go modules and needs Go >= 1.26.7" >&2
  exit 1
fi
# The plane (Kubernetes 1.36) needs Go 1.26; tests/tools/promrules (Prometheus
# v0.316.0) 1.26.7, and the builds run with GOTOOLCHAIN=local (no download).
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
go_patch="$(go env GOVERSION | sed -E 's/^go1\.[0-9]+(\.([0-9]+))?.*/\2/')"
if ((go_minor < 26 || (go_minor == 26 && ${go_patch:-0} < 7))); then
  echo "Go $(go env GOVERSION) is too old: the test control plane and tools need Go >= 1.26.7" >&2
  exit 1
fi
echo "rust: $(rustc --version); go: $(go env GOVERSION)"

# Debian packages the tests use: fish and zsh run the committed completion
# scripts (tests/it/completion.rs); umoci and skopeo assemble and inspect the
# container image (scripts/image.sh, tests/it/release/image.rs), file checks
# the static binary (scripts/release.sh), ca-certificates is the image's CA
# bundle. Installed when missing and apt is usable.
missing=()
for pkg in fish zsh umoci skopeo file; do
  command -v "$pkg" >/dev/null || missing+=("$pkg")
done
[[ -s /etc/ssl/certs/ca-certificates.crt ]] || missing+=(ca-certificates)
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    echo "installing Debian packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; }
  else
    echo "warning: ${missing[*]} not installed (needed by the completion and release tests); install them with your package manager" >&2
  fi
fi
