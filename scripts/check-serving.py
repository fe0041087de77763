#!/usr/bin/env python3
"""check-serving.py - every wait that serves calls goes through one helper.

A wait that runs its own CPU's calls while it waits must hold no half-done
operation that a served call can reach (src/run/wait.c, "Serving while
waiting"). To keep that checkable, calls are served in one place:
xc_wait_serve() / xc_wait_step() (wait.c), called by the waits listed
below, each with the state it reads again after serving. xc_run_calls()
itself is called only by that helper and by the loops whose job is to run
calls (the worker's task and idle loops, the attached thread's poll);
xc_poll() runs them through the helper, so that the serve floor bounds its
nesting as a wait's. A call site anywhere else fails this check: make it a
wait through the helper, add it below with what it re-reads, or say why.

Usage: check-serving.py [SRC_DIR]   (default: src/ beside this script's parent)
       check-serving.py --self-test    the check must fail on a copy of src/ with a
                                       wait that serves by itself added
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# (file, function) -> why it may call xc_run_calls directly
RUNNERS = {
    ("wait.c", "xc_wait_serve"): "the helper itself",
    ("worker.c", "worker_loop"): "the worker's task loop: runs calls, holds nothing",
    ("worker.c", "cpu_idle"): "the worker's idle poll: runs calls between idle waits",
    ("attach.c", "xc_attached_poll"): "the attached thread's task loop, once around",
}

# (file, function) -> what the wait reads again after each serve
WAITS = {
    ("wait.c", "xc_ring_wait_room"): "head and tail, at every pass (xc_ring_room; ring_put reads head again)",
    ("wait.c", "xc_pool_wait"): "the pool's free list and its returned list, at every pass (xc_pool_try)",
    ("hotplug.c", "lock_spin"): "a trylock, its own ctl and its lock_wait at every pass; holds nothing",
    ("hotplug.c", "offline_wait"): "the offline completion; holds nothing half-done",
    ("wait.c", "wait_after_spin"): "the completion word; the call is published whole",
    ("attach.c", "attached_leave"): "a trylock and the CPU's ctl at every pass; holds nothing",
    ("call.c", "poll_self"): "xc_poll(): no wait; the application asks for its calls, holding nothing",
}

HELPERS = ("xc_wait_serve", "xc_wait_step")
FUNC_START = re.compile(r"^(?:static\s+|inline\s+|XC_API\s+)*[A-Za-z_][\w\s\*]*?\b([A-Za-z_]\w*)\s*\(")


def strip_comments(text):
    """Blank out comments and strings, keeping line numbers."""
    out = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    out = re.sub(r"//[^\n]*", "", out)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', out)


def call_sites(path):
    """(function, callee, line) for each call of xc_run_calls or a helper in @path."""
    lines = strip_comments(open(path).read()).split("\n")
    func = None
    for n, line in enumerate(lines, 1):
        m = FUNC_START.match(line)
        if m and not line.rstrip().endswith(";"):
            func = m.group(1)
        for callee in ("xc_run_calls",) + HELPERS:
            for _ in re.finditer(r"\b%s\s*\(" % callee, line):
                if m and m.group(1) == callee:
                    continue  # its definition or prototype
                yield func, callee, n


def self_test(src):
    """A rogue serving wait added to a copy of src/ must make the check fail."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        shutil.copytree(src, copy)
        with open(os.path.join(copy, "proto", "wake.c"), "a") as f:
            f.write("\nstatic void rogue_wait(struct xc_cpu *c)\n{\n\twhile (!c->online)\n\t\txc_run_calls(c);\n}\n")
        r = subprocess.run([sys.executable, __file__, copy], capture_output=True, text=True)
        if r.returncode == 0 or "rogue_wait" not in r.stdout:
            print("check-serving: self-test: a rogue serving wait in wake.c was not caught")
            print(r.stdout, end="")
            return 1
    print("check-serving: self-test: a rogue serving wait is caught")
    return 0


def main():
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    if sys.argv[1:2] == ["--self-test"]:
        return self_test(default)
    src = sys.argv[1] if len(sys.argv) > 1 else default
    bad, seen = [], set()
    files = sorted((name, os.path.join(d, name)) for d, _, names in os.walk(src) for name in names)
    for name, full in files:
        if not name.endswith((".c", ".h")):
            continue
        for func, callee, line in call_sites(full):
            key = (name, func)
            if callee == "xc_run_calls":
                ok = key in RUNNERS
            else:
                ok = key in WAITS or (name, func) == ("wait.c", "xc_wait_step")
            if ok:
                seen.add(key)
            else:
                bad.append("%s:%d: %s() calls %s(): not a listed wait or runner" % (name, line, func, callee))
    for key in sorted(set(RUNNERS) | set(WAITS)):
        if key not in seen:
            bad.append("%s: %s() is listed but calls neither xc_run_calls nor the helper" % key)
    for b in bad:
        print("check-serving: " + b)
    print("check-serving: %d call sites, %d listed, %d problems" % (len(seen), len(RUNNERS) + len(WAITS), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
