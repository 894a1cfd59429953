#!/usr/bin/env bash
# Builds the local test control plane from Go modules: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kubectl of one pinned Kubernetes
# version, plus Flux's HelmRelease CRD taken from the helm-controller module.
#
# Output goes to a machine-wide cache directory keyed by the pinned versions and
# the wrapper modules' go.sum, so a second run (or a second checkout) does no
# work. Prints the directory holding the binaries on its last line.
#
# Environment:
#   COZY_TEST_BIN_DIR   use prebuilt binaries from this directory (the files
#                       PLANE_FILES in versions.env names); nothing is built
#   COZY_CACHE_DIR      machine-wide cache root (default /var/cache/kubectl-cozy,
#                       or ~/.cache/kubectl-cozy when that is not writable)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

if [[ -n "${COZY_TEST_BIN_DIR:-}" ]]; then
  for f in $PLANE_FILES; do
    [[ -e "$COZY_TEST_BIN_DIR/$f" ]] || { echo "COZY_TEST_BIN_DIR=$COZY_TEST_BIN_DIR lacks $f" >&2; exit 1; }
  done
  echo "$COZY_TEST_BIN_DIR"
  exit 0
fi

cache_root="${COZY_CACHE_DIR:-/var/cache/kubectl-cozy}"
if ! mkdir -p "$cache_root" 2>/dev/null || [[ ! -w "$cache_root" ]]; then
  cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-cozy"
  mkdir -p "$cache_root"
fi
# The key covers what the binaries are built from, not this script's text.
key="$(cat "$here/versions.env" "$here/k8s/go.mod" "$here/k8s/go.sum" "$here/etcd/go.mod" "$here/etcd/go.sum" \
  | sha256sum | cut -c1-12)"
out="$cache_root/controlplane-k8s-$K8S_VERSION-etcd-$ETCD_VERSION-flux-$HELM_CONTROLLER_VERSION-$key"
if [[ -f "$out/.complete" ]]; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "go is required to build the test control plane" >&2; exit 1; }
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
tmp="$out.partial.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

log() { printf '[control-plane] %s\n' "$*" >&2; }

minor="$(echo "$K8S_VERSION" | cut -d. -f2)"
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags="$ldflags -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

start=$SECONDS
log "building etcd $ETCD_VERSION"
(cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3)

log "building kube-apiserver, kube-controller-manager, kube-scheduler and kubectl $K8S_VERSION (a cold build, module downloads included, takes several minutes)"
(cd "$here/k8s" && go build -trimpath -tags selinux,notest -ldflags "$ldflags" -o "$tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)

log "extracting the HelmRelease CRD from github.com/fluxcd/helm-controller@$HELM_CONTROLLER_VERSION"
flux_dir="$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "github.com/fluxcd/helm-controller@$HELM_CONTROLLER_VERSION" \
  | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
crd="$flux_dir/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml"
[[ -f "$crd" ]] || { echo "HelmRelease CRD not found in $flux_dir" >&2; exit 1; }
cp "$crd" "$tmp/helmreleases.crd.yaml"
chmod 0644 "$tmp/helmreleases.crd.yaml"

for f in $PLANE_FILES; do
  [[ -e "$tmp/$f" ]] || { echo "the build left out $f (PLANE_FILES in versions.env)" >&2; exit 1; }
done
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
log "built in $((SECONDS - start))s into $out"
echo "$out"
