#!/usr/bin/env python3
"""Summary of bench/neighbor_compare.sh's output (case, ranks, method, microseconds per
exchange): per case, halo's best plan against MPI Advance's standard and locality-aware
persistent neighbor all-to-all, and Open MPI's own (halo's neighbor transport, standard)."""
import statistics
import sys
from collections import defaultdict

t = defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) != 4:
        continue
    if f[3].startswith("skipped"):
        continue
    t[(f[0].split("/")[-1], int(f[1]))][f[2]] = float(f[3])
print("| matrix | ranks | halo best (us) | plan | halo standard/host | halo standard/neighbor |"
      " mpil-standard | mpil-locality | best / mpil-standard | best / mpil-locality |")
print("|---|---|---|---|---|---|---|---|---|---|")
r_std, r_loc, worse = [], [], []
for key in sorted(t):
    d = t[key]
    halo = {k: v for k, v in d.items() if k.startswith("halo ")}
    best = min(halo, key=halo.get)
    loc = d.get("mpil-locality", float("nan"))
    a, b = halo[best] / d["mpil-standard"], halo[best] / loc
    r_std.append(a)
    if loc == loc:
        r_loc.append(b)
    if a > 1.0 or b > 1.0:
        worse.append((key, a, b))
    print(f"| {key[0]} | {key[1]} | {halo[best]:.2f} | {best[5:]} | {d['halo standard/host']:.2f} |"
          f" {d['halo standard/neighbor']:.2f} | {d['mpil-standard']:.2f} |"
          f" {loc:.2f} | {a:.2f} | {b:.2f} |".replace("nan", "-"))
print()
print(f"halo's best / mpil-standard: median {statistics.median(r_std):.2f}, max {max(r_std):.2f};"
      f" / mpil-locality: median {statistics.median(r_loc):.2f}, max {max(r_loc):.2f}"
      f" over {len(r_std)} cases ({len(r_loc)} with mpil-locality); slower than either in {len(worse)}: "
      + ", ".join(f"{k[0]}@{k[1]} ({a:.2f}, {b:.2f})" for k, a, b in worse))
