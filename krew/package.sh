#!/usr/bin/env bash
# Builds a release archive for this machine and a krew manifest for it, so the
# plugin can be installed through krew before it is in krew-index:
#
#   krew/package.sh
#   kubectl krew install --manifest=dist/cozy.yaml --archive=dist/kubectl-cozy-<version>-<target>.tar.gz
#   kubectl cozy completion install
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version="v$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
target="$(rustc -vV | sed -n 's/^host: //p')"
case "$target" in
  x86_64-*linux*) os=linux arch=amd64 ;;
  aarch64-*linux*) os=linux arch=arm64 ;;
  x86_64-apple-*) os=darwin arch=amd64 ;;
  aarch64-apple-*) os=darwin arch=arm64 ;;
  *) echo "unsupported target $target" >&2; exit 1 ;;
esac
cargo build --release --locked
target_dir="${CARGO_TARGET_DIR:-target}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp "$target_dir/release/kubectl-cozy" "$target_dir/release/kubectl_complete-cozy" LICENSE "$stage/"
mkdir -p dist
archive="dist/kubectl-cozy-$version-$target.tar.gz"
tar -C "$stage" -czf "$archive" kubectl-cozy kubectl_complete-cozy LICENSE
sha="$(sha256sum "$archive" | cut -d' ' -f1)"
url="https://github.com/kubectl-cozy/kubectl-cozy/releases/download/$version/$(basename "$archive")"
# Keep the template's metadata; replace the platform list with this machine's.
sed -e "s/{{ .TagName }}/$version/g" -e '/^  platforms:/,$d' krew/cozy.yaml | grep -v '^#' > dist/cozy.yaml
cat >> dist/cozy.yaml <<YAML
  platforms:
  - selector:
      matchLabels: {os: $os, arch: $arch}
    uri: $url
    sha256: $sha
    files:
    - {from: kubectl-cozy, to: .}
    - {from: kubectl_complete-cozy, to: .}
    - {from: LICENSE, to: .}
    bin: kubectl-cozy
YAML
echo "$archive"
echo "dist/cozy.yaml"
