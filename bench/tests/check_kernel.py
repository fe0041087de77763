# SPDX-License-Identifier: MIT
"""check_kernel.py - the `kernel` subcommand's checks, run by check_bench.py.

Behaviour, not timing: the kernel's own interrupt counters must show an IPI
for the normal membarrier probe and none for the dry-run; sysfs changed by a
root probe must be back after SIGTERM, and after SIGKILL once --restore ran;
root probes refuse (exit 2) without root or without their opt-in flag.
"""
import os
import signal
import subprocess
import time

JOURNAL = "/run/xcall/sysfs-journal"


def idle_state_files(cpu):
    d = f"/sys/devices/system/cpu/cpu{cpu}/cpuidle"
    out = []
    i = 0
    while os.path.exists(f"{d}/state{i}/disable"):
        out.append(f"{d}/state{i}/disable")
        i += 1
    return out


def snapshot(files):
    vals = {}
    for f in files:
        with open(f) as fh:
            vals[f] = fh.read().strip()
    return vals


def test_probes(m, ncpu):
    res, _ = m.run_json("kernel", ["kernel", "--iterations", "300"])
    if res is None:
        return
    want = ["ipi/dry-run", "ipi/self", "wakeup/futex-short-gap", "tlb/munmap-0", "tlb/mprotect-0",
            "compare/libxcall-polling"]
    if ncpu >= 2:
        want += ["ipi/normal", "ipi/broadcast", "wakeup/futex-long-gap", "wakeup/polling",
                 "tlb/munmap-1", "tlb/munmap-all", "tlb/mprotect-1", "tlb/mprotect-all",
                 "compare/kernel-ipi", "compare/kernel-wakeup", "compare/libxcall-sleeping"]
    m.expect_cases("kernel", res, want)
    timed = [r for r in res if r["case"].startswith(("ipi/", "wakeup/", "tlb/")) and not m.skipped(r)]
    # the IPI rows are batch-timed: 300 operations in spans of 100, one sample a span; a row
    # --case-limit stopped (capped) made fewer, params.iterations of them, and timed what ran
    def whole(v, want, r):
        return v == want or (m.capped(r) and 0 < v < want)
    wrong = [f"{r['case']}: n={r['n']}, iterations {r.get('params', {}).get('iterations')}" for r in timed
             if not whole(r["n"], 3 if r["case"].startswith("ipi/") else 300, r) or
             not whole(r.get("params", {}).get("iterations", 0), 300, r)]
    m.check("kernel: n equals --iterations 300 (what ran where capped)", not wrong, ", ".join(wrong[:4]))


def per_op(r, key):
    return r.get("params", {}).get(key)


def proven(r):
    """Whether a normal-mode record's function-call interrupts make its time an IPI's cost."""
    cal = per_op(r, "CAL_per_op_target")
    return cal is not None and 0.9 <= cal <= 1.1


def test_ipi_counters(m, ncpu):
    """The kernel's counters, as the run found them (a busy machine may leave the target's
    spinner unscheduled, and the kernel then sends no IPI: that is the machine, not the
    bench): a normal record is marked no_ipi exactly when it did not count about one
    function-call interrupt a call; a dry run counts none. With no spinner on the target
    (the test hook), the kernel sends none, and the record says so."""
    name = "kernel ipi: normal marked no_ipi exactly when not 0.9-1.1 target CAL/op, dry-run <= 0.1"
    if ncpu < 2:
        m.skip(name, "needs 2 CPUs")
        return
    res, _ = m.run_json("kernel-ipi", ["kernel", "ipi", "compare", "--iterations", "2000"])
    if res is None:
        return
    normal, dry = m.find(res, "ipi/normal"), m.find(res, "ipi/dry-run")
    unrun = [r for r in (normal, dry) if not r or r["n"] == 0]
    if unrun:
        m.skip(name, f"{unrun[0]['case']} not measured: {m.skipped(unrun[0])}" if unrun[0] else "no record")
        return
    if per_op(normal, "CAL_per_op_target") is None:
        m.skip(name, "/proc/interrupts has no CAL row")
        return
    ipis = [r for r in res if r["case"] in ("ipi/normal", "compare/kernel-ipi") and r["n"] > 0]
    wrong = [f"{r['case']}: {per_op(r, 'CAL_per_op_target'):.2f} CAL/op, no_ipi {per_op(r, 'no_ipi')!r}"
             for r in ipis if proven(r) == bool(per_op(r, "no_ipi"))]
    d_cal = per_op(dry, "CAL_per_op_target")
    m.check(name + f" (normal {per_op(normal, 'CAL_per_op_target'):.2f}, dry-run {d_cal:.2f})",
            not wrong and d_cal <= 0.1, "; ".join(wrong) or f"dry-run {d_cal:.2f} CAL/op")
    # the kernel's own rule, forced: no thread of ours on the target, no IPI
    name = "kernel ipi with no spinner on the target: no IPI, the records say so, no ratio to one"
    res, _ = m.run_json("kernel-ipi-lone", ["kernel", "ipi", "compare", "--iterations", "2000"],
                        env={"XCALL_BENCH_KERNEL_NO_SPINNER": "1"})
    if res is None:
        return
    ipis = [r for r in res if r["case"] in ("ipi/normal", "compare/kernel-ipi") and r["n"] > 0]
    bad = [f"{r['case']}: {per_op(r, 'CAL_per_op_target')} CAL/op, no_ipi {per_op(r, 'no_ipi')!r}"
           for r in ipis if per_op(r, "CAL_per_op_target") > 0.1 or
           "sent no IPI" not in (per_op(r, "no_ipi") or "")]
    ratios = [r["case"] for r in res if "ratio_to_kernel_ipi" in r.get("params", {})]
    m.check(name, len(ipis) == 2 and not bad and not ratios,
            f"{len(ipis)} records; {'; '.join(bad)}; ratios to it: {ratios}")


def wait_for_journal(p):
    """True once the run journalled a change to sysfs, False if it ended first: the event
    itself, however long the machine takes to get there."""
    while p.poll() is None:
        if os.path.exists(JOURNAL):
            time.sleep(0.3)   # well inside the run: a state is changed and being measured
            return True
        time.sleep(0.05)
    return os.path.exists(JOURNAL)


def test_kill(m, ncpu, sig):
    tag = "SIGTERM" if sig == signal.SIGTERM else "SIGKILL"
    name = f"kernel idlestates: sysfs back after {tag}" + (" and --restore" if tag == "SIGKILL" else "")
    files = idle_state_files(1)
    if not files:
        m.skip(name, "no cpuidle states on CPU 1")
        return
    before = snapshot(files)
    p = subprocess.Popen([m.BIN, "kernel", "idlestates", "--allow-sysfs", "--cpus", "0-1",
                          "--iterations", "100000", "--quiet", "--json", os.path.join(m.TMP, "killed.json")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    started = wait_for_journal(p)
    p.send_signal(sig)
    p.wait(timeout=30)
    if not started:
        m.fail(name, "the run never journalled a change")
        return
    if sig == signal.SIGKILL:
        rc, out, err = m.run(["kernel", "--restore"])
        if rc != 0:
            m.fail(name, f"--restore exit {rc}: {err.strip()[:200]}")
            return
    after = snapshot(files)
    m.check(name, after == before and not os.path.exists(JOURNAL),
            f"before {before}, after {after}, journal left: {os.path.exists(JOURNAL)}")


def test_refusals(m):
    rc, _, err = m.run(["kernel", "idlestates"])
    m.check("kernel idlestates without --allow-sysfs exits 2", rc == 2, f"rc={rc} {err.strip()[:120]}")
    rc, _, err = m.run(["kernel", "hotplug"])
    m.check("kernel hotplug without --allow-hotplug exits 2", rc == 2, f"rc={rc} {err.strip()[:120]}")
    rc, _, err = m.run(["kernel", "hotplug", "--allow-hotplug", "--cpus", "0"])
    m.check("kernel hotplug refuses CPU 0 (exit 2)", rc == 2 and "CPU 0" in err, f"rc={rc} {err.strip()[:120]}")
    rc, _, err = m.run(["kernel", "nosuchprobe"])
    m.check("kernel: unknown probe exits 2", rc == 2, f"rc={rc}")
    if os.geteuid() == 0:
        name = "kernel idlestates as non-root exits 2"
        setpriv = "/usr/bin/setpriv"
        if not os.path.exists(setpriv):
            m.skip(name, "setpriv not installed")
            return
        p = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", m.BIN,
                            "kernel", "idlestates", "--allow-sysfs"], capture_output=True, text=True)
        if p.returncode == 126 or "Permission denied" in p.stderr and "root" not in p.stderr:
            m.skip(name, "the binary is not executable by nobody here")
            return
        m.check(name, p.returncode == 2 and "root" in p.stderr, f"rc={p.returncode} {p.stderr.strip()[:120]}")


def run_all(m):
    ncpu = len(os.sched_getaffinity(0))
    test_probes(m, ncpu)
    test_ipi_counters(m, ncpu)
    test_refusals(m)
    if os.geteuid() != 0:
        m.skip("kernel idlestates kill tests", "not root")
    elif ncpu < 2:
        m.skip("kernel idlestates kill tests", "needs 2 CPUs")
    else:
        test_kill(m, ncpu, signal.SIGTERM)
        test_kill(m, ncpu, signal.SIGKILL)
