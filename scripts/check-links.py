#!/usr/bin/python3
"""Checks the relative links of the documentation: every [text](path#anchor) in README.md,
docs/*.md, bench/*.md and bench/history/*.md must name an existing file or folder, and an anchor
must name a heading of that file (GitHub's slugs). Prints each broken link and exits 1 when there
is one.

    scripts/check-links.py [FILE.md ...]
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")


def strip_code(text):
    """The text without fenced blocks, indented blocks and code spans (links there are not links)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    text = re.sub(r"^(?: {4}|\t).*$", "", text, flags=re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slugs(path):
    """GitHub's anchors of a Markdown file's headings (duplicates numbered -1, -2, …)."""
    seen, result = {}, set()
    text = re.sub(r"^```.*?^```", "", open(path, encoding="utf-8").read(), flags=re.M | re.S)
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, flags=re.M):
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        result.add(slug if n == 0 else f"{slug}-{n}")
    return result


def main(files):
    broken = 0
    for md in files:
        text = strip_code(open(md, encoding="utf-8").read())
        for target in LINK.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:, file:
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            problem = None
            if not os.path.exists(full):
                problem = "no such file"
            elif anchor and full.endswith(".md") and anchor not in slugs(full):
                problem = "no such heading"
            if problem:
                broken += 1
                print(f"{os.path.relpath(md, ROOT)}: ({target}): {problem}")
    return 1 if broken else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    names = sys.argv[1:] or ["README.md", *sorted(glob.glob("docs/*.md")), *sorted(glob.glob("bench/*.md")),
                             *sorted(glob.glob("bench/history/*.md"))]
    sys.exit(main([os.path.join(ROOT, n) for n in names]))
