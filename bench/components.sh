#!/usr/bin/env bash
# Transport neighbor against host (and rma), side by side in one run of halo spmv per case:
# every bundled matrix and three Laplacians, 2, 3 and 4 ranks on virtual nodes of 2, every
# strategy; the plans timed in turn, ROUNDS times over (--rounds), each time the median of
# the rounds. Writes the CSV of every run to OUT (default bench/results/components-host.csv)
# and prints the summary table of bench/results/components.md.
# Environment: BUILD (default build), RANKS ("2 3 4"), ROUNDS (5), ITER (200), OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
out=${OUT:-bench/results/components-host.csv}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cases=""
for f in matrices/*.mtx; do cases="$cases --matrix=$f"; done
cases="$cases --gen=lap2d:300 --gen=lap3d:40 --gen=lap3d27:40"
n=0
for np in ${RANKS:-2 3 4}; do
  for c in $cases; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    scripts/mpirun.sh -n "$np" "$B/tools/halo" spmv ${c/=/ } --transport all --strategy all \
      --ranks-per-node 2 --iterations "${ITER:-200}" --warmup 20 --rounds "${ROUNDS:-5}" \
      --csv "$tmp/$n.csv" >"$tmp/$n.log" 2>&1 || { cat "$tmp/$n.log"; exit 1; }
  done
done
head -1 "$tmp/1.csv" >"$out"
for i in $(seq 1 "$n"); do tail -n +2 "$tmp/$i.csv"; done >>"$out"
python3 bench/components_summary.py "$out"
