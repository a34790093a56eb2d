#!/usr/bin/env bash
# The node-aware paper's Figure 4.3 with halo's model (lassen parameters):
# build bench_fig43, write its table to bench/results/fig43-model-lassen.txt
# and plot bench/results/fig43-model-lassen.png (Debian's python3-matplotlib,
# installed when missing); print which strategy and path is fastest by size.
#
#   bench/fig43.sh [ARGS...]    ARGS go to bench_fig43 (see bench_fig43 --help)
# Environment: BUILD_DIR (default build), OUT (default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
out=${OUT:-bench/results}
BUILD_DIR=$build scripts/setup.sh >/dev/null
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-matplotlib >/dev/null
fi
mkdir -p "$out"
table=$out/fig43-model-lassen.txt
"$build/bench/bench_fig43" --params lassen "$@" >"$table"
/usr/bin/python3 bench/fig43_plot.py "$table" "$out/fig43-model-lassen.png"
echo "wrote $table and $out/fig43-model-lassen.png"
/usr/bin/python3 bench/fig43_plot.py "$table" --summary
