#!/usr/bin/env bash
# One full pass on a GPU machine: build, the whole test suite, the check of every solution
# step, the skeletons, and the checker benchmark. Logs go to $OUT (or ./gpu-session).
#   bench/gpu_session.sh [preset]      preset: gpu (default, native arch) or default
set -uo pipefail
cd "$(dirname "$0")/.."
preset="${1:-gpu}"
out="${OUT:-gpu-session}"
mkdir -p "$out"
build=$( [ "$preset" = default ] && echo build || echo "build-$preset" )
export PATH=/usr/local/cuda/bin:$PATH NO_COLOR=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$out/gpu.txt" 2>&1

t0=$(date +%s)
cmake --preset "$preset" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build --preset "$preset" --parallel 16 >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"

ctest --preset "$preset" 2>&1 | tee "$out/ctest.log" | tail -15

for step in $(python3 -c "import json;c=json.load(open('course.json'));print(' '.join(l['id']+'/'+s['id'] for l in c['lessons'] for s in l['steps']))"); do
  "$build/cudalings" check "$step" --solutions --state-dir /tmp/gpu-session-state 2>&1
  echo
done | tee "$out/solutions.txt" | tail -60
"$build/cudalings" check --all --no-time --state-dir /tmp/gpu-session-skel >"$out/skeletons.txt" 2>&1
tail -3 "$out/skeletons.txt"
python3 bench/check_bench.py --build "$build" --out "$out/bench.json" 2>&1 | tail -8
