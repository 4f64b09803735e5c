#!/usr/bin/env bash
# A full pass on a GPU machine, in phases that each fit a 10-minute slot. Every phase writes one
# log (and JSON where there is some) under $OUT (or ./gpu-session); BUILD names the build
# directory (default build-gpu). Phases can be chained: bench/gpu_session.sh build solutions.
#   build         configure + build (preset gpu: this GPU's architecture), then every lesson's
#                 checks and baselines (`cudalings dev check`, which also checks the course)
#   solutions     every solution checked and timed, with every lesson's staircase (JSON + text);
#                 LESSONS="10 13" for only those (skeletons too), TARGETS="..." builds only those
#   skeletons     every skeleton checked, no timing, four lessons at a time: all must fail
#   fixtures      the bad-submission fixtures, graded in batches, twice (the GPU test; about
#                 8.5 minutes on the H200, over 9.5 on an H100: give it two slots,
#                 FIXTURE_PART=1 then FIXTURE_PART=2, lessons 01-06 and 07 on)
#   ctest         the whole test suite except the GPU fixture and solutions tests (the phases
#                 above run them), 12 tests at a time
#   grading       grading's GPU tests (the sandbox with CUDA, workers, the autograder)
#   bench         the checker's own benchmark (bench/check_bench.py)
#   differential  the emulator against the GPU on every step (the same pass/fail)
#   corpus        the emulator's corpus of submissions checked on the GPU (emulator/tests/
#                 differential.py: the same pass/fail as each file's `emulated:` line; no timing)
#   inprocess     the step in the runner's own process (--in-process, the older mode: a step can
#                 forge its verdict there) for comparisons with the default, the judge split
#                 (docs/architecture.md): every solution checked and timed (inprocess-solutions
#                 .json; LESSONS as for solutions), or with INPROCESS_PART=fixtures every fixture
#                 (CUDALINGS_IN_PROCESS=1: grade passes --in-process to its workers)
#   buffers       the reference timed on the learner's buffers and on outputs of its own
#                 (CUDALINGS_TIMING_BUFFERS=separate), lesson 06's atomics and lesson 01 (about a
#                 minute)
#
# GPU work of another process makes a timed check SUSPECT (the host clock sees more than the
# GPU's events): run the timed phases (solutions, bench, ctest, fixtures) each alone on the GPU;
# only untimed phases (skeletons, corpus, differential) may share it with each other.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-session}"
mkdir -p "$out"
build="${BUILD:-build-gpu}"
export PATH=/usr/local/cuda/bin:$PATH NO_COLOR=1
state=/tmp/gpu-session-state
[ -x .cache/bubblewrap/bwrap ] && export CUDALINGS_BWRAP=$PWD/.cache/bubblewrap/bwrap

# The verdicts of a `check --json` file, one line per step, and a count per verdict.
summarize() {
  python3 - "$1" <<'PY'
import json, sys, collections
j = json.load(open(sys.argv[1]))
count = collections.Counter()
for r in j["results"]:
    count[r["verdict"]] += 1
    line = f'{r["step"]:48} {r["verdict"]:14}'
    for t in r.get("timings", []):
        ref = t.get("speed_vs_reference")
        line += f' [{t.get("column") or t["size"]}] {t["learner"]["median_us"]:.1f} us'
        line += f' {t["learner"].get("percent_of_copy", 0):.1f}% copy' + (f' x{ref:.3f} ref' if ref else '')
    if r["verdict"] not in ("PASS",) and r.get("reason"):
        line += "  " + r["reason"][:150]
    print(line)
print(dict(count))
PY
}

for phase in "$@"; do
  t0=$(date +%s)
  case "$phase" in
  build)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
    # The device image has libseccomp's run-time library only: docs/grading/fetch-bubblewrap.sh
    # unpacks libseccomp-dev under .cache/libseccomp, carried with the tree.
    configure_args=()
    [ -d .cache/libseccomp ] && configure_args=(-DCUDALINGS_SECCOMP_ROOT="$PWD/.cache/libseccomp")
    # The device's copy of the tree may carry an older .git: COMMIT=$(git rev-parse --short HEAD)
    # from where the tree was sent names the run's commit in its results.
    configure_args+=(-DCUDALINGS_COMMIT="${COMMIT:-}")
    cmake --preset gpu "${configure_args[@]}" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
    # TARGETS="cudalings cudalings-runner": only those (a short session checking a few lessons).
    targets=()
    for t in ${TARGETS:-}; do targets+=(--target "$t"); done
    cmake --build --preset gpu "${targets[@]}" --parallel 16 >"$out/build.log" 2>&1 ||
      { grep -E "error" "$out/build.log" | head -30; exit 1; }
    # DEV_CHECK=0 leaves `dev check` to CI and the ctest phase's course_dev_check: it uses no GPU.
    [ "${DEV_CHECK:-1}" = 0 ] ||
      "$build/cudalings" --state-dir "$state" dev check 2>&1 | grep -v "^  \.\.\." | tail -15
    ;;
  solutions)
    # HAZARDS=0: no hazard pass (the CPU emulator's race and bounds checks on small cases, the same
    # on any machine; CI's emulated solutions run them), for a device session with little time left.
    # LESSONS="10 13": only those lessons, each in its own file (solutions-10.json, ...).
    hazards=()
    [ "${HAZARDS:-1}" = 0 ] && hazards=(--no-hazards)
    for lesson in ${LESSONS:-all}; do
      name=solutions; what=(--all)
      [ "$lesson" = all ] || { name=solutions-$lesson; what=("$lesson"); }
      "$build/cudalings" check "${what[@]}" --solutions --json "${hazards[@]}" --state-dir "$state" \
        >"$out/$name.json" 2>"$out/$name.err"
      summarize "$out/$name.json"
      python3 - "$out/$name.json" <<'PY'
import json, sys
for st in json.load(open(sys.argv[1]))["staircases"]:
    fp32 = st.get("fp32_gflops", 0)
    print(f'== {st["lesson"]} staircase (copy {st["copy_gbps"]:.0f} GB/s'
          + (f', FP32 {fp32 / 1000:.1f} TFLOP/s' if fp32 else '') + ')')
    for row in st["rows"]:
        cells = "  ".join(f'[{c["column"] or c["size"]}] {c["median_us"]:.1f} us {c["percent_of_copy"]:.1f}%'
                          + (f' {c["percent_of_fp32"]:.1f}% fp32' if "percent_of_fp32" in c else "")
                          + (f' x{c["vs_previous"]:.2f} prev' if c.get("vs_previous") else "")
                          for c in row["cells"])
        print(f'  {row["label"][:40]:40} {cells}')
PY
    done
    ;;
  skeletons)
    # Untimed: four lessons at a time (as the GPU test does), each in its own file
    # (skeletons-NN.json); LESSONS as for solutions, else every lesson of course.json.
    lessons=${LESSONS:-$(python3 -c 'import json; print(" ".join(l[:2] for l in json.load(open("course.json"))["lessons"]))')}
    printf '%s\n' $lessons | xargs -P 4 -I{} sh -c \
      '"$1/cudalings" check {} --no-time --json --state-dir /tmp/gpu-session-skel-{} >"$2/skeletons-{}.json" 2>/dev/null' \
      _ "$build" "$out"
    for lesson in $lessons; do
      summarize "$out/skeletons-$lesson.json" | tail -1 | sed "s/^/$lesson /"
      summarize "$out/skeletons-$lesson.json" | grep -E " PASS | SKIPPED | INTERNAL_ERROR | COMPILE_ERROR " || true
    done
    ;;
  fixtures)
    # The test's own filter (CUDALINGS_FIXTURE_STEPS) splits it into two calls of under 10 minutes.
    case "${FIXTURE_PART:-all}" in
    1) export CUDALINGS_FIXTURE_STEPS=01_vector_add,02_reduce,03_warp_shuffle,04_block_reduce,05_scan,06_histogram ;;
    2) export CUDALINGS_FIXTURE_STEPS=07_compact,08_transpose,09_stencil,10_gemm,11_,12_row_ops,13_ ;;
    esac
    ctest --test-dir "$build" -R "every bad submission fixture" -V \
      >"$out/fixtures${FIXTURE_PART:+-$FIXTURE_PART}.log" 2>&1
    unset CUDALINGS_FIXTURE_STEPS
    grep -E "fixture batch|^  |tests passed|tests failed" "$out/fixtures${FIXTURE_PART:+-$FIXTURE_PART}.log" | cut -c1-300
    ;;
  ctest)
    # Every test but the fixtures' and the solutions' (their phases run them, each alone).
    # GPU_ONLY=1 also leaves out the tests that never touch a GPU, whatever the machine (the emulated
    # course and fixtures, the emulator's corpus, `dev check` with coverage: CI runs them, and so
    # does a CI-equivalent of the same tree), for a device session with little time left.
    cpu_only="emu_course_|with an emulated verdict get it under emulation|the emulator's corpus of submissions|course_dev_check"
    exclude="every bad submission fixture|every solution step passes"
    not_first="^gpu$"
    [ "${GPU_ONLY:-0}" = 1 ] && { exclude="$exclude|$cpu_only"; not_first="^(gpu|emu)$"; }
    # In two passes: tests labelled cpu may still put work on a GPU (grading, checks) without its
    # lock, and a timed test beside them counts their processes there (SUSPECT). So every other
    # label first, then the label gpu (its timed tests hold the lock).
    { ctest --test-dir "$build" -E "$exclude" -LE "$not_first" -j 12 --output-on-failure
      ctest --test-dir "$build" -E "$exclude" -L "^gpu$" -j 12 --output-on-failure
    } >"$out/ctest.log" 2>&1
    grep -E "tests passed|tests failed|\*\*\*|Failed|Timeout" "$out/ctest.log" | tail -30
    ;;
  grading)
    ctest --test-dir "$build" -L gpu -R "grade|grading|sandbox|autograder" --output-on-failure 2>&1 | tail -30
    ;;
  bench)
    python3 bench/check_bench.py --build "$build" --out "$out/bench.json" 2>&1 | tail -12
    ;;
  differential)
    "$build/cudalings" check --all --solutions --emulate --json --state-dir "$state" >"$out/emu-solutions.json" 2>/dev/null
    "$build/cudalings" check --all --emulate --json --state-dir /tmp/gpu-session-skel >"$out/emu-skeletons.json" 2>/dev/null
    python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
rows, same = [], 0
for kind in ("solutions", "skeletons"):
    # The GPU's verdicts: one file for all lessons, or one per lesson (solutions-NN.json, ...).
    files = glob.glob(f"{out}/{kind}.json") or sorted(glob.glob(f"{out}/{kind}-[0-9]*.json"))
    gpu = {r["step"]: r["verdict"] for f in files for r in json.load(open(f))["results"]}
    emu = {r["step"]: r["verdict"] for r in json.load(open(f"{out}/emu-{kind}.json"))["results"]}
    for step in gpu:
        g, e = gpu[step], emu.get(step, "?")
        ok = (g == "PASS") == (e == "PASS")
        same += ok
        rows.append(f"{kind:9} {step:45} gpu {g:13} emulated {e:13} {'same' if ok else 'DIFFERENT'}")
print("\n".join(r for r in rows if "DIFFERENT" in r))
print(f"{same} of {len(rows)} steps: the same pass/fail on the GPU and under emulation")
PY
    ;;
  corpus)
    python3 emulator/tests/differential.py --build "$build" --out "$out/corpus.json" \
      >"$out/corpus.log" 2>&1
    grep -E "^XX|files, " "$out/corpus.log"
    ;;
  inprocess)
    if [ "${INPROCESS_PART:-solutions}" = solutions ]; then
      for lesson in ${LESSONS:-all}; do
        name=inprocess-solutions; what=(--all)
        [ "$lesson" = all ] || { name=inprocess-solutions-$lesson; what=("$lesson"); }
        "$build/cudalings" check "${what[@]}" --solutions --json --in-process \
          --state-dir "$state-inprocess" >"$out/$name.json" 2>"$out/$name.err"
        summarize "$out/$name.json"
      done
    else
      CUDALINGS_IN_PROCESS=1 ctest --test-dir "$build" -R "every bad submission fixture" -V \
        >"$out/inprocess-fixtures.log" 2>&1
      grep -E "fixture batch|^  |tests passed|tests failed" "$out/inprocess-fixtures.log" | cut -c1-300
    fi
    ;;
  buffers)
    # Same code timed against itself with the reference on the learner's buffers (the default)
    # and on outputs of its own (CUDALINGS_TIMING_BUFFERS=separate), alternated, twice: lesson
    # 06's atomics, whose time depends on where the bins live, and lesson 01 as the control.
    for round in 1 2; do
      for mode in same separate; do
        for s in 06_histogram/01_global_atomics 06_histogram/02_warp_aggregated 01_vector_add/03_float4; do
          f="$out/buffers-$mode-$round-${s%%/*}-${s##*/}.json"
          if [ $mode = separate ]; then export CUDALINGS_TIMING_BUFFERS=separate; else unset CUDALINGS_TIMING_BUFFERS; fi
          "$build/cudalings" check "$s" --solutions --json --no-hazards --state-dir "$state-buffers" >"$f" 2>/dev/null
          python3 - "$f" "$mode $round" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    cells = " ".join(f'[{t.get("column") or t["size"]}] {t["learner"]["median_us"]:.1f}/{t.get("reference", {}).get("median_us", 0):.1f} us x{t.get("speed_vs_reference") or 0:.3f}' for t in r.get("timings", []))
    print(sys.argv[2], r["step"], r["verdict"], cells)
PY
        done
      done
    done
    unset CUDALINGS_TIMING_BUFFERS
    ;;
  *) echo "usage: $0 build|solutions|skeletons|fixtures|ctest|grading|bench|differential|corpus|inprocess|buffers ..."; exit 2 ;;
  esac
  echo "== $phase: $(( $(date +%s) - t0 )) s"
done
