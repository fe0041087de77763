"""The one place that knows how xcall-bench names its cases.

A case name is a '/'-separated path of parts; a part is either a tag (`call-single-nowait`,
`libxcall`, `limit`) or a key=value pair (`callers=2`, `from=0`). Each helper returns None when a
name does not fit, so the plots fall back to the generic chart instead of failing.
"""
from dataclasses import dataclass

MATRIX_DESIGNS = ("libxcall", "pre2008")      # new design first
NEW_DESIGN = "libxcall"
BRINGUP_MODES = ("serial", "parallel")
LIMIT_WORDS = ("cacheline", "limit")
BASELINE_WORDS = ("baseline", "vanilla", "off", "plain")


@dataclass
class CaseName:
    tags: list          # parts without '='
    kv: dict            # parts with '=', value kept as text

    def int(self, key):
        try:
            return int(self.kv[key])
        except (KeyError, ValueError):
            return None


def parse(name):
    tags, kv = [], {}
    for part in name.split("/"):
        if "=" in part:
            k, _, v = part.partition("=")
            kv[k] = v
        elif part:
            tags.append(part)
    return CaseName(tags, kv)


def matrix_point(name):
    """`call-single-nowait/callers=2/libxcall` -> ("call-single-nowait", 2, "libxcall")."""
    c = parse(name)
    callers = next((c.int(k) for k in ("callers", "cpus", "n") if c.int(k) is not None), None)
    if callers is None or len(c.tags) < 2:
        return None
    return "/".join(c.tags[:-1]), callers, c.tags[-1]


def heatmap_cell(name):
    """`from=0/to=1` -> ("", 0, 1); `limit/from=0/to=1` -> ("limit", 0, 1)."""
    c = parse(name)
    src, dst = c.int("from"), c.int("to")
    if src is None or dst is None:
        return None
    return "/".join(c.tags), src, dst


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
