#!/usr/bin/env bash
# The README's first command on a fresh Debian 12 machine, measured: CPU time of the first check
# (the checker's build included) and wall time of an unchanged re-check, then a speed gauge: the
# checker's core rebuilt alone (CPU time follows the machine's speed: compare two commits by
# running this script from a worktree of each, back to back).
#
#   sudo bench/fresh_machine.sh [--cmake-deb URL_OF_CMAKE_DEB URL_OF_CMAKE_DATA_DEB]
#
# Makes a Debian 12 root with debootstrap (minbase + cmake, g++, make, libcli11-dev,
# nlohmann-json3-dev, libseccomp-dev, git, time: the README's packages and nothing else, no
# Catch2), binds this machine's CUDA toolkit into it read-only, clones the course's committed
# HEAD there and runs `./cudalings check 01_vector_add/01_one_thread_per_element` with
# /usr/bin/time. With
# --cmake-deb, that CMake (e.g. Ubuntu 22.04's cmake 3.22.1 and cmake-data .debs) is unpacked
# into the root and used instead of Debian's, to test the oldest CMake the README names.
# Needs root and Debian's archive; the root lives in ${FRESH_ROOT:-/var/tmp/cudalings-fresh}.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd -P)"
. "$here/bench/fresh_root.sh"
root="${FRESH_ROOT:-/var/tmp/cudalings-fresh}"
cuda="$(readlink -f "${CUDA_HOME:-/usr/local/cuda}")"
cmake_bin=""
cmake_debs=()

if [ "${1:-}" = "--cmake-deb" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 [--cmake-deb CMAKE_DEB_URL CMAKE_DATA_DEB_URL]" >&2; exit 2; }
  cmake_debs=("$2" "$3")
fi
[ "$(id -u)" = 0 ] || { echo "$0: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
[ -x "$cuda/bin/nvcc" ] || { echo "$0: no CUDA toolkit at $cuda (set CUDA_HOME)" >&2; exit 2; }

fresh_root_make "$root" usr/bin/g++ \
  cmake,g++,make,libcli11-dev,nlohmann-json3-dev,libseccomp-dev,git,time,ca-certificates || exit 1
trap 'fresh_root_cleanup "$root"' EXIT
fresh_root_mount "$root" "$cuda"

if [ ${#cmake_debs[@]} -gt 0 ]; then
  tmp=$(mktemp -d)
  for url in "${cmake_debs[@]}"; do
    curl -fsSL -o "$tmp/$(basename "$url")" "$url"
    dpkg -x "$tmp/$(basename "$url")" "$root/opt/cmake"
  done
  rm -rf "$tmp"
  cmake_bin=/opt/cmake/usr/bin
fi

rm -rf "$root/course"
git clone -q "$here" "$root/course"
chroot "$root" env -i HOME=/root PATH="${cmake_bin:+$cmake_bin:}/usr/local/cuda/bin:/usr/bin:/bin" \
  bash -c '
    cd /course
    echo "course $(git log --oneline -1 | cut -c1-60)"
    echo "$(cmake --version | head -1); $(g++ --version | head -1); $(nvcc --version | tail -2 | head -1)"
    echo "Catch2 packages installed: $(dpkg -l | grep -ci catch2 || true); cores: $(nproc)"
    /usr/bin/time -f "first check: %e s wall, %U s user + %S s sys of CPU (children included)" \
      ./cudalings check 01_vector_add/01_one_thread_per_element >/tmp/first.log 2>&1 || true
    grep -E "^(PASS|WRONG|COMPILE_ERROR|SETUP_ERROR|INTERNAL_ERROR)" /tmp/first.log | head -1
    tail -1 /tmp/first.log
    for i in 1 2 3; do
      /usr/bin/time -f "unchanged re-check: %e s wall" \
        ./cudalings check 01_vector_add/01_one_thread_per_element 2>&1 >/dev/null | tail -1
    done
    # CPU time follows the machine: the core rebuilt alone says how fast it is running now.
    find build -path "*cudalings_core.dir*" -name "*.o" -delete
    /usr/bin/time -f "speed gauge, the core rebuilt: %U s user + %S s sys" \
      cmake --build build --target cudalings_core 2>&1 >/dev/null | tail -1'
