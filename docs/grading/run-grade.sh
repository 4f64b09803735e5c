#!/usr/bin/env bash
# The one way every documented autograder (Gradescope, GitHub Classroom, Slurm) runs
# `cudalings grade`, so that they agree on the steps, the formats and the sandbox.
#
#   run-grade.sh CUDALINGS COURSE OUT SUBMISSION... [-- MORE GRADE OPTIONS]
#
# CUDALINGS is the built `cudalings`, COURSE the instructor's copy of the course, OUT the
# results folder. From the environment:
#   CUDALINGS_STEPS      steps or lessons to grade, comma-separated ("01", "01,02/3"); all if empty
#   CUDALINGS_FORMATS    formats besides the JSON results ("gradescope", "classroom,junit", ...)
#   CUDALINGS_SANDBOX    required (default): refuse to grade without the bubblewrap sandbox
#                        auto: the sandbox where it works here, else grade without it, saying so
#                        off: no sandbox (only for code you trust)
#   CUDALINGS_SEED_FILE  the secret seed's file (read by cudalings itself; or CUDALINGS_SEED)
# Exit code: cudalings grade's (0 graded, 2 usage, 3 the grader failed on a submission, 4 no
# sandbox here).
set -uo pipefail

if [ $# -lt 4 ]; then
  sed -n '2,17p' "$0" >&2
  exit 2
fi
bin=$1 course=$2 out=$3
shift 3
submissions=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  submissions+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift

args=(--root "$course" grade "${submissions[@]}" --out "$out")
[ -n "${CUDALINGS_STEPS:-}" ] && args+=(--step "$CUDALINGS_STEPS")
[ -n "${CUDALINGS_FORMATS:-}" ] && args+=(--format "$CUDALINGS_FORMATS")
args+=("$@")

case "${CUDALINGS_SANDBOX:-required}" in
  required)
    exec "$bin" "${args[@]}"
    ;;
  off)
    exec "$bin" "${args[@]}" --no-sandbox
    ;;
  auto)
    "$bin" "${args[@]}"
    rc=$?
    if [ "$rc" -eq 4 ]; then
      echo "run-grade: no sandbox here: grading without one (CUDALINGS_SANDBOX=auto)" >&2
      "$bin" "${args[@]}" --no-sandbox
      rc=$?
    fi
    exit "$rc"
    ;;
  *)
    echo "run-grade: CUDALINGS_SANDBOX must be required, auto or off" >&2
    exit 2
    ;;
esac
