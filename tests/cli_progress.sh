#!/usr/bin/env bash
# Progress lines: with HALO_PROGRESS=1 (stderr is not a terminal here) the
# reads, writes and generations of halo spmv, simulate and convert draw
# "halo: STAGE NAME: P% (DONE of TOTAL)" on stderr, on rank 0 only; without
# it, with HALO_PROGRESS=0 and with --quiet, none; --quiet prints nothing but
# errors.
# usage: cli_progress.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" MATRIX OUTDIR
set -u
halo=$1 launcher=$2 flags=$3 matrix=$4 out=$5
rm -rf "$out"
mkdir -p "$out"
fail=0
n=0
name=$(basename "$matrix")

# run NP ARGS...: halo ARGS on NP ranks; stdout in $o, stderr (\r as line
# breaks) in $e; a failure is reported
run() {
  local np=$1
  shift
  n=$((n + 1))
  o=$out/$n.out e=$out/$n.err
  # shellcheck disable=SC2086
  if ! $launcher "$np" $flags "$halo" "$@" >"$o" 2>"$out/$n.raw"; then
    echo "FAIL: halo $* (np $np) exits with an error:"
    cat "$o" "$out/$n.raw"
    fail=1
  fi
  tr '\r' '\n' <"$out/$n.raw" >"$e"
}
# has TEXT: the last run's stderr holds TEXT (COUNT times when given)
has() {
  local got
  got=$(grep -cF -- "$1" "$e")
  if [ "$got" -eq 0 ] || { [ $# -gt 1 ] && [ "$got" -ne "$2" ]; }; then
    echo "FAIL: run $n: '$1' ${2:+expected $2 times, }found $got times in stderr:"
    cat "$e"
    fail=1
  fi
}
# none: the last run's stderr holds no progress line
none() {
  if grep -q '^halo: [a-z]* .*: [0-9]*% (' "$e"; then
    echo "FAIL: run $n: a progress line in stderr:"
    cat "$e"
    fail=1
  fi
}

export HALO_PROGRESS=1
run 2 spmv --matrix "$matrix" --strategy standard --iterations 1 --warmup 0
has "halo: reading $name: 0% (0 B of "
has "halo: reading $name: 100% ("
has "halo: parsing $name: 100% ("
grep -q '^halo spmv: ' "$o" || { echo "FAIL: run $n: no report on stdout"; fail=1; }
grep -q '% (' "$o" && { echo "FAIL: run $n: a progress line on stdout"; fail=1; }
run 2 spmv --matrix "$matrix" --strategy standard --iterations 1 --warmup 0 --quiet
none
[ -s "$o" ] && { echo "FAIL: run $n: --quiet printed on stdout:"; cat "$o"; fail=1; }
[ -s "$e" ] && { echo "FAIL: run $n: --quiet printed on stderr:"; cat "$e"; fail=1; }
run 3 spmv --gen lap2d:30 --strategy standard --iterations 1 --warmup 0
has "halo: generating lap2d:30: 100% (300 of 300 rows)" 1 # rank 0's rows alone
run 1 simulate --gen lap3d:10 --ranks 4 --ranks-per-node 2
has "halo: generating lap3d:10: 100% (1.0 k of 1.0 k rows)" 1 # rank by rank, one report
run 1 convert "$matrix" "$out/m.hcsr"
has "halo: parsing $name: 100% ("
has "halo: writing m.hcsr: 100% ("
run 1 convert "$out/m.hcsr" "$out/back.mtx"
has "halo: reading m.hcsr: 100% ("
has "halo: writing back.mtx: 100% ("
run 1 convert --gen irregular:2000,3 "$out/g.hcsr" --quiet
none
[ -s "$o" ] && { echo "FAIL: run $n: --quiet printed on stdout:"; cat "$o"; fail=1; }
# .hcsr read in parallel: each rank reads its rows, rank 0 alone draws
run 4 spmv --matrix "$out/m.hcsr" --strategy standard --iterations 1 --warmup 0
has "halo: reading m.hcsr: 100% (" 1
run 2 simulate --matrix "$out/m.hcsr" --ranks 4 --ranks-per-node 2
has "halo: reading m.hcsr: 100% (" 1

export HALO_PROGRESS=0
run 2 spmv --matrix "$matrix" --strategy standard --iterations 1 --warmup 0
none
run 1 convert "$matrix" "$out/m2.hcsr"
none
# white space around the value is not part of it
export HALO_PROGRESS=" 1 "
run 1 convert "$matrix" "$out/m3.hcsr"
has "halo: writing m3.hcsr: 100% ("
# neither 0 nor 1: every command refuses it (exit 2), rank 0 says why
for v in abc 2 "1 1"; do
  for cmd in "spmv --gen lap2d:8" "simulate --gen lap2d:8 --ranks 2 --ranks-per-node 1" "convert --gen lap2d:8 $out/x.mtx"; do
    n=$((n + 1))
    rc=0
    # shellcheck disable=SC2086
    HALO_PROGRESS=$v $launcher 2 $flags "$halo" $cmd >"$out/$n.out" 2>&1 || rc=$?
    got=$(grep -cF "halo: HALO_PROGRESS='$v': expected 0 or 1" "$out/$n.out")
    if [ "$rc" -ne 2 ] || [ "$got" -ne 1 ]; then
      echo "FAIL: HALO_PROGRESS='$v' halo $cmd: exit $rc (expected 2), the message $got times (expected 1):"
      cat "$out/$n.out"
      fail=1
    fi
  done
done
unset HALO_PROGRESS # stderr is a file: no progress lines
run 2 spmv --matrix "$matrix" --strategy standard --iterations 1 --warmup 0
none
run 1 convert --gen lap3d27:8 "$out/g.mtx"
none
echo "$n runs"
exit $fail
