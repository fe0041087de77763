"""One self-contained HTML page (no scripts, no external files; SVG plots as data URIs).

Reading order: a banner when the run was disturbed; the summary (the machine's card and the
five figures a reader came for, summary.py); one chart per family with two lines saying what
is measured and how to read it (captions.py); with several files the comparison; then the full
tables and the latency distributions, collapsed; last every field of the machine and run.
Elements a test or a reader may look for carry ids: #summary, .figure-card[data-figure],
figure.chart[data-bench], #tables.
"""
import base64
import html
import io
import re

import matplotlib

from . import captions
from . import glossary
from . import compare as cmpmod
from . import marks as marksmod
from . import plots
from . import summary
from .stats import mean, stddev

CSS = """
:root { --ink: #1d232b; --muted: #56606b; --line: #d5dbe1; --card: #f6f8fa;
        --warn-bg: #fff4e5; --warn-line: #e6550d; --info-bg: #eef5fc; --info-line: #3b7dd8; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 78em; color: var(--ink); padding: .6em 1.2em 3em; line-height: 1.38; }
h1 { font-size: 1.45em; margin: .2em 0 0; }
.sub { color: var(--muted); margin: .1em 0 .6em; font-size: .92em; overflow-wrap: anywhere; }
h2 { font-size: 1.25em; border-bottom: 1px solid var(--line); padding-bottom: .2em;
     margin: 1.6em 0 .6em; }
h3 { font-size: 1em; margin: 0 0 .3em; }
#summary h2 { margin-top: .6em; }
.banner { border-left: 5px solid var(--warn-line); background: var(--warn-bg);
          padding: .55em .9em; margin: .5em 0; border-radius: 4px; }
.banner.info { border-color: var(--info-line); background: var(--info-bg); }
.banner ul { margin: .2em 0 0; padding-left: 1.2em; }
.cards { display: grid; gap: .8em; grid-template-columns: repeat(auto-fit, minmax(21em, 1fr)); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
        padding: .6em .85em; font-size: .88em; min-width: 0; }
.card .value { font-size: 1.45em; font-weight: 650; margin: 0 0 .2em;
               overflow-wrap: anywhere; }
.card .value.small { font-size: 1.1em; }
.card p { margin: .25em 0; }
.card.absent .value { color: var(--muted); font-weight: normal; font-size: 1.1em; }
.card.machine { margin-bottom: .8em; }
.card.machine dl { display: flex; flex-wrap: wrap; gap: .2em 1.6em; margin: .2em 0 0; }
.card.machine dl div { min-width: 0; overflow-wrap: anywhere; }
.card.machine dt { display: inline; color: var(--muted); margin-right: .4em; }
.card.machine dd { display: inline; margin: 0; }
@media (min-width: 46em) { .figure-card[data-figure="seeds"] { grid-column: span 2; } }
.badge { display: inline-block; background: var(--warn-bg); color: #8a3200;
         border: 1px solid var(--warn-line); border-radius: 3px; padding: 0 .35em;
         font-size: .85em; margin: .1em .3em .1em 0; }
figure.chart { margin: 1.2em 0 2.2em; }
figure.chart .chart-title { font-weight: 650; margin: 0 0 .3em; max-width: 60em; }
figure.chart .chart-box { overflow-x: auto; max-width: 100%; }
figure.chart img { max-width: 100%; height: auto; display: block; }
figcaption { font-size: .92em; max-width: 60em; margin-top: .3em; }
figcaption p { margin: .15em 0; }
figcaption .marked { color: #8a3200; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .4em 0 1em; font-size: .88em; }
th, td { border: 1px solid var(--line); padding: .2em .55em; text-align: right;
         white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #eef1f4; }
tr.marked td { background: var(--warn-bg); }
td.marks, td.span { text-align: left; white-space: normal; }
caption { text-align: left; font-weight: bold; padding: .3em 0; }
details { border: 1px solid var(--line); border-radius: 6px; padding: .4em .8em;
          margin: .5em 0; }
details > summary { cursor: pointer; font-weight: 600; }
details[open] > summary { margin-bottom: .4em; }
.note { color: var(--muted); font-size: .9em; margin: .2em 0; }
.nw { white-space: nowrap; }
code { background: #eef1f4; padding: 0 .3em; border-radius: 3px; }
.lead { font-size: 1em; margin: .2em 0 .7em; max-width: 60em; }
.card .src { color: var(--muted); font-size: .85em; }
a.term { color: inherit; text-decoration: underline dotted #7a8591; text-underline-offset: 2px; }
.unmeasured { border-left: 4px solid var(--line); padding: .2em .7em; margin: .8em 0; }
.scroll-cue { display: none; color: var(--muted); font-size: .85em; margin: .2em 0; }
dl.glossary dt { font-weight: 600; margin-top: .4em; }
dl.glossary dd { margin: 0 0 0 1.2em; }
table.refs td { white-space: normal; text-align: left; min-width: 7em; }
table.refs td:first-child { min-width: 14em; }
@media (max-width: 40em) {
  /* a chart shrunk to a phone's width has unreadable labels: it keeps its own size and
     scrolls sideways in its own box, as the tables do, with a line saying so and a shadow
     at the edge that has more */
  figure.chart img { max-width: none; width: var(--w) !important; }
  .scroll-cue { display: block; }
  figure.chart .chart-box {
    background: linear-gradient(to right, #fff 30%, rgba(255,255,255,0)) left / 2em 100%,
                linear-gradient(to left, #fff 30%, rgba(255,255,255,0)) right / 2em 100%,
                radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.25), rgba(0,0,0,0)) left / .9em 100%,
                radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.25), rgba(0,0,0,0)) right / .9em 100%;
    background-repeat: no-repeat; background-attachment: local, local, scroll, scroll;
    border: 1px solid var(--line); }
  figure.chart .chart-box img { mix-blend-mode: multiply; }
  body { padding: .6em .7em 2em; }
  .cards { grid-template-columns: 1fr; }
  h1 { font-size: 1.3em; }
}
"""

HOST_FIELDS = [("hostname", "host name"), ("cpu_model", "CPU"), ("cpus_online", "CPUs online"),
               ("kernel", "kernel"), ("virtualised", "virtualised"),
               ("hypervisor", "hypervisor"), ("idle_driver", "idle driver"),
               ("tsc_invariant", "invariant TSC"), ("timer", "timer"),
               ("timer_floor_ns", "timer floor subtracted (ns)"),
               ("steal_pct", "most steal time over a subcommand (%)"),
               ("others_pct", "most CPU time other tasks took (%)"),
               ("disturbed", "disturbed"), ("emulated", "CPUs emulated"),
               ("cpu_quota", "cgroup CPU quota (CPUs, 0 = none)")]
STEAL_WARN_PCT = 2.0        # as xcall-bench warns


def esc(x):
    return html.escape(str(x))


def prose(x):
    """Escaped text whose command-line options (--case-limit) do not break at their hyphens."""
    return re.sub(r"(--[a-z][a-z-]*)", r'<span class="nw">\1</span>', esc(x))


class Span(str):
    """A cell that spans the next columns: text written left-aligned across them."""
    def __new__(cls, text, columns):
        s = super().__new__(cls, text)
        s.columns = columns
        return s


def _table(header, rows, caption=None, marked=None, skipped=None, cls=""):
    """A table in a horizontally scrolling box; marked: per row, whether to tint it;
    skipped: per row, whether it is a case not measured."""
    out = [f'<div class="scroll"><table{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}>']
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
    for i, r in enumerate(rows):
        kinds = (["marked"] if marked and marked[i] else []) + \
            (["skipped"] if skipped and skipped[i] else [])
        cls = f' class="{" ".join(kinds)}"' if kinds else ""
        cells, col = [], 0
        for v in r:
            if isinstance(v, Span):
                cells.append(f'<td class="span" colspan="{v.columns}">{esc(v)}</td>')
                col += v.columns
                continue
            kind = ' class="marks"' if col < len(header) and header[col] == "marks" else ""
            cells.append(f"<td{kind}>{esc(v)}</td>")
            col += 1
        out.append(f"<tr{cls}>{''.join(cells)}</tr>")
    out.append("</table></div>")
    return "\n".join(out)


def _show(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return " ".join(map(str, v))
    return "" if v is None else v


# ---------------------------------------------------------------- banners

def banners(res, named=False):
    """Warnings that change how every figure of the file should be read; named: say which
    file (a page of several)."""
    h, out = res.host, []
    many = f" ({esc(res.label)})" if named else ""
    if isinstance(h.get("disturbed"), str) and h["disturbed"]:
        out.append(f'<div class="banner" role="alert"><b>Disturbed run{many}:</b> '
                   f'{esc(h["disturbed"])}. Figures from the records it affected are marked '
                   '<span class="badge">disturbed</span>; compare them with a quiet run before '
                   'drawing conclusions.</div>')
    if h.get("emulated") is True:
        out.append(f'<div class="banner" role="alert"><b>Emulated CPUs{many}:</b> the CPUs '
                   "were emulated (e.g. QEMU TCG), so every time is the emulator's, not a "
                   "machine's.</div>")
    steal = h.get("steal_pct")
    if isinstance(steal, (int, float)) and not isinstance(steal, bool) \
            and steal >= STEAL_WARN_PCT:
        out.append(f'<div class="banner"><b>Steal time{many}:</b> the hypervisor took up to '
                   f"{steal:.1f}% of the CPU time during a subcommand: the workers did not have "
                   "real CPUs of their own.</div>")
    return out


# ---------------------------------------------------------------- summary

def machine_card(res, seen=None):
    seen = set() if seen is None else seen
    rows = "".join(f"<div><dt>{esc(k)}</dt><dd>{glossary.link(prose(v), seen)}</dd></div>"
                   for k, v in summary.machine_card(res))
    return (f'<div class="card machine" data-figure="machine"><h3>The machine</h3>'
            f"<dl>{rows}</dl></div>")


def figure_card(fig, seen):
    """One summary figure; seen: the glossary terms already linked on the page."""
    cls = "card figure-card" + ("" if fig.present else " absent")
    lines = fig.value.split("\n") if fig.value else ["not measured"]
    value = "<br>".join(esc(x) for x in lines)
    small = " small" if len(lines) > 1 else ""
    badges = "".join(f' <a class="badge" href="#{glossary.anchor(glossary.slug(k))}" '
                     f'title="{esc(v or marksmod.MEANING[k])}">{esc(k)}</a>'
                     for k, v in fig.marks.items())
    text = "".join(f"<p>{glossary.link(prose(s), seen)}</p>" for s in fig.sentences)
    if fig.sources:
        text += f'<p class="src">From {esc(", ".join(fig.sources))}.</p>'

    # the causes are in the badges' titles, the banner and under the charts: the five
    # figures stay on the first screen
    title = glossary.link(esc(fig.title), seen)
    return (f'<div class="{cls}" data-figure="{esc(fig.key)}"><h3>{title}{badges}</h3>'
            f'<p class="value{small}">{value}</p>{text}</div>')


def summary_section(res, references=(), seen=None):
    seen = set() if seen is None else seen
    figs = summary.figures(res)
    return (machine_card(res, seen) + '<div class="cards">'
            + "".join(figure_card(f, seen) for f in figs) + "</div>"
            + references_table(res, references))


def references_table(res, references):
    """This run beside reference machines: absolute times side by side, and the ratios each
    machine forms within its own run; nothing divided across machines."""
    if not references:
        return ""
    from . import machines
    mine = machines.ratios(res)
    theirs = [machines.ratios(r) for r in references]
    rows = []
    for i, (label, kind, v) in enumerate(mine):
        rows.append([label, "times side by side" if kind == "absolute"
                     else "ratio within each run"] + [v or "-"] + [t[i][2] or "-" for t in theirs])
    rows.append(["machine", ""] + [machines.machine_line(r) for r in [res, *references]])
    about = "".join(f"<li><b>{esc(r.label)}</b>: {esc(machines.entry(r.label)['about'])}</li>"
                    for r in references)
    return ('<div id="references"><h3>Beside reference machines</h3>'
            '<p class="note">Each machine\'s ratios are formed within its own run; times sit '
            "side by side and are never divided across machines.</p>"
            + _table(["", "how"] + [r.label + (" [disturbed run]" if r.host.get("disturbed")
                                               else "") for r in [res, *references]],
                     rows, cls="refs")
            + f'<ul class="note">{about}</ul></div>')


# ---------------------------------------------------------------- charts

def svg_data_uri(fig):
    plots.fit_texts(fig)                    # every text inside the figure
    buf = io.BytesIO()
    with matplotlib.rc_context(plots.SAVE_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def chart(res, bench, name, fig, label=None):
    """A figure element: the SVG, then its two-line caption (and its marks, if any)."""
    what, how = captions.caption(bench, name, fig)
    title = plots.take_title(fig)
    width = round(fig.get_figwidth() * 96)          # CSS pixels, as drawn
    of = f" ({esc(label)})" if label else ""
    line = captions.marked_line(res, bench) if not name.endswith("-distribution") else ""
    marked = f'<p class="marked">{prose(line)}</p>' if line else ""
    skipped = 0 if name.endswith("-distribution") else \
        sum(1 for c in res.cases(bench) if res.runs(bench, c)[0].skipped is not None)
    return (f'<figure class="chart" data-bench="{esc(bench)}" data-name="{esc(name)}" '
            f'data-skipped="{skipped}"><p class="chart-title">{esc(title)}</p>'
            '<p class="scroll-cue">Wider than the screen: '
            "scroll sideways in the box ⇢</p>"
            f'<div class="chart-box"><img alt="{esc(name)} chart{of}" '
            f'style="--w:{width}px; width:{width}px" src="{svg_data_uri(fig)}"></div><figcaption><p><b>What{of}:</b> {prose(what)}</p>'
            f"<p><b>How to read it:</b> {prose(how)}</p>{marked}</figcaption></figure>")


def _figures_by_bench(results):
    """{bench: [(res, name, fig)]} in first-seen order, main charts and distributions apart."""
    main, dist = {}, {}
    for res in results:
        for name, fig in plots.figures(res):
            bench = name[:-len("-distribution")] if name.endswith("-distribution") else name
            (dist if name.endswith("-distribution") else main).setdefault(bench, []).append(
                (res, name, fig))
    return main, dist


# ---------------------------------------------------------------- tables

def results_table(res, bench, dist=(), steps=None):
    """The table of every case of one bench, marks in the last column, and its distribution
    charts, inside a collapsed <details>."""
    rows, flags, every = [], [], []
    for case in res.cases(bench):
        runs = res.runs(bench, case)
        every.append(marksmod.of_runs(runs))
    # one cause per kind across the table: the cells say the kind, a note under it the cause
    causes = {}
    for m in every:
        for k, v in m.items():
            causes.setdefault(k, set()).add(v)
    shared = all(len(v) == 1 for v in causes.values())
    nmarked = sum(bool(m) for m in every)
    for case, marks in zip(res.cases(bench), every):
        runs = res.runs(bench, case)
        flags.append(bool(marks))
        cell = marksmod.short(marks) if shared else marksmod.long(marks)
        why = runs[0].skipped
        if why is not None:         # its zeros are no figures: say why instead
            rows.append([case, runs[0].unit, runs[0].better, runs[0].n, len(runs),
                         Span(f"not measured: {why}", 5), cell])
            continue
        means = [r.stats["mean"] for r in runs]
        agg = {k: mean([r.stats[k] for r in runs]) for k in ("p50", "p90", "p99", "max")}
        sd = stddev(means) if len(runs) > 1 else runs[0].stats.get("stddev")
        mean_txt = plots.fmt(mean(means)) + (f" ± {plots.fmt(sd)}" if sd is not None else "")
        rows.append([case, runs[0].unit, runs[0].better, runs[0].n, len(runs), mean_txt]
                    + [plots.fmt(agg[k]) for k in ("p50", "p90", "p99", "max")] + [cell])
    header = ["case", "unit", "better", "n", "repeats", "mean ± sd", "p50", "p90", "p99", "max",
              "marks"]
    if not nmarked:
        header, rows = header[:-1], [r[:-1] for r in rows]
    n = len(rows)
    label = f"{bench}: {n} case{'s' if n != 1 else ''}" + \
        (f", {nmarked} marked capped or disturbed" if nmarked else "") + \
        (", with the latency distribution" if dist else "")
    body = _table(header, rows, caption=f"{bench} ({res.label})", marked=flags,
                  skipped=[res.runs(bench, c)[0].skipped is not None for c in res.cases(bench)])
    if nmarked and shared:
        body += '<p class="note">' + "; ".join(
            f"{esc(k)}: {prose(next(iter(v)) or marksmod.MEANING[k])}"
            for k, v in causes.items()) + "</p>"
    for r, name, fig in dist:
        if steps:
            steps.chart(name)
        body += chart(r, bench, name, fig)
    return f'<details data-bench="{esc(bench)}"><summary>{esc(label)}</summary>{body}</details>'


def tables_section(res, dist, steps=None):
    note = ('<p class="note">mean ± sd: across repeats when there are several, otherwise the '
            "samples' stddev; percentiles are averaged across repeats. Click a family to open "
            "it.</p>")
    return note + "\n".join(results_table(res, b, [d for d in dist.get(b, []) if d[0] is res],
                                          steps) for b in res.benches())


def machine_section(results):
    """One table, one column per file: host fields, then the command and when it ran."""
    keys = [k for k, _ in HOST_FIELDS if any(k in r.host for r in results)]
    keys += [k for r in results for k in r.host if k not in keys]
    names = dict(HOST_FIELDS)
    rows = [[names.get(k, k)] + [_show(r.host.get(k)) for r in results] for k in keys]
    for k in ("command", "created", "tool", "tool_version"):
        if any(r.meta.get(k) for r in results):
            rows.append([k.replace("_", " ")] + [_show(r.meta.get(k)) for r in results])
    return _table(["field"] + [r.label for r in results], rows)


def plans_table(res):
    """xcall-bench's plan per subcommand: cases, printed bound, time taken, capped loops."""
    if not res.plans:
        return ""
    keys = ["bench", "cases", "bound_s", "wall_s", "capped_loops", "steal_pct", "others_pct",
            "disturbed"]
    keys = [k for k in keys if any(k in p for p in res.plans)]
    rows = [[_show(p.get(k)) for k in keys] for p in res.plans]
    return _table(keys, rows, caption=f"subcommands run ({res.label})")


def comparison_section(cmp):
    """The summary line, then one collapsed table per bench: a row per case, the baseline's
    absolute values, then each other file's ratio [pct imp] per metric."""
    out, benches = [f"<p><b>{esc(cmpmod.summary_line(cmp))}</b></p>"], {}
    if not cmp.tables:
        out.append(f'<p class="banner">{esc(cmpmod.nothing_compared(cmp))}</p>')
    for t in cmp.tables:
        benches.setdefault(t.bench, []).append(t)
    others = cmp.labels[1:]
    for bench, tables in benches.items():
        metrics = list(dict.fromkeys(m for t in tables for m in t.cells))
        header = ["case", "better", f"{cmp.labels[0]} (baseline)"] + \
            [f"{lab} {m} [pct imp]" for lab in others for m in metrics] + ["marks"]
        rows, flags = [], []
        for t in tables:
            row = [t.case, t.better, cmpmod.baseline_line(t)]
            for i in range(1, len(t.labels)):
                row += [cmpmod.cell_text(t.cells[m][i]) if m in t.cells else "" for m in metrics]
            rows.append(row + ["; ".join(cmpmod.mark_notes(t))])
            flags.append(any(t.marks))
        if not any(flags):
            header, rows = header[:-1], [r[:-1] for r in rows]
        stat_lines = list(dict.fromkeys(cmpmod.statistic_line(t) for t in tables))
        notes = [f"{t.case}: {n}" for t in tables for n in t.notes]
        body = _table(header, rows, caption=bench, marked=flags) + \
            '<p class="note">' + "<br>".join(esc(x) for x in stat_lines + notes) + "</p>"
        out.append(f"<details><summary>{esc(bench)}: {len(tables)} case"
                   f"{'s' if len(tables) != 1 else ''}</summary>{body}</details>")
    if cmp.skipped:
        out.append(f"<details><summary>Not compared: {len(cmp.skipped)} case"
                   f"{'s' if len(cmp.skipped) != 1 else ''} (not in every file, not measured, "
                   "or units differ)</summary><ul>"
                   + "".join(f"<li>{esc(s)}</li>" for s in cmp.skipped) + "</ul></details>")
    return "\n".join(out)


# ---------------------------------------------------------------- page

def unmeasured_line(res, bench, reasons, label=None):
    """A family with nothing measured: a sentence in place of its chart."""
    of = f" ({esc(label)})" if label else ""
    why = "; ".join(reasons)
    what = captions.WHAT.get(bench)
    return (f'<p class="unmeasured" data-bench="{esc(bench)}"><b>{esc(bench)}{of}:</b> nothing '
            f"measured, so no chart: {prose(why)}." + (f" It measures: {prose(what)}" if what
                                                      else "") + "</p>")


class _Progress:
    """How far the page's charts are, through say(line): at the first chart and then at most
    every EVERY_S seconds, so that a long page is never silent and a short one says little."""
    EVERY_S = 5.0

    def __init__(self, say, total):
        import time
        self.say, self.total, self.done = say, total, 0
        self.start = self.last = time.monotonic() - self.EVERY_S

    def chart(self, name):
        import time
        now = time.monotonic()
        self.done += 1
        if self.say and (self.done == 1 or now - self.last >= self.EVERY_S):
            self.say(f"chart {self.done} of {self.total} ({name}), "
                     f"{now - self.start - self.EVERY_S:.0f} s")
            self.last = now


def page(results, references=(), progress=None):
    """The whole report for a list of Results (the first is the comparison baseline), with
    reference machines beside the first when given; progress(line), when given, hears how far
    the charts are."""
    labels = ", ".join(r.label for r in results)
    many = len(results) > 1
    created = [summary.when(r.meta.get("created")) for r in results if r.meta.get("created")]
    body = ["<header><h1>xcall benchmark report</h1>",
            f'<p class="sub">{esc(labels)}'
            + (f" · {esc(', '.join(created))}" if created else "") + "</p>"]
    seen = set()
    body.append(f'<p class="lead" id="lead">'
                f"{glossary.link(prose(summary.lead(results[0], summary.figures(results[0]))), seen)}"
                "</p></header>")
    for r in results:
        body += banners(r, many)
    body.append('<section id="summary"><h2>Summary</h2>')
    for r in results:
        if many:
            body.append(f"<h3>{esc(r.label)}</h3>")
        body.append(summary_section(r, references if r is results[0] else (), seen))
    body.append("</section>")
    main, dist = _figures_by_bench(results)
    steps = _Progress(progress, sum(len(v) for d in (main, dist) for v in d.values()))
    empty = [(r, plots.unmeasured(r)) for r in results]
    body.append('<section id="charts"><h2>One chart per family</h2>')
    for bench in dict.fromkeys(b for r in results for b in r.benches()):
        for r, name, fig in main.get(bench, []):
            steps.chart(name)
            body.append(chart(r, bench, name, fig, r.label if many else None))
        for r, e in empty:
            if bench in e:
                body.append(unmeasured_line(r, bench, e[bench], r.label if many else None))
    body.append("</section>")
    if many:
        body += ['<section id="comparison">',
                 f"<h2>Comparison, normalised to {esc(results[0].label)}</h2>",
                 '<p class="note">Each cell: ratio to the first file [percent improvement, '
                 'positive is better]; ± the stddev across repeats; '
                 f'{esc(cmpmod.NOISE_MARK)} marks a difference within noise (the test cannot '
                 "tell the files apart and their 95% intervals overlap).</p>",
                 comparison_section(cmpmod.compare(results)), "</section>"]
    body.append('<section id="tables"><h2>Full tables</h2>')
    for r in results:
        if many:
            body.append(f"<h3>{esc(r.label)}</h3>")
        body.append(tables_section(r, dist, steps))
    body.append("</section>")
    body += ['<section id="machine"><h2>Machine and run</h2>',
             "<details><summary>Every field the files give</summary>",
             machine_section(results), "".join(plans_table(r) for r in results),
             "</details></section>", glossary.section(esc)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>xcall report: {esc(labels)}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
