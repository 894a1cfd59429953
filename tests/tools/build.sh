#!/usr/bin/env bash
# Builds the Go test tools under tests/tools/ (Go only builds test tools here;
# the product is Rust):
#   informer  a client-go informer, used by tests/it/informer.rs
#   kwok      sigs.k8s.io/kwok's kubelet simulator (the node of the test plane,
#             tests/it/support/node.rs), with the Stage objects and the
#             ClusterPortForward CRD taken from the same module
#   krew      sigs.k8s.io/krew v0.4.3: krew itself (as kubectl-krew, the name
#             kubectl runs for `kubectl krew`) and its manifest validator
#             validate-krew-manifest, used by tests/it/release.rs
#   promrules Prometheus's own rules manager and PromQL engine
#             (github.com/prometheus/prometheus v0.316.0) evaluating alerting
#             rules over series, used by tests/it/install.rs
# and, built from nothing, the Prometheus Operator's ServiceMonitor and
# PrometheusRule CRDs as its release ships them (the module's
# example/prometheus-operator-crd), which tests/it/install.rs installs to check
# `install --service-monitor --prometheus-rules`.
#
# Output goes to the same machine-wide cache as tests/control-plane/build.sh,
# in a directory keyed by the tools' go.mod, go.sum and sources, so a second
# run (or a second checkout) does no work. Prints the directory holding the
# binaries on its last line.
#
# Environment:
#   COZY_TEST_TOOLS_DIR use prebuilt tools from this directory (the files
#                       listed in `files` below); nothing is built
#   COZY_CACHE_DIR      machine-wide cache root (default /var/cache/kubectl-cozy,
#                       or ~/.cache/kubectl-cozy when that is not writable)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools=(informer kwok krew promrules)
# The packages each tool directory builds: its own main package, or the tools
# its go.mod names. A directory with one package builds a binary named after
# the directory; one with several, binaries named after the packages.
declare -A package=([informer]=. [promrules]=. [kwok]=sigs.k8s.io/kwok/cmd/kwok
  [krew]="sigs.k8s.io/krew/cmd/krew sigs.k8s.io/krew/cmd/validate-krew-manifest")
files=(informer kwok kwok-stages.yaml kwok-clusterportforwards.crd.yaml kubectl-krew validate-krew-manifest
  promrules servicemonitors.crd.yaml prometheusrules.crd.yaml)
# The module the CRDs are read from (downloaded, not built).
prometheus_operator=github.com/prometheus-operator/prometheus-operator@v0.85.0

if [[ -n "${COZY_TEST_TOOLS_DIR:-}" ]]; then
  for f in "${files[@]}"; do
    [[ -e "$COZY_TEST_TOOLS_DIR/$f" ]] || { echo "COZY_TEST_TOOLS_DIR=$COZY_TEST_TOOLS_DIR lacks $f" >&2; exit 1; }
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
# sources, with their names), the list of files the build leaves and the
# module the CRD comes from, not this script's text.
key="$(cd "$here" && { printf '%s\n' "${files[@]}" "$prometheus_operator"; for t in "${tools[@]}"; do
  find "$t" -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) | LC_ALL=C sort
done | while read -r f; do printf '%s\n' "$f"; cat "$f"; done; } | sha256sum | cut -c1-12)"
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
  log "building $t (${package[$t]}; a cold build takes a few minutes)"
  read -r -a pkgs <<<"${package[$t]}"
  if ((${#pkgs[@]} == 1)); then
    (cd "$here/$t" && go build -trimpath -ldflags "-s -w" -o "$tmp/$t" "${pkgs[0]}")
  else
    (cd "$here/$t" && go build -trimpath -ldflags "-s -w" -o "$tmp/" "${pkgs[@]}")
  fi
done
# kubectl runs `kubectl krew` as the plugin kubectl-krew.
mv "$tmp/krew" "$tmp/kubectl-krew"

# kwok's own "fast" stages (kustomize/stage/fast: nodes become Ready, pods
# Running and Ready at once, deleted pods go away) and its ClusterPortForward
# CRD, from the module the binary was built from.
kwok_dir="$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
[[ -d "$kwok_dir/kustomize" ]] || { echo "kwok's kustomize directory not found in $kwok_dir" >&2; exit 1; }
for stage in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
  pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
  echo "---"
  cat "$kwok_dir/kustomize/stage/$stage.yaml"
done >"$tmp/kwok-stages.yaml"
cp "$kwok_dir/kustomize/crd/bases/kwok.x-k8s.io_clusterportforwards.yaml" "$tmp/kwok-clusterportforwards.crd.yaml"
log "downloading $prometheus_operator (its ServiceMonitor and PrometheusRule CRDs)"
prom_dir="$(cd "$tmp" && GOFLAGS= go mod download -json "$prometheus_operator" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -n "$prom_dir" ]] || { echo "go mod download $prometheus_operator failed" >&2; exit 1; }
for crd in servicemonitors prometheusrules; do
  cp "$prom_dir/example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml" "$tmp/$crd.crd.yaml"
  chmod 0644 "$tmp/$crd.crd.yaml"
done
chmod 0644 "$tmp/kwok-stages.yaml" "$tmp/kwok-clusterportforwards.crd.yaml"
for f in "${files[@]}"; do
  [[ -e "$tmp/$f" ]] || { echo "the build left out $f" >&2; exit 1; }
done

touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
log "built in $((SECONDS - start))s into $out"
echo "$out"
