#!/usr/bin/env bash
# A full pass on a GPU machine, in two phases that each fit a 10-minute slot.
#   bench/gpu_session.sh build      configure + build (preset gpu: this GPU's architecture)
#   bench/gpu_session.sh course     GPU tests for solutions and skeletons, every solution
#                                   checked with its staircase, the checker benchmark
#   bench/gpu_session.sh suite      the adversarial fixtures (twice, in batches), the CPU tests,
#                                   and the emulator against the GPU on every step
#   bench/gpu_session.sh differential   only the emulator against the GPU on every step
# Logs go to $OUT (or ./gpu-session); BUILD names the build directory (default build-gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-session}"
mkdir -p "$out"
build="${BUILD:-build-gpu}"
export PATH=/usr/local/cuda/bin:$PATH NO_COLOR=1
state=/tmp/gpu-session-state

case "${1:-}" in
build)
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$out/gpu.txt" 2>&1
  t0=$(date +%s)
  cmake --preset gpu >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
  cmake --build --preset gpu --parallel 16 >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
  echo "build: $(( $(date +%s) - t0 )) s"
  ;;
course)
  ctest --preset gpu -L gpu -E "fixture" 2>&1 | tee "$out/ctest-gpu-course.log" | tail -12
  "$build/cudalings" check --all --solutions --state-dir "$state" >"$out/solutions.txt" 2>&1
  grep -E "^[0-9]+ passed|staircase|^  [0-9a-z_:]" "$out/solutions.txt" | grep -vE "^  (compile|gpu|cases|floor|ref|time)" | tail -60
  "$build/cudalings" check --all --no-time --state-dir /tmp/gpu-session-skel >"$out/skeletons.txt" 2>&1
  grep -E "^(PASS|WRONG|CRASH|TIMEOUT|MEMORY_ERROR|SKIPPED|INTERNAL_ERROR|COMPILE_ERROR)" "$out/skeletons.txt" | sort | uniq -c
  tail -1 "$out/skeletons.txt"
  python3 bench/check_bench.py --build "$build" --out "$out/bench.json" 2>&1 | tail -5
  ;;
suite)
  ctest --preset gpu -R "fixture" --output-on-failure 2>&1 | tee "$out/ctest-fixtures.log" | tail -25
  ctest --preset gpu -L cpu -j 8 2>&1 | tee "$out/ctest-cpu.log" | tail -6
  exec bash bench/gpu_session.sh differential
  ;;
differential)
  # The emulator against the GPU on every step: the same pass/fail (the differential test).
  "$build/cudalings" check --all --solutions --emulate --json --state-dir "$state" >"$out/emu-solutions.json" 2>/dev/null
  "$build/cudalings" check --all --emulate --json --state-dir /tmp/gpu-session-skel >"$out/emu-skeletons.json" 2>/dev/null
  "$build/cudalings" check --all --solutions --no-time --json --state-dir "$state" >"$out/gpu-solutions.json" 2>/dev/null
  "$build/cudalings" check --all --no-time --json --state-dir /tmp/gpu-session-skel >"$out/gpu-skeletons.json" 2>/dev/null
  python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
rows, same = [], 0
for kind in ("solutions", "skeletons"):
    gpu = {r["step"]: r["verdict"] for r in json.load(open(f"{out}/gpu-{kind}.json"))["results"]}
    emu = {r["step"]: r["verdict"] for r in json.load(open(f"{out}/emu-{kind}.json"))["results"]}
    for step in gpu:
        g, e = gpu[step], emu.get(step, "?")
        ok = (g == "PASS") == (e == "PASS")
        same += ok
        rows.append(f"{kind:9} {step:45} gpu {g:13} emulated {e:13} {'same' if ok else 'DIFFERENT'}")
print("\n".join(rows))
print(f"{same} of {len(rows)} steps: the same pass/fail on the GPU and under emulation")
PY
  ;;
*) echo "usage: $0 build|course|suite"; exit 2 ;;
esac
