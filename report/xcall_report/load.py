"""Load and validate results files (docs/results-format.md, schema_version 1).

Everything that is wrong with an input file becomes an InputError with a one-line message;
the CLI turns it into exit status 2.
"""
import json
import math
import os
from dataclasses import dataclass, field

SCHEMA_VERSION = 1
STATS = ("mean", "p50", "p90", "p99", "max")          # always present
OPTIONAL_STATS = ("min", "stddev")
REQUIRED = ("bench", "case", "unit", "n") + STATS + ("repeat", "better")


class InputError(Exception):
    """A file that is not a usable results file."""


@dataclass
class Record:
    bench: str
    case: str
    unit: str
    n: int
    better: str                 # "lower" or "higher"
    repeat: int
    stats: dict                 # name -> float, STATS always, OPTIONAL_STATS when given
    cpus: list = field(default_factory=list)
    params: dict = field(default_factory=dict)
    counters: dict = field(default_factory=dict)

    @property
    def skipped(self):
        """Why the record has no figures, or None: see skip_reason."""
        return skip_reason(self.n, self.params)


def skip_reason(n, params):
    """Why a record has no figures: the reason xcall-bench gives in its "skipped" param (its
    statistics are 0, n is 0), or "no samples" for n = 0 alone; None for a measured record."""
    why = (params or {}).get("skipped")
    if why is None and n > 0:
        return None
    return str(why) if why else "no samples (n = 0)"


@dataclass
class Results:
    path: str
    label: str                  # short name for tables and legends
    host: dict
    meta: dict                  # tool, tool_version, created, command
    records: list
    warnings: list = field(default_factory=list)   # records skipped, one line each
    plans: list = field(default_factory=list)      # xcall-bench's per-subcommand plans (dicts)

    def benches(self):
        """Bench names in first-seen order."""
        return list(dict.fromkeys(r.bench for r in self.records))

    def cases(self, bench):
        """Case names of one bench in first-seen order."""
        return list(dict.fromkeys(r.case for r in self.records if r.bench == bench))

    def runs(self, bench, case):
        """The records (one per repeat) of one case, by repeat index."""
        return sorted((r for r in self.records if r.bench == bench and r.case == case),
                      key=lambda r: r.repeat)


def _number(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} is not a number: {value!r}")
    try:
        f = float(value)
    except OverflowError:
        raise InputError(f"{what} is too large for a number") from None
    if not math.isfinite(f):
        raise InputError(f"{what} is not finite: {value!r}")
    return f


def _record(raw, where):
    if not isinstance(raw, dict):
        raise InputError(f"{where} is not an object")
    missing = [k for k in REQUIRED if k not in raw]
    if missing:
        raise InputError(f"{where} lacks field(s) {', '.join(missing)}")
    for k in ("bench", "case", "unit"):
        if not isinstance(raw[k], str) or not raw[k]:
            raise InputError(f"{where}: {k} must be a non-empty string")
    where = f"{where} ({raw['bench']} {raw['case']})"
    if raw["better"] not in ("lower", "higher"):
        raise InputError(f"{where}: better must be \"lower\" or \"higher\", not {raw['better']!r}")
    for k in ("n", "repeat"):
        if isinstance(raw[k], bool) or not isinstance(raw[k], int) or raw[k] < 0:
            raise InputError(f"{where}: {k} must be a non-negative integer")
    empty = [k for k in STATS if raw[k] is None]
    if empty:       # xcall-bench writes null for a statistic it could not compute
        return None, f"{where}: no value for {', '.join(empty)}; record skipped"
    stats = {k: _number(raw[k], f"{where}: {k}") for k in STATS}
    for k in OPTIONAL_STATS:
        if raw.get(k) is not None:
            stats[k] = _number(raw[k], f"{where}: {k}")
    for k, kind in (("cpus", list), ("params", dict), ("counters", dict)):
        if k in raw and raw[k] is not None and not isinstance(raw[k], kind):
            raise InputError(f"{where}: {k} must be a{'n object' if kind is dict else ' list'}")
    return Record(bench=raw["bench"], case=raw["case"], unit=raw["unit"], n=raw["n"],
                  better=raw["better"], repeat=raw["repeat"], stats=stats,
                  cpus=raw.get("cpus") or [], params=raw.get("params") or {},
                  counters=raw.get("counters") or {}), None


def parse(doc, path="<input>"):
    """Validate a decoded JSON document and return Results."""
    name = os.path.basename(path)
    if not isinstance(doc, dict) or "results" not in doc or "schema_version" not in doc:
        raise InputError(f"{name}: not an xcall results file (no schema_version/results)")
    version = doc["schema_version"]
    if version != SCHEMA_VERSION:
        raise InputError(f"{name}: unknown schema_version {version!r} (this xcall-report reads "
                         f"{SCHEMA_VERSION})")
    if not isinstance(doc["results"], list):
        raise InputError(f"{name}: results is not a list")
    host = doc.get("host")
    if not isinstance(host, dict):
        raise InputError(f"{name}: host is missing or not an object")
    records, seen, warnings = [], set(), []
    for i, raw in enumerate(doc["results"]):
        rec, warning = _record(raw, f"{name}: results[{i}]")
        if rec is None:
            warnings.append(warning)
            continue
        key = (rec.bench, rec.case, rec.repeat)
        if key in seen:
            raise InputError(f"{name}: results[{i}] repeats bench {rec.bench} case {rec.case} "
                             f"repeat {rec.repeat}")
        seen.add(key)
        records.append(rec)
    if not records:
        raise InputError(f"{name}: no usable record in results" + (f" ({len(warnings)} "
                         "without values)" if warnings else ""))
    meta = {k: doc.get(k) for k in ("tool", "tool_version", "created", "command")}
    plans = doc.get("plans")        # optional: read for the report's notes, never required
    plans = [p for p in plans if isinstance(p, dict)] if isinstance(plans, list) else []
    return Results(path=path, label=name, host=host, meta=meta, records=records,
                   warnings=warnings, plans=plans)


def load(path):
    """Read and validate one results file; raise InputError on anything wrong."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    name = os.path.basename(path)
    if not data.strip():
        raise InputError(f"{name}: empty file, not a results file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name}: not a results file (not UTF-8 text)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        # An error at the very end of the input, or a string still open, means the file was cut.
        if e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string"):
            raise InputError(f"{name}: truncated JSON (input ends early, line {e.lineno})") \
                from None
        raise InputError(f"{name}: not valid JSON: {e.msg} at line {e.lineno} column "
                         f"{e.colno}") from None
    except RecursionError:
        raise InputError(f"{name}: not a results file (JSON nested too deep)") from None
    except ValueError as e:             # e.g. an integer longer than Python converts
        raise InputError(f"{name}: not a results file ({e})") from None
    try:
        # json accepts "\ud800"-style escapes that no UTF-8 output can hold
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{name}: not a results file (a string holds a lone surrogate)") \
            from None
    return parse(doc, path)


def load_all(paths):
    """Load several files; labels are made unique when base names collide."""
    out = [load(p) for p in paths]
    names = [r.label for r in out]
    for r in out:
        if names.count(r.label) > 1:
            r.label = r.path
    seen = {}
    for r in out:                       # the same file given twice
        seen[r.label] = seen.get(r.label, 0) + 1
        if seen[r.label] > 1:
            r.label = f"{r.label} ({seen[r.label]})"
    return out
