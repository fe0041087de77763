"""The words of the report's first screen, each defined once on the page (#glossary) and
linked where the summary first uses it. docs/glossary.md has the project's whole glossary."""
import re

# (term as written in the summary, anchor, definition); longer terms first where they overlap
TERMS = [
    ("cache-line round trip", "limit",
     "one 64-byte line of memory written by one CPU, then by the other, and back: the least "
     "any signal between two CPUs can cost, so every call is measured against it (the limit)"),
    ("line phase", "phase",
     "where the two CPUs' shared line lies, read from the limit's own time: near (under "
     "35 ns: one core or a shared L2), mid (35-120 ns: one last-level cache), far (120 ns or "
     "more). In a VM the host can move vCPUs between phases within minutes"),
    ("p50", "p50", "the median: half of the operations took less"),
    ("p99", "p99", "99% of the operations took less; the tail"),
    ("polling worker", "polling",
     "a libxcall worker that spins looking at its queue instead of sleeping: a call needs no "
     "wakeup, at the cost of the CPU"),
    ("xc_call_single", "call-single",
     "libxcall's call of a function on one CPU; a waiting call returns after it ran there"),
    ("blocks alternating", "paired",
     "paired timing: the call and the limit measured in short blocks taking turns, so that "
     "both see the same machine; their ratio is taken per block"),
    ("bare handoff", "handoff",
     "the slot's exchange of a request and its completion through two cache lines, with "
     "none of libxcall's code around it"),
    ("slot", "slot",
     "room for one waiting call in the cache line the worker polls, so the call and its "
     "completion travel in that line"),
    ("smp_call_function_single", "smp-call",
     "the Linux kernel's call of a function on another CPU, delivered by an IPI"),
    ("membarrier", "membarrier",
     "a system call that makes other CPUs running the process pass a memory barrier; with "
     "FLAG_CPU it is one smp_call_function_single to that CPU"),
    ("function-call interrupts", "cal",
     "CAL in /proc/interrupts: IPIs that run a function on the CPU (about 1 per call means "
     "a real IPI each time)"),
    ("IPI", "ipi", "inter-processor interrupt: one CPU interrupting another"),
    ("wake latency", "wake",
     "from the waker's call until the sleeping thread runs on its CPU"),
    ("parked", "parked", "the sleeper left idle a while before each wake, so its CPU may halt"),
    ("seeds", "seeds",
     "the five Linux kernel patches about IPIs that xcall starts from (000 to 004); storm, "
     "idle, matrix, ipi and bringup reproduce their benchmarks"),
    ("ablated", "ablated", "switched off to measure what it buys (XCALL_ABLATE)"),
    ("elide+notify", "elide",
     "kick elision (no wakeup sent to a polling worker) and calls run inside the idle loop, "
     "the two optimisations of seeds 001 and 000"),
    ("2008 design", "design-2008",
     "smp_call_function before 2008: one global lock and one shared call descriptor (seed "
     "002's 'vanilla')"),
    ("disturbed", "disturbed",
     "other work ran on the benchmarked CPUs while a case ran: its figures are not the "
     "machine's"),
    ("capped", "capped",
     "stopped at --case-limit before its count: fewer operations than asked"),
    ("no IPI", "no-ipi",
     "a kernel IPI record whose target did not count about one function-call interrupt a "
     "call (0.9-1.1): the kernel sent none where no thread of the process ran there, so its "
     "time is not an IPI's cost"),
    ("stolen by the hypervisor", "steal",
     "steal time: the hypervisor ran something else on the vCPU's real CPU"),
    ("floor subtracted", "floor",
     "the clock read's own cost, taken off each timed operation"),
    ("CAS", "cas", "compare-and-swap: an atomic read-modify-write of one memory word"),
    ("haltpoll", "haltpoll",
     "a guest's idle driver: an idle vCPU polls a while before it halts, which saves the "
     "host a wakeup when work comes soon"),
    ("tsc", "tsc", "the CPU's time-stamp counter, the clock the benchmarks read"),
    ("vCPUs", "vcpu", "a virtual machine's CPUs: threads of the host, which the host schedules"),
]


def anchor(slug):
    return f"g-{slug}"


def slug(term):
    """The anchor's name of a term ("no IPI": "no-ipi"); a term without an entry as it is."""
    return _SLUG.get(term, term)


_RE = re.compile("|".join(r"(?<![\w-])" + re.escape(t) + r"(?![\w-])"
                          for t, _, _ in sorted(TERMS, key=lambda x: -len(x[0]))))
_SLUG = {t: s for t, s, _ in TERMS}


def link(escaped, seen):
    """Escaped HTML text with the first use of each term (not yet in seen) linked to its
    definition; seen is updated. Text inside tags is left alone."""
    parts = re.split(r"(<[^>]+>)", escaped)
    inside_a = False
    for i, part in enumerate(parts):
        if part.startswith("<"):
            inside_a = part.startswith("<a ") or (inside_a and not part.startswith("</a"))
            continue
        if inside_a:
            continue

        def sub(m):
            t = m.group(0)
            if t in seen:
                return t
            seen.add(t)
            return f'<a class="term" href="#{anchor(_SLUG[t])}">{t}</a>'
        parts[i] = _RE.sub(sub, part)
    return "".join(parts)


def section(esc):
    rows = "".join(f'<dt id="{anchor(s)}">{esc(t)}</dt><dd>{esc(d)}.</dd>' for t, s, d in TERMS)
    return ('<section id="glossary"><h2>Words used above</h2><dl class="glossary">'
            + rows + "</dl><p class=\"note\">The project's whole glossary: docs/glossary.md "
            "in the xcall repository.</p></section>")
