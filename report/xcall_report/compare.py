"""A/B tables: every case present in all files, normalised to the first file.

For each metric a cell shows the ratio to the first file and, in brackets, the percent
improvement as in the seeds ("0.41 [59.29]"): (1 - ratio) * 100 when lower is better,
(ratio - 1) * 100 when higher is better. With repeats the ratio is the mean over repeats and
± its stddev (both divided by the first file's mean). A difference is tested with Welch's
t-test: on the per-repeat values when both files have at least two repeats, otherwise (mean
only) on the samples' mean, stddev and n when the records give a stddev. "~" marks a
difference within noise: the test cannot tell the two apart (p >= 0.05) *and* the two files'
95% confidence intervals of the value overlap. The second condition matters for the samples
of a disturbed run: a few samples thousands of times the median inflate the stddev so much
that the t statistic stays small whatever the ratio, while the interval (on a log scale, see
stats.mean_interval) stays clear of the undisturbed file's.
"""
import csv
import fnmatch
import io
from dataclasses import dataclass, field

from . import marks as marksmod
from . import stats

METRICS = ("mean", "p50", "p99")
NOISE_MARK = "~"


@dataclass
class Cell:
    values: list            # the metric, one per repeat
    mean: float
    sd: float
    ratio: float = None     # None when the baseline is 0
    sd_ratio: float = None
    pct_imp: float = None
    p_value: float = None   # None: not tested (baseline row, or too few values)
    test: str = ""          # "repeats" or "samples"
    interval: tuple = None  # 95% confidence interval of the value, on the tested basis
    base_interval: tuple = None

    @property
    def within_noise(self):
        """True when the test cannot tell this file from the first and their intervals
        overlap; None when untested."""
        if self.p_value is None:
            return None
        if self.interval is not None and self.base_interval is not None \
                and not stats.overlap(self.interval, self.base_interval):
            return False
        return self.p_value >= stats.ALPHA

    def verdict(self, better):
        """"better", "worse", "noise" or "untested" against the first file."""
        noise = self.within_noise
        if noise is None or self.ratio is None:
            return "untested"
        if noise or self.ratio == 1.0:
            return "noise"
        return "better" if (self.ratio < 1.0) == (better == "lower") else "worse"


@dataclass
class Table:
    bench: str
    case: str
    unit: str
    better: str
    labels: list            # one per file
    repeats: list           # number of repeats per file
    cells: dict             # metric -> [Cell per file]
    notes: list = field(default_factory=list)
    marks: list = field(default_factory=list)    # per file: {mark: detail} (marks.py)


@dataclass
class Comparison:
    labels: list
    tables: list
    skipped: list           # one line per case not compared
    filters: list = field(default_factory=list)  # e.g. ["--bench pingpong"], as given
    disturbed: list = field(default_factory=list)  # "FILE: cause" for each disturbed run


def matches(name, patterns):
    """Whether name fits any pattern: a glob when the pattern has *, ? or [, else a
    substring; case-sensitive. No patterns: everything fits."""
    if not patterns:
        return True
    return any(fnmatch.fnmatchcase(name, p) if any(ch in p for ch in "*?[") else p in name
               for p in patterns)


def pct_improvement(ratio, better):
    return (1.0 - ratio) * 100.0 if better == "lower" else (ratio - 1.0) * 100.0


def _interval(runs, metric, values):
    """The value's 95% interval on the basis a test would use: the repeats, else (mean, one
    run) the samples' mean, stddev and n; None when there is no spread to go on."""
    if len(values) >= 2:
        return stats.mean_interval(stats.mean(values), stats.stddev(values), len(values))
    if metric == "mean" and len(runs) == 1 and "stddev" in runs[0].stats:
        r = runs[0]
        return stats.mean_interval(r.stats["mean"], r.stats["stddev"], r.n)
    return None


def _cell(runs, metric, better, base=None, base_runs=None):
    """One file's cell; without base it is the baseline itself (ratio 1)."""
    values = [r.stats[metric] for r in runs]
    c = Cell(values=values, mean=stats.mean(values), sd=stats.stddev(values),
             interval=_interval(runs, metric, values))
    if base is not None:
        c.base_interval = base.interval
    ref = base.mean if base else c.mean
    if ref == 0:
        return c
    c.ratio, c.sd_ratio = c.mean / ref, c.sd / ref
    c.pct_imp = pct_improvement(c.ratio, better)
    if base is None:
        return c
    if len(values) >= 2 and len(base.values) >= 2:
        c.p_value, c.test = stats.welch(base.values, values), "repeats"
    elif metric == "mean" and len(runs) == 1 and len(base_runs) == 1 \
            and "stddev" in runs[0].stats and "stddev" in base_runs[0].stats:
        a, b = base_runs[0], runs[0]
        c.p_value = stats.welch_summary(a.stats["mean"], a.stats["stddev"], a.n,
                                        b.stats["mean"], b.stats["stddev"], b.n)
        c.test = "samples" if c.p_value is not None else ""
    return c


def _unmeasured(labels, runs):
    """"not measured in X (why)" for the files where a case has no figures (xcall-bench's
    skipped records), or "" when it was measured everywhere."""
    why = {}
    for lab, rs in zip(labels, runs):
        reason = next((r.skipped for r in rs if r.skipped is not None), None)
        if reason is not None:
            why.setdefault(reason, []).append(lab)
    return "; ".join(f"not measured in {', '.join(labs)} ({reason})"
                     for reason, labs in why.items())


def compare(results, metrics=METRICS, benches=(), cases=()):
    """Build the tables for a list of Results (the first is the baseline), for the cases whose
    bench fits one of benches and whose name fits one of cases (see matches)."""
    labels = [r.label for r in results]
    tables, skipped = [], []
    keys = list(dict.fromkeys((rec.bench, rec.case) for res in results for rec in res.records
                              if matches(rec.bench, benches) and matches(rec.case, cases)))
    for bench, case in keys:
        runs = [res.runs(bench, case) for res in results]
        absent = [lab for lab, rs in zip(labels, runs) if not rs]
        if absent:
            present = [lab for lab, rs in zip(labels, runs) if rs]
            skipped.append(f"{bench} {case}: only in {', '.join(present)}")
            continue
        unmeasured = _unmeasured(labels, runs)
        if unmeasured:          # a 0 there would read as a 100% improvement
            skipped.append(f"{bench} {case}: {unmeasured}")
            continue
        unit, better = runs[0][0].unit, runs[0][0].better
        units = {rs[0].unit for rs in runs}
        if len(units) > 1:
            skipped.append(f"{bench} {case}: units differ ({', '.join(sorted(units))})")
            continue
        t = Table(bench, case, unit, better, labels, [len(rs) for rs in runs], {},
                  marks=[marksmod.of_runs(rs) for rs in runs])
        single = all(r.n <= 1 for rs in runs for r in rs)    # a single number: mean only
        if any(rs[0].better != better for rs in runs):
            t.notes.append(f"files disagree on which way is better; using {labels[0]}'s")
        for m in (("mean",) if single else metrics):
            base = _cell(runs[0], m, better)
            t.cells[m] = [base] + [_cell(rs, m, better, base, runs[0]) for rs in runs[1:]]
            if base.mean == 0:
                t.notes.append(f"{m} is 0 in {labels[0]}: no ratio")
        tables.append(t)
    filters = [f"--bench {p}" for p in benches] + [f"--case {p}" for p in cases]
    disturbed = [f"{r.label}: {r.host['disturbed']}" for r in results
                 if isinstance(r.host.get("disturbed"), str) and r.host["disturbed"]]
    return Comparison(labels, tables, skipped, filters, disturbed)


def verdicts(cmp):
    """{"better", "worse", "noise", "untested": count} over every case and every file after
    the first, judged on the first metric of each table (the mean), plus "marked": how many
    of them came from a capped or disturbed record on either side."""
    out = dict.fromkeys(("better", "worse", "noise", "untested", "marked"), 0)
    for t in cmp.tables:
        cells = next(iter(t.cells.values()))
        for i in range(1, len(t.labels)):
            out[cells[i].verdict(t.better)] += 1
            out["marked"] += bool(t.marks and (t.marks[0] or t.marks[i]))
    return out


def nothing_compared(cmp):
    """The plain statement for a comparison without a table, or ""."""
    if cmp.tables:
        return ""
    where = f" after {' '.join(cmp.filters)}" if cmp.filters else ""
    return (f"No case is common to {', '.join(cmp.labels)}{where}: nothing was compared "
            f"({len(cmp.skipped)} case{'s' if len(cmp.skipped) != 1 else ''} not compared).")


def summary_line(cmp):
    """One line: "Summary: 3 better, 1 worse, 12 within noise, 2 not tested ...; ..."."""
    v = verdicts(cmp)
    vs = f" against {cmp.labels[0]}" if len(cmp.labels) > 2 else ""
    line = (f"Summary: {v['better']} better, {v['worse']} worse, {v['noise']} within noise, "
            f"{v['untested']} not tested for noise{vs} (on the mean)")
    if v["marked"]:
        line += f"; {v['marked']} from capped or disturbed records"
    if cmp.skipped:
        line += f"; {len(cmp.skipped)} not compared"
    if cmp.filters:
        line += f"; {' '.join(cmp.filters)}"
    return line + "."


# ---------------------------------------------------------------- formatting

def _num(x):
    """A compact absolute value: 182.4, 0.0123, 1.23e+06."""
    if x == 0:
        return "0"
    if abs(x) >= 1e7 or abs(x) < 1e-3:
        return f"{x:.3g}"
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def cell_text(c):
    if c.ratio is None:
        return "n/a"
    s = f"{c.ratio:.2f}"
    if len(c.values) > 1:
        s += f" ± {c.sd_ratio:.2f}"
    s += f" [{c.pct_imp:.2f}]"
    if c.within_noise:
        s += " " + NOISE_MARK
    return s


def statistic_line(t):
    reps = sorted(set(t.repeats))
    if reps == [1]:
        line = "AMean of one run"
    else:
        line = "AMean ± stddev over repeats (" + \
            ", ".join(f"{lab}: {n}" for lab, n in zip(t.labels, t.repeats)) + ")"
    tests = {c.test for cs in t.cells.values() for c in cs if c.test}
    if tests:
        on = " and ".join(sorted("per-repeat values" if x == "repeats" else "samples (mean only)"
                                 for x in tests))
        line += f"; {NOISE_MARK} = within noise ({stats.TEST_NAME} on {on}, " \
                f"p >= {stats.ALPHA:g}, and the 95% intervals overlap)"
    else:
        line += "; not tested for noise (needs 2+ repeats per file, or a stddev)"
    return line


def baseline_line(t):
    return ", ".join(f"{m} {_num(cs[0].mean)} {t.unit}" for m, cs in t.cells.items())


def _rows(t):
    """Header and rows of one table; a marks column when a file's records are capped or
    disturbed (the cause goes to the notes)."""
    header = ["file"] + [f"{m} [pct imp]" for m in t.cells]
    rows = [[lab] + [cell_text(cs[i]) for cs in t.cells.values()]
            for i, lab in enumerate(t.labels)]
    if any(t.marks):
        header.append("marks")
        for row, m in zip(rows, t.marks):
            row.append(marksmod.short(m))
    return header, rows


def mark_notes(t):
    """A note per file whose records are disturbed, with the cause; per capped file."""
    return [f"{lab}: {marksmod.long(m)}" for lab, m in zip(t.labels, t.marks) if m]


def disturbed_lines(cmp, bullet=""):
    """The runs whose host says they were disturbed, with the cause."""
    if not cmp.disturbed:
        return []
    return ["Disturbed runs (their figures may say more about the other work than about "
            "the code):"] + [f"{bullet or '  '}{d}" for d in cmp.disturbed]


def _ending(cmp):
    """The lines that close a text or Markdown comparison."""
    out = _skipped_lines(cmp, "") + disturbed_lines(cmp)
    if not cmp.tables:
        out.append(nothing_compared(cmp))
    return out + ["", summary_line(cmp)]


def format_text(cmp):
    out, bar = [], "=" * 66
    for t in cmp.tables:
        header, rows = _rows(t)
        widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
        out += [bar,
                f"Test          : {t.bench} {t.case}",
                f"Units         : normalised to {t.labels[0]} ({baseline_line(t)})",
                f"Interpretation: {t.better.capitalize()} is better "
                f"({', '.join(t.cells)})",
                f"Statistic     : {statistic_line(t)}"]
        out += [f"Note          : {n}" for n in t.notes + mark_notes(t)]
        out.append(bar)
        for r in [header] + rows:
            out.append("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
        out.append("")
    out += _ending(cmp)
    return "\n".join(out).strip() + "\n"


def _md_escape(s):
    return s.replace("|", "\\|")


def format_markdown(cmp):
    out = []
    for t in cmp.tables:
        header, rows = _rows(t)
        out += [f"### {t.bench} {t.case}", "",
                f"{t.better.capitalize()} is better for {', '.join(t.cells)}. "
                f"Normalised to {t.labels[0]} ({baseline_line(t)}). {statistic_line(t)}."]
        out += [f"Note: {n}." for n in t.notes + mark_notes(t)]
        out += ["", "| " + " | ".join(header) + " |",
                "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(_md_escape(v) for v in r) + " |" for r in rows]
        out.append("")
    out += _skipped_lines(cmp, "- ") + disturbed_lines(cmp, "- ")
    if not cmp.tables:
        out.append(nothing_compared(cmp))
    out += ["", summary_line(cmp)]
    return "\n".join(out).strip() + "\n"


CSV_FIELDS = ["bench", "case", "metric", "unit", "better", "file", "repeats", "mean", "stddev",
              "ratio", "pct_imp", "test", "p_value", "within_noise", "ci_low", "ci_high",
              "marks"]


def format_csv(cmp):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for t in cmp.tables:
        for m, cs in t.cells.items():
            for i, (lab, n, c) in enumerate(zip(t.labels, t.repeats, cs)):
                noise = "" if c.within_noise is None else str(c.within_noise).lower()
                lo, hi = c.interval or ("", "")
                w.writerow([t.bench, t.case, m, t.unit, t.better, lab, n, repr(c.mean),
                            repr(c.sd) if n > 1 else "", "" if c.ratio is None else repr(c.ratio),
                            "" if c.pct_imp is None else f"{c.pct_imp:.4f}", c.test,
                            "" if c.p_value is None else f"{c.p_value:.6g}", noise,
                            lo if lo == "" else f"{lo:.6g}", hi if hi == "" else f"{hi:.6g}",
                            marksmod.long(t.marks[i]) if t.marks else ""])
    return buf.getvalue()


def _skipped_lines(cmp, bullet):
    if not cmp.skipped:
        return []
    return ["Not compared (not in every file, not measured, or units differ):"] + \
        [f"{bullet or '  '}{s}" for s in cmp.skipped]


FORMATS = {"text": format_text, "markdown": format_markdown, "csv": format_csv}
