#!/usr/bin/env bash
# One exchange's time as a distribution, host (two-sided) against rma (one-sided), on this
# machine's cores (bench/results/onesided.md): 10^4 exchanges of each, interleaved in blocks.
# Environment: BUILD (default build), RANKS (default "2"), MATRICES (default
# "lap3d27:40 lap3d27:100").
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
[ -x "$B/bench/bench_exchange_dist" ] || cmake --build "$B" --target bench_exchange_dist >/dev/null
for np in ${RANKS:-2}; do
  for g in ${MATRICES:-lap3d27:40 lap3d27:100}; do
    scripts/mpirun.sh -n "$np" "$B/bench/bench_exchange_dist" "$g" 10000 host rma
  done
done
