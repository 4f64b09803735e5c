#!/usr/bin/env python3
"""Lines of the course's bad submissions as stored (issue #33's figure: fixtures and the
emulator's corpus together, at most half of what they were):

    bench/fixture_lines.py [--rev REV] [--json]

Counts checks/*/fixtures/*.cu (fixtures) and emulator/tests/submissions/*/*.cu (corpus), in the
working tree or, with --rev, at a commit (git show, so two commits compare without a checkout).
For each set: files, lines, header lines (the leading // block), and how many files are patches
(checker/core/fixtures.h: the body starts with "--- "), with per-lesson lines. Prints a table, or
JSON with --json.
"""
import argparse
import fnmatch
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = [("fixtures", "checks/*/fixtures/*.cu", 1), ("corpus", "emulator/tests/submissions/*/*.cu", 3)]


def files_at(rev):
    """(path, text) of every file of the two sets, at `rev` or in the working tree."""
    if rev:
        names = subprocess.run(["git", "-C", ROOT, "ls-tree", "-r", "--name-only", rev],
                               capture_output=True, text=True, check=True).stdout.split("\n")
    else:
        names = []
        for base, _, files in os.walk(ROOT):
            for f in files:
                names.append(os.path.relpath(os.path.join(base, f), ROOT))
    for name in sorted(names):
        for set_name, pattern, lesson_part in SETS:
            if fnmatch.fnmatchcase(name, pattern) and name.count("/") == pattern.count("/"):
                if rev:
                    data = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{name}"],
                                          capture_output=True, check=True).stdout
                else:
                    with open(os.path.join(ROOT, name), "rb") as f:
                        data = f.read()
                yield set_name, name.split("/")[lesson_part], name, data.decode("latin-1")


def count(rev):
    sets = {name: {"files": 0, "lines": 0, "header": 0, "patches": 0, "patch_lines": 0,
                   "lessons": {}} for name, _, _ in SETS}
    for set_name, lesson, _, text in files_at(rev):
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        header = 0
        while header < len(lines) and lines[header].startswith("//"):
            header += 1
        s = sets[set_name]
        s["files"] += 1
        s["lines"] += len(lines)
        s["header"] += header
        if header < len(lines) and lines[header].startswith("--- "):
            s["patches"] += 1
            s["patch_lines"] += len(lines)
        s["lessons"][lesson] = s["lessons"].get(lesson, 0) + len(lines)
    total = {k: sum(s[k] for s in sets.values())
             for k in ("files", "lines", "header", "patches", "patch_lines")}
    return {"rev": rev or "working tree", "sets": sets, "total": total}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rev", help="count at this commit instead of the working tree")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = count(args.rev)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return 0
    print(f"lines as stored ({result['rev']})\n")
    print("| set | files | lines | header | patches (their lines) |")
    print("|-----|-------|-------|--------|-----------------------|")
    rows = list(result["sets"].items()) + [("together", result["total"])]
    for name, s in rows:
        print(f"| {name} | {s['files']} | {s['lines']:,} | {s['header']:,} | "
              f"{s['patches']} ({s['patch_lines']:,}) |")
    for name, s in result["sets"].items():
        per = ", ".join(f"{lesson} {n:,}" for lesson, n in sorted(s["lessons"].items()))
        print(f"\n{name} by lesson: {per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
