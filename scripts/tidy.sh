#!/usr/bin/env bash
# Runs clang-tidy with .clang-tidy's checks over every .cpp of the compiler and its front ends
# (needs build/compile_commands.json from scripts/setup.sh; about 15 minutes on two cores) and
# prints its findings; exits 1 when there are any. clang-tidy 14 cannot parse lambdas that
# capture structured bindings (C++20, which GCC 12 compiles): those errors are not findings.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(find core passes backend frontend repl gui -name '*.cpp' | sort |
        xargs -P "$(nproc)" -n 4 clang-tidy -p build --quiet 2>/dev/null)
findings=$(grep -E 'warning:|error:' <<<"$out" | grep -v 'reference to local binding')
if [ -n "$findings" ]; then
  echo "$findings"
  exit 1
fi
echo "tidy: no findings"
