"""Two lines under each chart: what is measured, and how to read the chart.

The first line is the family's (what xcall-bench measures there); the second says how the
chart encodes it, and ends with what the drawn figure itself says about its axes (log,
linear then log) and marks, read from the Figure, so it cannot disagree with the picture.
"""
from . import plots

WHAT = {
    "pingpong": "The round trip between two CPUs for each way of handing work across: one cache "
                "line alone (the physical limit: cacheline, the cheaper of cacheline-store, "
                "each side storing to the line, and cacheline-cas, each side a compare-and-swap), "
                "futex, eventfd, pipe and condvar handoffs, and libxcall's waiting call to a "
                "polling, queue-only, no-poll-window and sleeping worker. handoff-bare is the "
                "slot's exchange of a request and its completion with none of libxcall's code; "
                "handoff-split and handoff-casspun are two other such exchanges (request and "
                "completion on lines of their own; every spin a CAS). A name ending in /per-op "
                "times each round trip alone, for the tails, with the clock's own cost in it; "
                "the others time batches of round trips.",
    "ipi": "Seed 003: libxcall's call in each mode, dry-run (no call made), to its own CPU, to "
           "another CPU, broadcast, and broadcast under a lock; delivery is the call until its "
           "function starts, total until the waiting call returns.",
    "matrix": "Seed 002: the time for a fixed number of calls from each calling CPU as callers "
              "are added, for call-all and call-single, waiting and not, the 2008 "
              "smp_call_function design against libxcall.",
    "storm": "Seed 000, ipistorm: the runtime of a storm of waiting calls with libxcall's "
             "optimisations (kick elision, coalescing, free rides, completion notification, the "
             "mailbox slot) switched off in turn.",
    "idle": "Seed 001: what a nowait call costs its sender when the target is idle, and for "
            "each poll policy the CPU a worker burns and the latency of a call over a mostly "
            "idle period.",
    "bringup": "Seed 004: how long xc_init() takes to bring every worker up, one after another "
               "(serial) and all at once (parallel), each CPU doing a fixed init cost.",
    "heatmap": "The round trip from every CPU (row) to every other CPU (column): libxcall's "
               "waiting call and one cache line, the physical limit.",
    "kernel": "The host kernel's own cross-CPU operations, each proven by /proc/interrupts: "
              "membarrier's smp_call_function, futex wake-ups, TLB shootdowns, and libxcall's "
              "waiting call on the same CPUs.",
    "wake": "Every way Linux lets a thread wake a thread on another CPU, with the sleeper hot "
            "(woken back to back), parked (idle a while first) or busy (its CPU running "
            "another thread): the wake latency, and the interrupts each wake cost.",
    "throughput": "A stream of calls made back to back, not waited for one by one, from one "
                  "thread to one CPU, two threads to one CPU and one thread to every other CPU: "
                  "libxcall's nowait and waiting calls, the nowait call over the shared list, a "
                  "bounded single-producer ring (the reference) and a mutex + condvar queue.",
    "debug": "What libxcall's debugging aids cost: stuck-call reports and tracing, on and off, "
             "and how fast an XC_URGENT call reaches a busy worker.",
}

HOW = {
    "pingpong": "Bars are the median (p50) with a whisker to p99, both written at the whisker's "
                "tip; the red bars and the dashed red line are the limit, so a bar's distance from it is the cost of everything but "
                "moving the line. Shorter is better.",
    "matrix": "One panel per operation; lower lines are faster. The dashed grey line, on the "
              "right-hand axis, is the speedup (2008 time / libxcall time): above 1, libxcall "
              "wins.",
    "storm": "Each bar is a runtime divided by the baseline's (the grey bar, dashed line at 1): "
             "left of the line is faster; the label is ratio [percent improvement].",
    "bringup": "Lower bars are faster; the title gives the speedup and its limit, every CPU's "
               "init at once.",
    "heatmap": "Each cell is one pair's median round trip, coloured by the colour bar; the lines "
               "under each grid give min / p50 / max per topology class.",
    "kernel": "Bars are the median (p50) with a whisker to p99, both written at the whisker's "
              "tip; the red line is the cache-line limit; the ratio to the kernel IPI is in the "
              "tables below. Shorter is better.",
    "wake": "Left: one row per mechanism, a bar per sleeper state, p50 with a whisker to p99. "
            "Right: function-call (CAL, solid) and reschedule (RES, hatched: the only meaning of "
            "hatching here) interrupts per wake on the sleeper's CPU; about 1 means a real IPI "
            "each wake. A capped or disturbed cell is outlined in orange.",
}

# what the generic chart means for a family drawn with it
GENERIC_EXTRA = {"throughput": "A bar is the time per call in a stream of calls: shorter is more "
                               "calls per second; the tables give each row's ratio to the ring."}
GENERIC_WHAT = "{bench}: each case's value as xcall-bench reports it."
GENERIC_HOW = ("Bars are the median (p50) with a whisker to p99; a single number (a runtime, a "
               "ratio) is drawn as itself. One panel per unit; the panel's title says which way "
               "is better.")
DISTRIBUTION = ("{bench}: each case's latency distribution, from its fastest operation (min) "
                "through p50, p90 and p99 to its slowest (max).",
                "One line per case on a log axis: a flat line is a steady case, a steep rise at "
                "p99 or max is a tail of slow operations.")


def _scales(fig):
    """What the figure's axes are, in words: [] when every axis is linear."""
    kinds = set()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for scale in (ax.get_xscale(), ax.get_yscale()):
            kinds.add(scale)
        if any(getattr(im, "norm", None) is not None and type(im.norm).__name__ == "LogNorm"
               for im in ax.images):
            kinds.add("lognorm")
    out = []
    if "log" in kinds:
        out.append("log axis: each labelled step is ten times the last, so bars far apart in "
                   "value stay readable")
    if "symlog" in kinds:
        out.append("the interrupts axis is linear up to 1 and logarithmic past it, so that one "
                   "storm of interrupts does not flatten the other bars")
    if "lognorm" in kinds:
        out.append("the colours follow a log scale")
    return out


def caption(bench, name, fig):
    """(what, how) for the chart `name` of bench (name ends in -distribution for those)."""
    if name.endswith("-distribution"):
        what, how = (x.format(bench=bench) for x in DISTRIBUTION)
    else:
        generic = fig is not None and getattr(fig, "xcall_generic", False)
        what = WHAT.get(bench) if not generic or bench in ("ipi", "idle", "debug", "throughput") \
            else None
        what = what or GENERIC_WHAT.format(bench=bench)
        how = HOW.get(bench) if not generic else None
        how = how or (GENERIC_HOW + (" " + GENERIC_EXTRA[bench] if bench in GENERIC_EXTRA
                                     else ""))
    extra = _scales(fig) if fig is not None else []
    if extra:
        how += " " + "; ".join(extra).capitalize() + "."
    return what, how


def marked_line(res, bench):
    """What the chart marks, for a line under the caption: "" when nothing is marked. The
    same notes as under the chart (plots.mark_notes): a kind every case carries is said once
    and not drawn."""
    notes = plots.mark_notes(plots.summaries(res, bench))
    if not notes:
        return ""
    return ("Marked: " + "; ".join(notes) + ". Cases marked apart have pale bars outlined in "
            "orange, ringed points, or [capped] or [disturbed] after their name.")
