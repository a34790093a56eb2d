#!/usr/bin/env bash
# halo spmv --transport all runs exactly the transports the registry says this
# build has for host memory (rows of its table), each checked against the
# standard exchange ("same as standard": yes); the build's configuration
# (halo/config.h) says which those are.
# usage: cli_transports.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" CONFIG_H OUTDIR
set -u
halo=$1 launcher=$2 flags=$3 config=$4 out=$5
mkdir -p "$out"
want="host rma"
grep -q '^#define HALO_HAVE_NEIGHBOR 1' "$config" && want="$want neighbor"
# shellcheck disable=SC2086
$launcher 2 $flags "$halo" spmv --gen lap2d:16 --transport all --strategy standard \
  --iterations 2 --warmup 0 >"$out/all.log" 2>&1 || { cat "$out/all.log"; exit 1; }
got=$(awk '/^strategy +transport +SpMV/ {t = 1; next} t && /^$/ {exit} t && $1 == "standard" {print $2}' \
  "$out/all.log" | tr '\n' ' ' | sed 's/ $//')
if [ "$got" != "$want" ]; then
  echo "FAIL: --transport all ran '$got', the build has '$want'"
  cat "$out/all.log"
  exit 1
fi
rows=$(awk '/^strategy +transport +SpMV/ {t = 1; next} t && /^$/ {exit} t && $1 == "standard" {print $NF}' \
  "$out/all.log" | sort -u)
[ "$rows" = "yes" ] || { echo "FAIL: a transport's values differ from standard's"; cat "$out/all.log"; exit 1; }
echo "1 passed, 0 failed"
