#!/usr/bin/env bash
# Plan set-up against one SpMV on this machine (bench_setup): the first plan of
# a communicator and later plans of the same matrix, part by part, with the
# defaults (reverse on, one exchange) and with reverse off; the standard and
# the Split strategy on virtual nodes of 2. A markdown table on stdout.
# usage: bench/setup.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
run() { scripts/mpirun.sh "$@" 2>&1 | grep '^|'; }
header=--header
for m in lap3d27:64 lap3d27:32 irregular:200000,1; do
  for np in 2 4; do
    run -n $np $B/bench/bench_setup --gen $m $header
    header=
    run -n $np $B/bench/bench_setup --gen $m --reverse 0
    run -n $np $B/bench/bench_setup --gen $m --strategy split --ranks-per-node 2
  done
done
