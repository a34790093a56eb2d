#!/usr/bin/env python3
"""Which files of src/ call each other in a loop (issue 41: there must be none).

Reads the object files of a build (nm): a file calls another where it uses a
symbol the other defines. Prints every strongly connected set of more than one
file, largest first, and for each its edges inside the set (which symbols),
so that a loop can be broken where it is cheapest. Exit status 1 while any
loop is left.

usage: scripts/call_loops.py BUILD_DIR [--edges]
"""
import collections
import glob
import subprocess
import sys


def main():
    build = sys.argv[1]
    show_edges = "--edges" in sys.argv[2:]
    objs = [o for d in ("halo_objects", "halo_module_objects", "halo")
            for o in glob.glob(f"{build}/CMakeFiles/{d}.dir/src/**/*.o", recursive=True)]
    defs, undef = collections.defaultdict(set), {}
    for o in objs:
        name = o.split("/src/", 1)[1].rsplit(".o", 1)[0]
        out = subprocess.run(["nm", o], capture_output=True, text=True).stdout
        used = undef.setdefault(name, set())
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDRB":
                defs[p[2]].add(name)
            elif len(p) == 2 and p[0] == "U":
                used.add(p[1])
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for n, used in undef.items():
        for s in used:
            for d in defs.get(s, ()):
                if d != n:
                    edges[n][d].add(s)
    sys.setrecursionlimit(100000)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(undef):
        if v not in index:
            visit(v)
    comps.sort(key=len, reverse=True)
    for comp in comps:
        print(f"{len(comp)} files in a loop: {' '.join(comp)}")
        if show_edges:
            inside = set(comp)
            for a in comp:
                for b, syms in sorted(edges[a].items()):
                    if b in inside:
                        print(f"  {a} -> {b}: {' '.join(sorted(syms)[:4])}{' ...' if len(syms) > 4 else ''}")
    if not comps:
        print("no loop")
    return 1 if comps else 0


if __name__ == "__main__":
    sys.exit(main())
