#!/usr/bin/env bash
# Lesson 10's tuning bench on a GPU machine: builds every step's reference solution as a shared
# object and the bench (capstone variants, cuBLAS fp32 and TF32), runs it once (a few minutes),
# and leaves the log, whose last lines are the summary table, in $OUT (default ./gemm-sweep),
# with ptxas's register and shared-memory counts (ptxas.txt: the bench; ptxas-STEP.txt: each step).
#   bench/gemm_sweep/run.sh                 ARCH=sm_90 by default (ARCH=sm_80 on an A100)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-gemm-sweep}"
arch="${ARCH:-sm_90}"
build="$out/build"
mkdir -p "$build"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv >"$out/gpu.txt" || true
libs=()
for src in solutions/10_gemm/0*.cu; do
  step="$(basename "$src" .cu)"
  nvcc -O3 -std=c++17 -arch="$arch" -shared -Xcompiler -fPIC -Ilessons/10_gemm -Xptxas -v "$src" \
    -o "$build/$step.so" 2>"$out/ptxas-$step.txt" &
  libs+=("$build/$step.so")
done
nvcc -O3 -std=c++17 -arch="$arch" -Ilessons/10_gemm -Xptxas -v bench/gemm_sweep/gemm_sweep.cu \
  -o "$build/gemm_sweep" -lcublas -ldl 2>"$out/ptxas.txt"
wait
"$build/gemm_sweep" "${libs[@]}" 2>&1 | tee "$out/gemm_sweep.txt"
