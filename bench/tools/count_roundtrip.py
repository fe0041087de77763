#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""count_roundtrip.py - instructions per waiting call, per function, counted by
callgrind: repeatable where times are not (a shared VM's line costs jump between
phases within seconds).

Runs bench/tools/roundtrip_driver (N waiting no-op calls from CPU 0's worker to
CPU 1's, polling forever) under `valgrind --tool=callgrind --dump-instr=yes` and
keeps, per function, the instructions that ran at most 20 times a call: spin
loops, which run as long as the other side takes, are left out and counted apart.
Valgrind runs one thread at a time, so a waiter never sees its call complete
within its spin: the waiting and idle slow paths show up, and the fast path's
straight-line code is the same as on hardware.

usage: count_roundtrip.py BUILD_DIR [N]     (make count-roundtrip)
"""
import collections
import os
import re
import subprocess
import sys
import tempfile


def parse(path, n):
    names, fn, addr, skip = {}, None, 0, False
    cost = collections.defaultdict(int)
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "fn":
                fn = names.get(m.group(2), m.group(2))
            continue
        if line.startswith("calls="):
            skip = True     # the next line is the call's inclusive cost, not this function's
            continue
        if not line or line[0] not in "0123456789+-*":
            continue
        parts = line.split()
        a = parts[0]
        if a.startswith("+"):
            addr += int(a[1:], 0)
        elif a.startswith("-"):
            addr -= int(a[1:], 0)
        elif a != "*":
            addr = int(a, 0)
        if skip:
            skip = False
            continue
        if len(parts) >= 3:
            cost[(fn, addr)] += int(parts[2])
    per_fn = collections.defaultdict(lambda: [0, 0])
    for (f, _), c in cost.items():
        per_fn[f][0 if c <= 20 * n else 1] += c
    return per_fn


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    build, n = argv[1], int(argv[2]) if len(argv) > 2 else 3000
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode:
        print("count_roundtrip: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="xcall-count-")
    drv, out = os.path.join(tmp, "roundtrip_driver"), os.path.join(tmp, "callgrind.out")
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    subprocess.run(["cc", "-O2", "-g", "-I", os.path.join(top, "include"),
                    os.path.join(here, "roundtrip_driver.c"), os.path.join(build, "libxcall.a"),
                    "-pthread", "-o", drv], check=True)
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out}",
                    drv, str(n)], check=True, capture_output=True)
    per_fn = parse(out, n)
    total = 0.0
    print(f"instructions per waiting call ({n} calls, CPU 0 -> 1), run at most 20 times a call:")
    for f, (small, spin) in sorted(per_fn.items(), key=lambda x: -x[1][0]):
        if small / n >= 1:
            total += small / n
            print(f"{small / n:8.1f}  {f}" + ("   (and spin loops)" if spin else ""))
    print(f"{total:8.1f}  in all (start-up and exit spread over the calls included)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
