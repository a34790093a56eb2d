#!/usr/bin/env bash
# Foundation benchmark on the host: the 27-point Laplacian with 10^6 rows at
# 2 ranks (load, matrix split, plan set-up, time per SpMV and per exchange,
# medians of REPEAT runs), the Matrix Market load time of a 10^7-entry file,
# and the --check error of every bundled matrix at 1, 2, 3, 4 and 8 ranks.
# Prints a Markdown report. usage: bench/foundation.sh [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-5}
scripts/setup.sh >/dev/null
out=$(mktemp -d)
halo=build/tools/halo
echo "# Foundation benchmark (host)"
echo
echo "- command: \`bench/foundation.sh $repeat\`"
echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with local changes)')"
echo "- machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), $(free -g | awk '/Mem:/{print $2}') GiB, $(. /etc/os-release; echo "$PRETTY_NAME"), $(mpirun --version 2>&1 | head -1)"
echo "- date: $(date -u +%Y-%m-%d)"
echo
echo "## 27-point Laplacian, 10^6 rows, 2 ranks"
echo
for i in $(seq "$repeat"); do
  scripts/mpirun.sh -n 2 $halo spmv --gen lap3d27:100 --iterations 100 --warmup 10 --check \
    --quiet --json "$out/lap_$i.json"
done
python3 - "$out" "$repeat" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
docs = [json.load(open(f"{out}/lap_{i}.json")) for i in range(1, n + 1)]
def med(f): return statistics.median(f(d) for d in docs)
s = lambda d: d["strategies"][0]
print(f"{n} runs of `scripts/mpirun.sh -n 2 build/tools/halo spmv --gen lap3d27:100 --iterations 100 --warmup 10 --check`; medians (min - max):")
print()
print("| quantity | median | min | max |")
print("|---|---|---|---|")
rows = [("generate rows (s)", lambda d: d["load_s"]), ("matrix split (s)", lambda d: d["matrix_s"]),
        ("plan set-up (s)", lambda d: s(d)["setup_s"]), ("SpMV (s)", lambda d: s(d)["spmv_s"]),
        ("exchange alone (s)", lambda d: s(d)["exchange_s"])]
for name, f in rows:
    v = [f(d) for d in docs]
    print(f"| {name} | {statistics.median(v):.3e} | {min(v):.3e} | {max(v):.3e} |")
d = docs[0]
p = s(d)["phases"][0]
print()
print(f"matrix {d['matrix']['rows']} rows, {d['matrix']['nnz']} entries; {p['messages']} messages, {p['bytes']} bytes per exchange; "
      f"max relative error {max(x['check']['max_rel_error'] for x in docs):.2e}")
print(f"exchange / SpMV (medians): {med(lambda d: s(d)['exchange_s']) / med(lambda d: s(d)['spmv_s']):.4f}")
PY
echo
echo "## Matrix Market load time"
echo
f=$out/irregular_1e6.mtx
echo "\`build/bench/bench_mm_load irregular:1000000,1 FILE $repeat\` (irregular 10^6 rows, written by halo_mm_write with %.17g values):"
echo
build/bench/bench_mm_load irregular:1000000,1 "$f" "$repeat"
rm -f "$f"
echo
echo "## --check on every bundled matrix"
echo
echo "Largest entrywise error |y_i - ref_i| / sum_j |a_ij x_j| of \`halo spmv --check --partition rows\` (tolerance 1e-12):"
echo
ranks="1 2 3 4 8"
printf "| matrix |"; for n in $ranks; do printf " %s ranks |" "$n"; done; echo
printf "|---|"; for n in $ranks; do printf -- "---|"; done; echo
for m in matrices/*.mtx; do
  printf "| %s |" "$(basename "$m" .mtx)"
  for n in $ranks; do
    scripts/mpirun.sh -n "$n" $halo spmv --matrix "$m" --check --iterations 1 --warmup 0 --quiet \
      --json "$out/c.json"
    printf " %s |" "$(python3 -c "import json;print('%.1e' % json.load(open('$out/c.json'))['check']['max_rel_error'])")"
  done
  echo
done
rm -rf "$out"
