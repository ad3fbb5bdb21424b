#!/usr/bin/env bash
# Sets up and builds Loupe (scripts/setup.sh), checks the sources' format and that no include
# breaks ARCHITECTURE.md's floors (scripts/check-includes.py), then runs every test:
# unit tests, sessions, GUI screenshots, fuzz corpus replays — and the fuzz targets again under
# ASan and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/check-format.sh
python3 scripts/check-includes.py
ctest --test-dir build --output-on-failure -j "$(nproc)"
bash scripts/sanitize.sh
