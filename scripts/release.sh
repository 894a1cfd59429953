#!/usr/bin/env bash
# Builds the release artefacts of one target (this machine's by default):
#
#   <out>/kubectl-cozy-<tag>-<target>.tar.gz         the archive:
#       kubectl-cozy, LICENSE, README.md,
#       completions/ (bash, zsh, fish, PowerShell), man/man1/*.1 (clap_mangen)
#     One binary: kubectl's plugin completer, kubectl_complete-cozy, is the
#     same program under another name, which `kubectl cozy completion
#     install` links next to the plugin (krew unpacks no links, and a second
#     copy doubled the archive).
#   <out>/kubectl-cozy-<tag>-<target>.tar.gz.sha256  its sha256 (sha256sum format)
#   <out>/cozy.yaml                                   the krew manifest for it,
#       rendered from the krew-release-bot template by krew/render.sh
#
# and prints <out> on its last line. Linux gnu targets are linked statically
# (`-C target-feature=+crt-static`; the container image needs a binary with no
# shared libraries) and checked with `file` and `ldd`; built on a glibc of
# 2.36 or later for this machine, their relative relocations are packed
# (DT_RELR, below). The archive is
# reproducible: sorted entries, numeric owner 0, mtime of the last commit
# (or SOURCE_DATE_EPOCH), gzip without a name or time stamp.
#
#   scripts/release.sh [--profile PROFILE] [--target TRIPLE] [--out DIR]
#
#   --profile  cargo profile (default: release, what is published; CI checks
#              the artefacts with `dist-check`, see Cargo.toml)
#   --target   target triple (default: the host's); cross targets need their
#              toolchain and linker, see the README's Install section
#   --out      output directory (default: dist; relative paths start at the
#              repository root, where the script runs)
#
# Cargo builds into $CARGO_TARGET_DIR (default target/), under <target>/<profile>,
# so a cached target dir (CI's, in the machine-wide cache) makes a second run
# rebuild only what changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

profile=release
target=""
out=dist
while (($#)); do
  case "$1" in
    --profile) profile="${2:?--profile needs a value}"; shift 2 ;;
    --target) target="${2:?--target needs a value}"; shift 2 ;;
    --out) out="${2:?--out needs a value}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { printf '[release] %s\n' "$*" >&2; }
die() { printf 'release.sh: %s\n' "$*" >&2; exit 1; }

host="$(rustc -vV | sed -n 's/^host: //p')"
target="${target:-$host}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
[[ -n "$version" ]] || die "no version in Cargo.toml"
tag="v$version"

# Relative relocations packed as DT_RELR (`-z pack-relative-relocs`): a
# static-pie binary relocates itself at start, reading every entry of its
# relocation table; packed, the table is 24 KB instead of 1.5 MB, the binary
# that much smaller and `serve` about 1.3 MiB smaller in RSS (those pages
# stay mapped). glibc processes DT_RELR from 2.36 on; a static binary carries the
# glibc it was linked with, so the check is on this machine's, which links
# host builds (a cross target's sysroot is not inspected: left unpacked).
pack_relocs=false
if [[ "$target" == "$host" && "$target" == *-linux-gnu* ]]; then
  glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc //p')"
  if [[ -n "$glibc" ]] && printf '2.36\n%s\n' "$glibc" | sort -V -C; then
    pack_relocs=true
  fi
fi

static=false
case "$target" in
  *-linux-gnu*) static=true ;;
esac
if $static; then
  # RUSTFLAGS of one target only: build scripts and proc macros (host
  # artefacts) stay dynamic, as they must.
  env_name="CARGO_TARGET_$(echo "$target" | tr 'a-z.-' 'A-Z__')_RUSTFLAGS"
  flags="-C target-feature=+crt-static"
  $pack_relocs && flags="$flags -C link-arg=-Wl,-z,pack-relative-relocs"
  export "$env_name=${!env_name:-} $flags"
fi

start=$SECONDS
log "building kubectl-cozy $tag for $target (profile $profile, static: $static)"
cargo build --locked --profile "$profile" --target "$target" --bin kubectl-cozy
# cargo names the directory of the dev profile "debug".
profile_dir="$profile"
[[ "$profile" == dev ]] && profile_dir=debug
bin_dir="${CARGO_TARGET_DIR:-target}/$target/$profile_dir"
log "built in $((SECONDS - start))s"

if $static; then
  for b in kubectl-cozy; do
    desc="$(file -b "$bin_dir/$b")"
    [[ "$desc" == *"statically linked"* || "$desc" == *"static-pie linked"* ]] \
      || die "$b is not statically linked: $desc"
    # ldd exits non-zero on a static binary; its text says which.
    deps="$(ldd "$bin_dir/$b" 2>&1 || true)"
    [[ "$deps" != *"=>"* ]] || die "$b needs shared libraries: $deps"
    if $pack_relocs; then
      readelf -d "$bin_dir/$b" | grep -q '(RELR)' \
        || die "$b has no packed relocations (DT_RELR): does the linker know -z pack-relative-relocs?"
      "$bin_dir/$b" --version >/dev/null || die "$b does not start"
    fi
    $pack_relocs && desc="$desc, relative relocations packed (DT_RELR)"
    log "$b: $desc"
  done
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
mkdir -p "$root/completions" "$root/man/man1"
cp "$bin_dir/kubectl-cozy" "$root/"
cp LICENSE README.md "$root/"
cp completions/* "$root/completions/"
cp docs/man/*.1 "$root/man/man1/"
chmod 0755 "$root/kubectl-cozy"
find "$root" -type f ! -name kubectl-cozy -exec chmod 0644 {} +
find "$root" -type d -exec chmod 0755 {} +

epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
mkdir -p "$out"
name="kubectl-cozy-$tag-$target.tar.gz"
archive="$out/$name"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort) | sed 's|^\./||' >"$stage/list"
tar -C "$root" --no-recursion --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
  --format=gnu -T "$stage/list" -cf - | gzip -n >"$archive.tmp"
mv "$archive.tmp" "$archive"
sha="$(sha256sum "$archive" | cut -d' ' -f1)"
(cd "$out" && printf '%s  %s\n' "$sha" "$name" >"$name.sha256")

krew/render.sh "$tag" "$target=$sha" >"$out/cozy.yaml.tmp"
mv "$out/cozy.yaml.tmp" "$out/cozy.yaml"

log "$archive ($(du -h "$archive" | cut -f1)), sha256 $sha"
log "$out/cozy.yaml: kubectl krew install --manifest=$out/cozy.yaml --archive=$archive"
(cd "$out" && pwd)
