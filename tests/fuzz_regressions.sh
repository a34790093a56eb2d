#!/usr/bin/env bash
# Every input a fuzz target found (tests/data/fuzz/TARGET-WHAT.ext), fed to
# the normal build as the driver reads it: each must end in a clean error
# (or, where the input is valid, in success), never a crash or a hang.
# Matrix files go to halo spmv --matrix on 2 ranks, parameter files to halo
# params show, command lines (one argument a line, as fuzz_cli reads them)
# to halo with the arguments fuzz_cli adds to stop before any work.
# usage: fuzz_regressions.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" DATADIR OUTDIR
# shellcheck disable=SC2154,SC2317 # n: counted by cli_expect.sh; cases call what they need
set -u
# shellcheck disable=SC2034 # halo, launcher, flags: for cli_expect.sh
halo=$1 launcher=$2 flags=$3 data=$4 out=$5
mkdir -p "$out"
# shellcheck source=cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
matrix() { expect "$2" "$3" 2 spmv --matrix "$data/$1" --iterations 1 --quiet; }
params() { expect "$2" "$3" 1 params show "$data/$1"; }
cli() { # FILE CODE TEXT: the arguments of FILE, then fuzz_cli's
  local args=()
  mapfile -t args <"$data/$1"
  case "${args[0]}" in
  spmv | simulate) args+=(--matrix /nonexistent/fuzz.mtx) ;;
  convert) args+=(/nonexistent/a /nonexistent/b /nonexistent/c) ;;
  esac
  expect "$2" "$3" 1 "${args[@]}"
}

# fuzz_cli: "--strategy all,auto,auto" wrote a sixth strategy into a list of five
cli fuzz_cli-strategy-list.args 1 "cannot open '/nonexistent/fuzz.mtx'"

[ "$(find "$data" -type f | wc -l)" -eq "$n" ] || {
  echo "FAIL: $(find "$data" -type f | wc -l) files in $data, $n cases here: give each file its case"
  fail=1
}
echo "$n cases"
exit "$fail"
