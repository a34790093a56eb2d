#!/usr/bin/env python3
"""Tables of the GPU SpMV runs of bench/gpu/run.sh (its JSON files).

usage: summarize.py DIR   (the json/ folder of a run, or where json.tar.gz was unpacked)

For every configuration: time per SpMV, per exchange and per local product for
each strategy and transport (medians over repeated runs of one configuration),
whether each plan gave the standard exchange's bits, and, for the 2-rank
Laplacian, the ratios the targets name: SpMV / local product of the larger half
(overlap), and SpMV against hypre's 354 us (its own kernel) and 430 us (cuSPARSE).
"""
import glob
import json
import os
import re
import statistics
import sys

HYPRE_BEST_US = 354.0


def load(folder):
    runs = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
        label = re.sub(r"_rep\d+$", "", os.path.basename(f)[:-5]).strip("_")
        runs.setdefault(label, []).append(json.load(open(f)))
    return runs


def us(x):
    return f"{1e6 * x:.1f}"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "json"
    runs = load(folder)
    for label, docs in runs.items():
        d0 = docs[0]
        m = d0["matrix"]
        print(f"\n### {label.replace('_', ' ')}\n")
        print(f"{m['name']}: {m['rows']} rows, {m['nnz']} entries; {d0['ranks']} ranks, "
              f"{d0['nodes']} node(s) of at most {d0['ranks_per_node']}; "
              f"{len(docs)} run(s) of {d0.get('iterations')} iterations"
              + (f"; medians over the runs" if len(docs) > 1 else "")
              + (f"; check error {d0['check']['max_rel_error']:.1e}" if "check" in d0 else ""))
        print()
        print("| strategy | transport | SpMV us | exchange us | local us | SpMV / local | "
              "inter-node msgs | same as standard |")
        print("|---|---|---|---|---|---|---|---|")
        keys = [(s["name"], s["transport"]) for s in d0["strategies"]]
        best = None
        for name, tr in keys:
            rows = [next(s for s in d["strategies"] if s["name"] == name and s["transport"] == tr)
                    for d in docs]
            t = statistics.median(r["spmv_s"] for r in rows)
            e = statistics.median(r["exchange_s"] for r in rows)
            loc = statistics.median(r["local_s"] for r in rows)
            inter = sum(p["inter_node_messages"] for p in rows[0]["phases"])
            same = all(r.get("identical_to_standard") for r in rows)
            print(f"| {name} | {tr} | {us(t)} | {us(e)} | {us(loc)} | {t / loc:.3f} | {inter} | "
                  f"{'yes' if same else 'NO'} |")
            if best is None or t < best[0]:
                best = (t, name, tr, loc)
        if "lap" in label and d0["ranks"] == 2 and "1 GPU" not in label.replace("_", " "):
            t, name, tr, loc = best
            print(f"\nfastest: {name} / {tr}: {us(t)} us per SpMV; SpMV / local product = "
                  f"{t / loc:.3f} (target <= 1.05); against hypre's best {HYPRE_BEST_US:.0f} us: "
                  f"{1e6 * t / HYPRE_BEST_US:.2f}x (target <= 0.75)")
            auto = [s for s in d0["strategies"] if s["transport"] == "nccl"]
            if auto:
                a = min(statistics.median(next(s for s in d["strategies"] if s["name"] == x["name"]
                                               and s["transport"] == "nccl")["spmv_s"] for d in docs)
                        for x in auto)
                print(f"auto (nccl here, one rank per GPU): best {us(a)} us, "
                      f"{1e6 * a / HYPRE_BEST_US:.2f}x hypre's best")


if __name__ == "__main__":
    main()
