#!/usr/bin/env python3
"""Which files of src/ call or include each other in a loop (issue 41: none).

Calls are read from the object files of a build (nm): a file calls another
where it uses a symbol the other defines, resolved as the linker does it.
libhalo's objects (and its module forwarders) resolve among themselves; the
CUDA module's objects resolve first among themselves, then into libhalo (its
calls back). A file compiled into both (a device transport: descriptor in
libhalo, hooks in the module) is one node: a loop through it is a loop.
Includes are read from the sources: "x.h" resolved beside the file, then in
src/core and src/.

Prints every strongly connected set of more than one file, largest first,
and with --edges its edges inside the set (which symbols or headers), so that
a loop can be broken where it is cheapest. Also checks that nothing in
src/plan reaches src/io and nothing in src/ includes a file of bench/.
Exit status 1 while any loop or such reach is left.

usage: scripts/call_loops.py BUILD_DIR [--edges]
"""
import collections
import glob
import os
import re
import subprocess
import sys

SRC = "src"


def objects(build, target):
    """The objects a library's link line names (build/CMakeFiles/T.dir/link.txt),
    so that stale objects of files moved out of the target are left out."""
    out = []
    link = f"{build}/CMakeFiles/{target}.dir/link.txt"
    for o in open(link).read().split():
        if o.endswith(".o") and "/src/" in o:
            name = o.split("/src/", 1)[1].rsplit(".o", 1)[0]
            out.append((name, os.path.join(build, o)))
    return out


def symbols(path):
    defs, undef = set(), set()
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDRBV":
            defs.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            undef.add(p[1])
    return defs, undef


def call_edges(build):
    units = {"lib": objects(build, "halo")}
    if os.path.exists(f"{build}/CMakeFiles/halo_cuda.dir/link.txt"):
        units["module"] = objects(build, "halo_cuda")
    defs = {u: collections.defaultdict(set) for u in units}
    undef = {u: {} for u in units}
    for u, objs in units.items():
        for name, o in objs:
            d, n = symbols(o)
            for s in d:
                defs[u][s].add(name)
            undef[u].setdefault(name, set()).update(n)
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for u in units:
        order = ["lib"] if u == "lib" else ["module", "lib"]
        for name, used in undef[u].items():
            edges[name]  # every file is a node
            for s in used:
                for w in order:
                    if s in defs[w]:
                        for d in defs[w][s]:
                            if d != name:
                                edges[name][d].add(s)
                        break
    return edges


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_edges():
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    files = [f for f in glob.glob(f"{SRC}/**/*", recursive=True)
             if f.endswith((".c", ".h", ".cu"))]
    for f in files:
        name = os.path.relpath(f, SRC)
        edges[name]
        text = open(f, errors="replace").read()
        for inc in INCLUDE.findall(text):
            for base in (os.path.dirname(f), f"{SRC}/core", SRC):
                p = os.path.normpath(os.path.join(base, inc))
                if os.path.exists(p):
                    target = os.path.relpath(p, SRC)
                    if target != name:
                        edges[name][target].add("#include")
                    break
            else:
                if "bench/" in inc or inc.startswith("../"):
                    edges[name]["../" + inc].add("#include")
    return edges


def loops(edges):
    sys.setrecursionlimit(100000)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in list(edges[v]):
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

    for v in sorted(list(edges)):
        if v not in index:
            visit(v)
    comps.sort(key=len, reverse=True)
    return comps


def main():
    build = sys.argv[1]
    show_edges = "--edges" in sys.argv[2:]
    bad = 0
    for kind, edges in (("call", call_edges(build)), ("include", include_edges())):
        comps = loops(edges)
        for comp in comps:
            print(f"{len(comp)} files {kind} each other in a loop: {' '.join(comp)}")
            if show_edges:
                inside = set(comp)
                for a in comp:
                    for b, syms in sorted(edges[a].items()):
                        if b in inside:
                            more = " ..." if len(syms) > 4 else ""
                            print(f"  {a} -> {b}: {' '.join(sorted(syms)[:4])}{more}")
        if not comps:
            print(f"no {kind} loop")
        bad += len(comps)
        for a in sorted(list(edges)):
            for b in sorted(edges[a]):
                if a.startswith("plan/") and b.startswith("io/"):
                    print(f"plan reaches io ({kind}): {a} -> {b}")
                    bad += 1
                if b.startswith("../") or "bench/" in b:
                    print(f"library file reaches bench ({kind}): {a} -> {b}")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
