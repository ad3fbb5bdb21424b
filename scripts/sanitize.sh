#!/usr/bin/env bash
# The sanitizer stage of the tests: the fuzz targets (the graph language's parser, graph JSON and
# ONNX import, each with shape and type inference, and the .npy and TensorProto readers) built
# with GCC's AddressSanitizer and UBSan in build-sanitize/, replaying their corpus, the
# sessions, the examples and ONNX's test models (the ctests labelled fuzz). Any sanitizer
# report fails it. The whole tree under the sanitizers (-DLOUPE_SANITIZE=address,undefined)
# takes over an hour on two cores; this part takes minutes and covers the code that reads what
# users hand it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLOUPE_WERROR=ON \
  -DLOUPE_SANITIZE=address,undefined > /dev/null
ninja -C build-sanitize fuzz_graphlang fuzz_json fuzz_onnx fuzz_tensors
# fuzz/engine needs the whole engine (the backend and LLVM codegen included) under the
# sanitizers: it replays in the main build's ctest, and runs sanitized in scripts/fuzz.sh.
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -L fuzz -E fuzz/engine --output-on-failure
