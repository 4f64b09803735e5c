#!/usr/bin/env python3
"""The differential test of the emulator's corpus, on a GPU machine.

Every submission in checks/NN_topic/corpus/*.cu says the verdict the CPU emulator
gives it (`// emulated: VERDICT`, asserted on every machine by the CPU test "the emulator's corpus
of submissions gets its verdicts"). This script checks the same files on the GPU, with the
checker's default options (the hazard pass included), and compares pass/fail: a file the
emulator passes must pass on the GPU, a file it fails must fail there. Files the emulator
declines (`emulated: SKIPPED`) are checked on the GPU too and reported, but not compared.

Usage: emulator/tests/differential.py --build build [--out results.json] [--timing]
         [--only SUBSTRING ...]

Without --timing the checks run with --no-time (pass/fail does not need it; it saves most of the
GPU time). Exit status: 0 when every compared file agrees, 1 otherwise.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def corpus(build, written):
    """The corpus as the checker's one reader of fixtures sees it (`cudalings dev fixtures`):
    each file's header, and its text (a patch applied) written under `written`."""
    p = subprocess.run([os.path.join(build, "cudalings"), "--root", ROOT, "dev", "fixtures",
                        "--json", "--kind", "corpus", "--write", written],
                       capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    listing = json.loads(p.stdout)
    for e in listing["errors"]:
        print(f"{e['path']}: {e['message']}", file=sys.stderr)
    if p.returncode != 0 or listing["errors"]:
        sys.exit(f"cudalings dev fixtures failed (exit {p.returncode}): {p.stderr[:400]}")
    return listing["fixtures"]


def course_with(path, step):
    root = tempfile.mkdtemp(prefix="cudalings_differential_")
    shutil.copy(os.path.join(ROOT, "course.json"), root)
    shutil.copytree(os.path.join(ROOT, "lessons"), os.path.join(root, "lessons"))
    os.symlink(os.path.join(ROOT, "checks"), os.path.join(root, "checks"))
    shutil.copy(path, os.path.join(root, "lessons", step))
    return root


def check(build, root, step, state, extra):
    cmd = [os.path.join(build, "cudalings"), "--root", root, "--state-dir", state, "check",
           step[:-3], "--json", *extra]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    wall = time.monotonic() - start
    try:
        r = json.loads(p.stdout)["results"][0]
        return r["verdict"], r.get("reason", ""), r.get("gpu", ""), wall
    except (ValueError, KeyError, IndexError):
        return "?", (p.stdout + p.stderr)[:400], "", wall


def main():
    written = tempfile.mkdtemp(prefix="cudalings_differential_corpus_")
    try:
        return differential(written)
    finally:
        shutil.rmtree(written, ignore_errors=True)


def differential(written):
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out")
    ap.add_argument("--timing", action="store_true", help="check with timing (default: --no-time)")
    ap.add_argument("--only", nargs="*", default=[], help="only files whose path holds one of these")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    files = sorted(corpus(build, written), key=lambda e: e["path"])
    if args.only:
        files = [e for e in files if any(o in e["path"] for o in args.only)]
    state = tempfile.mkdtemp(prefix="cudalings_differential_state_")
    extra = [] if args.timing else ["--no-time"]
    results, mismatches = [], 0
    for h in files:
        name = os.path.relpath(h["path"], "checks")
        root = course_with(h["file"], h["step"])
        try:
            verdict, reason, gpu, wall = check(build, root, h["step"], state, extra)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        emulated = h["emulated"] or "?"
        compared = emulated != "SKIPPED"
        agree = (verdict == "PASS") == (emulated == "PASS")
        if compared and not agree:
            mismatches += 1
        if gpu and "emulated" in gpu:
            print(f"{name}: this machine has no GPU (the check was emulated): run it on a GPU",
                  file=sys.stderr)
            return 2
        mark = "  " if not compared else ("ok" if agree else "XX")
        print(f"{mark} {name:60s} gpu={verdict:13s} emulated={emulated:13s} {wall:5.1f}s  {reason[:120]}")
        sys.stdout.flush()
        results.append({"file": name, "step": h["step"], "gpu": verdict, "gpu_reason": reason,
                        "emulated": emulated, "compared": compared, "agree": agree,
                        "seconds": wall})
    print(f"\n{len(results)} files, {sum(r['compared'] for r in results)} compared, "
          f"{mismatches} disagree")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"results": results, "mismatches": mismatches}, f, indent=2)
    shutil.rmtree(state, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
