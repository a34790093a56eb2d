#!/usr/bin/env python3
"""The timelines of bench/gpu/run.sh's interleaved runs (HALO_TIMELINE=1):
per run (its label) and transport, the SpMV, exchange and local times and,
per rank, when the product and the exchange's transfer were done, in us from
the exchange's start mark. Reads the run's log.txt."""
import re
import sys


def main(path):
    label, rows = None, []
    tl, table = [], []
    for line in open(path, errors="replace"):
        m = re.match(r"# run: (.*)", line)
        if m:
            if label:
                rows.append((label, table, tl))
            label, table, tl = m.group(1).strip(), [], []
            continue
        m = re.match(r"timeline (\w+)/(\w+) rank (\d+): .*product done ([\d.]+) us, "
                     r"transfer reached ([\d.]+) us, done ([\d.]+) us \((\d+) SpMVs\)", line)
        if m:
            tl.append((m.group(2), int(m.group(3)), float(m.group(4)), float(m.group(6)),
                       int(m.group(7))))
            continue
        m = re.match(r"(standard|2step|3step|split) +(staged|nccl|ipc|mpi-device) +([\d.e+-]+) +"
                     r"([\d.e+-]+) +([\d.e+-]+)", line)
        if m and label:
            table.append((m.group(2), 1e6 * float(m.group(3)), 1e6 * float(m.group(4)),
                          1e6 * float(m.group(5))))
    if label:
        rows.append((label, table, tl))
    print("| run | transport | SpMV us | exchange us | local us | SpMV / local | "
          "transfer done per rank | product done per rank |")
    print("|---|---|---|---|---|---|---|---|")
    for label, table, tl in rows:
        for t, sp, ex, lo in table:
            mine = [x for x in tl if x[0] == t and x[4] > 0]
            print("| %s | %s | %.1f | %.1f | %.1f | %.3f | %s | %s |" % (
                label, t, sp, ex, lo, sp / lo if lo else 0.0,
                ", ".join("%.0f" % x[3] for x in mine) or "-",
                ", ".join("%.0f" % x[2] for x in mine) or "-"))


if __name__ == "__main__":
    main(sys.argv[1])
