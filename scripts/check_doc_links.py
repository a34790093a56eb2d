#!/usr/bin/env python3
"""Check the relative links of the documentation (issue 45).

Reads README.md, docs/*.md, CHANGES.md and bench/results/*.md under ROOT and checks every
relative link of theirs, inline `[text](target)` or reference `[label]: target`, outside
code: the file or folder it names exists, and a `#anchor` (on a Markdown file, or alone:
this file) names one of that file's headings as GitHub makes their anchors (lower case,
punctuation dropped, spaces to hyphens, `-1`, `-2`, ... for repeats) or an explicit
`<a name=...>`/`id=...`. Links to other sites (http:, https:, mailto:) are not followed.

usage: scripts/check_doc_links.py ROOT
Prints each broken link as FILE:LINE: TARGET: why; exit status 1 when there is one.
"""
import glob
import os
import re
import sys
import unicodedata
from urllib.parse import unquote

INLINE = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"|\sid=\"([^\"]+)\"")


def strip_code(line):
    """The line with its code spans blanked (their text is no link)."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def text_lines(path):
    """(number, line) of a Markdown file outside fenced code blocks."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * len(m.group(1))
                elif m.group(1).startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield n, line.rstrip("\n")


def github_slug(heading):
    """The anchor GitHub gives a heading's text."""
    t = re.sub(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)", r"\1", heading)  # links: their text
    t = re.sub(r"<[^>]+>", "", t)                                            # HTML tags
    t = t.lower()
    out = []
    for ch in t:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN" or cat == "Mn":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, found = {}, set()
        for _, line in text_lines(path):
            for m in HTML_ANCHOR.finditer(line):
                found.add(m.group(1) or m.group(2))
            h = HEADING.match(line)
            if not h:
                continue
            slug = github_slug(h.group(2))
            k = seen.get(slug, 0)
            seen[slug] = k + 1
            found.add(slug if k == 0 else f"{slug}-{k}")
        _anchors[path] = found
    return _anchors[path]


def check(root):
    files = [os.path.join(root, "README.md"), os.path.join(root, "CHANGES.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(root, "bench", "results", "*.md")))
    bad = checked = 0
    for path in files:
        if not os.path.isfile(path):
            print(f"{os.path.relpath(path, root)}: missing")
            bad += 1
            continue
        for n, raw in text_lines(path):
            line = strip_code(raw)
            targets = [m.group(3) for m in INLINE.finditer(line)]
            m = REFDEF.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                    continue  # another site, or mailto:
                checked += 1
                where, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), unquote(where))) \
                    if where else path
                why = None
                if not os.path.exists(dest):
                    why = "no such file or folder"
                elif anchor and dest.endswith(".md") and os.path.isfile(dest):
                    if unquote(anchor).lower() not in anchors(dest):
                        why = f"no heading or anchor '{anchor}' in {os.path.relpath(dest, root)}"
                if why:
                    print(f"{os.path.relpath(path, root)}:{n}: {target}: {why}")
                    bad += 1
    return bad, checked, len(files)


def main(argv):
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    bad, checked, nfiles = check(argv[0])
    if bad:
        print(f"{bad} broken link(s) of {checked} in {nfiles} files")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
