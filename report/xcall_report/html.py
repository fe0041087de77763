"""One self-contained HTML page: machine, tables and plots (SVG embedded as data URIs)."""
import base64
import html
import io

import matplotlib

from . import compare as cmpmod
from . import plots
from .stats import mean, stddev

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222;
       padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .6em 0 1.4em; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
caption { text-align: left; font-weight: bold; padding: .3em 0; }
.note { color: #555; font-size: .9em; margin: .2em 0; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: .9em; }
code { background: #f3f3f3; padding: 0 .3em; }
"""

HOST_FIELDS = [("hostname", "host name"), ("cpu_model", "CPU"), ("cpus_online", "CPUs online"),
               ("kernel", "kernel"), ("virtualised", "virtualised"),
               ("hypervisor", "hypervisor"), ("idle_driver", "idle driver"),
               ("tsc_invariant", "invariant TSC"), ("timer", "timer"),
               ("timer_floor_ns", "timer floor subtracted (ns)")]


def esc(x):
    return html.escape(str(x))


def _table(header, rows, caption=None):
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _show(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return " ".join(map(str, v))
    return "" if v is None else v


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


def results_tables(res):
    out = []
    for bench in res.benches():
        rows = []
        for case in res.cases(bench):
            runs = res.runs(bench, case)
            why = runs[0].skipped
            if why is not None:         # its zeros are no figures: say why instead
                rows.append([case, runs[0].unit, runs[0].better, runs[0].n, len(runs),
                             f"not measured: {why}", "", "", "", ""])
                continue
            means = [r.stats["mean"] for r in runs]
            agg = {k: mean([r.stats[k] for r in runs]) for k in ("p50", "p90", "p99", "max")}
            sd = stddev(means) if len(runs) > 1 else runs[0].stats.get("stddev")
            mean_txt = plots.fmt(mean(means)) + (f" ± {plots.fmt(sd)}" if sd is not None else "")
            rows.append([case, runs[0].unit, runs[0].better, runs[0].n, len(runs), mean_txt]
                        + [plots.fmt(agg[k]) for k in ("p50", "p90", "p99", "max")])
        out.append(_table(["case", "unit", "better", "n", "repeats", "mean ± sd", "p50", "p90",
                           "p99", "max"], rows, caption=f"{bench} ({res.label})"))
    note = ('<p class="note">mean ± sd: across repeats when there are several, otherwise the '
            'samples\' stddev; percentiles are averaged across repeats.</p>')
    return note + "\n".join(out)


def comparison_section(cmp):
    """One table per bench: a row per case, the baseline's absolute values, then each other
    file's ratio [pct imp] per metric."""
    out, benches = [], {}
    for t in cmp.tables:
        benches.setdefault(t.bench, []).append(t)
    others = cmp.labels[1:]
    for bench, tables in benches.items():
        metrics = list(dict.fromkeys(m for t in tables for m in t.cells))
        header = ["case", "better", f"{cmp.labels[0]} (baseline)"] + \
            [f"{lab} {m} [pct imp]" for lab in others for m in metrics]
        rows = []
        for t in tables:
            row = [t.case, t.better, cmpmod.baseline_line(t)]
            for i in range(1, len(t.labels)):
                row += [cmpmod.cell_text(t.cells[m][i]) if m in t.cells else "" for m in metrics]
            rows.append(row)
        out.append(_table(header, rows, caption=bench))
        stat_lines = list(dict.fromkeys(cmpmod.statistic_line(t) for t in tables))
        notes = [f"{t.case}: {n}" for t in tables for n in t.notes]
        out.append('<p class="note">' + "<br>".join(esc(x) for x in stat_lines + notes) + "</p>")
    if cmp.skipped:
        out.append('<p class="note">Not compared (not in every file, not measured, or units '
                   'differ):</p><ul>' + "".join(f"<li>{esc(s)}</li>" for s in cmp.skipped)
                   + "</ul>")
    if not cmp.tables:
        out.append('<p class="note">No case is present in every file.</p>')
    return "\n".join(out)


def svg_data_uri(fig):
    buf = io.BytesIO()
    with matplotlib.rc_context(plots.SAVE_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def plots_section(res):
    out = []
    for name, fig in plots.figures(res):
        width = round(fig.get_figwidth() * 96)          # CSS pixels, as drawn
        out.append(f'<figure><img alt="{esc(name)} plot of {esc(res.label)}" '
                   f'style="width:{width}px" src="{svg_data_uri(fig)}"><figcaption>{esc(name)} '
                   f'({esc(res.label)})</figcaption></figure>')
    return "\n".join(out)


def page(results):
    """The whole report for a list of Results (the first is the comparison baseline)."""
    labels = ", ".join(r.label for r in results)
    body = [f"<h1>xcall report: {esc(labels)}</h1>", "<h2>Machine and run</h2>",
            machine_section(results)]
    if len(results) > 1:
        body += [f"<h2>Comparison, normalised to {esc(results[0].label)}</h2>",
                 '<p class="note">Each cell: ratio to the first file [percent improvement, '
                 'positive is better]; ± the stddev across repeats; '
                 f'{esc(cmpmod.NOISE_MARK)} marks a difference within noise.</p>',
                 comparison_section(cmpmod.compare(results))]
    for r in results:
        body += [f"<h2>Results: {esc(r.label)}</h2>", results_tables(r),
                 f"<h2>Plots: {esc(r.label)}</h2>", plots_section(r)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>xcall report: {esc(labels)}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
