#!/usr/bin/env bash
# halo params: measure a set at NP ranks (sizes up to 64 KiB, 3 round trips
# each), check the file with halo params show and against the report, and the
# file halo params measure writes on stdout without -o.
# usage: cli_params.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" OUTDIR NP [OPTIONS...]
set -u
halo=$1 launcher=$2 flags=$3 out=$4 np=$5
shift 5
mkdir -p "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
file=$out/measured.txt
rm -f "$file"
# shellcheck disable=SC2086
$launcher "$np" $flags "$halo" params measure --max-bytes 65536 --iterations 3 -o "$file" "$@" \
  >"$out/report.txt" 2>&1 || { cat "$out/report.txt"; fail "halo params measure $* (np $np) failed"; }
[ -s "$file" ] || fail "no file written"
grep -q "cpu.\*.on_socket\|cpu.\*.off_node" "$out/report.txt" || { cat "$out/report.txt"; fail "no fit in the report"; }
grep -q "wrote $file" "$out/report.txt" || fail "the report does not say where the file went"
# the file parses, and reads back to what it says
"$halo" params show "$file" >"$out/show.txt" 2>&1 || { cat "$out/show.txt"; fail "halo params show $file failed"; }
grep -q "^name = measured$" "$out/show.txt" || fail "show: no 'name = measured'"
grep -v '^#' "$file" >"$out/keys.txt"
grep -v '^#' "$out/show.txt" | diff - "$out/keys.txt" >/dev/null || fail "show gives other values than the file holds"
n_keys=$(grep -c ' = ' "$out/keys.txt")
# 44 keys; 2 more each for rma.* and neighbor.* (2 ranks or more; neighbor where the MPI has
# it), ipc.* and nvshmem.* (GPUs)
n_opt=0
for k in rma neighbor ipc nvshmem; do grep -q "^$k\.alpha = " "$out/keys.txt" && n_opt=$((n_opt + 2)); done
grep -q "^rma\.alpha = " "$out/keys.txt" || fail "no rma.* in the file (measured with 2 ranks or more)"
[ "$n_keys" -eq $((44 + n_opt)) ] || fail "the file holds $n_keys keys, not $((44 + n_opt))"
# what was not measured says where it came from, next to its keys
grep -q "^# gpu\.\*: \|^# gpu\.\*\.[a-z_]*: " "$file" || fail "no note on the gpu keys"
grep -q "^# short_max, eager_max: " "$file" || fail "no note on the protocol switches"
if grep -q "injection.beta: from" "$out/report.txt"; then
  grep -B1 "^injection.beta" "$file" | grep -q "^# injection.beta: from" || fail "no note next to injection.beta"
else
  grep -q "injection.beta = " "$out/report.txt" || fail "injection neither measured nor from the base set"
fi
# on stdout without -o: the report as '#' lines, and a file that parses
# shellcheck disable=SC2086
$launcher "$np" $flags "$halo" params measure --max-bytes 4096 --min-bytes 64 --short-max 128 \
  --eager-max 1024 --iterations 2 --name stdout-set --base "$file" "$@" >"$out/stdout.txt" \
  2>"$out/stdout.err" || { cat "$out/stdout.err"; fail "measure to stdout failed"; }
"$halo" params show "$out/stdout.txt" >"$out/show2.txt" 2>&1 || { cat "$out/show2.txt"; fail "the set written on stdout does not parse"; }
grep -q "^name = stdout-set$" "$out/show2.txt" || fail "--name not used"
grep -q "^eager_max = 1024$" "$out/show2.txt" || fail "--eager-max not used"
grep -q "^# cpu\.\*\.[a-z_]*: ping-pong of ranks 0 and" "$out/stdout.txt" || fail "no report lines in '#'"
# --save: the machine's file, its directories made, where a plan looks for it
rm -rf "$out/cache"
# shellcheck disable=SC2086
XDG_CACHE_HOME=$out/cache/x $launcher "$np" $flags "$halo" params measure \
  --max-bytes 65536 --iterations 2 --name saved --save "$@" >"$out/save.txt" 2>&1 ||
  { cat "$out/save.txt"; fail "measure --save failed"; }
saved=$(ls "$out"/cache/x/halo/params-* 2>/dev/null)
[ -n "$saved" ] || fail "--save wrote no file under XDG_CACHE_HOME/halo"
grep -q "wrote $saved" "$out/save.txt" || fail "--save: the report does not name $saved"
"$halo" params show "$saved" | grep -q "^name = saved$" || fail "--save: the file does not parse"
# shellcheck disable=SC2086
XDG_CACHE_HOME=$out/cache/x $launcher "$np" $flags "$halo" spmv --gen lap3d27:8 \
  --strategy auto --autotune model "$@" >"$out/spmv.txt" 2>&1 || { cat "$out/spmv.txt"; fail "spmv failed"; }
grep -q "(parameters saved)" "$out/spmv.txt" || { cat "$out/spmv.txt"; fail "auto did not take the machine's file"; }
exit 0
