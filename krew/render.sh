#!/usr/bin/env bash
# Renders the krew-release-bot template (krew/cozy.yaml, also reachable as
# .krew.yaml) the way the bot does on a release tag, for the archives that
# exist here:
#
#   krew/render.sh TAG TARGET=SHA256 [TARGET=SHA256 ...] > cozy.yaml
#
# `{{ .TagName }}` becomes TAG and each `{{addURIAndSha "URL" .TagName }}`
# becomes `uri: URL` and `sha256: SHA256`, where the URL (with its own
# `{{ .TagName }}`) names the archive of one target triple
# (`…-x86_64-unknown-linux-gnu.tar.gz`). The bot downloads every archive to
# hash it; this script takes the hashes as arguments and keeps only the
# platforms whose target is given, so a manifest for one machine's archive is
# the template's own platform entry (selector, files, bin), not a copy of it.
# Header comments are dropped. Fails when a given target has no platform in
# the template, or a platform has no addURIAndSha line.
#
# Environment: KREW_TEMPLATE  the template (default: krew/cozy.yaml beside this script)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
template="${KREW_TEMPLATE:-$here/cozy.yaml}"
if (($# < 2)); then
  echo "usage: $0 TAG TARGET=SHA256 [TARGET=SHA256 ...]" >&2
  exit 2
fi
tag="$1"
shift
[[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || {
  echo "tag $tag is not v<semver> (krew needs spec.version as v<major>.<minor>.<patch>)" >&2
  exit 2
}
pairs=()
for arg in "$@"; do
  [[ "$arg" =~ ^[A-Za-z0-9_.-]+=[0-9a-f]{64}$ ]] || {
    echo "expected TARGET=SHA256 (64 lowercase hex digits), got $arg" >&2
    exit 2
  }
  pairs+=("$arg")
done

awk -v tag="$tag" -v pairs="${pairs[*]}" '
  function fail(msg) { print "krew/render.sh: " FILENAME ": " msg > "/dev/stderr"; failed = 1; exit 1 }
  function subst_tag(s) { gsub(/\{\{ *\.TagName *\}\}/, tag, s); return s }
  # Prints the buffered platform entry when its archive is one of ours.
  function flush(   i, line, url, target, pad) {
    if (n == 0) return
    if (uri_line == 0) fail("platform entry at line " start " has no addURIAndSha line")
    line = block[uri_line]
    match(line, /^ */); pad = substr(line, 1, RLENGTH)
    if (!match(line, /addURIAndSha +"[^"]+"/)) fail("cannot read the URL at line " start + uri_line - 1)
    url = substr(line, RSTART, RLENGTH); sub(/^addURIAndSha +"/, "", url); sub(/"$/, "", url)
    url = subst_tag(url)
    target = url; sub(/\.tar\.gz$/, "", target); sub(/.*-v[0-9][^-]*-/, "", target)
    if (target in sha) {
      used[target] = 1
      for (i = 1; i <= n; i++) {
        if (i == uri_line) { print pad "uri: " url; print pad "sha256: " sha[target] }
        else print subst_tag(block[i])
      }
    }
    n = 0; uri_line = 0
  }
  BEGIN {
    count = split(pairs, list, " ")
    for (i = 1; i <= count; i++) { split(list[i], kv, "="); sha[kv[1]] = kv[2] }
  }
  # The leading comment block is for people reading the template.
  !body && /^#/ { next }
  { body = 1 }
  /^  platforms:/ { in_platforms = 1; print; next }
  in_platforms && /^  - / { flush(); start = NR }
  in_platforms && /^  [^ -]/ { flush(); in_platforms = 0 }
  in_platforms && start {
    block[++n] = $0
    if ($0 ~ /addURIAndSha/) uri_line = n
    next
  }
  { print subst_tag($0) }
  END {
    if (failed) exit 1
    flush()
    for (t in sha) if (!(t in used)) { print "krew/render.sh: no platform for target " t " in " FILENAME > "/dev/stderr"; exit 1 }
  }
' "$template"
