#!/usr/bin/env bash
# Sets up and builds Loupe, then starts the `loupe` REPL with the NNVM tutorial graph loaded.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec build/repl/loupe -i examples/tutorial.loupe
