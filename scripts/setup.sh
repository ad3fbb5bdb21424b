#!/usr/bin/env bash
# Installs what Loupe needs from Debian's packages (only what is missing), then configures and
# builds it in ./build. Used by demo.sh and test.sh; safe to run again (incremental).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ ccache clang-format  # clang-format: the format check (scripts/check-format.sh)
  gcc libc6-dev        # cc links exported shared libraries; BuildTest compiles a C program
  llvm-19-dev          # backend: LLVM 19 (shared libLLVM)
  libedit-dev          # REPL line editing
  nlohmann-json3-dev   # graph JSON
  libzip-dev           # .npz run inputs and expected outputs (core/Npz.cpp)
  libgtest-dev         # unit tests
  libonnx-dev libprotobuf-dev  # ONNX import (frontend/)
  libxgboost-dev       # :tune: the cost model (gradient-boosted trees, as AutoTVM)
  libonnx-testdata     # ONNX's backend test data: the onnx/conformance test
  libgraphviz-dev pkg-config  # DotTest parses :dot's output with Graphviz's cgraph
  libimgui-dev libglfw3-dev libgl-dev libstb-dev  # loupe-gui (Dear ImGui, GLFW, OpenGL 3, PNGs)
  fonts-dejavu-core    # loupe-gui's font (ImGui's own lacks "…" and arrows)
  xvfb xauth libgl1-mesa-dri  # the GUI tests render headless (Xvfb, Mesa's software GL)
  python3-dev pybind11-dev python3-numpy python3-pytest  # the Python package (python/) and its tests
  python3-nbclient python3-nbformat python3-ipykernel  # the notebooks (examples/notebooks) run headless
  chromium             # reports (:report) are opened headless by the tests
)

# LOUPE_BENCH=1: the benchmarks of tests/bench too (never run by ctest), with their peers.
BENCH=${LOUPE_BENCH:-0}
if [ "$BENCH" = 1 ]; then
  PACKAGES+=(
    libbenchmark-dev     # Google Benchmark
    libdnnl-dev          # oneDNN, the peer loupe_kernel_bench compares kernels with
    libxnnpack-dev libpthreadpool-dev  # XNNPACK, the second peer
  )
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD_TYPE=${LOUPE_BUILD_TYPE:-RelWithDebInfo}
if [ ! -f build/build.ninja ]; then
  # Debug information as line tables (-g1): stack traces, perf and a debugger's stepping keep
  # their lines, and the build takes a third less time than with full -g (5.3 s against 3.5 s
  # for core/ops/Nn.cpp on a Zen 5 core). LOUPE_BUILD_TYPE=Debug, or this variable, to change it.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DLOUPE_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${LOUPE_RELWITHDEBINFO_FLAGS:--O2 -g1 -DNDEBUG}" >/dev/null
fi
if [ "$BENCH" = 1 ]; then
  cmake -S . -B build -DLOUPE_BENCH=ON >/dev/null
fi
cmake --build build -j "$(nproc)"
