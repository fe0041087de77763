"""A results file with every known bench, named as xcall-bench names its cases."""
from conftest import doc, rec

MATRIX_OPS = ("all-wait", "all-nowait", "single-wait", "single-nowait")


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
        for op in MATRIX_OPS:
            for impl in ("2008", "libxcall"):
                for k in (1, 2, 3, 4):
                    t = 0.3 * k * s if impl == "libxcall" else 1.2 * k ** 1.3
                    out.append(rec("matrix", f"{op}/{impl}/{k}", t * j, r, unit="s", n=1,
                                   params={"callers": k, "impl": impl, "mode": op}))
            for k in (1, 2, 3, 4):
                out.append(rec("matrix", f"{op}/speedup/{k}", 1.2 * k ** 1.3 / (0.3 * k * s),
                               r, unit="ratio", better="higher", n=1, params={"callers": k}))
        out += [rec("bringup", "serial", 12e6 * j, r, n=5),
                rec("bringup", "parallel", 4e6 * s * j, r, n=5),
                rec("bringup", "speedup", 3.0 / s, r, unit="ratio", better="higher", n=1)]
        out += [rec("storm", "ablate-elide+notify", 1.0 * j, r, unit="s", n=1),
                rec("storm", "ablate-notify", 0.6 * j, r, unit="s", n=1),
                rec("storm", "ablate-none", 0.4071 * s * j, r, unit="s", n=1)]
        for a in range(4):
            for b in range(4):
                if a != b:
                    out.append(rec("heatmap", f"cacheline/{a}->{b}",
                                   (50 + 10 * abs(a - b)) * j, r, params={"from": a, "to": b}))
                    out.append(rec("heatmap", f"libxcall/{a}->{b}",
                                   (150 + 40 * abs(a - b)) * j, r, params={"from": a, "to": b}))
        out += [rec("kernel", "ipi-single", 2500 * j, r), rec("kernel", "libxcall", 900 * j, r),
                rec("kernel", "cacheline-limit", 70 * j, r)]
        out += [rec("ipi", "self/total", 300 * j, r), rec("ipi", "normal/total", 2900 * j, r),
                rec("ipi", "broadcast/total", 9000 * j, r),
                rec("idle", "sender-polling", 60 * j, r),
                rec("idle", "latency/forever", 230000 * j, r),
                rec("idle", "cpu/forever", 37.7, r, unit="pct", n=1),
                rec("mystery", "thing/one", 3.5, r, unit="ops/s", better="higher", n=1)]
    return doc(out)
