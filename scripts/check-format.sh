#!/usr/bin/env bash
# Checks that every tracked C and C++ file is formatted as .clang-format says (LLVM style, 100
# columns); prints the files that are not and exits 1. Run `clang-format -i FILE` to fix one.
set -euo pipefail
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c')
else # a copy without git: the source folders
  mapfile -t files < <(find core passes backend frontend repl view gui report python cli tests examples \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) | sort)
fi
bad=$(clang-format --dry-run --Werror "${files[@]}" 2>&1 | grep -o '^[^:]*\.\(cpp\|h\|c\):' | sort -u | tr -d ':' || true)
if [ -n "$bad" ]; then
  echo "format: these files are not clang-formatted (clang-format -i FILE):"
  echo "$bad" | sed 's/^/  /'
  exit 1
fi
echo "format: ${#files[@]} files clang-formatted"
