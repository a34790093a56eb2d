#!/usr/bin/env bash
# Load time of a Matrix Market file against the same matrix as .hcsr: write
# a generated matrix as .mtx (halo convert --gen), convert it to .hcsr (halo
# convert), then read each file REPEAT times on 1 and 2 ranks with
# bench_io_load (Matrix Market: rank 0 reads and parses, then distributes;
# .hcsr: every rank reads its own rows with MPI-IO), from a warm page cache
# and from a cold one (the file's pages dropped before each read). Prints a
# Markdown report.
# usage: bench/hcsr_load.sh [SPEC] [REPEAT] [BUILD] [DIR]
#   SPEC    generated matrix [irregular:10000000,1: about 10^8 entries]
#   REPEAT  reads of each file per configuration [5]
#   BUILD   build directory [build]
#   DIR     where the files go (removed at the end) [a new temporary directory]
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-irregular:10000000,1}
repeat=${2:-5}
build=${3:-build}
dir=${4:-$(mktemp -d)}
mkdir -p "$dir"
halo=$build/tools/halo
load=$build/bench/bench_io_load
mtx=$dir/matrix.mtx
hcsr=$dir/matrix.hcsr
trap 'rm -f "$mtx" "$hcsr"' EXIT
echo "# Load time: Matrix Market against .hcsr"
echo
echo "- command: \`bench/hcsr_load.sh $*\`"
echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src tools include bench || echo ' (with local changes)')"
echo "- machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), $(free -g | awk '/Mem:/{print $2}') GiB, $(. /etc/os-release; echo "$PRETTY_NAME"), $(mpirun --version 2>&1 | head -1)"
echo "- date: $(date -u +%Y-%m-%d)"
echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "## Writing the files"
echo
echo '```'
echo "\$ $halo convert --gen $spec $mtx"
$halo convert --gen "$spec" "$mtx"
echo "\$ $halo convert $mtx $hcsr"
$halo convert "$mtx" "$hcsr"
echo '```'
echo
echo "## Reading them"
echo
echo "\`scripts/mpirun.sh -n P $load FILE $repeat [--cold]\`; the time of a read is the slowest rank's:"
echo
echo '```'
for cache in warm cold; do
  for np in 1 2; do
    for f in "$mtx" "$hcsr"; do
      extra=()
      [ "$cache" = cold ] && extra=(--cold)
      scripts/mpirun.sh -n "$np" "$load" "$f" "$repeat" "${extra[@]}"
    done
  done
done
echo '```'
echo
echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
