#!/usr/bin/env bash
# CI stage: the host test suite under AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer. The runtimes' options and the suppressed leaks
# of Open MPI are in tests/CMakeLists.txt and tests/lsan.supp; what it found,
# and its time on the CI machine, in bench/results/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DHALO_SANITIZE=address,undefined -DHALO_ENABLE_CUDA=OFF -DHALO_WERROR=ON
cmake --build build-asan -j"$(nproc)"
# source_rules greps the sources: nothing runs that a sanitizer could see
ctest --test-dir build-asan -j"$(nproc)" --output-on-failure -E '^source_rules$'
