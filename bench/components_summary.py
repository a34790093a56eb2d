#!/usr/bin/env python3
"""Summary of bench/components.sh's CSV: per case (matrix, ranks), the exchange time of
neighbor against host under each strategy, and of the best plan of each transport."""
import csv
import statistics
import sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1])))
t = defaultdict(dict)  # (matrix, ranks) -> (strategy, transport) -> exchange seconds
setup = defaultdict(dict)
for r in rows:
    if r["auto"] == "true" or r["strategy"] == "auto":
        continue
    key = (r["matrix"].split("/")[-1], int(r["ranks"]))
    t[key][(r["strategy"], r["transport"])] = float(r["exchange_s"])
    setup[key][(r["strategy"], r["transport"])] = float(r["setup_s"])
    assert r["identical_to_standard"] == "true", r
strategies = ["standard", "2step", "3step", "split"]
print("| matrix | ranks | " + " | ".join(f"{s} nbr/host" for s in strategies)
      + " | best host (us) | best neighbor (us) | best rma (us) | ratio best nbr / best host |")
print("|---|---|" + "---|" * (len(strategies) + 4))
ratios, best_ratios, setup_ratios = [], [], []
for key in sorted(t):
    d = t[key]
    cells = []
    for s in strategies:
        if (s, "host") in d and (s, "neighbor") in d:
            q = d[(s, "neighbor")] / d[(s, "host")]
            ratios.append(q)
            cells.append(f"{q:.2f}")
            setup_ratios.append(setup[key][(s, "neighbor")] / setup[key][(s, "host")])
        else:
            cells.append("-")
    best = {tr: min((v for (s, x), v in d.items() if x == tr), default=float("nan"))
            for tr in ("host", "neighbor", "rma")}
    br = best["neighbor"] / best["host"]
    best_ratios.append(br)
    print(f"| {key[0]} | {key[1]} | " + " | ".join(cells)
          + f" | {1e6 * best['host']:.1f} | {1e6 * best['neighbor']:.1f} | {1e6 * best['rma']:.1f}"
          + f" | {br:.2f} |")
print()
print(f"neighbor / host, same strategy: median {statistics.median(ratios):.2f}, "
      f"min {min(ratios):.2f}, max {max(ratios):.2f} over {len(ratios)} plans; "
      f"best plan of each: median {statistics.median(best_ratios):.2f}, "
      f"min {min(best_ratios):.2f}, max {max(best_ratios):.2f} over {len(best_ratios)} cases; "
      f"set-up neighbor / host: median {statistics.median(setup_ratios):.1f}")
