#!/usr/bin/env python3
"""Every measured number of the user guide cites its results file (issue 45, item 4).

Reads README.md and docs/*.md under ROOT. A *measured number* is, in prose, list items,
headings and table rows (not in fenced code blocks, inline code spans, HTML comments or
link targets; the text of a link counts):

  (a) a number followed by a unit of measure: a time (s, ms, µs, us, ns, min), a ratio
      (x, ×), a percentage (%), a rate (GB/s, MB/s, GiB/s) or a cost in SpMVs
      (SpMVs); both ends of a range count (0.26-0.90x, 4–10 SpMVs, 3 to 8 ms);
  (b) any other decimal number with digits after the point (0.960, 193.5, 2.86 GiB):
      a ratio or figure of a table or sentence;
  (c) a count of cases, "N of M" or "N of the M" (48 of 49 cases).

Not measured numbers, by these rules alone:

  - versions: a number with two points or more (3.18.5), or one directly after a
    software name or the words version(s), release(s), branch (PETSc 3.20, Open MPI 4.1,
    hypre 2.26), or before ".x";
  - exponent forms (1e-8, 5.5·10¹¹, 2³⁰): tolerances and sizes;
  - references: after Figure, Section, Table, Algorithm, item, issue, step (Figure 5.1);
  - a bound or criterion: a number directly after "within", "at least", "under", "above",
    "below", "every", "limit", "cap", "threshold", "default" or "design" (within 5 % of the
    fastest, at least 88 %), or directly before "limit", "timeout", "cap", "threshold" or
    "margin" (a 300 ms limit);
  - integers with a byte unit (B, KiB, MB, GB, ...) or no unit: sizes, counts and option
    values (a decimal with a byte unit, 2.86 GiB, counts under (b));
  - a number directly after a code span, alone or in parentheses (`--theta` (0.25)): the
    value of what the span names;
  - anything written in a code span: option values, commands, messages, and a value the
    code sets (a constant, a test's parameter: `3 ms`), which is where such a value goes.

Each measured number must stand in a *unit of text* (a table row; a list item with its
continuation lines; else a paragraph; a heading) that links, by a Markdown link, at
least one file under bench/results/ (a link to a folder there stands for the files in
it), every such file must exist, and one of them must contain the number: the doc's
number D matches a number F of the file when F has at least as many digits after the
point as D and D is F rounded to D's digits (|F - D| <= half a unit of D's last digit:
the doc may drop digits, never add them), with thousands separators ignored (1,870 =
1870); an integer D with a unit matches an integer F only with that unit after F in the
file (6 % needs "6 %" or "6%"; x and × are one unit, as are us and µs; a range's unit is
both ends'), and a count "N of M" needs "N of M" or "N of the M" in the file.

usage: scripts/check_doc_numbers.py ROOT
Prints each violation as FILE:LINE: NUMBER: why; exit status 1 when there is one.
"""
import glob
import os
import re
import sys
from decimal import Decimal
from urllib.parse import unquote

TIME = r"ms|µs|us|ns|s|min"
RATIO = r"x|×"
UNITS = TIME + "|" + RATIO + r"|%|GB/s|MB/s|GiB/s|SpMVs"
BYTES = r"B|KB|kB|KiB|MB|MiB|GB|GiB|TB|TiB"
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# a number (or range) and what follows it; the lookbehind keeps parts of words,
# versions and exponents (1e-8's 8) out
CANDIDATE = re.compile(
    r"(?<![\w.\-/^·])(?P<a>" + NUMBER + r")"
    r"(?:\s*(?:-|–|to)\s*(?P<b>" + NUMBER + r"))?"
    r"(?P<tail>\.\d|\s?(?:" + UNITS + "|" + BYTES + r")(?![\w/])|e[-+]?\d|·10|[⁰¹²³⁴⁵⁶⁷⁸⁹])?")
VERSION_WORDS = re.compile(
    r"\b(?:PETSc|hypre|MPI|CUDA|NCCL|NVSHMEM|Doxygen|Debian|bookworm|halo|METIS|version|"
    r"versions|release|releases|branch|Python|cmake|CMake|gcc|clang)[\s(]*$")
REFERENCE_WORDS = re.compile(r"\b(?:Figures?|Sections?|Tables?|Algorithm|item|issue|step)[\s(]*$")
CRITERION_WORDS = re.compile(
    r"\b(?:within|at least|under|above|below|every|limit|cap|threshold|default|design)[\s(]*$", re.I)
CRITERION_AFTER = re.compile(r"\s*(?:limit|timeout|cap|threshold|margin)\b")
COUNT = re.compile(r"(?<![\w.])(\d+) of (?:the )?(\d+)(?!\w|\.\d)")
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def units_of_text(path):
    """(first line, [(line, text)]) per table row, list item, paragraph or heading,
    outside fenced code blocks."""
    fence = None
    unit = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if m:
            if unit:
                yield unit
                unit = []
            if fence is None:
                fence = m.group(1)[0] * len(m.group(1))
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        if not line.strip():
            if unit:
                yield unit
                unit = []
            continue
        starts = (line.lstrip().startswith("|") or re.match(r"^\s{0,3}#", line)
                  or re.match(r"^\s{0,3}(?:[-*+]|\d+\.)\s", line))
        previous_table = unit and unit[-1][1].lstrip().startswith("|")
        previous_heading = unit and re.match(r"^\s{0,3}#", unit[-1][1])
        if unit and (starts or previous_table or previous_heading):
            yield unit
            unit = []
        unit.append((n, line))
    if unit:
        yield unit


def file_numbers(path):
    """{Decimal text: set of what follows it} of one results file."""
    out = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return out
    grouped = not path.endswith((".csv", ".tsv"))
    pattern = NUMBER if grouped else r"\d+(?:\.\d+)?"
    for m in re.finditer(r"(?<![\d.])(" + pattern + r")(?![\d])(?:\s*(?:-|–|to)\s*(" + pattern
                         + r")(?![\d]))?\s?(" + UNITS + r")?", text):
        for num in (m.group(1), m.group(2)):
            if num is not None:
                out.setdefault(num.replace(",", ""), set()).add(canonical_unit(m.group(3) or ""))
    return out


TEXTS = {}


def count_in(count, path):
    """Whether a results file says "N of M" (or "N of the M")."""
    if path not in TEXTS:
        with open(path, encoding="utf-8", errors="replace") as f:
            TEXTS[path] = re.sub(r"\s+", " ", f.read())
    n, m = count.split(" of ")
    return re.search(r"(?<![\w.])" + n + r" of (?:the )?" + m + r"(?!\w|\.\d)", TEXTS[path]) is not None


def canonical_unit(u):
    return {"×": "x", "us": "µs"}.get(u, u)


def matches(doc, unit, numbers):
    d = Decimal(doc)
    places = -d.as_tuple().exponent if "." in doc else 0
    half = Decimal(1).scaleb(-places) / 2
    for text, units in numbers.items():
        f_places = len(text.split(".")[1]) if "." in text else 0
        if f_places < places:
            continue
        if abs(Decimal(text) - d) <= half:
            if places == 0 and f_places == 0 and unit and canonical_unit(unit) not in units:
                continue
            return True
    return False


def results_targets(doc_path, unit_text, root):
    """The files under bench/results/ that the unit's links name (folders: their files),
    and the links that name a missing path there."""
    files, missing = [], []
    results = os.path.realpath(os.path.join(root, "bench", "results"))
    for m in LINK.finditer(unit_text):
        target = unquote(m.group(3).split("#", 1)[0])
        if not target or re.match(r"^[a-z]+:", target):
            continue
        path = os.path.realpath(os.path.join(os.path.dirname(doc_path), target))
        if not (path == results or path.startswith(results + os.sep)):
            continue
        if os.path.isdir(path):
            for dirpath, _, names in os.walk(path):
                files += [os.path.join(dirpath, x) for x in sorted(names)]
        elif os.path.isfile(path):
            if not path.endswith((".png", ".jpg", ".svg", ".pdf")) and path not in files:
                files.append(path)
        else:
            missing.append(target)
    return files, missing


FILL = "\ue000"   # what a code span is blanked with: a value, never a measured number


def measured_numbers(unit):
    """(line, number, unit) of the measured numbers of a unit of text."""
    first = unit[0][0]
    text = "\n".join(line for _, line in unit)
    t = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    t = re.sub(r"(`+)(.+?)\1", lambda m: re.sub(r"[^\n]", FILL, m.group(0)), t, flags=re.S)
    t = LINK.sub(lambda m: m.group(2) + " " * (len(m.group(0)) - len(m.group(2))), t)
    t = re.sub(r"https?://\S+", lambda m: " " * len(m.group(0)), t)
    for m in CANDIDATE.finditer(t):
        tail = m.group("tail") or ""
        if tail.startswith(".") or tail.startswith("e") or tail.startswith("·") \
                or re.match(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]", tail):
            continue                                       # a version, an exponent
        before, after = t[:m.start()], t[m.end():]
        if VERSION_WORDS.search(before) or re.match(r"\s*\.x\b", after):
            continue
        if REFERENCE_WORDS.search(before):
            continue                                       # Figure 5.1, Section 4
        if CRITERION_WORDS.search(before) or CRITERION_AFTER.match(after):
            continue                                       # within 5 %, a 300 ms limit
        if re.search(FILL + r"[\s(=:]*$", before):
            continue                                       # `--theta` (0.25): its value
        unit = tail.strip()
        byte_unit = bool(re.fullmatch(BYTES, unit))
        if byte_unit:
            unit = ""
        line = first + t.count("\n", 0, m.start())
        for num in (m.group("a"), m.group("b")):
            if num is None:
                continue
            if "." not in num and (byte_unit or not unit):
                continue                                   # a size, a count, a value
            yield line, num.replace(",", ""), unit
    for m in COUNT.finditer(t):                            # 48 of 49 cases
        if CRITERION_WORDS.search(t[:m.start()]):
            continue
        yield first + t.count("\n", 0, m.start()), f"{m.group(1)} of {m.group(2)}", "of"


def check(root):
    problems = []
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    cache = {}
    for doc in docs:
        rel = os.path.relpath(doc, root)
        for unit in units_of_text(doc):
            whole = "\n".join(text for _, text in unit)
            files, missing = results_targets(doc, whole, root)
            if True:
                for n, num, u in measured_numbers(unit):
                    shown = num + (" " + u if u and u != "of" else "")
                    if missing:
                        problems.append(f"{rel}:{n}: {shown}: its link names {missing[0]}, "
                                        "which is not in bench/results/")
                    elif not files:
                        problems.append(f"{rel}:{n}: {shown}: no link to a file of bench/results/ "
                                        "in its paragraph, list item or table row")
                    else:
                        found = False
                        for p in files:
                            if p not in cache:
                                cache[p] = file_numbers(p)
                            if (count_in(num, p) if u == "of" else matches(num, u, cache[p])):
                                found = True
                                break
                        if not found:
                            names = ", ".join(os.path.relpath(p, root) for p in files[:4])
                            more = f" and {len(files) - 4} more" if len(files) > 4 else ""
                            problems.append(f"{rel}:{n}: {shown}: not in {names}{more}")
    return problems


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"check_doc_numbers: {len(problems)} measured number(s) without their results file "
              "(the rules: scripts/check_doc_numbers.py's header, docs/contributing.md)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
