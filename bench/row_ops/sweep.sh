#!/usr/bin/env bash
# Lesson 12's tuning sweep on a GPU machine (about a minute): builds the solutions of steps 4 and
# 5 as shared objects with other values of their knobs (the ROW_OPS_* macros at the top of each
# file; the first variant of each is the file as it ships), times each on the cells the issue
# sets goals for, beside a 1 GiB device-to-device copy in the same run, and prints a table last.
# If a default misses 90% of copy where a variant hits, change that knob's default in the solution
# (and the skeleton, which mirrors it).
#   bench/row_ops/sweep.sh         OUT (default ./row-ops-sweep), ARCH (default sm_90)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-row-ops-sweep}"
arch="${ARCH:-sm_90}"
build="$out/build"
mkdir -p "$build"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv || true
s4=solutions/12_row_ops/04_block_per_row.cu
s5=solutions/12_row_ops/05_layernorm_welford.cu
variants=(
  "softmax-default|$s4|"
  "softmax-narrow256|$s4|-DROW_OPS_NARROW_THREADS=256"
  "softmax-narrow64|$s4|-DROW_OPS_NARROW_THREADS=64"
  "softmax-wide512|$s4|-DROW_OPS_WIDE_THREADS=512"
  "softmax-persistent|$s4|-DROW_OPS_PERSISTENT=1"
  "layernorm-default|$s5|"
  "layernorm-samecount0|$s5|-DROW_OPS_SAME_COUNT=0"
  "layernorm-wide512|$s5|-DROW_OPS_WIDE_THREADS=512"
  "layernorm-persistent|$s5|-DROW_OPS_PERSISTENT=1"
)
args=()
for v in "${variants[@]}"; do
  IFS='|' read -r label src flags <<<"$v"
  # shellcheck disable=SC2086
  nvcc -O3 -std=c++17 -arch="$arch" -shared -Xcompiler -fPIC -Ilessons/12_row_ops $flags "$src" \
    -o "$build/$label.so" -Xptxas -v 2>"$build/$label.ptxas.txt" &
  args+=("$label=$build/$label.so")
done
nvcc -O3 -std=c++17 -arch="$arch" bench/row_ops/sweep.cu -o "$build/sweep" -ldl
wait
"$build/sweep" "${args[@]}" 2>&1 | tee "$out/sweep.txt"
