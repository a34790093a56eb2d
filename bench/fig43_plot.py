#!/usr/bin/env python3
"""Plot the table of bench_fig43 (bench/fig43.c) as the node-aware paper's
Figure 4.3: one panel per (messages, destination nodes) and duplicates, the
modeled time against the message size on log-log axes, one line per strategy
and path, the lowest line at each size marked with a circle (standard-merged,
halo's own merge of the 256 x 4 panel's messages, is drawn but not marked).

usage: fig43_plot.py TABLE PNG      plot
       fig43_plot.py TABLE --summary   print the fastest strategy and path by size
"""
import sys
from collections import defaultdict

LABEL = {
    ("standard", "staged"): "Standard, staged",
    ("standard", "mpi-device"): "Standard, device-aware",
    ("2step", "staged"): "2-Step, staged",
    ("2step", "mpi-device"): "2-Step, device-aware",
    ("3step", "staged"): "3-Step, staged",
    ("3step", "mpi-device"): "3-Step, device-aware",
    ("split+md", "staged"): "Split+MD",
    ("split+dd", "ipc"): "Split+DD",
    ("standard-merged", "staged"): "Standard merged (halo), staged",
    ("standard-merged", "mpi-device"): "Standard merged (halo), device-aware",
}
COLOR = {"standard": "tab:blue", "2step": "tab:orange", "3step": "tab:green",
         "split+md": "tab:red", "split+dd": "tab:purple", "standard-merged": "tab:gray"}
PANELS = ["32msgs-4nodes", "256msgs-4nodes", "32msgs-16nodes", "256msgs-16nodes"]


def load(path):
    """{(panel, dup): {(strategy, path): [(bytes, seconds)]}}"""
    data = defaultdict(lambda: defaultdict(list))
    for line in open(path):
        if line.startswith("#") or line.startswith("panel") or not line.strip():
            continue
        f = line.split()
        data[(f[0], int(f[1]))][(f[2], f[3])].append((int(f[4]), float(f[5])))
    return data


def minima(lines):
    """{bytes: (strategy, path)} of the lowest time, standard-merged left out."""
    best = {}
    for key, pts in lines.items():
        if key[0] == "standard-merged":
            continue
        for b, t in pts:
            if b not in best or t < best[b][1]:
                best[b] = (key, t)
    return {b: k for b, (k, t) in best.items()}


def human(b):
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n:
            return f"{b // n} {unit}"
    return f"{b} B"


def summary(data):
    for panel in PANELS:
        for dup in (0, 25):
            if (panel, dup) not in data:
                continue
            best = minima(data[(panel, dup)])
            runs, prev = [], None
            for b in sorted(best):
                if best[b] != prev:
                    runs.append([b, b, best[b]])
                    prev = best[b]
                else:
                    runs[-1][1] = b
            parts = [f"{human(lo)}-{human(hi)}: {LABEL[k]}" if lo != hi else f"{human(lo)}: {LABEL[k]}"
                     for lo, hi, k in runs]
            print(f"{panel} dup {dup}%: " + "; ".join(parts))


def plot(data, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(20, 9.5), sharex=True)
    handles = {}
    for col, panel in enumerate(PANELS):
        m, n = panel.replace("msgs", "").replace("nodes", "").split("-")
        for row, dup in enumerate((0, 25)):
            ax = axes[row][col]
            lines = data.get((panel, dup), {})
            best = minima(lines)
            for key in LABEL:
                if key not in lines:
                    continue
                pts = sorted(lines[key])
                xs, ys = [p[0] for p in pts], [p[1] for p in pts]
                merged = key[0] == "standard-merged"
                h, = ax.plot(xs, ys, color=COLOR[key[0]],
                             linestyle="--" if key[1] == "mpi-device" else "-",
                             linewidth=0.8 if merged else 1.6, alpha=0.6 if merged else 1.0,
                             marker="" if merged else ".", markersize=3)
                handles[LABEL[key]] = h
                mx = [b for b in xs if best.get(b) == key]
                my = [t for b, t in pts if best.get(b) == key]
                ax.plot(mx, my, linestyle="", marker="o", markersize=10, markerfacecolor="none",
                        markeredgecolor=COLOR[key[0]], markeredgewidth=1.6)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
            ax.set_title(f"{m} inter-node messages to {n} nodes, "
                         f"{'25 % duplicate data' if dup else 'no duplicate data'}", fontsize=10)
            if row == 1:
                ax.set_xlabel("message size (bytes, standard communication)")
            if col == 0:
                ax.set_ylabel("modeled time (s)")
    circle, = axes[0][0].plot([], [], linestyle="", marker="o", markersize=10,
                              markerfacecolor="none", markeredgecolor="black")
    handles["fastest at that size (circle in its line's color)"] = circle
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=6,
               fontsize=9, frameon=False)
    fig.suptitle("halo's model of the node-aware paper's Figure 4.3 (lassen parameters): "
                 "one node of 4 GPUs sending to 4 or 16 nodes", fontsize=12)
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    fig.savefig(png, dpi=110)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    data = load(sys.argv[1])
    if sys.argv[2] == "--summary":
        summary(data)
    else:
        plot(data, sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
