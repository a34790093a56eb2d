#!/usr/bin/env python3
"""The default plan against the fastest plan of each case (issue 15, item 2).

Reads the JSON reports of `halo spmv --strategy all,auto --transport all`
(device memory) or `--strategy all,auto` (host memory) given on the command
line. In each, the default plan is the row of strategy auto with the
transport free (its candidates span several transports; on the host the one
auto row); the fastest is the concrete row (every strategy x transport of
the run) of lowest SpMV time. Prints a table and the counts the issue's
target asks for: default within 5 % of the fastest, and never worse than
1.25x. `default us` is the default plan's own row; `same plan us` is the
concrete row of the strategy, transport and message_cap it chose, timed in
the same run (the same plan, so the two differ by noise alone)."""
import json
import os
import sys


def transports_of(describe):
    cands = describe.split(": ", 2)[-1]
    return {c.strip().lstrip("*").split("/")[1].split(" ")[0] for c in cands.split(", ") if "/" in c}


def main(files):
    print("| case | ranks | default: chose | default us | same plan us | fastest | fastest us |"
          " default / fastest | same plan / fastest |")
    print("|---|---|---|---|---|---|---|---|---|")
    n = near = 0
    worst = 0.0
    misses = []
    for f in files:
        r = json.load(open(f))
        rows = r["strategies"]
        concrete = [s for s in rows if "auto" not in s]
        autos = [s for s in rows if "auto" in s]
        if not concrete or not autos:
            continue
        free = [a for a in autos if r["memory"] == "host" or len(transports_of(a["auto"])) > 1]
        if not free:
            continue
        d = free[-1]
        if all(s["exchange_s"] == 0 or not s["phases"] for s in concrete):
            continue  # one rank: nothing to choose
        best = min(concrete, key=lambda s: s["spmv_s"])
        same = [s for s in concrete if s["name"] == d["name"] and s["transport"] == d["transport"]
                and s["message_cap_used"] == d["message_cap_used"]]
        q = d["spmv_s"] / best["spmv_s"]
        qs = same[0]["spmv_s"] / best["spmv_s"] if same else float("nan")
        n += 1
        near += q <= 1.05
        worst = max(worst, q)
        case = os.path.basename(f)[:-5]
        if q > 1.05:
            misses.append((case, d["name"], d["transport"], best["name"], best["transport"], q, qs))
        how = "timed" if "timed" in d["auto"] else "model"
        print("| %s | %d | %s/%s (%s) | %.1f | %s | %s/%s | %.1f | %.3f | %s |" % (
            case, r["ranks"], d["name"], d["transport"], how, 1e6 * d["spmv_s"],
            "%.1f" % (1e6 * same[0]["spmv_s"]) if same else "-", best["name"], best["transport"],
            1e6 * best["spmv_s"], q, "%.3f" % qs if same else "-"))
    print()
    if n:
        print("default within 5 %% of the fastest: %d of %d cases (%.0f %%); worst %.3f x" %
              (near, n, 100.0 * near / n, worst))
    for m in misses:
        print("- miss: %s: default %s/%s, fastest %s/%s, %.3f x (the same plan's own row: %.3f x)" % m)


if __name__ == "__main__":
    main(sys.argv[1:])
