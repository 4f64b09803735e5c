#!/usr/bin/env bash
# The documented autograders, run as documented on three sample submissions (untouched,
# solved, broken), graded on one step (01/01, worth 1 point):
#   - Gradescope: run_autograder in a stand-in for /autograder; results.json's score, and its
#     validity against docs/grading/gradescope-results.schema.json (when python3-jsonschema is
#     installed);
#   - GitHub Classroom: grade.sh, and the result the reporter would read; the workflow parses
#     and calls grade.sh;
#   - Slurm: grade-shard.sbatch as an array of two tasks, then merge.sbatch, against the same
#     batch unsharded (same secret seed: the same verdicts and seeds);
#   - make-autograder.sh makes a zip Gradescope accepts (setup.sh and run_autograder at its
#     root), and every script parses.
# On a machine without a GPU the grading is emulated; with one, it runs on the GPU.
#
#   test_autograders.sh SOURCE_DIR CUDALINGS_BINARY        exit 0 pass, 1 fail, 77 skipped
set -uo pipefail
src=$1 bin=$2
docs=$src/docs/grading
validate=$src/tests/grading/validate_json.py
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the results"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CUDALINGS_STATE_DIR=$tmp/state NO_COLOR=1 CUDALINGS_SANDBOX=auto
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# The samples.
samples=$tmp/samples
mkdir -p "$samples/untouched/lessons" "$samples/solved/lessons" "$samples/broken"
cp -r "$src/lessons/01_vector_add" "$samples/untouched/lessons/"
cp -r "$src/lessons/01_vector_add" "$samples/solved/lessons/"
cp "$src/solutions/01_vector_add/"*.cu "$samples/solved/lessons/01_vector_add/"
cp "$src/checks/01_vector_add/fixtures/compile_error.cu" "$samples/broken/01_one_thread_per_element.cu"
declare -A expected=([untouched]=0 [solved]=1 [broken]=0)
printf '00112233445566778899aabbccddeeff\n' >"$tmp/secret"

# ------------------------------------------------------------------ Gradescope
for s in untouched solved broken; do
  ag=$tmp/gradescope-$s
  mkdir -p "$ag/source" "$ag/submission"
  cp -r "$samples/$s/." "$ag/submission/"
  printf 'CUDALINGS_STEPS=01/01\nCUDALINGS_SANDBOX=auto\n' >"$ag/source/assignment.env"
  cp "$tmp/secret" "$ag/source/secret"
  AUTOGRADER_ROOT=$ag CUDALINGS_COURSE=$src CUDALINGS_BIN=$bin \
    bash "$docs/gradescope/run_autograder" >"$ag/log" 2>&1
  results=$ag/results/results.json
  if [ ! -s "$results" ]; then fail "gradescope $s: no results.json"; cat "$ag/log"; continue; fi
  score=$(json "$results" 'int(d["score"])')
  max=$(json "$results" 'int(sum(t["max_score"] for t in d["tests"]))')
  if [ "$score" != "${expected[$s]}" ]; then
    fail "gradescope $s: score $score, expected ${expected[$s]}"
    # What the student would read (each test's status and output), and the grade's own log.
    python3 - "$results" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["tests"]:
    print(f'  {t.get("name")}: {t.get("status")}: {t.get("output", "")[:600]}')
PY
    tail -20 "$ag/log"
  fi
  [ "$max" = 1 ] || fail "gradescope $s: max_score $max, expected 1"
  python3 "$validate" "$docs/gradescope-results.schema.json" "$results"
  case $? in
    0) ;;
    77) echo "note: python3-jsonschema not installed: results.json not validated" ;;
    *) fail "gradescope $s: results.json does not follow the schema" ;;
  esac
  grep -q 00112233445566778899 "$ag/log" "$ag/results/"* && fail "gradescope $s: the secret was printed"
  echo "gradescope $s: $score/$max"
done

# ------------------------------------------------------------------ GitHub Classroom
for s in untouched solved broken; do
  out=$tmp/classroom-$s
  line=$(CUDALINGS_STEPS=01/01 bash "$docs/github-classroom/grade.sh" "$bin" "$src" \
    "$samples/$s" "$out" 2>"$tmp/classroom-$s.log" | grep '^result=')
  if [ -z "$line" ]; then fail "classroom $s: no result"; cat "$tmp/classroom-$s.log"; continue; fi
  echo "${line#result=}" | base64 -d >"$tmp/classroom-$s.json"
  score=$(json "$tmp/classroom-$s.json" 'int(sum(t["score"] for t in d["tests"]))')
  status=$(json "$tmp/classroom-$s.json" 'd["status"]')
  want=$([ "$s" = solved ] && echo pass || echo fail)
  if [ "$score" != "${expected[$s]}" ]; then
    fail "classroom $s: score $score, expected ${expected[$s]}"
    tail -20 "$tmp/classroom-$s.log"
  fi
  [ "$status" = "$want" ] || fail "classroom $s: status $status, expected $want"
  echo "classroom $s: $status, $score"
done
if python3 -c 'import yaml' 2>/dev/null; then
  python3 - "$docs/github-classroom/classroom.yml" <<'PY' || fail "classroom.yml"
import sys, yaml
flow = yaml.safe_load(open(sys.argv[1]))
steps = flow["jobs"]["run-autograding-tests"]["steps"]
grade = [s for s in steps if s.get("id") == "grade"][0]
assert "github-classroom/grade.sh" in grade["run"], grade
report = [s for s in steps if "autograding-grading-reporter" in s.get("uses", "")][0]
runner = report["with"]["runners"]
assert f"{runner.upper()}_RESULTS" in report["env"], report
assert report["env"][f"{runner.upper()}_RESULTS"] == "${{ steps.grade.outputs.result }}"
PY
else
  echo "note: python3-yaml not installed: classroom.yml not parsed"
fi

# ------------------------------------------------------------------ Slurm
export CUDALINGS_BIN=$bin CUDALINGS_STEPS=01/01 CUDALINGS_SEED_FILE=$tmp/secret
for i in 1 2; do
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=2 SLURM_CPUS_PER_TASK=1 \
    bash "$docs/slurm/grade-shard.sbatch" "$src" "$samples" "$tmp/slurm" >"$tmp/shard-$i.log" 2>&1 ||
    { fail "slurm shard $i/2"; cat "$tmp/shard-$i.log"; }
done
bash "$docs/slurm/merge.sbatch" "$src" "$tmp/slurm" >"$tmp/merge.log" 2>&1 ||
  { fail "slurm merge"; cat "$tmp/merge.log"; }
bash "$docs/run-grade.sh" "$bin" "$src" "$tmp/whole" "$samples"/*/ >"$tmp/whole.log" 2>&1 ||
  { fail "unsharded batch"; cat "$tmp/whole.log"; }
python3 - "$tmp/slurm/class" "$tmp/whole" <<'PY' || fail "the merged shards differ from the unsharded batch"
import json, sys
reasons = []
def results(folder):
    out = {}
    for line in json.load(open(f"{folder}/summary.json"))["results"]:
        r = json.load(open(f"{folder}/{line['file']}"))
        out[line["file"]] = [(s["step"], s["verdict"], s["seed"], s["points"]) for s in r["results"]]
        reasons.extend(f'{folder}/{line["file"]}: {s["verdict"]}: {s.get("reason", "")}'
                       for s in r["results"] if s.get("reason"))
    return out
merged, whole = results(sys.argv[1]), results(sys.argv[2])
assert len(whole) == 3 and merged == whole, (merged, whole, reasons)
PY
for f in grades.csv junit.xml class-summary.html class-summary.csv; do
  [ -s "$tmp/slurm/class/$f" ] || fail "slurm merge: no $f"
done
echo "slurm: 2 shards merged: $(json "$tmp/slurm/class/summary.json" 'len(d["results"])') results"
unset CUDALINGS_BIN CUDALINGS_STEPS CUDALINGS_SEED_FILE

# ------------------------------------------------------------------ the zip, and every script
bash "$docs/gradescope/make-autograder.sh" "$tmp/autograder.zip" --steps 01/01 --secret "$tmp/secret" \
  >"$tmp/zip.log" 2>&1 || { fail "make-autograder.sh"; cat "$tmp/zip.log"; }
python3 - "$tmp/autograder.zip" <<'PY' || fail "the autograder zip"
import stat, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
for required in ("setup.sh", "run_autograder", "assignment.env", "secret", "cudalings/course.json",
                 "cudalings/docs/grading/run-grade.sh"):
    assert required in names, required
assert stat.S_IMODE(z.getinfo("run_autograder").external_attr >> 16) & 0o100, "run_autograder is not executable"
assert "CUDALINGS_STEPS=01/01" in z.read("assignment.env").decode()
assert not any(n.startswith("cudalings/build") for n in names)
PY
for script in "$docs"/*.sh "$docs"/gradescope/setup.sh "$docs"/gradescope/run_autograder \
  "$docs"/gradescope/make-autograder.sh "$docs"/github-classroom/grade.sh "$docs"/slurm/*; do
  bash -n "$script" || fail "$script does not parse"
done

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all autograders gave the expected results"
