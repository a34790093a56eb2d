#!/usr/bin/env python3
"""What loading halo costs a PETSc program that does not use the GPU.

Runs one plain PETSc program (a few CG iterations on a small 27-point
Laplacian) under mpirun without halo and with `-dll_append LIB` for each
libhalo_petsc.so given, the variants alternated round by round (A B C, A B C,
...), and reads each run's wall time and the CPU time of all its processes
(the rusage of mpirun's children: Open MPI starts the local ranks as its own
children). The extra cost of a variant is taken round by round against the
run without halo of the same round, divided by the ranks for CPU time (the
cost per process); medians over the rounds.

usage: bench/load_cost.py PROGRAM RANKS ROUNDS LABEL=LIB [LABEL=LIB ...] [-- PROGRAM ARGS]
"""
import os
import resource
import statistics
import subprocess
import sys
import time


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    args = sys.argv[1:]
    prog_args = []
    if "--" in args:
        i = args.index("--")
        args, prog_args = args[:i], args[i + 1:]
    prog, ranks, rounds = args[0], int(args[1]), int(args[2])
    libs = [a.split("=", 1) for a in args[3:]]
    here = os.path.dirname(os.path.abspath(__file__))
    mpirun = [os.path.join(here, "..", "scripts", "mpirun.sh"), "-n", str(ranks)]
    variants = [("PETSc alone", [])] + [(label, ["-dll_append", lib]) for label, lib in libs]
    base = mpirun + [prog] + prog_args
    for _, extra in variants:  # warm the page cache
        run(base + extra)
    res = {label: [] for label, _ in variants}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for label, extra in order:
            res[label].append(run(base + extra))
    w0 = [w for w, _ in res["PETSc alone"]]
    c0 = [c for _, c in res["PETSc alone"]]
    print(f"| ranks | variant | wall s (median) | CPU s, all ranks (median) | "
          f"extra wall ms (median of rounds) | extra CPU ms per process (median of rounds) |")
    print("|---|---|---|---|---|---|")
    for label, _ in variants:
        w = [x for x, _ in res[label]]
        c = [x for _, x in res[label]]
        dw = [1e3 * (a - b) for a, b in zip(w, w0)]
        dc = [1e3 * (a - b) / ranks for a, b in zip(c, c0)]
        extra = ("-", "-") if label == "PETSc alone" else (
            f"{statistics.median(dw):.1f}", f"{statistics.median(dc):.1f}")
        print(f"| {ranks} | {label} | {statistics.median(w):.3f} | {statistics.median(c):.3f} | "
              f"{extra[0]} | {extra[1]} |")


if __name__ == "__main__":
    main()
