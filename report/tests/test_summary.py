"""The summary: five figures, each a sentence computed from the file, absent families said."""
import copy
import json
import os

import pytest

from conftest import HOST, doc, load_doc, rec
from xcall_report import summary

WHY = "other tasks took 48% of CPUs 0-1"


def real_names(scale=1.0):
    """Records named and parametrised as xcall-bench writes them, times scaled by scale."""
    s = scale
    return [
        rec("pingpong", "cacheline", 70 * s, p50=60 * s, cpus=[0, 1],
            params={"method": "cas", "ratio_to_limit": 1, "line_phase": "mid"}),
        rec("pingpong", "libxcall-polling", 160 * s, p50=150 * s, cpus=[0, 1],
            params={"paired_ratio_p10": 2.2, "paired_ratio_p50": 2.5 * s,
                    "paired_ratio_p90": 2.8, "paired_handoff_ratio_p50": 1.4,
                    "paired_code_ratio_p50": 1.8, "ratio_to_limit": 2.5}),
        rec("kernel", "ipi/normal", 15000 * s, p50=14000 * s,
            params={"target": 1, "CAL_per_op_target": 1.0}),
        rec("kernel", "compare/kernel-ipi", 13000 * s, p50=12000 * s,
            params={"target": 1, "CAL_per_op_target": 0.99, "ratio_to_kernel_ipi": 1}),
        rec("kernel", "compare/libxcall-polling", 130 * s, p50=120 * s),
        rec("wake", "futex/parked", 70000 * s, p50=60000 * s,
            params={"mechanism": "futex", "state": "parked"}),
        rec("wake", "futex/parked/wake", 33000 * s, p50=30000 * s,
            params={"mechanism": "futex", "state": "parked"}),
        rec("wake", "epoll/parked/wake", 50000 * s, p50=45000 * s,
            params={"mechanism": "epoll", "state": "parked"}),
        rec("wake", "libxcall-sleeping/parked/wake", 31000 * s, p50=29000 * s,
            params={"mechanism": "libxcall-sleeping", "state": "parked"}),
        rec("wake", "spin/hot/wake", 120 * s, p50=118 * s,
            params={"mechanism": "spin", "state": "hot"}),
        rec("wake", "uintr", 0.0, n=0, p50=0.0, p90=0.0, p99=0.0, max=0.0, min=0.0,
            params={"skipped": "this CPU has no UINTR"}),
        rec("storm", "ablate-elide+notify", 0.15 * s, unit="s", n=1),
        rec("storm", "ablate-notify", 0.06, unit="s", n=1),
        rec("storm", "ablate-none", 0.0129 * s, unit="s", n=1),
        rec("matrix", "all-wait/2008/2", 0.03, unit="s", n=1),
        rec("matrix", "all-wait/libxcall/2", 0.01, unit="s", n=1),
        rec("matrix", "all-wait/speedup/1", 1.5, unit="ratio", better="higher", n=1),
        rec("matrix", "all-wait/speedup/2", 3.0 * s, unit="ratio", better="higher", n=1),
        rec("matrix", "single-nowait/speedup/2", 29.2, unit="ratio", better="higher", n=1),
        rec("bringup", "serial", 1.0e8, n=5), rec("bringup", "parallel", 6.0e7, n=5),
        rec("bringup", "speedup", 1.72 * s, unit="ratio", better="higher", n=1,
            params={"limit": 2}),
    ]


def _figs(tmp_path_factory, records, name="s", host=None):
    return {f.key: f for f in summary.figures(load_doc(tmp_path_factory, name,
                                                       doc(records, host)))}


@pytest.fixture(scope="module")
def figs(tmp_path_factory):
    return _figs(tmp_path_factory, real_names())


def test_five_figures_in_order(figs):
    assert list(figs) == ["limit", "call", "kernel", "wake", "seeds"]
    assert all(f.present for f in figs.values())


def test_limit(figs):
    f = figs["limit"]
    assert f.value == "60 ns"
    assert "between CPUs 0 and 1 takes 60 ns a round trip (p50, CAS" in f.sentences[0]
    assert f.sentences[1].startswith("By its own number that is the mid line phase (35-120 ns")
    assert f.sources == ["pingpong/cacheline (p50)"]


def test_call_and_paired_ratio(figs):
    f = figs["call"]
    assert f.value == "150 ns · 2.5× the limit"
    s = f.sentences[0]
    assert "from CPU 0 to a polling worker on CPU 1 returns in 150 ns (p50), 2.5× the " \
        "cache-line round trip" in s
    assert "2.2× to 2.8× over the blocks" in s
    assert "bare handoff (the same exchange of two cache lines with no library code) is 1.4× " \
        "the limit and libxcall's code 1.8× that handoff" in s


def test_kernel(figs):
    """One kernel IPI: the compare probe's, measured alternating with libxcall's call; the
    ipi probe's and pingpong's figures of the same quantities are named, with why they
    differ."""
    f = figs["kernel"]
    assert f.value == "12 µs"
    s = f.sentences[0]
    assert "takes 12 µs (p50" in s
    assert "measured alternating with it on the same CPUs, takes 120 ns: the kernel IPI " \
        "costs 100× as much" in s
    other = f.sentences[1]
    assert "the ipi probe's own run gave 14 µs (kernel/ipi/normal)" in other
    assert "the call card's 150 ns is pingpong's run of the same call" in other
    assert "separate run" in other
    assert f.sources == ["kernel/compare/kernel-ipi (p50)",
                         "kernel/compare/libxcall-polling (p50)"]


def _ipi_cal(records, cals):
    """The records with each kernel IPI case's function-call interrupts a call set, as
    xcall-bench writes them (with its short params.no_ipi outside 0.9-1.1)."""
    out = copy.deepcopy(records)
    for r in out:
        if r["bench"] == "kernel" and r["case"] in cals:
            cal = cals[r["case"]]
            r["params"]["CAL_per_op_target"] = cal
            if not 0.9 <= cal <= 1.1:
                r["params"]["no_ipi"] = f"{(1 - cal) * 100:.0f}% of the calls sent no IPI"
    return out


def test_kernel_ipi_only_where_ipis_were_sent(tmp_path_factory):
    """A record whose target counted 0.14 function-call interrupts a call (86% of its calls
    sent no IPI: the spinner was not running on a busy machine) is no IPI's cost: no figure,
    no ratio, nothing in the lead; the card says what happened."""
    recs = _ipi_cal(real_names(), {"compare/kernel-ipi": 0.14, "ipi/normal": 0.14})
    res = load_doc(tmp_path_factory, "noipi", doc(recs))
    figs = summary.figures(res)
    f = {x.key: x for x in figs}["kernel"]
    assert not f.present and f.value == "no IPI sent"
    text = " ".join(f.sentences)
    assert "86% of these calls sent no IPI (0.14 function-call interrupts a call on CPU 1)" \
        in text and "spinner there was often not running" in text
    for shown in ("12 µs", "14 µs", "100×", "costs"):
        assert shown not in text and shown not in f.value
    assert f.marks == {"no IPI": f.sentences[0].split("IPI's cost. ")[1].rstrip(".")}
    lead = summary.lead(res, figs)
    assert "kernel IPI" not in lead and "12 µs" not in lead
    # the references table forms no kernel IPI either
    from xcall_report import machines
    row = {label: v for label, _, v in machines.ratios(res)}
    assert row["a kernel IPI, p50"] is None and row["kernel IPI / libxcall's call, same probe"] \
        is None


def test_kernel_ipi_from_the_probe_that_sent_them(tmp_path_factory):
    """The compare probe sent no IPI, the ipi probe did: its figure is the headline, alone,
    and the compare probe's miss is said; more than one interrupt a call proves none."""
    recs = _ipi_cal(real_names(), {"compare/kernel-ipi": 0.14, "ipi/normal": 1.0})
    f = _figs(tmp_path_factory, recs, "one")["kernel"]
    assert f.present and f.value == "14 µs" and f.sources == ["kernel/ipi/normal (p50)"]
    assert "costs" not in " ".join(f.sentences)
    assert "compare probe's run, which sets it beside libxcall's call, sent no IPI to time" \
        in f.sentences[1]
    recs = _ipi_cal(real_names(), {"compare/kernel-ipi": 1.45, "ipi/normal": 1.3})
    f = _figs(tmp_path_factory, recs, "many")["kernel"]
    assert not f.present and "1.45 function-call interrupts a call on CPU 1: other IPIs " \
        "reached that CPU meanwhile" in f.sentences[0]


def test_wake_cheapest_and_dearest(figs):
    f = figs["wake"]
    assert f.value == "29 µs to 45 µs"                      # parked first; spin is only hot
    s = f.sentences[0]
    assert "(parked) takes from 29 µs with libxcall-sleeping to 45 µs with epoll" in s
    assert "3 mechanisms; uintr not available here" in s


def test_seeds(figs):
    f = figs["seeds"]
    assert f.value.split("\n") == ["storm: 12× faster with every optimisation on",
                                   "matrix: libxcall 3× to 29× the 2008 design's speed",
                                   "bringup: parallel 1.72× faster"]
    intro, storm, matrix, bringup = f.sentences
    assert intro.startswith("The seeds are the five kernel patches xcall starts from")
    assert "every optimisation on is 12× faster than with elide+notify ablated" in storm
    assert "(12.9 ms against 150 ms; 0.09 [91.40]" in storm
    assert "at 2 calling CPUs libxcall's speedup over the 2008 design (2008 time / libxcall " \
        "time, above 1 when libxcall is faster) is 3× to 29× (all-wait 3×, single-nowait " \
        "29×)" in matrix
    assert "up in parallel is 1.72× faster than one after another (the limit, every " \
        "CPU's init at once, is 2×)" in bringup


def test_every_figure_follows_the_data(tmp_path_factory, figs):
    """No fixed text: scaled times give other figures in every card."""
    other = _figs(tmp_path_factory, real_names(scale=2.0), "x2")
    for key in figs:
        assert figs[key].value != other[key].value, key
        assert figs[key].sentences != other[key].sentences, key
    assert other["limit"].value == "120 ns" and other["call"].value.startswith("300 ns · 5×")


def test_absent_families_are_said(tmp_path_factory):
    only = [r for r in real_names() if r["bench"] == "pingpong"]
    f = _figs(tmp_path_factory, only, "pp")
    assert f["limit"].present and f["call"].present
    for key, bench in (("kernel", "kernel"), ("wake", "wake")):
        assert not f[key].present and f[key].value == ""
        assert f"it has no `{bench}` records" in f[key].sentences[0]
    assert not f["seeds"].present
    assert [s.split(":")[0] for s in f["seeds"].sentences] == ["storm", "matrix", "bringup"]
    assert all("not in this file" in s for s in f["seeds"].sentences)
    none = _figs(tmp_path_factory, [r for r in real_names() if r["bench"] == "kernel"], "k")
    assert not none["limit"].present and "no `pingpong` records" in none["limit"].sentences[0]


def test_unmeasured_case_gives_its_reason(tmp_path_factory):
    recs = [r for r in real_names() if r["case"] != "ipi/normal"
            and not r["case"].startswith("compare/")]
    recs.append(rec("kernel", "ipi/normal", 0.0, n=0, p50=0.0, p90=0.0, p99=0.0, max=0.0,
                    min=0.0, params={"skipped": "membarrier lacks FLAG_CPU"}))
    f = _figs(tmp_path_factory, recs, "k0")["kernel"]
    assert not f.present and f.sentences == ["Not measured: membarrier lacks FLAG_CPU."]


def test_marks_follow_the_records(tmp_path_factory):
    recs = copy.deepcopy(real_names())
    for r in recs:
        r.setdefault("params", {})
        if r["case"] == "libxcall-polling":
            r["params"]["disturbed"] = WHY
        if r["case"] == "ablate-elide+notify":
            r["params"]["capped"] = True
        if r["case"] == "ablate-notify":               # not in the headline: no mark
            r["params"]["disturbed"] = WHY
    f = _figs(tmp_path_factory, recs, "m")
    assert f["call"].marks == {"disturbed": WHY}
    assert "2.5× [disturbed] the cache-line round trip" in f["call"].sentences[0]
    assert f["limit"].marks == {} and f["kernel"].marks == {}
    assert f["seeds"].marks == {"capped": ""}
    assert f["seeds"].value.split("\n")[0] == \
        "storm: 12× faster with every optimisation on [capped]"
    assert "12× [capped] faster" in f["seeds"].sentences[1]
    assert "[capped]" not in f["seeds"].sentences[2]


def test_a_speedup_below_one_is_slower(tmp_path_factory):
    recs = [r for r in real_names() if r["bench"] != "bringup"]
    recs.append(rec("bringup", "speedup", 0.25, unit="ratio", better="higher", n=1))
    f = _figs(tmp_path_factory, recs, "slow")["seeds"]
    assert "in parallel is 4× slower than one after another." in f.sentences[3]
    assert f.value.split("\n")[2] == "bringup: parallel 4× slower"


def test_machine_card(tmp_path_factory):
    host = dict(HOST, cpu_model="AMD EPYC",
                cpus_online=2, cores=2, kernel="6.18", virtualised=True, hypervisor="KVM",
                steal_pct=0.9, others_pct=48.0, timer="tsc", timer_floor_ns=20.0)
    d = doc(real_names()[:2], host)
    d["plans"] = [{"bench": "pingpong", "cases": 8, "bound_s": 85.6, "wall_s": 13.7,
                   "capped_loops": 2, "disturbed": WHY}]
    card = dict(summary.machine_card(load_doc(tmp_path_factory, "card", d)))
    assert card["CPU"] == "AMD EPYC, 2 CPUs online (2 cores)"
    assert card["Machine"] == "virtual machine (KVM)"
    assert card["Load"].startswith("0.9% stolen by the hypervisor, 48% taken by other tasks")
    assert card["Run"] == "2026-11-22 01:30 UTC, 1 subcommand in 14 s"
    assert card["Cut short"] == "2 timed loops stopped at --case-limit (pingpong 2)"
    assert card["Disturbed"] == f"1 of 1 subcommands ({WHY})"
    assert card["Timer"] == "tsc, 20 ns floor subtracted"


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from xcall_report import load  # noqa: E402

ANY = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-10, 1e6),
                st.text(max_size=8), st.lists(st.integers(-2, 3), max_size=3))
KNOWN_CASES = [(r["bench"], r["case"]) for r in real_names()] + \
    [("wake", "x"), ("matrix", "op/speedup/x"), ("storm", "baseline"), ("kernel", "ipi")]
PARAM_KEYS = ["capped", "disturbed", "skipped", "method", "line_phase", "paired_ratio_p50", "target",
              "CAL_per_op_target", "limit", "mechanism", "state", "impl", "callers", "mode"]


@st.composite
def odd_results(draw):
    """Known case names with params of any type, odd values and hosts, odd plans."""
    picks = draw(st.lists(st.sampled_from(KNOWN_CASES), min_size=1, max_size=12, unique=True))
    records = []
    for bench, case in picks:
        v = draw(st.floats(0, 1e9))
        params = draw(st.dictionaries(st.sampled_from(PARAM_KEYS), ANY, max_size=4))
        n = draw(st.integers(0, 3))
        records.append(rec(bench, case, v, n=n, p50=v, p90=v, p99=v, max=v, min=v,
                           unit=draw(st.sampled_from(["ns", "s", "ratio"])),
                           cpus=draw(st.lists(ANY, max_size=3)), params=params))
    d = doc(records, dict(HOST, **draw(st.dictionaries(
        st.sampled_from(["steal_pct", "others_pct", "cpu_quota", "cores", "timer_floor_ns",
                         "disturbed", "emulated", "virtualised", "cpus_online"]), ANY))))
    d["plans"] = draw(st.lists(st.one_of(ANY, st.dictionaries(
        st.sampled_from(["bench", "wall_s", "capped_loops", "disturbed"]), ANY)), max_size=3))
    d["created"] = draw(ANY)
    return d


@settings(max_examples=int(os.environ.get("XCALL_FUZZ_EXAMPLES", 100)), derandomize=True,
          deadline=None, suppress_health_check=list(HealthCheck))
@given(odd_results())
def test_summary_takes_any_loadable_file(tmp_path_factory, d):
    """Whatever a file that loads holds, the summary and the machine card come out as text."""
    try:
        res = load.parse(json.loads(json.dumps(d)), "odd.json")
    except load.InputError:
        return
    figs = summary.figures(res)
    assert [f.key for f in figs] == ["limit", "call", "kernel", "wake", "seeds"]
    for f in figs:
        assert isinstance(f.value, str) and f.sentences and all(isinstance(s, str)
                                                                for s in f.sentences)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in summary.machine_card(res))


def test_page_of_a_run_that_sent_no_ipi(tmp_path, write):
    """The page of a run whose kernel IPI records counted 0.14 function-call interrupts a call:
    no kernel IPI headline on its first screen, the card says what happened, the table marks
    the records no IPI."""
    from conftest import run_cli
    recs = _ipi_cal(real_names(), {"compare/kernel-ipi": 0.14, "ipi/normal": 0.14})
    out = tmp_path / "r.html"
    p = run_cli("html", write("noipi.json", recs), "-o", out)
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    lead = page[page.index('id="lead"'):]
    lead = lead[:lead.index("</p>")]
    assert "Main result: " in lead and "kernel IPI" not in lead
    card = page[page.index('data-figure="kernel"'):]
    card = card[:card.index("</div>")]
    assert 'class="value">no IPI sent<' in card and "86% of these calls sent no IPI" in card
    assert "12 µs" not in card and "14 µs" not in card
    table = page[page.index('<details data-bench="kernel"'):]
    table = table[:table.index("</details>")]
    assert table.count("no IPI") >= 2
