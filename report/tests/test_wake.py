"""wake: one chart, a row per mechanism and a bar per sleeper state, IPIs per wake beside;
what was not measured is said, in the chart and by compare and html."""
import os

import pytest
from matplotlib.text import Text

import samples
from conftest import load_doc, rec, run_cli
from xcall_report import compare, load, plots

ROWS = ["futex", "spin", "membarrier (round trip)", "libxcall-sleeping", "uintr (absent)"]
MECHS = ["futex", "spin", "membarrier", "libxcall-sleeping"]


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    return load_doc(tmp_path_factory, "wake", samples.wake())


@pytest.fixture(scope="module")
def fig(res):
    figs = dict(plots.figures(res))
    assert list(figs) == ["wake"]                      # one chart, no distribution beside
    return figs["wake"]


def _panels(fig):
    """(latency axes, IPI axes)."""
    lat, ipi = fig.axes
    assert lat.get_xscale() == "log" and ipi.get_xscale() == "linear"
    return lat, ipi


def _containers(ax):
    """{label: bar container}, the bars alone (not their whiskers)."""
    return {c.get_label(): c for c in ax.containers if hasattr(c, "patches")}


def _row(y):
    return round(y)


def _texts(fig):
    return [t.get_text() for t in fig.findobj(Text)]


def test_wake_chart_is_specialised(fig):
    assert "wake latency per mechanism and sleeper state" in fig._suptitle.get_text()
    lat, ipi = _panels(fig)
    assert ipi.get_shared_y_axes().joined(lat, ipi)    # the IPIs share the rows


def test_wake_one_row_per_mechanism(fig):
    lat, _ = _panels(fig)
    assert [t.get_text() for t in lat.get_yticklabels()] == ROWS
    assert list(lat.get_yticks()) == list(range(len(ROWS)))
    assert lat.get_ylim() == (len(ROWS) - 0.5, -0.5)   # the first mechanism on top


def test_wake_bars_are_wake_p50_with_p99_whiskers(fig, res):
    lat, _ = _panels(fig)
    bars = _containers(lat)
    assert list(bars) == ["hot", "parked", "busy"]
    for state, c in bars.items():
        mechs = [MECHS[_row(p.get_y() + p.get_height() / 2)] for p in c.patches]
        expect = [m for m in MECHS if f"{m}/{state}" not in samples.WAKE_ABSENT]
        assert mechs == expect
        # the wake latency; membarrier has none, so its round trip
        cases = [f"{m}/{state}" + ("" if m in samples.NO_WAKE_RECORD else "/wake")
                 for m in expect]
        stats = [res.runs("wake", k)[0].stats for k in cases]
        assert [p.get_width() for p in c.patches] == [s["p50"] for s in stats]
        whiskers = c.errorbar.lines[2][0].get_segments()
        assert [seg[1][0] for seg in whiskers] == [s["p99"] for s in stats]
    assert bars["hot"].patches[2].get_width() == 2 * samples.WAKE_P50["hot"]  # round trip


def test_wake_states_have_distinct_colours_and_a_legend(fig):
    lat, _ = _panels(fig)
    colours = [c.patches[0].get_facecolor() for c in _containers(lat).values()]
    assert len(set(colours)) == 3
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:3] == ["hot", "parked", "busy"]
    assert any(t.startswith("CAL") for t in legend) and any(t.startswith("RES") for t in legend)


def test_wake_absent_said_with_reasons(fig):
    lat, _ = _panels(fig)
    note = fig._supxlabel.get_text()
    assert f"absent: uintr: {samples.WAKE_ABSENT['uintr']}" in note
    assert f"absent: spin/parked: {samples.WAKE_ABSENT['spin/parked']}" in note
    assert f"absent: membarrier/parked: {samples.WAKE_ABSENT['membarrier/parked']}" in note
    # in place too: the uintr row says why, the empty slots say absent
    in_axes = [(t.get_text(), _row(t.get_position()[1])) for t in lat.texts]
    assert (f"absent: {samples.WAKE_ABSENT['uintr']}", ROWS.index("uintr (absent)")) in in_axes
    assert ("absent", ROWS.index("spin")) in in_axes
    assert ("absent", ROWS.index("membarrier (round trip)")) in in_axes
    assert [t for t, _ in in_axes].count("absent") == 2


def test_wake_ipis_per_cell(fig):
    _, ipi = _panels(fig)
    bars = _containers(ipi)
    assert list(bars) == [f"{st} {row}" for st in ("hot", "parked", "busy")
                          for row in ("CAL", "RES")]
    for state in ("hot", "parked", "busy"):
        cal, resched = bars[f"{state} CAL"].patches, bars[f"{state} RES"].patches
        mechs = [MECHS[_row(p.get_y() + p.get_height() / 2)] for p in cal]
        assert mechs == [m for m in MECHS if (m, state) in samples.WAKE_IPIS]
        given = [samples.WAKE_IPIS[(m, state)] for m in mechs]
        assert [p.get_width() for p in cal] == [c for c, _ in given]
        assert [p.get_width() for p in resched] == pytest.approx([r for _, r in given])
        assert [p.get_x() for p in resched] == [c for c, _ in given]        # stacked
    assert "0.1 + 0.95" in [t.get_text() for t in ipi.texts]               # futex busy
    assert "interrupts per wake" in ipi.get_xlabel()


def test_wake_saved_as_png_and_svg(res, tmp_path):
    paths = plots.write_all(res, tmp_path)
    assert sorted(os.path.basename(p) for p in paths) == ["wake.png", "wake.svg"]
    assert all(os.path.getsize(p) > 2000 for p in paths)
    svg = (tmp_path / "wake.svg").read_text()
    for text in ("membarrier (round trip)", "uintr (absent)", samples.WAKE_ABSENT["uintr"],
                 "libxcall-sleeping"):
        assert text in svg


def test_wake_repeats_averaged(write):
    d = samples.wake(repeats=2)
    for r in d["results"]:
        if r["case"] == "futex/hot" and r["repeat"] == 1:
            r["params"]["CAL_per_op_sleeper"] = 0.5
    fig = dict(plots.figures(load.load(write("r.json", d))))["wake"]
    lat, ipi = _panels(fig)
    assert "mean of 2 repeats" in fig._suptitle.get_text()
    p50 = samples.WAKE_P50["hot"]
    assert _containers(lat)["hot"].patches[0].get_width() == pytest.approx((p50 + 1.5 * p50) / 2)
    assert _containers(ipi)["hot CAL"].patches[0].get_width() == pytest.approx((0.97 + 0.5) / 2)


def test_wake_ipi_row_absent_is_said(write):
    params = {"mechanism": "futex", "state": "busy", "RES_per_op_sleeper": 0.95,
              "CAL_row": "absent"}
    r = load.load(write("w.json", [rec("wake", "futex/busy", 12000.0, params=params),
                                   rec("wake", "futex/busy/wake", 6000.0)]))
    fig = dict(plots.figures(r))["wake"]
    _, ipi = _panels(fig)
    assert [t.get_text() for t in ipi.texts] == ["n/a + 0.95"]
    assert "CAL per wake n/a" in fig._supxlabel.get_text()
    assert "futex/busy" in fig._supxlabel.get_text()


def test_wake_names_that_do_not_fit_get_the_generic_chart(write):
    r = load.load(write("w.json", [rec("wake", "futex/hot/wake/extra", 1.0),
                                   rec("wake", "futex/hot", 2.0)]))
    assert getattr(dict(plots.figures(r))["wake"], "xcall_generic", False)
    r = load.load(write("u.json", [rec("wake", "uintr", 0.0, n=0,
                                       params={"skipped": "no UINTR"})]))
    assert "wake" not in dict(plots.figures(r))        # nothing measured: a sentence, no chart
    assert plots.unmeasured(r) == {"wake": ["no UINTR"]}


def test_wake_compare_leaves_unmeasured_out(write):
    a = write("a.json", samples.wake())
    d = samples.wake()
    for r in d["results"]:                  # measured in a, not in b: no "100% better"
        if r["case"] in ("futex/busy", "futex/busy/wake"):
            r.update(n=0, mean=0.0, p50=0.0, p90=0.0, p99=0.0, max=0.0, min=0.0,
                     params={"skipped": "busy thread did not start"})
    cmp = compare.compare(load.load_all([a, write("b.json", d)]))
    compared = {t.case for t in cmp.tables}
    assert {"futex/hot/wake", "futex/hot", "membarrier/busy"} <= compared
    assert not compared & {"uintr", "spin/parked", "futex/busy", "futex/busy/wake"}
    assert "wake uintr: not measured in a.json, b.json (this CPU has no UINTR)" in cmp.skipped
    assert "wake futex/busy: not measured in b.json (busy thread did not start)" in cmp.skipped
    p = run_cli("compare", a, write("c.json", samples.wake()))
    assert p.returncode == 0, p.stderr
    assert "Test          : wake libxcall-sleeping/parked/wake" in p.stdout
    assert "wake spin/parked: not measured" in p.stdout


def test_wake_html(tmp_path, write):
    out = tmp_path / "r.html"
    p = run_cli("html", write("w.json", samples.wake()), "-o", out)
    assert p.returncode == 0, p.stderr
    page = out.read_text()
    assert "<td>futex/parked/wake</td>" in page
    assert f"<td class=\"span\" colspan=\"5\">not measured: {samples.WAKE_ABSENT['uintr']}</td>" in page
    assert page.count("data:image/svg+xml") == 1


def test_wake_attached_rows(write):
    """libxcall's attached rows, as xcall-bench names them: in the file's order after the
    worker rows, each state's bar and IPIs; the io_uring one absent where liburing is not
    built in, with its reason."""
    why = "built without liburing (make deps installs liburing-dev)"
    out = []
    for mech in ("libxcall-sleeping", "libxcall-attached-epoll"):
        for state, p50 in samples.WAKE_P50.items():
            params = {"mechanism": mech, "state": state, "CAL_per_op_sleeper": 1.0,
                      "RES_per_op_sleeper": 0.0, "kicks_sent_per_call": 1.0}
            out += [rec("wake", f"{mech}/{state}", 2 * p50, p50=2 * p50, params=params),
                    rec("wake", f"{mech}/{state}/wake", p50, p50=p50,
                        params={"mechanism": mech, "state": state})]
    out.append(rec("wake", "libxcall-attached-uring", 0.0, n=0, p50=0.0, p90=0.0, p99=0.0,
                   max=0.0, min=0.0, params={"skipped": why}))
    fig = dict(plots.figures(load.load(write("a.json", out))))["wake"]
    lat, ipi = _panels(fig)
    assert [t.get_text() for t in lat.get_yticklabels()] == [
        "libxcall-sleeping", "libxcall-attached-epoll", "libxcall-attached-uring (absent)"]
    for state, c in _containers(lat).items():
        assert [_row(p.get_y() + p.get_height() / 2) for p in c.patches] == [0, 1]
        assert [p.get_width() for p in c.patches] == [samples.WAKE_P50[state]] * 2
    assert all(len(c.patches) == 2 for c in _containers(ipi).values())
    assert f"absent: libxcall-attached-uring: {why}" in " ".join(fig._supxlabel.get_text().split())


def test_wake_ipi_outlier_gets_a_symlog_axis(write):
    """One cell with 1651 RES per wake (a disturbed run) would stretch a linear axis to 2000
    and flatten every other bar (0 to 13): the axis turns linear-then-log, the others keep
    their widths, and the disturbed cell is outlined and named under the chart."""
    d = samples.wake()
    for r in d["results"]:
        if r["case"] == "libxcall-sleeping/parked":
            r["params"]["RES_per_op_sleeper"] = 1650.78
            r["params"]["disturbed"] = "other tasks took 48% of CPUs 0-1"
    fig = dict(plots.figures(load.load(write("w.json", d))))["wake"]
    lat, ipi = fig.axes
    assert ipi.get_xscale() == "symlog"
    assert ipi.get_xlim()[1] > 1650.78
    assert ipi.transData.transform((1.0, 0))[0] - ipi.transData.transform((0.0, 0))[0] > \
        0.1 * (ipi.transData.transform((ipi.get_xlim()[1], 0))[0]
               - ipi.transData.transform((0.0, 0))[0])       # 0 to 1 keeps a tenth of the axis
    res = _containers(ipi)["parked RES"].patches
    assert max(p.get_width() for p in res) == pytest.approx(1650.78)
    outlined = [p for c in ipi.containers for p in getattr(c, "patches", [])
                if p.get_edgecolor()[:3] == pytest.approx((0xe6 / 255, 0x55 / 255, 0x0d / 255))]
    assert outlined and all(abs(p.get_y() + p.get_height() / 2 - MECHS.index(
        "libxcall-sleeping")) < 0.5 for p in outlined)
    marked = [p for p in _containers(lat)["parked"].patches if plots.is_marked(p)]
    assert len(marked) == 1
    # hatching means RES alone: a marked latency bar is outlined, not hatched
    assert not any(p.get_hatch() for c in lat.containers for p in getattr(c, "patches", []))
    note = " ".join(fig._supxlabel.get_text().split())
    assert "disturbed (other tasks took 48% of CPUs 0-1): libxcall-sleeping/parked" in note


def test_wake_ordinary_ipis_stay_linear(fig):
    _, ipi = _panels(fig)                 # counts 0 to 1: nothing dwarfs, a linear axis
    assert ipi.get_xscale() == "linear"
