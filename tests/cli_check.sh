#!/usr/bin/env bash
# halo spmv --check on every bundled matrix at one rank count, both
# partitions, every strategy on virtual nodes of 2 ranks (3 from 8 ranks up):
# the exit status is 0 only when the error is within --tol and every strategy
# gives bit for bit the ghosts and the product of the standard exchange.
# usage: cli_check.sh HALO NP "MPIEXEC NPFLAG" "MPIFLAGS" OUTDIR MATRIX...
set -u
halo=$1 np=$2 launcher=$3 flags=$4 out=$5
shift 5
mkdir -p "$out"
fail=0
k=$(( np >= 8 ? 3 : 2 ))
for m in "$@"; do
  for part in rows nnz; do
    name=$(basename "$m" .mtx)_$part
    # shellcheck disable=SC2086
    if ! $launcher "$np" $flags "$halo" spmv --matrix "$m" --partition $part --check \
        --ranks-per-node $k --message-cap 256 --iterations 3 --warmup 1 --quiet \
        --json "$out/$name.json" >"$out/$name.log" 2>&1; then
      echo "FAIL: halo spmv --check on $m ($part, $np ranks):"
      cat "$out/$name.log"
      fail=1
      continue
    fi
    grep -q '"passed": true' "$out/$name.json" || { echo "FAIL: $name: no passed check in JSON"; fail=1; }
    n_same=$(grep -c '"identical_to_standard": true' "$out/$name.json")
    [ "$n_same" -eq 4 ] || { echo "FAIL: $name: $n_same of 4 strategies identical to standard"; fail=1; }
  done
done
exit $fail
