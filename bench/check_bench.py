#!/usr/bin/env python3
"""Measures the checker itself on a GPU machine (figures for the issue's "done when" lines):

  1. the step-3 reference of lesson 01 at 2^28: % of this GPU's copy bandwidth, and the
     medians of 3 repeated checks (must agree within 2%);
  2. time to verdict for one step: unchanged file (cached build) and after an edit, through the
     judge split (the default) and in the runner's own process (--in-process), alternated;
  3. the reference time the checker reports against an independent standalone measurement
     (bench/standalone_time: its own event timing and L2 flush, no checker code).

Usage: bench/check_bench.py --build build [--out results.json]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check(build, step, *extra, root=ROOT, state=None):
    cmd = [os.path.join(build, "cudalings"), "--root", root, "check", step, "--json", *extra]
    env = dict(os.environ, NO_COLOR="1")
    if state:
        env["CUDALINGS_STATE_DIR"] = state
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - start
    try:
        return json.loads(p.stdout)["results"][0], wall
    except (ValueError, KeyError, IndexError):
        sys.exit(f"check failed (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    state = tempfile.mkdtemp(prefix="cudalings_bench_state_")
    out = {}

    # 1. Three checks of the float4 reference: bandwidth and repeatability.
    medians, refs = [], []
    for i in range(3):
        r, _ = check(build, "01_vector_add/03_float4", "--solutions", state=state)
        t = r["timing"]
        assert r["verdict"] == "PASS", r
        medians.append(t["learner"]["median_us"])
        refs.append(t["reference"]["median_us"])
        out.setdefault("copy_gbps", t["copy_gbps"])
        out.setdefault("percent_of_copy", []).append(t["learner"]["percent_of_copy"])
    spread = (max(medians) - min(medians)) / min(medians)
    out["medians_us"] = medians
    out["reference_medians_us"] = refs
    out["repeat_spread"] = spread

    # 2. Time to verdict: unchanged (cached compile) and after an edit (fresh compile).
    course = tempfile.mkdtemp(prefix="cudalings_bench_course_")
    shutil.copy(os.path.join(ROOT, "course.json"), course)
    shutil.copytree(os.path.join(ROOT, "lessons"), os.path.join(course, "lessons"))
    shutil.copytree(os.path.join(ROOT, "solutions"), os.path.join(course, "solutions"))
    os.symlink(os.path.join(ROOT, "checks"), os.path.join(course, "checks"))  # the lessons' checks
    step_file = os.path.join(course, "lessons/01_vector_add/03_float4.cu")
    shutil.copy(os.path.join(ROOT, "solutions/01_vector_add/03_float4.cu"), step_file)
    check(build, "01_vector_add/03_float4", root=course, state=state)  # warm the cache
    modes = {"split": [], "in-process": ["--in-process"]}
    unchanged = {m: [] for m in modes}
    edited = {m: [] for m in modes}
    profiles = {m: [] for m in modes}
    profiles_edited = {m: [] for m in modes}
    for i in range(3):
        for mode, flags in modes.items():
            r, wall = check(build, "01_vector_add/03_float4", *flags, root=course, state=state)
            assert r["compile"]["cached"], r
            assert r["verdict"] == "PASS", r
            unchanged[mode].append(wall)
            profiles[mode].append(r.get("profile_ms", {}))
            with open(step_file, "a") as f:
                f.write(f"// edit {mode} {i} {time.time()}\n")
            r, wall = check(build, "01_vector_add/03_float4", *flags, root=course, state=state)
            assert not r["compile"]["cached"], r
            assert r["verdict"] == "PASS", r
            edited[mode].append(wall)
            profiles_edited[mode].append(dict(r.get("profile_ms", {}),
                                              compile=1000 * r["compile"]["seconds"]))
    out["profile_ms_unchanged"] = profiles
    out["profile_ms_edited"] = profiles_edited
    out["time_to_verdict_unchanged_s"] = unchanged
    out["time_to_verdict_edited_s"] = edited

    # 3. Independent measurement of the same reference.
    standalone = os.path.join(build, "bench", "standalone_time")
    if os.path.exists(standalone):
        # The reference built as the checker builds it (references are built on demand, in
        # the checker's cache): nvcc, a shared object for this GPU.
        so = os.path.join(tempfile.mkdtemp(prefix="cudalings_bench_ref_"), "03_float4.so")
        subprocess.run(["nvcc", "-std=c++17", "-O3", "-lineinfo", "-shared", "-Xcompiler=-fPIC",
                        "-cudart=shared", "-arch=native", "-I", os.path.join(ROOT, "lessons/01_vector_add"),
                        "-I", os.path.join(ROOT, "lessons/common"), "-o", so,
                        os.path.join(ROOT, "solutions/01_vector_add/03_float4.cu")], check=True)
        p = subprocess.run([standalone, so, "vector_add"], capture_output=True, text=True)
        if p.returncode == 0:
            out["standalone_median_us"] = float(p.stdout.split()[0])
            out["checker_vs_standalone"] = refs[-1] / out["standalone_median_us"] - 1

    print(json.dumps(out, indent=2))
    print()
    print(f"step-3 reference: {medians[-1]:.1f} µs, {out['percent_of_copy'][-1]:.1f}% of "
          f"{out['copy_gbps'] / 1000:.2f} TB/s copy")
    print(f"3 repeated checks: {', '.join(f'{m:.1f}' for m in medians)} µs, spread {100 * spread:.2f}%")
    for mode in modes:
        u, e = unchanged[mode], edited[mode]
        print(f"time to verdict, {mode}: unchanged {min(u):.2f}-{max(u):.2f} s, "
              f"after an edit {min(e):.2f}-{max(e):.2f} s")
        for label, ps in (("unchanged", profiles[mode]), ("edited", profiles_edited[mode])):
            for p in ps:
                if p:
                    print(f"  {label}, where the time went (ms): " +
                          ", ".join(f"{k} {v:.0f}" for k, v in p.items()))
    if "standalone_median_us" in out:
        print(f"reference in the checker {refs[-1]:.1f} µs vs standalone "
              f"{out['standalone_median_us']:.1f} µs ({100 * out['checker_vs_standalone']:+.2f}%)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=2)
    shutil.rmtree(course, ignore_errors=True)
    shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
