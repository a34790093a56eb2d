#!/usr/bin/env bash
# halo convert and .hcsr input: a bundled matrix converted to .hcsr (4- and
# 8-byte column indices) and back to Matrix Market, halo spmv --check and
# halo simulate on the .hcsr file; bad files and bad command lines exit
# non-zero with their message.
# usage: cli_hcsr.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" MATRIX OUTDIR
set -u
halo=$1 launcher=$2 flags=$3 matrix=$4 out=$5
rm -rf "$out"
mkdir -p "$out"
# shellcheck source=cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
m=$out/m.hcsr
expect 0 "--index-bytes 4|8" 1 convert --help
expect 0 "convert " 1 --help
expect 0 "-> $m: " 1 convert "$matrix" "$m"
expect 0 "-> $out/m8.hcsr: " 1 convert "$matrix" "$out/m8.hcsr" --index-bytes 8
expect 0 "-> $out/back.mtx: " 2 convert "$m" "$out/back.mtx"
expect 0 "lap2d:7 -> $out/gen.hcsr: 49 x 49, 217 entries" 1 convert --gen lap2d:7 "$out/gen.hcsr"
cp "$m" "$out/no_extension"
for f in "$m" "$out/m8.hcsr" "$out/no_extension"; do
  for np in 1 3; do
    expect 0 "check: max relative error" $np spmv --matrix "$f" --check --iterations 2 --warmup 1
  done
done
expect 0 "check: max relative error" 4 spmv --matrix "$m" --partition nnz --helpers 1 --check --iterations 2 --warmup 1
expect 0 "check: max relative error" 2 spmv --matrix "$out/back.mtx" --check --iterations 2 --warmup 1
expect 0 "check: max relative error" 2 spmv --matrix "$out/gen.hcsr" --check --iterations 2 --warmup 1
# halo simulate gives the same statistics from the .hcsr file as from the .mtx file
expect 0 "split" 1 simulate --matrix "$m" --ranks 8 --ranks-per-node 2 --json "$out/sim_hcsr.json"
expect 0 "split" 1 simulate --matrix "$matrix" --ranks 8 --ranks-per-node 2 --json "$out/sim_mtx.json"
a=$(grep -v '_s"' "$out/sim_hcsr.json" | grep -v '"name"')
b=$(grep -v '_s"' "$out/sim_mtx.json" | grep -v '"name"')
[ "$a" = "$b" ] || { echo "FAIL: halo simulate: the .hcsr and the .mtx statistics differ"; fail=1; }
# bad command lines
expect 2 "give IN and OUT, or --gen SPEC and OUT" 1 convert "$matrix"
expect 2 "give IN and OUT, or --gen SPEC and OUT" 1 convert --gen lap2d:4 a.hcsr b.hcsr
expect 2 "unexpected argument 'c'" 1 convert a b c
expect 2 "OUT 'x.bin': name it FILE.hcsr or FILE.mtx" 1 convert "$matrix" x.bin
expect 2 "--index-bytes '5': 4 or 8" 1 convert "$matrix" x.hcsr --index-bytes 5
expect 2 "--index-bytes is for .hcsr output" 1 convert "$matrix" x.mtx --index-bytes 8
expect 2 "unknown option '--bogus'" 2 convert --bogus
# bad input
expect 1 "cannot open" 1 convert "$out/missing.mtx" "$out/x.hcsr"
expect 1 "cannot open '/nonexistent-dir/x.hcsr' for writing" 2 convert "$matrix" /nonexistent-dir/x.hcsr
expect 1 "rank 0: cannot open '$out/missing.hcsr'" 2 spmv --matrix "$out/missing.hcsr"
size=$(stat -c %s "$m")
head -c $((size - 3)) "$m" >"$out/truncated.hcsr"
expect 1 "$out/truncated.hcsr: truncated: the file has $((size - 3)) bytes" 3 spmv --matrix "$out/truncated.hcsr"
expect 1 "truncated" 1 simulate --matrix "$out/truncated.hcsr" --ranks 2 --ranks-per-node 1
expect 1 "truncated" 1 convert "$out/truncated.hcsr" "$out/x.mtx"
{ printf 'XALOCSR\0'; tail -c +9 "$m"; } >"$out/magic.hcsr"
expect 1 "$out/magic.hcsr: not an hcsr file: wrong magic" 2 spmv --matrix "$out/magic.hcsr"
{ head -c 8 "$m"; printf '\002'; tail -c +10 "$m"; } >"$out/version.hcsr"
expect 1 "unsupported hcsr version 2" 2 spmv --matrix "$out/version.hcsr"
# a byte of the last value changed
{ head -c $((size - 1)) "$m"; printf '\177'; } >"$out/checksum.hcsr"
expect 1 "$out/checksum.hcsr: bad checksum of the values" 4 spmv --matrix "$out/checksum.hcsr"
expect 1 "$out/checksum.hcsr: bad checksum of the values" 1 convert "$out/checksum.hcsr" "$out/x.mtx"
[ -e "$out/x.mtx" ] && { echo "FAIL: halo convert left $out/x.mtx after an error"; fail=1; }
echo "$n cases"
exit $fail
