#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu). It
# installs the tools, builds cudalings from the course in /autograder/source/cudalings, and then
# removes the course's solutions: the image needs the instructor's contract (course.json and the
# lesson headers) and the checker, not the reference code (there is no GPU to time it on).
set -euo pipefail
src=/autograder/source
bash "$src/cudalings/docs/grading/install-ubuntu.sh"
export PATH=/usr/local/cuda/bin:$PATH
cmake -S "$src/cudalings" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCUDALINGS_BUILD_TESTS=OFF
cmake --build "$src/build" --target cudalings cudalings-tools cudalings-runner
rm -rf "$src/cudalings/solutions" "$src/cudalings/.git"
# The secret seed, when the zip has one, is readable by root only.
[ -f "$src/secret" ] && chmod 600 "$src/secret"
echo "setup.sh: $("$src/build/cudalings" --help | head -1)"
