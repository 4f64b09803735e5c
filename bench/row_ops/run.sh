#!/usr/bin/env bash
# Lesson 12 on a GPU: every solution checked and timed (2^28 floats as rows of 128, 1024 and
# 32768), each step's median time and share of the copy bandwidth the checker measures in the
# same run, and the issue's goals (>= 90% of copy) marked. One call of a few minutes.
#   BUILD   the build directory with the GPU checker (default build-gpu; built here when absent,
#           with the preset gpu, as bench/gpu_session.sh does)
#   OUT     where the JSON and the log go (default ./row-ops-bench)
#   SWEEP   1 (default): then bench/row_ops/sweep.sh, the knob variants of steps 4 and 5 timed
#           beside a copy in one run (about a minute, table last, in $OUT/sweep); 0: skip it
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-row-ops-bench}"
build="${BUILD:-build-gpu}"
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH NO_COLOR=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
if [ ! -x "$build/cudalings" ]; then
  cmake --preset gpu >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
  cmake --build --preset gpu --parallel 16 >"$out/build.log" 2>&1 ||
    { grep -E "error" "$out/build.log" | head -30; exit 1; }
fi
"$build/cudalings" check 12 --solutions --json --state-dir /tmp/row-ops-state \
  >"$out/row_ops.json" 2>"$out/row_ops.err"
echo "check exited $?"
python3 - "$out/row_ops.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
goals = {"03_warp_per_row": ["width 128", "width 1024"],
         "04_block_per_row": ["width 1024", "width 32768"],
         "05_layernorm_welford": ["width 128", "width 1024", "width 32768"],
         "06_residual_rmsnorm": ["width 128", "width 1024", "width 32768"]}
for r in j["results"]:
    step = r["step"].split("/")[-1]
    line = f'{r["step"]:36} {r["verdict"]:10}'
    for t in r.get("timings", []):
        col = t.get("column") or t["size"]
        pct = t["learner"].get("percent_of_copy", 0)
        mark = (" ok" if pct >= 90 else " BELOW 90%") if col in goals.get(step, []) else ""
        line += f'  [{col}] {t["learner"]["median_us"]:.1f} us {pct:.1f}%{mark}'
    if r["verdict"] != "PASS" and r.get("reason"):
        line += "  " + r["reason"][:150]
    print(line)
for st in j.get("staircases", []):
    print(f'== {st["lesson"]} staircase (copy {st["copy_gbps"]:.0f} GB/s)')
    for row in st["rows"]:
        cells = "  ".join(f'[{c["column"] or c["size"]}] {c["median_us"]:.1f} us {c["percent_of_copy"]:.1f}%'
                          for c in row["cells"])
        print(f'  {row["label"][:40]:40} {cells}')
PY
if [ "${SWEEP:-1}" = 1 ]; then
  OUT="$out/sweep" bench/row_ops/sweep.sh 2>&1 | tail -14
fi
