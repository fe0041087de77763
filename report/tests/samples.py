"""A results file with every known bench, shaped like xcall-bench's output."""
from conftest import doc, rec


def all_benches(scale=1.0, repeats=1):
    s = scale
    out = []
    for r in range(repeats):
        j = 1.0 + 0.01 * r
        out += [rec("pingpong", "cacheline", 60 * j, r),
                rec("pingpong", "libxcall-polling", 180 * s * j, r),
                rec("pingpong", "libxcall-sleeping", 4200 * s * j, r),
                rec("pingpong", "futex", 5100 * j, r),
                rec("pingpong", "pipe", 7900 * j, r)]
        for op in ("call-single-wait", "call-single-nowait", "call-all-wait"):
            for callers in (1, 2, 3, 4):
                out.append(rec("matrix", f"{op}/callers={callers}/libxcall",
                               0.3 * callers * s * j, r, unit="s", n=1))
                out.append(rec("matrix", f"{op}/callers={callers}/pre2008",
                               1.2 * callers ** 1.3 * j, r, unit="s", n=1))
        for mode, base in (("serial", 12.0), ("parallel", 4.0)):
            for cpus in (2, 4):
                out.append(rec("bringup", f"{mode}/cpus={cpus}", base * cpus / 2 * j, r,
                               unit="ms", n=1))
        out += [rec("storm", "baseline", 1000 * j, r, unit="ms", n=1),
                rec("storm", "notify-ipi", 407.1 * s * j, r, unit="ms", n=1)]
        for a in range(4):
            for b in range(4):
                if a != b:
                    out.append(rec("heatmap", f"from={a}/to={b}", (150 + 40 * abs(a - b)) * j, r))
                    out.append(rec("heatmap", f"limit/from={a}/to={b}", (50 + 10 * abs(a - b)) * j, r))
        out += [rec("kernel", "ipi-single", 2500 * j, r), rec("kernel", "libxcall", 900 * j, r),
                rec("kernel", "cacheline-limit", 70 * j, r)]
        out += [rec("ipi", "self", 300 * j, r), rec("ipi", "normal", 2900 * j, r),
                rec("ipi", "broadcast", 9000 * j, r), rec("idle", "polling", 200 * j, r),
                rec("idle", "halt", 15000 * j, r),
                rec("mystery", "thing/one", 3.5, r, unit="ops/s", better="higher", n=1)]
    return doc(out)
