"""The five figures a reader came for, each with one sentence computed from the results.

1. the cache-line round trip (pingpong's limit case), the yardstick;
2. libxcall's waiting call to a polling worker, and its paired ratio to that limit;
3. a kernel IPI (the `kernel` bench), and libxcall's call beside it;
4. the cheapest and dearest way to wake a thread on another CPU (the `wake` bench);
5. the seeds' headline ratios: storm, matrix, bringup.

Every number comes from the file; a family the file lacks is said to be absent, with the
command that measures it. A figure built on a capped or disturbed record carries its marks.
"""
import math
from dataclasses import dataclass, field

from . import cases as casenames
from . import marks as marksmod
from .plots import human
from .stats import aggregate, mean

WAKE_STATE_ORDER = ("parked", "hot", "busy")
WAKE_STATE_WORDS = {"parked": "after it was left idle a while (parked)",
                    "hot": "back to back (hot)",
                    "busy": "while its CPU runs another thread (busy)"}


@dataclass
class Figure:
    key: str                # limit, call, kernel, wake, seeds
    title: str
    value: str              # the figure itself, "" when absent
    sentences: list         # one sentence; the seeds have one per seed
    present: bool = True
    marks: dict = field(default_factory=dict)   # of the records the figure is built on
    sources: list = field(default_factory=list)  # "bench/case (stat)" of each figure shown


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _x(r):
    """A ratio as written in the tables: 2.53×."""
    return f"{r:.3g}×" if r < 10 else f"{r:.0f}×"


class _Reader:
    """The records of one Results by bench and case, averaged over repeats, noting the marks
    of every record a figure reads."""

    def __init__(self, res):
        self.res = res
        self.benches = set(res.benches())
        self.used = {}

    def has(self, bench):
        return bench in self.benches

    def case(self, bench, case):
        """{stat: value} averaged over repeats, or None when absent or not measured."""
        runs = self.res.runs(bench, case)
        if not runs or runs[0].skipped is not None:
            return None
        for k, v in marksmod.of_runs(runs).items():
            self.used.setdefault(k, v)
        return aggregate(runs)

    def measured(self, bench, case):
        """Whether a case has figures, without counting its marks."""
        runs = self.res.runs(bench, case)
        return bool(runs) and runs[0].skipped is None

    def param(self, bench, case, key):
        """A numeric param averaged over the repeats that have it, or None."""
        vals = [r.params[key] for r in self.res.runs(bench, case) if _num(r.params.get(key))]
        return mean(vals) if vals else None

    def unit(self, bench, case):
        runs = self.res.runs(bench, case)
        return runs[0].unit if runs else "ns"

    def skipped(self, bench, case):
        runs = self.res.runs(bench, case)
        return runs[0].skipped if runs else None

    def cpus(self, bench, case):
        runs = self.res.runs(bench, case)
        return runs[0].cpus if runs else []

    def take_marks(self):
        out, self.used = self.used, {}
        return out


def _bench_skipped(r, bench):
    """xcall-bench's reason when no record of a bench was measured (a 1-CPU run writes one
    record "all": "needs 2 CPUs"), else None."""
    runs = [x for x in r.res.records if x.bench == bench]
    if runs and all(x.skipped is not None for x in runs):
        return runs[0].skipped
    return None


def _absent(key, title, bench, what):
    return Figure(key, title, "", [f"Not in this file: it has no `{bench}` records; "
                                   f"`xcall-bench {bench}` measures {what}."], present=False)


# the line phase, from the limit's own round trip (docs/bench.md): named by the number
# alone; a place is said only where the topology shows one
PHASES = (("near", 35.0, "under 35 ns"), ("mid", 120.0, "35-120 ns"),
          ("far", math.inf, "120 ns or more"))
# the heatmap's topology class of a pair, in words
PLACES = {"smt": "two threads of one core", "same-llc": "one last-level cache",
          "same-node": "one NUMA node, different last-level caches",
          "cross-node": "different NUMA nodes (across sockets or dies)"}


def phase_of(ns):
    """(name, range in words) of a round trip in ns."""
    return next((name, words) for name, top, words in PHASES if ns < top)


def _ns(v, unit):
    return v * {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}.get(unit, 1.0)


def _limit_case(r):
    cases = r.res.cases("pingpong")
    if "cacheline" in cases:
        return "cacheline"
    return next((c for c in cases if casenames.is_limit(c) and "/" not in c), None)


def started(res, bench):
    """Seconds into the run at which a subcommand started, from the plans' times in their
    order; None when the plans do not say."""
    t = 0.0
    for p in res.plans:
        if p.get("bench") == bench:
            return t
        if not _num(p.get("wall_s")):
            return None
        t += p["wall_s"]
    return None


def _heatmap_pair(r, a, b):
    """([p50 of a->b and b->a cache-line cells], topology class) from the heatmap, if any."""
    vals, cls = [], None
    for case in r.res.cases("heatmap"):
        runs = r.res.runs("heatmap", case)
        c = casenames.heatmap_cell(case, runs[0].params)
        if c is None or runs[0].skipped is not None or not casenames.is_limit(c[0]):
            continue
        if {c[1], c[2]} == {a, b}:
            vals.append(_ns(aggregate(runs)["p50"], runs[0].unit))
            cls = cls or runs[0].params.get("class")
    return vals, cls


def limit(r):
    title = "Cache-line round trip"
    if not r.has("pingpong"):
        return _absent("limit", title, "pingpong", "the cache-line round trip")
    case = _limit_case(r)
    s = r.case("pingpong", case) if case else None
    if s is None:
        why = (r.skipped("pingpong", case) if case else None) or \
            _bench_skipped(r, "pingpong") or "its run has no cacheline case"
        return Figure("limit", title, "", [f"Not measured: {why}."], present=False)
    unit = r.unit("pingpong", case)
    cpus = r.cpus("pingpong", case)
    between = f"CPUs {cpus[0]} and {cpus[1]}" if len(cpus) >= 2 else "two CPUs"
    method = r.res.runs("pingpong", case)[0].params.get("method")
    how = f", {method.upper() if method == 'cas' else method}, the cheaper of its two ways" \
        if isinstance(method, str) and method else ""
    text = (f"One cache line passed back and forth between {between} takes {human(s['p50'], unit)}"
            f" a round trip (p50{how}): no call between CPUs can be faster, so the figures "
            "below are measured against it.")
    sentences = [text]
    marks = r.take_marks()
    ns = _ns(s["p50"], unit)
    if "disturbed" in marks:
        sentences.append("No line phase is named: other work ran on these CPUs while the "
                         "limit was measured, so its number says nothing about where the line "
                         "lies.")
    else:
        name, words = phase_of(ns)
        sentences.append(f"By its own number that is the {name} line phase ({words}): ratios "
                         "to the limit compare only with runs of the same phase.")
        if len(cpus) >= 2:
            vals, cls = _heatmap_pair(r, cpus[0], cpus[1])
            if cls in PLACES:
                where = f"The guest's topology puts {between} in {PLACES[cls]}" \
                    if r.res.host.get("virtualised") else \
                    f"The topology puts {between} in {PLACES[cls]}"
                if r.res.host.get("virtualised"):
                    where += (" (in a virtual machine it does not show where the host runs "
                              "the vCPUs)")
                sentences.append(where + ".")
            other = sorted({phase_of(v)[0] for v in vals} - {name})
            if vals and other:
                lo, hi = min(vals), max(vals)
                span = human(lo, "ns") if lo == hi else f"{human(lo, 'ns')} to {human(hi, 'ns')}"
                hm, pp = started(r.res, "heatmap"), started(r.res, "pingpong")
                when = f", {hm:.0f} s into the run (this limit: {pp:.0f} s into it)" \
                    if hm is not None and pp is not None else ""
                sentences.append(
                    f"The heatmap measured the same pair at {span} ({', '.join(other)} phase)"
                    f"{when}: the line's cost moved between the two runs.")
    return Figure("limit", title, human(s["p50"], unit), sentences, marks=marks,
                  sources=[f"pingpong/{case} (p50)"])


def call(r):
    title = "libxcall's waiting call"
    if not r.has("pingpong"):
        return _absent("call", title, "pingpong", "libxcall's waiting call and its ratio")
    s = r.case("pingpong", "libxcall-polling")
    if s is None:
        why = r.skipped("pingpong", "libxcall-polling") or _bench_skipped(r, "pingpong") or \
            "its run has no libxcall-polling case"
        return Figure("call", title, "", [f"Not measured: {why}."], present=False)
    unit = r.unit("pingpong", "libxcall-polling")
    cpus = r.cpus("pingpong", "libxcall-polling")
    route = f"from CPU {cpus[0]} to a polling worker on CPU {cpus[1]}" if len(cpus) >= 2 \
        else "to a polling worker on another CPU"
    p = {k: r.param("pingpong", "libxcall-polling", f"paired_{k}")
         for k in ("ratio_p10", "ratio_p50", "ratio_p90", "handoff_ratio_p50", "code_ratio_p50")}
    value = human(s["p50"], unit)
    split = ""
    if p["ratio_p50"] is not None:
        ratio = p["ratio_p50"]
        how = "the limit measured in blocks alternating with the calls'"
        if p["ratio_p10"] is not None and p["ratio_p90"] is not None:
            how += f", {_x(p['ratio_p10'])} to {_x(p['ratio_p90'])} over the blocks"
        if p["handoff_ratio_p50"] is not None and p["code_ratio_p50"] is not None:
            split = (f"; the slot's bare handoff (the same exchange of two cache lines with "
                     f"no library code) is {_x(p['handoff_ratio_p50'])} the limit and "
                     f"libxcall's code {_x(p['code_ratio_p50'])} that handoff")
    else:
        case = _limit_case(r)
        lim = r.case("pingpong", case) if case else None
        ratio = r.param("pingpong", "libxcall-polling", "ratio_to_limit")
        if ratio is None and lim is not None and lim["p50"] > 0:
            ratio = s["p50"] / lim["p50"]
        how = "the limit measured before it, not paired"
    marks = r.take_marks()
    tag = f" [{marksmod.short(marks)}]" if marks else ""
    src = ["pingpong/libxcall-polling (p50" + (", paired ratio)" if p["ratio_p50"] is not None
                                               else ")")]
    if ratio is None:
        text = (f"A waiting xc_call_single {route} returns in {value} (p50); there is no "
                "cache-line case in this file to set it against.")
        return Figure("call", title, value, [text], marks=marks, sources=src)
    text = (f"A waiting xc_call_single {route} returns in {value} (p50), {_x(ratio)}{tag} the "
            f"cache-line round trip ({how}){split}.")
    return Figure("call", title, f"{value} · {_x(ratio)} the limit", [text], marks=marks,
                  sources=src)


def kernel(r):
    """The kernel IPI: the compare probe's when it ran (one number beside libxcall's call,
    measured alternating with it), else the ipi probe's; the other probe's figure and the
    pingpong card's call are said with why they differ. A record is an IPI's cost only when
    its target counted about one function-call interrupt a call (marks.IPI_PROVEN): one that
    did not is never shown as one, and the card says what happened instead."""
    title = "A kernel IPI"
    if not r.has("kernel"):
        return _absent("kernel", title, "kernel", "the host kernel's IPIs")
    measured = [c for c in ("compare/kernel-ipi", "ipi/normal") if r.measured("kernel", c)]
    if not measured:
        why = r.skipped("kernel", "ipi/normal") or r.skipped("kernel", "compare") or \
            "its run has no ipi probe"
        return Figure("kernel", title, "", [f"Not measured: {why}."], present=False)
    unproven = {c: marksmod.of_runs(r.res.runs("kernel", c)).get(marksmod.NO_IPI)
                for c in measured}
    proven = [c for c in measured if not unproven[c]]
    if not proven:
        case = measured[0]
        sentences = [f"No IPI figure: kernel/{case} is not an IPI's cost. {unproven[case]}."]
        if len(measured) > 1:
            cal = r.param("kernel", measured[1], "CAL_per_op_target")
            sentences.append(f"The ipi probe's own run (kernel/{measured[1]}) proves none either"
                             + (f" ({cal:.2f} function-call interrupts a call)." if cal is not None
                                else "."))
        sentences.append("Its time is in the kernel table, marked no IPI; xcall-bench kernel "
                         "compare on a quieter machine measures the IPI.")
        return Figure("kernel", title, "no IPI sent", sentences, present=False,
                      marks={marksmod.NO_IPI: unproven[case]},
                      sources=[f"kernel/{c} (function-call interrupts)" for c in measured])
    case = proven[0]
    paired = case == "compare/kernel-ipi" and r.measured("kernel", "compare/libxcall-polling")
    s = r.case("kernel", case)
    unit = r.unit("kernel", case)
    target = r.param("kernel", case, "target")
    cal = r.param("kernel", case, "CAL_per_op_target")
    where = f"CPU {target:.0f}" if target is not None else "another CPU"
    proof = f", {cal:.2f} function-call interrupts (CAL) on the target per call" \
        if cal is not None else ""
    text = (f"The kernel's smp_call_function_single (through membarrier) to {where} takes "
            f"{human(s['p50'], unit)} (p50{proof})")
    sources = [f"kernel/{case} (p50)"]
    sentences = []
    if paired:
        lx = r.case("kernel", "compare/libxcall-polling")
        marks = r.take_marks()
        tag = f" [{marksmod.short(marks)}]" if marks else ""
        sources.append("kernel/compare/libxcall-polling (p50)")
        text += (f"; libxcall's waiting call to a polling worker, measured alternating with it "
                 f"on the same CPUs, takes {human(lx['p50'], unit)}: the kernel IPI costs "
                 f"{_x(s['p50'] / lx['p50']) if lx['p50'] > 0 else 'n/a'}{tag} as much")
        sentences.append(text + ".")
        other = []
        if r.measured("kernel", "ipi/normal"):
            n = r.res.runs("kernel", "ipi/normal")
            if unproven.get("ipi/normal"):
                other.append("the ipi probe's own run sent no IPI to time (kernel/ipi/normal: "
                             f"{unproven['ipi/normal']})")
            else:
                other.append(f"the ipi probe's own run gave {human(aggregate(n)['p50'], n[0].unit)}"
                             " (kernel/ipi/normal)")
        if r.measured("pingpong", "libxcall-polling"):
            pp = r.res.runs("pingpong", "libxcall-polling")
            other.append(f"the call card's {human(aggregate(pp)['p50'], pp[0].unit)} is "
                         "pingpong's run of the same call (pingpong/libxcall-polling)")
        if other:
            sentences.append("Other runs of these quantities: " + "; ".join(other) + ". Each "
                             "probe is a separate run, seconds to minutes apart, and on a "
                             "shared or virtual machine the cost of a line or an interrupt "
                             "moves between runs: ratios are taken only within one run.")
    else:
        marks = r.take_marks()
        sentences.append(text + ".")
        if unproven.get("compare/kernel-ipi"):
            sentences.append("The compare probe's run, which sets it beside libxcall's call, sent "
                             f"no IPI to time (kernel/compare/kernel-ipi: "
                             f"{unproven['compare/kernel-ipi']}).")
    return Figure("kernel", title, human(s["p50"], unit), sentences, marks=marks,
                  sources=sources)


def _wake_cells(r):
    """{state: [(p50, mechanism)]} of the wake latency records measured; absent [(mech, why)]."""
    by_state, absent = {}, []
    for case in r.res.cases("wake"):
        runs = r.res.runs("wake", case)
        w = casenames.wake_cell(case, runs[0].params)
        if w is None:
            continue
        mech, state, measure = w
        if runs[0].skipped is not None:
            if state is None:
                absent.append((mech, runs[0].skipped))
            continue
        if measure == casenames.WAKE_LATENCY:
            by_state.setdefault(state, []).append((aggregate(runs)["p50"], mech, case))
    return by_state, absent


def wake(r):
    title = "Cheapest and dearest wake"
    if not r.has("wake"):
        return _absent("wake", title, "wake", "every way to wake a thread on another CPU")
    by_state, absent = _wake_cells(r)
    state = next((st for st in WAKE_STATE_ORDER if len(by_state.get(st, [])) >= 2),
                 next((st for st, v in by_state.items() if len(v) >= 2), None))
    if state is None:
        why = _bench_skipped(r, "wake") or ("fewer than two mechanisms have a wake latency "
                                              "record in any one state")
        return Figure("wake", title, "", [f"Not measured: {why}."], present=False)
    cells = sorted(by_state[state])
    (lo, cheap, lo_case), (hi, dear, hi_case) = cells[0], cells[-1]
    r.case("wake", lo_case), r.case("wake", hi_case)          # their marks
    unit = r.unit("wake", lo_case)
    gone = f"; {', '.join(m for m, _ in absent)} not available here" if absent else ""
    desc = WAKE_STATE_WORDS.get(state, f"in state {state}")
    text = (f"Waking a thread on another CPU {desc} takes from {human(lo, unit)} with {cheap} "
            f"to {human(hi, unit)} with {dear} (wake latency p50, {len(cells)} mechanisms"
            f"{gone}).")
    return Figure("wake", title, f"{human(lo, unit)} to {human(hi, unit)}", [text],
                  marks=r.take_marks(), sources=[f"wake/{lo_case} (p50)", f"wake/{hi_case} (p50)"])


def _storm(r):
    cases = [c for c in r.res.cases("storm") if r.measured("storm", c)]
    if len(cases) < 2:
        return None
    base = casenames.baseline(cases)
    best = "ablate-none" if "ablate-none" in cases else cases[-1]
    b, n = r.case("storm", base), r.case("storm", best)
    if best == base or b["mean"] <= 0:
        return None
    ratio = n["mean"] / b["mean"]
    runs = r.res.runs("storm", best)
    better = runs[0].better
    imp = (1 - ratio) * 100 if better == "lower" else (ratio - 1) * 100
    what = "with every optimisation on" if best == "ablate-none" else best
    against = f"with {base[len('ablate-'):]} ablated" if base.startswith("ablate-") else base
    marks = r.take_marks()
    tag = f" [{marksmod.short(marks)}]" if marks else ""
    unit = runs[0].unit
    if better == "lower" and 0 < ratio < 1:
        how = f"is {_x(1 / ratio)}{tag} faster than"
    else:
        how = f"takes {_x(ratio)}{tag} the time of"
    short = f"{_x(1 / ratio)} faster" if better == "lower" and 0 < ratio < 1 else \
        f"{_x(ratio)} the time"
    return (f"{short} with every optimisation on",
            f"storm: the call storm {what} {how} {against} ({human(n['mean'], unit)} against "
            f"{human(b['mean'], unit)}; {ratio:.2f} [{imp:.2f}] as the seed writes it).", marks)


def _matrix(r):
    best = {}
    for case in r.res.cases("matrix"):
        runs = r.res.runs("matrix", case)
        p = casenames.matrix_point(case, runs[0].params)
        if p is None or p[2] != casenames.SPEEDUP or runs[0].skipped is not None:
            continue
        op, callers, _ = p
        if op not in best or callers > best[op][0]:
            best[op] = (callers, case)
    if not best:
        return None
    speed = {op: r.case("matrix", case)["mean"] for op, (_, case) in best.items()}
    marks = r.take_marks()
    tag = f" [{marksmod.short(marks)}]" if marks else ""
    callers = sorted({c for c, _ in best.values()})
    at = f"{callers[0]} calling CPU{'s' if callers[0] != 1 else ''}" if len(callers) == 1 \
        else "the most calling CPUs of each operation"
    each = ", ".join(f"{op} {_x(v)}" for op, v in speed.items())
    lo, hi = min(speed.values()), max(speed.values())
    span = _x(lo) if lo == hi else f"{_x(lo)} to {_x(hi)}"
    return (f"libxcall {span} the 2008 design's speed", f"matrix: at {at} libxcall's speedup over the 2008 design (2008 time / "
            f"libxcall time, above 1 when libxcall is faster) is {span}{tag} ({each}).", marks)


def _bringup(r):
    if "speedup" not in r.res.cases("bringup"):
        return None
    s = r.case("bringup", "speedup")
    if s is None:
        return None
    lim = r.param("bringup", "speedup", "limit")
    marks = r.take_marks()
    tag = f" [{marksmod.short(marks)}]" if marks else ""
    serial = r.res.runs("bringup", "serial")
    cpus = f" of {len(serial[0].cpus)} CPUs" if serial and serial[0].cpus else ""
    limit = f" (the limit, every CPU's init at once, is {_x(lim)})" if lim else ""
    sp = s["mean"]
    how = f"{_x(sp)}{tag} faster" if sp >= 1 else f"{_x(1 / sp)}{tag} slower" if sp > 0 \
        else f"{_x(sp)}{tag} as fast"
    return (f"parallel {how.replace(tag, '')}", f"bringup: bringing the workers{cpus} up in parallel is {how} than "
            f"one after another{limit}.", marks)


def seeds(r):
    """The three headline ratios; a sentence for each seed, present or not."""
    parts, values, marks = [], [], {}
    for bench, fn, what in (("storm", _storm, "the ipistorm runtime, ablated and not"),
                            ("matrix", _matrix, "calls against the 2008 design"),
                            ("bringup", _bringup, "serial against parallel bringup")):
        got = fn(r) if r.has(bench) else None
        if got is None:
            r.take_marks()
            parts.append(f"{bench}: not in this file (`xcall-bench {bench}` measures {what})."
                         if not r.has(bench) else f"{bench}: not measured: "
                         f"{_bench_skipped(r, bench)}." if _bench_skipped(r, bench) else
                         f"{bench}: its records give no headline ratio (no baseline and "
                         "ablate-none, speedup records).")
            continue
        value, text, m = got
        values.append(f"{bench}: {value}" + (f" [{marksmod.short(m)}]" if m else ""))
        parts.append(text)
        for k, v in m.items():
            marks.setdefault(k, v)
    if values:
        parts.insert(0, "The seeds are the five kernel patches xcall starts from; each ratio is "
                     "taken within this run, between two cases measured the same way.")
    return Figure("seeds", "The seeds' headline ratios", "\n".join(values), parts,
                  present=bool(values), marks=marks,
                  sources=[f"{b} records" for b in ("storm", "matrix", "bringup") if r.has(b)])


def lead(res, figs):
    """One sentence for the top of the page: what was measured, and the main result."""
    fams = res.benches()
    r = _Reader(res)
    skipped = [b for b in fams if _bench_skipped(r, b)]
    by = {f.key: f for f in figs}
    h = res.host
    where = str(h.get("cpu_model") or "this machine")
    used = sorted({c for x in res.records for c in x.cpus if isinstance(c, int)})
    if used:
        where += f", {len(used)} CPU{'s' if len(used) != 1 else ''}"
    if _num(h.get("cpus_online")) and used and len(used) != h["cpus_online"]:
        where += f" of its {h['cpus_online']}"
    n = len(fams) - len(skipped)
    measured = f"{n} benchmark famil{'ies' if n != 1 else 'y'} on {where}"
    if skipped:
        why = _bench_skipped(r, skipped[0])
        measured += f" ({len(skipped)} more skipped: {why})"
    call, lim, kern = by.get("call"), by.get("limit"), by.get("kernel")
    if call is not None and call.present:
        main = ("libxcall's waiting call takes "
                + call.value.replace(' · ', ', ').replace('the limit', 'the cache-line round trip'))
        if call.marks:
            main += f" [{marksmod.short(call.marks)}]"
        if lim is not None and lim.present and "·" not in call.value:
            main += f" (the cache-line limit: {lim.value})"
        if kern is not None and kern.present:
            main += f"; a kernel IPI takes {kern.value}" + \
                (f" [{marksmod.short(kern.marks)}]" if kern.marks else "")
    elif lim is not None and lim.present:
        main = f"the cache-line round trip takes {lim.value}"
    else:
        main = "no cross-CPU round trip was measured (it needs 2 CPUs or more)"
    return f"Measured: {measured}. Main result: {main}."


def figures(res):
    """The five figures of one Results, in reading order."""
    r = _Reader(res)
    return [limit(r), call(r), kernel(r), wake(r), seeds(r)]


def when(created):
    """"2026-11-24 18:57 UTC" from xcall-bench's ISO 8601 time; other text as it is."""
    if not isinstance(created, str):
        return ""
    if len(created) >= 16 and created[10:11] == "T" and created.endswith("Z"):
        return f"{created[:10]} {created[11:16]} UTC"
    return created


def machine_card(res):
    """[(label, text)] describing the machine and the run, from the results' host and plans."""
    h, out = res.host, []
    cpu = str(h.get("cpu_model") or "unknown CPU")
    if _num(h.get("cpus_online")):
        cpu += f", {h['cpus_online']} CPUs online"
        if _num(h.get("cores")):
            cpu += f" ({h['cores']} cores)"
    out.append(("CPU", cpu))
    if h.get("kernel"):
        out.append(("Kernel", f"Linux {h['kernel']}"))
    if h.get("virtualised") is True:
        out.append(("Machine", f"virtual machine ({h.get('hypervisor') or 'unknown hypervisor'})"
                    + (", CPUs emulated" if h.get("emulated") else "")))
    elif h.get("virtualised") is False:
        out.append(("Machine", "bare metal"))
    idle = h.get("idle_driver")
    if idle:
        gov = h.get("idle_governor")
        out.append(("Idle", f"{idle}" + (f" (governor {gov})" if gov and gov != idle else "")))
    if h.get("timer"):
        floor = h.get("timer_floor_ns")
        out.append(("Timer", f"{h['timer']}" + (f", {floor:g} ns floor subtracted"
                                                if _num(floor) else "")))
    load = []
    if _num(h.get("steal_pct")) and h["steal_pct"] >= 0:
        load.append(f"{h['steal_pct']:.1f}% stolen by the hypervisor")
    if _num(h.get("others_pct")):
        load.append(f"{h['others_pct']:.0f}% taken by other tasks")
    if _num(h.get("cpu_quota")) and h["cpu_quota"] > 0:
        load.append(f"cgroup quota {h['cpu_quota']:g} CPUs")
    if load:
        out.append(("Load", ", ".join(load) + " (the most over any subcommand)"))
    walls = [p["wall_s"] for p in res.plans if _num(p.get("wall_s"))]
    run = when(res.meta.get("created"))
    if walls:
        run += f"{', ' if run else ''}{len(walls)} subcommand{'s' if len(walls) != 1 else ''} " \
            f"in {sum(walls):.0f} s"
    if run:
        out.append(("Run", run))
    out += marksmod.plan_summary(res)
    cmd = res.meta.get("command")
    if isinstance(cmd, list) and cmd:
        out.append(("Command", " ".join(map(str, cmd))))
    return out
