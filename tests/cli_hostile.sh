#!/usr/bin/env bash
# Hostile sizes: small inputs that declare huge matrices (tests/data/hostile),
# generators and simulations larger than the machine, parameter files that
# never end. Each is refused before anything is allocated by its sizes, with
# a message that says how much and why, on every rank, in seconds (the
# launcher's start included; a case over 20 s fails: a hang or an allocation).
# The times go to OUTDIR/times.txt.
# usage: cli_hostile.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" DATADIR OUTDIR
set -u
# shellcheck disable=SC2034 # halo, launcher, flags: for cli_expect.sh
halo=$1 launcher=$2 flags=$3 data=$4 out=$5
mkdir -p "$out"
: >"$out/times.txt"
# shellcheck source=cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
timed() { # expect CODE TEXT NP ARGS..., timed
  local t0 t1
  t0=$(date +%s%N)
  expect "$@"
  t1=$(date +%s%N)
  local ms=$(((t1 - t0) / 1000000))
  echo "$ms ms: np $3: halo ${*:4}" >>"$out/times.txt"
  if [ "$ms" -gt 20000 ]; then
    echo "FAIL: halo ${*:4} (np $3) took $ms ms"
    fail=1
  fi
}
limit="beyond its entries (16 bytes each); the limit is 1.07 GB (HALO_INPUT_LIMIT=BYTES, or none, raises it)"

# Matrix Market: rows, columns and entries far beyond what the file holds
timed 1 "rank 0: $data/many_rows.mtx: declares 2147483650 rows and 2 columns for 2 entries (a file of 77 B): its rows and columns alone need 17.2 GB (8 bytes each: row pointers, vectors), 17.2 GB $limit" 3 spmv --matrix "$data/many_rows.mtx"
timed 1 "declares 2 rows and 100000000000 columns for 1 entry (a file of 81 B): its rows and columns alone need 800 GB" 2 spmv --matrix "$data/many_columns.mtx"
timed 1 "many_entries.mtx: file ends after 2 of 1000000000000000 entries declared on line 2" 2 spmv --matrix "$data/many_entries.mtx"
timed 1 "size_too_large.mtx: line 2: size line: 288230376151711744 rows: too large" 2 spmv --matrix "$data/size_too_large.mtx"
timed 1 "many_rows.mtx: declares 2147483650 rows" 1 simulate --matrix "$data/many_rows.mtx" --ranks 2 --ranks-per-node 1
timed 1 "many_rows.mtx: declares 2147483650 rows" 1 convert "$data/many_rows.mtx" "$out/x.hcsr"
timed 1 "many_rows.mtx: declares 2147483650 rows" 2 spmv --matrix "$data/many_rows.mtx" --partition metis
# HALO_INPUT_LIMIT: 1000 rows for 1 entry need 8 kB beyond it
printf '%%%%MatrixMarket matrix coordinate real general\n1000 1 1\n1 1 2.0\n' >"$out/empty_rows.mtx"
timed 0 "standard" 2 spmv --matrix "$out/empty_rows.mtx" --strategy standard --iterations 1
HALO_INPUT_LIMIT=1k timed 1 "8 kB beyond its entries (16 bytes each); the limit is 1 kB" 2 spmv --matrix "$out/empty_rows.mtx"
HALO_INPUT_LIMIT=9k timed 0 "standard" 2 spmv --matrix "$out/empty_rows.mtx" --strategy standard --iterations 1
HALO_INPUT_LIMIT=" 1k " timed 1 "the limit is 1 kB" 2 spmv --matrix "$out/empty_rows.mtx" # white space around it
HALO_INPUT_LIMIT=none timed 1 "many_entries.mtx: file ends after 2" 2 spmv --matrix "$data/many_entries.mtx"
HALO_INPUT_LIMIT=lots timed 1 "HALO_INPUT_LIMIT='lots': expected bytes, 0 or more, with an optional k, M, G or T" 2 spmv --matrix "$out/empty_rows.mtx"

# .hcsr: columns beyond the entries (every rank reads the header), rows the file cannot hold
timed 1 "rank 0: $data/many_columns.hcsr: declares 2 rows and 100000000000 columns for 1 entry (a file of 112 B)" 3 spmv --matrix "$data/many_columns.hcsr"
timed 1 "many_columns.hcsr: declares 2 rows and 100000000000 columns" 1 simulate --matrix "$data/many_columns.hcsr" --ranks 2 --ranks-per-node 1
timed 1 "many_rows.hcsr: truncated: the file has 88 bytes, the header's sizes (2147483648 rows, 2 columns, 0 entries, 4-byte column indices) need 17179869264" 3 spmv --matrix "$data/many_rows.hcsr" --partition nnz

# --gen: the rows of each rank against its share of its node's memory
timed 1 "--gen lap3d:8192: 549755813888 rows and about 3.83e+12 entries need at least 74.5 TB on rank 0 (its rows twice" 2 spmv --gen lap3d:8192
timed 1 "more than its share of its node's memory" 3 spmv --gen irregular:1099511627776 --partition nnz
timed 1 "--gen lap3d27:8192: 549755813888 rows" 1 simulate --gen lap3d27:8192 --ranks 2 --ranks-per-node 1
timed 1 "the whole matrix on one rank), more than its share of its node's memory" 1 convert --gen lap2d:1048576 "$out/x.hcsr"

# halo simulate --ranks: no more ranks holding rows than rows
timed 1 "--ranks 16777216: 16777216 of the ranks would hold rows of a matrix of 16 rows: simulate at most as many ranks as rows" 1 simulate --gen lap2d:4 --ranks 16777216 --ranks-per-node 1
timed 1 "--ranks 1001: 1001 of the ranks would hold rows of a matrix of 1000 rows" 1 simulate --matrix "$out/empty_rows.mtx" --ranks 1001 --ranks-per-node 7
timed 0 "standard" 1 simulate --gen lap2d:4 --ranks 32 --ranks-per-node 4 --helpers 1

# parameter files: read at most 1 MiB, every value checked
printf 'name = x\nsockets_per_node = 2000000000\n' >"$out/sockets.params"
printf 'name = x\nshort_max = 99999999999999999999\n' >"$out/short.params"
timed 1 "/dev/zero: larger than 1048576 bytes: not a parameter file" 1 params show /dev/zero
timed 1 "rank 0: /dev/zero: larger than 1048576 bytes: not a parameter file" 2 spmv --gen lap2d:4 --strategy auto --params /dev/zero
timed 1 "sockets.params:2: sockets_per_node = 2000000000: too large" 1 params show "$out/sockets.params"
timed 1 "short.params:2: short_max = '99999999999999999999': not an integer" 1 params show "$out/short.params"
# shellcheck disable=SC2154 # n: counted by cli_expect.sh
echo "$n cases"
exit "$fail"
