#!/usr/bin/env bash
# The sanitizer stage of the tests: the fuzz targets (the graph language's parser, graph JSON and
# ONNX import, each with shape and type inference) built with GCC's AddressSanitizer and
# UBSan in build-sanitize/, replaying their corpus, the sessions, the examples and ONNX's test
# models (the ctests labelled fuzz). Any sanitizer report fails it. The whole tree under the
# sanitizers (-DLOUPE_SANITIZE=address,undefined) takes over an hour on two cores; this part
# takes minutes and covers the code that reads what users hand it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLOUPE_WERROR=ON \
  -DLOUPE_SANITIZE=address,undefined > /dev/null
ninja -C build-sanitize fuzz_graphlang fuzz_json fuzz_onnx
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -L fuzz --output-on-failure
