#!/usr/bin/env bash
# The learner's first hour on a GPU machine, measured (for the lead's GPU session):
#   tests/flow/gpu_first_hour.sh [OUT]
# From a fresh clone of this checkout: the first `./cudalings check` (CPU and wall time of the
# build and the verdict), an unchanged re-check, doctor (the real driver and GPU through
# libcuda), a whole lesson (one line per step, references built on demand for this GPU, the
# staircase; lesson 01 solved by copying its reference files), the HTML report, `sass` (SASS with cuobjdump), --sanitize, and Ctrl-C during a
# timed check (no process left). Everything goes to OUT (default ./first-hour-gpu).
set -uo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$(realpath -m "${1:-first-hour-gpu}")"
mkdir -p "$out"
clone="$(mktemp -d)/course"
git clone -q "$src" "$clone"
cd "$clone"
t() { /usr/bin/time -f "%e s wall, %U s user, %S s sys" "$@"; }
{
  echo "== first run: ./cudalings check 01_vector_add/01_one_thread_per_element"
  t ./cudalings check 01_vector_add/01_one_thread_per_element
  echo "== unchanged re-check (three times)"
  for i in 1 2 3; do t ./cudalings check 01_vector_add/01_one_thread_per_element >/dev/null; done
  echo "== doctor"
  ./cudalings doctor
  echo "== the lesson's references against the course's headers: check 01 --solutions"
  t ./cudalings check 01 --solutions
  echo "== sass 01/3 --solution"
  ./cudalings sass 01/3 --solution | head -40
  echo "== --sanitize on a reference"
  ./cudalings check 01/3 --solutions --sanitize --no-time | tail -5
  echo "== report (lesson 01 solved with the reference files, so it has timings and a staircase)"
  cp solutions/01_vector_add/*.cu lessons/01_vector_add/
  t ./cudalings check 01
  ./cudalings report --out "$out/report.html"
  echo "== Ctrl-C during a timed check"
  CUDALINGS_FLOW_MARKER=gpu-first-hour-$$ ./cudalings check 01/3 --solutions &
  pid=$!
  sleep 4
  kill -INT "$pid"
  wait "$pid"
  sleep 1
  left=$(grep -l "gpu-first-hour-$$" /proc/[0-9]*/environ 2>/dev/null | wc -l)
  echo "processes left behind: $left"
} >"$out/first-hour.txt" 2>&1
cp "$clone/build/cudalings-build.log" "$out/" 2>/dev/null
grep -E "^==|wall|left behind" "$out/first-hour.txt"
