"""Reference machines: results files of known machines shipped with the report tool.

Each is a results file as xcall-bench writes it, named in machines/index.json with a line
about the machine. `xcall-report html RUN.json --reference NAME` sets one beside a run; the
summary then compares only what each machine forms against itself (ratios within one run),
and puts absolute times side by side without dividing one machine's by another's
(`ratios()`). docs/machines.md is the table `markdown()` writes from the files;
`xcall-report machines add FILE --name NAME --about TEXT` adds one and rewrites it.
"""
import json
import os
import re
import shutil

from . import cases as casenames
from . import marks as marksmod
from .load import InputError, load
from .plots import human
from .stats import aggregate

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "machines")
INDEX = os.path.join(DIR, "index.json")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{0,62}$")


def index(directory=DIR):
    with open(os.path.join(directory, "index.json"), encoding="utf-8") as f:
        return json.load(f)


def names(directory=DIR):
    return [m["name"] for m in index(directory)]


def entry(name, directory=DIR):
    for m in index(directory):
        if m["name"] == name:
            return m
    raise InputError(f"no reference machine {name!r}; shipped: {', '.join(names(directory))}")


def load_machine(name, directory=DIR):
    """The Results of a shipped machine, labelled with its name."""
    m = entry(name, directory)
    res = load(os.path.join(directory, m["file"]))
    res.label = name
    return res


# ---------------------------------------------------------------- what each machine forms

def _val(res, bench, case, stat="p50"):
    runs = res.runs(bench, case)
    if not runs or runs[0].skipped is not None:
        return None
    return aggregate(runs)[stat], runs[0].unit


def _param(res, bench, case, key):
    vals = [r.params[key] for r in res.runs(bench, case)
            if isinstance(r.params.get(key), (int, float)) and not isinstance(r.params[key], bool)]
    return sum(vals) / len(vals) if vals else None


def _x(r):
    return f"{r:.3g}×" if r < 10 else f"{r:.0f}×"


def _limit(res):
    v = _val(res, "pingpong", "cacheline")
    return human(*v) if v else None


def _call(res):
    v = _val(res, "pingpong", "libxcall-polling")
    return human(*v) if v else None


def _ipi(res, case):
    """A kernel IPI record's p50, or None where it was not measured or sent no IPI."""
    if marksmod.NO_IPI in marksmod.of_runs(res.runs("kernel", case)):
        return None
    return _val(res, "kernel", case)


def _kernel_ipi(res):
    v = _ipi(res, "compare/kernel-ipi") or _ipi(res, "ipi/normal")
    return human(*v) if v else None


def _paired(res):
    r = _param(res, "pingpong", "libxcall-polling", "paired_ratio_p50")
    return _x(r) if r is not None else None


def _code(res):
    r = _param(res, "pingpong", "libxcall-polling", "paired_code_ratio_p50")
    return _x(r) if r is not None else None


def _nowait(res):
    r = _param(res, "throughput", "1-1/libxcall-nowait", "paired_ratio_p50") or \
        _param(res, "throughput", "1-1/libxcall-nowait", "ratio_to_ring")
    return _x(r) if r is not None else None


def _kernel_call(res):
    k, c = _ipi(res, "compare/kernel-ipi"), _val(res, "kernel", "compare/libxcall-polling")
    if not k or not c or c[0] <= 0:
        return None
    return _x(k[0] / c[0])


def _storm(res):
    cases = [c for c in res.cases("storm") if _val(res, "storm", c, "mean")]
    if "ablate-none" not in cases or len(cases) < 2:
        return None
    base = casenames.baseline(cases)
    b, n = _val(res, "storm", base, "mean"), _val(res, "storm", "ablate-none", "mean")
    if base == "ablate-none" or b[0] <= 0:
        return None
    return f"{n[0] / b[0]:.2f}"


def _matrix(res):
    best = {}
    for case in res.cases("matrix"):
        runs = res.runs("matrix", case)
        p = casenames.matrix_point(case, runs[0].params)
        if p is None or p[2] != casenames.SPEEDUP or runs[0].skipped is not None:
            continue
        if p[0] not in best or p[1] > best[p[0]][0]:
            best[p[0]] = (p[1], aggregate(runs)["mean"])
    if not best:
        return None
    lo = min(v for _, v in best.values())
    hi = max(v for _, v in best.values())
    callers = max(c for c, _ in best.values())
    return (_x(lo) if lo == hi else f"{_x(lo)} to {_x(hi)}") + f" (at {callers} callers)"


def _bringup(res):
    v = _val(res, "bringup", "speedup", "mean")
    return _x(v[0]) if v else None


# (label, kind, function): kind "absolute" rows sit side by side, "ratio" rows are formed
# within each machine's own run
ROWS = [
    ("cache-line round trip (the limit), p50", "absolute", _limit),
    ("libxcall's waiting call, p50", "absolute", _call),
    ("a kernel IPI, p50", "absolute", _kernel_ipi),
    ("waiting call / limit, paired", "ratio", _paired),
    ("libxcall's code / the bare handoff, paired", "ratio", _code),
    ("nowait call / single-producer ring (1-1)", "ratio", _nowait),
    ("kernel IPI / libxcall's call, same probe", "ratio", _kernel_call),
    ("storm: every optimisation on / elide+notify off (runtime)", "ratio", _storm),
    ("matrix: speedup over the 2008 design", "ratio", _matrix),
    ("bringup: parallel speedup", "ratio", _bringup),
]


def ratios(res):
    """[(label, kind, text or None)] of one run: each a figure of that run alone."""
    return [(label, kind, fn(res)) for label, kind, fn in ROWS]


def machine_line(res):
    h = res.host
    bits = [str(h.get("cpu_model") or "unknown CPU")]
    if h.get("cpus_online"):
        bits.append(f"{h['cpus_online']} CPUs")
    if h.get("virtualised") is True:
        bits.append(f"VM ({h.get('hypervisor') or '?'})")
    elif h.get("virtualised") is False:
        bits.append("bare metal")
    if h.get("kernel"):
        bits.append(f"Linux {h['kernel']}")
    return ", ".join(bits)


# ---------------------------------------------------------------- docs/machines.md

HEADER = """# Reference machines

Results files of known machines, shipped with `xcall-report` (`report/xcall_report/machines/`).
Put one beside your run with `xcall-report html RUN.json --reference NAME -o report.html`: the
summary then shows, for each machine, the ratios it forms against itself (never one machine's
time divided by another's), and absolute times side by side.

This file is generated from the machines' files: `make machines-doc` (a test checks it is
current). Add your own machine with one command, from the repository root:

```sh
build/venv/bin/xcall-report machines add results/latest.json --name NAME --about "what the machine is, how quiet" --doc docs/machines.md
```

Ratios are formed within each machine's own run; the times are p50 round trips.

"""


def markdown(directory=DIR):
    """docs/machines.md: a row per shipped machine."""
    cols = ["machine", "what", "when"] + [label for label, _, _ in ROWS]
    out = [HEADER, "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    abouts = []
    for m in index(directory):
        res = load(os.path.join(directory, m["file"]))
        created = str(res.meta.get("created") or "")[:10]
        cells = [f"`{m['name']}`", machine_line(res), created] + \
            [v if v is not None else "-" for _, _, v in ratios(res)]
        out.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
        abouts.append(f"- `{m['name']}`: {m['about']}")
    return "\n".join(out + ["", "## The machines", ""] + abouts) + "\n"


def add(path, name, about, directory=DIR, doc=None):
    """Copy a results file in as machine NAME (refusing a bad file or a name taken), and
    rewrite the doc when given. Returns the file written."""
    if not NAME_RE.match(name or ""):
        raise InputError(f"bad machine name {name!r}: lower-case letters, digits, '.' and '-'")
    if name in names(directory):
        raise InputError(f"a reference machine {name!r} exists already")
    res = load(path)                        # refuses what is not a results file
    if not res.records:
        raise InputError(f"{path}: no records")
    dest = os.path.join(directory, f"{name}.json")
    shutil.copyfile(path, dest)
    entries = index(directory) + [{"name": name, "file": f"{name}.json", "about": about}]
    with open(os.path.join(directory, "index.json"), "w", encoding="utf-8") as f:
        json.dump(entries, f, indent=1, ensure_ascii=False)
        f.write("\n")
    if doc:
        with open(doc, "w", encoding="utf-8") as f:
            f.write(markdown(directory))
    return dest
