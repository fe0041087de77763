"""The one place that knows how xcall-bench names its cases.

A case name is a '/'-separated path of parts; a part is a tag (`call-single-nowait`,
`libxcall`, `limit`), a key=value pair (`callers=2`, `from=0`), a number (`2`) or a CPU pair
(`0->1`). A record's params, when present, win over what the name says. Each helper returns
None when a case does not fit, so the plots fall back to the generic chart instead of failing.
"""
from dataclasses import dataclass

MATRIX_DESIGNS = ("libxcall", "pre2008", "2008")      # new design first
NEW_DESIGN = "libxcall"
SPEEDUP = "speedup"                                     # matrix: old / new, a ratio
BRINGUP_MODES = ("serial", "parallel")
LIMIT_WORDS = ("cacheline", "limit")
BASELINE_WORDS = ("baseline", "vanilla", "off", "plain")
HEATMAP_CLASSES = ("smt", "same-llc", "same-node", "cross-node")      # closest first
WAKE_STATES = ("hot", "parked", "busy")                 # the sleeper's, in xcall-bench's order
WAKE_ROUND_TRIP, WAKE_LATENCY = "round trip", "wake"


@dataclass
class CaseName:
    tags: list          # parts that are words
    kv: dict            # parts with '=', value kept as text
    numbers: list       # parts that are integers
    pairs: list         # parts like 0->1, as (0, 1)

    def int(self, key):
        try:
            return int(self.kv[key])
        except (KeyError, ValueError):
            return None


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def parse(name):
    tags, kv, numbers, pairs = [], {}, [], []
    for part in name.split("/"):
        src, arrow, dst = part.partition("->")
        if "=" in part:
            k, _, v = part.partition("=")
            kv[k] = v
        elif _int(part) is not None:
            numbers.append(int(part))
        elif arrow and _int(src) is not None and _int(dst) is not None:
            pairs.append((int(src), int(dst)))
        elif part:
            tags.append(part)
    return CaseName(tags, kv, numbers, pairs)


def matrix_point(name, params=None):
    """(op, callers, design) of a matrix case: `call-single-nowait/libxcall/2`,
    `call-single-nowait/callers=2/libxcall` or params {mode, impl, callers}."""
    params = params or {}
    # a design that reads as a number (2008) is a design, not a count of callers
    named = next((p for p in name.split("/") if p in MATRIX_DESIGNS), None)
    c = parse("/".join(p for p in name.split("/") if p != named))
    if named:
        c.tags.append(named)
    callers = _int(params.get("callers"))
    if callers is None:
        callers = next((c.int(k) for k in ("callers", "cpus", "n") if c.int(k) is not None),
                       c.numbers[-1] if c.numbers else None)
    design = params.get("impl") if isinstance(params.get("impl"), str) else None
    if design is None:
        design = next((t for t in c.tags if t in MATRIX_DESIGNS + (SPEEDUP,)),
                      c.tags[-1] if len(c.tags) >= 2 else None)
    if callers is None or design is None:
        return None
    if SPEEDUP in c.tags:
        design = SPEEDUP
    op = params.get("mode") if isinstance(params.get("mode"), str) else None
    op = op or "/".join(t for t in c.tags if t != design) or "calls"
    return op, callers, design


def heatmap_cell(name, params=None):
    """(group, from, to): `libxcall/0->1`, `from=0/to=1`, `limit/from=0/to=1`, or params
    {from, to}; the group is the rest of the name ("" when nothing is left)."""
    params = params or {}
    c = parse(name)
    src, dst = _int(params.get("from")), _int(params.get("to"))
    if src is None or dst is None:
        src, dst = c.int("from"), c.int("to")
    if (src is None or dst is None) and c.pairs:
        src, dst = c.pairs[0]
    if src is None or dst is None:
        return None
    return "/".join(c.tags), src, dst


def heatmap_summary(name, params=None):
    """(group, class) of a heatmap summary row, `summary/libxcall/same-llc`: the spread of the
    pairs' p50 in one topology class; None for a cell or anything else."""
    c = parse(name)
    if len(c.tags) < 3 or c.tags[0] != "summary" or c.pairs or c.numbers or c.kv:
        return None
    cls = (params or {}).get("class")
    return "/".join(c.tags[1:-1]), cls if isinstance(cls, str) else c.tags[-1]


def wake_cell(name, params=None):
    """(mechanism, state, measure) of a wake case: `futex/parked` is the round trip,
    `futex/parked/wake` the wake latency, `uintr` a whole mechanism (state None); params
    {mechanism, state} win."""
    params = params or {}
    parts = name.split("/")
    if not all(parts) or len(parts) > 3 or (len(parts) == 3 and parts[2] != WAKE_LATENCY):
        return None
    mech = params.get("mechanism") if isinstance(params.get("mechanism"), str) else parts[0]
    state = params.get("state") if isinstance(params.get("state"), str) else \
        (parts[1] if len(parts) > 1 else None)
    return mech, state, WAKE_LATENCY if len(parts) == 3 else WAKE_ROUND_TRIP


def bringup_mode(name):
    """`parallel/cpus=8` -> ("parallel", "cpus=8"); the rest labels a group of bars."""
    c = parse(name)
    mode = next((t for t in c.tags if t in BRINGUP_MODES), None)
    if mode is None:
        mode = next((m for m in BRINGUP_MODES if m in name), None)
        if mode is None:
            return None
        rest = name.replace(mode, "").strip("/-_")
    else:
        rest = "/".join([t for t in c.tags if t != mode] + [f"{k}={v}" for k, v in c.kv.items()])
    return mode, rest


def is_limit(name):
    """The physical-limit case of pingpong and kernel (a cache line bounced between CPUs)."""
    low = name.lower()
    return any(w in low for w in LIMIT_WORDS)


def baseline(names):
    """The case a storm comparison is normalised to: one named like a baseline, else the first."""
    for n in names:
        if any(w in parse(n).tags for w in BASELINE_WORDS):
            return n
    return names[0]
