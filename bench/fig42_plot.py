#!/usr/bin/env python3
"""The node-aware paper's Figure 4.2 for halo: modeled against measured
exchange time of every plan of real runs, one panel per machine.

usage: fig42_plot.py OUT.png LABEL=JSONDIR [LABEL=JSONDIR ...]

Each JSONDIR holds reports of `halo spmv --params FILE --strategy all[,auto]
--json` (bench/model.sh, bench/gpu/run.sh multi). A point per concrete plan
(auto's rows are left out: they repeat a plan): x the measured exchange (the
maximum over ranks of each rank's mean), y the modeled one; colour by
strategy, marker by transport. Plans without messages (one rank) are left out.
Prints, per panel, the median and range of modeled / measured per transport.
"""
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"standard": "tab:blue", "2step": "tab:orange", "3step": "tab:green",
          "split": "tab:red"}
MARKERS = {"host": "o", "staged": "s", "nccl": "^", "ipc": "D", "mpi-device": "v"}


def points(folder):
    out = []
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".json"):
            continue
        r = json.load(open(os.path.join(folder, f)))
        for s in r["strategies"]:
            if "auto" in s or not s.get("modeled"):
                continue
            m = s["modeled"][0]["exchange_s"]
            if m <= 0 or s["exchange_s"] <= 0:
                continue
            out.append((s["name"], s["transport"], s["exchange_s"], m))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    panels = [a.split("=", 1) for a in sys.argv[2:]]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 5.5), squeeze=False)
    for ax, (label, folder) in zip(axes[0], panels):
        pts = points(folder)
        if not pts:
            sys.exit(f"{folder}: no plans with a modeled time")
        for name, tr, meas, mod in pts:
            ax.scatter(1e6 * meas, 1e6 * mod, c=COLORS.get(name, "k"),
                       marker=MARKERS.get(tr, "x"), s=28, alpha=0.8)
        lo = min(min(p[2], p[3]) for p in pts) * 1e6 / 1.5
        hi = max(max(p[2], p[3]) for p in pts) * 1e6 * 1.5
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax.plot([lo, hi], [lo / 2, hi / 2], "k:", lw=0.6)
        ax.plot([lo, hi], [lo * 2, hi * 2], "k:", lw=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_xlabel("measured exchange (us)")
        ax.set_ylabel("modeled exchange (us)")
        ax.set_title(f"{label}: {len(pts)} plans")
        ax.grid(True, which="both", lw=0.3)
        print(f"{label}: {len(pts)} plans")
        for tr in sorted({p[1] for p in pts}):
            r = [p[3] / p[2] for p in pts if p[1] == tr]
            print(f"  {tr:8s} model / measured: median {statistics.median(r):.2f}, "
                  f"{min(r):.2f} to {max(r):.2f} ({len(r)} plans)")
    handles = [plt.Line2D([], [], color=c, marker="o", ls="", label=n) for n, c in COLORS.items()]
    handles += [plt.Line2D([], [], color="gray", marker=m, ls="", label=t)
                for t, m in MARKERS.items()]
    handles += [plt.Line2D([], [], color="k", lw=0.8, label="model = measured"),
                plt.Line2D([], [], color="k", ls=":", lw=0.6, label="factor 2")]
    fig.legend(handles=handles, loc="lower center", ncol=6, fontsize=8)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
