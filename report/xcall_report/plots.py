"""Figures for one results file: a specialised chart for each known bench, a generic one else.

Only the object-oriented matplotlib API is used (no pyplot), so no display and no global state
is needed; every figure is a plain `Figure` that tests can inspect.
"""
import math
import os
import textwrap

import matplotlib
from matplotlib.colors import LogNorm, to_rgba
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Annotation, Text
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullFormatter

from . import cases as casenames
from . import marks as marksmod
from .load import skip_reason
from .stats import aggregate, mean

TIME_UNITS = {"ns", "us", "ms", "s", "cycles"}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
LIMIT_COLOUR = "#d62728"
MAX_DISTRIBUTION_CASES = 16
MAX_ANNOTATED_CPUS = 16
MAX_LABELLED_CPUS = 32          # past it, every k-th CPU labelled on the heatmap's axes
STATE_COLOURS = {"hot": PALETTE[1], "parked": PALETTE[0], "busy": PALETTE[2]}
IPI_ROWS = ("CAL", "RES")       # function-call and reschedule IPIs, as /proc/interrupts names them
NOTE_WIDTH = 160                # characters per line of the notes under a figure
MARK_COLOUR = "#e6550d"         # edges of capped or disturbed bars and points
FIT_MARGIN = 6                  # pixels kept free at a figure's edges when fitting its texts
MIN_FONT = 7                    # points: 9.3 CSS pixels where a chart is shown at its size
DWARF = 50                      # a value this many times the median of the rest: log axis


# ---------------------------------------------------------------- helpers

def quantity(unit):
    """What a value in this unit measures, for axis labels."""
    if unit in TIME_UNITS:
        return "time"
    return {"ops/s": "throughput", "ratio": "ratio", "irq/op": "interrupts per op",
            "pct": "percent"}.get(unit, "value")


UNIT_SHOWN = {"pct": "%", "us": "µs"}
TIME_STEPS = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)]
TIME_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def axis_label(stat, unit):
    """e.g. "p50 time (ns)"; the unit is always there."""
    return f"{stat} {quantity(unit)} ({UNIT_SHOWN.get(unit, unit)})"


def _time_step(secs):
    """The largest of ns, µs, ms, s that is not above secs: (name, seconds)."""
    return next(((n, st) for n, st in reversed(TIME_STEPS) if secs >= st * 0.99995),
                TIME_STEPS[0])


def display_unit(values, unit):
    """(factor, unit) for a linear time axis: the largest of ns, µs, ms, s in which the top
    value is at least 1 (0.047 s -> 47 ms, 2e7 ns -> 20 ms). Other units stay as they are."""
    top = max((abs(v) for v in values), default=0.0)
    if unit not in TIME_SECONDS or top == 0:
        return 1.0, unit
    name, step = _time_step(top * TIME_SECONDS[unit])
    return TIME_SECONDS[unit] / step, name


def human(v, unit):
    """A value with its unit for labels on bars: "105 ns", "63.9 µs", "0.41", "37.7%"."""
    if unit in TIME_SECONDS and v > 0:
        secs = v * TIME_SECONDS[unit]
        name, step = _time_step(secs)
        return f"{fmt(secs / step)} {name}"
    if unit == "pct":
        return f"{fmt(v)}%"
    if unit == "ratio":
        return f"{fmt(v)}×"
    return f"{fmt(v)} {unit}"


def fmt(x):
    """Compact value for labels on bars and cells: 0.012, 182, 4590, 12.3k, 4.5M."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    if abs(x) >= 1e4:
        for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(x) >= div:
                return f"{x / div:.3g}{suffix}"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def host_line(res):
    h = res.host
    bits = [str(h.get("cpu_model") or "unknown CPU")]
    if h.get("cpus_online"):
        bits.append(f"{h['cpus_online']} CPUs")
    if h.get("kernel"):
        bits.append(f"Linux {h['kernel']}")
    if h.get("virtualised"):
        bits.append(f"virtualised ({h.get('hypervisor') or 'unknown hypervisor'})")
    elif h.get("virtualised") is False:
        bits.append("bare metal")
    return f"{res.label} · " + ", ".join(bits)


def _figure(res, title, width, height, nrows=1, ncols=1, notes=(), **grid):
    """A figure with its axes; notes are lines written above the machine at the bottom, grid
    goes to subplots (sharey, gridspec_kw)."""
    fig = Figure(figsize=(width, height), layout="constrained")
    # the layout's padding at the sides outside fit_texts' margin: texts the layout placed
    # there fit as they are, and fit_texts draws a figure once or twice, not its every try
    pad = (FIT_MARGIN + 2) / fig.dpi
    fig.get_layout_engine().set(w_pad=pad)
    axes = fig.subplots(nrows, ncols, squeeze=False, **grid)
    fig.suptitle(title, fontsize=12, fontweight="bold")
    # supxlabel: the layout keeps room for it below everything else
    fig.supxlabel("\n".join([*notes, host_line(res)]), x=pad / width, ha="left", fontsize=7,
                  color="#555")
    return fig, axes


def title(fig):
    """A figure's title, in one line: its suptitle, or what take_title took out."""
    t = fig._suptitle
    return " ".join(t.get_text().split()) if t is not None else getattr(fig, "xcall_title", "")


def take_title(fig):
    """Take a figure's title (its suptitle) out of it and return the text (title() still
    says it): the page writes it as its own heading above the chart, where it wraps at any
    width, instead of a line that a phone's scroll box cuts."""
    text = title(fig)
    t = fig._suptitle
    if t is not None:
        # the figure gives up the line the title took (its size and the layout's padding
        # around it), so the heading above it does not make the page longer
        fig.set_figheight(fig.get_figheight() - t.get_fontsize() * 1.6 / 72)
        t.remove()
        fig._suptitle = None
        fig.xcall_title = text
    return text


def summaries(res, bench):
    """{case: {stat: value averaged over repeats}} plus unit, better, repeats."""
    by_case = {}            # one pass: a 128-CPU heatmap has 32k cases
    for r in res.records:
        if r.bench == bench:
            by_case.setdefault(r.case, []).append(r)
    out = {}
    for case, runs in by_case.items():
        runs.sort(key=lambda r: r.repeat)
        out[case] = dict(aggregate(runs), unit=runs[0].unit, better=runs[0].better,
                         repeats=len(runs), n=runs[0].n, params=runs[0].params,
                         marks=marksmod.of_runs(runs))
    # "shown": the marks drawn on a case's bar. A kind every measured case carries (a run
    # disturbed throughout) is not drawn: hatching every bar would only hide the colours, and
    # the notes say "every case"
    measured = [s for s in out.values() if skip_reason(s["n"], s["params"]) is None]
    universal = {k for k in marksmod.ORDER if len(measured) > 1
                 and all(k in s["marks"] for s in measured)}
    for s in out.values():
        s["shown"] = {k: v for k, v in s["marks"].items() if k not in universal}
    return out


def marked_label(case, s):
    """A case's name with the marks drawn on it: "cacheline [capped, disturbed]"."""
    m = s.get("shown")
    return f"{case} [{marksmod.short(m)}]" if m else case


MAX_NOTED = 12          # cases named per mark under a chart; the rest counted


def mark_notes(summ, names=None):
    """Lines under a figure, one per kind of mark: its cause (or causes) and which cases carry
    it, "every case" when all do."""
    names = [c for c in (names if names is not None else summ)
             if skip_reason(summ[c]["n"], summ[c]["params"]) is None]
    cases, causes = {}, {}
    for case in names:
        for k, v in summ[case].get("marks", {}).items():
            cases.setdefault(k, []).append(case)
            causes.setdefault(k, {})[v or marksmod.MEANING[k]] = None
    out = []
    for k, which in cases.items():
        why = list(causes[k])
        why = why[0] if len(why) == 1 else "; ".join(why[:2]) + \
            (f" and {len(why) - 2} more" if len(why) > 2 else "")
        if len(which) == len(names) and len(names) > 1:
            listed = "every case measured, so none is marked apart"
        elif len(which) > MAX_NOTED:
            listed = f"{', '.join(which[:MAX_NOTED])} and {len(which) - MAX_NOTED} more"
        else:
            listed = ", ".join(which)
        out.append(f"{k} ({why}): {listed}")
    return out


def _mark_style(bars, flags):
    """Outline the bars of capped or disturbed cases in orange, their fill paler: hatching
    means one thing only (reschedule IPIs, in the wake chart)."""
    for bar, flag in zip(bars, flags):
        if flag:
            bar.set_facecolor(to_rgba(bar.get_facecolor(), 0.45))
            bar.set_edgecolor(MARK_COLOUR)
            bar.set_linewidth(2.0)
            bar.set_gid("marked")


def is_marked(patch):
    """Whether a drawn bar carries the capped-or-disturbed style."""
    return patch.get_gid() == "marked"


def _repeats_note(summ):
    reps = max(s["repeats"] for s in summ.values())
    return f" (mean of {reps} repeats)" if reps > 1 else ""


def _wide(values):
    """Whether values span enough decades to need a log axis."""
    pos = [v for v in values if v > 0]
    return bool(pos) and max(pos) / min(pos) > 30


def dwarfs(values, floor=0.0):
    """Whether the largest value dwarfs the rest: more than DWARF times the median of the
    others (that median taken at least at floor), so that a linear axis would squash them."""
    vals = sorted(abs(v) for v in values)
    if len(vals) < 2 or vals[-1] == 0:
        return False
    rest = vals[:-1]
    mid = max(rest[len(rest) // 2], floor)
    return mid == 0 or vals[-1] > DWARF * mid


def _plain_log_ticks(axis):
    """Label a log axis' decades as plain numbers (100, 1k, 10k), its minor ticks not at all."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v)))
    axis.set_minor_formatter(NullFormatter())


def _zeros_on_log(ax, ys, vals, unit, horizontal=True):
    """A log axis cannot draw 0: mark each zero value at the axis' edge, with its label."""
    for y, v in zip(ys, vals):
        if v != 0:
            continue
        if horizontal:
            ax.plot([0], [y], marker="|", markersize=9, color="#333",
                    transform=ax.get_yaxis_transform(), clip_on=False, label="_zero")
            ax.annotate(f"{human(0, unit)} (no bar: log axis)", (0, y),
                        xycoords=ax.get_yaxis_transform(),
                        xytext=(4, 0), textcoords="offset points", va="center", fontsize=8)
        else:
            ax.plot([y], [0], marker="_", markersize=9, color="#333",
                    transform=ax.get_xaxis_transform(), clip_on=False, label="_zero")


def _bar_values(summ, names):
    """(stat, values, whisker tops): p50 up to p99, or the mean alone for single numbers;
    cases not measured (skipped) do not decide the statistic."""
    measured = [c for c in names if skip_reason(summ[c]["n"], summ[c]["params"]) is None]
    if all(summ[c]["n"] <= 1 for c in measured or names):
        return "mean", [summ[c]["mean"] for c in names], None
    return "p50", [summ[c]["p50"] for c in names], [summ[c]["p99"] for c in names]


def skipped_reasons(summ, names):
    """Per case, why it has no figures (xcall-bench's reason), or None when measured."""
    return [skip_reason(summ[c]["n"], summ[c]["params"]) for c in names]


def bar_label(v, top, unit):
    """The text at a bar's whisker tip: both ends of what is drawn, "62 ns, p99 90 ns", so
    that the number beside the whisker is never read as the whisker's own value."""
    if top is None or top <= v:
        return human(v, unit)
    return f"{human(v, unit)}, p99 {human(top, unit)}"


def _hbars(ax, labels, vals, tops, colours, unit, stat, log=False, scale=True, marked=None,
           skipped=None):
    """Horizontal bars, whiskers up to tops (p99) when given, each value written with its unit
    at the whisker's tip (bar_label). Linear time axes are rescaled (ns -> µs -> ms) to stay
    readable; a log axis when the values span decades or one dwarfs the rest, its zeros marked
    at the edge. marked: per bar, whether its case is capped or disturbed (outlined);
    skipped: per bar, why it was not measured: no bar, the reason written in its place."""
    n = len(labels)
    skipped = list(skipped or [None] * n)
    colours = colours if isinstance(colours, list) else [colours] * n
    marked = list(marked or [False] * n)
    idx = [i for i in range(n) if skipped[i] is None]
    mv = [vals[i] for i in idx]
    mt = None if tops is None else [tops[i] for i in idx]
    ends = mv if mt is None else [max(a, b) for a, b in zip(mv, mt)]
    log = bool(mv) and (log or _wide(mv + ends) or dwarfs(mv))
    factor, shown = display_unit(ends, unit) if scale and not log else (1.0, unit)
    ys = list(range(n))
    err = None if mt is None else \
        [[0] * len(mv), [max(b - a, 0) * factor for a, b in zip(mv, mt)]]
    if idx:
        bars = ax.barh(idx, [v * factor for v in mv], xerr=err, color=[colours[i] for i in idx],
                       capsize=3, error_kw={"elinewidth": 1},
                       label=stat + ("" if mt is None else " (whisker: p99)"))
        _mark_style(bars, [marked[i] for i in idx])
    ax.set_yticks(ys, labels)
    ax.set_ylim(n - 0.5, -0.5)
    if log:
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        _zeros_on_log(ax, idx, mv, unit)
    for k, (y, v, end) in enumerate(zip(idx, mv, ends)):
        if log and end <= 0:
            continue                    # said at the axis' edge
        ax.annotate(bar_label(v, None if mt is None else mt[k], unit), (end * factor, y),
                    xytext=(4, 0), textcoords="offset points", va="center", fontsize=8)
    rows = ax.get_yaxis_transform()
    for i in range(n):
        if skipped[i] is not None:
            ax.text(0.005, i, f"skipped: {skipped[i]}", transform=rows, va="center",
                    fontsize=8, color="#555", gid="skipped")
    if not idx:
        ax.set_xticks([])
    ax.set_xlabel(axis_label(stat, shown) + ("" if mt is None else ", whisker to p99"))
    ax.margins(x=0.18)
    _grid(ax, "x")


def _grid(ax, axis):
    """Major grid lines only, behind the bars: lines through a bar would read as hatching."""
    ax.set_axisbelow(True)
    ax.grid(axis=axis, alpha=0.3, which="major")


# ---------------------------------------------------------------- charts

# what the generic chart compares, for the families drawn with it
GENERIC_TITLES = {
    "throughput": "throughput: time per call in a stream, libxcall against a ring and a queue",
    "ipi": "ipi (seed 003): libxcall's call per mode, until it starts and until it returns",
    "idle": "idle (seed 001): a call to an idle worker, and its CPU cost, per poll policy",
    "debug": "debug: libxcall's debugging aids on against off, urgent against plain calls",
}
GENERIC_TITLE = "{bench}: each case's value as xcall-bench reports it"


def measured_cases(summ):
    """The cases that have figures (not skipped)."""
    return [c for c, s in summ.items() if skip_reason(s["n"], s["params"]) is None]


def generic(res, bench, summ):
    """Per-case bar chart: p50 with a p99 whisker (the mean for single numbers); a panel per
    unit. A case not measured gets its reason in place of a bar."""
    units = list(dict.fromkeys(s["unit"] for c, s in summ.items() if c in measured_cases(summ)))
    units = units or list(dict.fromkeys(s["unit"] for s in summ.values()))
    notes = _wrapped(mark_notes(summ))
    height = 1.3 + 0.32 * len(summ) + 0.6 * len(units) + 0.12 * len(notes)
    title = GENERIC_TITLES.get(bench, GENERIC_TITLE.format(bench=bench))
    fig, axes = _figure(res, title + _repeats_note(summ), 8, height,
                        nrows=len(units), notes=notes)
    fig.xcall_generic = True
    for k, (ax, unit) in enumerate(zip(axes[:, 0], units)):
        names = [c for c, s in summ.items() if s["unit"] == unit
                 or (k == 0 and c not in measured_cases(summ) and s["unit"] not in units)]
        measured = [c for c in names if c in measured_cases(summ)]
        better = summ[(measured or names)[0]]["better"]
        stat, vals, tops = _bar_values(summ, names)
        _hbars(ax, [marked_label(c, summ[c]) for c in names], vals, tops, PALETTE[0], unit,
               stat, marked=[bool(summ[c]["shown"]) for c in names],
               skipped=skipped_reasons(summ, names))
        ax.set_title(f"{quantity(unit)}, {better} is better", fontsize=9)
    return fig


def limit_bars(res, bench, summ):
    """pingpong / kernel: log-scale bars with the physical limit marked. Cases not measured
    get their reason in place of a bar; a case drawn left of the limit's line is said to be,
    with why (the line was measured at another time, when the line moved at another speed)."""
    names = list(summ)
    measured = measured_cases(summ)
    if not measured:
        return None
    unit = summ[measured[0]]["unit"]
    if any(summ[c]["unit"] != unit for c in measured):
        return None
    limits = [c for c in measured if casenames.is_limit(c)]
    colours = [LIMIT_COLOUR if c in limits else PALETTE[0] for c in names]
    stat, vals, tops = _bar_values(summ, names)
    if limits:
        limit_name, limit = limits[0], vals[names.index(limits[0])]
    else:                  # e.g. kernel: borrow the limit another bench of this run measured
        limit_name, limit = _limit_elsewhere(res, bench, unit, stat)
    below = [c for c, v in zip(names, vals) if limit_name and c in measured
             and not casenames.is_limit(c) and 0 < v < limit]
    lines = mark_notes(summ)
    if below:
        lines.append(f"left of the limit's line: {', '.join(below)}. The line is "
                     f"{limit_name} as measured in its own run; the cache line's speed moves "
                     "between runs (its phase: docs/bench.md), so a case measured at another "
                     "time can beat it. Ratios to the limit hold only within one paired run.")
    notes = _wrapped(lines)
    fig, axes = _figure(res, f"{bench}: {stat} per case against the cache-line limit"
                        f"{_repeats_note(summ)}", 8, 2.0 + 0.35 * len(names) + 0.12 * len(notes),
                        notes=notes)
    ax = axes[0, 0]
    _hbars(ax, [marked_label(c, summ[c]) for c in names], vals, tops, colours, unit, stat,
           log=True, scale=False, marked=[bool(summ[c]["shown"]) for c in names],
           skipped=skipped_reasons(summ, names))
    better = f"log scale, {summ[measured[0]]['better']} is better"
    if limit_name:
        what = "cache-line limit as measured" if below else "physical limit"
        ax.axvline(limit, color=LIMIT_COLOUR, linestyle="--", linewidth=1.2,
                   label=f"{what} ({limit_name})")
        ax.set_title(f"{better}; dashed red line: {what} ({limit_name}) = "
                     f"{human(limit, unit)}" + (f"; {len(below)} case{'s' if len(below) > 1 else ''}"
                                                " left of it: see below" if below else ""),
                     fontsize=9)
    else:
        ax.set_title(f"{better}; no physical-limit case in this file", fontsize=9)
    return fig


def _limit_elsewhere(res, bench, unit, stat):
    """(name, value) of a physical-limit case of another bench in the same file, in the same
    unit (pingpong's cacheline first), or (None, None)."""
    for other in sorted(res.benches(), key=lambda b: b != "pingpong"):
        if other == bench:
            continue
        for case in res.cases(other):
            runs = res.runs(other, case)
            if casenames.is_limit(case) and runs[0].unit == unit and runs[0].skipped is None:
                return f"{other} {case}", aggregate(runs)[stat]
    return None, None


def storm(res, bench, summ):
    """storm --compare: each case's mean normalised to the baseline, with [pct imp]."""
    names = list(summ)
    base = casenames.baseline(names)
    unit, better = summ[base]["unit"], summ[base]["better"]
    if any(s["unit"] != unit for s in summ.values()) or summ[base]["mean"] == 0:
        return None
    ratios = [summ[c]["mean"] / summ[base]["mean"] for c in names]
    notes = _wrapped(mark_notes(summ))
    fig, axes = _figure(res, f"{bench}: mean normalised to {base}{_repeats_note(summ)}",
                        9, 1.8 + 0.4 * len(names) + 0.12 * len(notes), notes=notes)
    ax = axes[0, 0]
    colours = [PALETTE[7] if c == base else PALETTE[0] for c in names]
    ys = list(range(len(names)))
    bars = ax.barh(ys, ratios, color=colours, label="mean / baseline mean")
    _mark_style(bars, [bool(summ[c]["shown"]) for c in names])
    ax.set_yticks(ys, [marked_label(c, summ[c]) for c in names])
    ax.invert_yaxis()
    log = _wide(ratios) or dwarfs(ratios)
    if log:
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        _zeros_on_log(ax, ys, ratios, "ratio")
        ax.set_xlim(right=max(ratios) * 8)          # room for the labels past the longest bar
    for y, r in zip(ys, ratios):
        if log and r <= 0:
            continue
        imp = (1 - r) * 100 if better == "lower" else (r - 1) * 100
        ax.annotate(f"{r:.2f} [{imp:.2f}]", (r, y), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=9)
    ax.axvline(1.0, color="#333", linestyle="--", linewidth=1)
    ax.set_xlabel(f"mean {quantity(unit)} / mean of {base} (1 = baseline"
                  f"{', log scale' if log else ''})")
    ax.set_title(f"baseline {base} = {human(summ[base]['mean'], unit)}; {better} is better; "
                 "labels: ratio [pct imp]", fontsize=9)
    ax.margins(x=0.2)
    _grid(ax, "x")
    return fig


def matrix(res, bench, summ):
    """Scaling curves: mean by number of calling CPUs, one line per design, panel per op;
    speedup records (old / new) as a dashed line on a right-hand axis."""
    points, speedups, units = {}, {}, set()
    for case, s in summ.items():
        p = casenames.matrix_point(case, s["params"])
        if p is None:
            return None
        op, callers, design = p
        flag = bool(s["shown"])
        if design == casenames.SPEEDUP or s["unit"] not in TIME_UNITS:
            speedups.setdefault(op, []).append((callers, s["mean"], flag))
            continue
        units.add(s["unit"])
        points.setdefault(op, {}).setdefault(design, []).append((callers, s["mean"], flag))
    if len(units) != 1:
        return None
    factor, unit = display_unit([y for d in points.values() for ps in d.values()
                                 for _, y, _ in ps], units.pop())
    ops = list(points)
    ncols = 2 if len(ops) > 1 else 1
    nrows = math.ceil(len(ops) / ncols)
    notes = _wrapped(mark_notes(summ))
    fig, axes = _figure(res, f"{bench}: mean by calling CPUs, old design vs new"
                        f"{_repeats_note(summ)}", 5.5 * ncols, 1.4 + 3.2 * nrows
                        + 0.12 * len(notes), nrows, ncols, notes=notes)
    legend = {}
    for i, op in enumerate(ops):
        ax = axes[i // ncols, i % ncols]
        designs = sorted(points[op], key=lambda d: (casenames.MATRIX_DESIGNS.index(d)
                                                     if d in casenames.MATRIX_DESIGNS else 99, d))
        # log only where a design's own line has a point that dwarfs the rest (a disturbed
        # case): the gap between designs is what the speedup line is there to show
        log = any(dwarfs([y for _, y, _ in points[op][d]]) for d in designs)
        for j, d in enumerate(designs):
            xs, ys, flags = zip(*sorted(points[op][d]))
            tag = " (new)" if d == casenames.NEW_DESIGN else \
                " (old)" if d in casenames.MATRIX_DESIGNS else ""
            ax.plot(xs, [y * factor for y in ys], marker="o", color=PALETTE[j % len(PALETTE)],
                    label=d + tag)
            _mark_points(ax, xs, [y * factor for y in ys], flags)
        ax.set_title(op, fontsize=10)
        ax.set_xlabel("calling CPUs (count)")
        ax.set_ylabel(axis_label("mean", unit) + (", log scale" if log else ""))
        ax.xaxis.get_major_locator().set_params(integer=True)
        if log:
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
        else:
            ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3, which="both" if log else "major")
        handles, labels = ax.get_legend_handles_labels()
        if op in speedups:
            ax2 = ax.twinx()
            xs, ys, flags = zip(*sorted(speedups[op]))
            ax2.plot(xs, ys, linestyle="--", marker="x", color="#555",
                     label="speedup, old / new (right axis)")
            _mark_points(ax2, xs, ys, flags)
            ax2.set_ylabel("speedup (× old time / new time)")
            if dwarfs(ys):
                ax2.set_yscale("log")
                _plain_log_ticks(ax2.yaxis)
            else:
                ax2.set_ylim(bottom=0)
            h2, l2 = ax2.get_legend_handles_labels()
            handles, labels = handles + h2, labels + l2
        legend.update(zip(labels, handles))
    if "capped or disturbed" in legend:         # the marks' entry last
        legend["capped or disturbed"] = legend.pop("capped or disturbed")
    # right of the panels: below them the notes take the width, above them the title
    fig.legend(list(legend.values()), list(legend), loc="outside right upper", fontsize=9)
    for k in range(len(ops), nrows * ncols):
        axes[k // ncols, k % ncols].set_visible(False)
    return fig


def _mark_points(ax, xs, ys, flags):
    """Ring the points of capped or disturbed cases."""
    pts = [(x, y) for x, y, f in zip(xs, ys, flags) if f]
    if pts:
        ax.plot(*zip(*pts), linestyle="none", marker="o", markersize=11, markerfacecolor="none",
                markeredgecolor=MARK_COLOUR, markeredgewidth=1.5, label="capped or disturbed")


def bringup(res, bench, summ):
    """Serial vs parallel bars, grouped by the rest of the case name (e.g. cpus=8)."""
    groups, others = {}, []
    for case, s in summ.items():
        m = casenames.bringup_mode(case)
        if s["unit"] not in TIME_UNITS:       # e.g. speedup, a ratio: said in the title
            limit = s["params"].get("limit")
            limit = f" (limit {human(limit, s['unit'])})" if isinstance(limit, (int, float)) \
                and not isinstance(limit, bool) and limit > 0 else ""
            others.append(marked_label(f"{case} {human(s['mean'], s['unit'])}{limit}", s))
            continue
        if m is None:
            return None
        mode, rest = m
        groups.setdefault(rest or "all CPUs", {})[mode] = s
    units = {s["unit"] for g in groups.values() for s in g.values()}
    if len(units) != 1:
        return None
    unit = units.pop()
    stat = "mean" if all(s["n"] <= 1 for g in groups.values() for s in g.values()) else "p50"
    labels = list(groups)
    every = [s[stat] for g in groups.values() for s in g.values()]
    log = dwarfs(every)
    factor, shown = (1.0, unit) if log else display_unit(every, unit)
    width = 0.38
    notes = _wrapped(mark_notes(summ))
    fig, axes = _figure(res, f"{bench}: serial vs parallel bringup{_repeats_note(summ)}",
                        max(6, 1.6 * len(labels) + 3), 4.2 + 0.12 * len(notes), notes=notes)
    ax = axes[0, 0]
    for j, mode in enumerate(casenames.BRINGUP_MODES):
        xs = [i + (j - 0.5) * width for i, g in enumerate(labels) if mode in groups[g]]
        shown_groups = [groups[g][mode] for g in labels if mode in groups[g]]
        vals = [s[stat] for s in shown_groups]
        if not xs:
            continue
        bars = ax.bar(xs, [v * factor for v in vals], width, color=PALETTE[j], label=mode)
        _mark_style(bars, [bool(s["shown"]) for s in shown_groups])
        ax.bar_label(bars, [marked_label(human(v, unit), s) for v, s in zip(vals, shown_groups)],
                     fontsize=8, padding=2)
    if log:
        ax.set_yscale("log")
        _plain_log_ticks(ax.yaxis)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel(axis_label(stat, shown) + " to bring all workers up"
                  + (", log scale" if log else ""))
    ax.set_title(", ".join([f"{next(iter(summ.values()))['better']} is better"] + others),
                 fontsize=9)
    ax.margins(y=0.12)
    ax.legend(fontsize=9)
    _grid(ax, "y")
    return fig


def _tick_step(n):
    """Label every k-th of n CPUs, k a power of two, so that at most MAX_LABELLED_CPUS show."""
    k = 1
    while n > k * MAX_LABELLED_CPUS:
        k *= 2
    return k


def _class_lines(rows, unit):
    """The summary by topology class under a panel: one line per class, closest first."""
    order = {c: i for i, c in enumerate(casenames.HEATMAP_CLASSES)}
    lines = []
    for cls, s in sorted(rows, key=lambda r: (order.get(r[0], len(order)), r[0])):
        lo = s.get("min", s["p50"])
        lines.append(f"{cls}: {s['n']} pairs, p50 {human(s['p50'], unit)} "
                     f"({human(lo, unit)} to {human(s['max'], unit)})")
    return lines


def heatmap(res, bench, summ):
    """CPU-by-CPU grid of p50 values, one panel per case prefix (e.g. xcall and limit). Rows and
    columns are the CPUs that have a cell (a sampled run leaves the others out); values are
    written in the cells up to MAX_ANNOTATED_CPUS, and past MAX_LABELLED_CPUS only every k-th
    CPU is labelled. The summary rows by topology class go under their panel."""
    cells, classes, marked = {}, {}, set()
    for case, s in summ.items():
        sc = casenames.heatmap_summary(case, s["params"])
        if sc is not None:
            classes.setdefault(sc[0], []).append((sc[1], s))
            continue
        c = casenames.heatmap_cell(case, s["params"])
        if c is None:
            return None
        group, src, dst = c
        cells.setdefault(group, {})[(src, dst)] = s["p50"]
        if s["shown"]:
            marked.add((group, src, dst))
    if not cells:
        return None
    unit0 = next(s["unit"] for c, s in summ.items()
                 if casenames.heatmap_summary(c, s["params"]) is None)
    factor, unit = display_unit([v for g in cells.values() for v in g.values()], unit0)
    cpus = sorted({cpu for g in cells.values() for k in g for cpu in k})
    if cpus[0] < 0:
        return None
    n = len(cpus)
    at = {cpu: i for i, cpu in enumerate(cpus)}
    side = min(max(3.6, 0.55 * n + 1.6), 12 if n <= 128 else 16)
    step = _tick_step(n)
    ticks = list(range(0, n, step))
    labels = [str(cpus[i]) for i in ticks]
    tick_size = 8 if n <= MAX_LABELLED_CPUS else 7
    notes = _wrapped(mark_notes(summ) + (["* in a cell: its case is capped or disturbed"]
                                         if marked and n <= MAX_ANNOTATED_CPUS else []))
    fig, axes = _figure(res, f"{bench}: p50 from CPU to CPU{_repeats_note(summ)}",
                        side * len(cells) + 0.6, side + 0.5 + 0.12 * len(notes), 1, len(cells),
                        notes=notes)
    for ax, (group, grid) in zip(axes[0], cells.items()):
        data = [[math.nan] * n for _ in range(n)]
        for (src, dst), v in grid.items():
            data[at[src]][at[dst]] = v * factor
        cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#dddddd")
        finite = [v for row in data for v in row if math.isfinite(v)]
        log = dwarfs(finite) and min(finite, default=0) > 0
        im = ax.imshow(data, cmap=cmap, origin="upper", interpolation="nearest",
                       norm=LogNorm() if log else None)
        if n <= MAX_ANNOTATED_CPUS and finite:
            lo, hi = min(finite), max(finite)
            for i in range(n):
                for j in range(n):
                    v = data[i][j]
                    if not math.isfinite(v):
                        continue
                    light = hi > lo and ((math.log(v / lo) / math.log(hi / lo)) if log
                                         else (v - lo) / (hi - lo)) > 0.6
                    star = "*" if (group, cpus[i], cpus[j]) in marked else ""
                    ax.text(j, i, fmt(v) + star, ha="center", va="center",
                            fontsize=8 if n <= 8 else MIN_FONT, color="black" if light else "white")
        # CPU numbers, not positions: a sampled run's rows are not 0..n-1
        ax.set_xticks(ticks, labels, fontsize=tick_size,
                      rotation=90 if n > MAX_LABELLED_CPUS else 0)
        ax.set_yticks(ticks, labels, fontsize=tick_size)
        every = f", one CPU in {step} labelled" if step > 1 else ""
        ax.set_xlabel("\n".join([f"to CPU (target){every}"]
                                + _class_lines(classes.get(group, []), unit0)))
        ax.set_ylabel(f"from CPU (caller){every}")
        ax.set_title((group or "xcall") + (" (physical limit)" if casenames.is_limit(group)
                                           else ""), fontsize=10)
        fig.colorbar(im, ax=ax, shrink=0.8,
                     label=axis_label("p50", unit) + (", log scale" if log else ""))
    return fig


def _wake_grid(summ):
    """(mechanisms, states, cells, absent) of a wake run: mechanisms in the file's order,
    states hot, parked, busy first; cells {(mechanism, state): {measure: case}}; absent
    {(mechanism, state or None): reason}. None when a case name does not fit."""
    mechs, states, cells, absent = {}, {}, {}, {}
    for case, s in summ.items():
        w = casenames.wake_cell(case, s["params"])
        if w is None:
            return None
        mech, state, measure = w
        mechs[mech] = None
        why = skip_reason(s["n"], s["params"])
        if state is None and why is None:       # figures for no state: nowhere to draw them
            return None
        if state is not None:
            states[state] = None
        if why is not None:
            absent[(mech, state)] = why
        else:
            cells.setdefault((mech, state), {})[measure] = case
    order = [st for st in casenames.WAKE_STATES if st in states]
    return list(mechs), order + [st for st in states if st not in order], cells, absent


def _wake_shown(cell):
    """The case a cell's bar shows: its wake latency, else its round trip."""
    return cell.get(casenames.WAKE_LATENCY) or cell[casenames.WAKE_ROUND_TRIP]


def _wake_label(mech, states, cells, absent):
    """A row's name, saying when its bars are round trips (no wake record) or it is absent."""
    if (mech, None) in absent:
        return f"{mech} (absent)"
    measured = [st for st in states if (mech, st) in cells]
    rt = [st for st in measured if casenames.WAKE_LATENCY not in cells[(mech, st)]]
    if rt and rt == measured:
        return f"{mech} (round trip)"
    return f"{mech} (round trip: {', '.join(rt)})" if rt else mech


def _state_colour(j, state):
    return STATE_COLOURS.get(state, PALETTE[(j + 3) % len(PALETTE)])


def _slots(states):
    """(bar height, [row offset per state]): the states side by side within a row."""
    h = 0.84 / len(states)
    return h, [(j - (len(states) - 1) / 2) * h for j in range(len(states))]


def _log_time_axis(ax, lows, highs, unit):
    """A log time axis from the decade below the lowest bar to room for labels past the
    highest whisker, ticks written with their unit (100 ns, 10 µs, 1 ms)."""
    pos = [v for v in lows + highs if v > 0]
    if not pos:
        return
    ax.set_xscale("log")
    ax.set_xlim(10 ** math.floor(math.log10(min(pos))), max(pos) * 8)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human(v, unit)))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _wake_latency(ax, summ, mechs, states, cells, absent, unit):
    """One bar per (mechanism, state): p50 with a whisker to p99, value written at the end;
    "absent" in the slot of a cell that has no figures, the reason across a row that has none."""
    h, offsets = _slots(states)
    rows = ax.get_yaxis_transform()          # x in axes fractions, y in rows: any scale
    lows, highs = [], []
    for j, (st, off) in enumerate(zip(states, offsets)):
        shown = [(i, summ[_wake_shown(cells[(m, st)])]) for i, m in enumerate(mechs)
                 if (m, st) in cells]
        ys = [i + off for i, _ in shown]
        vals = [s["p50"] for _, s in shown]
        tops = [max(s["p99"], s["p50"]) for _, s in shown]
        bars = ax.barh(ys, vals, h * 0.9,
                       xerr=[[0] * len(vals), [t - v for v, t in zip(vals, tops)]],
                       color=_state_colour(j, st), capsize=2, error_kw={"elinewidth": 0.8},
                       label=st)
        _mark_style(bars, [any(summ[c]["shown"] for c in cells[(m, st)].values())
                           for m in mechs if (m, st) in cells])
        _zeros_on_log(ax, ys, tops, unit)
        for y, v, t in zip(ys, vals, tops):
            if t <= 0:
                continue                    # said at the axis' edge
            ax.annotate(bar_label(v, t, unit), (t, y), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=MIN_FONT)
        for i, m in enumerate(mechs):
            if (m, st) in absent:
                ax.text(0.005, i + off, "absent", transform=rows, va="center", fontsize=MIN_FONT,
                        color="#777")
        lows, highs = lows + vals, highs + tops
    for i, m in enumerate(mechs):
        if (m, None) in absent:
            ax.text(0.005, i, f"absent: {absent[(m, None)]}", transform=rows, va="center",
                    fontsize=7, color="#555")
    _log_time_axis(ax, lows, highs, unit)
    ax.set_yticks(range(len(mechs)), [_wake_label(m, states, cells, absent) for m in mechs])
    ax.set_ylim(len(mechs) - 0.5, -0.5)
    ax.set_xlabel("wake latency: bar p50, whisker p99 (log scale)")
    ax.set_title("the waker's call until the sleeper's thread runs; lower is better", fontsize=9)
    _grid(ax, "x")


def _param_mean(res, bench, case, key):
    """A numeric param averaged over the repeats that have it; None when none has it."""
    vals = [r.params[key] for r in res.runs(bench, case)
            if isinstance(r.params.get(key), (int, float)) and not isinstance(r.params[key], bool)]
    return mean(vals) if vals else None


def _wake_ipis(res, bench, cells):
    """{(mechanism, state): [CAL, RES]} per wake on the sleeper's CPU, from each cell's round
    trip, a count None where the record has none (the row absent from /proc/interrupts)."""
    out = {}
    for key, cell in cells.items():
        case = cell.get(casenames.WAKE_ROUND_TRIP)
        if case is not None:
            out[key] = [_param_mean(res, bench, case, f"{row}_per_op_sleeper")
                        for row in IPI_ROWS]
    return out


def _ipi_notes(ipis):
    """A line per set of interrupt rows that some cells have no count of."""
    missing = {}
    for (m, st), counts in ipis.items():
        rows = tuple(row for row, v in zip(IPI_ROWS, counts) if v is None)
        if rows:
            missing.setdefault(rows, []).append(f"{m}/{st}")
    return [f"{' and '.join(rows)} per wake n/a (no such row in /proc/interrupts, or not "
            f"read): {', '.join(where)}" for rows, where in missing.items()]


def _ipi_bars(ax, mechs, states, ipis, marked=()):
    """CAL and RES per wake stacked, in the same slots as the latency bars beside, the two
    values written at the end; the cells in marked (capped or disturbed) outlined."""
    h, offsets = _slots(states)
    top = 1.0
    for j, (st, off) in enumerate(zip(states, offsets)):
        shown = [(i + off, ipis[(m, st)]) for i, m in enumerate(mechs) if (m, st) in ipis]
        ys = [y for y, _ in shown]
        cal = [c[0] or 0.0 for _, c in shown]
        resched = [c[1] or 0.0 for _, c in shown]
        colour = _state_colour(j, st)
        cb = ax.barh(ys, cal, h * 0.9, color=colour, label=f"{st} CAL")
        rb = ax.barh(ys, resched, h * 0.9, left=cal, color=colour, hatch="////",
                     edgecolor="white", linewidth=0, label=f"{st} RES")
        flags = [(m, st) in marked for m in mechs if (m, st) in ipis]
        for bars in (cb, rb):
            for bar, flag in zip(bars, flags):
                if flag:
                    bar.set_edgecolor(MARK_COLOUR)
                    bar.set_linewidth(1.2)
        for y, end, (_, counts) in zip(ys, [a + b for a, b in zip(cal, resched)], shown):
            ax.annotate(" + ".join("n/a" if v is None else fmt(v) for v in counts), (end, y),
                        xytext=(3, 0), textcoords="offset points", va="center", fontsize=MIN_FONT)
            top = max(top, end)
    ends = [(c[0] or 0.0) + (c[1] or 0.0) for c in ipis.values()]
    if dwarfs(ends, floor=1.0):        # one storm of interrupts would flatten every other bar
        ax.set_xscale("symlog", linthresh=1.0, linscale=0.6)
        _plain_log_ticks(ax.xaxis)
        ax.set_xlim(0, top * 4)
        ax.set_xlabel("interrupts per wake: CAL + RES\n(linear to 1, log scale past it)")
    else:
        ax.set_xlim(0, top * 1.5)
        ax.set_xlabel("interrupts per wake: CAL + RES")
    _grid(ax, "x")
    ax.set_title("IPIs on the sleeper's CPU", fontsize=9)


def _wake_notes(absent):
    """One line per reason: the mechanisms and cells that have no figures, and why."""
    by_reason = {}
    for (m, st), why in absent.items():
        by_reason.setdefault(why, []).append(m if st is None else f"{m}/{st}")
    return [f"absent: {', '.join(names)}: {why}" for why, names in by_reason.items()]


def _wrapped(lines):
    """Notes cut to NOTE_WIDTH, the rest of a line indented."""
    return [part for line in lines
            for part in textwrap.wrap(line, NOTE_WIDTH, subsequent_indent="    ")]


def _wake_legend(fig, states):
    """One legend right of both panels: the states' colours, and CAL against RES."""
    handles = [Patch(color=_state_colour(j, st), label=st) for j, st in enumerate(states)]
    handles += [Patch(facecolor="#999", label="CAL (function-call IPIs)"),
                Patch(facecolor="#999", hatch="////", edgecolor="white",
                      label="RES (reschedule IPIs)")]
    fig.legend(handles=handles, loc="outside right upper", fontsize=8)


def wake(res, bench, summ):
    """xcall-bench wake: a row per mechanism, a bar per sleeper state (hot, parked, busy) of
    the wake latency, p50 to p99 on a log axis (the round trip where there is no wake record,
    said in the row's name); beside it, sharing the rows, CAL and RES per wake on the
    sleeper's CPU. What was not measured is marked in place and listed with why under it."""
    grid = _wake_grid(summ)
    if grid is None:
        return None
    mechs, states, cells, absent = grid
    units = {summ[c]["unit"] for cell in cells.values() for c in cell.values()}
    if not states or len(units) > 1 or not units <= set(TIME_SECONDS):
        return None
    unit = units.pop() if units else "ns"
    ipis = _wake_ipis(res, bench, cells)
    notes = _wrapped(_wake_notes(absent) + _ipi_notes(ipis) + mark_notes(summ))
    fig, axes = _figure(res, f"{bench}: wake latency per mechanism and sleeper state, IPIs per "
                        f"wake{_repeats_note(summ)}", 12, 2.2 + 0.42 * len(mechs)
                        + 0.12 * len(notes), 1, 2, notes=notes, sharey=True,
                        gridspec_kw={"width_ratios": [2.3, 1]})
    _wake_latency(axes[0, 0], summ, mechs, states, cells, absent, unit)
    _ipi_bars(axes[0, 1], mechs, states, ipis,
              {k for k, cell in cells.items() if any(summ[c]["shown"] for c in cell.values())})
    _wake_legend(fig, states)
    return fig


def distribution(res, bench, summ):
    """Latency distribution per case from its percentiles: min, p50, p90, p99, max."""
    names = [c for c, s in summ.items() if s["unit"] in TIME_UNITS]
    unit = summ[names[0]]["unit"]
    names = [c for c in names if summ[c]["unit"] == unit]
    points = [("min", "min"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("max", "max")]
    fig, axes = _figure(res, f"{bench}: latency distribution per case{_repeats_note(summ)}",
                        8, 4.6)
    ax = axes[0, 0]
    for i, c in enumerate(names):
        xs = [k for k, (_, key) in enumerate(points) if key in summ[c]]
        ys = [summ[c][points[k][1]] for k in xs]
        ax.plot(xs, ys, marker="os^"[i // len(PALETTE) % 3], color=PALETTE[i % len(PALETTE)],
                linestyle=("-", "--", ":")[i // len(PALETTE) % 3],   # past 10 cases, colours repeat
                label=marked_label(c, summ[c]))
    ax.set_xticks(range(len(points)), [p for p, _ in points])
    ax.set_xlabel("percentile of operations")
    ax.set_ylabel(f"{quantity(unit)} per operation ({unit})")
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="case",
              title_fontsize=8)
    return fig


SPECIAL = {"pingpong": limit_bars, "kernel": limit_bars, "storm": storm, "matrix": matrix,
           "bringup": bringup, "heatmap": heatmap, "wake": wake}
NO_DISTRIBUTION = {"heatmap", "wake"}      # their chart already shows each case's spread


def unmeasured(res):
    """{bench: [reasons]} of the benches with no case measured (every record skipped, as on
    one CPU): they get a sentence, not a chart."""
    out = {}
    for bench in res.benches():
        summ = summaries(res, bench)
        if not measured_cases(summ):
            out[bench] = list(dict.fromkeys(skipped_reasons(summ, list(summ))))
    return out


def figures(res):
    """[(name, Figure)] for every bench in a Results that has a case measured, specialised
    charts first. Their texts are fitted inside them (fit_texts) when they are saved: the
    fitting draws each figure, which only an image needs."""
    out = []
    empty = unmeasured(res)
    for bench in res.benches():
        if bench in empty:
            continue
        summ = summaries(res, bench)
        fig = None
        if bench in SPECIAL:
            try:
                fig = SPECIAL[bench](res, bench, summ)
            except (ValueError, KeyError, IndexError, ZeroDivisionError):
                fig = None               # odd values (e.g. negative CPU numbers)
        if fig is None:                  # case names did not fit: the generic chart
            fig = generic(res, bench, summ)
        out.append((bench, fig))
        timed = [s for s in summ.values() if s["unit"] in TIME_UNITS and s["n"] > 1]
        if bench not in NO_DISTRIBUTION and timed and len(summ) <= MAX_DISTRIBUTION_CASES:
            out.append((f"{bench}-distribution", distribution(res, bench, summ)))
    return out


# ---------------------------------------------------------------- every text inside its figure

def texts(fig):
    """The visible, non-empty text artists of a figure (titles, labels, ticks, notes, legends,
    the values written on bars)."""
    hidden = set()              # labels of ticks outside the view: kept, but not drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            drawn = {id(lab) for tick in axis._update_ticks() for lab in (tick.label1, tick.label2)}
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                hidden |= {id(lab) for lab in (tick.label1, tick.label2) if id(lab) not in drawn}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and id(t) not in hidden]


def outside(fig, renderer=None, slack=1.0, slack_y=None):
    """[(text, extent)] of the texts that reach past the figure's edges, in display pixels
    (slack past the sides, slack_y past the top and bottom: slack when not given); without a
    renderer the figure is drawn first (with Agg), as a savefig would."""
    if renderer is None:
        FigureCanvasAgg(fig)
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
    W, H = fig.bbox.width, fig.bbox.height
    sy = slack if slack_y is None else slack_y
    out = []
    for t in texts(fig):
        b = t.get_window_extent(renderer)
        if b.x0 < -slack or b.y0 < -sy or b.x1 > W + slack or b.y1 > H + sy:
            out.append((t, b))
    return out


def _rewrap(t, width_px, have_px):
    """Wrap a text to fit width_px, from the width it has now. A centred text is one
    paragraph; a left-aligned one (the notes) keeps its lines, their indented continuations
    joined back first."""
    lines = t.get_text().split("\n")
    left = t.get_horizontalalignment() == "left"
    if left:
        paras = []
        for line in lines:
            if paras and line.startswith(" "):
                paras[-1] += " " + line.strip()
            else:
                paras.append(line)
    else:
        paras = [" ".join(line.strip() for line in lines)]
    longest = max(len(line) for line in lines)
    chars = max(12, int(longest * width_px / max(have_px, 1.0)) - 1)
    indent = "  " if left else ""
    t.set_text("\n".join(part for para in paras
                         for part in (textwrap.wrap(para, chars, subsequent_indent=indent)
                                      or [""])))


def fit_texts(fig, tries=6):
    """Bring every text inside the figure: titles, notes and labels that are too wide are
    wrapped; a value written past a bar's end widens its axis. Drawn with Agg to measure;
    once per figure."""
    if getattr(fig, "xcall_fitted", False):
        return fig
    fig.xcall_fitted = True
    FigureCanvasAgg(fig)
    for _ in range(tries):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        # a margin at the sides (other DPIs, hinting), where wrapping brings a text in; top
        # and bottom only what is past the edge: a text the layout put there fits
        bad = outside(fig, renderer, slack=-FIT_MARGIN, slack_y=1.0)
        for ax in fig.axes:             # a value written past its axes' frame
            bad += [(t, t.get_window_extent(renderer)) for t in ax.texts
                    if isinstance(t, Annotation) and t.get_visible() and t.get_text()
                    and t.get_window_extent(renderer).x1 > ax.bbox.x1 + 1]
        if not bad:
            break
        W = fig.bbox.width
        overs = {}                   # per axes, the most a written value reaches past it
        for t, b in bad:
            ax = next((a for a in fig.axes if t in a.texts or t is a.title
                       or t in (a._left_title, a._right_title)), None)
            if isinstance(t, Annotation) and ax is not None and \
                    max(b.x1 - W, b.x1 - ax.bbox.x1) > 0:
                overs[ax] = max(overs.get(ax, 0.0), max(b.x1 - W, b.x1 - ax.bbox.x1) + 4)
            elif b.width > 0:
                ha, mid = t.get_horizontalalignment(), (b.x0 + b.x1) / 2
                room = W - b.x0 - 2 * FIT_MARGIN if ha == "left" else \
                    b.x1 - 2 * FIT_MARGIN if ha == "right" else 2 * min(mid, W - mid) - 4 * FIT_MARGIN
                _rewrap(t, max(min(room, W - 4 * FIT_MARGIN), 40), b.width)
        for ax, over in overs.items():   # room for the values written past the bars
            lo, hi = ax.get_xlim()
            share = min(1.3 * over / max(ax.bbox.width, 1.0), 0.5)
            if ax.get_xscale() in ("log", "symlog") and lo > 0:
                ax.set_xlim(lo, hi * (hi / lo) ** (share / (1 - share)))
            else:
                ax.set_xlim(lo, hi + (hi - lo) * share / (1 - share))
    return fig


SAVE_RC = {"svg.fonttype": "none", "svg.hashsalt": "xcall-report"}


def save(fig, path_stem):
    """Write path_stem.png and path_stem.svg; return both paths."""
    paths = []
    fit_texts(fig)
    with matplotlib.rc_context(SAVE_RC):
        for ext, kw in (("png", {"dpi": 130}), ("svg", {"metadata": {"Date": None}})):
            p = f"{path_stem}.{ext}"
            fig.savefig(p, format=ext, **kw)
            paths.append(p)
    return paths


def safe_name(name):
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def write_all(res, outdir):
    """Draw every figure of a Results into outdir; return the written paths."""
    os.makedirs(outdir, exist_ok=True)
    paths = []
    for name, fig in figures(res):
        paths += save(fig, os.path.join(outdir, safe_name(name)))
    return paths
