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

Then the round trip's critical path, the instructions between seeing the other
side's write and making one's own, from the same counts (the straight paths,
src/run/slot.c):
  worker  from its poll seeing the publication (ready_idle_straight's jump)
          through xc_slot_run_idle's completing exchange;
  caller  from its spin seeing the completion (slot_wait_straight's last block,
          which ends in its return; valgrind's waiter takes the slow path
          instead, so this block is taken from the code) through
          xc_call_single's publication (its last lock cmpxchg and branch).
Instructions on a path count when they ran at least once every two calls.

usage: count_roundtrip.py [-v] BUILD_DIR [N]     (make count-roundtrip; -v lists the path)
"""
import collections
import os
import re
import subprocess
import sys
import tempfile


def parse_instr(path):
    """Per (function, address): instructions run, self cost only."""
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
    return cost


def per_function(cost, n):
    """Per function: [instructions that ran at most 20 times a call, those that ran more (spins)]."""
    per_fn = collections.defaultdict(lambda: [0, 0])
    for (f, _), c in cost.items():
        per_fn[f][0 if c <= 20 * n else 1] += c
    return per_fn


def disassemble(binary, fn):
    """[(address, text)] of @fn in @binary, in address order."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)(?:\n\n|\Z)" % re.escape(fn), out, re.S | re.M)
    if not m:
        return []
    rows = []
    for line in m.group(1).splitlines():
        mm = re.match(r"\s+([0-9a-f]+):\s+(.*)", line)
        if mm:
            rows.append((int(mm.group(1), 16), mm.group(2).strip()))
    return rows


def on_path(cost, fn, rows, n):
    """The rows of @fn that ran at least once every two calls, and at most 20 times a call."""
    return [(a, t) for a, t in rows if 0.5 * n <= cost.get((fn, a), 0) <= 20 * n]


def critical_path(cost, binary, n):
    """(worker, caller) instruction counts and the rows counted, or None where a function is missing."""
    poll, run = disassemble(binary, "ready_idle_straight"), disassemble(binary, "xc_slot_run_idle")
    send, wait = disassemble(binary, "xc_call_single"), disassemble(binary, "slot_wait_straight")
    if not (poll and run and send and wait):
        return None
    # worker: the poll's jump into the run, then the run up to its exchange
    worker = [r for r in on_path(cost, "ready_idle_straight", poll, n) if r[1].startswith("jmp")]
    xchg = next((a for a, t in run if t.startswith("xchg ")), None)
    worker += [r for r in on_path(cost, "xc_slot_run_idle", run, n) if xchg is not None and r[0] <= xchg]
    # caller: the wait's block that ends in its return, then the call up to the publication
    ret = max(i for i, (_, t) in enumerate(wait) if t.startswith("ret"))
    start = ret
    while start > 0 and not re.match(r"j\w+ ", wait[start - 1][1]):
        start -= 1
    caller = wait[start:ret + 1]
    cas = [a for a, t in send if t.startswith("lock cmpxchg")]
    pub = cas[-1] if cas else None
    body = on_path(cost, "xc_call_single", send, n)
    caller += [r for r in body if pub is not None and r[0] <= pub]
    caller += [r for r in body if pub is not None and r[0] > pub][:1]     # the branch on it
    return worker, caller


def main(argv):
    usage = __doc__.strip().splitlines()[-1]
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(__doc__.strip())
        return 0
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    bad = [a for a in argv[1:] if a.startswith("-")]
    if bad or not 2 <= len(argv) <= 3 or (len(argv) == 3 and not argv[2].isdigit()):
        print((f"count_roundtrip: unknown option {bad[0]}\n" if bad else "") + usage, file=sys.stderr)
        return 2
    build, n = argv[1], int(argv[2]) if len(argv) > 2 else 3000
    if not os.path.isfile(os.path.join(build, "libxcall.a")):
        print(f"count_roundtrip: {build}/libxcall.a is not built (make count-roundtrip builds it)",
              file=sys.stderr)
        return 2
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode:
        print("count_roundtrip: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="xcall-count-")
    drv, out = os.path.join(tmp, "roundtrip_driver"), os.path.join(tmp, "callgrind.out")
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    # the driver's other modes (count_lines.py) use the baselines and libxcall's internals:
    # baselines.c for pp_ring_serve alone, the rest dropped by --gc-sections
    subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-g", "-ffunction-sections",
                    "-I", os.path.join(top, "include"), "-I", os.path.join(top, "src"),
                    "-I", os.path.join(top, "bench"), os.path.join(here, "roundtrip_driver.c"),
                    os.path.join(top, "bench", "baselines.c"), os.path.join(build, "libxcall.a"),
                    "-Wl,--gc-sections", "-pthread", "-o", drv], check=True)
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out}",
                    drv, str(n)], check=True, capture_output=True)
    cost = parse_instr(out)
    per_fn = per_function(cost, n)
    total = 0.0
    print(f"instructions per waiting call ({n} calls, CPU 0 -> 1), run at most 20 times a call:")
    for f, (small, spin) in sorted(per_fn.items(), key=lambda x: -x[1][0]):
        if small / n >= 1:
            total += small / n
            print(f"{small / n:8.1f}  {f}" + ("   (and spin loops)" if spin else ""))
    print(f"{total:8.1f}  in all (start-up and exit spread over the calls included)")
    path = critical_path(cost, drv, n)
    if path is None:
        print("critical path: the straight paths' functions are missing (inlined or renamed)")
        return 0
    for side, rows, what in (("worker", path[0], "its poll seeing the publication to its completing exchange"),
                             ("caller", path[1], "its spin seeing the completion to its next publication")):
        print(f"\ncritical path, {side}: {len(rows)} instructions, {what}")
        if verbose:
            for a, t in rows:
                print(f"          {a:x}  {t}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
