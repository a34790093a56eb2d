#!/usr/bin/env python3
"""Summarize bench/model.sh: per run, every plan's modeled and measured
exchange time and their ratio; auto's choice against the fastest measured
plan (within 10 %?), among the plans of its transport where auto was given
one, else among all: the measured time of the plan auto chose is taken from
the same run's row of that strategy, transport and message_cap (so that the
two are measured side by side), or from auto's own row where no row
matches. Reads the JSON reports of halo spmv --params."""
import json
import os
import statistics
import sys


def main(d):
    ratios = []
    cases = {False: 0, True: 0}  # auto with the transport given / free
    near = {False: 0, True: 0}
    misses = []
    print("| run | strategy | transport | measured us | modeled us | model / measured |")
    print("|---|---|---|---|---|---|")
    for f in sorted(os.listdir(d)):
        if not f.endswith(".json"):
            continue
        r = json.load(open(os.path.join(d, f)))
        run = f[:-5]
        rows = r["strategies"]
        concrete = [s for s in rows if "auto" not in s]
        auto = [s for s in rows if "auto" in s]
        for s in concrete:
            m = s["modeled"][0]["exchange_s"] if s.get("modeled") else None
            ratio = m / s["exchange_s"] if m and s["exchange_s"] > 0 else None
            if ratio:
                ratios.append(ratio)
            print("| %s | %s | %s | %.1f | %s | %s |" % (
                run, s["name"], s["transport"], 1e6 * s["exchange_s"],
                "%.1f" % (1e6 * m) if m is not None else "-",
                "%.2f" % ratio if ratio else "-"))
        for a in auto:
            # auto with a fixed transport chose the strategy only: the fastest of
            # that transport; with the transport free, the fastest of all
            cands = a["auto"].split(": ", 2)[-1]
            free = len({c.split("/")[1].split(" ")[0] for c in cands.split(", ")}) > 1
            pool = [s for s in concrete if free or s["transport"] == a["transport"]]
            if all(s.get("modeled") and s["modeled"][0]["exchange_s"] == 0 for s in pool):
                continue  # no messages (one rank): nothing to choose
            best = min(pool, key=lambda s: s["exchange_s"])
            # auto's plan as the 'all' run measured it (the same strategy, transport
            # and message_cap), else auto's own measurement
            same = [s for s in concrete if s["name"] == a["name"] and
                    s["transport"] == a["transport"] and
                    s["message_cap_used"] == a["message_cap_used"]]
            t_auto = same[0]["exchange_s"] if same else a["exchange_s"]
            q = t_auto / best["exchange_s"]
            cases[free] += 1
            near[free] += q <= 1.10
            if q > 1.10:
                misses.append((run, "transport free" if free else "transport given", a["name"],
                               a["transport"], best["name"], best["transport"], q))
            print("| %s | **auto: %s** | %s | %.1f | %.1f | fastest measured%s: %s / %s %.1f us, auto / fastest %.2f |" % (
                run, a["name"], a["transport"], 1e6 * a["exchange_s"],
                1e6 * a["modeled"][0]["exchange_s"], "" if free else " on " + a["transport"],
                best["name"], best["transport"],
                1e6 * best["exchange_s"], q))
    print()
    if ratios:
        print("model / measured over %d plans: median %.2f, min %.2f, max %.2f" % (
            len(ratios), statistics.median(ratios), min(ratios), max(ratios)))
    for free in (False, True):
        if cases[free]:
            print("auto within 10%% of the fastest measured exchange, %s: %d of %d cases (%.0f%%)" % (
                "choosing the transport too (against every plan)" if free
                else "transport given (against the plans of that transport)",
                near[free], cases[free], 100.0 * near[free] / cases[free]))
    for m in misses:
        print("  missed: %s (%s): auto %s/%s, fastest %s/%s, auto / fastest %.2f" % m)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
