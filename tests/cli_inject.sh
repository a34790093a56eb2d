#!/usr/bin/env bash
# Failure injection from the environment (issue 17, item 3), through the whole
# command line: HALO_DEBUG_FAIL_ALLOC=K on one rank alone makes that rank's
# K-th host allocation fail, anywhere in `halo spmv`: the reading of the
# matrix, its distribution, the plans of each strategy, the products and the
# check. For each rank and K = 1, 2, ... (every K up to 30, then a quarter
# more each time, past the process's allocations: 5 runs in a row that no
# failure ended, after one that did), the run must either succeed (the allocation
# was not needed, or K is past the end) or exit 1 with "out of memory" in its
# output, within 60 s (no hang), never by a signal or an abort.
# usage: cli_inject.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" MATRIX OUTDIR
# INJECT_NP (2) and INJECT_ARGS (halo's arguments, instead of the spmv above) sweep another run.
set -u
halo=$1 launcher=$2 flags=$3 matrix=$4 out=$5
mkdir -p "$out"
np=${INJECT_NP:-2}
args=(spmv --matrix "$matrix" --strategy standard,3step --ranks-per-node 1 --iterations 2
      --warmup 1 --check)
# shellcheck disable=SC2206 # words of the caller's
[ -n "${INJECT_ARGS:-}" ] && args=(${INJECT_ARGS})
fail=0 runs=0 failed_runs=0
for r in $(seq 0 $((np - 1))); do
  ok_in_a_row=0 failed_here=0
  k=1
  while :; do
    # shellcheck disable=SC2086,SC2016 # the launcher's words; the rank is the child's
    timeout 60 $launcher "$np" $flags env HALO_INJECT_RANK="$r" HALO_INJECT_K="$k" sh -c \
      'if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = "$HALO_INJECT_RANK" ]; then
         export HALO_DEBUG_FAIL_ALLOC=$HALO_INJECT_K; fi; exec "$0" "$@"' \
      "$halo" "${args[@]}" >"$out/run.log" 2>&1
    got=$?
    runs=$((runs + 1))
    if [ "$got" -eq 0 ]; then
      ok_in_a_row=$((ok_in_a_row + 1))
      # past the allocations (a stretch of allocations whose failure is tolerated, such as
      # the sampling of --gen's size, comes before the first that fails a run)
      [ "$ok_in_a_row" -ge 5 ] && [ "$k" -gt 30 ] && [ "$failed_here" -gt 0 ] && break
    elif [ "$got" -eq 1 ] && grep -q "out of memory" "$out/run.log"; then
      ok_in_a_row=0
      failed_here=$((failed_here + 1)) failed_runs=$((failed_runs + 1))
    else
      echo "FAIL: rank $r, allocation $k: exit $got (124: no end within 60 s); output:"
      tail -20 "$out/run.log"
      fail=1
      ok_in_a_row=0
    fi
    if [ "$k" -lt 30 ]; then k=$((k + 1)); else k=$((k + k / 4)); fi
    [ "$k" -gt 10000000 ] && { echo "FAIL: rank $r: still failing at allocation $k"; fail=1; break; }
  done
done
echo "cli_inject: $runs runs, $failed_runs ended by an injected allocation failure with 'out of memory'; fail=$fail"
[ "$failed_runs" -gt 0 ] || { echo "FAIL: no run failed: HALO_DEBUG_FAIL_ALLOC had no effect"; fail=1; }
exit $fail
