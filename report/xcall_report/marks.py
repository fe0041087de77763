"""Capped and disturbed records: what xcall-bench says about a figure it could not trust.

A record is *capped* when `--case-limit` stopped its timed loop before its count
(`params.capped`), and *disturbed* when other work took the benchmarked CPUs while it ran
(`params.disturbed`, the cause in words). A case is marked when any of its repeats is. Tables,
charts, the summary and compare all read the marks from here, so they say the same thing.
"""
CAPPED, DISTURBED = "capped", "disturbed"
ORDER = (CAPPED, DISTURBED)
MEANING = {CAPPED: "stopped at --case-limit before its count: fewer operations than asked",
           DISTURBED: "other work ran on the benchmarked CPUs"}


def of_record(rec):
    """{mark: detail} of one record: the disturbance's cause, "" for capped."""
    params = rec.params if hasattr(rec, "params") else (rec or {})
    out = {}
    capped = params.get(CAPPED)
    if capped is True or (isinstance(capped, (int, float)) and not isinstance(capped, bool)
                          and capped > 0):
        out[CAPPED] = ""
    why = params.get(DISTURBED)
    if why:
        out[DISTURBED] = why if isinstance(why, str) else "yes"
    return out


def of_runs(runs):
    """{mark: detail} of a case: every mark of any repeat (the first cause given)."""
    out = {}
    for r in runs:
        for k, v in of_record(r).items():
            out.setdefault(k, v)
    return {k: out[k] for k in ORDER if k in out}


def short(marks):
    """"capped, disturbed" or ""."""
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
