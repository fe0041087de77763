"""Capped, disturbed and no-IPI records: what xcall-bench says about a figure it could not
trust.

A record is *capped* when `--case-limit` stopped its timed loop before its count
(`params.capped`), and *disturbed* when other work took the benchmarked CPUs while it ran
(`params.disturbed`, the cause in words). A kernel IPI record (`kernel` ipi/normal,
compare/kernel-ipi) is *no IPI* when its function-call interrupts per call on the target are
not about one (0.9-1.1): its time is then not an IPI's cost (xcall-bench says so in short in
`params.no_ipi`; the words here are computed from the same counts, for older files too). A case is marked when any of
its repeats is. Tables, charts, the summary and compare all read the marks from here, so they
say the same thing.
"""
CAPPED, DISTURBED, NO_IPI = "capped", "disturbed", "no IPI"
ORDER = (CAPPED, DISTURBED, NO_IPI)
MEANING = {CAPPED: "stopped at --case-limit before its count: fewer operations than asked",
           DISTURBED: "other work ran on the benchmarked CPUs",
           NO_IPI: "not one function-call interrupt a call: the time is not an IPI's cost"}
# the kernel records whose time stands for one IPI, and the interrupts a call that prove it
IPI_CASES = ("ipi/normal", "compare/kernel-ipi")
IPI_PROVEN = (0.9, 1.1)


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def no_ipi(cal, cpu=None):
    """Why a kernel IPI record whose target counted @cal function-call interrupts a call is
    not an IPI's cost, or None when it is (the words xcall-bench writes in params.no_ipi)."""
    on = f"CPU {cpu:.0f}" if _num(cpu) else "the target"
    if not _num(cal):
        return ("/proc/interrupts gave no function-call interrupt counts, so nothing shows that "
                "these calls sent IPIs")
    if IPI_PROVEN[0] <= cal <= IPI_PROVEN[1]:
        return None
    if cal < IPI_PROVEN[0]:
        return (f"{(1 - max(cal, 0.0)) * 100:.0f}% of these calls sent no IPI ({cal:.2f} "
                f"function-call interrupts a call on {on}): the kernel interrupts only a CPU "
                "that runs a thread of this process, and the probe's spinner there was often not "
                "running on a busy machine")
    return (f"{cal:.2f} function-call interrupts a call on {on}: other IPIs reached that CPU "
            "meanwhile, so the time is not one IPI's")


def of_record(rec):
    """{mark: detail} of one record: the disturbance's cause, "" for capped, why no IPI."""
    params = rec.params if hasattr(rec, "params") else (rec or {})
    out = {}
    capped = params.get(CAPPED)
    if capped is True or (_num(capped) and capped > 0):
        out[CAPPED] = ""
    why = params.get(DISTURBED)
    if why:
        out[DISTURBED] = why if isinstance(why, str) else "yes"
    # the kernel's IPI records judged here, in whole words, from the counts xcall-bench's
    # short params.no_ipi came from, and for files written before it
    why = params.get("no_ipi")
    if getattr(rec, "bench", None) == "kernel" and rec.case in IPI_CASES and \
            rec.skipped is None:
        why = no_ipi(params.get("CAL_per_op_target"), params.get("target"))
    if why:
        out[NO_IPI] = why if isinstance(why, str) else "yes"
    return out


def of_runs(runs):
    """{mark: detail} of a case: every mark of any repeat (the first cause given)."""
    out = {}
    for r in runs:
        for k, v in of_record(r).items():
            out.setdefault(k, v)
    return {k: out[k] for k in ORDER if k in out}


def short(marks):
    """"capped, disturbed, no IPI" or ""."""
    return ", ".join(marks)


def long(marks):
    """"capped (stopped at --case-limit ...); disturbed: other tasks took 48% of CPUs 0-1"
    or ""."""
    return "; ".join(f"{k}: {v}" if v else f"{k} ({MEANING[k]})" for k, v in marks.items())


def _count(v):
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else 0


def plan_summary(res):
    """[(label, text)]: the timed loops --case-limit stopped, per subcommand, and how many
    subcommands say they were disturbed; [] when the plans say neither."""
    out = []
    cut = [(p.get("bench", "?"), _count(p.get("capped_loops"))) for p in res.plans]
    cut = [(b, n) for b, n in cut if n]
    if cut:
        total = sum(n for _, n in cut)
        out.append(("Cut short", f"{total} timed loop{'s' if total != 1 else ''} stopped at "
                    "--case-limit (" + ", ".join(f"{b} {n}" for b, n in cut) + ")"))
    hit = [p for p in res.plans if isinstance(p.get(DISTURBED), str) and p[DISTURBED]]
    if hit:
        causes = list(dict.fromkeys(p[DISTURBED] for p in hit))
        why = causes[0] if len(causes) == 1 else "each one's cause under Machine and run"
        out.append(("Disturbed", f"{len(hit)} of {len(res.plans)} subcommands ({why})"))
    return out
