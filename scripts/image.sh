#!/usr/bin/env bash
# Assembles the container image of kubectl-cozy without a daemon or a
# registry, from files only (umoci and skopeo, Debian packages):
#
#   <out>/kubectl-cozy-<tag>-linux-<arch>.oci/      an OCI image layout
#   <out>/kubectl-cozy-<tag>-linux-<arch>.oci.tar   the same as an oci-archive
#
# Both name the image ghcr.io/kubectl-cozy/kubectl-cozy:<tag>
# (org.opencontainers.image.ref.name; src/version.rs (IMAGE) holds the same
# reference as the default agent image), so that `skopeo copy
# oci-archive:<tar> docker://ghcr.io/kubectl-cozy/kubectl-cozy:<tag>` publishes
# it and `podman load`/`ctr image import` name it. Prints <out> last.
#
# The image is FROM scratch in all but name, one layer:
#   /kubectl-cozy                          the statically linked binary of the
#                                          release archive (ENTRYPOINT)
#   /etc/passwd, /etc/group                root and nonroot (65532), the USER
#   /etc/nsswitch.conf                     hosts: files dns (glibc's resolver)
#   /etc/ssl/certs/ca-certificates.crt     Debian's CA bundle, from this host
#   /home/nonroot, /tmp                    HOME and scratch space (mount an
#                                          emptyDir on /tmp when the root
#                                          filesystem is read-only)
#   /usr/share/doc/kubectl-cozy/LICENSE
# with org.opencontainers.image.* labels. Nothing in it needs to write to the
# root filesystem. File times and the creation time are the last commit's (or
# SOURCE_DATE_EPOCH), so the same archive gives the same layer.
#
#   scripts/image.sh [--archive FILE] [--out DIR]
#
#   --archive  a linux release archive from scripts/release.sh (default: the
#              one of this machine's target in --out)
#   --out      output directory (default: dist; relative paths start at the
#              repository root, where the script runs)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

repository=ghcr.io/kubectl-cozy/kubectl-cozy
archive=""
out=dist
while (($#)); do
  case "$1" in
    --archive) archive="${2:?--archive needs a value}"; shift 2 ;;
    --out) out="${2:?--out needs a value}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { printf '[image] %s\n' "$*" >&2; }
die() { printf 'image.sh: %s\n' "$*" >&2; exit 1; }

for tool in umoci skopeo file; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh installs it: apt-get install umoci skopeo)"
done
ca_bundle=/etc/ssl/certs/ca-certificates.crt
[[ -s "$ca_bundle" ]] || die "$ca_bundle missing (apt-get install ca-certificates)"

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
tag="v$version"
if [[ -z "$archive" ]]; then
  host="$(rustc -vV | sed -n 's/^host: //p')"
  archive="$out/kubectl-cozy-$tag-$host.tar.gz"
fi
[[ -f "$archive" ]] || die "$archive not found: run scripts/release.sh first"
case "$(basename "$archive")" in
  *-x86_64-unknown-linux-*) arch=amd64 ;;
  *-aarch64-unknown-linux-*) arch=arm64 ;;
  *) die "$archive is not a linux x86_64 or aarch64 archive" ;;
esac
ref="$repository:$tag"
name="kubectl-cozy-$tag-linux-$arch"
layout="$out/$name.oci"
oci_tar="$out/$name.oci.tar"

epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
created="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/archive"
tar -C "$work/archive" -xzf "$archive" kubectl-cozy LICENSE
desc="$(file -b "$work/archive/kubectl-cozy")"
[[ "$desc" == *"statically linked"* || "$desc" == *"static-pie linked"* ]] \
  || die "the archive's kubectl-cozy is not statically linked (a scratch image has no libc): $desc"

# umoci unpacks as the caller; without root, --rootless maps ownership to it
# and repack records root (0:0) for what the caller owns.
rootless=()
[[ $(id -u) == 0 ]] || rootless=(--rootless)

log "assembling $ref ($arch) from $archive"
rm -rf "$layout" "$oci_tar"
umoci init --layout "$work/layout"
umoci new --image "$work/layout:build"
umoci unpack "${rootless[@]}" --image "$work/layout:build" "$work/bundle" >/dev/null
rootfs="$work/bundle/rootfs"
install -d -m 0755 "$rootfs/etc/ssl/certs" "$rootfs/usr/share/doc/kubectl-cozy" "$rootfs/home"
install -d -m 0700 "$rootfs/home/nonroot"
install -d -m 1777 "$rootfs/tmp"
install -m 0755 "$work/archive/kubectl-cozy" "$rootfs/kubectl-cozy"
install -m 0644 "$work/archive/LICENSE" "$rootfs/usr/share/doc/kubectl-cozy/LICENSE"
install -m 0644 "$ca_bundle" "$rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' \
  >"$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
chmod 0644 "$rootfs/etc/passwd" "$rootfs/etc/group" "$rootfs/etc/nsswitch.conf"
if [[ $(id -u) == 0 ]]; then
  chown -R 0:0 "$rootfs"
  chown 65532:65532 "$rootfs/home/nonroot"
fi
find "$rootfs" -exec touch -h -d "@$epoch" {} +
umoci repack --image "$work/layout:build" --history.created "$created" \
  --history.created_by "scripts/image.sh: kubectl-cozy $tag, CA certificates, passwd" "$work/bundle"

labels=(
  "org.opencontainers.image.title=kubectl-cozy"
  "org.opencontainers.image.description=kubectl-cozy: extension API server, tunnel agent and kubectl plugin"
  "org.opencontainers.image.version=$tag"
  "org.opencontainers.image.revision=$revision"
  "org.opencontainers.image.created=$created"
  "org.opencontainers.image.source=https://github.com/kubectl-cozy/kubectl-cozy"
  "org.opencontainers.image.url=https://github.com/kubectl-cozy/kubectl-cozy"
  "org.opencontainers.image.licenses=Apache-2.0"
)
config=(
  --os linux --architecture "$arch" --created "$created" --author "kubectl-cozy"
  --config.entrypoint /kubectl-cozy --config.user 65532:65532 --config.workingdir /
  --config.env PATH=/ --config.env HOME=/home/nonroot
  --clear config.cmd
)
for l in "${labels[@]}"; do config+=(--config.label "$l" --manifest.annotation "$l"); done
umoci config --image "$work/layout:build" --tag "$tag" --no-history "${config[@]}"
umoci rm --image "$work/layout:build"
umoci gc --layout "$work/layout"

# Both outputs name the image by its full reference (skopeo writes it as the
# index's org.opencontainers.image.ref.name); the blobs are copied as they are.
skopeo --insecure-policy copy --quiet "oci:$work/layout:$tag" "oci-archive:$work/image.oci.tar:$ref"
skopeo --insecure-policy copy --quiet "oci:$work/layout:$tag" "oci:$work/final:$ref"
mkdir -p "$out"
mv "$work/final" "$layout"
mv "$work/image.oci.tar" "$oci_tar"
log "$layout and $oci_tar ($(du -h "$oci_tar" | cut -f1)): $ref"
(cd "$out" && pwd)
