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
#
# It also unpacks Debian's libseccomp-dev into .cache/libseccomp/, for building cudalings where
# that package is missing (the seccomp filter of the learner's process and of the sandbox):
#   cmake --preset gpu -DCUDALINGS_SECCOMP_ROOT=$PWD/.cache/libseccomp
# The static library in it is linked in, so nothing of it is needed at run time.
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

seccomp="$root/.cache/libseccomp"
mkdir -p "$seccomp"
(cd "$work" && apt-get download libseccomp-dev >/dev/null)
dpkg-deb -x "$(ls "$work"/libseccomp-dev_*.deb)" "$seccomp"
basename "$(ls "$work"/libseccomp-dev_*.deb)" >"$seccomp/VERSION"
echo "$seccomp: $(cat "$seccomp/VERSION") ($(ls "$seccomp"/usr/lib/*/libseccomp.a))"
