#!/usr/bin/env bash
# Sets up and builds Loupe (scripts/setup.sh), checks the sources' format and that no include
# breaks ARCHITECTURE.md's floors (scripts/check-includes.py), then runs every test:
# unit tests, sessions, GUI screenshots, fuzz corpus replays — and the fuzz targets again under
# ASan and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time is printed, so that a slow CI run says where its minutes went.
stage() {
  local start=$SECONDS
  "$@"
  echo "test.sh: '$*' took $((SECONDS - start)) s"
}
stage bash scripts/setup.sh
stage bash scripts/check-format.sh
stage python3 scripts/check-includes.py
stage ctest --test-dir build --output-on-failure -j "$(nproc)"
stage bash scripts/sanitize.sh
