#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-links.py - every relative link of the user's pages resolves.

The pages: README.md, docs/*.md, bindings/rust/README.md and report/README.md. Each link
[text](target) outside code (fenced blocks, `spans`) that is not a URL must name a file or
directory that exists, relative to its page; an anchor (#name, or page.md#name) must be a
heading of that page as GitHub names it (lower case, punctuation dropped, spaces as hyphens,
-1, -2 ... for repeats) or an <a id> / <a name>. And the README stays a guide: at most
README_MAX_LINES lines (docs/ takes the rest).

usage: check-links.py [ROOT]      exit 0 when every link resolves, 1 naming each that does not
       check-links.py --self-test  the check must catch a missing file, a missing anchor and an
                                   over-long README in a scratch tree, and pass a good one
"""
import os
import re
import sys
import tempfile

README_MAX_LINES = 400
PAGES = ["README.md", "bindings/rust/README.md", "report/README.md"]
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def pages(root):
    out = [p for p in PAGES if os.path.exists(os.path.join(root, p))]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        out += sorted(f"docs/{f}" for f in os.listdir(docs) if f.endswith(".md"))
    return out


def prose(text):
    """(line number, line) of the text outside fenced code blocks, code spans blanked."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, re.sub(r"`[^`]*`", lambda c: " " * len(c.group(0)), line)


def slug(heading):
    """GitHub's anchor of a heading."""
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)      # a link: its text
    h = re.sub(r"<[^>]+>", "", h).strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen, out = {}, set()
        fence = None
        for line in text.split("\n"):
            m = re.match(r"^\s*(```+|~~~+)", line)
            if m:
                fence = None if fence else m.group(1)[0]
                continue
            if fence:
                continue
            h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if h:
                s = slug(h.group(1))
                k = seen.get(s, 0)
                seen[s] = k + 1
                out.add(s if k == 0 else f"{s}-{k}")
            out.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
        cache[path] = out
    return cache[path]


def check(root):
    """[(page:line, what is wrong)] for every link that does not resolve, and the README's
    length."""
    bad = []
    for page in pages(root):
        path = os.path.join(root, page)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if page == "README.md":
            n = text.count("\n")
            if n > README_MAX_LINES:
                bad.append((page, f"{n} lines: a user guide of at most {README_MAX_LINES} (the "
                                  "rest goes to docs/)"))
        for n, line in prose(text):
            for target in LINK.findall(line) + IMAGE.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):          # a URL, mailto:
                    continue
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file \
                    else path
                where = f"{page}:{n}"
                if not os.path.exists(dest):
                    bad.append((where, f"{target}: no such file {os.path.relpath(dest, root)}"))
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    bad.append((where, f"{target}: {os.path.relpath(dest, root)} has no heading "
                                       f"#{anchor}"))
    return bad


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))

        def write(name, text):
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        write("README.md", "# T\n\n## The `two` commands!\n\n[a](docs/a.md#a-page) "
              "[in](#the-two-commands) `[code](nowhere.md)`\n\n```\n[x](fenced.md)\n```\n")
        write("docs/a.md", "# A page\n\n## Twice\n\n## Twice\n\n[back](../README.md#t) "
              "[second](#twice-1) [src](../docs/) [web](https://example.com/x)\n")
        ok = check(root) == []
        write("docs/a.md", "# A page\n\n[gone](missing.md) [no anchor](../README.md#nope)\n")
        got = check(root)
        caught = len(got) == 2 and "no such file" in got[0][1] and "has no heading" in got[1][1]
        write("docs/a.md", "# A page\n")
        write("README.md", "# T\n" + "line\n" * README_MAX_LINES)
        long = len(check(root)) == 1
    for name, good in (("a tree whose links resolve passes", ok),
                       ("a missing file and a missing anchor are each caught", caught),
                       ("a README past the limit is caught", long)):
        print(f"{'ok  ' if good else 'FAIL'} check-links self-test: {name}")
    return 0 if ok and caught and long else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else "."
    bad = check(root)
    for where, what in bad:
        print(f"FAIL {where}: {what}")
    n = len(pages(root))
    print(f"check-links: {n} pages, {len(bad)} broken" if bad else
          f"check-links: every relative link and anchor of {n} pages resolves")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
