#!/usr/bin/env bash
# Builds the zip to upload as a Gradescope autograder: setup.sh and run_autograder at its root,
# assignment.env, the course (this repository, without build folders and .git), and the secret
# seed when one is given.
#
#   docs/grading/gradescope/make-autograder.sh OUT.zip [--steps 01,02] [--secret FILE]
set -euo pipefail
usage() { sed -n '2,7p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
out=$(realpath -m "$1")
shift
steps="" secret=""
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --secret) secret=$(realpath "$2"); shift 2 ;;
    *) usage ;;
  esac
done
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/setup.sh" "$here/run_autograder" "$here/assignment.env" "$stage/"
chmod +x "$stage/setup.sh" "$stage/run_autograder"
[ -n "$steps" ] && sed -i "s|^CUDALINGS_STEPS=.*|CUDALINGS_STEPS=$steps|" "$stage/assignment.env"
[ -n "$secret" ] && install -m 600 "$secret" "$stage/secret"
mkdir "$stage/cudalings"
# The course's files that git does not ignore (no builds, no caches), else all but those.
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 cp --parents -t "$stage/cudalings")
else
  (cd "$root" && tar --exclude='./build*' --exclude='./.git' --exclude='./.cache' -cf - .) |
    (cd "$stage/cudalings" && tar -xf -)
fi
rm -f "$out"
(cd "$stage" && python3 -m zipfile -c "$out" setup.sh run_autograder assignment.env cudalings \
  $( [ -n "$secret" ] && echo secret ))
echo "make-autograder: $out ($(du -h "$out" | cut -f1)); steps: $(grep '^CUDALINGS_STEPS=' "$stage/assignment.env" | cut -d= -f2)"
