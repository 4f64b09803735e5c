#!/usr/bin/env bash
# Installs what building and running cudalings needs on a fresh Ubuntu 22.04 or 24.04 (the
# images of Gradescope and of GitHub's runners), as root: a compiler, CMake 3.25 or later,
# Ninja, CLI11, nlohmann-json, bubblewrap (the grading sandbox), python3, and NVIDIA's CUDA
# toolkit from NVIDIA's own apt repository (the toolkit only: no driver, no GPU needed to
# build, and grading without a GPU runs on cudalings' CPU emulator).
#
#   CUDA_PACKAGE   the toolkit package (default cuda-toolkit-13-0)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo

$sudo apt-get update -qq
$sudo apt-get install -y -qq g++ ninja-build libcli11-dev nlohmann-json3-dev bubblewrap libseccomp-dev \
  python3 python3-pip wget ca-certificates cmake >/dev/null

# CMake 3.25 or later (Ubuntu 22.04 ships 3.22): from PyPI when the system's is older.
if ! cmake -P /dev/stdin <<<'if(CMAKE_VERSION VERSION_LESS 3.25)
  message(FATAL_ERROR "old")
endif()' 2>/dev/null; then
  $sudo python3 -m pip install --quiet 'cmake>=3.25'
  hash -r
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  . /etc/os-release
  repo="ubuntu${VERSION_ID//./}"
  keyring=$(mktemp -d)/cuda-keyring.deb
  wget -q -O "$keyring" \
    "https://developer.download.nvidia.com/compute/cuda/repos/${repo}/x86_64/cuda-keyring_1.1-1_all.deb"
  $sudo dpkg -i "$keyring" >/dev/null
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${CUDA_PACKAGE:-cuda-toolkit-13-0}" >/dev/null
fi
echo "install-ubuntu: $(cmake --version | head -1), $(/usr/local/cuda/bin/nvcc --version | tail -1), $(bwrap --version)"
