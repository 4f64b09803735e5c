#!/usr/bin/env bash
# The grading step of classroom.yml: grades one student repository and hands GitHub Classroom's
# reporter (classroom-resources/autograding-grading-reporter) its result, base64-encoded, as the
# step output `result` (printed instead when not run by GitHub Actions).
#
#   grade.sh CUDALINGS COURSE SUBMISSION OUT
#
# CUDALINGS_STEPS, CUDALINGS_SANDBOX, CUDALINGS_SEED: as for docs/grading/run-grade.sh.
set -uo pipefail
if [ $# -ne 4 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
bin=$1 course=$2 submission=$3 out=$4
export CUDALINGS_FORMATS=classroom${CUDALINGS_FORMATS:+,$CUDALINGS_FORMATS}
export CUDALINGS_SANDBOX=${CUDALINGS_SANDBOX:-auto}
[ -z "${CUDALINGS_SEED:-}" ] && unset CUDALINGS_SEED  # an unset secret is no secret
export PATH=/usr/local/cuda/bin:$PATH

bash "$(dirname "${BASH_SOURCE[0]}")/../run-grade.sh" "$bin" "$course" "$out" "$submission"
rc=$?
# The summary names the submission's result file; its classroom file sits beside it.
result=$(python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
try:
    line = json.load(open(f"{out}/summary.json"))["results"][0]
    print(f"{out}/{line['file'][:-len('.json')]}.classroom.json")
except (OSError, KeyError, IndexError, ValueError):
    pass
PY
)
if [ -z "$result" ] || [ ! -s "$result" ]; then
  result="$out/grader-error.classroom.json"
  mkdir -p "$out"
  printf '{"version": 1, "status": "error", "max_score": 0, "tests": [{"name": "cudalings grade", "status": "error", "score": 0, "message": "the grader could not run (exit code %d): see the workflow log"}]}\n' \
    "$rc" >"$result"
fi
encoded=$(base64 -w0 <"$result")
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "result=$encoded" >>"$GITHUB_OUTPUT"
else
  echo "result=$encoded"
fi
echo "grade.sh: cudalings grade exited with $rc; result in $result" >&2
