#!/usr/bin/env bash
# Lesson 13 step 4's tuning bench on a GPU machine: builds the variants (variants.py) and the
# bench, runs it, and leaves the log in $OUT (default ./sort-sweep).
#   bench/sort_sweep/run.sh        ARCH=sm_90 by default; ROUNDS=11 samples per cell
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-sort-sweep}"
arch="${ARCH:-sm_90}"
build="$out/build"
mkdir -p "$build/src"
export PATH=/usr/local/cuda/bin:$PATH
names=$(python3 bench/sort_sweep/variants.py write "$build/src")
args=()
for v in $names; do
  nvcc -O3 -std=c++17 -arch="$arch" -shared -Xcompiler -fPIC -Ilessons/13_sort -Xptxas -v \
    "$build/src/$v.cu" -o "$build/$v.so" 2>"$build/ptxas-$v.txt" &
  args+=("$v=$build/$v.so")
done
nvcc -O3 -std=c++17 -arch="$arch" bench/sort_sweep/sort_sweep.cu -o "$build/sort_sweep" -ldl
wait
for v in $names; do
  echo "$v $(grep -A2 onesweep_pass "$build/ptxas-$v.txt" | grep -o 'Used [0-9]* registers')"
done >"$out/ptxas.txt"
"$build/sort_sweep" "${args[@]}" 2>&1 | tee "$out/sort_sweep.txt"
