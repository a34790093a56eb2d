#!/usr/bin/env bash
# The driver's exit codes and messages on bad command lines and bad input.
# usage: cli_errors.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" MMDATA OUTDIR
set -u
halo=$1 launcher=$2 flags=$3 data=$4 out=$5
mkdir -p "$out"
fail=0
n=0
# expect CODE TEXT NP ARGS...: exit status CODE and TEXT in the output
expect() {
  local code=$1 text=$2 np=$3
  shift 3
  n=$((n + 1))
  # shellcheck disable=SC2086
  $launcher "$np" $flags "$halo" "$@" >"$out/$n.log" 2>&1
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$text" "$out/$n.log"; then
    echo "FAIL: halo $* (np $np): exit $got, expected $code with '$text'; output:"
    cat "$out/$n.log"
    fail=1
  fi
}
expect 2 "usage: mpirun -n P halo COMMAND" 1
expect 0 "commands:" 1 --help
expect 0 "halo 0." 1 --version
expect 2 "unknown command 'spmx'" 2 spmx
expect 0 "--partition rows|nnz" 1 spmv --help
expect 2 "give one of --matrix FILE or --gen SPEC" 2 spmv
expect 2 "give one of --matrix FILE or --gen SPEC" 2 spmv --gen lap2d:4 --matrix x.mtx
expect 2 "unknown option '--bogus'" 2 spmv --gen lap2d:4 --bogus
expect 2 "option --iterations needs a value" 2 spmv --gen lap2d:4 --iterations
expect 2 "--iterations 'ten': expected an integer" 2 spmv --gen lap2d:4 --iterations ten
expect 2 "--iterations '-1': expected an integer" 2 spmv --gen lap2d:4 --iterations=-1
expect 2 "--tol '-1': expected a number >= 0" 2 spmv --gen lap2d:4 --tol -1
expect 2 "unknown partition 'metis' (known: rows, nnz)" 2 spmv --gen lap2d:4 --partition metis
expect 2 "unknown strategy 'fast'" 2 spmv --gen lap2d:4 --strategy fast
expect 1 "unknown kind" 2 spmv --gen cube:4
expect 1 "N must be a positive integer" 3 spmv --gen lap3d:0
expect 1 "rank 0: cannot open" 3 spmv --matrix "$data/does-not-exist.mtx"
expect 1 "index_zero.mtx: line 4: row index 0 out of range" 3 spmv --matrix "$data/index_zero.mtx"
expect 1 "duplicate entry" 2 spmv --matrix "$data/duplicate.mtx"
expect 0 "check: max relative error" 2 spmv --matrix "$data/good_duplicates.mtx" --sum-duplicates --check --iterations 2
expect 0 "standard" 3 spmv --gen lap2d:6 --iterations 2 --warmup 0
expect 1 "cannot write" 2 spmv --gen lap2d:6 --iterations 1 --json /nonexistent-dir/x.json
echo "$n cases"
exit $fail
