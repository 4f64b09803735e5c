#!/usr/bin/env bash
# A capstone's variant sweep on a GPU machine: builds its variants (SWEEP/variants.py) as shared
# objects and its bench, runs it, and leaves the log and ptxas's register counts in $OUT
# (default ./SWEEP).
#   bench/sweep/run.sh compact_sweep 07_compact     lesson 07 step 4 against CUB DeviceSelect::If
#   bench/sweep/run.sh sort_sweep 13_sort           lesson 13 step 4 against CUB SortKeys
#   ARCH=sm_90 by default; ROUNDS: samples per cell
set -euo pipefail
cd "$(dirname "$0")/../.."
sweep="$1" lesson="$2"
out="${OUT:-$sweep}"
arch="${ARCH:-sm_90}"
build="$out/build"
mkdir -p "$build/src"
export PATH=/usr/local/cuda/bin:$PATH
names=$(python3 "bench/$sweep/variants.py" write "$build/src")
args=()
for v in $names; do
  nvcc -O3 -std=c++17 -arch="$arch" -shared -Xcompiler -fPIC -I"lessons/$lesson" -Xptxas -v \
    "$build/src/$v.cu" -o "$build/$v.so" 2>"$build/ptxas-$v.txt" &
  args+=("$v=$build/$v.so")
done
nvcc -O3 -std=c++17 -arch="$arch" "bench/$sweep/$sweep.cu" -o "$build/$sweep" -ldl
wait
for v in $names; do
  echo "$v $(grep -o 'Used [0-9]* registers' "$build/ptxas-$v.txt" | sort -u | tr '\n' ' ')"
done >"$out/ptxas.txt"
"$build/$sweep" "${args[@]}" 2>&1 | tee "$out/$sweep.txt"
