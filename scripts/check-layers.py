#!/usr/bin/env python3
"""check-layers.py - libxcall's src/ is a house by layer: every dependency points down.

src/ holds one folder per layer, bottom up (docs/layout.md):

    base   types, the runtime's state, the thread's state, lists, futexes, trace, reports
    proto  the transports' data operations and the wakeup protocol
    run    running calls, the serving wait, stuck reports
    cpu    a CPU's life: the worker, hotplug, attach, following the OS, bringup, fork
    api    the entry points

A file may use its own folder and those below it, never one above:
  - an include names a folder ("run/wait.h") at or below its own;
  - a name of the library's (xc_*, XC_*) that a file uses is defined at or below
    it: a function or variable defined in a .c file, an inline function, a
    macro or an enum constant of a header. A prototype or extern declaration
    is no definition: a header that declares a function of a layer above is
    caught where the name is used.
Base names of files are unique across the folders (the count tools and the
static library's members go by them).

Usage: check-layers.py [SRC_DIR]      (default: src/ beside this script's parent)
       check-layers.py --self-test    must fail on a copy of src/ with an upward
                                      include and with a call to a name defined above
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LAYERS = ("base", "proto", "run", "cpu", "api")
NAME = re.compile(r"\b(?:xc|XC)_\w+")


def strip(text):
    """Blank out comments, strings and character constants, keeping line numbers
    (an include's name kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'(?<!include )"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "' '", text)


def definitions(text):
    """The xc_/XC_ names a file defines: functions with a body, file-scope variables,
    macros, enum constants."""
    names = set()
    depth = 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"\s*#\s*define\s+((?:xc|XC)_\w+)", line)
        if m:
            names.add(m.group(1))
        if depth == 0 and not line.startswith(("#", " ", "\t", "}")):
            m = re.search(r"\b((?:xc|XC)_\w+)\s*\(", line)
            rest = "\n".join(lines[i:i + 8])
            if m and re.match(r"[^;{]*\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?\{", rest[rest.index(m.group(1)):], re.S):
                names.add(m.group(1))
            m = re.match(r"(?!typedef|extern|struct\s+\w+\s*\{|enum|union)[\w\s\*\(\)]*?\b((?:xc|XC)_\w+)\s*(?:\[[^\]]*\]\s*)*(?:=|;)",
                         line)
            if m and "(" not in line.split(m.group(1))[0].split()[-1:][0:1] and "(" not in line[:line.index(m.group(1))]:
                names.add(m.group(1))
        depth += line.count("{") - line.count("}")
    for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", text, flags=re.S):
        names.update(re.findall(r"\b((?:xc|XC)_\w+)\s*(?:=|,|$)", body, flags=re.M))
    return names


def read_tree(src):
    files = {}
    for layer in sorted(os.listdir(src)):
        path = os.path.join(src, layer)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith((".c", ".h")):
                with open(os.path.join(path, name)) as f:
                    files["%s/%s" % (layer, name)] = strip(f.read())
    return files


def check(src):
    bad = []
    files = read_tree(src)
    seen = {}
    for rel in files:
        layer, name = rel.split("/")
        if layer not in LAYERS:
            bad.append("%s: folder %s is no layer (%s)" % (rel, layer, ", ".join(LAYERS)))
        if name in seen:
            bad.append("%s: the base name of %s too" % (rel, seen[name]))
        seen[name] = rel
    rank = {rel: LAYERS.index(rel.split("/")[0]) for rel in files if rel.split("/")[0] in LAYERS}
    defined = {}
    for rel, text in files.items():
        for n in definitions(text):
            defined.setdefault(n, set()).add(rel)
    for rel, text in sorted(files.items()):
        if rel not in rank:
            continue
        mine = definitions(text)
        for num, line in enumerate(text.split("\n"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m:
                inc = m.group(1)
                if "/" not in inc:
                    inc = rel.split("/")[0] + "/" + inc
                target = inc.split("/")[0]
                if target in LAYERS and LAYERS.index(target) > rank[rel]:
                    bad.append("%s:%d: includes %s, a layer above" % (rel, num, m.group(1)))
                continue
            for n in set(NAME.findall(line)):
                if n in mine or n not in defined:
                    continue
                lowest = min(rank.get(d, 0) for d in defined[n])
                if lowest > rank[rel]:
                    where = sorted(defined[n])[0]
                    bad.append("%s:%d: uses %s, defined above in %s" % (rel, num, n, where))
    return bad, len(files)


def self_test(src):
    """An upward include, and a call to a name defined above, must each fail the check."""
    plants = (("base/report.c", '#include "api/options.h"\n', "includes api/options.h"),
              ("base/report.c", "void xc_planted(void)\n{\n\txc_run_calls(0);\n}\n", "uses xc_run_calls"))
    for where, code, want in plants:
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "src")
            shutil.copytree(src, copy)
            with open(os.path.join(copy, where), "a") as f:
                f.write(code)
            r = subprocess.run([sys.executable, __file__, copy], capture_output=True, text=True)
            if r.returncode == 0 or want not in r.stdout:
                print("check-layers: self-test: a planted line in %s (%s) was not caught" % (where, want))
                print(r.stdout, end="")
                return 1
    print("check-layers: self-test: an upward include and an upward call are caught")
    return 0


def main():
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    if sys.argv[1:2] == ["--self-test"]:
        return self_test(default)
    bad, n = check(sys.argv[1] if len(sys.argv) > 1 else default)
    for b in bad:
        print("check-layers: " + b)
    print("check-layers: %d files in %d layers, %d problems" % (n, len(LAYERS), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
