#!/usr/bin/env bash
# CI stage: the host tests under AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer, built in build-asan. The runtimes' options and
# the suppressed leaks of Open MPI are in tests/CMakeLists.txt and
# tests/lsan.supp; what it found, and its times on the CI machine, in
# bench/results/reliability.md.
#
#   .ci/sanitize.sh         a subset with a test of every part (CI: the whole
#                           suite under the sanitizers takes longer than CI may)
#   .ci/sanitize.sh --all   the whole host suite
set -euo pipefail
cd "$(dirname "$0")/.."
# every part once: the core's units, each strategy's and transport's
# exchange, exchange-only plans, contexts, the no-allocation checks, misuse,
# the readers and hostile inputs, the driver, the adapters, the installed
# package, the soak and a late peer (a failed plan's notices must not stay
# in MPI's queues), with few ranks: oversubscribed one-sided MPI under ASan
# is slow; hcsr_split_reads, 7-value reads, takes minutes
subset='^(test_core|test_schedule|test_partition|test_model|test_mmio|exchange_np3|edge_np4|exchange_only_np4|strategies_np5|executor_split_messages_np4|split_np4|misuse_np3|context_np3|settings_np3|noalloc_np2|exchange_rma_np3|strategies_rma_np3|noalloc_rma_np4|auto_np2|hcsr_np2|progress_np3|cli_hostile|fuzz_regressions|cli_help|cli_simulate_1_np4|example_np3|petsc_cases|petsc_misuse|petsc_attach_np2|hypre_plan_cases_np2|hypre_fallback|install_package|soak_np2|inject_np2|inject_np4|inject_rma_np4|late_peer_np2|neighbor_np3|context_neighbor_np2|wisdom_np2|online_np4|units_np4)$'
select=(-R "$subset")
[ "${1:-}" = --all ] && select=(-E '^source_rules$') # it greps the sources: nothing a sanitizer sees
cmake -S . -B build-asan -DHALO_SANITIZE=address,undefined -DHALO_ENABLE_CUDA=OFF -DHALO_WERROR=ON
cmake --build build-asan -j"$(nproc)"
ctest --test-dir build-asan -j"$(nproc)" --output-on-failure "${select[@]}"
