#!/usr/bin/env bash
# Fetches Debian's bubblewrap package with apt (no root needed) and extracts its `bwrap` into
# .cache/bubblewrap/ (ignored by git), for a machine where bubblewrap is not installed and
# cannot be: copy the folder there and point cudalings at it:
#
#   docs/grading/fetch-bubblewrap.sh            # here, on a Debian or Ubuntu machine
#   CUDALINGS_BWRAP=$PWD/.cache/bubblewrap/bwrap cudalings grade ...   # there
#   (or: cudalings grade --bwrap .cache/bubblewrap/bwrap ...)
#
# The binary needs libselinux1 and libcap2, present on Debian 12 and Ubuntu 22.04/24.04.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="$root/.cache/bubblewrap"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"
(cd "$work" && apt-get download bubblewrap >/dev/null)
deb=$(ls "$work"/bubblewrap_*.deb)
dpkg-deb -x "$deb" "$work/extracted"
install -m 0755 "$work/extracted/usr/bin/bwrap" "$dest/bwrap"
basename "$deb" >"$dest/VERSION"
echo "$dest/bwrap: $("$dest/bwrap" --version) (from $(cat "$dest/VERSION"))"
