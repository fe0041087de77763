#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check what the kmod-test guest reported (standard library only).

The guest's /init (kmod/guest/init) writes one block per parameter set to its second
serial port, between @@ markers: the insmod exit code and output, /proc/interrupts before
and after, the JSON of /proc/xcall_ipi and the kernel log. This script checks, for every
line of kmod/guest/cases:

  ok sets     insmod succeeded; the JSON has the results-format shape (docs/results-format.md),
              the bench name, the cases and the counts asked for; every call ran; and the
              guest's /proc/interrupts CAL counters rose by about the IPIs the module sent;
  einval sets insmod failed with "Invalid argument", the module said why, and nothing ran;

and, over the whole boot, that the kernel printed no oops, BUG, WARNING or stall. It then
prints the in-kernel figures beside xcall-bench's `kernel ipi` ones from the same guest, as
ratios, and closes with `N passed, N failed`. Exit status 1 when a check failed.
"""
import argparse
import json
import os
import re
import sys

UNITS = {"ns", "s", "cycles", "ops/s", "ratio", "irq/op", "pct"}
HOST_KEYS = {
    "hostname": str, "cpu_model": str, "cpus_online": int, "kernel": str,
    "virtualised": bool, "hypervisor": str, "idle_driver": str, "tsc_invariant": bool,
}
KERNEL_BAD = re.compile(
    r"Oops|BUG:|WARNING:|Call Trace|general protection|soft lockup|hard LOCKUP|"
    r"rcu: INFO|self-detected stall|Kernel panic|hung_task|blocked for more than")
IPI_CASES = ["dry-run", "self", "normal", "broadcast", "broadcast-lock"]
IPI_EXTRA = ["self-irqwork", "normal-busy"]    # asked for by name only
IWI_CASES = ("self-irqwork",)                   # irq_work self-IPIs: IWI, not CAL
DELIVERY = ("self", "normal", "self-irqwork", "normal-busy")


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"  ok    {what}")
        else:
            self.failed += 1
            print(f"  FAIL  {what}" + (f": {detail}" if detail else ""))
        return ok


# ------------------------------------------------------------------ parsing

def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace").replace("\r", "")


def parse_blocks(text):
    """Returns (header lines, {case name: block dict}, bench block or None, done flag)."""
    blocks, bench, cur, section = {}, None, None, None
    header = []
    done = False
    for line in text.split("\n"):
        if line.startswith("@@"):
            tag, _, rest = line[2:].partition(" ")
            if tag == "XCALL-BEGIN":
                cur = {"name": rest, "sections": {}}
                section = None
            elif tag == "XCALL-END":
                if cur is not None:
                    blocks[cur["name"]] = cur
                cur, section = None, None
            elif tag == "BENCH-BEGIN":
                cur = {"name": "xcall-bench", "sections": {}}
                section = None
            elif tag == "BENCH-END":
                bench, cur, section = cur, None, None
            elif tag == "XCALL-DONE":
                done = True
            elif cur is not None and tag in ("EXPECT", "PARAMS", "RC", "SECONDS"):
                cur[tag.lower()] = rest
            elif cur is not None:
                section = tag
                cur["sections"][section] = []
            else:
                header.append(line)
            continue
        if cur is not None and section is not None:
            cur["sections"][section].append(line)
        elif cur is None:
            header.append(line)
    return header, blocks, bench, done


def cal_total(lines):
    """Sum of the CAL row of a /proc/interrupts dump (None when absent)."""
    return irq_total(lines, "CAL:")


def irq_total(lines, row):
    """Sum over CPUs of one row of a /proc/interrupts dump (None when absent)."""
    for line in lines or []:
        parts = line.split()
        if parts and parts[0] == row:
            total = 0
            for p in parts[1:]:
                if not p.isdigit():
                    break
                total += int(p)
            return total
    return None


def parse_cases(path):
    out = []
    for line in read_text(path).split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, expect, params = line.split("|", 2)
        out.append((name.strip(), expect.strip(), params.strip()))
    return out


def params_of(s):
    return dict(p.split("=", 1) for p in (s or "").split() if "=" in p)


# ------------------------------------------------------------------ shape

def shape_errors(doc, kmod=True):
    """Everything wrong with a results document, as a list of strings (empty: good)."""
    errs = []
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    if doc.get("schema_version") != 1:
        errs.append(f"schema_version is {doc.get('schema_version')!r}, not 1")
    for k in ("tool", "tool_version", "created"):
        if not isinstance(doc.get(k), str) or not doc.get(k):
            errs.append(f"{k} missing or not a string")
    if not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", str(doc.get("created", ""))):
        errs.append(f"created {doc.get('created')!r} is not ISO 8601")
    cmd = doc.get("command")
    if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) for c in cmd):
        errs.append("command is not a non-empty list of strings")
    host = doc.get("host")
    if not isinstance(host, dict):
        errs.append("host missing")
    else:
        for k, t in HOST_KEYS.items():
            v = host.get(k)
            if not isinstance(v, t) or (t is int and isinstance(v, bool)):
                errs.append(f"host.{k} missing or not {t.__name__}")
    res = doc.get("results")
    if not isinstance(res, list) or not res:
        return errs + ["results is not a non-empty list"]
    seen = set()
    for i, r in enumerate(res):
        where = f"results[{i}]"
        if not isinstance(r, dict):
            errs.append(f"{where} is not an object")
            continue
        where = f"results[{i}] ({r.get('case')})"
        for k in ("bench", "case"):
            if not isinstance(r.get(k), str) or not r.get(k):
                errs.append(f"{where}: {k} missing")
        if r.get("unit") not in UNITS:
            errs.append(f"{where}: unit {r.get('unit')!r} not one of {sorted(UNITS)}")
        n = r.get("n")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            errs.append(f"{where}: n {n!r} is not a positive integer")
        nums = {}
        for k in ("mean", "p50", "p90", "p99", "max"):
            v = r.get(k)
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                errs.append(f"{where}: {k} missing or not a number")
            else:
                nums[k] = v
        for k in ("min", "stddev"):
            if k in r and (not isinstance(r[k], (int, float)) or isinstance(r[k], bool)):
                errs.append(f"{where}: {k} not a number")
            elif k in r:
                nums[k] = r[k]
        if kmod and "repeat" not in r:
            errs.append(f"{where}: repeat missing")
        if "repeat" in r and (not isinstance(r["repeat"], int) or r["repeat"] < 0):
            errs.append(f"{where}: repeat not a non-negative integer")
        if "cpus" in r and (not isinstance(r["cpus"], list)
                            or not all(isinstance(c, int) for c in r["cpus"])):
            errs.append(f"{where}: cpus not a list of integers")
        if "params" in r and not isinstance(r["params"], dict):
            errs.append(f"{where}: params not an object")
        if "counters" in r:
            c = r["counters"]
            if not isinstance(c, dict) or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in c.values()):
                errs.append(f"{where}: counters not an object of integers")
        if r.get("better") not in ("lower", "higher"):
            errs.append(f"{where}: better {r.get('better')!r} not lower/higher")
        if all(k in nums for k in ("p50", "p90", "p99", "max")):
            chain = [nums.get("min", nums["p50"]), nums["p50"], nums["p90"], nums["p99"], nums["max"]]
            if any(a > b for a, b in zip(chain, chain[1:])):
                errs.append(f"{where}: not min <= p50 <= p90 <= p99 <= max: {chain}")
            if "mean" in nums and not (chain[0] <= nums["mean"] <= nums["max"]):
                errs.append(f"{where}: mean {nums['mean']} outside [min, max]")
        key = (r.get("bench"), r.get("case"), r.get("repeat", 0))
        if key in seen:
            errs.append(f"{where}: duplicate bench/case/repeat {key}")
        seen.add(key)
    return errs


# ------------------------------------------------------------------ checks

def cal_bounds(expected, wait, idle_polls):
    """The CAL rise accepted for `expected` IPIs sent. Fewer can arrive: the kernel sends no
    IPI to a target whose idle loop is polling (TIF_POLLING_NRFLAG, seed 000's subject), and
    with wait=0 calls queue behind one another and share one IPI. A guest whose CPU offers
    MONITOR/MWAIT (`idle_polls`, as TCG's -cpu max does) may idle in mwait with that flag
    set; in such a guest as few as 34% of the waiting calls' IPIs arrived in one run, so
    there only some must arrive (the module's own count is still checked against the rise).
    More can arrive from the rest of the system (timers, RCU, the insmod itself), a little."""
    hi = int(expected * 1.10) + 300
    lo = 1 if not wait or idle_polls else int(expected * 0.5)
    return lo, hi


def check_ok_case(ck, name, params, blk, docs, idle_polls):
    secs = blk["sections"]
    rc = blk.get("rc")
    if not ck.check(rc == "0", f"{name}: insmod succeeded",
                    f"rc {rc}: {' '.join(secs.get('INSMOD-OUT', []))[:200]}"):
        return
    raw = "\n".join(secs.get("JSON", []))
    try:
        doc = json.loads(raw)
    except ValueError as e:
        ck.check(False, f"{name}: /proc/xcall_ipi is JSON", str(e))
        return
    ck.check(True, f"{name}: /proc/xcall_ipi is JSON")
    errs = shape_errors(doc)
    ck.check(not errs, f"{name}: results-format shape", "; ".join(errs[:5]))
    docs[name] = doc
    recs = {r.get("case"): r for r in doc.get("results", []) if isinstance(r, dict)}
    mode = params.get("mode", "ipi")
    online = doc.get("host", {}).get("cpus_online", 0)
    wait = params.get("wait", "1") not in ("0", "n", "N")

    if mode == "ipi":
        iters = int(params.get("iterations", 100000))
        want = params.get("cases", ",".join(IPI_CASES)).split(",")
        want_recs = set(want) | {c + ".delivery" for c in want if c in DELIVERY}
        ck.check(all(r.get("bench") == "kmod-ipi" for r in recs.values()),
                 f"{name}: every record is bench kmod-ipi")
        ck.check(set(recs) == want_recs, f"{name}: cases {sorted(want_recs)}",
                 f"got {sorted(recs)}")
        bad_n = [c for c, r in recs.items()
                 if r.get("n") != iters and not r.get("params", {}).get("truncated")]
        ck.check(not bad_n, f"{name}: n == iterations ({iters}) in every record", f"{bad_n}")
        if "cpu" in params and want:
            r = recs.get(want[0], {})
            ck.check(r.get("cpus", [None])[0] == int(params["cpu"]),
                     f"{name}: sender is CPU {params['cpu']}", f"cpus {r.get('cpus')}")
        if "normal" in recs and "target" in params:
            ck.check(recs["normal"].get("params", {}).get("target") == int(params["target"]),
                     f"{name}: normal targets CPU {params['target']}")
        # Function-call IPIs show in CAL; self-irqwork's irq_work self-IPIs in IWI.
        expected = sum(r.get("counters", {}).get("ipis_expected", 0)
                       for c, r in recs.items() if c not in IWI_CASES)
        mod_cal = sum(r.get("counters", {}).get("cal_irqs", 0) for r in recs.values())
        wait = True
        if "self-irqwork" in recs:
            iw = recs["self-irqwork"].get("counters", {})
            before = irq_total(secs.get("IRQ-BEFORE"), "IWI:")
            after = irq_total(secs.get("IRQ-AFTER"), "IWI:")
            exp = iw.get("ipis_expected", 0)
            if ck.check(before is not None and after is not None,
                        f"{name}: /proc/interrupts has an IWI row"):
                d = after - before
                ck.check(exp * 0.9 <= d <= exp * 1.1 + 300,
                         f"{name}: IWI rose by {d} for {exp} irq_work self-IPIs",
                         f"outside {exp * 0.9:.0f}..{exp * 1.1 + 300:.0f}")
    else:
        numipi = int(params.get("numipi", 100000))
        single = params.get("single", "1") not in ("0", "n", "N")
        kind = ("single" if single else "many") + ("-wait" if wait else "-nowait")
        cl = params.get("cpulist")
        senders = expand_cpulist(cl) if cl else list(range(online))
        want_recs = {kind, kind + ".runtime"} | {f"{kind}.cpu{c}" for c in senders}
        ck.check(all(r.get("bench") == "kmod-storm" for r in recs.values()),
                 f"{name}: every record is bench kmod-storm")
        ck.check(set(recs) == want_recs, f"{name}: cases {sorted(want_recs)}",
                 f"got {sorted(recs)}")
        main = recs.get(kind, {})
        cnt = main.get("counters", {})
        truncated = main.get("params", {}).get("truncated")
        ck.check(truncated or main.get("n") == numipi * len(senders),
                 f"{name}: {main.get('n')} calls timed ({len(senders)} senders x {numipi}"
                 f"{', stopped by the timeout' if truncated else ''})", f"n {main.get('n')}")
        ck.check(cnt.get("handled") == cnt.get("handled_expected") and cnt.get("handled", 0) > 0,
                 f"{name}: every call ran its handler ({cnt.get('handled')})",
                 f"handled {cnt.get('handled')} of {cnt.get('handled_expected')}")
        if "timeout" in params and numipi * len(senders) > 10**8:
            ck.check(truncated is True and 0 < main.get("n", 0) < numipi * len(senders),
                     f"{name}: timeout={params['timeout']} stopped the senders early "
                     f"({main.get('n')} calls)", f"truncated {truncated}, n {main.get('n')}")
        rt = recs.get(kind + ".runtime", {})
        ck.check(rt.get("n") == 1 and rt.get("p50") == rt.get("max") == rt.get("mean"),
                 f"{name}: runtime is a single-number record")
        if single:
            off = int(params.get("offset", 1))
            pairs = {c: recs.get(f"{kind}.cpu{c}", {}).get("params", {}).get("target")
                     for c in senders}
            good = all(t == (c + off) % online for c, t in pairs.items())
            ck.check(good, f"{name}: each sender calls the CPU {off} after it", f"{pairs}")
        expected = cnt.get("ipis_expected", 0)
        mod_cal = cnt.get("cal_irqs", 0)

    before = cal_total(secs.get("IRQ-BEFORE"))
    after = cal_total(secs.get("IRQ-AFTER"))
    if not ck.check(before is not None and after is not None,
                    f"{name}: /proc/interrupts has a CAL row"):
        return
    delta = after - before
    lo, hi = cal_bounds(expected, wait, idle_polls)
    ck.check(lo <= delta <= hi,
             f"{name}: CAL rose by {delta} for {expected} IPIs sent "
             f"({100.0 * delta / expected if expected else 0:.0f}%; accepted {lo}..{hi})",
             f"outside {lo}..{hi}")
    ck.check(mod_cal <= delta, f"{name}: the module's own CAL count ({mod_cal}) fits in the "
             f"/proc/interrupts rise ({delta})")


def check_einval_case(ck, name, blk):
    secs = blk["sections"]
    out = " ".join(secs.get("INSMOD-OUT", []))
    dmesg = [l for l in secs.get("DMESG", []) if "xcall_ipi" in l and "taint" not in l]
    ck.check(blk.get("rc") not in (None, "0") and "Invalid argument" in out,
             f"{name}: insmod fails with -EINVAL", f"rc {blk.get('rc')}: {out[:160]}")
    msg = dmesg[0].split("] ", 1)[-1] if dmesg else ""
    ck.check(bool(msg), f"{name}: the kernel says why: {msg[:110]}")
    ck.check("JSON" not in secs, f"{name}: no results file was left")


def expand_cpulist(s):
    out = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


# ------------------------------------------------------------------ tables

def fmt_ns(v):
    if v >= 1e9:
        return f"{v / 1e9:.2f} s"
    if v >= 1e6:
        return f"{v / 1e6:.2f} ms"
    if v >= 1e3:
        return f"{v / 1e3:.2f} us"
    return f"{v:.0f} ns"


def print_ipi_table(doc, accel):
    recs = {r["case"]: r for r in doc["results"]}
    dry = recs.get("dry-run", {}).get("counters", {}).get("total_ns")
    print("\n  kmod-ipi, the seed 003 table (sums over all calls; ratio = total / dry-run total;\n"
          "  irqs = CAL rise, IWI for self-irqwork):")
    print(f"    {'case':16} {'delivery':>12} {'total':>12} {'ratio':>7} {'p50/call':>10} "
          f"{'p99/call':>10} {'irqs/IPIs':>12}")
    for c in IPI_CASES + IPI_EXTRA:
        r = recs.get(c)
        if not r:
            continue
        cnt = r.get("counters", {})
        ratio = f"{cnt['total_ns'] / dry:.1f}" if dry else "-"
        exp = cnt.get("ipis_expected", 0)
        got = cnt.get("iwi_irqs", 0) if c in IWI_CASES else cnt.get("cal_irqs", 0)
        calpct = f"{got}/{exp}" if exp else "-"
        print(f"    {c:16} {fmt_ns(cnt.get('delivery_sum_ns', 0)):>12} "
              f"{fmt_ns(cnt.get('total_ns', 0)):>12} {ratio:>7} {fmt_ns(r['p50']):>10} "
              f"{fmt_ns(r['p99']):>10} {calpct:>12}")


def print_storm(doc):
    for r in doc["results"]:
        if r["case"].endswith(".runtime"):
            cnt = r.get("counters", {})
            print(f"    {r['case']:24} runtime {fmt_ns(r['p50']):>10}  "
                  f"calls {cnt.get('calls')}  CAL {cnt.get('cal_irqs')}/{cnt.get('ipis_expected')}")
        elif "." not in r["case"]:
            print(f"    {r['case']:24} per call p50 {fmt_ns(r['p50'])}, p90 {fmt_ns(r['p90'])}, "
                  f"p99 {fmt_ns(r['p99'])}, max {fmt_ns(r['max'])}")


def side_by_side(kdoc, bdoc, accel):
    """In-kernel figures beside xcall-bench's, row by row where the case names match (kmod
    'normal' with bench 'ipi/normal'), each as a ratio to its own 'normal' row."""
    print("\n  In-kernel (xcall_ipi.ko) beside user space (xcall-bench kernel ipi), same guest,")
    print("  p50 per call and, in brackets, the ratio to the same tool's normal row (the module's\n"
          "  normal-busy when it ran: like xcall-bench's, its target CPU is busy, not idle):")
    if accel == "tcg":
        print("    (software emulation: absolute times mean nothing here, read only the ratios)")
    krecs = list(kdoc["results"])
    brecs = [r for r in bdoc.get("results", []) if r.get("unit") == "ns"]
    # xcall-bench's normal keeps its target busy (a spinner), as the module's normal-busy
    # does; the module's normal interrupts an idle target. Line up like with like.
    busy = any(r["case"] == "normal-busy" for r in krecs)

    def bench_match(case):
        if busy and case == "normal":
            return None
        if case == "normal-busy":
            case = "normal"
        return next((r for r in brecs if r["case"] == case or r["case"].endswith("/" + case)), None)

    kref = next((r for r in krecs if r["case"] == ("normal-busy" if busy else "normal")),
                krecs[0] if krecs else None)
    bref = next((r for r in brecs if r["case"] == "normal" or r["case"].endswith("/normal")),
                brecs[0] if brecs else None)

    def cell(r, base):
        if r is None:
            return f"{'-':>22}"
        ratio = r["p50"] / base["p50"] if base and base["p50"] else 0.0
        return f"{fmt_ns(r['p50']):>10} [{ratio:>7.2f}x]"

    print(f"    {'case':22} {'xcall_ipi.ko':>22}   {'xcall-bench kernel':>22}   bench case")
    used = set()
    for r in krecs:
        b = bench_match(r["case"])
        if b is not None:
            used.add(b["case"])
        print(f"    {r['case']:22} {cell(r, kref)}   {cell(b, bref)}   {b['case'] if b else ''}")
    for b in brecs:
        if b["case"] not in used:
            print(f"    {'':22} {cell(None, None)}   {cell(b, bref)}   {b['case']}")
    if kref and bref and kref["p50"]:
        print(f"    user space '{bref['case']}' p50 / in-kernel '{kref['case']}' p50 = "
              f"{bref['p50'] / kref['p50']:.2f} (what the user-space path adds to one IPI)")


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", required=True, help="the guest's results serial log")
    ap.add_argument("--console", help="the guest's console log (checked for oopses)")
    ap.add_argument("--cases", required=True, help="kmod/guest/cases")
    ap.add_argument("--accel", default="tcg", help="kvm or tcg (tcg: times are meaningless)")
    ap.add_argument("--json-dir", help="where to write each JSON document found")
    ap.add_argument("--bench-note", help="why xcall-bench was not run in the guest")
    a = ap.parse_args()

    ck = Checker()
    print(f"kmod-test: checking {a.results} (accelerator: {a.accel})")
    if a.accel == "tcg":
        print("kmod-test: NOTE the guest ran under software emulation (TCG): absolute times mean "
              "nothing, compare only ratios within this run")
    try:
        text = read_text(a.results)
    except OSError as e:
        ck.check(False, "the guest wrote results", str(e))
        text = ""
    header, blocks, bench, done = parse_blocks(text)
    ck.check(done, "the guest ran every parameter set and powered off")
    for line in header:
        if line.strip() and not line.startswith("XCALL-GUEST"):
            print(f"  guest: {line}")

    idle_polls = any(line.startswith("idle-mwait:") for line in header)
    docs = {}
    for name, expect, params in parse_cases(a.cases):
        blk = blocks.get(name)
        if not ck.check(blk is not None, f"{name}: the guest reported it"):
            continue
        if expect == "ok":
            check_ok_case(ck, name, params_of(blk.get("params", params)), blk, docs, idle_polls)
        else:
            check_einval_case(ck, name, blk)

    bad = []
    for name, blk in blocks.items():
        bad += [f"{name}: {l.strip()}" for l in blk["sections"].get("DMESG", []) if KERNEL_BAD.search(l)]
    if a.console and os.path.exists(a.console):
        bad += [f"console: {l.strip()}" for l in read_text(a.console).split("\n") if KERNEL_BAD.search(l)]
    ck.check(not bad, "the guest kernel printed no oops, BUG, WARNING or stall", "; ".join(bad[:4]))

    bdoc = None
    if bench is not None and bench.get("rc") != "0" and "not implemented" in "\n".join(
            bench["sections"].get("OUT", [])):
        out = " ".join(bench["sections"].get("OUT", [])).strip()
        print(f"  skip  xcall-bench kernel ipi: this xcall-bench does not have it yet ({out[:120]})")
    elif bench is not None:
        secs = bench["sections"]
        out = "\n".join(secs.get("OUT", []))
        ck.check(bench.get("rc") == "0", "xcall-bench kernel ipi ran in the guest",
                 f"rc {bench.get('rc')}: {out[-300:]}")
        b0, b1 = cal_total(secs.get("IRQ-BEFORE")), cal_total(secs.get("IRQ-AFTER"))
        if b0 is not None and b1 is not None:
            print(f"  info  the guest's CAL counters rose by {b1 - b0} while xcall-bench ran")
        try:
            bdoc = json.loads("\n".join(secs.get("JSON", [])))
            errs = shape_errors(bdoc, kmod=False)
            ck.check(not errs, "xcall-bench kernel ipi: results-format shape", "; ".join(errs[:5]))
            docs["xcall-bench-kernel-ipi"] = bdoc
        except ValueError as e:
            ck.check(False, "xcall-bench kernel ipi wrote its JSON", str(e))
            bdoc = None
    else:
        print(f"  skip  xcall-bench kernel ipi: {a.bench_note or 'not staged in the guest'}")

    if a.json_dir:
        os.makedirs(a.json_dir, exist_ok=True)
        for name, doc in docs.items():
            fn = name if name.startswith("xcall-bench") else f"kmod-{name}"
            with open(os.path.join(a.json_dir, fn + ".json"), "w") as f:
                json.dump(doc, f, indent=1)
        print(f"\n  JSON documents written to {a.json_dir}/kmod-*.json "
              f"(xcall-report compare takes them)")

    kdoc = docs.get("ipi-all")
    if kdoc and "ipi-busy" in docs:     # the side-by-side table wants normal-busy too
        kdoc = dict(kdoc, results=kdoc["results"] + [
            r for r in docs["ipi-busy"]["results"] if r["case"].startswith("normal-busy")])
    for n, d in docs.items():
        if n.startswith("ipi"):
            print(f"\n   {n}: insmod xcall_ipi.ko {' '.join(d['command'][2:])}", end="")
            print_ipi_table(d, a.accel)
    if any(n.startswith("storm") for n in docs):
        print("\n  kmod-storm (ipistorm):")
        for n, d in docs.items():
            if n.startswith("storm"):
                print(f"   {n}: insmod xcall_ipi.ko {' '.join(d['command'][2:])}")
                print_storm(d)
    if kdoc and bdoc:
        side_by_side(kdoc, bdoc, a.accel)
    if a.accel == "tcg":
        print("\n  (TCG: the figures above are emulated time; only ratios within this run mean anything)")

    print(f"\n{ck.passed} passed, {ck.failed} failed")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main())
