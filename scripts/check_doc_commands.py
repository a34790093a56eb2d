#!/usr/bin/env python3
"""Run the commands the user guide shows (issue 45, item 4).

Reads README.md and docs/*.md under ROOT. In every fenced code block of a shell (```sh,
```bash, ```shell, ```console), each command (a line, with its `\\` continuation lines; a
line that is only a comment is none) whose program, after any leading VAR=value
assignments, starts with `./`, `halo `, `mpirun`, `scripts/`, `build/`, `bench/` or `.ci/`
is run, in the order of the page, unless a marker at the end of its (last) line says why
not. The markers, a comment that starts with one or more of these, separated by commas,
optionally followed by ": why":

  # needs a GPU        never run here (the CI machine has none)
  # large file         never run here (a download or a file too large for CI)
  # long run           never run here (minutes or more, or the set-up and test suite)
  # your program       never run here (./app stands for the reader's program)
  # needs METIS        run when the build has METIS (likewise PETSc, hypre), else skipped

Other commands of these blocks (cmake, ctest, mkdir, ...) are not in scope and are listed
with --list. A block of output right after a line `<!-- doc-test: output -->` is the
expected output of the last command run before it in the same page: each of its
non-blank lines, with runs of blanks as one, must be a line of that command's output
(stdout and stderr).

Each page runs in a directory of its own, laid out as the repository's root: a link to
every top-level entry of ROOT, and `build` a link to BUILD_DIR, so a command runs as
written (`build/tools/halo`, `$PWD/build/libhalo_hypre.so`, `matrices/...`) and what it
writes stays there. Two programs are mapped: `halo` to `build/tools/halo`, `mpirun` to
`scripts/mpirun.sh` (--oversubscribe, and --allow-run-as-root as root).
XDG_CACHE_HOME is that directory's `.cache` (`halo params measure --save` writes there).

usage: scripts/check_doc_commands.py ROOT BUILD_DIR [--with NAME]... [--page FILE]... [--list]
                                     [--timeout S]
  --with NAME   the build has NAME (metis, petsc, hypre): its `# needs NAME` commands run
  --page FILE   only this page (README.md, docs/driver.md, ...)
  --list        print every command and what would be done with it, run nothing
Fails naming FILE:LINE and the command whose exit status is not 0 (or whose expected
output is missing, or that ran past the timeout, 300 s by default).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SHELLS = {"sh", "bash", "shell", "console"}
IN_SCOPE = re.compile(r"^(?:\./|halo\s|halo$|mpirun\b|scripts/|build/|bench/|\.ci/)")
ALWAYS_SKIP = {"needs a gpu": "needs a GPU", "large file": "large file",
               "long run": "long run", "your program": "your program"}
COMPONENTS = {"needs metis": "metis", "needs petsc": "petsc", "needs hypre": "hypre"}
EXPECT = re.compile(r"^\s*<!--\s*doc-test:\s*output\s*-->\s*$")


def split_comment(line):
    """(code, comment) of a shell line: the comment starts at an unquoted # after a blank."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def markers(comment):
    """The markers a trailing comment starts with, and any it misspells."""
    head = re.split(r":", comment, 1)[0]
    found = []
    for part in (p.strip().lower() for p in head.split(",")):
        if part in ALWAYS_SKIP or part in COMPONENTS:
            found.append(part)
        else:
            break
    return found


def program(command):
    """The command without its leading VAR=value assignments."""
    rest = command.strip()
    while True:
        m = re.match(r"^[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S)*\s+", rest)
        if not m:
            return rest
        rest = rest[m.end():]


def items(path):
    """Commands ('cmd', line, text, comment) and expected outputs ('out', line, [lines])."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    expect_next = False
    while i < len(lines):
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if not m:
            expect_next = bool(EXPECT.match(lines[i])) or (expect_next and not lines[i].strip())
            i += 1
            continue
        fence, info = m.group(1), m.group(2).lower()
        start = i + 1
        j = start
        while j < len(lines) and not re.match(r"^\s{0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + ",}\s*$", lines[j]):
            j += 1
        body = lines[start:j]
        if expect_next:
            yield ("out", start, [x for x in body if x.strip()])
        elif info in SHELLS:
            k = 0
            while k < len(body):
                first = k
                text = body[k]
                while text.rstrip().endswith("\\") and k + 1 < len(body):
                    k += 1
                    text = text.rstrip()[:-1] + " " + body[k].strip()
                k += 1
                code, comment = split_comment(text)
                if code.strip():
                    yield ("cmd", start + first + 1, code.strip(), comment)
        expect_next = False
        i = j + 1


def sandbox(root, build):
    d = tempfile.mkdtemp(prefix="halo-doc-")
    for name in os.listdir(root):
        if name != "build":
            os.symlink(os.path.join(root, name), os.path.join(d, name))
    os.symlink(os.path.abspath(build), os.path.join(d, "build"))
    os.makedirs(os.path.join(d, ".cache"))
    return d


def mapped(command):
    """The command with `halo` and `mpirun` as programs mapped to the build's and the script."""
    prog = program(command)
    head = command[:len(command) - len(prog)]
    prog = re.sub(r"^halo(?=\s|$)", "build/tools/halo", prog)
    prog = re.sub(r"^mpirun(?=\s|$)", "scripts/mpirun.sh", prog)
    return head + prog


def main():
    args = sys.argv[1:]
    have, listing, timeout, pos, only = set(), False, 300.0, [], []
    while args:
        a = args.pop(0)
        if a == "--with":
            have.add(args.pop(0).lower())
        elif a == "--page":
            only.append(args.pop(0))
        elif a == "--list":
            listing = True
        elif a == "--timeout":
            timeout = float(args.pop(0))
        else:
            pos.append(a)
    if len(pos) != 2:
        sys.stderr.write(__doc__)
        return 2
    root, build = (os.path.abspath(p) for p in pos)
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    if only:
        pages = [p for p in pages if os.path.relpath(p, root) in only]
    failures, ran, skipped = [], 0, []
    t_all = time.time()
    for page in pages:
        rel = os.path.relpath(page, root)
        work = None
        last = None                       # (line, command, output) of the last command run
        for item in items(page):
            if item[0] == "out":
                if last is None:
                    skipped.append(f"{rel}:{item[1]}: expected output: its command was not run")
                    continue
                if listing:
                    continue
                got = {re.sub(r"\s+", " ", x).strip() for x in last[2].split("\n")}
                for want in item[2]:
                    if re.sub(r"\s+", " ", want).strip() not in got:
                        failures.append(f"{rel}:{last[0]}: {last[1]}\n  its output lacks the line of "
                                        f"{rel}:{item[1]}: {want.strip()}")
                continue
            _, line, command, comment = item
            where = f"{rel}:{line}: {command}"
            if not IN_SCOPE.match(program(command)):
                if listing:
                    print(f"{where}\n  not in scope")
                continue
            marks = markers(comment)
            never = [ALWAYS_SKIP[m] for m in marks if m in ALWAYS_SKIP]
            missing = [COMPONENTS[m] for m in marks if m in COMPONENTS and COMPONENTS[m] not in have]
            if never or missing:
                why = ", ".join(never + [f"{m} not built" for m in missing])
                skipped.append(f"{where}\n  skipped: {why}")
                last = None
                if listing:
                    print(f"{where}\n  skipped: {why}")
                continue
            if listing:
                print(f"{where}\n  run: {mapped(command)}")
                continue
            if work is None:
                work = sandbox(root, build)
            env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, ".cache"), PWD=work)
            t0 = time.time()
            try:
                p = subprocess.run(["bash", "-c", mapped(command)], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, timeout=timeout)
                out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
            except subprocess.TimeoutExpired as e:
                out, rc = (e.stdout or b"").decode("utf-8", "replace"), None
            ran += 1
            took = time.time() - t0
            print(f"{where}\n  exit {rc}, {took:.1f} s", flush=True)
            if rc != 0:
                tail = "\n".join("    " + x for x in out.rstrip().split("\n")[-15:])
                why = (f"ran past {timeout:.0f} s (mark it `# long run`)" if rc is None
                       else f"exit status {rc}")
                failures.append(f"{where}\n  {why}; its last output:\n{tail}")
            last = (line, command, out)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    if listing:
        return 0
    for s in skipped:
        print(s)
    print(f"check_doc_commands: {ran} commands run, {len(skipped)} skipped, "
          f"{len(failures)} failed, {time.time() - t_all:.0f} s")
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
