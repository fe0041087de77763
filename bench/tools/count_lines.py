#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""count_lines.py - cache-line transfers and instructions per call, counted in a trace:
what a call moves between CPUs, at 64- and 128-byte lines, on any machine.

The trace: valgrind's lackey (--trace-mem=yes: every instruction and every load and
store; --trace-sched=yes: which thread holds valgrind's one lock, so each access is
that thread's) of bench/tools/roundtrip_driver in its counting build (bench/bench.mk:
libxcall and the baselines compiled with count_hook.h, where every spin pass yields,
so that each side hands over at its first pass; the driver's marks say each thread's
role and where the counted calls begin and end).

The model: one cache per thread, at 64 and at 128-byte lines, never evicting. A data
transfer is a read of a line last written by another thread that this one holds no
copy of since, or a write to such a line (a read for ownership); an invalidation is a
write to a line another thread holds, whose data this one has (the other copies die,
no data moves). Misses on lines no other thread wrote count as nothing. Each event is
the side's whose access made it (caller or sender, worker). The driver's own schedule
(its turn and its count of calls run) is left out.

Per call = (count over 2N calls - count over N calls) / N, so that warm-up and the
edges of the window cancel. Instructions per side count the spin passes that moved a
line (a pass that found nothing, however often the OS scheduler let it run, adds
nothing; each pass costs the counting build one instruction more than the normal one).
For the round trips (the waiting call, the bare handoff), each side's critical path:
its instructions from the load that saw the other side's write through its own write
that the other side then sees, both included (count_roundtrip.py bounds it by fixed
addresses, from the poll's jump and the spin's last block: a few instructions fewer).

Cases: the waiting call (xc_call_single, XC_WAIT, CPU 0's worker to CPU 1's, polling
forever), through the mailbox slot and, with the slot ablated, through the caller's ring
(what one transport for single calls would cost); the bare handoff (pp_handoff,
bench/baselines.h, between the same workers); nowait bursts of K = 1, 4, 64 calls from
S = 1 and 15 plain threads to CPU 1, through libxcall's rings, through the shared list
that XC_ABLATE_RING puts in their place, and through the SPSC ring (pp_ring, served by
pp_ring_serve on CPU 1):
the senders take turns, and the worker drains after every burst, holding S rings. Each
sender first makes 320 calls (more than a ring's 256 entries), then N; N = 512 with one
sender (two laps: the rings' once-a-lap reads of the other side's index come out whole),
32 (64 for K = 64) with 15, where they fall outside the window (1/256 per call).

Disturbances, mended or said: valgrind takes a thread's turn when its time slice (100,000
blocks, counted over the thread's life) runs out, anywhere, in the middle of its writes
too; and on a loaded machine the OS may run the worker so late that libxcall's waiting
caller spins past its 256 passes into its wait's slow path. A round trip in which either
happened is left out with the one after it; a burst run preempted is run again (3 tries),
and the table's notes say what remained.

-v also prints, for two waiting calls on the general path (XC_WAIT | XC_RUN_LOCAL, which
the straight path leaves to it), one that completes in the caller's spin and one whose
function outlasts it, the caller's function sequence from xc_call_single to its return,
each function in the .c file its code is in (a header's inline function counts as the .c
file that includes it; addr2line -i names the inlined ones), the .c files the path
crosses and each call edge into a file it had already left (returns up the stack are not
edges, nor is the idle wait's call of the ready() its caller passed; a tail call is a call
from the function that jumps).

--test: the model on known patterns (the bare handoff, the SPSC ring, a planted line, one
planted in the handoff's 128-byte pair) and the general path's bound: at most 5 .c files (one
a layer's role) and no call edge back but the idle wait's ready() callback; exit 1 if any
check fails.

--cases LIST: only the cases whose names begin with one of LIST's comma-separated names:
wait, wait ring, handoff, burst, ring, list, each narrowed as "burst k=64" or "list k=1 s=15".

usage: count_lines.py [-v] [--cases LIST] BUILD_DIR      (make count-lines [ARGS=-v])
       count_lines.py --test BUILD_DIR                   (make check-count-lines)
"""
import bisect
import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile

GRAINS = (64, 128)
# N per case: the waiting call and the handoff; bursts from one sender (a multiple of 256:
# whole laps of a ring) and from 15 (each; a short window, as every call costs 15 turns)
WAIT_N, BURST_N1, BURST_N15 = 300, 512, 32


SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")


def src_file(name):
    """src/FOLDER/NAME for a library file's base name (names are unique across src/'s folders)."""
    for folder in sorted(os.listdir(SRC)):
        if os.path.exists(os.path.join(SRC, folder, name)):
            return "src/%s/%s" % (folder, name)
    return "src/" + name


def cases():
    """[(name, driver arguments with N as {n}, calls per unit of N, N)]"""
    out = [("wait", ["wait", "{n}"], 1, WAIT_N), ("wait ring", ["wait", "{n}", "ring"], 1, WAIT_N),
           ("handoff", ["handoff", "{n}"], 1, WAIT_N)]
    for s, n in ((1, BURST_N1), (15, BURST_N15)):
        for k in (1, 4, 64):
            for kind in ("burst", "ring", "list"):
                dargs = ["ring" if kind == "ring" else "burst", str(k), str(s), "{n}"]
                out.append((f"{kind} k={k} s={s}", dargs + (["list"] if kind == "list" else []),
                            s, max(n, k)))
    return out


LABEL = {
    "wait": "waiting call (xc_call_single)",
    "wait ring": "the same, slot ablated (ring)",
    "handoff": "bare handoff (pp_handoff)",
}


def label(name):
    if name in LABEL:
        return LABEL[name]
    kind, k, s = name.split()
    what = {"burst": "nowait burst", "ring": "SPSC ring", "list": "nowait, list ablated"}[kind]
    return f"{what} {k} {s}"


# ---- the binary: functions, spin passes, calls and returns, data symbols, .c files ----

class Binary:
    def __init__(self, path):
        self.path = path
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                             text=True, check=True).stdout
        self.fstart, self.fname = [], []
        self.calls, self.rets = {}, set()
        rows, hooks = [], []
        for line in out.splitlines():
            m = re.match(r"([0-9a-f]+) <(.+)>:$", line)
            if m:
                self.fstart.append(int(m.group(1), 16))
                self.fname.append(m.group(2))
                continue
            m = re.match(r"\s+([0-9a-f]+):\s+(.*)", line)
            if m:
                rows.append((int(m.group(1), 16), m.group(2).strip()))
        for i, (a, t) in enumerate(rows):
            nxt = rows[i + 1][0] if i + 1 < len(rows) else a + 1
            if t.startswith("call"):
                self.calls[a] = nxt
            elif t.startswith("ret"):
                self.rets.add(a)
            elif t == "mov    $0x18,%eax" and i + 1 < len(rows) and rows[i + 1][1] == "syscall":
                hooks.append(a)
        order = sorted(range(len(self.fstart)), key=lambda i: self.fstart[i])
        self.fstart = [self.fstart[i] for i in order]
        self.fname = [self.fname[i] for i in order]
        # lackey writes "I  %08lx,%lu": the spin passes' first instruction (the mov, 5 bytes);
        # libc's sched_yield is the same two instructions
        self.hook_lines = {"I  %08x,5\n" % a for a in hooks if "sched_yield" not in self.func(a)[0]}
        self.data = []
        for line in subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                                   text=True, check=True).stdout.splitlines():
            p = line.split()
            if len(p) == 4 and p[2] in "bBdDrRgGsS":
                self.data.append((int(p[0], 16), int(p[1], 16), p[3]))
        self.data.sort()
        self.dstart = [d[0] for d in self.data]
        # where the linker put xc_cpus decides which lines pair at 128 bytes (it is 64-byte
        # aligned only): the model pairs its lines both ways
        self.xc_cpus = next(((a, a + n) for a, n, name in self.data if name == "xc_cpus"), (0, 0))
        self.objs = self._map(path + ".map")

    @staticmethod
    def _map(path):
        """[(start, end, file)] of the text sections, from the linker's map."""
        out, pending = [], None
        try:
            lines = open(path).read().splitlines()
        except OSError:
            return out
        for line in lines:
            m = re.match(r"\s(\.text\S*)\s*$", line)
            if m:
                pending = m.group(1)
                continue
            m = re.match(r"\s(\.text\S*)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$", line)
            if m and (m.group(1) or pending):
                start, size, obj = int(m.group(2), 16), int(m.group(3), 16), m.group(4)
                if size:
                    out.append((start, start + size, obj))
            pending = None
        out.sort()
        return out

    def func(self, a):
        i = bisect.bisect_right(self.fstart, a) - 1
        return (self.fname[i], a - self.fstart[i]) if i >= 0 else ("?", a)

    def fn_at(self, a):
        name, off = self.func(a)
        return f"{name}+{off:#x}"

    def cfile(self, a):
        """The .c file whose code @a is: libxcall's and the driver's by name, libc's as 'libc'."""
        i = bisect.bisect_right(self.objs, (a, float("inf"), "")) - 1
        if i < 0 or a >= self.objs[i][1]:
            return "?"
        obj = self.objs[i][2]
        m = re.search(r"libxcall\.a\((\w+)\.o\)", obj)
        if m:
            return src_file(m.group(1) + ".c")
        if "libc.a" in obj or "libpthread" in obj:
            return "libc"
        return "driver"

    def datum(self, a):
        i = bisect.bisect_right(self.dstart, a) - 1
        if i >= 0 and a < self.data[i][0] + max(self.data[i][1], 1):
            return f"{self.data[i][2]}+{a - self.data[i][0]:#x}"
        return None


# ---- one run of the driver under lackey ----

class Run:
    """What one trace says: events, instructions, critical paths, the path's addresses."""

    def __init__(self):
        self.ev = collections.Counter()         # (grain, role, 'data'|'inv') -> events in window
        self.per_line = collections.defaultdict(collections.Counter)   # (grain, line) -> (role, kind)
        self.line_insn = {}                     # (grain, line, role) -> instruction lines that moved it
        self.busy = collections.Counter()       # role -> instructions in passes that moved a line
        self.segs = collections.Counter()       # role -> such passes
        self.crit = collections.defaultdict(list)        # role -> critical path lengths
        self.crit_ends = collections.defaultdict(collections.Counter)  # role -> (start, end) lines
        self.others = collections.Counter()     # events by threads with no role
        self.paths = {}                         # the marked calls' instruction addresses, by name
        self.roles = {}
        self.preempted = 0                      # hand-overs in the window not at a syscall
        self.longest = collections.Counter()    # role -> most spin passes in a row that moved nothing
        self.rounds = []                        # the round trips: totals at each end, left out?
        self.dropped = 0                        # round trips left out

    def drop_disturbed(self):
        """Take out of the totals each round trip whose caller waited so long that it may have
        left its spin (the slow path's own lines and passes follow), or in which valgrind
        preempted a side, and the round trip after it."""
        out = set()
        for i, r in enumerate(self.rounds):
            if r[3] and i > 0:
                out.update(j for j in (i, i + 1) if j < len(self.rounds))
        for i in sorted(out):
            a, b = self.rounds[i - 1], self.rounds[i]
            for total, k in ((self.ev, 0), (self.busy, 1), (self.segs, 2)):
                for key in set(a[k]) | set(b[k]):
                    total[key] -= b[k].get(key, 0) - a[k].get(key, 0)
        self.dropped = len(out)

    def calls(self, n):
        """Calls in the window: @n, or the round trips kept where there are round trips."""
        return len(self.rounds) - self.dropped if self.rounds else n


# A waiting caller spins 256 passes (XC_WAITER_FAST_SPINS, src/run/wait.h) before its wait's slow
# path; a caller that spun this long was kept waiting by the OS, which ran the worker late
LONG_WAIT = 200


def disturbed(res):
    """Times the run was disturbed and not mended: a round trip's caller waited so long that
    it may have left its spin, or valgrind preempted a side, which may cut it in the middle of
    its writes. Round trips (the waiting call, the handoff) left out are mended; a burst
    preempted is not."""
    return 0 if res.rounds else res.preempted


def run_driver(binary, args, want_path=False, tries=3):
    """One run's trace, parsed; run again (up to @tries) while it was disturbed. Round trips
    disturbed are left out instead; a wait is long only for libxcall's waiting call, whose spin
    has an end."""
    long_wait = LONG_WAIT if args[0] == "wait" else None
    for _ in range(tries):
        res = run_once(binary, args, want_path, long_wait)
        if res.rounds:
            res.drop_disturbed()
        if not disturbed(res):
            break
    return res


def run_once(binary, args, want_path, long_wait):
    r, w = os.pipe()
    cmd = ["valgrind", "--tool=lackey", "--trace-mem=yes", "--trace-sched=yes", "--fair-sched=yes",
           f"--log-fd={w}", binary.path] + args
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=err)
        os.close(w)
        with os.fdopen(r, "r", buffering=1 << 20) as f:
            res = parse(f, binary, want_path, long_wait)
        if p.wait():
            err.seek(0)
            raise RuntimeError(f"roundtrip_driver {' '.join(args)}: exit {p.returncode}: "
                               f"{err.read().decode(errors='replace').strip()[-500:]}")
    return res


def parse(f, binary, want_path, long_wait=None):
    """The model, run over a trace. Before the window only the caches are followed; in it,
    each event is counted, and each thread's instructions (kept for the running thread in
    locals, saved at each hand-over)."""
    res = Run()
    hooks = binary.hook_lines
    roles = res.roles
    ignore = set()                              # (grain, line) of the driver's schedule
    h6, h7 = {}, {}                             # line -> bitmask of the threads holding a copy
    w6, w7 = {}, {}                             # line -> thread that wrote it last
    wpos = {}                                   # 64-byte line -> (thread, instruction no., I line)
    saved = {}                                  # thread -> [instructions, last I line, pass start,
                                                #            events in pass, pass's seeing read]
    last_seen = {}                              # thread -> seeing read of its last pass that moved a line
    ev, per_line, line_insn = res.ev, res.per_line, res.line_insn
    cur, bit, win, in_path = 0, 1, False, None
    ic, il, seg0, sev, seen, idle = 0, None, 0, 0, None, 0
    role, round_cut, path_tid = None, False, None

    xlo, xhi = binary.xc_cpus                   # its 128-byte pairs modelled both ways

    def note(t, ln, g, what, kind):
        """An event in the window: counted for the side of thread @t."""
        nonlocal sev, seen
        if (g, ln) in ignore:
            return
        if role is None:
            res.others[(g, what)] += 1
            return
        ev[(g, role, what)] += 1
        if g == 128 and xlo <= ln << 7 < xhi:
            ev[("128c", role, what)] += 1
        pl = -1 - ln if g == "128x" else ln
        per_line[(g, pl)][(role, what)] += 1
        key = (g, pl, role)
        if key not in line_insn:
            line_insn[key] = il
        sev += 1
        if g == 64 and what == "data" and kind == "L" and seen is None:
            # this pass saw the other side's write: its critical path starts here, and
            # the writer's ended at its last write to this line
            seen = (ic, il)
            wt, wi, wl = wpos.get(ln, (None, 0, None))
            if wt is not None and wt != t and wt in last_seen and last_seen[wt][0] <= wi:
                wrole = roles.get(wt, "other")
                res.crit[wrole].append(wi - last_seen[wt][0] + 1)
                res.crit_ends[wrole][(last_seen[wt][1], wl)] += 1

    def step(h, lw, ln, g, kind, t):
        """The model, one access of thread @t to line @ln of grain @g."""
        held = h.get(ln, 0)
        if kind == "L":
            if held & bit:
                return
            h[ln] = held | bit
            w = lw.get(ln)
            if w is None or w == t:
                return
            what = "data"
        else:
            w = lw.get(ln)
            h[ln] = bit
            lw[ln] = t
            if g == 64 and win:
                wpos[ln] = (t, ic, il)
            if not held & ~bit:
                return
            what = "inv" if held & bit or w is None or w == t else "data"
        if win:
            note(t, ln, g, what, kind)

    def access(kind, a, end):
        """An access over more than one 64-byte line, or to xc_cpus (its other pairing too:
        128-byte pairs that begin 64 bytes on, kept as negative line numbers)."""
        t = cur
        if (a ^ end) >> 6:
            for ln in range(a >> 6, (end >> 6) + 1):
                step(h6, w6, ln, 64, kind, t)
            for ln in range(a >> 7, (end >> 7) + 1):
                step(h7, w7, ln, 128, kind, t)
        if xlo <= a < xhi:
            for ln in range((a + 64) >> 7, ((end + 64) >> 7) + 1):
                step(h7, w7, -1 - ln, "128x", kind, t)

    for line in f:
        c = line[0]
        if c == "I":
            if win:
                ic += 1
                il = line
                if in_path is not None and cur == path_tid:
                    in_path.append(int(line[3:line.index(",")], 16))
                if line in hooks:
                    # a spin pass begins: the pass before it counts if it moved a line
                    if sev:
                        res.busy[role or "other"] += ic - seg0
                        res.segs[role or "other"] += 1
                        if seen is not None:
                            last_seen[cur] = seen
                        if role == "caller":
                            # a round trip ends: one that followed a long wait is left out
                            # with the one after
                            res.rounds.append((dict(ev), dict(res.busy), dict(res.segs),
                                               round_cut or (long_wait is not None and idle >= long_wait)))
                            round_cut = False
                        idle = 0
                    else:
                        idle += 1
                        if idle > res.longest[role]:
                            res.longest[role] = idle
                    seen, seg0, sev = None, ic, 0
            continue
        if c == " ":
            comma = line.index(",", 3)
            a = int(line[3:comma], 16)
            end = a + int(line[comma + 1:]) - 1
            kind = line[1]
            if (a ^ end) >> 6 == 0:
                # one 64-byte line, so one 128-byte line: the common case, inline
                t = cur
                l6, l7 = a >> 6, a >> 7
                if kind == "L":
                    held = h6.get(l6, 0)
                    if not held & bit:
                        h6[l6] = held | bit
                        w = w6.get(l6)
                        if w is not None and w != t and win:
                            note(t, l6, 64, "data", kind)
                    held = h7.get(l7, 0)
                    if not held & bit:
                        h7[l7] = held | bit
                        w = w7.get(l7)
                        if w is not None and w != t and win:
                            note(t, l7, 128, "data", kind)
                else:
                    held, w = h6.get(l6, 0), w6.get(l6)
                    h6[l6] = bit
                    w6[l6] = t
                    if win:
                        wpos[l6] = (t, ic, il)
                        if held & ~bit:
                            note(t, l6, 64, "inv" if held & bit or w is None or w == t else "data", kind)
                    held, w = h7.get(l7, 0), w7.get(l7)
                    h7[l7] = bit
                    w7[l7] = t
                    if win and held & ~bit:
                        note(t, l7, 128, "inv" if held & bit or w is None or w == t else "data", kind)
                if xlo <= a < xhi:
                    access(kind, a, end)
            else:
                access(kind, a, end)
            continue
        if c == "-":
            i = line.find("SCHED[")
            if i >= 0 and "acquired lock" in line:
                saved[cur] = [ic, il, seg0, sev, seen, idle]
                cur = int(line[i + 6:line.index("]", i)])
                bit = 1 << cur
                role = roles.get(cur)
                ic, il, seg0, sev, seen, idle = saved.get(cur, [0, None, 0, 0, None, 0])
            elif win and i >= 0 and "releasing lock" in line and "client_syscall" not in line:
                res.preempted += 1      # valgrind took the lock back: its time slice ran out
                round_cut = True
            continue
        if c == "*":
            m = line.split("xcl ", 1)
            if len(m) < 2:
                continue
            what = m[1].split()
            if what[0] == "role":
                roles[cur] = role = what[1]
            elif what[0] == "begin" and not win:
                win = True
            elif what[0] == "end":
                win = False
            elif what[0] == "ignore":
                lo, n = int(what[1], 16), int(what[2])
                for shift in (6, 7):
                    for ln in range(lo >> shift, ((lo + n - 1) >> shift) + 1):
                        ignore.add((1 << shift, ln))
            elif what[0] == "path" and want_path:
                in_path, path_tid = None, cur
                if what[1] == "begin":
                    in_path = res.paths.setdefault(" ".join(what[2:]), [])
    return res


# ---- per call ----

SIDES = {"wait": ("caller", "worker"), "wait ring": ("caller", "worker"),
         "handoff": ("caller", "worker")}


def sides(name):
    return SIDES.get(name, ("sender", "worker"))


def measure(binary, name, args, per_n, n):
    lo = run_driver(binary, [a.format(n=n) for a in args])
    hi = run_driver(binary, [a.format(n=2 * n) for a in args])
    calls = hi.calls(2 * per_n * n) - lo.calls(per_n * n)
    m = {"name": name, "calls": calls, "raw_calls": per_n * n, "lo": lo, "hi": hi,
         "dropped": lo.dropped + hi.dropped}
    for g in GRAINS:
        for role in sides(name):
            for what in ("data", "inv"):
                m[(g, role, what)] = (hi.ev[(g, role, what)] - lo.ev[(g, role, what)]) / calls
        m[(g, "data")] = sum(m[(g, r, "data")] for r in sides(name))
        m[(g, "inv")] = sum(m[(g, r, "inv")] for r in sides(name))
    # xc_cpus's pairs the other way: its 128-byte lines out, the shifted ones in
    for role in sides(name):
        for what in ("data", "inv"):
            def alt(r):
                return r.ev[(128, role, what)] - r.ev[("128c", role, what)] + r.ev[("128x", role, what)]
            m[("128x", role, what)] = (alt(hi) - alt(lo)) / calls
    m[("128x", "data")] = sum(m[("128x", r, "data")] for r in sides(name))
    m[("128x", "inv")] = sum(m[("128x", r, "inv")] for r in sides(name))
    for role in sides(name):
        m[("insn", role)] = (hi.busy[role] - lo.busy[role]) / calls
        m[("passes", role)] = (hi.segs[role] - lo.segs[role]) / calls
        c = hi.crit.get(role)
        m[("crit", role)] = statistics.median(c) if c else None
    m["others"] = sum(hi.others.values()) - sum(lo.others.values())
    m["disturbed"] = disturbed(lo) + disturbed(hi)
    return m


def print_table(ms, binary):
    x = binary.xc_cpus[0] % 128
    print("Per call: lines moved (data: a read, or a write for ownership, of a line the other side "
          "wrote) + lines invalidated (a write to a line the other side holds); per side, the "
          "lines each moved, sender (in the round trips the caller) / worker; instructions per "
          "side in spin passes that moved a line; the critical path from the load that saw the "
          "other side's write through its own write that the other side sees next.")
    print(f"128 B: pairs as this binary places them (xc_cpus begins {x} bytes into a pair); "
          f"128 B': xc_cpus's pairs {'64 bytes on' if x == 0 else 'at its start'}, "
          + ("where no link places it now (it is 128-byte aligned): what the alignment saves."
             if x == 0 else "as another link may place it."))
    print()
    print(f"{'':30} {'64 B':^19} {'128 B':^19} {'128 B':>10}' {'instructions':^15} {'critical path':^15}")
    print(f"{'case':30} {'data+inv':>10} {'s/w':>8} {'data+inv':>10} {'s/w':>8} {'data+inv':>11} "
          f"{'sender':>7} {'worker':>7} {'sender':>7} {'worker':>7}")
    for m in ms:
        s, w = sides(m["name"])
        row = f"{label(m['name']):30}"
        for g in GRAINS:
            row += f" {m[(g, 'data')]:5.2f}+{m[(g, 'inv')]:4.2f} {m[(g, s, 'data')]:4.2f}/{m[(g, w, 'data')]:3.2f}"
        row += f" {m[('128x', 'data')]:6.2f}+{m[('128x', 'inv')]:4.2f}"
        row += f" {m[('insn', s)]:7.1f} {m[('insn', w)]:7.1f}"
        for r in (s, w):
            c = m[("crit", r)] if m["name"] in SIDES else None
            row += f" {c:7.0f}" if c is not None else f" {'-':>7}"
        print(row)


def line_groups(binary, name, res):
    """The lines that moved in @res: each global line by its symbol, the others (rings,
    stacks) grouped by the functions that moved them first: key -> [events, lines]."""
    groups = {}
    for (g, ln), cnt in sorted(res.per_line.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        addr = ln * 128 - 64 if g == "128x" else ln * g
        sym = binary.datum(addr)
        firsts = []
        for role in sides(name):
            il = res.line_insn.get((g, ln, role))
            if il:
                a = int(il[3:il.index(",")], 16)
                firsts.append((role, binary.fn_at(a) if sym else binary.func(a)[0]))
        grp = groups.setdefault((g, sym or "", tuple(firsts)), [collections.Counter(), 0])
        grp[0].update(cnt)
        grp[1] += 1
    return groups


def print_details(binary, ms, threshold=0.02):
    """Per case, the lines that moved per call, (2N run - N run) / N as in the table, with no
    round trip left out."""
    for m in ms:
        calls = m["raw_calls"]
        lo, hi = (line_groups(binary, m["name"], r) for r in (m["lo"], m["hi"]))
        groups = {}
        for key, (cnt, nlines) in hi.items():
            c = collections.Counter(cnt)
            c.subtract(lo.get(key, [collections.Counter(), 0])[0])
            groups[key] = (c, nlines)
        print(f"\n{label(m['name'])}: lines moved per call, side data+inv")
        order = {64: 0, 128: 1, "128x": 2}
        for (g, name, firsts), (cnt, nlines) in sorted(groups.items(),
                                                         key=lambda kv: (order[kv[0][0]], str(kv[0]))):
            if sum(cnt.values()) / calls < threshold:
                continue
            where = name or f"{nlines} line{'s' if nlines > 1 else ''} off the globals"
            parts = []
            for role in sides(m["name"]):
                d, i = cnt[(role, "data")] / calls, cnt[(role, "inv")] / calls
                if d or i:
                    parts.append(f"{role} {d:.2f}+{i:.2f}")
            by = ", ".join(f"{r}: {f}" for r, f in firsts)
            size = "128 B'" if g == "128x" else f"{g:3d} B "
            print(f"  {size} {where:30} {'; '.join(parts):32} first moved by {by}")
        if m["name"] in SIDES:
            for role in sides(m["name"]):
                ends = m["hi"].crit_ends.get(role)
                if ends:
                    (start, end), _ = ends.most_common(1)[0]
                    sa, ea = (int(x[3:x.index(",")], 16) for x in (start, end))
                    print(f"  critical path, {role}: {binary.fn_at(sa)} .. {binary.fn_at(ea)}")
        if m["disturbed"]:
            print(f"  (disturbed {m['disturbed']} times after 3 tries of each run: valgrind preempted "
                  "a side, which may move a line more)")
        if m["dropped"]:
            why = (f"the caller spun {LONG_WAIT} passes or more waiting (the OS ran the worker late), "
                   "or valgrind preempted a side" if m["name"].startswith("wait") else "valgrind preempted a side")
            print(f"  ({m['dropped']} round trips left out: {why})")
        if abs(m["others"]) / m["calls"] >= 0.01:
            print(f"  (and {m['others'] / m['calls']:.2f} events per call by threads with no role)")
        if m["name"].startswith(("burst", "ring", "list")):
            p = m[("passes", "worker")]
            if p:
                print(f"  the worker ran {1 / p:.1f} calls per pass that moved a line")


# ---- -v: the general path's functions and files ----

def inline_chains(binary, addrs):
    """address -> [function, ...] outermost first, from addr2line -i."""
    if not addrs:
        return {}
    out = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", binary.path],
                         input="\n".join(f"{a:#x}" for a in addrs), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    chains, cur, i = {}, None, 0
    while i < len(out):
        if out[i].startswith("0x"):
            cur = int(out[i], 16)
            chains[cur] = []
            i += 1
            continue
        fn, loc = out[i], out[i + 1] if i + 1 < len(out) else ""
        chains[cur].append((fn, loc))
        i += 2
    res = {}
    for a, ch in chains.items():
        # innermost first: each frame's location is where in its function the code is; the
        # frame's identity is its function and where its parent called (inlined) it
        names = [fn for fn, _ in ch]
        sites = [loc for _, loc in ch[1:]] + [""]
        res[a] = list(zip(reversed(names), reversed(sites)))
    return res


def general_path(binary, path):
    """The caller's entered functions, depth and file, and the file edges, from one call."""
    start = next((i for i, a in enumerate(path) if binary.func(a) == ("xc_call_single", 0)), None)
    if start is None:
        return []
    path = path[start:]
    chains = inline_chains(binary, sorted(set(path) | {s for s in binary.calls if s in set(path)}))
    # the physical frames: where each called the next (a call, or a jump to another
    # function: a tail call, which returns with its caller's return)
    frames, prev, seq = [{"site": None, "tail": False}], [], []
    for i, a in enumerate(path):
        if i:
            p = path[i - 1]
            if p in binary.calls and a != binary.calls[p]:
                frames[-1]["site"] = p
                frames.append({"site": None, "tail": False})
            elif p in binary.rets:
                # a frame returns, and with it each that reached it by a tail call
                while frames and frames.pop()["tail"]:
                    pass
                if not frames:
                    break               # xc_call_single returned
            elif binary.func(a)[0] != binary.func(p)[0]:
                frames[-1]["site"] = p
                frames.append({"site": None, "tail": True})
        chain = []
        for k, fr in enumerate(frames):
            at = a if k == len(frames) - 1 else fr["site"]
            cf = binary.cfile(at)
            for depth, (fn, site) in enumerate(chains.get(at, [(binary.func(at)[0], "")])):
                chain.append((k, depth, fn, cf))
        # the chain differs from the previous one where a call or a return happened
        c = 0
        while c < min(len(chain), len(prev)) and chain[c][:3] == prev[c][:3]:
            c += 1
        if len(prev) > c:
            seq.append(("ret", c, None, None))
        for j, e in enumerate(chain[c:]):
            seq.append(("call", c + j, e[2], e[3]))
        prev = chain
    return seq


def collapse(lines, longest=16):
    """[(entry, times, loops)]: a block of lines repeated in a row printed once, its last line
    marked with how many times it ran."""
    out, i = [], 0
    rows = [(tuple(e), t) for e, t in lines]
    while i < len(rows):
        best = (1, 0)
        for n in range(1, longest + 1):
            k = 1
            while rows[i:i + n] == rows[i + k * n:i + (k + 1) * n]:
                k += 1
            if k > 1 and k * n > best[0] * best[1]:
                best = (k, n)
        k, n = best
        if k > 1:
            out += [(e, t, 0) for e, t in rows[i:i + n - 1]] + [(rows[i + n - 1][0], rows[i + n - 1][1], k)]
            i += k * n
        else:
            out.append((rows[i][0], rows[i][1], 0))
            i += 1
    return out


# The .c files a waiting call's general path may cross: the entry (api/call.c), the transport
# (run/slot.c), the wait (run/wait.c), the serve (run/run.c) and the idle wait, the wakeup
# protocol's worker side (proto/wake.c), one a layer's role (docs/layout.md).
PATH_FILES = 5
# The idle wait's ready() (xc_ready_fn, proto/wake.h): the protocol asks the caller that passed
# it whether to stop waiting. A call through it goes back to the caller's file by design, as a
# return does: no edge back.
CALLBACKS = {"ready_done", "ready_idle", "ready_idle_straight"}


def walk_files(seq):
    """From general_path's sequence: the printed lines [(depth, fn, file), times], the .c files
    in the order entered, and each call edge back into a file already left (fn, from, to)."""
    stack_files, files, left, backs, lines = [], [], set(), [], []
    last_printed = None
    for kind, depth, fn, cf in seq:
        if kind == "ret":
            # return up the stack: the files above @depth are left, not entered
            while len(stack_files) > depth:
                f = stack_files.pop()
                if stack_files and stack_files[-1] != f:
                    left.add(f)
            continue
        parent = stack_files[depth - 1] if depth > 0 and len(stack_files) >= depth else None
        del stack_files[depth:]
        stack_files.append(cf)
        if cf not in ("libc", "?", "driver"):
            if cf not in files:
                files.append(cf)
            if parent and parent != cf:
                if cf in left and fn not in CALLBACKS:
                    backs.append((fn, parent, cf))
                left.add(parent)
        entry = (depth, fn, cf)
        if entry == last_printed:
            lines[-1][1] += 1
        else:
            lines.append([entry, 1])
        last_printed = entry
    return lines, files, backs


def print_path(binary, path, what):
    if not path:
        print(f"\n-v: the trace holds no call {what}")
        return
    seq = general_path(binary, path)
    print(f"\nthe general path of a waiting call, xc_call_single(1, fn, NULL, XC_WAIT | XC_RUN_LOCAL), "
          f"{what}: the caller's functions, by depth of call and inlining, each in the .c file its code "
          "is in")
    lines, files, backs = walk_files(seq)
    for (depth, fn, cf), times, loops in collapse(lines):
        rep = f"  (x{times})" if times > 1 else ""
        loop = f"   }} x{loops}: a loop's passes" if loops else ""
        print(f"  {cf:18} {'  ' * depth}{fn}{rep}{loop}")
    print(f"\n.c files on the path: {len(files)} ({', '.join(f.replace('src/', '') for f in files)})")
    if backs:
        edges = collections.Counter((frm, to, fn) for fn, frm, to in backs)
        print(f"call edges back into a file it had left: {len(edges)}"
              + (f" ({len(backs)} calls)" if len(backs) > len(edges) else ""))
        for (frm, to, fn), times in edges.items():
            rep = f"  (x{times})" if times > 1 else ""
            print(f"  {frm.replace('src/', '')} -> {to.replace('src/', '')}: {fn}{rep}")
    else:
        print("call edges back into a file it had left: none")


# ---- the test on known patterns ----

def test(binary):
    """The bare handoff, the ring and a planted line: the known counts, and the plant seen;
    and the general path's files and edges."""
    fails = 0

    def check(what, got, want, tol=0.02):
        nonlocal fails
        ok = abs(got - want) <= tol
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {got:.3f} per call (want {want:.3f})")
        fails += not ok
        return ok

    def known_handoff(m):
        """The bare handoff's pattern: one line written by each side in turn, at both sizes."""
        return all(abs(m[(g, k)] - 2.0) <= 0.02 for g in GRAINS for k in ("data", "inv"))

    n = 200
    h = measure(binary, "handoff", ["handoff", "{n}"], 1, n)
    for g in GRAINS:
        check(f"handoff, {g}-byte lines, data transfers", h[(g, "data")], 2.0)
        check(f"handoff, {g}-byte lines, invalidations", h[(g, "inv")], 2.0)
        check(f"handoff, {g}-byte lines, the caller's data transfers", h[(g, "caller", "data")], 1.0)
    # the ring, a burst of 1: the entry's line and the head's line, each moved and invalidated
    # once a call, and the tail's once a lap of 256 entries (the producer's full check)
    r = measure(binary, "ring k=1 s=1", ["ring", "1", "1", "{n}"], 1, 512)
    check("ring k=1, 64-byte lines, data transfers", r[(64, "data")], 2 + 1 / 256)
    check("ring k=1, 64-byte lines, invalidations", r[(64, "inv")], 2 + 1 / 256)
    check("ring k=1, the worker's passes per call", r[("passes", "worker")], 1.0)
    # at 128 bytes the same: head, tail and the entries each in a pair of their own
    check("ring k=1, 128-byte lines, data transfers", r[(128, "data")], 2 + 1 / 256)
    check("ring k=1, 128-byte lines, invalidations", r[(128, "inv")], 2 + 1 / 256)
    # a burst of 4: one line of entries (4 of 16 bytes) and the head's, per 4 calls
    r = measure(binary, "ring k=4 s=1", ["ring", "4", "1", "{n}"], 1, 512)
    check("ring k=4, 64-byte lines, data transfers", r[(64, "data")], 0.5 + 1 / 256)
    p = measure(binary, "handoff", ["handoff", "{n}", "plant"], 1, n)
    for g in GRAINS:
        check(f"handoff with a planted line, {g}-byte lines: data transfers more than the handoff's",
              p[(g, "data")] - h[(g, "data")], 1.0)
        check(f"handoff with a planted line, {g}-byte lines: invalidations more than the handoff's",
              p[(g, "inv")] - h[(g, "inv")], 1.0)
    # the line after the handoff's, in its 128-byte pair: one more at 64 bytes, none at 128
    q = measure(binary, "handoff", ["handoff", "{n}", "near"], 1, n)
    check("handoff with a line planted in its pair, 64-byte lines: data transfers more",
          q[(64, "data")] - h[(64, "data")], 1.0)
    check("handoff with a line planted in its pair, 128-byte lines: data transfers more",
          q[(128, "data")] - h[(128, "data")], 0.0)
    # the waiting call's general path: at most PATH_FILES .c files, no call edge back into a
    # file it had left; the call that outlasts the spin must be in the trace, the one that
    # completes in it may not be (the OS ran the worker late for each)
    res = run_driver(binary, ["wait", "20", "general"], want_path=True)
    for key, what in (("slow", "outlasts the caller's spin"), ("quick", "completes in the caller's spin")):
        path = res.paths.get(key)
        if not path:
            print(f"{'FAIL' if key == 'slow' else 'note'} the trace holds no waiting call that {what}")
            fails += key == "slow"
            continue
        _, files, backs = walk_files(general_path(binary, path))
        ok = len(files) <= PATH_FILES and not backs
        print(f"{'ok  ' if ok else 'FAIL'} the general path of a waiting call that {what}: "
              f"{len(files)} .c files (at most {PATH_FILES}), {len(backs)} call edges back (want none)"
              + ("" if ok else ": " + ", ".join(f"{a} -> {b}: {fn}" for fn, a, b in backs)))
        fails += not ok
    planted = known_handoff(p)
    print(f"{'FAIL' if planted else 'ok  '} the handoff's known pattern "
          f"{'holds' if planted else 'fails'} with the planted line")
    fails += planted
    print(f"count-lines test: {'passed' if not fails else f'{fails} failed'}")
    return 1 if fails else 0


def main(argv):
    verbose = "-v" in argv
    testing = "--test" in argv
    only = None
    args = []
    it = iter(argv[1:])
    usage = "\n".join(__doc__.strip().splitlines()[-2:])
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a == "--cases":
            only = next(it, "").split(",")
        elif a.startswith("-") and a not in ("-v", "--test"):
            print(f"count_lines: unknown option {a}\n{usage}", file=sys.stderr)
            return 2
        elif a not in ("-v", "--test"):
            args.append(a)
    if len(args) != 1:
        print(usage, file=sys.stderr)
        return 2
    unknown = [o for o in only or [] if not any(name.startswith(o) for name, *_ in cases())]
    if unknown:
        print(f"count_lines: no case named {unknown[0]!r}: the cases are "
              + ", ".join(name for name, *_ in cases()), file=sys.stderr)
        return 2
    if not os.path.isfile(os.path.join(args[0], "count", "roundtrip_driver")):
        print(f"count_lines: {args[0]}/count/roundtrip_driver is not built (make count-lines builds it)",
              file=sys.stderr)
        return 2
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode:
        print("count_lines: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    binary = Binary(os.path.join(args[0], "count", "roundtrip_driver"))
    if not binary.hook_lines:
        print("count_lines: no spin pass found in the driver (was it built with count_hook.h?)",
              file=sys.stderr)
        return 2
    if testing:
        return test(binary)
    ms = []
    for name, dargs, per_n, n in cases():
        if only and not any(name.startswith(o) for o in only):
            continue
        ms.append(measure(binary, name, dargs, per_n, n))
    print_table(ms, binary)
    print_details(binary, ms)
    if verbose:
        res = run_driver(binary, ["wait", "20", "general"], want_path=True)
        print_path(binary, res.paths.get("quick"), "that completes in the caller's spin")
        print_path(binary, res.paths.get("slow"), "that outlasts the caller's spin (fn returns once the caller sleeps)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
