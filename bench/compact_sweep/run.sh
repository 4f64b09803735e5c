#!/usr/bin/env bash
# Lesson 07 step 4's tuning bench on a GPU machine: builds the variants (variants.py) and the
# bench, runs it, and leaves the log in $OUT (default ./compact-sweep).
#   bench/compact_sweep/run.sh        ARCH=sm_90 by default; ROUNDS=15 samples per cell
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-compact-sweep}"
arch="${ARCH:-sm_90}"
build="$out/build"
mkdir -p "$build/src"
export PATH=/usr/local/cuda/bin:$PATH
names=$(python3 bench/compact_sweep/variants.py write "$build/src")
args=()
for v in $names; do
  nvcc -O3 -std=c++17 -arch="$arch" -shared -Xcompiler -fPIC -Ilessons/07_compact -Xptxas -v \
    "$build/src/$v.cu" -o "$build/$v.so" 2>"$build/ptxas-$v.txt" &
  args+=("$v=$build/$v.so")
done
nvcc -O3 -std=c++17 -arch="$arch" bench/compact_sweep/compact_sweep.cu -o "$build/compact_sweep" -ldl
wait
grep -h "registers\|spill" "$build"/ptxas-*.txt | sort | uniq -c | head -40 >"$out/ptxas.txt" || true
"$build/compact_sweep" "${args[@]}" 2>&1 | tee "$out/compact_sweep.txt"
