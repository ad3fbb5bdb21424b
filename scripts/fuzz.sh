#!/bin/bash
# Fuzzes the graph language's parser, graph JSON, the ONNX importer, tensor files (.npy and
# TensorProto) and the engine (scripts and session files) with libFuzzer, under
# AddressSanitizer and UndefinedBehaviorSanitizer, for SECONDS each (default 60; the hardening
# runs used 1200). Needs clang and libclang-rt-dev (Debian: clang, libclang-rt-14-dev); builds
# in build-fuzz/. A crash is saved in tests/fuzz/corpus/<target>/ — fix it, keep the file, and
# the replay ctests (label fuzz) run it from then on.
#   usage: scripts/fuzz.sh [SECONDS] [TARGET...]   targets: graphlang json onnx tensors engine
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
[ $# -gt 0 ] && targets=("$@") || targets=(graphlang json onnx tensors engine)
CXX=${CXX:-clang++} CC=${CC:-clang} cmake -S . -B build-fuzz -G Ninja -DLOUPE_FUZZ=ON \
  -DLOUPE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
ninja -C build-fuzz "${targets[@]/#/fuzz_}"
export UBSAN_OPTIONS=print_stacktrace=1
for t in "${targets[@]}"; do
  corpus=tests/fuzz/corpus/$t
  work=build-fuzz/corpus-$t # what fuzzing discovers; kept between runs, not committed
  mkdir -p "$work"
  seeds=("$corpus")
  case $t in
  graphlang | engine) seeds+=(sessions examples) ;;
  tensors) seeds+=(tests/data) ;;
  onnx) [ -d /usr/share/libonnx-testdata/data ] && seeds+=(/usr/share/libonnx-testdata/data) ;;
  esac
  echo "fuzz: $t for ${seconds}s"
  "build-fuzz/tests/fuzz/fuzz_$t" "$work" "${seeds[@]}" -max_total_time="$seconds" -timeout=30 \
    -artifact_prefix="$corpus/" -print_final_stats=1 -detect_leaks=0 2>&1 |
    grep -E "^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY" || true
done
