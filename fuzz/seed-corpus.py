#!/usr/bin/env python3
"""fuzz/seed-corpus.py - write the meaningful seed inputs of each harness into DIR/<name>/.

    python3 fuzz/seed-corpus.py DIR

The corpus in fuzz/corpus/ started from these and was then grown by the fuzzers and
minimised with -merge=1 (make fuzz-merge); run this to start over.
"""
import hashlib
import os
import struct
import sys

UNSET = b"\xff"
VARS = ["XCALL_CPUS", "XCALL_SERIAL_BRINGUP", "XCALL_POLL_NS", "XCALL_BRINGUP_TIMEOUT_MS",
        "XCALL_ABLATE", "XCALL_STUCK_MS", "XCALL_TRACE", "XCALL_TRACE_EVENTS",
        "XCALL_URGENT_SIGNAL", "XCALL_VERBOSE"]


def cpulist():
    texts = ["0", "1", "0-1", "0,1", "0-3,8", "0-3,8,10-15:2", "0-1023", "1023", "0-1023:2",
             "0-1\n", " 0,1", "\t1", "1-0", "1024", "0-", ",", "", "\n", "0-3:0", "00", "0,,1",
             "4-4", "0-1023:1023", "99999999999999999999", "-1", "0-1:", "a", "0 ", "0-1,\n"]
    out = [t.encode() for t in texts]
    out += [b"\x01", b"\x03", b"\xff" * 128, b"\x55" * 128, b"\x00" * 127 + b"\x80"]
    return out


def options_input(env=None, cpus=None, trace=None, serial=0, poll=0, timeout=0,
                  stuck=0, events=0, signal=0):
    env = env or {}
    fields = [env[v].encode() if v in env else UNSET for v in VARS]
    fields.append(UNSET if cpus is None else cpus.encode())
    fields.append(UNSET if trace is None else trace.encode())
    tail = struct.pack("<BqIiIi", serial, poll, timeout, stuck, events, signal)
    return b"\0".join(fields) + b"\0" + tail


def options():
    e = options_input
    return [
        e(), e(env={"XCALL_CPUS": "0-1"}), e(env={"XCALL_CPUS": "0"}), e(cpus="1"),
        e(env={"XCALL_CPUS": "5000"}), e(cpus="0-1023"),
        e(env={"XCALL_SERIAL_BRINGUP": "1"}), e(env={"XCALL_SERIAL_BRINGUP": "yes"})] + [
        e(env={"XCALL_POLL_NS": v}) for v in ("adaptive", "none", "forever", "50000", "0", "-5",
                                               "99999999999999999999")] + [
        e(env={"XCALL_BRINGUP_TIMEOUT_MS": v}) for v in ("1", "0", "4294967296")] + [
        e(env={"XCALL_ABLATE": v}) for v in ("none", "elide,notify", "elide,coalesce,freeride,notify",
                                             ",", "bogus", "x" * 200)] + [
        e(env={"XCALL_STUCK_MS": v}) for v in ("0", "5000", "2147483648", "off")] + [
        e(env={"XCALL_TRACE": v}) for v in ("/tmp/t.json", "", "y" * 300, "off", "./off")] + [
        e(env={"XCALL_TRACE_EVENTS": v}) for v in ("16", "15", "16777216", "16777217")] + [
        e(env={"XCALL_URGENT_SIGNAL": v}) for v in ("34", "36", "64", "65", "2", "SIGRTMIN",
                                                    "SIGRTMIN+2", "SIGRTMAX", "SIGRTMAX-3",
                                                    "SIGRTMIN-1", "SIGRTMAX+1", "SIGRTMIN+",
                                                    "SIGUSR1", "SIGRTMIN+99999999999")] + [
        e(env={"XCALL_VERBOSE": v}) for v in ("1", "2")] + [
        e(serial=1, poll=-2, timeout=100, stuck=-1, events=1024, signal=40),
        e(poll=-3), e(stuck=-2), e(events=8), e(signal=1), e(trace="z" * 300),
        e(env={"XCALL_POLL_NS": "bad"}, poll=100),
        e(env={"XCALL_CPUS": "0", "XCALL_VERBOSE": "1", "XCALL_TRACE": "t"}, cpus="0-1"),
    ]


def roundtrip():
    """Value streams for the round trip: defaults, every byte set, then pseudo-random ones."""
    out = [b"", b"\0" * 64, b"\xff" * 64]
    block = b"roundtrip"
    for _ in range(13):
        block = hashlib.sha256(block).digest()
        out.append(block * 2)
    return out


def bench_args():
    argvs = [
        [], ["--help"], ["-h"], ["--quiet"], ["--cpus", "0-1", "--json", "/tmp/x.json"],
        ["bogus"], ["--bogus"], ["--cpus"],
        ["pingpong", "--iterations", "100"], ["pingpong", "--cpus", "0"],
        ["pingpong", "--help"], ["pingpong", "--iterations=0x10", "--repeat", "3"],
        ["pingpong", "--seconds", "0.5"], ["pingpong", "--seconds", "nan"],
        ["pingpong", "--poll", "forever"], ["pingpong", "--poll", "0"], ["pingpong", "extra"],
        ["ipi", "--cpus", "0-1", "--csv"], ["matrix", "--seconds", "1"], ["matrix", "--cpus", "1"],
        ["storm", "--numipi", "10", "--single", "--offset", "1", "--wait", "0"],
        ["storm", "--cpulist", "0", "--ablate", "elide,notify"], ["storm", "--cpulist", "9"],
        ["storm", "--ablate", "bogus"], ["storm", "--compare", "--delay", "5"],
        ["idle", "--idle-seconds", "0.5", "--period-us", "100", "--window", "1000"],
        ["idle", "--period-us", "1"],
        ["bringup", "--init-busy-ms", "1", "--init-touch-mib", "1", "--iterations", "2"],
        ["bringup", "--seconds", "1"],
        ["heatmap", "--iterations", "10"],
        ["kernel", "ipi", "compare", "--gap-us", "5"], ["kernel", "nonesuch"],
        ["kernel", "--restore"], ["kernel", "--long-gap-us", "-1", "wakeup", "tlb"],
        ["kernel", "--allow-sysfs", "--allow-hotplug", "idlestates", "hotplug"],
        ["storm", "--csv=1"], ["storm", "--cpu", "0"], ["storm", "-x"],
        ["debug", "stuck", "trace", "--busy-us", "10", "--poll-every", "5"], ["debug", "bogus"],
        ["pingpong", "--trace", "/tmp/t.json"], ["debug", "urgent", "--trace"],
    ]
    return [b"\0".join(a.encode() for a in argv) for argv in argvs]


def main():
    root = sys.argv[1]
    for name, inputs in (("cpulist", cpulist()), ("options", options()),
                         ("roundtrip", roundtrip()), ("bench_args", bench_args())):
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        for data in inputs:
            with open(os.path.join(d, "seed-" + hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
                f.write(data)
        print(f"{name}: {len(inputs)} seeds in {d}")


if __name__ == "__main__":
    main()
