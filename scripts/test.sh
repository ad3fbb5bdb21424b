#!/usr/bin/env bash
# Sets up and builds Loupe (scripts/setup.sh), then runs every test: unit tests and sessions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
