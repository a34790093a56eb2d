#!/usr/bin/env bash
# Every input a fuzz target found (tests/data/fuzz/TARGET-WHAT.ext), fed to
# the normal build as the driver reads it: each must end in a clean error
# (or, where the input is valid, in success), never a crash or a hang.
# Matrix files go to halo spmv --matrix on 2 ranks (fuzz_amg's to halo amg on one), parameter files to halo
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

environment() { # FILE CODE TEXT: the assignments of FILE (one a line) in the environment of
  # halo spmv on a bundled matrix (which reads the readers' limit)
  local line
  (
    while IFS= read -r line; do [[ "$line" == HALO_*=* ]] && export "${line?}"; done <"$data/$1"
    expect "$2" "$3" 2 spmv --matrix "$data/../../../matrices/west0479.mtx" --iterations 1 --quiet
    exit "$fail"
  ) || fail=1
  n=$((n + 1))
}

has_amg=1 # halo amg is built with hypre only
# shellcheck disable=SC2086
$launcher 1 $flags "$halo" amg --help >/dev/null 2>&1 || has_amg=0
amg() { # FILE CODE TEXT: halo amg on FILE, one rank, as fuzz_amg runs it
  if [ "$has_amg" -eq 0 ]; then
    echo "skipped (no halo amg in this build): $1"
    n=$((n + 1))
    return
  fi
  expect "$2" "$3" 1 amg --matrix "$data/$1" --repeat 1 --maxit 5 --strategy standard
}

# fuzz_amg: values near the largest double make hypre stop before its first product; the
# check that hypre's exchanges reached halo took that for a failed interposition (exit 3)
amg fuzz_amg-no-iteration.mtx 0 "standard        0"
amg fuzz_amg-no-iteration-symmetric.mtx 0 "standard        0"
# fuzz_env: HALO_INPUT_LIMIT=" M", a unit without a number, was taken as a limit of 0 bytes
environment fuzz_env-input-limit-unit.env 1 "HALO_INPUT_LIMIT='M': expected bytes, 0 or more"
# fuzz_cli: "--strategy all,auto,auto" wrote a sixth strategy into a list of five
cli fuzz_cli-strategy-list.args 1 "cannot open '/nonexistent/fuzz.mtx'"

[ "$(find "$data" -type f | wc -l)" -eq "$n" ] || {
  echo "FAIL: $(find "$data" -type f | wc -l) files in $data, $n cases here: give each file its case"
  fail=1
}
echo "$n cases"
exit "$fail"
