#!/usr/bin/env bash
# The simulator on the bundled matrices at 64 nodes x 4 ranks and 1024 nodes x
# 4 ranks: inter-node messages and bytes per node of every strategy, and the
# reduction against standard; then the time the simulator takes for 4096
# ranks of a 10^6-row 27-point Laplacian (median of REPEAT runs).
# Prints a Markdown report. usage: bench/simulate.sh [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
scripts/setup.sh >/dev/null
out=$(mktemp -d)
halo=build/tools/halo
echo "# Simulator: node-aware strategies at scale"
echo
echo "- command: \`bench/simulate.sh $repeat\`"
echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with local changes)')"
echo "- machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), $(free -g | awk '/Mem:/{print $2}') GiB, $(. /etc/os-release; echo "$PRETTY_NAME")"
echo "- date: $(date -u +%Y-%m-%d)"
echo
echo "Statistics of \`halo simulate --matrix M --ranks P --ranks-per-node 4\` (rows"
echo "partition, message_cap 16384 bytes, duplicate removal on). *max msgs/node*: the most"
echo "inter-node messages one node sends in the global phase; *reduction*: standard's divided"
echo "by the strategy's. *inter MB*: inter-node megabytes of all nodes."
for nodes in 64 1024; do
  P=$((nodes * 4))
  for m in matrices/*.mtx; do
    $halo simulate --matrix "$m" --ranks $P --ranks-per-node 4 --quiet --json "$out/$(basename "$m" .mtx)_$P.json"
  done
  echo
  echo "## $nodes nodes x 4 ranks ($P ranks)"
  echo
  python3 - "$out" "$P" <<'PY'
import glob, json, os, sys
out, P = sys.argv[1], sys.argv[2]
print("| matrix | rows | standard max msgs/node | 2step | 3step | split | reduction 2step / 3step / split | standard inter MB | node-aware inter MB |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(f"{out}/*_{P}.json")):
    d = json.load(open(f))
    s = {x["name"]: x for x in d["strategies"]}
    def g(name):
        ph = [p for p in s[name]["phases"] if p["scope"] == "global"][0]
        return ph["max_inter_node_messages_per_node"], sum(p["inter_node_bytes"] for p in s[name]["phases"])
    std = g("standard")
    row = [g(n) for n in ("2step", "3step", "split")]
    red = " / ".join(f"{std[0] / r[0]:.1f}x" if r[0] else "-" for r in row)
    print(f"| {d['matrix']['name']} | {d['matrix']['rows']} | {std[0]} | {row[0][0]} | {row[1][0]} | {row[2][0]} | {red} | {std[1] / 1e6:.3f} | {row[1][1] / 1e6:.3f} |")
PY
done
echo
echo "## Simulator time: 27-point Laplacian, 10^6 rows, 4096 ranks, 1024 nodes x 4"
echo
for i in $(seq "$repeat"); do
  /usr/bin/time -f "%e %M" -o "$out/time_$i" $halo simulate --gen lap3d27:100 --ranks 4096 \
    --ranks-per-node 4 --quiet --json "$out/lap_$i.json"
done
python3 - "$out" "$repeat" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
wall = [float(open(f"{out}/time_{i}").read().split()[0]) for i in range(1, n + 1)]
rss = [int(open(f"{out}/time_{i}").read().split()[1]) for i in range(1, n + 1)]
docs = [json.load(open(f"{out}/lap_{i}.json")) for i in range(1, n + 1)]
print(f"`halo simulate --gen lap3d27:100 --ranks 4096 --ranks-per-node 4`, {n} runs: whole command (generate the")
print(f"matrix, build 4096 patterns, simulate 4 strategies) median {statistics.median(wall):.2f} s (min {min(wall):.2f}, max {max(wall):.2f});")
print(f"peak memory {max(rss) / 1024:.0f} MB.")
print()
print("| step | median (s) |")
print("|---|---|")
print(f"| generate the matrix | {statistics.median(d['load_s'] for d in docs):.3f} |")
print(f"| patterns of 4096 ranks | {statistics.median(d['patterns_s'] for d in docs):.3f} |")
for k, name in enumerate(("standard", "2step", "3step", "split")):
    print(f"| {name} schedules and statistics | {statistics.median(d['strategies'][k]['simulate_s'] for d in docs):.3f} |")
d = docs[0]
print()
print("| strategy | messages | inter-node messages | max inter msgs/node | inter-node MB |")
print("|---|---|---|---|---|")
for st in d["strategies"]:
    g = [p for p in st["phases"] if p["scope"] == "global"][0]
    print(f"| {st['name']} | {sum(p['messages'] for p in st['phases'])} | {sum(p['inter_node_messages'] for p in st['phases'])} | {g['max_inter_node_messages_per_node']} | {sum(p['inter_node_bytes'] for p in st['phases']) / 1e6:.2f} |")
PY
rm -rf "$out"
