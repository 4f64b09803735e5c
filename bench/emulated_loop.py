#!/usr/bin/env python3
"""The no-GPU learner's loop, measured step by step (docs/methodology.md, "The loop without a GPU").

    bench/emulated_loop.py BUILD_DIR [--steps 01-09] [--out FILE.json] [--watch-flags]

For every step of the lessons asked for, on this machine (run it idle, and compare two trees only
from runs back to back on the same machine), with BUILD_DIR's `cudalings` on the course that
BUILD_DIR was configured from:

  nvcc_c      `nvcc -c -arch=sm_90` of the skeleton, the lesson's flags: the goal's yardstick
  compile     the check's own compile (report "compile.seconds"; without a GPU it includes the
              emulator's build where that runs beside nvcc)
  first_fail  the skeleton's check, from the end of its compile to its verdict (with
              --watch-flags, as `watch` runs it: --first-failure)
  recheck     the same check again with nothing changed (wall seconds)
  solution    the reference solution's whole check (wall seconds), and its compile

Each check gets a state folder of its own (nothing cached but the lesson's checks, which are
built once per lesson before anything is timed). Prints a Markdown table and writes the figures
as JSON.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time


def course_root(build):
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
                return line.split("=", 1)[1].strip()
    raise SystemExit(f"{build}: not a configured build folder")


def steps_of(root, first, last):
    out = []
    for lesson in sorted(os.listdir(os.path.join(root, "lessons"))):
        m = re.match(r"(\d\d)_", lesson)
        if not m or not (first <= int(m.group(1)) <= last):
            continue
        for f in sorted(os.listdir(os.path.join(root, "lessons", lesson))):
            if re.match(r"\d\d_.*\.cu$", f):
                out.append(f"{lesson}/{f[:-3]}")
    return out


def check(build, root, step, extra, state):
    env = dict(os.environ, CUDALINGS_STATE_DIR=state, NO_COLOR="1")
    start = time.monotonic()
    r = subprocess.run([os.path.join(build, "cudalings"), "--root", root, "check", step,
                        "--emulate", "--json"] + extra,
                       capture_output=True, text=True, env=env, timeout=900)
    wall = time.monotonic() - start
    try:
        result = json.loads(r.stdout)["results"][0]
    except (ValueError, KeyError, IndexError):
        return {"wall": wall, "verdict": "?", "compile": 0.0}
    return {"wall": wall, "verdict": result["verdict"],
            "compile": result["compile"]["seconds"], "unchanged": result.get("unchanged", False)}


def nvcc_c(root, step):
    lesson = step.split("/")[0]
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        subprocess.run(["nvcc", "-std=c++17", "-O3", "-lineinfo", "-c", "-Xcompiler=-fPIC",
                        "-cudart=shared", "-DCCCL_DISABLE_NVTX", "-arch=sm_90",
                        f"-I{root}/lessons/{lesson}", f"-I{root}/lessons/common",
                        "-o", os.path.join(tmp, "x.o"), f"{root}/lessons/{step}.cu"],
                       capture_output=True, timeout=600)
        return time.monotonic() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--steps", default="01-09")
    p.add_argument("--out")
    p.add_argument("--watch-flags", action="store_true",
                   help="check skeletons as watch does (--first-failure)")
    a = p.parse_args()
    build = os.path.abspath(a.build)
    root = course_root(build)
    first, last = (int(x) for x in a.steps.split("-"))
    steps = steps_of(root, first, last)
    flags = ["--first-failure"] if a.watch_flags else []
    work = tempfile.mkdtemp(prefix="emulated_loop_")
    # The lessons' checks, built for the emulator once (cached in the build folder).
    for lesson in sorted({s.split("/")[0] for s in steps}):
        check(build, root, next(s for s in steps if s.startswith(lesson)), [],
              os.path.join(work, "warm-" + lesson))
    rows = []
    for step in steps:
        state = os.path.join(work, step.replace("/", "-"))
        skeleton = check(build, root, step, flags, state)
        again = check(build, root, step, flags, state)
        solution = check(build, root, step, ["--solutions"], state + "-solution")
        row = {"step": step, "nvcc_c": nvcc_c(root, step),
               "compile": skeleton["compile"], "skeleton_verdict": skeleton["verdict"],
               "first_fail": skeleton["wall"] - skeleton["compile"],
               "recheck": again["wall"], "recheck_unchanged": again.get("unchanged", False),
               "solution": solution["wall"], "solution_compile": solution["compile"],
               "solution_verdict": solution["verdict"]}
        rows.append(row)
        print("| {step} | {nvcc_c:.1f} | {compile:.1f} | {first_fail:.1f} ({skeleton_verdict}) "
              "| {recheck:.2f} | {solution:.1f} ({solution_verdict}) |".format(**row), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"build": build, "root": root, "flags": flags, "load": os.getloadavg(),
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
