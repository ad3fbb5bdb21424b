#!/usr/bin/env bash
# The sanitizer stage of the tests: the REPL, the unit tests, the plugins and the fuzz replay
# targets built with GCC's AddressSanitizer and UBSan (-DLOUPE_SANITIZE=address,undefined, at
# -O0, which compiles as fast as the main build's -O2) in build-sanitize/, then every unit test,
# every session and every fuzz corpus replayed under them (ctest labels unit-quick, session,
# fuzz). The slow unit tier (unit-slow: whole zoo networks built at several opt levels, the
# lowering sweep over every dtype and opt level) repeats in bulk, through the same C++ paths,
# what the quick tier runs once per op; at -O0 under ASan it took most of this stage's 13
# minutes, so the main build runs it and the sanitizers do not.
# Any sanitizer report (leaks included) fails it. LLVM-compiled kernels are not instrumented; they are checked
# against the reference interpreter by the tests themselves. Debug information is line tables
# only (-g1): enough for the sanitizers' stack traces, and less disk (this tree is 2.2 GB with
# it; a CI machine's disk is not ours to fill).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DLOUPE_WERROR=ON -DLOUPE_SANITIZE=address,undefined > /dev/null
# Every floor's unit tests but the viewer's (loupe_gui_tests: ImGui's drawing, which the
# screenshot tests of the main build exercise; leaving it out leaves the viewer's libraries unbuilt
# here). ctest lists a test binary that was not built as one test named after it: left out too.
floors="core passes backend frontend repl view report"
ninja -C build-sanitize loupe $(for f in $floors; do echo "loupe_${f}_tests"; done) NoEntryPoint \
  WrongAbi ThrowingEntry ThrowingPass CustomPipeline fuzz_graphlang fuzz_json fuzz_onnx \
  fuzz_tensors fuzz_engine
UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -L 'unit-quick|session|fuzz' -E '^loupe_gui_tests_NOT_BUILT$' \
  --output-on-failure -j "$(nproc)"
