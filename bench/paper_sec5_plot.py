#!/usr/bin/env python3
"""The node-aware paper's Section 5 benchmark from halo spmv's JSON reports:
markdown tables and a chart like its Figure 5.1.

usage: paper_sec5_plot.py JSONDIR [OUT.png]

Reads every JSONDIR/*.json written by `halo spmv --json` (bench/paper-sec5.sh
and bench/gpu/run.sh write them), one report per matrix and layout. Prints,
per report, a markdown table: every plan (strategy and path: host, or the
device transport) with its communication time (exchange_s: the exchange
alone, each rank's mean over the iterations, the maximum over ranks, the
paper's measure), its SpMV time, its inter-node messages and bytes and the
bytes of all its messages, on-node phases included (sums over the plan's
phases), and whether it gave standard's ghosts and product bit for bit. Rows of strategy auto (given with
--strategy all,auto) are listed as "auto: CHOICE" and left out of the chart.

With OUT.png, draws the chart: one group of bars per report, one bar per
strategy and path (colour: strategy; hatching: path), the communication time
on a log axis; under each group the matrix, the layout, the inter-node volume
of standard and the receiving nodes ("recv nodes": the most nodes any one
node sends to, the inter-node messages per node of 3-Step, which sends one
message per pair of nodes; the number of nodes where the report has no 3-Step
plan). Needs matplotlib (Debian: python3-matplotlib).
"""
import glob
import json
import os
import sys

STRATEGIES = ["standard", "2step", "3step", "split"]
PATHS = ["host", "staged", "nccl", "ipc", "mpi-device"]
COLOR = {"standard": "tab:blue", "2step": "tab:orange", "3step": "tab:green",
         "split": "tab:red"}
HATCH = {"host": "", "staged": "", "nccl": "//", "ipc": "..", "mpi-device": "xx"}
ALPHA = {"host": 1.0, "staged": 1.0, "nccl": 0.75, "ipc": 0.5, "mpi-device": 0.35}


def load(folder):
    """[(file label, report)], sorted by matrix rows, then ranks and nodes."""
    runs = []
    for f in glob.glob(os.path.join(folder, "*.json")):
        with open(f) as fh:
            runs.append((os.path.basename(f), json.load(fh)))
    runs.sort(key=lambda r: (r[1]["matrix"]["rows"], r[1]["matrix"]["name"],
                             r[1]["memory"], r[1]["ranks"], r[1]["nodes"], r[0]))
    return runs


def plans(report):
    """The concrete plans (no auto rows), in strategy and path order."""
    rows = [s for s in report["strategies"] if "auto" not in s]

    def key(s):
        return (PATHS.index(s["transport"]) if s["transport"] in PATHS else len(PATHS),
                STRATEGIES.index(s["name"]) if s["name"] in STRATEGIES else len(STRATEGIES),
                s["message_cap_used"])
    return sorted(rows, key=key)


def inter(plan):
    """(inter-node messages, inter-node bytes) of a plan, summed over its phases."""
    return (sum(p["inter_node_messages"] for p in plan["phases"]),
            sum(p["inter_node_bytes"] for p in plan["phases"]))


def total_bytes(plan):
    """Bytes of every message of a plan, on-node phases included."""
    return sum(p["bytes"] for p in plan["phases"])


def standard_volume(report):
    """Inter-node bytes of standard (host path first; every path has the same)."""
    for s in plans(report):
        if s["name"] == "standard":
            return inter(s)[1]
    return None


def recv_nodes(report):
    """(the most nodes one node sends to, True), from the 3-Step plan's inter-node
    messages per node; (the number of nodes, False) where there is no 3-Step plan."""
    for s in plans(report):
        if s["name"] == "3step":
            return max([p.get("max_inter_node_messages_per_node", 0) for p in s["phases"]]
                       + [0]), True
    return report["nodes"], False


def auto_free(plan):
    """Whether auto chose the path too (its candidates span several paths)."""
    cands = plan["auto"].split(": ", 2)[-1].split(", ")
    return len({c.split("/")[1].split(" ")[0] for c in cands if "/" in c}) > 1


def layout(report, short=False):
    units = "GPUs" if report["memory"] == "device" else "ranks"
    n, k = report["ranks"], report["ranks_per_node"]
    if short:
        return f"{n} {units}, {report['nodes']} nodes"
    nodes = f"{report['nodes']} node" + ("s" if report["nodes"] != 1 else "")
    return f"{n} {'GPU ranks' if units == 'GPUs' else 'ranks'}, {nodes} of {k}"


def human_bytes(b):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b} B"


def us(x):
    return f"{1e6 * x:.1f}" if x < 1e-3 else f"{1e6 * x:.0f}"


def plan_label(plan, report):
    cap = ""
    if plan["name"] == "split" and plan["message_cap_used"] != report["message_cap"]:
        cap = f" (cap {plan['message_cap_used']})"
    return plan["name"] + cap


def tables(runs):
    for label, r in runs:
        m = r["matrix"]
        vol = standard_volume(r)
        rn, exact = recv_nodes(r)
        print(f"\n### {m['name']}, {layout(r)} ({r['memory']} memory)\n")
        print(f"{m['rows']} rows, {m['nnz']} entries; {r.get('iterations')} iterations after "
              f"{r.get('warmup')} untimed; inter-node volume of standard "
              f"{vol if vol is not None else '-'} bytes; "
              + (f"recv nodes {rn}" if exact else f"nodes {rn} (no 3-Step plan)")
              + f"; file `{label}`\n")
        print("| strategy | path | communication (exchange) us | SpMV us | inter-node msgs | "
              "inter-node bytes | all bytes | same as standard |")
        print("|---|---|---|---|---|---|---|---|")
        ps = plans(r)
        for s in ps:
            msgs, b = inter(s)
            print(f"| {plan_label(s, r)} | {s['transport']} | {us(s['exchange_s'])} | "
                  f"{us(s['spmv_s'])} | {msgs} | {b} | {total_bytes(s)} | "
                  f"{'yes' if s.get('identical_to_standard') else 'NO'} |")
        for a in (s for s in r["strategies"] if "auto" in s):
            msgs, b = inter(a)
            print(f"| auto{' (any path)' if auto_free(a) else ''}: {plan_label(a, r)} | {a['transport']} | {us(a['exchange_s'])} | "
                  f"{us(a['spmv_s'])} | {msgs} | {b} | {total_bytes(a)} | "
                  f"{'yes' if a.get('identical_to_standard') else 'NO'} |")
        if ps:
            best = min(ps, key=lambda s: s["exchange_s"])
            std = [s for s in ps if s["name"] == "standard" and s["transport"] == best["transport"]]
            ratio = (f", {std[0]['exchange_s'] / best['exchange_s']:.2f}x faster than standard "
                     f"on {best['transport']}" if std and best["name"] != "standard" else "")
            print(f"\nfastest communication: {plan_label(best, r)} / {best['transport']} "
                  f"{us(best['exchange_s'])} us{ratio}")


def chart(runs, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    keys = []  # every (strategy, path) of any report, in order
    for _, r in runs:
        for s in plans(r):
            k = (s["name"], s["transport"])
            if k not in keys:
                keys.append(k)
    keys.sort(key=lambda k: (PATHS.index(k[1]) if k[1] in PATHS else len(PATHS),
                             STRATEGIES.index(k[0]) if k[0] in STRATEGIES else len(STRATEGIES)))
    width = 0.8 / max(len(keys), 1)
    fig, ax = plt.subplots(figsize=(max(8.0, len(runs) * max(0.85, 0.1 * len(keys)) + 1.5), 5.2))
    layouts = {layout(r, short=True) for _, r in runs}
    common = layouts.pop() if len(layouts) == 1 else None  # said once, in the title
    ticks, names = [], []
    for g, (_, r) in enumerate(runs):
        by_key = {}
        for s in plans(r):  # one per (strategy, path); else the one of the smallest cap
            by_key.setdefault((s["name"], s["transport"]), s)
        for i, k in enumerate(keys):
            s = by_key.get(k)
            if s is None or s["exchange_s"] <= 0:
                continue
            ax.bar(g + (i - (len(keys) - 1) / 2) * width, s["exchange_s"], width,
                   color=COLOR.get(k[0], "tab:gray"), alpha=ALPHA.get(k[1], 1.0),
                   hatch=HATCH.get(k[1], ""), edgecolor="black", linewidth=0.4)
        vol = standard_volume(r)
        rn, exact = recv_nodes(r)
        ticks.append(g)
        names.append(f"{r['matrix']['name'].replace('.mtx', '')}\n"
                     + ("" if common else f"{layout(r, short=True)}\n")
                     + f"vol {human_bytes(vol) if vol is not None else '-'}\n"
                     + (f"recv nodes {rn}" if exact else f"nodes {rn}"))
    ax.set_yscale("log")
    ax.set_ylabel("communication time per exchange (s)")
    ax.set_xticks(ticks)
    ax.set_xticklabels(names, fontsize=7)
    ax.set_xlim(-0.6, len(runs) - 0.4)
    ax.grid(axis="y", which="major", linestyle=":", linewidth=0.5)
    handles = [Patch(facecolor=COLOR.get(k[0], "tab:gray"), alpha=ALPHA.get(k[1], 1.0),
                     hatch=HATCH.get(k[1], ""), edgecolor="black", linewidth=0.4,
                     label=f"{k[0]} / {k[1]}") for k in keys]
    ax.legend(handles=handles, fontsize=7, ncol=min(len(keys), 6), loc="upper left",
              bbox_to_anchor=(0, 1.02 + 0.045 * ((len(keys) - 1) // 6 + 1)), frameon=False)
    mem = {r["memory"] for _, r in runs}
    ax.set_title("halo spmv: exchange time per strategy and path, max over ranks of each "
                 f"rank's mean ({', '.join(sorted(mem))} memory"
                 + (f"; {common}" if common else "") + ")", fontsize=9,
                 pad=14 + 11 * ((len(keys) - 1) // 6 + 1))
    fig.tight_layout()
    fig.savefig(png, dpi=130)


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    runs = load(sys.argv[1])
    if not runs:
        sys.exit(f"paper_sec5_plot.py: no *.json in {sys.argv[1]}")
    tables(runs)
    if len(sys.argv) == 3:
        chart(runs, sys.argv[2])


if __name__ == "__main__":
    main()
