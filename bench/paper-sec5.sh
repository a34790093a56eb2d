#!/usr/bin/env bash
# The node-aware paper's Section 5 benchmark: the communication of one
# distributed SpMV per strategy and path, for each matrix and layout, timed as
# the paper times it (the exchange alone, 1000 times after 50 untimed, each
# rank's mean, the maximum over ranks: halo spmv's exchange_s); then a table
# per matrix and a chart like its Figure 5.1 (bench/paper_sec5_plot.py).
#
#   bench/paper-sec5.sh [OUT [MATRIX...]]
#
# MATRIX: a Matrix Market or .hcsr file, or gen:SPEC for halo spmv --gen SPEC.
# Default: the bundled matrices in matrices/ that are square, gen:lap3d27:100
# (10^6 rows) and gen:irregular:1000000,1 (10^6 rows).
# Environment:
#   HALO          the halo binary (default build/tools/halo)
#   RANKS, RPN    ranks, and ranks per virtual node (default 4 and 2: 2 nodes of 2)
#   GPU=1         device memory, every transport this run can use (--memory device
#                 --transport all); one rank per GPU unless RANKS says otherwise
#   ITERATIONS, WARMUP            timed and untimed calls (default 1000, 50)
#   GEN_ITERATIONS, GEN_WARMUP    the same for gen: matrices (default ITERATIONS, WARMUP)
#   HALO_ARGS     more arguments for halo spmv (for example "--strategy all,auto")
# Writes OUT/json/*.json, OUT/log.txt, OUT/tables.md and OUT/chart.png
# (OUT default /tmp/halo-paper-sec5). Reports already in OUT/json are tabulated and
# drawn too, so runs of several layouts into one OUT (RANKS, RPN, GPU) make one
# chart. The chart needs Debian's python3-matplotlib; without it only the tables
# are written.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${1:-/tmp/halo-paper-sec5}
shift $(($# > 0 ? 1 : 0))
HALO=${HALO:-build/tools/halo}
RANKS=${RANKS:-4}
RPN=${RPN:-2}
ITERATIONS=${ITERATIONS:-1000}
WARMUP=${WARMUP:-50}
GEN_ITERATIONS=${GEN_ITERATIONS:-$ITERATIONS}
GEN_WARMUP=${GEN_WARMUP:-$WARMUP}
# NVLink multicast stays off on machines whose GPUs others share
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$OUT/json"
log=$OUT/log.txt
: >"$log"

if [ $# -gt 0 ]; then
  matrices=("$@")
else
  matrices=()
  for f in matrices/*.mtx; do # square: the size line has rows = cols
    size=$(grep -v -m1 '^%' "$f")
    read -r rows cols _ <<<"$size"
    [ "$rows" = "$cols" ] && matrices+=("$f")
  done
  matrices+=(gen:lap3d27:100 "gen:irregular:1000000,1")
fi

if [ "${GPU:-0}" = 1 ]; then
  where=(--memory device --transport all)
  layout="${RANKS}gpus_rpn${RPN}"
else
  where=(--memory host)
  layout="${RANKS}ranks_rpn${RPN}"
fi

read -r -a extra <<<"${HALO_ARGS:-}"
failed=0
t0=$SECONDS
for m in "${matrices[@]}"; do
  if [[ $m == gen:* ]]; then
    input=(--gen "${m#gen:}")
    it=(--iterations "$GEN_ITERATIONS" --warmup "$GEN_WARMUP")
  else
    input=(--matrix "$m")
    it=(--iterations "$ITERATIONS" --warmup "$WARMUP")
  fi
  name=$(basename "${m#gen:}")
  name=$(echo "${name%.mtx}" | tr -c 'a-zA-Z0-9_\n' '_')
  json=$OUT/json/${name}_${layout}.json
  cmd=(scripts/mpirun.sh -n "$RANKS" "$HALO" spmv "${input[@]}" --ranks-per-node "$RPN"
       --strategy all "${it[@]}" "${where[@]}" "${extra[@]}" --json "$json")
  t1=$SECONDS
  echo "+ ${cmd[*]}" >>"$log"
  if "${cmd[@]}" >>"$log" 2>&1; then
    echo "$m: $((SECONDS - t1)) s"
  else
    echo "$m: FAILED (exit status $?; see $log)"
    rm -f "$json"
    failed=1
  fi
done
echo "all runs: $((SECONDS - t0)) s"

if ! compgen -G "$OUT/json/*.json" >/dev/null; then
  echo "no report in $OUT/json: nothing to tabulate"
  exit 1
fi
/usr/bin/python3 bench/paper_sec5_plot.py "$OUT/json" >"$OUT/tables.md" || failed=1
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  echo "wrote $OUT/tables.md (no chart: install python3-matplotlib)"
elif /usr/bin/python3 bench/paper_sec5_plot.py "$OUT/json" "$OUT/chart.png" >/dev/null; then
  echo "wrote $OUT/tables.md and $OUT/chart.png"
else
  failed=1
fi
exit $failed
