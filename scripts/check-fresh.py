#!/usr/bin/env python3
"""check-fresh.py - one definition of a fresh runtime, and every field in it.

xc_cpu_fresh() (src/cpu/bringup.c) sets every field of a CPU and of each ring
to it as a new runtime starts from; xc_init and a fork child both run it.
A field it forgets keeps what the last runtime, or a fork caught half done,
left there (a ring still marked dropped crashed a fork child's worker; a
close counter left one ahead hung its calls). So every member of struct
xc_cpu (src/base/internal.h) and struct xc_ring (src/proto/ring.h), and every member
of the structs they embed, must be stored to in xc_cpu_fresh, or be named
in the list of kept fields beside it, with its reason. A member that is
neither, a kept entry without a reason, or one that names no member, fails.

Usage: check-fresh.py [ROOT]      (default: this script's parent; reads
                                   ROOT/src/{bringup.c,internal.h,ring.h},
                                   ROOT/src/llist.h, ROOT/include/xcall.h)
       check-fresh.py --self-test    the check must fail on copies with a
                                     member added without a reset, a reset
                                     taken out, and a kept entry without
                                     its reason
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

FUNC = "xc_cpu_fresh"
STRUCTS = ("xc_cpu", "xc_ring")
HEADERS = ("src/base/internal.h", "src/proto/ring.h", "src/base/llist.h", "include/xcall.h")
FUNC_FILE = "src/cpu/bringup.c"
KEPT_MARK = "scripts/check-fresh.py reads this list"
# ` *   xc_ring.target, next, size: the reason ...`, continued on lines indented further
KEPT_ENTRY = re.compile(r"^\s*\*\s+(xc_\w+)\.([\w.]+(?:\s*,\s*[\w.]+)*)\s*:\s*(.*)$")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def struct_bodies(texts):
    """name -> body text of every `struct name { ... };` definition in @texts."""
    out = {}
    for text in texts:
        text = strip_comments(text)
        for m in re.finditer(r"\bstruct\s+(\w+)\s*\{", text):
            depth, i = 1, m.end()
            while depth and i < len(text):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            out.setdefault(m.group(1), text[m.end():i - 1])
    return out


def collapse_nested(body):
    """A struct defined inside @body as `struct name { ... } member` becomes `struct name member`
    (struct_bodies keeps its own body)."""
    out, i = [], 0
    for m in re.finditer(r"\bstruct\s+\w+\s*\{", body):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while depth and j < len(body):
            depth += {"{": 1, "}": -1}.get(body[j], 0)
            j += 1
        out.append(body[i:m.end() - 1])
        i = j
    out.append(body[i:])
    return "".join(out)


XCALL_H = [""]	# include/xcall.h's text, read by check()


def x_list_members(body):
    """The counters of XC_STATS_COUNTERS (include/xcall.h) that a group declares with
    XC_STATS_COUNTERS(XC__SENDER_COUNTER) or (XC__WORKER_COUNTER), as declarations."""
    header = XCALL_H[0]
    counters = re.findall(r"^\s*X\((\w+),\s*(\w+),", header[header.index("#define XC_STATS_COUNTERS"):], re.M)

    def expand(m):
        by = m.group(1)
        return "".join("_Atomic uint64_t %s;" % name for name, b in counters if b == by)
    return re.sub(r"XC_STATS_COUNTERS\(XC__(\w+)_COUNTER\)", expand, body)


def members(body):
    """(name, embedded struct name or None, is_array) of each member declared in @body."""
    body = x_list_members(collapse_nested(body))
    body = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", body)
    body = re.sub(r"\b__xc_(pair_)?aligned\b", " ", body)
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl or decl.startswith("#"):
            continue
        # _Atomic(T) and XC__ATOMIC(T): an atomic T, a scalar for this check
        decl = re.sub(r"\b(?:_Atomic|XC__ATOMIC)\s*\([^()]*\)", "ATOMIC_T", decl)
        decl = re.sub(r"\b_Atomic\b", "", decl).strip()
        embedded = None
        m = re.match(r"struct\s+(\w+)\s+(?!\*)", decl)
        if m:
            embedded = m.group(1)
        first = True
        for part in decl.split(","):
            part = part.strip()
            m = re.search(r"(\**)\s*(\w+)\s*(\[[^\]]*\])?\s*$", part)
            if not m:
                raise SystemExit("check-fresh: cannot read the declaration %r" % decl)
            pointer = bool(m.group(1)) or (first and re.search(r"\*\s*\w+\s*(\[[^\]]*\])?\s*$", part))
            yield m.group(2), (embedded if embedded and not pointer else None), bool(m.group(3))
            first = False


def leaves(struct, bodies, prefix=""):
    """(path, is_array) of every field of @struct, embedded structs expanded."""
    for name, embedded, is_array in members(bodies[struct]):
        path = prefix + name
        if embedded and embedded in bodies and not is_array:
            yield from leaves(embedded, bodies, path + ".")
        else:
            yield path, is_array


def function_body(text, name):
    """The text of function @name's definition (signature and body), comments stripped."""
    text = strip_comments(text)
    m = re.search(r"^[\w \t\*]*\b%s\s*\([^;{]*\)\s*\{" % name, text, flags=re.M)
    if not m:
        return None
    depth, i = 1, m.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.start():i]


def kept_list(text):
    """struct -> {member: reason} from the comment block that carries KEPT_MARK; problems."""
    kept, problems = {s: {} for s in STRUCTS}, []
    at = text.find(KEPT_MARK)
    if at < 0:
        return kept, ["%s: no list of kept fields (a comment saying '%s')" % (FUNC_FILE, KEPT_MARK)]
    block = text[at:text.index("*/", at)].split("\n")[1:]
    entries = []
    for line in block:
        m = KEPT_ENTRY.match(line)
        if m:
            entries.append([m.group(1), [n.strip() for n in m.group(2).split(",")], m.group(3).strip()])
        elif entries and line.strip(" \t*"):
            entries[-1][2] += " " + line.strip(" \t*")
    for struct, names, reason in entries:
        if struct not in kept:
            problems.append("kept entry for an unchecked struct %s" % struct)
            continue
        for n in names:
            if not reason:
                problems.append("%s.%s is kept without a reason" % (struct, n))
            kept[struct][n] = reason
    return kept, problems


def is_stored(body, var, path):
    """Whether @body stores to @var->@path, or to a struct containing it."""
    parts = path.split(".")
    for k in range(len(parts), 0, -1):
        field = re.escape(var) + r"->" + r"\.".join(map(re.escape, parts[:k]))
        if re.search(r"\b%s\s*=(?!=)" % field, body):
            return True
        if re.search(r"\b(?:atomic_store_explicit|atomic_store|atomic_init|memset)\s*\(\s*&\s*%s\s*[,)]" % field, body):
            return True
    return False


def check(root):
    read = lambda p: open(os.path.join(root, p)).read()
    XCALL_H[0] = read("include/xcall.h")
    bodies = struct_bodies(read(h) for h in HEADERS)
    fresh_text = read(FUNC_FILE)
    body = function_body(fresh_text, FUNC)
    if body is None:
        print("check-fresh: %s: no definition of %s()" % (FUNC_FILE, FUNC))
        return 1
    kept, bad = kept_list(fresh_text)
    nfields = 0
    for struct in STRUCTS:
        if struct not in bodies:
            bad.append("struct %s: not found in %s" % (struct, ", ".join(HEADERS)))
            continue
        m = re.search(r"struct\s+%s\s*\*\s*(\w+)" % struct, body)
        var = m.group(1) if m else None
        tops = set()
        for path, is_array in leaves(struct, bodies):
            nfields += 1
            top = path.split(".")[0]
            tops.update((top, path))
            if top in kept[struct] or path in kept[struct]:
                continue
            if var and not is_array and is_stored(body, var, path):
                continue
            bad.append("%s.%s: neither set in %s() nor kept with a reason%s" %
                       (struct, path, FUNC, " (an array: keep it)" if is_array else ""))
        for name in kept[struct]:
            if name not in tops:
                bad.append("%s.%s: kept, but struct %s has no such member" % (struct, name, struct))
    for b in bad:
        print("check-fresh: " + b)
    print("check-fresh: %d fields of struct %s, %d kept, %d problems" %
          (nfields, " and struct ".join(STRUCTS), sum(len(k) for k in kept.values()), len(bad)))
    return 1 if bad else 0


def self_test(root):
    """Each mutation of a copy must make the check fail, naming what it broke."""
    cases = [
        ("a member added to struct xc_cpu", "src/base/internal.h",
         "\tint llc_id, node_id;", "\tint llc_id, node_id;\n\tint scratch_flag;", "xc_cpu.life.scratch_flag"),
        ("a member added to struct xc_ring", "src/proto/ring.h",
         "\tbool dropped;", "\tbool dropped;\n\tstruct xc_ring *scratch_next;", "xc_ring.scratch_next"),
        ("a member added to the slot xc_cpu embeds", "src/base/internal.h",
         "\tvoid *arg;\n};", "\tvoid *arg;\n\tuint32_t scratch_seq;\n};", "xc_cpu.mbox.slot.scratch_seq"),
        ("the reset of a ring's dropped mark taken out", FUNC_FILE,
         "\t\tr->dropped = false;\n", "", "xc_ring.dropped"),
        ("a kept entry without its reason", FUNC_FILE,
         " *   xc_ring.e: the entries: the owner writes each before it publishes it\n",
         " *   xc_ring.e:\n", "xc_ring.e is kept without a reason"),
    ]
    failed = 0
    r = subprocess.run([sys.executable, __file__, root], capture_output=True, text=True)
    if r.returncode != 0:
        print("check-fresh: self-test: the tree itself fails the check")
        print(r.stdout, end="")
        return 1
    for what, path, old, new, expect in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for d in ("src", "include"):
                shutil.copytree(os.path.join(root, d), os.path.join(tmp, d))
            text = open(os.path.join(tmp, path)).read()
            if text.count(old) != 1:
                print("check-fresh: self-test: %s: %r is not in %s once; update the self-test" %
                      (what, old, path))
                failed += 1
                continue
            open(os.path.join(tmp, path), "w").write(text.replace(old, new))
            r = subprocess.run([sys.executable, __file__, tmp], capture_output=True, text=True)
            if r.returncode == 0 or expect not in r.stdout:
                print("check-fresh: self-test: %s was not caught (want %r)" % (what, expect))
                print(r.stdout, end="")
                failed += 1
            else:
                print("check-fresh: self-test: %s is caught" % what)
    return 1 if failed else 0


def main():
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if sys.argv[1:2] == ["--self-test"]:
        return self_test(sys.argv[2] if len(sys.argv) > 2 else default)
    return check(sys.argv[1] if len(sys.argv) > 1 else default)


if __name__ == "__main__":
    sys.exit(main())
