#!/usr/bin/env bash
# Set up (packages, configure, build), then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
ctest --test-dir build -j"$(nproc)" --output-on-failure "$@"
