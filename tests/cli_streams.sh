#!/usr/bin/env bash
# Inputs that are not regular files (issue 44 item 1): /dev/zero, FIFOs fed without end,
# FIFOs whose header declares more than HALO_INPUT_LIMIT allows or that hold more than their
# header declares, and a FIFO with a good matrix; each halo run under a data limit of
# 1 GiB (prlimit --data: the reader would take gigabytes within seconds) and 60 s.
# usage: cli_streams.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" OUTDIR
set -u
halo=$1 launcher=$2 flags=$3 out=$4
mkdir -p "$out"
fail=0
n=0
limit=(prlimit --data=1073741824 timeout 60)
# run NP CODE TEXT ARGS...: halo ARGS on NP ranks under the limits
run() {
  local np=$1 code=$2 text=$3
  shift 3
  n=$((n + 1))
  # shellcheck disable=SC2086
  "${limit[@]}" $launcher "$np" $flags "$halo" "$@" >"$out/$n.log" 2>&1
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$text" "$out/$n.log"; then
    echo "FAIL: halo $* (np $np): exit $got, expected $code with '$text'; output:"
    tail -20 "$out/$n.log"
    fail=1
  fi
}
# feed PATH COMMAND...: a FIFO at PATH fed by COMMAND in the background
feed() {
  local path=$1
  shift
  rm -f "$path"
  mkfifo "$path"
  ("$@" >"$path" 2>/dev/null &)
}
head='%%MatrixMarket matrix coordinate real general'
not_mm="is not a regular file (a pipe or a device) and does not start like a Matrix Market file"
run 2 1 "$not_mm" spmv --matrix /dev/zero
run 1 1 "$not_mm" simulate --matrix /dev/zero --ranks 4 --ranks-per-node 2
run 1 1 "$not_mm" convert /dev/zero "$out/zero.hcsr"
feed "$out/yes.mtx" yes '1 1 1.0'
run 2 1 "$not_mm" spmv --matrix "$out/yes.mtx"
feed "$out/big.mtx" sh -c "printf '%s\n10 10 100000000000\n' '$head'; yes '1 1 1.0'"
run 2 1 "past HALO_INPUT_LIMIT" spmv --matrix "$out/big.mtx"
feed "$out/more.mtx" sh -c "printf '%s\n10 10 3\n' '$head'; yes '1 1 1.0'"
run 2 1 "holds more than the entries its header declares can fill" spmv --matrix "$out/more.mtx"
feed "$out/bad.mtx" sh -c "printf '%s\nthree by three\n' '$head'; yes '1 1 1.0'"
run 2 1 "its size line 'three by three' is not three integers" spmv --matrix "$out/bad.mtx"
feed "$out/good.mtx" sh -c "printf '%s\n%% a comment\n3 3 3\n1 1 2.0\n2 2 2.0\n3 3 2.0\n' '$head'"
run 2 0 "check: max relative error" spmv --matrix "$out/good.mtx" --check --iterations 2
# a FIFO named .hcsr (read at offsets, in parallel: the distributed reader hung in the open of
# the ranks that found no writer): refused before any open, on every rank
not_hcsr="not a regular file (a pipe or a device): a .hcsr file is read at the offsets its header gives"
rm -f "$out/fifo.hcsr"
mkfifo "$out/fifo.hcsr" # no writer: an open would wait for ever
run 2 1 "$not_hcsr" spmv --matrix "$out/fifo.hcsr"
run 1 1 "$not_hcsr" simulate --matrix "$out/fifo.hcsr" --ranks 4 --ranks-per-node 2
run 1 1 "$not_hcsr" convert "$out/fifo.hcsr" "$out/x.mtx"
rm -f "$out/fifo.hcsr"
# a directory named like an input: said to be one, on every rank (issue 44 item 6)
rm -rf "$out/dir.hcsr" "$out/dir.mtx"
mkdir -p "$out/dir.hcsr" "$out/dir.mtx"
run 2 1 "cannot read '$out/dir.hcsr': it is a directory" spmv --matrix "$out/dir.hcsr"
run 2 1 "cannot read '$out/dir.mtx': it is a directory" spmv --matrix "$out/dir.mtx"
run 1 1 "cannot read '$out/dir.hcsr': it is a directory" simulate --matrix "$out/dir.hcsr" --ranks 4 --ranks-per-node 2
run 1 1 "cannot read '$out/dir.mtx': it is a directory" convert "$out/dir.mtx" "$out/x.hcsr"
rmdir "$out/dir.hcsr" "$out/dir.mtx"
rm -f "$out"/*.mtx
[ "$fail" -eq 0 ] && echo "$n passed, 0 failed"
exit "$fail"
